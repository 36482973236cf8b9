// SPDX-License-Identifier: MIT
/*
 * Rendezvous on an RDM endpoint: messages larger than one U-Net message.
 * The sender exports its buffers as NetVM memory (read-only, nothing
 * pinned: NetVM faults pages in) under fresh keys and sends a small
 * request instead of the bytes (struct fnv_rdv_req: length, pieces,
 * keys; kind, tag and CQ data in the header as always), reliably and in
 * order like any message.  The receiver matches the request like an
 * eager message (unexpected ones wait in the same queue, FI_PEEK and
 * FI_CLAIM see their true length); once a receive took it, at most what
 * fits (FI_ETRUNC as for eager messages):
 *
 * - read into place (up to rdv_read_max bytes, FI_NETVM_RDV_READ_MAX,
 *   256 KiB by default, from another node into one piece): the receiver
 *   exports its receive buffer (writable, under a key nobody is told;
 *   kept for the next message), reads the bytes straight into it and
 *   answers "done" (FNV_RDM_DONE).  No "clear to send" comes between
 *   the request and the bytes, and nothing is copied: fi_pingpong's
 *   4 KiB round trip took 0.9-1.2 ms so against 2.0-3.1 ms written,
 *   16 KiB 0.63-0.79 against 1.21-1.29 ms; from 512 KiB on writing was
 *   faster (1 MiB 7.3-9.2 against 10.0 ms one way), 256 KiB either.
 * - written (larger ones): the receiver exports the whole pages of its
 *   receive buffer (writable, a fresh key) and answers "clear to send" (struct
 *   fnv_rdv_cts); the sender streams NetVM writes there from its own
 *   exports, then completes the send and answers "finished"
 *   (FNV_RDM_FIN), and the receive completes.  A NetVM read puts both
 *   the requests and every page's data on the reader's CPU; a write
 *   splits the work between the two CPUs, so it streams faster (NetVM's
 *   read_bw was 75-100 % of its write_bw).  The bytes before the first
 *   whole page and after the last one are read by the receiver before
 *   it answers: NetVM checks keys page by page, so exporting those
 *   pages would let the peer write the receiver's other bytes on them.
 * - read through the bounce area: the receiver reads the bytes with
 *   NetVM reads and answers "done"; then the sender removes its exports
 *   and completes the send (so does it after a read into place).  For
 *   the loop-back (the NIC does not send to its own node: the sender's
 *   process is read directly), a receive of several pieces (or, larger,
 *   of no whole page), and whenever the receive buffer cannot be
 *   exported (its pages overlap another export, NetVM's 64 exports
 *   taken) or no slot waits.
 *
 * A buffer NetVM cannot export as it is (its pages overlap another
 * export: a region, another send) is copied into pages of its own first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fnv_rdm.h"

bool fnv_rdv_req_ok(const uint8_t *payload, size_t len)
{
	struct fnv_rdv_req q;
	uint64_t sum = 0;

	if (len != sizeof(q))
		return false;
	memcpy(&q, payload, sizeof(q));
	if (q.count < 1 || q.count > FNV_IOV_MAX)
		return false;
	for (uint32_t i = 0; i < q.count; i++) {
		if (!q.piece[i].len || q.piece[i].len > FNV_RDV_MAX)
			return false;
		sum += q.piece[i].len;	/* <= 4 GiB: no wrap */
	}
	return sum == q.len;
}

bool fnv_rdv_can_answer(const struct fnv_ep *ep)
{
	return ep->rdm->done_n < FNV_RDV_DONE_Q;
}

/* A "done" (FNV_RDM_DONE) or a "finished" (FNV_RDM_FIN). */
static ssize_t send_done(struct fnv_ep *ep, uint16_t node, uint16_t port,
			 uint8_t type, const struct fnv_rdv_done *d)
{
	struct iovec iov = { .iov_base = (void *)d, .iov_len = sizeof(*d) };

	return fnv_rdm_send_frame_locked(ep, node, port, type, 0, &iov, 1, 0,
					 0);
}

