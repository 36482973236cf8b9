// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: the event queue and its interrupt.
 *
 * The device writes struct nvm_event entries into a coherent ring and
 * flips the phase bit on every pass (1 on the first pass).  The IRQ
 * handler of vector LANAI_MSIX_EVENTS first acknowledges the ISR cause
 * bits (W1C) and then drains the ring, so an event queued in between
 * raises a new interrupt rather than being missed.
 *
 * Like the device's producer index, the consumer index written to
 * NVM_REG_EVQ_CONS runs freely (mod 2^32); entry = index & (len - 1).
 */
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/io.h>

#include "netvm_drv.h"

int netvm_evq_init(struct netvm_dev *nd)
{
	size_t size = NETVM_EVQ_LEN * sizeof(struct nvm_event);

	nd->evq = dma_alloc_coherent(&nd->pdev->dev, size, &nd->evq_dma,
				     GFP_KERNEL);
	if (!nd->evq)
		return -ENOMEM;
	nd->evq_len = NETVM_EVQ_LEN;
	nd->evq_cons = 0;
	nd->evq_phase = NVM_EV_F_PHASE;

	netvm_wr(nd, NVM_REG_EVQ_LEN, 0);
	netvm_wr(nd, NVM_REG_EVQ_BASE_LO, lower_32_bits(nd->evq_dma));
	netvm_wr(nd, NVM_REG_EVQ_BASE_HI, upper_32_bits(nd->evq_dma));
	/* Writing LEN resets the device's indices; CONS is only valid after. */
	netvm_wr(nd, NVM_REG_EVQ_LEN, nd->evq_len);
	netvm_wr(nd, NVM_REG_EVQ_CONS, 0);
	return 0;
}

/* Tell the device to stop writing events (before the ring is freed). */
void netvm_evq_stop(struct netvm_dev *nd)
{
	netvm_wr(nd, NVM_REG_EVQ_LEN, 0);
}

void netvm_evq_free(struct netvm_dev *nd)
{
	if (!nd->evq)
		return;
	dma_free_coherent(&nd->pdev->dev,
			  nd->evq_len * sizeof(struct nvm_event), nd->evq,
			  nd->evq_dma);
	nd->evq = NULL;
}

static const char * const netvm_error_names[] = {
	[NVM_ERR_NONE] = "none",
	[NVM_ERR_HOST_DMA] = "host DMA refused",
	[NVM_ERR_SRAM_RANGE] = "SRAM range",
	[NVM_ERR_DMA_CHAIN] = "DMA chain",
	[NVM_ERR_BAD_DOORBELL] = "bad doorbell",
	[NVM_ERR_BAD_PACKET] = "bad packet",
	[NVM_ERR_EVQ] = "event queue write",
};

void netvm_port_own(struct netvm_dev *nd, u32 port, enum netvm_port_owner o)
{
	if (port < NETVM_PORTS)
		WRITE_ONCE(nd->port_owner[port], o);
}

typedef void (*netvm_ev_fn)(struct netvm_dev *nd, const struct nvm_event *ev);

static void ev_raw_tx(struct netvm_dev *nd, const struct nvm_event *ev)
{
	netvm_raw_tx_event(nd, le32_to_cpu((__force __le32)ev->data),
			   le64_to_cpu((__force __le64)ev->arg));
}

static void ev_raw_rx(struct netvm_dev *nd, const struct nvm_event *ev)
{
	netvm_raw_rx_event(nd, le32_to_cpu((__force __le32)ev->data),
			   le64_to_cpu((__force __le64)ev->arg));
}

static void ev_link(struct netvm_dev *nd, const struct nvm_event *ev)
{
	u32 data = le32_to_cpu((__force __le32)ev->data);

	WRITE_ONCE(nd->link, data);
	dev_info_ratelimited(&nd->pdev->dev, "link %s\n",
			     (data & NVM_LINK_UP) ? "up" : "down");
}

static void ev_error(struct netvm_dev *nd, const struct nvm_event *ev)
{
	u32 data = le32_to_cpu((__force __le32)ev->data);

	atomic64_inc(&nd->stats.errors);
	dev_warn_ratelimited(&nd->pdev->dev, "NIC error %u (%s), detail %#llx\n",
			     data,
			     data < ARRAY_SIZE(netvm_error_names) ?
			     netvm_error_names[data] : "unknown",
			     le64_to_cpu((__force __le64)ev->arg));
}

