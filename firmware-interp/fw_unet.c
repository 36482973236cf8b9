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
 * Send: descriptors are taken in order; a small message is copied out of
 * the descriptor, a large one fetched from the segment by host DMA; the
 * NI stamps the channel's tag, destination and its own port, and marks the
 * descriptor SENT (or with the reason it was refused).
 *
 * Receive: a packet is demultiplexed on (source node, tag, ports) to an
 * endpoint's channel; anything else is dropped and counted.  Small
 * messages go whole into the receive descriptor, large ones into buffers
 * popped from the free queue; the descriptor's seq is written last.  A
 * message that cannot go direct (FUGU's causes: the receive queue full, no
 * free buffer, a buffer page not resident, the owner not running) is
 * diverted to the kernel, and so is every later one until the kernel has
 * handed them all over; without a divert ring it is dropped.  All counted.
 */
#include <string.h>

#include "fw.h"
#include "fw_load.h"

_Static_assert(FW_NV_TXBUFS < 256, "a tx buffer number fits a job argument's low byte");
_Static_assert(FW_NV_TXBUFS <= 128, "ks_done[] covers every tx buffer");

static void kfetched(struct fw *fw, uint32_t tb, uint32_t status);

static uint32_t region(struct fw *fw, uint32_t port)
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
		.divert_mode = e->divert,
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

	memcpy(fw->chip->sram + region(fw, port) + NVM_UNET_STATUS, &st,
	       sizeof(st));
}

static struct nvm_unet_ctl read_ctl(struct fw *fw, uint32_t port)
{
	struct nvm_unet_ctl ctl;

	memcpy(&ctl, fw->chip->sram + region(fw, port) + NVM_UNET_CTL,
	       sizeof(ctl));
	return ctl;
}

bool fw_unet_open_port(struct fw *fw, uint32_t port)
{
	return port < FW_UNET_EPS && fw->unet.ep[port].open;
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

/* ---- send ---- */

static void send_done(struct fw *fw, uint32_t port, uint32_t st)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];
	uint32_t d = region(fw, port) + NVM_UNET_SENDQ +
		     (e->consumed % NVM_UNET_SENDQ_LEN) *
		     sizeof(struct nvm_unet_send_desc);

	fw->chip->sram[d + offsetof(struct nvm_unet_send_desc, status)] =
		(uint8_t)st;
	e->consumed++;
	if (st == NVM_UNET_ST_SENT) {
		fw_count(fw, FW_CNT_UNET_TX);
	} else {
		e->send_errors++;
		fw_count(fw, FW_CNT_UNET_TX_BAD);
	}
	fw_unet_publish(fw, port);
}

/* ---- pageable segments: the pages a DMA chain touches ---- */

