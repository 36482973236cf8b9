// SPDX-License-Identifier: GPL-2.0-only
/*
 * U-Net message endpoints, beside NetVM in the same firmware.
 *
 * A U-Net endpoint is a port whose SRAM region holds a send queue, a free
 * queue and a few control words (unet_abi.h); its receive queue lives in
 * pinned host memory, its communication segment too, or (pageable) in the
 * process's own memory reached through the shadow page table under the
 * endpoint's port.  Descriptors name segment offsets, which are checked
 * against the segment's size before any DMA, so a process can only make
 * the NI touch its own segment.
 *
 * This file holds what the roles share: the endpoint's status block and
 * control words, doorbells, the pages of pageable segments a DMA chain
 * holds, job completions, the load checks and U-Net's row in the program
 * table.  The roles: send fw_unet_tx.c, receive fw_unet_rx.c, divert to
 * the kernel fw_unet_divert.c, kernel commands fw_unet_kernel.c,
 * overflow control fw_unet_flow.c.
 */
#include <string.h>

#include "fw.h"
#include "fw_load.h"

_Static_assert(FW_NV_TXBUFS < 256, "a tx buffer number fits a job argument's low byte");
_Static_assert(FW_NV_TXBUFS <= 128, "ks_done[] covers every tx buffer");

uint32_t fw_unet_region(struct fw *fw, uint32_t port)
{
	return fw->layout.ep_base + port * NVM_EP_STRIDE;
}

void fw_unet_publish(struct fw *fw, uint32_t port)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];
	struct nvm_unet_status st = {
		.send_consumed = e->consumed,
		.send_errors = e->send_errors,
		.free_cons = e->free_cons,
		.rx_prod = e->rx_prod,
		.rx_ring_full = e->rx_ring_full,
		.rx_no_buf = e->rx_no_buf,
		.div_order = e->div_order,
		.msgs = e->msgs,
		.diverted = e->diverted,
		.dropped = e->dropped,
		.divert_mode = fw_unet_diverting(e),
		.quiet = e->quiet,
		.reply_hits = e->reply_hits,
		.reply_misses = e->reply_misses,
		.events = e->events,
		.rx_not_resident = e->rx_not_resident,
		.rx_not_running = e->rx_not_running,
		.tx_misses = e->tx_misses,
		.hold_on = e->hold_on,
		.hold_off = e->hold_off,
		.tx_held = e->tx_held,
		.tx_held_now = e->tx_held_now,
		.hold_expired = e->hold_expired,
		.peer_dropped = e->peer_dropped,
	};

	memcpy(fw->chip->sram + fw_unet_region(fw, port) + NVM_UNET_STATUS, &st,
	       sizeof(st));
}

struct nvm_unet_ctl fw_unet_read_ctl(struct fw *fw, uint32_t port)
{
	struct nvm_unet_ctl ctl;

	memcpy(&ctl, fw->chip->sram + fw_unet_region(fw, port) + NVM_UNET_CTL,
	       sizeof(ctl));
	return ctl;
}

bool fw_unet_open_port(struct fw *fw, uint32_t port)
{
	return port < FW_UNET_EPS &&
	       fw->unet.ep[port].state != FW_UNET_EP_CLOSED;
}

/* Every message goes to the divert ring (order), held or not. */
bool fw_unet_diverting(const struct fw_unet_ep *e)
{
	return e->state == FW_UNET_EP_DIVERT || e->state == FW_UNET_EP_HELD;
}

/* The count may run at most a queue ahead of what was taken. */
void fw_unet_doorbell(struct fw *fw, uint32_t port, uint32_t off,
		      uint32_t data)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];

	if ((uint32_t)(data - e->consumed) > NVM_UNET_SENDQ_LEN) {
		fw_count(fw, FW_CNT_BAD_DOORBELLS);
		fw_post(fw, NVM_EV_ERROR, (uint16_t)port, NVM_ERR_BAD_DOORBELL,
			(uint64_t)off << 32 | data);
		return;
	}
	e->produced = data;
}

/* ---- pageable segments: the pages a DMA chain touches ---- */

void fw_unet_seg_unlock(struct fw *fw, struct fw_unet_lk *lk, bool dirty)
{
	for (uint32_t i = 0; i < lk->n && i < FW_UNET_LOCKS; i++)
		fw_nv_pt_unlock(fw, lk->ppn[i], dirty);
	lk->n = 0;
}

/*
 * Lock the translation of every page of [off, off + len) (checked inside
 * the segment), appending to @lk; a pinned segment needs none.  On a miss
 * *miss is the page's address and false is returned, the pages locked so
 * far still held (the caller unlocks all of @lk).
 */
bool fw_unet_seg_lock(struct fw *fw, uint32_t port, uint32_t off, uint32_t len,
		      struct fw_unet_lk *lk, uint64_t *miss)
{
	const struct fw_unet_ep *e = &fw->unet.ep[port];
	uint64_t va = e->seg + off, end = va + len;

	if (!e->pageable)
		return true;
	for (va &= ~(uint64_t)(NVM_PAGE_SIZE - 1); va < end;
	     va += NVM_PAGE_SIZE) {
		uint32_t h = nvm_pt_hash(port, va >> NVM_PAGE_SHIFT,
					 fw->layout.pt_rows ?
					 fw->layout.pt_rows : 1);
		int64_t ppn;

		if (lk->n >= FW_UNET_LOCKS) {	/* cannot happen: sizes bound it */
			*miss = va;
			return false;
		}
		ppn = fw_nv_pt_lock(fw, port, va, h);
		if (ppn < 0) {
			*miss = va;
			return false;
		}
		lk->ppn[lk->n++] = (uint32_t)ppn;
	}
	return true;
}