static void answer(struct fnv_ep *ep, uint16_t node, uint16_t port,
		   uint8_t type, uint64_t id, uint32_t status)
{
	struct fnv_rdm *r = ep->rdm;
	struct fnv_rdv_done d = { .id = id, .status = status };

	/* behind others queued for the same peer: they go first */
	for (size_t i = 0; i < r->done_n; i++)
		if (r->done_q[i].node == node && r->done_q[i].port == port)
			goto queue;
	if (send_done(ep, node, port, type, &d) != -FI_EAGAIN)
		return;		/* sent, or the peer is gone */
queue:
	if (r->done_n == FNV_RDV_DONE_Q)
		return;		/* callers asked fnv_rdv_can_answer first */
	r->done_q[r->done_n].node = node;
	r->done_q[r->done_n].port = port;
	r->done_q[r->done_n].type = type;
	r->done_q[r->done_n].d = d;
	r->done_n++;
}

void fnv_rdv_answer_locked(struct fnv_ep *ep, uint16_t node, uint16_t port,
			   uint64_t id, uint32_t status)
{
	answer(ep, node, port, FNV_RDM_DONE, id, status);
}

/* A read is over (fi_err: 0 or FI_E*): counted, an error logged, and
 * the sender told with a "done". */
static void read_over(struct fnv_ep *ep, const struct fnv_rdv_req *q,
		      uint16_t node, uint16_t port, const char *how,
		      int fi_err)
{
	ep->rdm->rdv_read++;
	if (fi_err)
		FI_WARN(&fnv_prov, FI_LOG_EP_DATA,
			"rendezvous read of %llu B from %u:%u%s: error %d\n",
			(unsigned long long)q->len, node, port, how, fi_err);
	fnv_rdv_answer_locked(ep, node, port, q->id, (uint32_t)fi_err);
}

/* The NIC can move the message into iov itself: from another node, into
 * one piece that takes all of it that fits. */
static bool one_piece_remote(const struct fnv_ep *ep, const struct iovec *iov,
			     size_t count, size_t cap, uint16_t node)
{
	return node != ep->dom->node && cap && count && iov[0].iov_len >= cap;
}

/*
 * Whether this process can write [buf, +len) now: its pages are faulted
 * in for writing (they are about to be written anyway).  A NetVM read
 * into a page netvm.ko cannot map for writing fails (FI_EFAULT), so a
 * receive into pages mapped read-only is not read into place but
 * offered for writing, where the writer's NIC is refused them
 * (FI_EKEYREJECTED on both sides, as any written receive's refusal).
 */
static bool writable_now(const void *buf, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)buf / page * page;

	return !madvise((void *)start, (uintptr_t)buf + len - start,
			MADV_POPULATE_WRITE);
}

bool fnv_rdv_in_place_locked(struct fnv_ep *ep, const struct fnv_rdv_req *q,
			     const struct iovec *iov, size_t count, size_t cap,
			     uint16_t node, uint16_t port, int *fi_err)
{
	struct fnv_rdv_piece p;
	int h;

	if (!one_piece_remote(ep, iov, count, cap, node) ||
	    cap > ep->rdm->rdv_read_max || !writable_now(iov[0].iov_base, cap))
		return false;
	h = fnv_rdv_export_locked(ep->dom, iov[0].iov_base, cap, true, &p);
	if (h < 0)
		return false;	/* its pages overlap another export */
	*fi_err = fnv_rdv_read_into_locked(ep->dom, node, q, iov[0].iov_base,
					   cap);
	fnv_rdv_unexport_locked(ep->dom, h);
	ep->rdm->rdv_in_place++;
	read_over(ep, q, node, port, " into place", *fi_err);
	return true;
}

int fnv_rdv_pull_locked(struct fnv_ep *ep, const struct fnv_rdv_req *q,
			const struct iovec *iov, size_t count, size_t cap,
			uint16_t node, uint16_t port)
{
	int fi_err = 0;

	if (cap)
		fi_err = fnv_rdv_read_locked(ep->dom, node, q, iov, count, 0,
					     cap);
	read_over(ep, q, node, port, "", fi_err);
	return fi_err;
}

/* Take back what a send exported or copied. */
static void release(struct fnv_ep *ep, struct fnv_rdv_tx *t)
{
	for (size_t i = 0; i < t->nexports; i++)
		fnv_rdv_unexport_locked(ep->dom, t->exports[i]);
	free(t->copy);
	memset(t, 0, sizeof(*t));
}

/* Export the message's pieces as they are, or (overlapping another
 * export) a copy of the whole: 0 or a negative errno. */
