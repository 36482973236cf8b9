// SPDX-License-Identifier: MIT
/*
 * What makes U-Net reliable below an RDM endpoint.  U-Net keeps a
 * channel's messages in order and FUGU loses none at a slow or full
 * receiver, but the fabric drops a frame whose output queue is full and
 * U-Net does not resend it (docs/unet.md, docs/fabric.md).  So each
 * message carries a per-peer sequence number; the receiver takes only
 * the next one in order and acknowledges cumulatively, in the header of
 * whatever it sends back and in one ack of its own per progress pass that
 * took messages (so a sender waiting for its completion never waits for
 * the receiver's next call); the sender keeps a copy of each message
 * until it is acknowledged and sends again everything not acknowledged
 * after a timeout that doubles (go-back-N).  A send completes when the
 * receiver has the message (FI_TRANSMIT_COMPLETE).  Progress is manual:
 * the completion queue's reads drive it, and sread wakes for the timers.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "fnv_rdm.h"

/* a before b in sequence space (wrapping) */
static bool seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

int fnv_rdm_init(struct fnv_ep *ep)
{
	struct fnv_rdm *r = calloc(1, sizeof(*r));

	if (!r)
		return -FI_ENOMEM;
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
	fnv_rdv_fini(ep);
	for (int i = 0; i < FNV_RDM_PEERS; i++) {
		if (!r->peers[i])
			continue;
		for (int k = 0; k < FNV_RDM_WIN; k++)
			free(r->peers[i]->win[k]);
		free(r->peers[i]);
	}
	fnv_rdm_match_fini(ep);
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

/* The acknowledgement fields of a frame to p: everything of p's so far. */
static void stamp_ack(struct fnv_peer *p, struct fnv_rdm_hdr *h)
{
	h->ack = p->rx_next;
	h->ack_epoch = p->rx_known ? p->rx_epoch : 0;
	p->rx_acked = p->rx_next;
	p->ack_now = false;
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
		.tag = f->tag, .data = f->data,
	};
	struct fnv_pkt *pkt;
	int err;

	if (len > FNV_RDM_MSG_MAX)
		return -FI_EMSGSIZE;
	if (p->dead)
		return -FI_EHOSTUNREACH;
	if (p->tx_next - p->tx_done >= FNV_RDM_WIN)
		return -FI_EAGAIN;	/* progress frees the window */
	pkt = malloc(sizeof(*pkt) + sizeof(h) + len);
	if (!pkt)
		return -FI_ENOMEM;
	pkt->ctx = f->ctx;
	pkt->cflags = FI_SEND |
		      (f->type == FNV_RDM_TAGGED ? FI_TAGGED : FI_MSG);
	pkt->complete = f->complete && ep->tx_cq;
	pkt->quiet = f->quiet;
	pkt->len = sizeof(h) + len;
	h.seq = p->tx_next;
	stamp_ack(p, &h);
	memcpy(pkt->frame, &h, sizeof(h));
	off = sizeof(h);
	for (size_t i = 0; i < count; i++) {
		memcpy(pkt->frame + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	if (p->tx_acked == p->tx_next) {
		p->tx_sent_ms = fnv_now_ms();	/* the oldest in flight */
		p->retries = 0;
	}
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
	p->tx_sent_ms = fnv_now_ms();	/* the next oldest's clock restarts */
	p->retries = 0;
	complete_acked(ep, p, 0);
}

static void send_ack(struct fnv_ep *ep, struct fnv_peer *p)
{
	struct fnv_rdm_hdr h = { .type = FNV_RDM_ACK, .epoch = ep->rdm->epoch };

	stamp_ack(p, &h);
	(void)wire_to(ep, p, &h, sizeof(h));	/* lost: the next one says it */
}

/* One frame from (node, port). */
static void take_frame(struct fnv_ep *ep, size_t n, uint16_t node,
		       uint16_t port)
{
	struct fnv_rdm *r = ep->rdm;
	struct fnv_rdm_hdr h;
	struct fnv_peer *p;

	if (n < sizeof(h) || n > FNV_MSG_MAX)
		return;		/* not one of ours */
	memcpy(&h, r->frame, sizeof(h));
	if (h.type < FNV_RDM_MSG || h.type > FNV_RDM_DONE)
		return;
	p = fnv_rdm_peer(r, node, port, true);
	if (!p)
		return;
	take_ack(ep, p, &h);
	if (h.type == FNV_RDM_ACK)
		return;
	if (!p->rx_known || h.epoch != p->rx_epoch) {
		if (h.seq != 0)
			return;	/* the middle of a stream we never saw */
		p->rx_known = true;	/* a new peer, or it started over */
		p->rx_epoch = h.epoch;
		p->rx_next = 0;
	}
	if (h.seq != p->rx_next) {
		/* a resend of what we had, or past a lost one: say where
		 * we are (once this pass), so the sender goes back */
		r->dropped_order++;
		p->ack_now = true;
		return;
	}
	if (h.type == FNV_RDM_DONE ?
	    !fnv_rdv_done_locked(ep, r->frame + sizeof(h), n - sizeof(h), node,
				 port) :
	    !fnv_rdm_arrive_locked(ep, &h, r->frame + sizeof(h),
				   n - sizeof(h), node, port)) {
		r->dropped_full++;	/* not acknowledged: sent again */
		return;
	}
	p->rx_next++;
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
	p->tx_sent_ms = now;
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
	for (int i = 0; i < FNV_RDM_PEERS; i++) {
		struct fnv_peer *p = r->peers[i];

		if (!p)
			continue;
		if (p->rx_acked != p->rx_next || p->ack_now)
			send_ack(ep, p);	/* what this pass took */
		if (p->tx_acked != p->tx_next && now - p->tx_sent_ms >= rto_ms(p))
			resend(ep, p, now);
		/* what a full queue held back; a dead peer's fail */
		complete_acked(ep, p, p->dead ? FI_EHOSTUNREACH : 0);
	}
	fnv_rdv_progress_locked(ep);
}

int fnv_rdm_timer_ms(struct fnv_ep *ep)
{
	struct fnv_rdm *r = ep->rdm;
	int64_t now = fnv_now_ms(), due = -1;

	for (int i = 0; r && i < FNV_RDM_PEERS; i++) {
		struct fnv_peer *p = r->peers[i];
		int64_t t;

		if (!p)
			continue;
		if (p->tx_acked != p->tx_next) {
			t = p->tx_sent_ms + rto_ms(p) - now;
			due = due < 0 || t < due ? t : due;
		}
	}
	if (due < 0)
		return -1;
	return due > 0 ? (int)due : 0;
}

size_t fnv_rdm_tx_left(const struct fnv_ep *ep)
{
	(void)ep;
	return FNV_RDM_WIN;	/* per peer; a full window says -FI_EAGAIN */
}
