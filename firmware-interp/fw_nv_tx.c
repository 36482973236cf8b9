// SPDX-License-Identifier: GPL-2.0-only
/*
 * NetVM transmission: tx buffers, packet headers, per-peer sequence
 * windows, acknowledgements and retransmission.
 *
 * Every request and response is a sequenced packet: it gets the next
 * sequence number toward its peer when a window credit is free (at most
 * FW_NV_WIN outstanding, one credit = one bounce-buffer entry at the
 * receiver) and stays in its tx buffer until the peer acknowledges it.
 * The ACK means complete, not only arrived: it completes a write that
 * succeeded (fw_nv_rx.c).
 * ACKs are cumulative, piggybacked on every packet and also sent on their
 * own every quarter window (FW_NV_ACK_EVERY), at once when the writer
 * waits (NVM_CF_ACK_NOW), or after a short delay.  Unacknowledged packets
 * are resent after a timeout that doubles up to a cap; a peer silent for
 * too long is marked dead and its operations fail with an error.  A change
 * in the peer's boot epoch means it restarted: everything outstanding with
 * it fails with NVM_ST_PEER_RESET and both windows start afresh.
 */
#include <string.h>

#include "fw.h"
#include "fw_load.h"

/* A free tx buffer (index + 1) held for node + 1 (@peer, 0: no peer's), or 0. */
static uint32_t txbuf_take(struct fw *fw, uint32_t owners, uint32_t peer)
{
	for (uint32_t i = 0; i < FW_NV_TXBUFS; i++) {
		if (!fw->nv.txbuf_ref[i]) {
			fw->nv.txbuf_ref[i] = owners;
			fw->nv.txbuf_len[i] = 0;
			fw->nv.txbuf_peer[i] = (uint8_t)peer;
			return i + 1;
		}
	}
	return 0;
}

/* A buffer no peer's share counts (U-Net's). */
uint32_t fw_nv_txbuf_alloc(struct fw *fw, uint32_t owners)
{
	return txbuf_take(fw, owners, 0);
}

/*
 * A buffer for traffic with @node, within its share: one peer that never
 * acknowledges or never answers can hold FW_NV_TX_PEER buffers, not the
 * buffers every other peer's traffic needs.  0 when there is none for it
 * now; the caller waits, as for an empty pool.
 */
static uint32_t txbuf_take_within(struct fw *fw, uint32_t owners,
				  uint32_t node, uint32_t limit)
{
	uint32_t held = 0;

	for (uint32_t i = 0; i < FW_NV_TXBUFS; i++)
		held += fw->nv.txbuf_ref[i] && fw->nv.txbuf_peer[i] == node + 1;
	if (held >= limit)
		return 0;
	return txbuf_take(fw, owners, node + 1);
}

uint32_t fw_nv_txbuf_alloc_for(struct fw *fw, uint32_t owners, uint32_t node)
{
	return txbuf_take_within(fw, owners, node, FW_NV_TX_PEER);
}

/*
 * A buffer for one of our operations' requests to @node (FW_TB_OP): only
 * while FW_NV_TX_PEER - FW_NV_TX_REQ_PEER buffers of the share are left,
 * so that our responses to @node always find one.  A request waits for
 * an answer (a read's data, a failed write's WRITE_RESP, which the
 * cumulative ACK of every later write waits for) that needs a buffer at
 * the peer; a response needs only the peer's ACK.  Requests holding the
 * whole share on both sides waited for each other until the give-up.
 */
uint32_t fw_nv_txbuf_alloc_req(struct fw *fw, uint32_t node)
{
	return txbuf_take_within(fw, FW_TB_OP, node, FW_NV_TX_REQ_PEER);
}

void fw_nv_txbuf_put(struct fw *fw, uint32_t tb, uint32_t owner)
{
	if (tb && tb <= FW_NV_TXBUFS)
		fw->nv.txbuf_ref[tb - 1] &= ~owner;
}

uint32_t fw_nv_txbuf_off(struct fw *fw, uint32_t tb)
{
	return fw->layout.txbuf + (tb - 1) * FW_NV_TXBUF_SIZE;
}

