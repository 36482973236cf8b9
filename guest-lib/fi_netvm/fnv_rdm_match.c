// SPDX-License-Identifier: MIT
/*
 * Matching on an RDM endpoint.  Messages arrive in order per sender
 * (fnv_rdm_link.c); each goes to the oldest posted receive of its kind
 * that takes it -- FI_MSG: any, FI_TAGGED: the tag equal outside the
 * ignore bits -- and that names its sender or no one (FI_DIRECTED_RECV).
 * A message no receive takes is copied aside (unexpected) and given to
 * the next receive posted that would have taken it, so two messages of a
 * sender match in the order sent (FI_ORDER_SAS).  Tagged receives also
 * probe (FI_PEEK), claim (FI_CLAIM) and discard (FI_DISCARD) unexpected
 * messages, as MPI's probes need.  A rendezvous message (fnv_rdm_rdv.c)
 * matches like any other, by its header; only its request waits as
 * unexpected, and its bytes are written by its sender or read when a
 * receive takes it.
 */
#include <stdlib.h>
#include <string.h>

#include "fnv_rdm.h"

static bool takes(const struct fnv_rdm_rx *rx, bool tagged, uint64_t tag,
		  uint16_t node, uint16_t port)
{
	if (tagged && ((rx->tag ^ tag) & ~rx->ignore))
		return false;
	return rx->any_src || (rx->node == node && rx->port == port);
}

static bool rx_complete(const struct fnv_ep *ep, uint64_t flags, int err)
{
	return ep->rx_cq && (err || !ep->rx_selective || (flags & FI_COMPLETION));
}

/* The message's bytes into rx's buffers, and its completion: m's bytes,
 * or (rendezvous) read into place, or written by the sender, the
 * completion then waiting for its "finished", or read from the sender's
 * export through the bounce area; a read's sender is then told. */
static void deliver(struct fnv_ep *ep, const struct fnv_rdm_rx *rx,
		    bool tagged, const struct fnv_unexp *m)
{
	size_t cap = fnv_iov_total(rx->iov, rx->iov_count);
	size_t got = m->len < cap ? m->len : cap;
	struct fnv_cqe e = {
		.ctx = rx->ctx, .len = got, .tag = tagged ? m->tag : 0,
		.flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG) |
			 (m->has_data ? FI_REMOTE_CQ_DATA : 0),
		.data = m->has_data ? m->data : 0,
		.buf = rx->iov_count ? rx->iov[0].iov_base : NULL,
		.src = fnv_av_reverse(ep->av, m->node, m->port),
	};

	if (m->len > cap) {
		e.err = FI_ETRUNC;
		e.olen = m->len - cap;
	}
	if (m->rdv) {
		struct fnv_rdv_req q;
		int err;

		memcpy(&q, m->buf, sizeof(q));
		if (!fnv_rdv_in_place_locked(ep, &q, rx->iov, rx->iov_count,
					     got, m->node, m->port, &err)) {
			if (fnv_rdv_offer_locked(ep, &q, rx->iov,
						 rx->iov_count, got, m->node,
						 m->port, &e,
						 rx_complete(ep, rx->flags, 0)))
				return;
			err = fnv_rdv_pull_locked(ep, &q, rx->iov,
						  rx->iov_count, got, m->node,
						  m->port);
		}
		if (err) {
			e.err = err;
			e.len = 0;
			e.olen = 0;
		}
	} else {
		fnv_iov_scatter(rx->iov, rx->iov_count, 0, m->buf, got);
	}
	if (rx_complete(ep, rx->flags, e.err))
		fnv_cq_push_locked(ep->rx_cq, &e);
	fnv_cntr_count_locked(ep->cntr_recv, e.err);
}

static void remove_rx(struct fnv_rdm_rx *list, size_t *n, size_t i)
{
	memmove(&list[i], &list[i + 1], (*n - i - 1) * sizeof(*list));
	(*n)--;
}

static void remove_unexp(struct fnv_rdm *r, size_t i)
{
	free(r->unexp[i].buf);
	memmove(&r->unexp[i], &r->unexp[i + 1],
		(r->unexp_n - i - 1) * sizeof(r->unexp[0]));
	r->unexp_n--;
}

/* An unexpected message dropped unread (FI_DISCARD): a rendezvous
 * sender is told, so that its send completes. */
static void discard_unexp(struct fnv_ep *ep, size_t i)
{
	struct fnv_unexp *u = &ep->rdm->unexp[i];

	if (u->rdv) {
		struct fnv_rdv_req q;

		memcpy(&q, u->buf, sizeof(q));
		fnv_rdv_answer_locked(ep, u->node, u->port, q.id, 0);
	}
	remove_unexp(ep->rdm, i);
}