static int export_pieces(struct fnv_ep *ep, struct fnv_rdv_tx *t,
			 struct fnv_rdv_req *q, const struct iovec *iov,
			 size_t count, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t off = 0;
	int h = 0;

	for (size_t i = 0; i < count; i++) {
		if (!iov[i].iov_len)
			continue;
		h = fnv_rdv_export_locked(ep->dom, iov[i].iov_base,
					  iov[i].iov_len, false,
					  &q->piece[q->count]);
		if (h < 0)
			break;
		t->exports[t->nexports++] = h;
		q->count++;
	}
	if (h >= 0)
		return 0;
	if (h != -EEXIST)
		return h;
	/* pages shared with another export: a copy on pages of its own */
	for (size_t i = 0; i < t->nexports; i++)
		fnv_rdv_unexport_locked(ep->dom, t->exports[i]);
	t->nexports = 0;
	q->count = 0;
	t->copy = aligned_alloc((size_t)page,
				(len + (size_t)page - 1) / (size_t)page *
				(size_t)page);
	if (!t->copy)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		memcpy((uint8_t *)t->copy + off, iov[i].iov_base,
		       iov[i].iov_len);
		off += iov[i].iov_len;
	}
	h = fnv_rdv_export_locked(ep->dom, t->copy, len, false, &q->piece[0]);
	if (h < 0)
		return h;
	t->exports[t->nexports++] = h;
	q->count = 1;
	return 0;
}

ssize_t fnv_rdv_send_locked(struct fnv_ep *ep, uint8_t type,
			    const struct iovec *iov, size_t count, size_t len,
			    const struct fnv_addr *to, uint64_t tag,
			    uint64_t data, bool has_data, void *ctx,
			    bool complete)
{
	struct fnv_rdm *r = ep->rdm;
	struct fnv_rdv_req q = { .len = len, .pid = (uint32_t)getpid() };
	struct iovec qv = { .iov_base = &q, .iov_len = sizeof(q) };
	struct fnv_rdv_tx *t = NULL;
	struct fnv_peer *p;
	ssize_t err;

	for (size_t i = 0; i < count; i++)
		if (iov[i].iov_len > FNV_RDV_MAX)
			return -FI_EMSGSIZE;
	if (len > FNV_RDV_MAX)
		return -FI_EMSGSIZE;
	p = fnv_rdm_peer(r, to->node, to->port, true);
	if (!p)
		return -FI_ENOMEM;
	if (p->dead)
		return -FI_EHOSTUNREACH;
	if (p->tx_next - p->tx_done >= FNV_RDM_WIN)
		return -FI_EAGAIN;	/* the request would not go now */
	for (int i = 0; i < FNV_RDV_TX && !t; i++)
		if (!r->rdv_tx[i].used)
			t = &r->rdv_tx[i];
	if (!t)
		return -FI_EAGAIN;	/* "done"s free them */
	t->used = true;
	err = export_pieces(ep, t, &q, iov, count, len);
	if (err) {
		release(ep, t);
		FI_INFO(&fnv_prov, FI_LOG_EP_DATA,
			"rendezvous export of %zu B: %zd\n", len, err);
		/* NetVM's 64 exports taken: sends waiting free theirs */
		return err == -ENOSPC ? -FI_EAGAIN : -fnv_errno_to_fi((int)err);
	}
	q.id = r->rdv_next_id++;
	err = fnv_rdm_send_frame_locked(ep, to->node, to->port, type,
					FNV_RDM_RDV |
					(has_data ? FNV_RDM_HAS_DATA : 0),
					&qv, 1, tag, data);
	if (err) {
		release(ep, t);
		return err;
	}
	t->id = q.id;
	t->q = q;		/* the writes' source, if the receiver asks */
	t->ctx = ctx;
	t->cflags = FI_SEND | (type == FNV_RDM_TAGGED ? FI_TAGGED : FI_MSG);
	t->complete = complete && ep->tx_cq;
	t->node = to->node;
	t->port = to->port;
	return 0;
}

/* Complete t (with err, 0 or FI_E*) if the queue has room: true if done. */
static bool finish(struct fnv_ep *ep, struct fnv_rdv_tx *t, int err)
{
	struct fnv_cqe e = {
		.ctx = t->ctx, .flags = t->cflags, .src = FI_ADDR_NOTAVAIL,
		.err = err,
	};

	if ((t->complete || err) && ep->tx_cq) {
		if (!fnv_cq_room_locked(ep->tx_cq, 1))
			return false;
		fnv_cq_push_locked(ep->tx_cq, &e);
	}
	fnv_cntr_count_locked(ep->cntr_send, err);
	release(ep, t);
	return true;
}