/* Frames are built with the packet header at NVM_ROUTE_MAX, so any route
 * fits in front of it. */
struct nvm_net_hdr *fw_nv_txbuf_hdr(struct fw *fw, uint32_t tb)
{
	return (struct nvm_net_hdr *)(fw->chip->sram + fw_nv_txbuf_off(fw, tb) +
				      NVM_ROUTE_MAX + sizeof(struct nvm_pkt_hdr));
}

void fw_nv_hdr_init(struct fw *fw, struct nvm_net_hdr *h, uint8_t op,
		    uint32_t src_port, uint32_t dst_port)
{
	memset(h, 0, sizeof(*h));
	h->op = op;
	h->src_port = fw_be16((uint16_t)src_port);
	h->dst_port = fw_be16((uint16_t)dst_port);
	h->src_epoch = fw_be32(fw->nv.epoch);
}

/*
 * The route bytes to put in front of a frame to @node: none for a node the
 * mapper lost (FW_NV_NO_ROUTE is a mark, not a length: taken as one it
 * copied 255 bytes in front of a tx buffer, over its neighbour's frame).
 * Neither NetVM nor U-Net sends anything there (fw_nv_unreachable); the
 * U-Net control frames that still go leave without a route and the
 * switch drops them.
 */
uint8_t fw_nv_route_len(const struct fw *fw, uint32_t node)
{
	uint8_t rl = fw->nv.route_len[node % FW_NV_NODES];

	return rl == FW_NV_NO_ROUTE ? 0 : rl;
}

/* Stamp route, packet header and the current ack; returns (off, len). */
static uint32_t frame_finish(struct fw *fw, uint32_t node, uint32_t base,
			     uint32_t payload, uint32_t *off)
{
	struct fw_nv_peer *p = &fw->nv.peer[node];
	uint8_t rl = fw_nv_route_len(fw, node);
	struct nvm_pkt_hdr ph = {
		.type = NVM_PKT_NETVM,
		.version = NVM_PKT_VERSION,
		.src_node = fw_be16(fw->chip->node_id),
		.dst_node = fw_be16((uint16_t)node),
		.len = fw_be16((uint16_t)(sizeof(struct nvm_net_hdr) + payload)),
	};
	struct nvm_net_hdr *h = (struct nvm_net_hdr *)(fw->chip->sram + base +
		NVM_ROUTE_MAX + sizeof(ph));

	memcpy(fw->chip->sram + base + NVM_ROUTE_MAX - rl, fw->nv.route[node], rl);
	memcpy(fw->chip->sram + base + NVM_ROUTE_MAX, &ph, sizeof(ph));
	h->ack = fw_be32(p->lsn);
	h->dst_epoch = fw_be32(p->epoch);
	p->acked = p->lsn;
	p->ack_due = 0;
	*off = base + NVM_ROUTE_MAX - rl;
	return rl + sizeof(ph) + sizeof(*h) + payload;
}

static void transmit(struct fw *fw, uint32_t node, uint32_t tb)
{
	uint32_t off, len;

	/* the mapper found it gone: the packet stays until a route (and the
	 * peer's ACK) comes back, or the peer restarts */
	if (fw->nv.route_len[node] == FW_NV_NO_ROUTE)
		return;
	len = frame_finish(fw, node, fw_nv_txbuf_off(fw, tb),
			   fw->nv.txbuf_len[tb - 1], &off);
	if (!fw_send_submit(fw, FW_PROG_NV, tb, off, len))
		fw_tr_fw_sendq_full(fw, node, tb);	/* resent on timeout */
}