static void seg_unlock(struct fw *fw, struct fw_unet_lk *lk, bool dirty)
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
static bool seg_lock(struct fw *fw, uint32_t port, uint32_t off, uint32_t len,
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
 * descriptor when pinned; per page, through the translations seg_lock()
 * took in the same order (*k walks @lk), when pageable.
 */
static void seg_dma(struct fw *fw, uint32_t port, int slot, uint32_t dir,
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

/* The rules are the ABI's, shared with the driver's emulation. */
static uint32_t send_check(const struct fw_unet_ep *e,
			   const struct nvm_unet_send_desc *d)
{
	return nvm_unet_send_check(d, e->seg_size,
				   d->channel < NVM_UNET_CHANNELS &&
				   e->ch[d->channel].open);
}

/* What the receiving NI must know of a send descriptor's flags. */
static uint8_t wire_flags(const struct nvm_unet_send_desc *d)
{
	return (d->flags & NVM_UNET_F_NOINTR ? NVM_UNET_HF_NOINTR : 0) |
	       (d->flags & NVM_UNET_F_REPLY ? NVM_UNET_HF_REPLY : 0);
}

/* Route, packet header and U-Net header in front of the data at @tb. */
uint32_t fw_unet_frame_build(struct fw *fw, uint32_t port, uint32_t tb,
			     const struct fw_unet_chan *ch, uint32_t len,
			     uint8_t hflags, uint16_t reply,
			     uint32_t *frame_off)
{
	uint32_t base = fw_nv_txbuf_off(fw, tb);
	uint8_t rl = fw_nv_route_len(fw, ch->node);
	struct nvm_pkt_hdr ph = {
		.type = NVM_PKT_UNET,
		.version = NVM_PKT_VERSION,
		.src_node = fw_be16(fw->chip->node_id),
		.dst_node = fw_be16((uint16_t)ch->node),
		.len = fw_be16((uint16_t)(sizeof(struct nvm_unet_hdr) + len)),
	};
	struct nvm_unet_hdr uh = {
		.dst_port = fw_be16((uint16_t)ch->rport),
		.src_port = fw_be16((uint16_t)port),
		.tag = fw_be32(ch->tag),
		.len = fw_be32(len),
		.flags = hflags,
		.reply = fw_be16(reply),
	};
	uint8_t *p = fw->chip->sram + base;

	memcpy(p + NVM_ROUTE_MAX - rl, fw->nv.route[ch->node], rl);
	memcpy(p + NVM_ROUTE_MAX, &ph, sizeof(ph));
	memcpy(p + NVM_ROUTE_MAX + sizeof(ph), &uh, sizeof(uh));
	*frame_off = base + NVM_ROUTE_MAX - rl;
	return rl + sizeof(ph) + sizeof(uh) + len;
}

static uint32_t data_off(struct fw *fw, uint32_t tb)
{
	return fw_nv_txbuf_off(fw, tb) + NVM_ROUTE_MAX +
	       sizeof(struct nvm_pkt_hdr) + sizeof(struct nvm_unet_hdr);
}

static void transmit(struct fw *fw, uint32_t port, uint32_t tb,
		     const struct nvm_unet_send_desc *d)
{
	const struct fw_unet_chan *ch = &fw->unet.ep[port].ch[d->channel];
	uint32_t len = d->len, off;
	uint32_t flen = fw_unet_frame_build(fw, port, tb, ch, len, wire_flags(d),
				    d->reply, &off);

	/* the caller made sure the send queue has room */
	if (!fw_send_submit(fw, FW_SEND_UNET, tb, off, flen))
		fw_nv_txbuf_put(fw, tb, FW_TB_WIRE);
	fw_count_n(fw, FW_CNT_TX_BYTES, len);
}

/*
 * The pages a send fetches from a pageable segment, locked in e->tx_lk.
 * On a miss the send waits: the kernel maps the page and restarts us
 * (fw_unet_restart); a second miss after that restart means the kernel
 * could not map it, and the send fails with NVM_UNET_ST_FAULT.
 */
static bool tx_lock(struct fw *fw, uint32_t port,
		    const struct nvm_unet_send_desc *d)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];
	uint64_t miss = 0;
	bool ok = true;

	e->tx_lk.n = 0;
	if (d->flags & NVM_UNET_F_GATHER) {
		struct nvm_unet_gather g;

		memcpy(&g, d->data, sizeof(g));
		for (uint32_t i = 0; i < g.count && ok; i++)
			ok = seg_lock(fw, port, g.piece[i].offset,
				      g.piece[i].len, &e->tx_lk, &miss);
	} else {
		ok = seg_lock(fw, port, d->offset, d->len, &e->tx_lk, &miss);
	}
	if (ok) {
		e->tx_retry = 0;
		return true;
	}
	seg_unlock(fw, &e->tx_lk, false);
	if (e->tx_retry) {
		e->tx_retry = 0;
		send_done(fw, port, NVM_UNET_ST_FAULT);
		return false;
	}
	e->tx_wait = 1;
	e->tx_miss = miss;
	e->tx_misses++;
	fw_count(fw, FW_CNT_UNET_TX_MISS);
	fw_count(fw, FW_CNT_PAGE_MISS);
	fw_post(fw, NVM_EV_PAGE_MISS, (uint16_t)port, 0, miss);
	fw_unet_publish(fw, port);
	return false;
}

static bool tx_step_ep(struct fw *fw, uint32_t port)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];
	struct nvm_unet_send_desc d;
	uint32_t st, tb;
	int slot;

	if (fw_unet_ctl_step(fw, port))
		return true;	/* control frames first: never behind data */
	if (!e->open || e->tx_tb || e->tx_wait || e->consumed == e->produced)
		return false;
	memcpy(&d, fw->chip->sram + region(fw, port) + NVM_UNET_SENDQ +
	       (e->consumed % NVM_UNET_SENDQ_LEN) * sizeof(d), sizeof(d));
	if (d.seq != e->consumed + 1)
		return false;	/* the process has not finished writing it */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	st = send_check(e, &d);
	if (st) {
		send_done(fw, port, st);
		return true;
	}
	if (fw_unet_tx_held(fw, port, d.channel))
		return false;	/* the receiver holds us (overflow control) */
	if (fw_sendq_room(fw) < 2)
		return false;	/* keep one for NetVM's ACKs */
	tb = fw_nv_txbuf_alloc(fw, FW_TB_WIRE);
	if (!tb)
		return false;
	if (d.flags & NVM_UNET_F_INLINE) {
		memcpy(fw->chip->sram + data_off(fw, tb), d.data, d.len);
		transmit(fw, port, tb, &d);
		send_done(fw, port, NVM_UNET_ST_SENT);
		return true;
	}
	if (!tx_lock(fw, port, &d)) {
		fw_nv_txbuf_put(fw, tb, FW_TB_WIRE);
		return true;	/* failed or waits for the kernel */
	}
	/* the job owns the tx buffer until it completes */
	slot = fw_hdma_alloc(fw, FW_JOB_UNET_FETCH,
			     e->gen << 16 | port << 8 | tb);
	if (slot < 0) {
		seg_unlock(fw, &e->tx_lk, false);
		fw_nv_txbuf_put(fw, tb, FW_TB_WIRE);
		return false;
	}
	if (d.flags & NVM_UNET_F_GATHER) {
		struct nvm_unet_gather g;
		uint32_t at = data_off(fw, tb), k = 0;

		/* the pieces land one after the other: one message */
		memcpy(&g, d.data, sizeof(g));
		for (uint32_t i = 0; i < g.count; i++) {
			seg_dma(fw, port, slot, LANAI_DMA_E2L, g.piece[i].len,
				at, g.piece[i].offset, &e->tx_lk, &k);
			at += g.piece[i].len;
		}
		fw_count(fw, FW_CNT_UNET_GATHER);
	} else {
		uint32_t k = 0;

		seg_dma(fw, port, slot, LANAI_DMA_E2L, d.len, data_off(fw, tb),
			d.offset, &e->tx_lk, &k);
	}
	fw_hdma_submit(fw, slot);
	e->tx_tb = tb;
	e->tx_desc = d;
	return true;
}