bool fnv_rdm_arrive_locked(struct fnv_ep *ep, const struct fnv_rdm_hdr *h,
			   uint64_t data, const uint8_t *payload, size_t len,
			   uint16_t node, uint16_t port)
{
	struct fnv_rdm *r = ep->rdm;
	bool tagged = h->type == FNV_RDM_TAGGED;
	struct fnv_rdm_rx *list = tagged ? r->tag_rx : r->msg_rx;
	size_t *n = tagged ? &r->tag_n : &r->msg_n;
	struct fnv_unexp m = {
		.type = h->type, .has_data = h->flags & FNV_RDM_HAS_DATA,
		.tag = h->tag, .data = data, .node = node, .port = port,
		.len = len, .rdv = h->flags & FNV_RDM_RDV,
		.buf = (uint8_t *)payload,
	};
	struct fnv_unexp *u;

	if (m.rdv) {
		struct fnv_rdv_req q;

		if (!fnv_rdv_req_ok(payload, len))
			return true;	/* forged: taken, and ignored */
		if (!fnv_rdv_can_answer(ep))
			return false;	/* sent again once "done"s left */
		memcpy(&q, payload, sizeof(q));
		m.len = q.len;
	}
	for (size_t i = 0; i < *n; i++) {
		if (!takes(&list[i], tagged, h->tag, node, port))
			continue;
		deliver(ep, &list[i], tagged, &m);
		remove_rx(list, n, i);
		return true;
	}
	if (r->unexp_n == FNV_RDM_UNEXP)
		return false;
	u = &r->unexp[r->unexp_n];
	*u = m;
	u->buf = malloc(len ? len : 1);
	if (!u->buf)
		return false;
	memcpy(u->buf, payload, len);
	r->unexp_n++;
	return true;
}

/* The oldest unexpected message rx would take; -1 if none. */
static long find_unexp(const struct fnv_rdm *r, const struct fnv_rdm_rx *rx,
		       bool tagged)
{
	uint8_t type = tagged ? FNV_RDM_TAGGED : FNV_RDM_MSG;

	for (size_t i = 0; i < r->unexp_n; i++) {
		const struct fnv_unexp *u = &r->unexp[i];

		if (u->type == type && !u->claimed &&
		    takes(rx, tagged, u->tag, u->node, u->port))
			return (long)i;
	}
	return -1;
}

/* FI_PEEK: is there a message for rx?  FI_CLAIM keeps it for rx's
 * context, FI_DISCARD drops it. */
static ssize_t peek(struct fnv_ep *ep, const struct fnv_rdm_rx *rx)
{
	struct fnv_rdm *r = ep->rdm;
	long i = find_unexp(r, rx, true);
	struct fnv_cqe e = {
		.ctx = rx->ctx, .flags = FI_RECV | FI_TAGGED,
		.src = FI_ADDR_NOTAVAIL,
	};

	if (ep->rx_cq && !fnv_cq_room_locked(ep->rx_cq, 1))
		return -FI_EAGAIN;
	if (i >= 0 && r->unexp[i].rdv && !fnv_rdv_can_answer(ep))
		return -FI_EAGAIN;
	if (i < 0) {
		e.err = FI_ENOMSG;	/* nothing (yet) */
	} else {
		struct fnv_unexp *u = &r->unexp[i];

		e.len = u->len;
		e.tag = u->tag;
		e.data = u->has_data ? u->data : 0;
		e.flags |= u->has_data ? FI_REMOTE_CQ_DATA : 0;
		e.src = fnv_av_reverse(ep->av, u->node, u->port);
		if (rx->flags & FI_DISCARD)
			discard_unexp(ep, (size_t)i);
		else if (rx->flags & FI_CLAIM)
			u->claimed = rx->ctx;
	}
	if (rx_complete(ep, rx->flags, e.err))
		fnv_cq_push_locked(ep->rx_cq, &e);
	/* a look is no receive; a message discarded is one */
	if (i >= 0 && (rx->flags & FI_DISCARD))
		fnv_cntr_count_locked(ep->cntr_recv, 0);
	return 0;
}