/* Move packets from the peer's wait queue onto the wire while credits last. */
static bool drain_waitq(struct fw *fw, uint32_t node)
{
	struct fw_nv_peer *p = &fw->nv.peer[node];
	bool moved = false;

	while (p->wq_count && p->next_seq - p->una < FW_NV_WIN &&
	       fw_sendq_room(fw) > 1) {
		uint32_t tb = p->waitq[p->wq_head];
		uint32_t seq = p->next_seq++;

		p->wq_head = (p->wq_head + 1) % FW_NV_WAITQ;
		p->wq_count--;
		fw_nv_txbuf_hdr(fw, tb)->seq = fw_be32(seq);
		p->txbuf[seq % FW_NV_WIN] = tb;
		if (p->una == seq)
			p->since_send = 0;
		transmit(fw, node, tb);
		moved = true;
	}
	if (p->wq_count && p->next_seq - p->una >= FW_NV_WIN)
		fw_count(fw, FW_CNT_CREDIT_STALLS);
	return moved;
}

/* Returns true when the packet has to wait for a credit (window full). */
bool fw_nv_send_seq(struct fw *fw, uint32_t node, uint32_t tb,
		    uint32_t data_len)
{
	struct fw_nv_peer *p = &fw->nv.peer[node];
	bool waits = p->wq_count || p->next_seq - p->una >= FW_NV_WIN;

	fw->nv.txbuf_len[tb - 1] = data_len;
	fw->nv.txbuf_ref[tb - 1] |= FW_TB_WIRE;
	if (p->wq_count == FW_NV_WAITQ) {
		/* cannot happen: the queue holds every tx buffer */
		fw_nv_txbuf_put(fw, tb, FW_TB_WIRE);
		return false;
	}
	p->waitq[(p->wq_head + p->wq_count) % FW_NV_WAITQ] = tb;
	p->wq_count++;
	drain_waitq(fw, node);
	return waits;
}

void fw_nv_send_ack(struct fw *fw, uint32_t node)
{
	uint32_t base = fw_ackbuf_off(fw, node), off, len;
	struct nvm_net_hdr *h = (struct nvm_net_hdr *)(fw->chip->sram + base +
		NVM_ROUTE_MAX + sizeof(struct nvm_pkt_hdr));

	if (fw_sendq_room(fw) == 0)
		return;		/* ack_due stays set; the timer retries */
	if (fw->nv.route_len[node] == FW_NV_NO_ROUTE)
		return;		/* gone: no frame to send it anywhere */
	fw_nv_hdr_init(fw, h, NVM_NET_ACK, 0, 0);
	len = frame_finish(fw, node, base, 0, &off);
	fw_count(fw, FW_CNT_ACKS_SENT);
	fw_send_submit(fw, FW_PROG_NV, 0, off, len);
}

void fw_nv_sent(struct fw *fw, uint32_t arg)
{
	(void)fw;
	(void)arg;	/* a tx buffer stays until its packet is acknowledged */
}

/*
 * The peer has completed our packet in @tb: a write that succeeded (one
 * that failed was answered with its error first), or our error response
 * to its write, whose entry may complete now.  The header is in SRAM,
 * which the host can write: the op is looked up by checked id.
 */
static void complete_acked(struct fw *fw, uint32_t node, uint32_t tb)
{
	const struct nvm_net_hdr *h = fw_nv_txbuf_hdr(fw, tb);
	struct fw_nv_op *op;
	uint32_t ep, idx;

	if (h->op == NVM_NET_WRITE) {
		op = fw_nv_op_by_req(fw, fw_be32(h->req), &ep, &idx);
		if (op && op->cmd.op == NVM_OP_WRITE && op->cmd.dst_node == node)
			fw_nv_complete(fw, ep, idx, NVM_ST_OK);
	} else if (h->op == NVM_NET_WRITE_RESP) {
		fw_nv_entry_complete(fw, node, fw_be32(h->arg[0]));
	}
}

void fw_nv_acked(struct fw *fw, uint32_t node, uint32_t ack)
{
	struct fw_nv_peer *p = &fw->nv.peer[node];

	/* only acks inside what we sent move the window */
	if ((uint32_t)(ack - p->una) > p->next_seq - p->una)
		return;
	if (ack != p->una) {
		p->idle_ticks = 0;
		p->since_send = 0;
		p->rto = FW_NV_RTO_TICKS;
		p->dead = 0;
	}
	while (p->una != ack) {
		uint32_t *tb = &p->txbuf[p->una % FW_NV_WIN];

		if (*tb)
			complete_acked(fw, node, *tb);
		fw_nv_txbuf_put(fw, *tb, FW_TB_WIRE);
		*tb = 0;
		p->una++;
	}
	drain_waitq(fw, node);
}