bool fw_unet_tx_step(struct fw *fw)
{
	bool progress = false;

	for (uint32_t i = 0; i < FW_UNET_EPS; i++) {
		uint32_t p = (fw->unet.rr + i) % FW_UNET_EPS;

		if (tx_step_ep(fw, p)) {
			progress = true;
			fw->unet.rr = (p + 1) % FW_UNET_EPS;
		}
	}
	return progress;
}

static void fetched(struct fw *fw, uint32_t port, uint32_t gen, uint32_t tb,
		    uint32_t status)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];

	if (e->gen == gen && e->tx_tb == tb)	/* the DMA is over */
		seg_unlock(fw, &e->tx_lk, false);
	if (!e->open || e->gen != gen || e->tx_tb != tb) {
		/* closed meanwhile: only now is the buffer no longer written */
		fw_nv_txbuf_put(fw, tb, FW_TB_WIRE);
		return;
	}
	e->tx_tb = 0;
	if (status != NVM_DMA_ST_DONE) {
		fw_nv_txbuf_put(fw, tb, FW_TB_WIRE);
		send_done(fw, port, NVM_UNET_ST_DMA);
		return;
	}
	/*
	 * The descriptor as checked and fetched, not as it is in SRAM now: a
	 * process that rewrote the length meanwhile would otherwise send
	 * bytes of the shared tx buffer it never fetched (another
	 * endpoint's, from an earlier use).
	 */
	transmit(fw, port, tb, &e->tx_desc);
	send_done(fw, port, NVM_UNET_ST_SENT);
}

void fw_unet_sent(struct fw *fw, uint32_t arg)
{
	fw_nv_txbuf_put(fw, arg, FW_TB_WIRE);
}

/* ---- receive ---- */

int fw_unet_find_channel(struct fw *fw, uint32_t src,
			 const struct nvm_unet_hdr *h, uint32_t *port)
{
	uint32_t p = fw_be16(h->dst_port);
	struct fw_unet_ep *e;

	if (p >= FW_UNET_EPS || !fw->unet.ep[p].open)
		return -1;
	e = &fw->unet.ep[p];
	for (int c = 0; c < NVM_UNET_CHANNELS; c++) {
		const struct fw_unet_chan *ch = &e->ch[c];

		if (ch->open && ch->node == src && ch->tag == fw_be32(h->tag) &&
		    ch->rport == fw_be16(h->src_port)) {
			*port = p;
			return c;
		}
	}
	return -1;
}

/* The cause, per endpoint, of a message that did not go direct. */
static void count_cause(struct fw *fw, struct fw_unet_ep *e, uint32_t cause)
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
static enum fw_rx_verdict to_kernel(struct fw *fw, uint32_t src,
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

static enum fw_rx_verdict divert(struct fw *fw, uint32_t port, int ch,
				 uint32_t data, uint32_t mlen, uint32_t cause,
				 uint32_t dsm)
{
	struct fw_unet *u = &fw->unet;
	struct fw_unet_ep *e = &u->ep[port];
	struct nvm_unet_div_rec r;
	uint64_t rec;
	uint32_t tb;
	int slot;

	if (!u->div_slots) {
		count_cause(fw, e, cause);
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
	e->divert = 1;
	e->div_out++;
	e->diverted++;
	count_cause(fw, e, cause);
	fw_count(fw, FW_CNT_UNET_DIVERTED);
	fw_unet_publish(fw, port);
	return FW_RX_RELEASE;
}

static void diverted(struct fw *fw, uint32_t arg, uint32_t status)
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
		if (cause != 0xff && e->open && (e->gen & 0xfff) == gen) {
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

/*
 * The reply table (DSM extensions): where a reply with number @num on
 * channel @ch goes.  Only looks; reply_commit() disarms the entry once the
 * message is surely taken (a job slot may still be missing).
 */
static uint32_t reply_ent(struct fw *fw, uint32_t port, uint32_t num)
{
	return region(fw, port) + NVM_UNET_REPLYTAB +
	       num * sizeof(struct nvm_unet_reply_ent);
}

static enum nvm_unet_reply_fate reply_lookup(struct fw *fw, uint32_t port,
						 int ch, uint8_t hflags,
						 uint32_t num, uint32_t mlen,
						 uint32_t *off)
{
	const struct fw_unet_ep *e = &fw->unet.ep[port];
	enum nvm_unet_reply_fate fate;
	struct nvm_unet_reply_ent r;

	if (!(hflags & NVM_UNET_HF_REPLY))
		return NVM_UNET_REPLY_NONE;
	if (num >= NVM_UNET_REPLY_SLOTS)
		return NVM_UNET_REPLY_MISS;
	memcpy(&r, fw->chip->sram + reply_ent(fw, port, num), sizeof(r));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);	/* armed, then the rest */
	fate = nvm_unet_reply_fate(&r, (uint32_t)ch, mlen, e->seg_size);
	if (fate == NVM_UNET_REPLY_HIT)
		*off = r.offset;
	return fate;
}

static void reply_commit(struct fw *fw, uint32_t port, uint32_t num,
			 enum nvm_unet_reply_fate f)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];
	uint32_t armed = reply_ent(fw, port, num) +
			 offsetof(struct nvm_unet_reply_ent, armed);

	if (f == NVM_UNET_REPLY_NONE)
		return;
	if (f == NVM_UNET_REPLY_HIT || f == NVM_UNET_REPLY_OVERSIZE) {
		/* one reply per arming, even one too large for it */
		fw->chip->sram[armed] = 0;
		fw->chip->sram[armed + 1] = 0;
	}
	if (f == NVM_UNET_REPLY_HIT) {
		e->reply_hits++;
		fw_count(fw, FW_CNT_UNET_REPLY_HIT);
	} else {
		e->reply_misses++;
		fw_count(fw, FW_CNT_UNET_REPLY_MISS);
	}
}

