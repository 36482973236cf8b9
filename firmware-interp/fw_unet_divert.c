// SPDX-License-Identifier: GPL-2.0-only
/*
 * U-Net's divert path.  A message that cannot go direct (FUGU's causes:
 * the receive queue full, no free buffer, a buffer page not resident, the
 * owner not running) is diverted to the kernel, and so is every later one
 * until the kernel has handed them all over; without a divert ring it is
 * dropped.  Messages for kernel-emulated endpoints go the same way.  All
 * counted.
 */
#include <string.h>

#include "fw.h"

/* The cause, per endpoint, of a message that did not go direct. */
void fw_unet_count_cause(struct fw *fw, struct fw_unet_ep *e, uint32_t cause)
{
	if (cause == FW_CNT_UNET_RING_FULL)
		e->rx_ring_full++;
	else if (cause == FW_CNT_UNET_NO_BUF)
		e->rx_no_buf++;
	else if (cause == FW_CNT_UNET_NOT_RESIDENT)
		e->rx_not_resident++;
	else if (cause == FW_CNT_UNET_NOT_RUNNING)
		e->rx_not_running++;
	else
		e->div_order++;
	fw_count(fw, (enum fw_counter)cause);
}

/*
 * FUGU's second case: the message goes whole into the kernel's divert
 * ring, numbered like the direct ones, and the endpoint stays in divert
 * mode until the kernel has handed every diverted message over, so the
 * process sees them all in order.  Without a divert ring it is dropped.
 */
/* Header (seq apart), data, then seq: one chain, in order. */
static uint32_t div_arg(uint32_t gen, uint32_t tb, uint32_t port,
			uint32_t cause)
{
	return (gen & 0xfff) << 20 | tb << 12 | (port & 0xf) << 8 |
	       (cause & 0xff);
}

/*
 * Room in the divert ring, a job slot, and the message copied out of its
 * wire slot into a tx buffer (so the wire slot is released at once and
 * the link keeps draining while the record is written; a diverted message
 * is usually one of a burst).  Returns the job slot, or -1: wait.  One
 * record at a time (they are numbered as written); a kernel that is
 * behind holds the link.
 */
static int div_start(struct fw *fw, uint32_t data, uint32_t mlen,
		     uint32_t arg_no_tb, uint32_t *tb)
{
	struct fw_unet *u = &fw->unet;
	int slot;

	if (u->div_busy || u->div_prod - u->div_cons >= u->div_slots)
		return -1;
	*tb = fw_nv_txbuf_alloc(fw, FW_TB_OP);
	if (!*tb)
		return -1;
	slot = fw_hdma_alloc(fw, FW_JOB_UNET_DIVERT, arg_no_tb | *tb << 12);
	if (slot < 0) {
		fw_nv_txbuf_put(fw, *tb, FW_TB_OP);
		return -1;
	}
	memcpy(fw->chip->sram + fw_nv_txbuf_off(fw, *tb),
	       fw->chip->sram + data, mlen);
	return slot;
}

static void div_submit(struct fw *fw, int slot, uint64_t rec, uint32_t tb,
		       uint32_t mlen)
{
	uint32_t scr = fw_scratch_off(fw, slot);
	uint32_t seq = offsetof(struct nvm_unet_div_rec, seq);

	fw_hdma_add(fw, slot, LANAI_DMA_L2E, seq, scr, rec);
	fw_hdma_add(fw, slot, LANAI_DMA_L2E, 32 - seq - 4, scr + seq + 4,
		    rec + seq + 4);
	fw_hdma_add(fw, slot, LANAI_DMA_L2E, mlen, fw_nv_txbuf_off(fw, tb),
		    rec + offsetof(struct nvm_unet_div_rec, data));
	fw_hdma_add(fw, slot, LANAI_DMA_L2E, 4, scr + seq, rec + seq);
	fw_hdma_submit(fw, slot);
}

/*
 * A message for a virtual port (a kernel-emulated endpoint) goes to the
 * kernel whole, with what it needs to demultiplex it; the kernel checks
 * the channel.
 */