static void retransmit(struct fw *fw, uint32_t node)
{
	struct fw_nv_peer *p = &fw->nv.peer[node];

	for (uint32_t s = p->una; s != p->next_seq; s++) {
		uint32_t tb = p->txbuf[s % FW_NV_WIN];

		if (!tb || fw_sendq_room(fw) < 2)
			break;
		fw_count(fw, FW_CNT_RETRANSMITS);
		transmit(fw, node, tb);
	}
}

void fw_nv_fail_peer_ops(struct fw *fw, uint32_t node, uint32_t status)
{
	for (uint32_t ep = 0; ep < FW_NV_EPS; ep++) {
		struct fw_nv_ep *e = &fw->nv.ep[ep];

		if (!e->open)
			continue;
		for (uint32_t i = 0; i < NVM_CMDQ_LEN; i++) {
			struct fw_nv_op *op = &e->ops[i];

			/* engines may still use the buffers of FETCH and
			 * DELIVERING operations: those fail when they get back */
			/* (a kernel control command names a node too) */
			if (op->cmd.dst_node == node &&
			    op->cmd.op < NVM_OP_COUNT &&
			    (op->state == FW_OP_READY || op->state == FW_OP_SENT ||
			     op->state == FW_OP_NEW || op->state == FW_OP_DELIVER))
				fw_nv_complete(fw, ep, i, status);
		}
	}
}

/*
 * Let go of what a peer holds here that no answer from it can need: the
 * work we owe it (reads, atomics and responses not started) and packets
 * that wait for a window credit (they have no sequence number yet, so
 * dropping them leaves no gap).  Unacknowledged packets stay (at most a
 * window): if the peer comes back, they let it resume where it stopped.
 * Entries whose data waits in the bounce buffer are our kernel's to
 * finish (CREDIT) unless @bounced: the peer restarted, nothing of its
 * old life is owed.
 */
static void release_peer(struct fw *fw, uint32_t node, bool bounced)
{
	struct fw_nv_peer *p = &fw->nv.peer[node];

	while (p->wq_count) {
		fw_nv_txbuf_put(fw, p->waitq[p->wq_head], FW_TB_WIRE);
		p->wq_head = (p->wq_head + 1) % FW_NV_WAITQ;
		p->wq_count--;
	}
	for (uint32_t i = 0; i < FW_NV_PENDING; i++) {
		struct fw_nv_pending *pd = &fw->nv.pending[i];

		/* BUSY: an engine still works for it; BOUNCED: our kernel
		 * holds the bounce entry and returns it (CREDIT) */
		if (pd->state != FW_PEND_FREE && pd->state != FW_PEND_BUSY &&
		    (bounced || pd->state != FW_PEND_BOUNCED) &&
		    pd->src_node == node) {
			fw_nv_txbuf_put(fw, pd->txbuf, FW_TB_OP);
			if (pd->ppn)
				fw_nv_pt_unlock(fw, pd->ppn - 1, false);
			fw_nv_pend_set_state(fw, pd, FW_PEND_FREE);
		}
	}
}

bool fw_nv_peer_dead(struct fw *fw, uint32_t node)
{
	return node < FW_NV_NODES && fw->nv.peer[node].dead;
}

/*
 * Nothing sent to @node can arrive: no such node, the mapper marked it
 * gone (route NONE) or NetVM gave it up (dead until an ACK revives it).
 */
bool fw_nv_unreachable(struct fw *fw, uint32_t node)
{
	return node >= FW_NV_NODES ||
	       fw->nv.route_len[node] == FW_NV_NO_ROUTE ||
	       fw_nv_peer_dead(fw, node);
}

