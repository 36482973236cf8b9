// SPDX-License-Identifier: MIT
/*
 * What makes U-Net reliable below an RDM endpoint.  U-Net keeps a
 * channel's messages in order and FUGU loses none at a slow or full
 * receiver, but the fabric drops a frame whose output queue is full and
 * U-Net does not resend it (docs/unet.md, docs/fabric.md).  So each
 * message carries a per-peer sequence number; the receiver takes only
 * the next one in order and acknowledges cumulatively, in the header of
 * whatever it sends back and in an ack of its own; the sender keeps a
 * copy of each message until it is acknowledged and sends again
 * everything not acknowledged after a timeout that doubles (go-back-N).
 * A send completes when the receiver has the message
 * (FI_TRANSMIT_COMPLETE).  Progress is manual: the completion queue's
 * reads drive it, and sread wakes for the timers.
 *
 * A sender waiting for its completion must never wait for the receiver's
 * next call.  So the receiver also keeps, for every peer, what it would
 * acknowledge in one 8-byte slot of a page of its own (the ack table),
 * exported read-only as NetVM memory, and tells a peer of another node
 * the table's key and the slot in its ack frames.  A sender that knows
 * them says so in its frames (FNV_RDM_PULLS), and reads the slot with a
 * NetVM read when its oldest message waited FNV_RDM_PULL_MS: the NIC
 * answers without the receiver.  For such a peer the receiver defers its
 * ack of its own: the answer of a ping-pong carries it (one U-Net send,
 * about 11 us, and one frame through each NIC less per message), or it
 * goes on its own FNV_RDM_ACK_PASSES passes later, or before the
 * receiver sleeps or closes.  It still acks at once where the window
 * needs it (half of it unacknowledged, a frame out of order or
 * repeated), to peers that cannot pull (yet), and on the own node (the
 * NIC does not reach it; the loop-back's ack is a socket send, cheap).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "fnv_rdm.h"

/* a before b in sequence space (wrapping) */
static bool seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

int fnv_rdm_init(struct fnv_ep *ep)
{
	struct fnv_rdm *r = calloc(1, sizeof(*r));
	long page = sysconf(_SC_PAGESIZE);

	if (!r)
		return -FI_ENOMEM;
	/* a page of its own: NetVM exports whole pages, once each */
	r->acks = aligned_alloc((size_t)page, (size_t)page);
	if (!r->acks) {
		free(r);
		return -FI_ENOMEM;
	}
	memset(r->acks, 0, (size_t)page);
	r->acks_export = -1;
	/* a new incarnation: a peer that knew an older one starts over */
	if (getrandom(&r->epoch, sizeof(r->epoch), 0) != sizeof(r->epoch))
		r->epoch = (uint32_t)fnv_now_ms() ^ (uint32_t)(uintptr_t)r;
	ep->rdm = r;
	return 0;
}

void fnv_rdm_fini(struct fnv_ep *ep)
{
	struct fnv_rdm *r = ep->rdm;

	if (!r)
		return;
	FI_INFO(&fnv_prov, FI_LOG_EP_DATA,
		"RDM endpoint closed: %llu resent, %llu dropped out of order, %llu dropped (full), %llu acks deferred, %llu ack table reads, %llu rendezvous received written, %llu read (%llu into place)\n",
		(unsigned long long)r->resent,
		(unsigned long long)r->dropped_order,
		(unsigned long long)r->dropped_full,
		(unsigned long long)r->acks_deferred,
		(unsigned long long)r->pulled,
		(unsigned long long)r->rdv_written,
		(unsigned long long)r->rdv_read,
		(unsigned long long)r->rdv_in_place);
	fnv_rdv_fini(ep);
	for (int i = 0; i < r->nlive; i++) {
		for (int k = 0; k < FNV_RDM_WIN; k++)
			free(r->live[i]->win[k]);
		free(r->live[i]);
	}
	fnv_rdm_match_fini(ep);
	if (r->acks_export >= 0)
		fnv_nvm_unexport_locked(ep->dom, r->acks_export);
	free(r->acks);
	free(r);
	ep->rdm = NULL;
}

