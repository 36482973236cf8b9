// SPDX-License-Identifier: GPL-2.0-only
/*
 * U-Net receive.  A packet goes to the endpoint it names (dst_port) and
 * there to the channel whose (source node, source port, tag) it carries,
 * else to the endpoint's any-source channel for its tag; anything else is
 * dropped and counted.  Channels of other endpoints are never asked, so
 * endpoints of one NIC may hold the same (node, port, tag).  Small
 * messages go whole into the receive descriptor, large ones into buffers
 * popped from the free queue (or, a reply, straight into the buffer the
 * reply table names); the descriptor's seq is written last.  What cannot
 * go direct is diverted (fw_unet_divert.c).
 */
#include <string.h>

#include "fw.h"

/* ---- receive ---- */

int fw_unet_find_channel(struct fw *fw, uint32_t src,
			 const struct nvm_unet_hdr *h, uint32_t *port)
{
	uint32_t p = fw_be16(h->dst_port);
	struct fw_unet_ep *e;

	if (!fw_unet_open_port(fw, p))
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

/*
 * The endpoint's any-source channel for @h's tag (docs/unet.md), asked
 * only when no channel with a named source takes the message.
 */
static int find_any(struct fw *fw, const struct nvm_unet_hdr *h,
		    uint32_t *port)
{
	uint32_t p = fw_be16(h->dst_port);
	const struct fw_unet_ep *e;

	if (!fw_unet_open_port(fw, p))
		return -1;
	e = &fw->unet.ep[p];
	for (int c = 0; c < NVM_UNET_CHANNELS; c++)
		if (e->ch[c].open && e->ch[c].tag == fw_be32(h->tag) &&
		    nvm_unet_is_any(e->ch[c].node, e->ch[c].rport)) {
			*port = p;
			return c;
		}
	return -1;
}

/*
 * The reply table (DSM extensions): where a reply with number @num on
 * channel @ch goes.  Only looks; reply_commit() disarms the entry once the
 * message is surely taken (a job slot may still be missing).
 */
static uint32_t reply_ent(struct fw *fw, uint32_t port, uint32_t num)
{
	return fw_unet_region(fw, port) + NVM_UNET_REPLYTAB +
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
		ok = fw_unet_seg_lock(fw, port, head->buf[0], mlen, lk, miss);
	for (uint32_t i = 0; i < head->nbuf && ok; i++) {
		uint32_t n = mlen - i * e->buf_size;

		ok = fw_unet_seg_lock(fw, port, head->buf[i],
				      n < e->buf_size ? n : e->buf_size, lk, miss);
	}
	if (!ok)
		fw_unet_seg_unlock(fw, lk, false);
	return ok;
}

/* A message being taken: what the steps of fw_unet_rx() share. */
struct rx_msg {
	struct nvm_unet_hdr h;
	uint32_t port, data, mlen;	/* data: the message, after h */
	uint32_t src;			/* the sender's node (the link's) */
	int ch;
	uint32_t dsm;			/* the DSM flags a divert record keeps */
	struct nvm_unet_ctl ctl;
	enum nvm_unet_reply_fate fate;
	uint32_t num;			/* reply number */
	uint32_t hit_off;		/* a reply's buffer (fate HIT) */
	uint32_t nbuf;			/* free buffers it takes */
	struct nvm_unet_rx_desc head;	/* its receive descriptor */
};

static enum fw_rx_verdict rx_divert(struct fw *fw, const struct rx_msg *m,
				    uint32_t cause)
{
	uint32_t from = m->src | (uint32_t)fw_be16(m->h.src_port) << 16;

	return fw_unet_divert(fw, m->port, m->ch, m->data, m->mlen, cause,
			      m->dsm, from);
}

/*
 * The free buffers a message too large for its descriptor fills, popped
 * (not yet consumed) into m->head; false if there are not enough or one
 * is bad.  A bad one is consumed with the good ones before it (the queue
 * is taken in order, and a message that needs them all cannot use them):
 * the process that posted it loses those entries, and only its own.
 */
static bool rx_take_bufs(struct fw *fw, struct rx_msg *m)
{
	struct fw_unet_ep *e = &fw->unet.ep[m->port];
	uint32_t nbuf = (m->mlen + e->buf_size - 1) / e->buf_size;

	if (m->ctl.free_prod - e->free_cons < nbuf ||
	    m->ctl.free_prod - e->free_cons > NVM_UNET_FREEQ_LEN)
		return false;
	for (uint32_t i = 0; i < nbuf; i++) {
		uint32_t o = fw_sram_rd32(fw->chip, fw_unet_region(fw, m->port) +
			NVM_UNET_FREEQ + ((e->free_cons + i) %
					  NVM_UNET_FREEQ_LEN) * 4);

		if (o > e->seg_size || e->seg_size - o < e->buf_size) {
			/* a bad offset: the process loses it and those before */
			e->free_cons += i + 1;
			return false;
		}
		m->head.buf[i] = o;
	}
	m->head.nbuf = nbuf;
	m->nbuf = nbuf;
	return true;
}

/*
 * Where the message goes: the reply buffer, the descriptor itself
 * (inline), or free buffers.  False: no buffers (divert).
 */
static bool rx_place(struct fw *fw, struct rx_msg *m)
{
	struct nvm_unet_rx_desc *head = &m->head;

	memset(head, 0, sizeof(*head));
	head->channel = (uint16_t)m->ch;
	head->len = m->mlen;
	head->src_node = (uint16_t)m->src;
	head->src_port = fw_be16(m->h.src_port);
	m->num = fw_be16(m->h.reply);
	m->fate = reply_lookup(fw, m->port, m->ch, m->h.flags, m->num, m->mlen,
			       &m->hit_off);
	if (m->h.flags & NVM_UNET_HF_NOINTR)
		head->flags |= NVM_UNET_F_NOINTR;
	if (m->fate != NVM_UNET_REPLY_NONE) {
		head->flags |= NVM_UNET_F_REPLY;
		head->reply = m->num;
	}
	if (m->fate == NVM_UNET_REPLY_HIT) {
		/* straight into the requester's buffer: no free buffer */
		head->flags |= NVM_UNET_F_HIT;
		head->buf[0] = m->hit_off;
		return true;
	}
	if (m->mlen <= NVM_UNET_INLINE_MAX) {
		head->flags |= NVM_UNET_F_INLINE;
		return true;
	}
	return rx_take_bufs(fw, m);
}

/* A page the delivery writes is not resident: divert, and ask for it. */
static enum fw_rx_verdict rx_not_resident(struct fw *fw,
					  const struct rx_msg *m, uint64_t miss)
{
	enum fw_rx_verdict v = rx_divert(fw, m, FW_CNT_UNET_NOT_RESIDENT);

	/* the kernel maps the page (once, not per retry of a wait) */
	if (v == FW_RX_RELEASE) {
		fw_count(fw, FW_CNT_PAGE_MISS);
		fw_post(fw, NVM_EV_PAGE_MISS, (uint16_t)m->port, 1u << 31, miss);
	}
	return v;
}

/* Data, then the descriptor, then its seq: one chain, in order. */
static void rx_chain(struct fw *fw, const struct rx_msg *m, int slot)
{
	const struct fw_unet_ep *e = &fw->unet.ep[m->port];
	const struct nvm_unet_rx_desc *head = &m->head;
	uint32_t scr = fw_scratch_off(fw, slot), seq = e->rx_prod + 1, k = 0;
	uint64_t entry = e->rxq + (uint64_t)(e->rx_prod % e->rxq_len) *
			 sizeof(*head);

	memcpy(fw->chip->sram + scr, head, 32);
	memcpy(fw->chip->sram + scr + 32, &seq, 4);
	/* reply number and sender: one piece (unet_abi.h asserts it) */
	memcpy(fw->chip->sram + scr + 36, &head->reply, 8);
	if (head->flags & NVM_UNET_F_HIT)
		fw_unet_seg_dma(fw, m->port, slot, LANAI_DMA_L2E, m->mlen,
				m->data, m->hit_off, &fw->unet.rx_lk, &k);
	for (uint32_t i = 0; i < m->nbuf; i++) {
		uint32_t n = m->mlen - i * e->buf_size;

		fw_unet_seg_dma(fw, m->port, slot, LANAI_DMA_L2E,
				n < e->buf_size ? n : e->buf_size,
				m->data + i * e->buf_size, head->buf[i],
				&fw->unet.rx_lk, &k);
	}
	if (head->flags & NVM_UNET_F_INLINE) {
		fw_hdma_add(fw, slot, LANAI_DMA_L2E, 16, scr, entry);
		fw_hdma_add(fw, slot, LANAI_DMA_L2E, m->mlen, m->data,
			    entry + 16);
	} else {
		fw_hdma_add(fw, slot, LANAI_DMA_L2E, 32, scr, entry);
	}
	fw_hdma_add(fw, slot, LANAI_DMA_L2E, 8, scr + 36,
		    entry + offsetof(struct nvm_unet_rx_desc, reply));
	fw_hdma_add(fw, slot, LANAI_DMA_L2E, 4, scr + 32,
		    entry + offsetof(struct nvm_unet_rx_desc, seq));
	fw_hdma_submit(fw, slot);
}

/* Direct delivery: place it, lock its pages, take a job slot, send. */
static enum fw_rx_verdict rx_direct(struct fw *fw, struct rx_msg *m)
{
	struct fw_unet_ep *e = &fw->unet.ep[m->port];
	uint64_t miss = 0;
	int slot;

	if (!rx_place(fw, m))
		return rx_divert(fw, m, FW_CNT_UNET_NO_BUF);
	if (!rx_lock(fw, m->port, &m->head, m->mlen, &miss))
		return rx_not_resident(fw, m, miss);
	/* low bit: the delivery raises no event (NOINTR) */
	slot = fw_hdma_alloc(fw, FW_JOB_UNET_RX, e->gen << 16 | m->port << 8 |
			     !!(m->head.flags & NVM_UNET_F_NOINTR));
	if (slot < 0) {
		fw_unet_seg_unlock(fw, &fw->unet.rx_lk, false);
		return FW_RX_WAIT;
	}
	reply_commit(fw, m->port, m->num, m->fate);
	e->free_cons += m->nbuf;
	m->head.msgno = e->msgs++;
	rx_chain(fw, m, slot);
	fw_count_n(fw, FW_CNT_RX_BYTES, m->mlen);
	return FW_RX_HOLD;
}

/* The header, checked: false (counted) if the frame is bad. */
static bool rx_header(struct fw *fw, struct rx_msg *m, uint32_t data,
		      uint32_t len)
{
	if (len < sizeof(m->h)) {
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		return false;
	}
	memcpy(&m->h, fw->chip->sram + data, sizeof(m->h));
	m->data = data + sizeof(m->h);
	m->mlen = fw_be32(m->h.len);
	if (m->h.flags & NVM_UNET_HF_CTL)
		return true;	/* overflow control: its own checks */
	if (!m->mlen || m->mlen > NVM_UNET_MSG_MAX ||
	    m->mlen != len - sizeof(m->h)) {
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		return false;
	}
	return true;
}

enum fw_rx_verdict fw_unet_rx(struct fw *fw, uint32_t data, uint32_t len,
			      uint32_t src)
{
	struct rx_msg m = { 0 };
	struct fw_unet_ep *e;
	uint32_t dport;

	if (!rx_header(fw, &m, data, len))
		return FW_RX_RELEASE;
	if (m.h.flags & NVM_UNET_HF_CTL)
		return fw_unet_ctl_rx(fw, src, &m.h, len);
	m.src = src;
	m.ch = fw_unet_find_channel(fw, src, &m.h, &m.port);
	if (m.ch < 0)
		m.ch = find_any(fw, &m.h, &m.port);
	dport = fw_be16(m.h.dst_port);
	if (m.ch < 0 && dport >= NVM_UNET_VPORT_MIN && dport < NVM_UNET_VPORT_MAX)
		return fw_unet_to_kernel(fw, src, &m.h, m.data, m.mlen);
	if (m.ch < 0) {
		fw_count(fw, FW_CNT_UNET_NO_CHANNEL);
		fw_tr_fw_unet_no_channel(fw, src, fw_be32(m.h.tag));
		return FW_RX_RELEASE;
	}
	e = &fw->unet.ep[m.port];
	m.ctl = fw_unet_read_ctl(fw, m.port);
	m.dsm = (m.h.flags & NVM_UNET_HF_NOINTR ? NVM_UNET_F_NOINTR : 0) |
		(m.h.flags & NVM_UNET_HF_REPLY ?
		 NVM_UNET_F_REPLY | (uint32_t)fw_be16(m.h.reply) << 16 : 0);
	if (fw_unet_diverting(e))
		return rx_divert(fw, &m, FW_CNT_UNET_DIV_ORDER);
	if (e->rx_prod - m.ctl.rx_cons >= e->rxq_len)
		return rx_divert(fw, &m, FW_CNT_UNET_RING_FULL);
	if (m.ctl.desched)
		return rx_divert(fw, &m, FW_CNT_UNET_NOT_RUNNING);
	return rx_direct(fw, &m);
}

void fw_unet_delivered(struct fw *fw, uint32_t port, uint32_t gen,
		       bool quiet, uint32_t status)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];
	struct nvm_unet_ctl ctl;
	uint32_t ev = 0, depth;

	fw_unet_seg_unlock(fw, &fw->unet.rx_lk, true);	/* the NI wrote them */
	fw_rx_release(fw);
	if (!fw_unet_open_port(fw, port) || e->gen != gen)
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
	ctl = fw_unet_read_ctl(fw, port);
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