/*
 * Operations waiting for an answer that does not come: the peer took the
 * request (its ACK cleared the window) but never answers.  Each gives up
 * after giveup_ticks in SENT with the peer's window clear.  While packets
 * to the peer are unacknowledged or wait for a credit, the window's own
 * give-up (idle_ticks) watches it, and a slow peer that makes progress
 * keeps its operations.
 */
static void age_ops(struct fw *fw, uint32_t ticks)
{
	for (uint32_t ep = 0; ep < FW_NV_EPS; ep++) {
		struct fw_nv_ep *e = &fw->nv.ep[ep];

		if (!e->open || !e->inflight)
			continue;
		for (uint32_t i = 0; i < NVM_CMDQ_LEN; i++) {
			struct fw_nv_op *op = &e->ops[i];
			struct fw_nv_peer *p;

			if (op->state != FW_OP_SENT ||
			    op->cmd.dst_node >= FW_NV_NODES)
				continue;
			p = &fw->nv.peer[op->cmd.dst_node];
			if (p->una != p->next_seq || p->wq_count) {
				op->age = 0;
				continue;
			}
			op->age += ticks;
			if (op->age < fw->nv.giveup_ticks)
				continue;
			fw_tr_fw_op_timeout(fw, op->cmd.dst_node,
					    fw_nv_req_id(ep, i, op->cmd.seq));
			fw_nv_complete(fw, ep, i, NVM_ST_UNREACHABLE);
		}
	}
}

/*
 * How many ticks this timer callback stands for.  The callback comes at
 * least FW_NV_TICK_NS after the timer was armed, and later when the host
 * is loaded (QEMU's main loop runs late): counting one tick per callback
 * made the 6 s give-up take 10 s and more on a busy host, past the
 * driver's own deadline.  So the time that passed is counted, carried
 * over in tick_rem_ns below a whole tick, and capped at the give-up.
 */
static uint32_t ticks_passed(struct fw *fw)
{
	uint64_t now = fw->chip->ops->now_ns(fw->chip->opaque);
	uint64_t dt = now > fw->nv.tick_armed_ns ?
		      now - fw->nv.tick_armed_ns : 0;
	uint64_t ticks;

	if (fw->nv.tick_rem_ns >= FW_NV_TICK_NS)	/* loaded state */
		fw->nv.tick_rem_ns = 0;
	dt += fw->nv.tick_rem_ns;
	ticks = dt / FW_NV_TICK_NS;
	fw->nv.tick_rem_ns = dt % FW_NV_TICK_NS;
	if (ticks < 1)
		ticks = 1;
	if (ticks > fw->nv.giveup_ticks)
		ticks = fw->nv.giveup_ticks;
	return (uint32_t)ticks;
}

void fw_nv_tick(struct fw *fw)
{
	uint32_t ticks;

	fw->nv.timer_armed = 0;
	if (!fw->nv.giveup_ticks)	/* state from before CONFIG set it */
		fw->nv.giveup_ticks = FW_NV_GIVEUP_TICKS;
	ticks = ticks_passed(fw);
	for (uint32_t n = 0; n < FW_NV_NODES; n++) {
		struct fw_nv_peer *p = &fw->nv.peer[n];

		if (p->una == p->next_seq)
			continue;
		p->idle_ticks += ticks;
		p->since_send += ticks;
		if (p->since_send >= p->rto) {
			retransmit(fw, n);
			p->since_send = 0;
			if (p->rto < FW_NV_RTO_MAX_TICKS)
				p->rto *= 2;
		}
		if (p->idle_ticks >= fw->nv.giveup_ticks && !p->dead) {
			/* operations towards it fail now and from now on,
			 * until an ACK brings it back */
			p->dead = 1;
			fw_tr_fw_peer_dead(fw, n, p->una);
			fw_nv_fail_peer_ops(fw, n, NVM_ST_UNREACHABLE);
			release_peer(fw, n, false);
		}
	}
	age_ops(fw, ticks);
}