struct fnv_peer *fnv_rdm_peer(struct fnv_rdm *r, uint16_t node,
			      uint16_t port, bool create)
{
	unsigned int h = ((unsigned int)node * NVM_UNET_CHANNELS + port) %
			 FNV_RDM_PEERS;

	for (int i = 0; i < FNV_RDM_PEERS; i++) {
		struct fnv_peer **p = &r->peers[(h + i) % FNV_RDM_PEERS];

		if (*p && (*p)->node == node && (*p)->port == port)
			return *p;
		if (!*p) {
			if (!create)
				return NULL;
			*p = calloc(1, sizeof(**p));
			if (*p) {
				(*p)->node = node;
				(*p)->port = port;
				(*p)->slot = (h + (unsigned int)i) %
					     FNV_RDM_PEERS;
				r->live[r->nlive++] = *p;
			}
			return *p;
		}
	}
	return NULL;	/* table full */
}

static int wire_to(struct fnv_ep *ep, const struct fnv_peer *p,
		   const void *frame, size_t len)
{
	struct fnv_addr to = {
		.magic = FNV_ADDR_MAGIC, .node = p->node, .port = p->port,
		.nic = ep->w.nic,
	};

	return fnv_wire_send(&ep->w, &to, frame, len);
}

/* p is on another node: the NIC reaches it (and it, our ack table) */
static bool remote(const struct fnv_ep *ep, const struct fnv_peer *p)
{
	return p->node != ep->dom->node;
}

/* What p's slot of the ack table says: where we are in its stream. */
static void publish_rx(struct fnv_rdm *r, const struct fnv_peer *p)
{
	__atomic_store_n(&r->acks[p->slot],
			 fnv_rdm_slot(p->rx_known ? p->rx_epoch : 0,
				      p->rx_next),
			 __ATOMIC_RELEASE);
}

/* The ack table exported (once): false if it cannot be. */
static bool table_ready(struct fnv_ep *ep)
{
	struct fnv_rdm *r = ep->rdm;
	struct fnv_rdv_piece table = { 0 };
	int h;

	if (r->acks_key || r->acks_failed)
		return r->acks_key != 0;
	h = fnv_nvm_export_locked(ep->dom, r->acks,
				  (size_t)sysconf(_SC_PAGESIZE), false, &table);
	if (h < 0) {
		FI_INFO(&fnv_prov, FI_LOG_EP_DATA,
			"ack table export: %d: acks go as frames\n", h);
		r->acks_failed = true;
		return false;
	}
	r->acks_key = table.key;
	r->acks_export = h;
	return true;
}

/* The acknowledgement fields of a frame to p: everything of p's so far,
 * and whether we read p's ack table. */
static void stamp_ack(struct fnv_peer *p, struct fnv_rdm_hdr *h)
{
	h->ack = p->rx_next;
	h->ack_epoch = p->rx_known ? p->rx_epoch : 0;
	if (p->pull_key)
		h->flags |= FNV_RDM_PULLS;
	else
		h->flags &= (uint8_t)~FNV_RDM_PULLS;
	p->rx_acked = p->rx_next;
	p->ack_now = false;
	p->ack_owed = false;
}

/* The oldest in flight was (re)sent now: its clocks start. */
static void restart_clocks(struct fnv_peer *p, int64_t now)
{
	p->tx_sent_ms = now;
	p->retries = 0;
	p->pull_due_ms = now + FNV_RDM_PULL_MS;
	p->pulls = 0;
}

/* What a frame to p says besides its payload. */
struct frame_head {
	uint8_t type, flags;
	uint64_t tag, data;
	void *ctx;
	bool complete, quiet;
};