/*
 * The segment pages a delivery writes (the reply buffer, or each free
 * buffer up to what the message fills), locked in fw->unet.rx_lk: one
 * delivery at a time holds the receive slot.  False on a miss, nothing
 * held.
 */
static bool rx_lock(struct fw *fw, uint32_t port,
		    const struct nvm_unet_rx_desc *head, uint32_t mlen,
		    uint64_t *miss)
{
	const struct fw_unet_ep *e = &fw->unet.ep[port];
	struct fw_unet_lk *lk = &fw->unet.rx_lk;
	bool ok = true;

	lk->n = 0;
	if (head->flags & NVM_UNET_F_HIT)
		ok = seg_lock(fw, port, head->buf[0], mlen, lk, miss);
	for (uint32_t i = 0; i < head->nbuf && ok; i++) {
		uint32_t n = mlen - i * e->buf_size;

		ok = seg_lock(fw, port, head->buf[i],
			      n < e->buf_size ? n : e->buf_size, lk, miss);
	}
	if (!ok)
		seg_unlock(fw, lk, false);
	return ok;
}

enum fw_rx_verdict fw_unet_rx(struct fw *fw, uint32_t data, uint32_t len,
			      uint32_t src)
{
	struct nvm_unet_rx_desc head;
	enum nvm_unet_reply_fate fate;
	uint32_t hit_off = 0, num, dsm;
	struct nvm_unet_hdr h;
	struct nvm_unet_ctl ctl;
	struct fw_unet_ep *e;
	uint32_t port, mlen, nbuf = 0, scr, seq, k = 0;
	uint64_t entry, miss = 0;
	int ch, slot;

	if (len < sizeof(h)) {
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		return FW_RX_RELEASE;
	}
	memcpy(&h, fw->chip->sram + data, sizeof(h));
	if (h.flags & NVM_UNET_HF_CTL)
		return fw_unet_ctl_rx(fw, src, &h, len);
	mlen = fw_be32(h.len);
	if (!mlen || mlen > NVM_UNET_MSG_MAX || mlen != len - sizeof(h)) {
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		return FW_RX_RELEASE;
	}
	ch = fw_unet_find_channel(fw, src, &h, &port);
	if (ch < 0 && fw_be16(h.dst_port) >= NVM_UNET_VPORT_MIN &&
	    fw_be16(h.dst_port) < NVM_UNET_VPORT_MAX)
		return to_kernel(fw, src, &h, data + sizeof(h), mlen);
	if (ch < 0) {
		fw_count(fw, FW_CNT_UNET_NO_CHANNEL);
		fw_trace(fw, "unet_no_channel", src, fw_be32(h.tag));
		return FW_RX_RELEASE;
	}
	e = &fw->unet.ep[port];
	ctl = read_ctl(fw, port);
	dsm = (h.flags & NVM_UNET_HF_NOINTR ? NVM_UNET_F_NOINTR : 0) |
	      (h.flags & NVM_UNET_HF_REPLY ?
	       NVM_UNET_F_REPLY | (uint32_t)fw_be16(h.reply) << 16 : 0);
	if (e->divert)
		return divert(fw, port, ch, data + sizeof(h), mlen,
			      FW_CNT_UNET_DIV_ORDER, dsm);
	if (e->rx_prod - ctl.rx_cons >= e->rxq_len)
		return divert(fw, port, ch, data + sizeof(h), mlen,
			      FW_CNT_UNET_RING_FULL, dsm);
	if (ctl.desched)
		return divert(fw, port, ch, data + sizeof(h), mlen,
			      FW_CNT_UNET_NOT_RUNNING, dsm);

	memset(&head, 0, sizeof(head));
	head.channel = (uint16_t)ch;
	head.len = mlen;
	num = fw_be16(h.reply);
	fate = reply_lookup(fw, port, ch, h.flags, num, mlen, &hit_off);
	if (h.flags & NVM_UNET_HF_NOINTR)
		head.flags |= NVM_UNET_F_NOINTR;
	if (fate != NVM_UNET_REPLY_NONE) {
		head.flags |= NVM_UNET_F_REPLY;
		head.reply = num;
	}
	if (fate == NVM_UNET_REPLY_HIT) {
		/* straight into the requester's buffer: no free buffer */
		head.flags |= NVM_UNET_F_HIT;
		head.buf[0] = hit_off;
	} else if (mlen <= NVM_UNET_INLINE_MAX) {
		head.flags |= NVM_UNET_F_INLINE;
	} else {
		nbuf = (mlen + e->buf_size - 1) / e->buf_size;
		if (ctl.free_prod - e->free_cons < nbuf ||
		    ctl.free_prod - e->free_cons > NVM_UNET_FREEQ_LEN)
			goto no_buf;
		for (uint32_t i = 0; i < nbuf; i++) {
			uint32_t o = fw_sram_rd32(fw->chip, region(fw, port) +
				NVM_UNET_FREEQ + ((e->free_cons + i) %
						  NVM_UNET_FREEQ_LEN) * 4);

			if (o > e->seg_size || e->seg_size - o < e->buf_size) {
				/* a bad offset: the process loses that entry */
				e->free_cons += i + 1;
				goto no_buf;
			}
			head.buf[i] = o;
		}
		head.nbuf = nbuf;
	}
	if (!rx_lock(fw, port, &head, mlen, &miss)) {
		enum fw_rx_verdict v = divert(fw, port, ch, data + sizeof(h),
					      mlen, FW_CNT_UNET_NOT_RESIDENT,
					      dsm);

		/* the kernel maps the page (once, not per retry of a wait) */
		if (v == FW_RX_RELEASE) {
			fw_count(fw, FW_CNT_PAGE_MISS);
			fw_post(fw, NVM_EV_PAGE_MISS, (uint16_t)port, 1u << 31,
				miss);
		}
		return v;
	}
	/* low bit: the delivery raises no event (NOINTR) */
	slot = fw_hdma_alloc(fw, FW_JOB_UNET_RX, e->gen << 16 | port << 8 |
			     !!(head.flags & NVM_UNET_F_NOINTR));
	if (slot < 0) {
		seg_unlock(fw, &fw->unet.rx_lk, false);
		return FW_RX_WAIT;
	}
	reply_commit(fw, port, num, fate);
	e->free_cons += nbuf;
	head.msgno = e->msgs++;

	/* data, then the descriptor, then its seq: one chain, in order */
	entry = e->rxq + (uint64_t)(e->rx_prod % e->rxq_len) * sizeof(head);
	scr = fw_scratch_off(fw, slot);
	seq = e->rx_prod + 1;
	memcpy(fw->chip->sram + scr, &head, 32);
	memcpy(fw->chip->sram + scr + 32, &seq, 4);
	memcpy(fw->chip->sram + scr + 36, &head.reply, 4);
	if (head.flags & NVM_UNET_F_HIT)
		seg_dma(fw, port, slot, LANAI_DMA_L2E, mlen, data + sizeof(h),
			hit_off, &fw->unet.rx_lk, &k);
	for (uint32_t i = 0; i < nbuf; i++) {
		uint32_t n = mlen - i * e->buf_size;

		seg_dma(fw, port, slot, LANAI_DMA_L2E,
			n < e->buf_size ? n : e->buf_size,
			data + sizeof(h) + i * e->buf_size, head.buf[i],
			&fw->unet.rx_lk, &k);
	}
	if (head.flags & NVM_UNET_F_INLINE) {
		fw_hdma_add(fw, slot, LANAI_DMA_L2E, 16, scr, entry);
		fw_hdma_add(fw, slot, LANAI_DMA_L2E, mlen, data + sizeof(h),
			    entry + 16);
	} else {
		fw_hdma_add(fw, slot, LANAI_DMA_L2E, 32, scr, entry);
	}
	if (head.flags & NVM_UNET_F_REPLY)
		fw_hdma_add(fw, slot, LANAI_DMA_L2E, 4, scr + 36,
			    entry + offsetof(struct nvm_unet_rx_desc, reply));
	fw_hdma_add(fw, slot, LANAI_DMA_L2E, 4, scr + 32,
		    entry + offsetof(struct nvm_unet_rx_desc, seq));
	fw_hdma_submit(fw, slot);
	fw_count_n(fw, FW_CNT_RX_BYTES, mlen);
	return FW_RX_HOLD;
no_buf:
	return divert(fw, port, ch, data + sizeof(h), mlen, FW_CNT_UNET_NO_BUF,
		      dsm);
}