void fw_nv_arm_timer(struct fw *fw)
{
	bool need = false, ack = false;

	for (uint32_t n = 0; n < FW_NV_NODES; n++) {
		need |= fw->nv.peer[n].una != fw->nv.peer[n].next_seq;
		ack |= fw->nv.peer[n].ack_due;
	}
	/* an operation waits for an answer: age_ops must see it */
	for (uint32_t ep = 0; ep < FW_NV_EPS && !need; ep++)
		need = fw->nv.ep[ep].open && fw->nv.ep[ep].inflight;
	if (need && !fw->nv.timer_armed) {
		fw->nv.timer_armed = 1;
		fw->nv.tick_armed_ns = fw->chip->ops->now_ns(fw->chip->opaque);
		fw->chip->ops->timer_arm(fw->chip->opaque, 0, FW_NV_TICK_NS);
	}
	if (ack && !fw->nv.ack_timer_armed) {
		fw->nv.ack_timer_armed = 1;
		fw->chip->ops->timer_arm(fw->chip->opaque, 1, FW_NV_ACK_DELAY_NS);
	} else if (!ack && fw->nv.ack_timer_armed) {
		/* every ACK due went out on a packet (a ping-pong's reply):
		 * the delayed ACK would only wake us for nothing */
		fw->nv.ack_timer_armed = 0;
		fw->chip->ops->timer_arm(fw->chip->opaque, 1, 0);
	}
}

void fw_nv_ack_timer(struct fw *fw)
{
	fw->nv.ack_timer_armed = 0;
	for (uint32_t n = 0; n < FW_NV_NODES; n++)
		if (fw->nv.peer[n].ack_due)
			fw_nv_send_ack(fw, n);
}

void fw_nv_peer_reset(struct fw *fw, uint32_t node, uint32_t epoch)
{
	struct fw_nv_peer *p = &fw->nv.peer[node];

	fw_count(fw, FW_CNT_PEER_RESETS);
	fw_tr_fw_peer_reset(fw, node, epoch);
	fw_nv_fail_peer_ops(fw, node, NVM_ST_PEER_RESET);
	for (uint32_t i = 0; i < FW_NV_WIN; i++)
		fw_nv_txbuf_put(fw, p->txbuf[i], FW_TB_WIRE);
	release_peer(fw, node, true);
	memset(p, 0, sizeof(*p));
	p->epoch = epoch;
	p->next_seq = 1;
	p->una = 1;
	p->lsn = 1;
	p->acked = 1;
	p->rto = FW_NV_RTO_TICKS;
}

/* Loading saved state (fw_load.c): tx buffer numbers are index + 1; a
 * buffer's data (frame_finish, a read's response) follows the route and
 * both headers and must end inside the buffer. */
#define TXBUF_DATA_MAX	(FW_NV_TXBUF_SIZE - NVM_ROUTE_MAX - \
			 sizeof(struct nvm_pkt_hdr) - sizeof(struct nvm_net_hdr))

static bool tb_ok(uint32_t tb)
{
	return tb <= FW_NV_TXBUFS;
}

static bool nv_ep_ok(const struct fw *fw, const struct fw_nv_ep *e,
		     const char **what)
{
	FW_LOAD_CHECK(!e->notf_len || !(e->notf_len & (e->notf_len - 1)));
	FW_LOAD_CHECK(e->produced - e->consumed <= NVM_CMDQ_LEN);
	FW_LOAD_CHECK(e->inflight <= NVM_CMDQ_LEN);
	for (uint32_t i = 0; i < NVM_CMDQ_LEN; i++) {
		const struct fw_nv_op *op = &e->ops[i];

		if (!fw_nv_op_state_ok(fw, op, what))
			return false;
		FW_LOAD_CHECK(tb_ok(op->txbuf));
		FW_LOAD_CHECK(op->resp_len <= TXBUF_DATA_MAX);
	}
	return true;
}