static void ev_fw_state(struct netvm_dev *nd, const struct nvm_event *ev)
{
	u32 data = le32_to_cpu((__force __le32)ev->data);

	WRITE_ONCE(nd->fw_state, data);
	if (data == NVM_FW_FAULT)
		dev_err_ratelimited(&nd->pdev->dev, "firmware fault\n");
}

/*
 * Page misses and bounces: NetVM counts them; its paging code serves
 * them, for NetVM endpoints and U-Net's pageable segments alike (both are
 * exports in the same tables).
 */
static void ev_paging(struct netvm_dev *nd, const struct nvm_event *ev)
{
	netvm_nv_event(nd, ev);
	netvm_ep_event(nd, ev);
}

/*
 * NVM_EV_NOTIFY means what the port's owner makes of it (a notification
 * number for NetVM, NVM_UNET_EV_* bits for U-Net), so it goes to that
 * owner only.  A free port's: U-Net's, for the divert notices of an
 * endpoint that closed (its records must still be handed back); nothing
 * else waits there.  The kernel endpoint's: U-Net's too, since the NI
 * names port 0 in the divert notices of U-Net's virtual ports; the
 * kernel's own notifications need nothing beyond their count.
 */
static const netvm_ev_fn netvm_notify_owner[NETVM_PORT_OWNERS] = {
	[NETVM_PORT_FREE] = netvm_unet_divert_event,
	[NETVM_PORT_KERNEL] = netvm_unet_divert_event,
	[NETVM_PORT_EP] = netvm_ep_event,
	[NETVM_PORT_UNET] = netvm_unet_event,
};

static void ev_notify(struct netvm_dev *nd, const struct nvm_event *ev)
{
	u32 port = le16_to_cpu((__force __le16)ev->endpoint);
	u8 owner = port < NETVM_PORTS ? READ_ONCE(nd->port_owner[port]) :
		   NETVM_PORT_FREE;
	netvm_ev_fn fn = owner < NETVM_PORT_OWNERS ?
			 netvm_notify_owner[owner] : NULL;

	netvm_nv_event(nd, ev);		/* NetVM's count of notifications */
	if (fn)
		fn(nd, ev);
}

/* Who serves each event type; a type without an entry is only counted. */
static const netvm_ev_fn netvm_ev_route[NVM_EV_TYPE_COUNT] = {
	[NVM_EV_LINK] = ev_link,
	[NVM_EV_RAW_TX] = ev_raw_tx,
	[NVM_EV_RAW_RX] = ev_raw_rx,
	[NVM_EV_ERROR] = ev_error,
	[NVM_EV_PAGE_MISS] = ev_paging,
	[NVM_EV_BOUNCE] = ev_paging,
	[NVM_EV_NOTIFY] = ev_notify,
	[NVM_EV_FW_STATE] = ev_fw_state,
};

static void netvm_handle_event(struct netvm_dev *nd, const struct nvm_event *ev)
{
	netvm_ev_fn fn = ev->type < NVM_EV_TYPE_COUNT ?
			 netvm_ev_route[ev->type] : NULL;

	atomic64_inc(&nd->stats.events);
	if (fn)
		fn(nd, ev);
	else
		atomic64_inc(&nd->stats.other_events);
}

irqreturn_t netvm_evq_irq(int irq, void *data)
{
	struct netvm_dev *nd = data;
	u32 mask = nd->evq_len - 1;
	struct nvm_event *ev;
	u32 isr, handled = 0;

	isr = netvm_rd(nd, LANAI_REG_ISR);
	if (isr & LANAI_ISR_HOST_W1C)
		netvm_wr(nd, LANAI_REG_ISR, isr & LANAI_ISR_HOST_W1C);
	if (isr & LANAI_ISR_LINK_DOWN)
		WRITE_ONCE(nd->link, netvm_rd(nd, NVM_REG_LINK));

	if (!nd->evq)
		return isr ? IRQ_HANDLED : IRQ_NONE;

	for (;;) {
		ev = &nd->evq[nd->evq_cons & mask];
		if ((READ_ONCE(ev->flags) & NVM_EV_F_PHASE) != nd->evq_phase)
			break;
		dma_rmb();	/* read the entry only after its phase */
		netvm_handle_event(nd, ev);
		handled++;
		nd->evq_cons++;		/* free-running, like the device's */
		if (!(nd->evq_cons & mask))
			nd->evq_phase ^= NVM_EV_F_PHASE;
	}

	if (handled)
		netvm_wr(nd, NVM_REG_EVQ_CONS, nd->evq_cons);
	netvm_raw_rx_kick(nd);

	return (isr || handled) ? IRQ_HANDLED : IRQ_NONE;
}