static void delivered(struct fw *fw, uint32_t port, uint32_t gen,
		      bool quiet, uint32_t status)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];
	struct nvm_unet_ctl ctl;
	uint32_t ev = 0, depth;

	seg_unlock(fw, &fw->unet.rx_lk, true);	/* the NI wrote them */
	fw_rx_release(fw);
	if (!e->open || e->gen != gen)
		return;
	if (status != NVM_DMA_ST_DONE) {
		e->rx_no_buf++;		/* counted as lost; HOST_DMA_ERR too */
		fw_unet_publish(fw, port);
		return;
	}
	e->rx_prod++;
	fw_count(fw, FW_CNT_UNET_RX);
	if (quiet) {
		e->quiet++;
		fw_count(fw, FW_CNT_UNET_QUIET);
	}
	/*
	 * Blocking receive: one event per arming, so polling costs nothing.
	 * The process stores arm (or rx_cons) and then loads the descriptor;
	 * we stored the descriptor (DMA) and now load arm and rx_cons: without
	 * a full fence both loads could see the old values, and a sleeper
	 * would miss its message.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	ctl = read_ctl(fw, port);
	depth = e->rx_prod - ctl.rx_cons;
	if (quiet) {
		/*
		 * Only queued (a barrier arrival): no wakeup, no upcall.  An
		 * arming it satisfies stays pending for the next interrupting
		 * message; a non-empty edge it took is owed to that one too.
		 */
		if (depth == 1)
			e->edge_owed = 1;
		fw_unet_publish(fw, port);
		return;
	}
	if (ctl.arm && ctl.arm != e->armed_done &&
	    (int32_t)(e->rx_prod - ctl.arm) >= 0) {
		e->armed_done = ctl.arm;
		ev |= NVM_UNET_EV_WAKE;
	}
	/* upcalls: on the edges only, so one upcall drains all pending */
	if (ctl.upcall && (depth == 1 || (e->edge_owed && depth)))
		ev |= NVM_UNET_EV_NONEMPTY;
	e->edge_owed = 0;
	if (ctl.upcall && ctl.upcall_full && depth == ctl.upcall_full)
		ev |= NVM_UNET_EV_ALMOST_FULL;
	if (ev) {
		e->events++;
		fw_post(fw, NVM_EV_NOTIFY, (uint16_t)port, ev, e->rx_prod);
	}
	fw_unet_publish(fw, port);
}