static bool nv_peer_ok(const struct fw_nv_peer *p, const char **what)
{
	FW_LOAD_CHECK(p->next_seq - p->una <= FW_NV_WIN);
	FW_LOAD_CHECK(p->wq_head < FW_NV_WAITQ);
	FW_LOAD_CHECK(p->wq_count <= FW_NV_WAITQ);
	for (uint32_t i = 0; i < FW_NV_WIN; i++) {
		FW_LOAD_CHECK(tb_ok(p->txbuf[i]));
		FW_LOAD_CHECK(p->notf_port[i] < FW_NV_EPS);
	}
	for (uint32_t i = 0; i < p->wq_count; i++)
		FW_LOAD_CHECK(tb_ok(p->waitq[(p->wq_head + i) % FW_NV_WAITQ]));
	return true;
}

static bool nv_pending_ok(const struct fw *fw, const struct fw_nv_pending *r,
			  const char **what)
{
	FW_LOAD_CHECK(r->state < FW_PEND_STATE_COUNT);
	FW_LOAD_CHECK(r->src_node < FW_NV_NODES);
	FW_LOAD_CHECK(tb_ok(r->txbuf));
	FW_LOAD_CHECK(r->ppn <= fw->layout.max_ppn);
	/* respond() indexes its table with the request's op; a request being
	 * served DMAs h.len bytes into one tx buffer (page_check at intake) */
	FW_LOAD_CHECK(r->state == FW_PEND_FREE || r->h.op < NVM_NET_OP_COUNT);
	FW_LOAD_CHECK(r->state != FW_PEND_BUSY || r->h.len <= NVM_PAGE_SIZE);
	return true;
}

static bool nv_hostwrites_ok(const struct fw_nv *nv, const char **what)
{
	FW_LOAD_CHECK(nv->hwq_head < FW_NV_HWQ);
	FW_LOAD_CHECK(nv->hwq_count <= FW_NV_HWQ);
	for (uint32_t i = 0; i < FW_NV_HWQ; i++) {
		FW_LOAD_CHECK(nv->hwq[i].len <= FW_NV_HW_MAX);
		FW_LOAD_CHECK(nv->hwq[i].irq.irq_ep <= FW_NV_EPS);
	}
	for (uint32_t i = 0; i < FW_HDMA_SLOTS; i++)
		FW_LOAD_CHECK(nv->hw_irq[i].irq_ep <= FW_NV_EPS);
	return true;
}

/* Every index in struct fw_nv against the array or SRAM it selects. */
bool fw_nv_state_ok(const struct fw *fw, const char **what)
{
	const struct fw_nv *nv = &fw->nv;

	FW_LOAD_CHECK(nv->rr_ep < FW_NV_EPS);
	FW_LOAD_CHECK(nv->max_nodes <= FW_NV_NODES);
	/* tx buffer n is at layout.txbuf + (n - 1) * FW_NV_TXBUF_SIZE */
	FW_LOAD_CHECK(!nv->configured ||
		      (fw->layout.txbuf <= fw->chip->sram_size &&
		       (uint64_t)FW_NV_TXBUFS * FW_NV_TXBUF_SIZE <=
		       fw->chip->sram_size - fw->layout.txbuf));
	for (uint32_t i = 0; i < FW_NV_TXBUFS; i++) {
		FW_LOAD_CHECK(nv->txbuf_len[i] <= TXBUF_DATA_MAX);
		FW_LOAD_CHECK(nv->txbuf_peer[i] <= FW_NV_NODES);
	}
	for (uint32_t n = 0; n < FW_NV_NODES; n++) {
		FW_LOAD_CHECK(nv->route_len[n] <= NVM_ROUTE_MAX ||
			      nv->route_len[n] == FW_NV_NO_ROUTE);
		if (!nv_peer_ok(&nv->peer[n], what))
			return false;
	}
	for (uint32_t e = 0; e < FW_NV_EPS; e++)
		if (!nv_ep_ok(fw, &nv->ep[e], what))
			return false;
	for (uint32_t i = 0; i < FW_NV_PENDING; i++)
		if (!nv_pending_ok(fw, &nv->pending[i], what))
			return false;
	return nv_hostwrites_ok(nv, what);
}
