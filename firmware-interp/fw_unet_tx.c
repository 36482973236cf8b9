// SPDX-License-Identifier: GPL-2.0-only
/*
 * U-Net send.  Descriptors are taken in order; a small message is copied
 * out of the descriptor, a large one fetched from the segment by host
 * DMA; the NI stamps the channel's tag, destination and its own port, and
 * marks the descriptor SENT (or with the reason it was refused).  A
 * message to a node nothing can reach (fw_nv_unreachable) is refused with
 * UNREACHABLE, before and again after its fetch, and never put on the
 * wire: completing it SENT would tell the process it went.
 */
#include <string.h>

#include "fw.h"

/* ---- send ---- */

void fw_unet_send_done(struct fw *fw, uint32_t port, uint32_t st)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];
	uint32_t d = fw_unet_region(fw, port) + NVM_UNET_SENDQ +
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

/* The rules are the ABI's, shared with the driver's emulation. */
static uint32_t send_check(const struct fw_unet_ep *e,
			   const struct nvm_unet_send_desc *d)
{
	/* an any-source channel only receives */
	return nvm_unet_send_check(d, e->seg_size,
				   d->channel < NVM_UNET_CHANNELS &&
				   e->ch[d->channel].open &&
				   !nvm_unet_is_any(e->ch[d->channel].node,
						    e->ch[d->channel].rport));
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

uint32_t fw_unet_data_off(struct fw *fw, uint32_t tb)
{
	return fw_nv_txbuf_off(fw, tb) + NVM_ROUTE_MAX +
	       sizeof(struct nvm_pkt_hdr) + sizeof(struct nvm_unet_hdr);
}

void fw_unet_transmit(struct fw *fw, uint32_t port, uint32_t tb,
		      const struct nvm_unet_send_desc *d)
{
	const struct fw_unet_chan *ch = &fw->unet.ep[port].ch[d->channel];
	uint32_t len = d->len, off;
	uint32_t flen = fw_unet_frame_build(fw, port, tb, ch, len, wire_flags(d),
				    d->reply, &off);

	/* the caller made sure the send queue has room */
	if (!fw_send_submit(fw, FW_PROG_UNET, tb, off, flen))
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
			ok = fw_unet_seg_lock(fw, port, g.piece[i].offset,
					      g.piece[i].len, &e->tx_lk, &miss);
	} else {
		ok = fw_unet_seg_lock(fw, port, d->offset, d->len, &e->tx_lk, &miss);
	}
	if (ok) {
		if (e->tx_state == FW_UNET_TX_RETRY)
			fw_unet_tx_set_state(fw, port, FW_UNET_TX_READY);
		return true;
	}
	fw_unet_seg_unlock(fw, &e->tx_lk, false);
	if (e->tx_state == FW_UNET_TX_RETRY) {
		fw_unet_tx_set_state(fw, port, FW_UNET_TX_READY);
		fw_unet_send_done(fw, port, NVM_UNET_ST_FAULT);
		return false;
	}
	fw_unet_tx_set_state(fw, port, FW_UNET_TX_PAGE_WAIT);
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
	if (!fw_unet_open_port(fw, port) || e->tx_tb ||
	    e->tx_state == FW_UNET_TX_PAGE_WAIT || e->consumed == e->produced)
		return false;
	memcpy(&d, fw->chip->sram + fw_unet_region(fw, port) + NVM_UNET_SENDQ +
	       (e->consumed % NVM_UNET_SENDQ_LEN) * sizeof(d), sizeof(d));
	if (d.seq != e->consumed + 1)
		return false;	/* the process has not finished writing it */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	st = send_check(e, &d);
	if (!st && fw_nv_unreachable(fw, e->ch[d.channel].node))
		st = NVM_UNET_ST_UNREACHABLE;
	if (st) {
		fw_unet_send_done(fw, port, st);
		return true;
	}
	if (fw_unet_tx_held(fw, port, d.channel))
		return false;	/* the receiver holds us (overflow control) */
	if (fw_sendq_room(fw) < 2)
		return false;	/* keep one for NetVM's ACKs */
	/* within the peer's share, as NetVM's: frames to one node that stop
	 * moving (its link stalled) leave buffers for the others' traffic */
	tb = fw_nv_txbuf_alloc_for(fw, FW_TB_WIRE, e->ch[d.channel].node);
	if (!tb)
		return false;
	if (d.flags & NVM_UNET_F_INLINE) {
		memcpy(fw->chip->sram + fw_unet_data_off(fw, tb), d.data, d.len);
		fw_unet_transmit(fw, port, tb, &d);
		fw_unet_send_done(fw, port, NVM_UNET_ST_SENT);
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
		fw_unet_seg_unlock(fw, &e->tx_lk, false);
		fw_nv_txbuf_put(fw, tb, FW_TB_WIRE);
		return false;
	}
	if (d.flags & NVM_UNET_F_GATHER) {
		struct nvm_unet_gather g;
		uint32_t at = fw_unet_data_off(fw, tb), k = 0;

		/* the pieces land one after the other: one message */
		memcpy(&g, d.data, sizeof(g));
		for (uint32_t i = 0; i < g.count; i++) {
			fw_unet_seg_dma(fw, port, slot, LANAI_DMA_E2L, g.piece[i].len,
					at, g.piece[i].offset, &e->tx_lk, &k);
			at += g.piece[i].len;
		}
		fw_count(fw, FW_CNT_UNET_GATHER);
	} else {
		uint32_t k = 0;

		fw_unet_seg_dma(fw, port, slot, LANAI_DMA_E2L, d.len, fw_unet_data_off(fw, tb),
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

void fw_unet_fetched(struct fw *fw, uint32_t port, uint32_t gen, uint32_t tb,
		     uint32_t status)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];

	if (e->gen == gen && e->tx_tb == tb)	/* the DMA is over */
		fw_unet_seg_unlock(fw, &e->tx_lk, false);
	if (!fw_unet_open_port(fw, port) || e->gen != gen || e->tx_tb != tb) {
		/* closed meanwhile: only now is the buffer no longer written */
		fw_nv_txbuf_put(fw, tb, FW_TB_WIRE);
		return;
	}
	e->tx_tb = 0;
	if (status != NVM_DMA_ST_DONE ||
	    fw_nv_unreachable(fw, e->ch[e->tx_desc.channel].node)) {
		/* the route went (or the peer died) during the fetch */
		fw_nv_txbuf_put(fw, tb, FW_TB_WIRE);
		fw_unet_send_done(fw, port, status != NVM_DMA_ST_DONE ?
				  NVM_UNET_ST_DMA : NVM_UNET_ST_UNREACHABLE);
		return;
	}
	/*
	 * The descriptor as checked and fetched, not as it is in SRAM now: a
	 * process that rewrote the length meanwhile would otherwise send
	 * bytes of the shared tx buffer it never fetched (another
	 * endpoint's, from an earlier use).
	 */
	fw_unet_transmit(fw, port, tb, &e->tx_desc);
	fw_unet_send_done(fw, port, NVM_UNET_ST_SENT);
}

void fw_unet_sent(struct fw *fw, uint32_t arg)
{
	fw_nv_txbuf_put(fw, arg, FW_TB_WIRE);
}