void fw_unet_job_done(struct fw *fw, uint32_t kind, uint32_t arg,
		      uint32_t status)
{
	uint32_t port = (arg >> 8) & 0xff, gen = arg >> 16;

	if (kind == FW_JOB_UNET_KFETCH) {
		if (arg && arg <= FW_NV_TXBUFS)
			kfetched(fw, arg, status);
		return;
	}
	if (kind == FW_JOB_UNET_DIVERT) {	/* its own argument layout */
		diverted(fw, arg, status);
		return;
	}
	if (port >= FW_UNET_EPS)
		return;
	if (kind == FW_JOB_UNET_FETCH)
		fetched(fw, port, gen, arg & 0xff, status);
	else
		delivered(fw, port, gen, arg & 1, status);
}

/* ---- kernel control commands ---- */

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static uint32_t k_open(struct fw *fw, const struct nvm_k_unet_open *k)
{
	struct fw_unet_ep *e;
	uint32_t gen;

	if (!fw->layout.ep_count || k->port == NVM_EP_KERNEL ||
	    k->port >= FW_UNET_EPS || fw->nv.ep[k->port].open ||
	    fw->unet.ep[k->port].open || !pow2(k->rxq_len) ||
	    k->rxq_len < NVM_UNET_RXQ_MIN || k->rxq_len > NVM_UNET_RXQ_MAX ||
	    !pow2(k->buf_size) || k->buf_size < NVM_UNET_BUF_MIN ||
	    k->buf_size > NVM_UNET_BUF_MAX || !k->seg_size ||
	    k->seg_size > NVM_UNET_SEG_MAX ||
	    (k->flags & ~NVM_UNET_KO_PAGEABLE) ||
	    ((k->flags & NVM_UNET_KO_PAGEABLE) &&
	     (!fw->nv.configured || k->seg & (NVM_PAGE_SIZE - 1) ||
	      k->seg + k->seg_size < k->seg)) ||
	    fw->unet.ep[k->port].div_out)
		return NVM_ST_BAD_CMD;	/* (the last owner's records are out) */
	e = &fw->unet.ep[k->port];
	gen = (e->gen + 1) & 0xffff;
	/* a fetch of the last owner may still run: it only reads them */
	seg_unlock(fw, &e->tx_lk, false);
	memset(e, 0, sizeof(*e));
	e->gen = gen;
	e->seg = k->seg;
	e->rxq = k->rxq;
	e->seg_size = k->seg_size;
	e->buf_size = k->buf_size;
	e->rxq_len = k->rxq_len;
	e->pageable = !!(k->flags & NVM_UNET_KO_PAGEABLE);
	memset(fw->chip->sram + region(fw, k->port), 0, NVM_EP_STRIDE);
	e->open = 1;
	fw_unet_publish(fw, k->port);
	return NVM_ST_OK;
}