bool fnv_rdv_done_locked(struct fnv_ep *ep, const uint8_t *payload,
			 size_t len, uint16_t node, uint16_t port)
{
	struct fnv_rdm *r = ep->rdm;
	struct fnv_rdv_done d;

	if (len != sizeof(d))
		return true;	/* forged: taken, and ignored */
	memcpy(&d, payload, sizeof(d));
	for (int i = 0; i < FNV_RDV_TX; i++) {
		struct fnv_rdv_tx *t = &r->rdv_tx[i];

		/* only the peer the request went to ends it */
		if (!t->used || t->id != d.id || t->node != node ||
		    t->port != port)
			continue;
		return finish(ep, t, (int)d.status);
	}
	return true;	/* nothing waits for it (a duplicate): ignored */
}

/* ---- written: the receiver's offer, the sender's writes, the end ---- */

bool fnv_rdv_offer_locked(struct fnv_ep *ep, const struct fnv_rdv_req *q,
			  const struct iovec *iov, size_t count, size_t cap,
			  uint16_t node, uint16_t port,
			  const struct fnv_cqe *e, bool selected)
{
	struct fnv_rdm *r = ep->rdm;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), buf, head, tail;
	struct fnv_rdv_cts c = { .id = q->id };
	struct iovec cv = { .iov_base = &c, .iov_len = sizeof(c) };
	struct fnv_rdv_rx *w = NULL;
	int h, err = 0;

	/* the loop-back, nothing to take, several pieces: read */
	if (!one_piece_remote(ep, iov, count, cap, node))
		return false;
	buf = (uintptr_t)iov[0].iov_base;
	head = (buf + page - 1) / page * page - buf;
	tail = (buf + cap) / page * page - buf;
	if (head >= cap || tail <= head)
		return false;	/* no whole page */
	for (int i = 0; i < FNV_RDV_RX && !w; i++)
		if (!r->rdv_rx[i].used)
			w = &r->rdv_rx[i];
	if (!w)
		return false;
	/* overlapping another export, NetVM's 64 taken: read instead */
	h = fnv_rdv_export_locked(ep->dom, (void *)(buf + head), tail - head,
				  true, &c.piece);
	if (h < 0)
		return false;
	/* the partial pages first: the sender takes its exports back once
	 * it wrote (reads of an export gone waited 30 s for the NIC) */
	if (head)
		err = fnv_rdv_read_locked(ep->dom, node, q, iov, count, 0, head);
	if (!err && cap > tail)
		err = fnv_rdv_read_locked(ep->dom, node, q, iov, count, tail,
					  cap - tail);
	c.off = head;
	/* a read that failed: the whole read fails the same way, with its
	 * "done"; a full window or a peer gone: read */
	if (err || fnv_rdm_send_frame_locked(ep, node, port, FNV_RDM_CTS, 0,
					     &cv, 1, 0, 0)) {
		fnv_rdv_unexport_locked(ep->dom, h);
		return false;
	}
	*w = (struct fnv_rdv_rx){
		.used = true, .id = q->id, .node = node, .port = port,
		.e = *e, .selected = selected, .export = h,
	};
	r->rdv_written++;
	return true;
}

/* The receive w is over (status: the writer's, 0 or FI_E*): its
 * completion, if the queue has room (true). */
static bool complete_rx(struct fnv_ep *ep, struct fnv_rdv_rx *w, int status)
{
	struct fnv_cqe e = w->e;

	if (status) {
		e.err = status;
		e.len = 0;
		e.olen = 0;
	}
	if (ep->rx_cq && (e.err || w->selected)) {
		if (!fnv_cq_room_locked(ep->rx_cq, 1))
			return false;
		fnv_cq_push_locked(ep->rx_cq, &e);
	}
	fnv_cntr_count_locked(ep->cntr_recv, e.err);
	fnv_rdv_unexport_locked(ep->dom, w->export);
	memset(w, 0, sizeof(*w));
	return true;
}