enum fw_rx_verdict fw_unet_to_kernel(struct fw *fw, uint32_t src,
				     const struct nvm_unet_hdr *h,
				     uint32_t data, uint32_t mlen)
{
	struct fw_unet *u = &fw->unet;
	struct nvm_unet_div_rec r;
	uint64_t rec;
	uint32_t tb;
	int slot;

	if (!u->div_slots) {
		fw_count(fw, FW_CNT_UNET_NO_CHANNEL);
		return FW_RX_RELEASE;
	}
	slot = div_start(fw, data, mlen, div_arg(0, 0, 0, 0xff), &tb);
	if (slot < 0)
		return FW_RX_WAIT;
	memset(&r, 0, offsetof(struct nvm_unet_div_rec, data));
	r.port = fw_be16(h->dst_port);
	r.channel = 0xffff;
	r.len = mlen;
	r.seq = u->div_prod + 1;
	r.src_node = (uint16_t)src;
	r.src_port = fw_be16(h->src_port);
	r.tag = fw_be32(h->tag);
	/* the DSM flags, for the driver that plays this endpoint's NI */
	r.dsm = (h->flags & NVM_UNET_HF_NOINTR ? NVM_UNET_F_NOINTR : 0) |
		(h->flags & NVM_UNET_HF_REPLY ?
		 NVM_UNET_F_REPLY | (uint32_t)fw_be16(h->reply) << 16 : 0);
	rec = u->div_base + (uint64_t)(u->div_prod % u->div_slots) *
	      NVM_UNET_DIV_SLOT;
	memcpy(fw->chip->sram + fw_scratch_off(fw, slot), &r, 32);
	div_submit(fw, slot, rec, tb, mlen);
	u->div_port[u->div_prod % u->div_slots] = FW_UNET_EPS;
	u->div_busy = 1;
	return FW_RX_RELEASE;
}

enum fw_rx_verdict fw_unet_divert(struct fw *fw, uint32_t port, int ch,
				  uint32_t data, uint32_t mlen, uint32_t cause,
				  uint32_t dsm, uint32_t from)
{
	struct fw_unet *u = &fw->unet;
	struct fw_unet_ep *e = &u->ep[port];
	struct nvm_unet_div_rec r;
	uint64_t rec;
	uint32_t tb;
	int slot;

	if (!u->div_slots) {
		fw_unet_count_cause(fw, e, cause);
		e->dropped++;
		fw_count(fw, FW_CNT_UNET_DROPPED);
		fw_unet_note_drop(fw, port, (uint32_t)ch);	/* the sender sees it */
		fw_unet_publish(fw, port);
		return FW_RX_RELEASE;
	}
	slot = div_start(fw, data, mlen, div_arg(e->gen, 0, port, cause), &tb);
	if (slot < 0)
		return FW_RX_WAIT;
	memset(&r, 0, offsetof(struct nvm_unet_div_rec, data));
	r.port = (uint16_t)port;
	r.channel = (uint16_t)ch;
	r.len = mlen;
	r.msgno = e->msgs++;
	r.seq = u->div_prod + 1;
	r.dsm = dsm;	/* the reply table is not looked at: order first */
	r.src_node = (uint16_t)from;
	r.src_port = (uint16_t)(from >> 16);
	rec = u->div_base + (uint64_t)(u->div_prod % u->div_slots) *
	      NVM_UNET_DIV_SLOT;
	memcpy(fw->chip->sram + fw_scratch_off(fw, slot), &r, 32);
	div_submit(fw, slot, rec, tb, mlen);
	u->div_port[u->div_prod % u->div_slots] = (uint8_t)port;
	u->div_busy = 1;
	/*
	 * Counted now, not when the DMA is done: a process that sees a later
	 * direct message must know this one exists (it waits for it), and
	 * DIRECT must be refused while it is on its way.
	 */
	if (e->state == FW_UNET_EP_DIRECT)
		fw_unet_ep_set_state(fw, port, FW_UNET_EP_DIVERT);
	e->div_out++;
	e->diverted++;
	fw_unet_count_cause(fw, e, cause);
	fw_count(fw, FW_CNT_UNET_DIVERTED);
	fw_unet_publish(fw, port);
	return FW_RX_RELEASE;
}

void fw_unet_diverted(struct fw *fw, uint32_t arg, uint32_t status)
{
	struct fw_unet *u = &fw->unet;
	uint32_t port = (arg >> 8) & 0xf, gen = arg >> 20, cause = arg & 0xff;
	struct fw_unet_ep *e = &u->ep[port];

	fw_nv_txbuf_put(fw, (arg >> 12) & 0xff, FW_TB_OP);
	u->div_busy = 0;
	if (cause == 0xff)
		port = 0;	/* for a virtual port: the kernel's */
	if (status != NVM_DMA_ST_DONE) {
		/* seq not written: the slot is used again, the message lost */
		if (cause != 0xff && e->div_out)
			e->div_out--;
		if (cause != 0xff && fw_unet_open_port(fw, port) &&
		    (e->gen & 0xfff) == gen) {
			e->dropped++;
			fw_unet_publish(fw, port);
		}
		return;
	}
	/* a closed endpoint's record still counts in its div_out (the port
	 * is not reopened until DONE); the kernel finds nobody to give it to */
	u->div_prod++;
	fw_post(fw, NVM_EV_NOTIFY, (uint16_t)port, NVM_UNET_EV_DIVERT,
		u->div_prod);
}