/* One frame to p, kept until acknowledged: 0, -FI_EAGAIN, or an error. */
static ssize_t send_to_peer(struct fnv_ep *ep, struct fnv_peer *p,
			    const struct frame_head *f,
			    const struct iovec *iov, size_t count)
{
	size_t len = fnv_iov_total(iov, count), off;
	struct fnv_rdm_hdr h = {
		.type = f->type, .flags = f->flags, .epoch = ep->rdm->epoch,
		.tag = f->tag,
	};
	size_t extra = f->flags & FNV_RDM_HAS_DATA ? sizeof(f->data) : 0;
	struct fnv_pkt *pkt;
	int err;

	if (len > FNV_RDM_MSG_MAX)
		return -FI_EMSGSIZE;
	if (p->dead)
		return -FI_EHOSTUNREACH;
	if (p->tx_next - p->tx_done >= FNV_RDM_WIN)
		return -FI_EAGAIN;	/* progress frees the window */
	pkt = malloc(sizeof(*pkt) + sizeof(h) + extra + len);
	if (!pkt)
		return -FI_ENOMEM;
	pkt->ctx = f->ctx;
	pkt->cflags = FI_SEND |
		      (f->type == FNV_RDM_TAGGED ? FI_TAGGED : FI_MSG);
	pkt->complete = f->complete && ep->tx_cq;
	pkt->quiet = f->quiet;
	pkt->len = sizeof(h) + extra + len;
	h.seq = p->tx_next;
	stamp_ack(p, &h);
	memcpy(pkt->frame, &h, sizeof(h));
	memcpy(pkt->frame + sizeof(h), &f->data, extra);
	off = sizeof(h) + extra;
	for (size_t i = 0; i < count; i++) {
		memcpy(pkt->frame + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	if (p->tx_acked == p->tx_next)
		restart_clocks(p, fnv_now_ms());	/* the oldest in flight */
	err = wire_to(ep, p, pkt->frame, pkt->len);
	if (err == -EHOSTUNREACH || err == -EADDRINUSE || err == -EINVAL ||
	    err == -EMSGSIZE) {
		/* nothing a resend would change: refuse the send now */
		free(pkt);
		return -fnv_errno_to_fi(err);
	}
	if (err)	/* otherwise as if lost on the wire: sent again */
		FI_INFO(&fnv_prov, FI_LOG_EP_DATA, "send to %u:%u: %d\n",
			p->node, p->port, err);
	p->win[p->tx_next % FNV_RDM_WIN] = pkt;
	p->tx_next++;
	return 0;
}

ssize_t fnv_rdm_send_locked(struct fnv_ep *ep, uint8_t type,
			    const struct iovec *iov, size_t count,
			    fi_addr_t dest, uint64_t tag, uint64_t data,
			    bool has_data, void *ctx, bool complete)
{
	size_t len = fnv_iov_total(iov, count);
	struct frame_head f = {
		.type = type, .flags = has_data ? FNV_RDM_HAS_DATA : 0,
		.tag = tag, .data = data, .ctx = ctx, .complete = complete,
	};
	struct fnv_addr to;
	struct fnv_peer *p;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (count > FNV_IOV_MAX)
		return -FI_EINVAL;
	if (len == SIZE_MAX)
		return -FI_EMSGSIZE;	/* the pieces' sum wraps */
	if (fnv_av_resolve(ep->av, dest, &to))
		return -FI_EINVAL;
	if (to.nic != ep->w.nic)
		return -FI_EHOSTUNREACH;	/* another NIC's fabric */
	if (len > FNV_RDM_MSG_MAX)
		return fnv_rdv_send_locked(ep, type, iov, count, len, &to, tag,
					   data, has_data, ctx, complete);
	p = fnv_rdm_peer(ep->rdm, to.node, to.port, true);
	if (!p)
		return -FI_ENOMEM;
	return send_to_peer(ep, p, &f, iov, count);
}

ssize_t fnv_rdm_send_frame_locked(struct fnv_ep *ep, uint16_t node,
				  uint16_t port, uint8_t type, uint8_t flags,
				  const struct iovec *iov, size_t count,
				  uint64_t tag, uint64_t data)
{
	struct frame_head f = {
		.type = type, .flags = flags, .tag = tag, .data = data,
		.quiet = true,
	};
	struct fnv_peer *p = fnv_rdm_peer(ep->rdm, node, port, true);

	if (!p)
		return -FI_ENOMEM;
	return send_to_peer(ep, p, &f, iov, count);
}

/* Completions of the acknowledged sends, oldest first, while there is room. */
static void complete_acked(struct fnv_ep *ep, struct fnv_peer *p, int err)
{
	while (p->tx_done != p->tx_acked) {
		struct fnv_pkt **slot = &p->win[p->tx_done % FNV_RDM_WIN];
		struct fnv_cqe e = {
			.ctx = (*slot)->ctx, .flags = (*slot)->cflags,
			.src = FI_ADDR_NOTAVAIL, .err = err,
		};

		if (!(*slot)->quiet && ((*slot)->complete || err)) {
			if (ep->tx_cq && !fnv_cq_room_locked(ep->tx_cq, 1))
				return;
			if (ep->tx_cq)
				fnv_cq_push_locked(ep->tx_cq, &e);
		}
		if (!(*slot)->quiet)	/* a rendezvous's: counted at its end */
			fnv_cntr_count_locked(ep->cntr_send, err);
		free(*slot);
		*slot = NULL;
		p->tx_done++;
	}
}

static void take_ack(struct fnv_ep *ep, struct fnv_peer *p,
		     const struct fnv_rdm_hdr *h)
{
	if (h->ack_epoch != ep->rdm->epoch)
		return;		/* for an earlier incarnation of ours */
	if (!seq_before(p->tx_acked, h->ack) || seq_before(p->tx_next, h->ack))
		return;		/* nothing new, or nonsense */
	p->tx_acked = h->ack;
	restart_clocks(p, fnv_now_ms());	/* the next oldest's */
	complete_acked(ep, p, 0);
}

/* An ack of its own; to another node's peer with where our ack table is. */
static void send_ack(struct fnv_ep *ep, struct fnv_peer *p)
{
	struct fnv_rdm *r = ep->rdm;
	struct {
		struct fnv_rdm_hdr h;
		struct fnv_rdm_table t;
	} f = { .h = { .type = FNV_RDM_ACK, .epoch = r->epoch } };
	size_t len = sizeof(f.h);

	stamp_ack(p, &f.h);
	if (remote(ep, p) && table_ready(ep)) {
		f.h.flags |= FNV_RDM_TABLE;
		f.t.key = r->acks_key;
		f.t.slot = p->slot;
		len = sizeof(f);
	}
	(void)wire_to(ep, p, &f, len);	/* lost: the next one says it */
}

/* Where p (of another node) keeps its acks for us, from its ack. */
static void learn_table(struct fnv_ep *ep, struct fnv_peer *p,
			const uint8_t *payload, size_t len)
{
	struct fnv_rdm_table t;

	if (len < sizeof(t) || !remote(ep, p))
		return;
	memcpy(&t, payload, sizeof(t));
	if (!t.key || t.slot >= FNV_RDM_PEERS || t.key == p->pull_bad_key ||
	    (t.key == p->pull_key && t.slot == p->pull_slot))
		return;
	p->pull_key = t.key;
	p->pull_slot = t.slot;
	p->pull_due_ms = fnv_now_ms() + FNV_RDM_PULL_MS;
	p->pulls = 0;
}

/* Read p's slot of its ack table: what it has of ours, without it. */
static void pull_ack(struct fnv_ep *ep, struct fnv_peer *p, int64_t now)
{
	uint32_t before = p->tx_acked;
	struct fnv_rdm_hdr h = { 0 };
	uint64_t v;
	int err;

	err = fnv_rdm_table_read_locked(ep->dom, p->node, p->pull_key,
					p->pull_slot, &v);
	if (err) {
		/* no ack, and no more pulls from that table: our frames
		 * stop saying so, and p acks with frames again */
		FI_INFO(&fnv_prov, FI_LOG_EP_DATA,
			"ack table of %u:%u: read %d\n", p->node, p->port, err);
		p->pull_bad_key = p->pull_key;
		p->pull_key = 0;
		return;
	}
	ep->rdm->pulled++;
	h.ack_epoch = (uint32_t)(v >> 32);
	h.ack = (uint32_t)v;
	take_ack(ep, p, &h);
	if (p->tx_acked == before) {	/* nothing new: ask less often */
		unsigned int k;

		p->pulls++;
		k = p->pulls < 5 ? p->pulls : 5;
		p->pull_due_ms = now + ((int64_t)FNV_RDM_PULL_MS << k);
	}
}

/* p's acks may wait for a frame going its way: it can pull them. */
static bool defers(const struct fnv_ep *ep, const struct fnv_peer *p)
{
	return p->peer_pulls && remote(ep, p) && ep->rdm->acks_key;
}

/* A frame in order: a message, or the rendezvous's own; false if it
 * found no room (not acknowledged: sent again). */
static bool take_message(struct fnv_ep *ep, const struct fnv_rdm_hdr *h,
			 uint64_t data, const uint8_t *payload, size_t len,
			 uint16_t node, uint16_t port)
{
	switch (h->type) {
	case FNV_RDM_DONE:
		return fnv_rdv_done_locked(ep, payload, len, node, port);
	case FNV_RDM_CTS:
		return fnv_rdv_cts_locked(ep, payload, len, node, port);
	case FNV_RDM_FIN:
		return fnv_rdv_fin_locked(ep, payload, len, node, port);
	default:
		return fnv_rdm_arrive_locked(ep, h, data, payload, len, node,
					     port);
	}
}

/* One frame from (node, port). */
static void take_frame(struct fnv_ep *ep, size_t n, uint16_t node,
		       uint16_t port)
{
	struct fnv_rdm *r = ep->rdm;
	struct fnv_rdm_hdr h;
	struct fnv_peer *p;
	size_t off = sizeof(h);
	uint64_t data = 0;

	if (n < sizeof(h) || n > FNV_MSG_MAX)
		return;		/* not one of ours */
	memcpy(&h, r->frame, sizeof(h));
	if (h.type < FNV_RDM_MSG || h.type > FNV_RDM_FIN)
		return;
	if (h.type != FNV_RDM_ACK && (h.flags & FNV_RDM_HAS_DATA)) {
		if (n < off + sizeof(data))
			return;	/* not one of ours */
		memcpy(&data, r->frame + off, sizeof(data));
		off += sizeof(data);
	}
	p = fnv_rdm_peer(r, node, port, true);
	if (!p)
		return;
	take_ack(ep, p, &h);
	if (h.type == FNV_RDM_ACK) {
		if (h.flags & FNV_RDM_TABLE)
			learn_table(ep, p, r->frame + off, n - off);
		return;
	}
	if (!p->rx_known || h.epoch != p->rx_epoch) {
		if (h.seq != 0)
			return;	/* the middle of a stream we never saw */
		p->rx_known = true;	/* a new peer, or it started over */
		p->rx_epoch = h.epoch;
		p->rx_next = 0;
		p->peer_pulls = false;
		publish_rx(r, p);
	}
	if (h.seq != p->rx_next) {
		/* a resend of what we had, or past a lost one: say where
		 * we are (once this pass), so the sender goes back */
		r->dropped_order++;
		p->ack_now = true;
		return;
	}
	if (!take_message(ep, &h, data, r->frame + off, n - off, node, port)) {
		r->dropped_full++;	/* not acknowledged: sent again */
		return;
	}
	p->rx_next++;
	publish_rx(r, p);
	p->peer_pulls = (h.flags & FNV_RDM_PULLS) != 0;
	if (p->rx_next - p->rx_acked >= FNV_RDM_WIN / 2)
		send_ack(ep, p);	/* keep the sender's window open */
}

static void resend(struct fnv_ep *ep, struct fnv_peer *p, int64_t now)
{
	if (++p->retries > FNV_RDM_RETRIES) {
		/* given up: every send in flight fails */
		FI_WARN(&fnv_prov, FI_LOG_EP_DATA,
			"peer %u:%u does not answer: sends fail\n", p->node,
			p->port);
		p->dead = true;
		p->tx_acked = p->tx_next;
		complete_acked(ep, p, FI_EHOSTUNREACH);
		return;
	}
	for (uint32_t s = p->tx_acked; s != p->tx_next; s++) {
		struct fnv_pkt *pkt = p->win[s % FNV_RDM_WIN];
		struct fnv_rdm_hdr h;

		memcpy(&h, pkt->frame, sizeof(h));
		stamp_ack(p, &h);
		memcpy(pkt->frame, &h, sizeof(h));
		(void)wire_to(ep, p, pkt->frame, pkt->len);
		ep->rdm->resent++;
	}
	p->tx_sent_ms = now;	/* retries go on counting */
}

static int64_t rto_ms(const struct fnv_peer *p)
{
	unsigned int k = p->retries < 5 ? p->retries : 5;

	return (int64_t)FNV_RDM_RTO_MS << k;
}

void fnv_rdm_progress_locked(struct fnv_ep *ep)
{
	struct fnv_rdm *r = ep->rdm;
	size_t keep = 1;
	int64_t now;

	if (!ep->enabled)
		return;
	r->pass++;
	/* as fnv_ep_progress_locked: a shared queue keeps room for sends */
	if (ep->rx_cq && ep->rx_cq == ep->tx_cq)
		keep += ep->rx_cq->size / 4 < 16 ? ep->rx_cq->size / 4 : 16;
	while (!ep->rx_cq || fnv_cq_room_locked(ep->rx_cq, keep)) {
		uint16_t node, port;
		ssize_t n = fnv_wire_recv(&ep->w, r->frame, sizeof(r->frame),
					  &node, &port);

		if (n < 0)
			break;
		take_frame(ep, (size_t)n, node, port);
	}
	now = fnv_now_ms();
	for (int i = 0; i < r->nlive; i++) {
		struct fnv_peer *p = r->live[i];

		if (p->ack_now || (p->rx_acked != p->rx_next &&
				   !defers(ep, p))) {
			send_ack(ep, p);	/* what this pass took */
		} else if (p->rx_acked != p->rx_next && !p->ack_owed) {
			p->ack_owed = true;	/* a frame to p may carry it */
			p->owed_pass = r->pass;
			r->acks_deferred++;
		} else if (p->rx_acked != p->rx_next &&
			   r->pass - p->owed_pass >= FNV_RDM_ACK_PASSES) {
			send_ack(ep, p);	/* none did */
		}
		if (p->tx_acked != p->tx_next && p->pull_key &&
		    now >= p->pull_due_ms)
			pull_ack(ep, p, now);
		if (p->tx_acked != p->tx_next && now - p->tx_sent_ms >= rto_ms(p))
			resend(ep, p, now);
		/* what a full queue held back; a dead peer's fail */
		complete_acked(ep, p, p->dead ? FI_EHOSTUNREACH : 0);
	}
	fnv_rdv_progress_locked(ep);
}

void fnv_rdm_flush_acks_locked(struct fnv_ep *ep)
{
	struct fnv_rdm *r = ep->rdm;

	if (!r || !ep->enabled)
		return;
	for (int i = 0; i < r->nlive; i++)
		if (r->live[i]->rx_acked != r->live[i]->rx_next)
			send_ack(ep, r->live[i]);
}

void fnv_rdm_flush_bound_locked(struct fnv_ep *const eps[FNV_CQ_EPS])
{
	for (int i = 0; i < FNV_CQ_EPS; i++)
		if (eps[i])
			fnv_rdm_flush_acks_locked(eps[i]);
}

/*
 * How long until the soonest resend or pull: 0 if one is due already,
 * -1 if none waits.  Read some time after the pass that set the timers
 * (on a loaded guest, milliseconds later), a timer may be past: that is
 * "now", not "none", or sread would sleep its whole timeout with a
 * send in flight while the receiver waits for that very resend.
 */
int fnv_rdm_timer_ms(struct fnv_ep *ep)
{
	struct fnv_rdm *r = ep->rdm;
	int64_t now = fnv_now_ms(), due = 0;
	bool any = false;

	for (int i = 0; r && i < r->nlive; i++) {
		struct fnv_peer *p = r->live[i];
		int64_t t;

		if (p->tx_acked == p->tx_next)
			continue;
		t = p->tx_sent_ms + rto_ms(p) - now;
		if (!any || t < due)
			due = t;
		any = true;
		if (p->pull_key && p->pull_due_ms - now < due)
			due = p->pull_due_ms - now;
	}
	if (!any)
		return -1;
	return due > 0 ? (int)due : 0;	/* at most 3.2 s */
}

size_t fnv_rdm_tx_left(const struct fnv_ep *ep)
{
	(void)ep;
	return FNV_RDM_WIN;	/* per peer; a full window says -FI_EAGAIN */
}