bool fnv_rdv_cts_locked(struct fnv_ep *ep, const uint8_t *payload,
			size_t len, uint16_t node, uint16_t port)
{
	struct fnv_rdm *r = ep->rdm;
	struct fnv_rdv_tx *t = NULL;
	struct fnv_rdv_cts c;
	int err;

	if (len != sizeof(c))
		return true;	/* forged: taken, and ignored */
	memcpy(&c, payload, sizeof(c));
	/* only the peer the request went to asks */
	for (int i = 0; i < FNV_RDV_TX && !t; i++)
		if (r->rdv_tx[i].used && r->rdv_tx[i].id == c.id &&
		    r->rdv_tx[i].node == node && r->rdv_tx[i].port == port)
			t = &r->rdv_tx[i];
	if (!t)
		return true;	/* nothing waits for it: ignored */
	/* the completion and the "finished" must find room once written */
	if ((ep->tx_cq && !fnv_cq_room_locked(ep->tx_cq, 1)) ||
	    !fnv_rdv_can_answer(ep))
		return false;
	if (!c.piece.len || c.off > t->q.len || c.piece.len > t->q.len - c.off)
		err = FI_EINVAL;	/* not in the message: written nowhere */
	else
		err = fnv_rdv_write_locked(ep->dom, node, &t->q, &c);
	if (err)
		FI_WARN(&fnv_prov, FI_LOG_EP_DATA,
			"rendezvous write of %llu B to %u:%u: error %d\n",
			(unsigned long long)c.piece.len, node, port, err);
	/* the bytes are there (flushed): the send is over, the receiver
	 * is told in order behind them */
	answer(ep, node, port, FNV_RDM_FIN, c.id, (uint32_t)err);
	return finish(ep, t, err);
}

bool fnv_rdv_fin_locked(struct fnv_ep *ep, const uint8_t *payload,
			size_t len, uint16_t node, uint16_t port)
{
	struct fnv_rdm *r = ep->rdm;
	struct fnv_rdv_done d;

	if (len != sizeof(d))
		return true;	/* forged: taken, and ignored */
	memcpy(&d, payload, sizeof(d));
	for (int i = 0; i < FNV_RDV_RX; i++) {
		struct fnv_rdv_rx *w = &r->rdv_rx[i];

		/* only the peer the offer went to ends it */
		if (w->used && w->id == d.id && w->node == node &&
		    w->port == port)
			return complete_rx(ep, w, (int)d.status);
	}
	return true;	/* nothing waits for it (a duplicate): ignored */
}

void fnv_rdv_progress_locked(struct fnv_ep *ep)
{
	struct fnv_rdm *r = ep->rdm;
	size_t kept = 0;

	for (size_t i = 0; i < r->done_n; i++) {
		struct fnv_rdv_todo *o = &r->done_q[i];
		bool held = false;

		/* in order per peer: not past one still held back */
		for (size_t k = 0; k < kept && !held; k++)
			held = r->done_q[k].node == o->node &&
			       r->done_q[k].port == o->port;
		if (!held &&
		    send_done(ep, o->node, o->port, o->type, &o->d) != -FI_EAGAIN)
			continue;	/* sent, or the peer is gone */
		r->done_q[kept++] = *o;
	}
	r->done_n = kept;
	/* a peer given up answers no more: its sends fail */
	for (int i = 0; i < FNV_RDV_TX; i++) {
		struct fnv_rdv_tx *t = &r->rdv_tx[i];
		struct fnv_peer *p;

		if (!t->used)
			continue;
		p = fnv_rdm_peer(r, t->node, t->port, false);
		if (p && p->dead)
			(void)finish(ep, t, FI_EHOSTUNREACH);
	}
	/* nor writes: its receives fail */
	for (int i = 0; i < FNV_RDV_RX; i++) {
		struct fnv_rdv_rx *w = &r->rdv_rx[i];
		struct fnv_peer *p;

		if (!w->used)
			continue;
		p = fnv_rdm_peer(r, w->node, w->port, false);
		if (p && p->dead)
			(void)complete_rx(ep, w, FI_EHOSTUNREACH);
	}
}

void fnv_rdv_fini(struct fnv_ep *ep)
{
	for (int i = 0; i < FNV_RDV_TX; i++)
		if (ep->rdm->rdv_tx[i].used)
			release(ep, &ep->rdm->rdv_tx[i]);
	for (int i = 0; i < FNV_RDV_RX; i++)
		if (ep->rdm->rdv_rx[i].used)
			fnv_rdv_unexport_locked(ep->dom,
						ep->rdm->rdv_rx[i].export);
}