/* FI_CLAIM without FI_PEEK: the message a peek claimed for this context. */
static ssize_t claimed(struct fnv_ep *ep, const struct fnv_rdm_rx *rx)
{
	struct fnv_rdm *r = ep->rdm;

	for (size_t i = 0; i < r->unexp_n; i++) {
		struct fnv_unexp *u = &r->unexp[i];

		if (u->claimed != rx->ctx || u->type != FNV_RDM_TAGGED)
			continue;
		if (ep->rx_cq && !fnv_cq_room_locked(ep->rx_cq, 1))
			return -FI_EAGAIN;
		if (u->rdv && !fnv_rdv_can_answer(ep))
			return -FI_EAGAIN;
		if (rx->flags & FI_DISCARD) {
			struct fnv_cqe e = {
				.ctx = rx->ctx, .flags = FI_RECV | FI_TAGGED,
				.tag = u->tag,
				.src = fnv_av_reverse(ep->av, u->node, u->port),
			};

			if (rx_complete(ep, rx->flags, 0))
				fnv_cq_push_locked(ep->rx_cq, &e);
			fnv_cntr_count_locked(ep->cntr_recv, 0);
			discard_unexp(ep, i);
		} else {
			deliver(ep, rx, true, u);
			remove_unexp(r, i);
		}
		return 0;
	}
	return -FI_EINVAL;	/* nothing was claimed with this context */
}

ssize_t fnv_rdm_post_locked(struct fnv_ep *ep, bool tagged,
			    const struct iovec *iov, size_t count,
			    fi_addr_t src, uint64_t tag, uint64_t ignore,
			    void *ctx, uint64_t flags)
{
	struct fnv_rdm *r = ep->rdm;
	/* FI_CLAIM without FI_PEEK takes the message its peek claimed: the
	 * context names it, the source is not looked at (Open MPI's mtl ofi
	 * passes 0, no address of its map) */
	bool by_ctx = (flags & FI_CLAIM) && !(flags & FI_PEEK);
	struct fnv_rdm_rx rx = {
		.ctx = ctx, .iov_count = count, .flags = flags, .tag = tag,
		.ignore = ignore,
		.any_src = src == FI_ADDR_UNSPEC || !ep->directed || by_ctx,
	};
	struct fnv_rdm_rx *list = tagged ? r->tag_rx : r->msg_rx;
	size_t *n = tagged ? &r->tag_n : &r->msg_n;
	long i;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (count > FNV_IOV_MAX)
		return -FI_EINVAL;
	if (!tagged && (flags & (FI_PEEK | FI_CLAIM | FI_DISCARD)))
		return -FI_EBADFLAGS;
	if (!rx.any_src) {
		struct fnv_addr a;

		if (fnv_av_resolve(ep->av, src, &a))
			return -FI_EINVAL;
		rx.node = a.node;
		rx.port = a.port;
	}
	memcpy(rx.iov, iov, count * sizeof(*iov));
	fnv_rdm_progress_locked(ep);	/* what has come, first */
	if (flags & FI_PEEK)
		return peek(ep, &rx);
	if (flags & FI_CLAIM)
		return claimed(ep, &rx);
	i = find_unexp(r, &rx, tagged);
	if (i >= 0) {
		struct fnv_unexp *u = &r->unexp[i];

		if (ep->rx_cq && !fnv_cq_room_locked(ep->rx_cq, 1))
			return -FI_EAGAIN;
		if (u->rdv && !fnv_rdv_can_answer(ep))
			return -FI_EAGAIN;
		deliver(ep, &rx, tagged, u);
		remove_unexp(r, (size_t)i);
		return 0;
	}
	if (*n == FNV_RDM_POSTED)
		return -FI_EAGAIN;
	list[(*n)++] = rx;
	return 0;
}

ssize_t fnv_rdm_cancel_locked(struct fnv_ep *ep, void *ctx)
{
	struct fnv_rdm *r = ep->rdm;

	for (int tagged = 0; tagged < 2; tagged++) {
		struct fnv_rdm_rx *list = tagged ? r->tag_rx : r->msg_rx;
		size_t *n = tagged ? &r->tag_n : &r->msg_n;

		for (size_t i = 0; i < *n; i++) {
			struct fnv_cqe e = {
				.ctx = ctx, .src = FI_ADDR_NOTAVAIL,
				.flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG),
				.err = FI_ECANCELED,
			};

			if (list[i].ctx != ctx)
				continue;
			if (ep->rx_cq && !fnv_cq_room_locked(ep->rx_cq, 1))
				return -FI_EAGAIN;
			remove_rx(list, n, i);
			if (ep->rx_cq)
				fnv_cq_push_locked(ep->rx_cq, &e);
			fnv_cntr_count_locked(ep->cntr_recv, e.err);
			return 0;
		}
	}
	return -FI_ENOENT;
}

void fnv_rdm_match_fini(struct fnv_ep *ep)
{
	struct fnv_rdm *r = ep->rdm;

	for (size_t i = 0; i < r->unexp_n; i++)
		free(r->unexp[i].buf);
	r->unexp_n = 0;
}