static uint32_t k_close(struct fw *fw, uint32_t port)
{
	struct fw_unet_ep *e;

	if (!fw_unet_open_port(fw, port))
		return NVM_ST_BAD_CMD;
	fw_unet_release(fw, port, true);
	e = &fw->unet.ep[port];
	/* a fetch still running keeps its tx buffer and its pages:
	 * fetched() frees them */
	e->open = 0;
	e->tx_wait = 0;
	memset(e->ch, 0, sizeof(e->ch));
	return NVM_ST_OK;
}

static uint32_t k_chan(struct fw *fw, const struct nvm_k_unet_chan *k)
{
	struct fw_unet_chan *ch;

	if (!fw_unet_open_port(fw, k->port) || k->channel >= NVM_UNET_CHANNELS)
		return NVM_ST_BAD_CMD;
	ch = &fw->unet.ep[k->port].ch[k->channel];
	if (!k->open) {
		memset(ch, 0, sizeof(*ch));
		return NVM_ST_OK;
	}
	if (ch->open || k->node >= FW_NV_NODES ||
	    k->rport >= NVM_UNET_VPORT_MAX ||
	    k->rport == NVM_EP_KERNEL)
		return NVM_ST_BAD_CMD;
	/* a tag names one channel per remote node on this NIC */
	for (uint32_t p = 0; p < FW_UNET_EPS; p++)
		for (uint32_t c = 0; c < NVM_UNET_CHANNELS; c++) {
			const struct fw_unet_chan *o = &fw->unet.ep[p].ch[c];

			if (fw->unet.ep[p].open && o->open &&
			    o->node == k->node && o->tag == k->tag)
				return NVM_ST_BAD_CMD;
		}
	ch->node = k->node;
	ch->rport = k->rport;
	ch->tag = k->tag;
	ch->open = 1;
	return NVM_ST_OK;
}

/*
 * A message of a kernel-emulated endpoint: built like a NIC endpoint's,
 * the data fetched from the kernel's buffer.  The command completes at
 * once, before the fetch; the NI writes the kernel's cookie to done_addr
 * when it has the bytes, and only then may the kernel reuse its buffer.
 */
static uint32_t k_ksend(struct fw *fw, const struct nvm_k_unet_ksend *k)
{
	struct fw_unet_chan ch = {
		.open = 1, .node = k->node, .rport = k->dst_port, .tag = k->tag,
	};
	uint32_t tb, off;
	int slot;

	if (k->node >= FW_NV_NODES || !k->len || k->len > NVM_UNET_MSG_MAX ||
	    k->src_port < NVM_UNET_VPORT_MIN ||
	    k->src_port >= NVM_UNET_VPORT_MAX ||
	    (k->hflags & ~(NVM_UNET_HF_NOINTR | NVM_UNET_HF_REPLY)) ||
	    k->reply >= NVM_UNET_REPLY_SLOTS)
		return NVM_ST_BAD_CMD;
	if (fw_sendq_room(fw) < 2)
		return NVM_ST_UNREACHABLE;	/* busy: the kernel reports it */
	tb = fw_nv_txbuf_alloc(fw, FW_TB_WIRE);
	if (!tb)
		return NVM_ST_UNREACHABLE;
	slot = fw_hdma_alloc(fw, FW_JOB_UNET_KFETCH, tb);
	if (slot < 0) {
		fw_nv_txbuf_put(fw, tb, FW_TB_WIRE);
		return NVM_ST_UNREACHABLE;
	}
	/* headers now (the route and tag are the kernel's), data by DMA */
	fw->nv.txbuf_len[tb - 1] = fw_unet_frame_build(fw, k->src_port, tb, &ch,
					       k->len, k->hflags, k->reply,
					       &off);
	fw_hdma_add(fw, slot, LANAI_DMA_E2L, k->len, data_off(fw, tb),
		    k->addr);
	fw_hdma_submit(fw, slot);
	fw->unet.ks_done[tb - 1] = k->done_addr;
	fw->unet.ks_cookie[tb - 1] = k->cookie;
	return NVM_ST_OK;
}

static void kfetched(struct fw *fw, uint32_t tb, uint32_t status)
{
	struct nvm_pkt_hdr ph;
	uint32_t base = fw_nv_txbuf_off(fw, tb);
	uint32_t flen = fw->nv.txbuf_len[tb - 1];
	uint8_t rl;

	/* the bytes are here: the kernel may reuse its buffer */
	if (fw->unet.ks_done[tb - 1])
		fw_nv_host_write(fw, fw->unet.ks_done[tb - 1],
				 &fw->unet.ks_cookie[tb - 1], 4);
	fw->unet.ks_done[tb - 1] = 0;
	memcpy(&ph, fw->chip->sram + base + NVM_ROUTE_MAX, sizeof(ph));
	rl = fw_nv_route_len(fw, fw_be16(ph.dst_node));
	if (status != NVM_DMA_ST_DONE ||
	    !fw_send_submit(fw, FW_SEND_UNET, tb, base + NVM_ROUTE_MAX - rl,
			    flen)) {
		fw_nv_txbuf_put(fw, tb, FW_TB_WIRE);
		return;
	}
	fw_count(fw, FW_CNT_UNET_TX);
}