/*
 * DMA between SRAM at @sram and [off, off + len) of the segment: one
 * descriptor when pinned; per page, through the translations fw_unet_seg_lock()
 * took in the same order (*k walks @lk), when pageable.
 */
void fw_unet_seg_dma(struct fw *fw, uint32_t port, int slot, uint32_t dir,
		     uint32_t len, uint32_t sram, uint32_t off,
		     const struct fw_unet_lk *lk, uint32_t *k)
{
	const struct fw_unet_ep *e = &fw->unet.ep[port];
	uint64_t va = e->seg + off;

	if (!e->pageable) {
		fw_hdma_add(fw, slot, dir, len, sram, va);
		return;
	}
	while (len && *k < lk->n) {
		uint32_t in = NVM_PAGE_SIZE - (uint32_t)(va & (NVM_PAGE_SIZE - 1));
		uint32_t n = len < in ? len : in;

		fw_hdma_add(fw, slot, dir, n, sram,
			    (uint64_t)lk->ppn[(*k)++] << NVM_PAGE_SHIFT |
			    (va & (NVM_PAGE_SIZE - 1)));
		va += n;
		sram += n;
		len -= n;
	}
}

void fw_unet_job_done(struct fw *fw, uint32_t kind, uint32_t arg,
		      uint32_t status)
{
	uint32_t port = (arg >> 8) & 0xff, gen = arg >> 16;

	if (kind == FW_JOB_UNET_KFETCH) {
		if (arg && arg <= FW_NV_TXBUFS)
			fw_unet_kfetched(fw, arg, status);
		return;
	}
	if (kind == FW_JOB_UNET_DIVERT) {	/* its own argument layout */
		fw_unet_diverted(fw, arg, status);
		return;
	}
	if (port >= FW_UNET_EPS)
		return;
	if (kind == FW_JOB_UNET_FETCH)
		fw_unet_fetched(fw, port, gen, arg & 0xff, status);
	else
		fw_unet_delivered(fw, port, gen, arg & 1, status);
}

/* Loading saved state (fw_load.c). */
static bool lk_ok(const struct fw_unet_lk *lk)
{
	return lk->n <= FW_UNET_LOCKS;
}

static bool unet_ep_ok(const struct fw_unet_ep *e, const char **what)
{
	/* the machines' name tables are indexed by them */
	FW_LOAD_CHECK(e->state < FW_UNET_EP_STATE_COUNT);
	FW_LOAD_CHECK(e->tx_state < FW_UNET_TX_STATE_COUNT);
	/* closing ends a wait for a page (nobody would restart it) */
	FW_LOAD_CHECK(e->state != FW_UNET_EP_CLOSED ||
		      e->tx_state == FW_UNET_TX_READY);
	FW_LOAD_CHECK(e->tx_tb <= FW_NV_TXBUFS);
	/* a send being fetched: fw_unet_transmit() indexes ch[] with its channel and
	 * sends len bytes from its tx buffer (send_check at intake; the
	 * channel may have closed since) */
	FW_LOAD_CHECK(!e->tx_tb ||
		      (e->tx_desc.channel < NVM_UNET_CHANNELS &&
		       e->tx_desc.len <= NVM_UNET_MSG_MAX));
	FW_LOAD_CHECK(lk_ok(&e->tx_lk));
	/* delivery divides by both */
	FW_LOAD_CHECK(e->state == FW_UNET_EP_CLOSED ||
		      (e->buf_size && e->rxq_len));
	for (uint32_t c = 0; c < NVM_UNET_CHANNELS; c++)
		FW_LOAD_CHECK(e->ch[c].node < FW_NV_NODES ||
			      nvm_unet_is_any(e->ch[c].node, e->ch[c].rport));
	return true;
}

bool fw_unet_state_ok(const struct fw *fw, const char **what)
{
	const struct fw_unet *u = &fw->unet;

	FW_LOAD_CHECK(u->rr < FW_UNET_EPS);
	FW_LOAD_CHECK(lk_ok(&u->rx_lk));
	FW_LOAD_CHECK(u->div_slots <= NVM_UNET_DIV_SLOTS);
	FW_LOAD_CHECK(u->div_prod - u->div_cons <= u->div_slots);
	for (uint32_t i = 0; i < NVM_UNET_DIV_SLOTS; i++)
		FW_LOAD_CHECK(u->div_port[i] <= FW_UNET_EPS);
	for (uint32_t p = 0; p < FW_UNET_EPS; p++)
		if (!unet_ep_ok(&u->ep[p], what))
			return false;
	return true;
}

static bool unet_doorbell(struct fw *fw, uint32_t ep, uint32_t off,
			  uint32_t data)
{
	if (!fw_unet_open_port(fw, ep))
		return false;
	fw_unet_doorbell(fw, ep, off, data);
	return true;
}

/* IT2: overflow control's clock. */
static void unet_tick(struct fw *fw, uint32_t isr)
{
	if (isr & LANAI_ISR_TIME2)
		fw_unet_tick(fw);
}

static void unet_halt(struct fw *fw)
{
	fw->unet.tick_armed = 0;
}

const struct fw_program fw_prog_unet = {
	.name = "unet",
	.pkt_type = NVM_PKT_UNET,
	.halt = unet_halt,
	.doorbell = unet_doorbell,
	.step = fw_unet_tx_step,
	.receive = fw_unet_rx,
	.urgent = fw_unet_is_ctl,
	.job_done = fw_unet_job_done,
	.sent = fw_unet_sent,
	.tick = unet_tick,
	.arm_timers = fw_unet_arm_timer,
	.kernel_cmd = fw_unet_kernel_cmd,
};