/* The kernel handed records up to @count on: their slots are free. */
static uint32_t k_div_done(struct fw *fw, uint32_t count)
{
	struct fw_unet *u = &fw->unet;

	if (!u->div_slots ||
	    (uint32_t)(count - u->div_cons) > u->div_prod - u->div_cons)
		return NVM_ST_BAD_CMD;
	for (; u->div_cons != count; u->div_cons++) {
		uint32_t p = u->div_port[u->div_cons % u->div_slots];

		if (p < FW_UNET_EPS && u->ep[p].div_out)
			u->ep[p].div_out--;
	}
	return NVM_ST_OK;
}

uint32_t fw_unet_kernel_cmd(struct fw *fw, const struct nvm_cmd *c)
{
	switch (c->op) {
	case NVM_KOP_UNET_OPEN: {
		struct nvm_k_unet_open k;

		memcpy(&k, c->inline_data, sizeof(k));
		return k_open(fw, &k);
	}
	case NVM_KOP_UNET_CLOSE:
		return k_close(fw, c->dst_port);
	case NVM_KOP_UNET_DIVERT_CFG:
		if (c->dst_node > NVM_UNET_DIV_SLOTS)
			return NVM_ST_BAD_CMD;
		fw->unet.div_base = (uint64_t)c->arg[1] << 32 | c->arg[0];
		fw->unet.div_slots = c->dst_node;
		fw->unet.div_prod = fw->unet.div_cons = 0;
		return NVM_ST_OK;
	case NVM_KOP_UNET_DIVERT_DONE:
		return k_div_done(fw, c->arg[0]);
	case NVM_KOP_UNET_KSEND: {
		struct nvm_k_unet_ksend k;

		memcpy(&k, c->inline_data, sizeof(k));
		return k_ksend(fw, &k);
	}
	case NVM_KOP_UNET_KCTL: {
		struct nvm_k_unet_kctl k;

		memcpy(&k, c->inline_data, sizeof(k));
		return fw_unet_kctl(fw, &k);
	}
	case NVM_KOP_UNET_DIRECT:
		if (!fw_unet_open_port(fw, c->dst_port) ||
		    fw->unet.ep[c->dst_port].div_out)
			return NVM_ST_BAD_CMD;
		fw->unet.ep[c->dst_port].divert = 0;
		fw_unet_publish(fw, c->dst_port);
		fw_unet_release(fw, c->dst_port, false);
		return NVM_ST_OK;
	case NVM_KOP_UNET_HOLD:
		if (!fw_unet_open_port(fw, c->dst_port))
			return NVM_ST_BAD_CMD;
		fw_unet_hold(fw, c->dst_port);
		return NVM_ST_OK;
	case NVM_KOP_UNET_CHAN: {
		struct nvm_k_unet_chan k;

		memcpy(&k, c->inline_data, sizeof(k));
		return k_chan(fw, &k);
	}
	default:
		return NVM_ST_BAD_CMD;
	}
}

/*
 * The kernel mapped @page of @port (NVM_KOP_RESTART): a send that waits
 * for it tries once more.  Page 0 (the kernel lost events) retries
 * without counting, so a page still missing is reported again.
 */
void fw_unet_restart(struct fw *fw, uint32_t port, uint64_t page)
{
	struct fw_unet_ep *e;

	if (!fw_unet_open_port(fw, port))
		return;
	e = &fw->unet.ep[port];
	if (!e->tx_wait)
		return;
	if (page && page != (e->tx_miss & ~(uint64_t)(NVM_PAGE_SIZE - 1)))
		return;
	e->tx_wait = 0;
	e->tx_retry = !!page;
}

/* Loading saved state (fw_load.c). */
static bool lk_ok(const struct fw_unet_lk *lk)
{
	return lk->n <= FW_UNET_LOCKS;
}

static bool unet_ep_ok(const struct fw_unet_ep *e, const char **what)
{
	FW_LOAD_CHECK(e->tx_tb <= FW_NV_TXBUFS);
	/* a send being fetched: transmit() indexes ch[] with its channel and
	 * sends len bytes from its tx buffer (send_check at intake; the
	 * channel may have closed since) */
	FW_LOAD_CHECK(!e->tx_tb ||
		      (e->tx_desc.channel < NVM_UNET_CHANNELS &&
		       e->tx_desc.len <= NVM_UNET_MSG_MAX));
	FW_LOAD_CHECK(lk_ok(&e->tx_lk));
	/* delivery divides by both */
	FW_LOAD_CHECK(!e->open || (e->buf_size && e->rxq_len));
	for (uint32_t c = 0; c < NVM_UNET_CHANNELS; c++)
		FW_LOAD_CHECK(e->ch[c].node < FW_NV_NODES);
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
