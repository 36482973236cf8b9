// SPDX-License-Identifier: MIT
/*
 * Unit tests of the libfabric provider's RDM logic (fi_netvm/fnv_rdm_link.c
 * and fnv_rdm_match.c) on a simulated wire that loses, duplicates and
 * reorders frames, with a clock the test advances: every message arrives
 * once, in order, byte for byte, and every send completes; a peer that
 * never answers is given up (FI_EHOSTUNREACH); a restarted peer (a new
 * incarnation on the same port) starts a new stream; 300 unexpected
 * messages (256 kept, the rest resent) all arrive; rendezvous messages
 * (fnv_rdm_rdv.c: larger than one U-Net message) on the same wire, their
 * bytes read from a stand-in for NetVM's exports: byte for byte, cut to
 * the receive (FI_ETRUNC), unexpected, peeked, claimed and discarded,
 * from several pieces, copied when the pages cannot be exported, and
 * every export taken back; to another node, written by the sender into
 * the whole pages of the receive buffer (the rest read first, while the
 * sender's progress runs: it must have nothing to write yet), the
 * "clear to send" and "finished" checked field by field, the receive
 * completing only at the "finished", cut (FI_ETRUNC), a failed write an
 * error on both sides, read instead when the buffer cannot be exported
 * or is in pieces, forged "clear to send"s ignored or (past the message)
 * failing the send with FI_EINVAL, and a receive whose writer is given
 * up failing with FI_EHOSTUNREACH.  Counters (fnv_cntr.c) bound to the test's
 * endpoints count every operation once, when it completes: each round
 * they equal the completions taken, rendezvous and failures included;
 * peeks do not count, discards and cancels do; fi_cntr_wait wakes on
 * the count, on an error, or times out.  Peers on another node (the
 * one-sided ack, fnv_rdm_link.c): a ping-pong sends no ack frame of its
 * own (the answers carry the acks) and its 64-byte messages are 96-byte
 * frames; a receiver that takes a message and calls nothing more still
 * lets its sender complete (the sender reads the receiver's ack table);
 * a table that cannot be read falls back to resends and acks as frames;
 * a lossy stream arrives whole with deferred acks and pulls; a resend or
 * pull whose time passed before its timer is read is due now, not never.  The wire,
 * the AV, the completion queues and NetVM are stand-ins defined here.
 */
#include "check_run.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fnv_rdm.h"

struct fi_provider fnv_prov = { .name = "netvm" };

/* ---- stand-ins for what the RDM files call ---- */

static int64_t fake_now;

int64_t fnv_now_ms(void)
{
	return fake_now;
}

#define QCAP	8192
struct frame {
	uint16_t src_port;
	size_t len;
	uint8_t b[FNV_MSG_MAX];
};
static struct frame *queue[4][QCAP];	/* by destination port */
static size_t qhead[4], qn[4];
static double p_drop, p_dup, p_swap;
static bool deaf[4];			/* a port whose frames all vanish */
static uint16_t peer_node;		/* 0: the peers are on our node */
static unsigned long frames_of[8];	/* frames sent, by type */
static size_t last_len[8];		/* the last frame's length, by type */

static double rnd(void)
{
	return (double)random() / RAND_MAX;
}

static void enqueue(uint16_t port, const struct frame *f)
{
	struct frame *c;

	if (qn[port] == QCAP)
		return;		/* a full output drops, as the fabric's */
	c = malloc(sizeof(*c));
	*c = *f;
	queue[port][(qhead[port] + qn[port]++) % QCAP] = c;
	if (qn[port] > 1 && rnd() < p_swap) {
		struct frame **a = &queue[port][(qhead[port] + qn[port] - 1) % QCAP];
		struct frame **b = &queue[port][(qhead[port] + qn[port] - 2) % QCAP];
		struct frame *t = *a;

		*a = *b;
		*b = t;
	}
}

int fnv_wire_send(struct fnv_wire *w, const struct fnv_addr *to,
		  const void *buf, size_t len)
{
	struct frame f = { .src_port = w->port, .len = len };

	ck_assert_uint_le(len, FNV_MSG_MAX);
	ck_assert_uint_ge(len, 1);
	frames_of[((const uint8_t *)buf)[0] & 7]++;
	last_len[((const uint8_t *)buf)[0] & 7] = len;
	ck_assert_uint_lt(to->port, 4);
	if (deaf[to->port] || rnd() < p_drop)
		return 0;
	memcpy(f.b, buf, len);
	enqueue(to->port, &f);
	if (rnd() < p_dup)
		enqueue(to->port, &f);
	return 0;
}

ssize_t fnv_wire_recv(struct fnv_wire *w, void *buf, size_t cap,
		      uint16_t *node, uint16_t *port)
{
	struct frame *f;
	ssize_t n;

	if (!qn[w->port])
		return -FI_EAGAIN;
	f = queue[w->port][qhead[w->port]];
	qhead[w->port] = (qhead[w->port] + 1) % QCAP;
	qn[w->port]--;
	memcpy(buf, f->b, f->len < cap ? f->len : cap);
	*node = peer_node;
	*port = f->src_port;
	n = (ssize_t)f->len;
	free(f);
	return n;
}

/* fi_addr_t n is port n of node 0 */
int fnv_av_resolve(const struct fnv_av *av, fi_addr_t fa, struct fnv_addr *out)
{
	(void)av;
	if (fa < 1 || fa > 3)
		return -FI_EINVAL;
	*out = (struct fnv_addr){ .magic = FNV_ADDR_MAGIC, .node = peer_node,
				  .port = (uint16_t)fa };
	return 0;
}

fi_addr_t fnv_av_reverse(const struct fnv_av *av, uint16_t node, uint16_t port)
{
	(void)av;
	(void)node;
	return port;
}

/* fnv_cntr.c's sleep: a descriptor always readable, so poll(2) returns at
 * once, and 100 ms of the test's clock pass: a wait's timeout runs out
 * in the test's time, not the host's. */
int fnv_wire_arm(struct fnv_wire *w, int fds[2])
{
	static int p[2] = { -1, -1 };

	(void)w;
	if (p[0] < 0) {
		ck_assert_int_eq(pipe(p), 0);
		ck_assert_int_eq(write(p[1], "x", 1), 1);
	}
	fds[0] = p[0];
	fds[1] = -1;
	fake_now += 100;
	return 0;
}

int fnv_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void)fid; (void)buf; (void)len;
	return -FI_ENOSYS;
}

bool fnv_cq_room_locked(const struct fnv_cq *cq, size_t n)
{
	return cq->size - cq->n >= n;
}

void fnv_cq_push_locked(struct fnv_cq *cq, const struct fnv_cqe *e)
{
	cq->ring[(cq->head + cq->n) % cq->size] = *e;
	cq->n++;
}

/* NetVM's exports, as fnv_nvm.c would make them: a key names a range */
#define FAKE_EXPORTS	64
static struct fake_export {
	bool used;
	bool writable;
	uint64_t key;
	uint8_t *buf;
	size_t len;
} exports[FAKE_EXPORTS];
static size_t live_exports, exported_total, writable_total;
static const void *overlapping;	/* exporting this fails -EEXIST */
static bool reads_fail;		/* every read: FI_EKEYREJECTED */
static bool writes_fail;	/* every write: FI_EKEYREJECTED */
static bool no_writable;	/* writable exports: -ENOSPC */
static unsigned long reads, writes, reads_into;	/* calls */
/* An endpoint whose progress runs inside every read of another node's
 * export, as the sender's process runs beside the reader's: a sender
 * that has its "clear to send" writes and takes its exports back then */
static struct fnv_ep *meanwhile;

int fnv_rdv_export_locked(struct fnv_domain *d, const void *buf, size_t len,
			  bool writable, struct fnv_rdv_piece *out)
{
	(void)d;
	if (buf == overlapping)
		return -EEXIST;
	if (writable && no_writable)
		return -ENOSPC;
	for (int i = 0; i < FAKE_EXPORTS; i++) {
		if (exports[i].used)
			continue;
		exports[i] = (struct fake_export){
			.used = true, .buf = (uint8_t *)buf, .len = len,
			.writable = writable,
			.key = ((uint64_t)random() << 20) ^ (uint64_t)i,
		};
		writable_total += writable;
		*out = (struct fnv_rdv_piece){
			.key = exports[i].key, .addr = (uintptr_t)buf,
			.len = len, .nvm_key = ~exports[i].key, .pt_rows = 1,
		};
		live_exports++;
		exported_total++;
		return i;
	}
	return -ENOSPC;
}

void fnv_rdv_unexport_locked(struct fnv_domain *d, int handle)
{
	(void)d;
	ck_assert_int_ge(handle, 0);
	ck_assert_int_lt(handle, FAKE_EXPORTS);
	ck_assert(exports[handle].used);
	exports[handle].used = false;
	live_exports--;
}

/* the ack table's, outright (the real ones keep a rendezvous's) */
int fnv_nvm_export_locked(struct fnv_domain *d, const void *buf, size_t len,
			  bool writable, struct fnv_rdv_piece *out)
{
	return fnv_rdv_export_locked(d, buf, len, writable, out);
}

void fnv_nvm_unexport_locked(struct fnv_domain *d, int handle)
{
	fnv_rdv_unexport_locked(d, handle);
}

static struct fake_export *export_of(uint64_t key)
{
	for (int e = 0; e < FAKE_EXPORTS; e++)
		if (exports[e].used && exports[e].key == key)
			return &exports[e];
	return NULL;
}

int fnv_rdv_read_locked(struct fnv_domain *d, uint16_t node,
			const struct fnv_rdv_req *q, const struct iovec *iov,
			size_t count, size_t from, size_t n)
{
	size_t pos = 0, i = 0, at = 0;

	(void)d;
	if (from)	/* only the write path reads a part, never locally */
		ck_assert_uint_ne(node, 0);
	reads++;
	if (meanwhile && node) {
		struct fnv_ep *m = meanwhile;

		meanwhile = NULL;
		fnv_rdm_progress_locked(m);
		meanwhile = m;
	}
	if (reads_fail)
		return FI_EKEYREJECTED;
	n += from;
	for (uint32_t k = 0; k < q->count && pos < n; k++) {
		const struct fake_export *x = export_of(q->piece[k].key);

		if (!x || x->len < q->piece[k].len)
			return FI_EKEYREJECTED;
		for (size_t off = 0; off < q->piece[k].len && pos < n; off++, pos++) {
			while (at == iov[i].iov_len) {
				i++;
				at = 0;
				ck_assert_uint_lt(i, count);
			}
			if (pos >= from)
				((uint8_t *)iov[i].iov_base)[at] = x->buf[off];
			at++;
		}
	}
	return 0;
}

/* The sender's writes: from its own exports (q) into c's, which must be
 * writable, and no further than c's piece. */
/* A read into place: dst lies in one of the reader's writable exports
 * (the NIC checks the target page's key too). */
int fnv_rdv_read_into_locked(struct fnv_domain *d, uint16_t node,
			     const struct fnv_rdv_req *q, void *dst, size_t n)
{
	uint8_t *to = dst;
	bool in_export = false;
	size_t pos = 0;

	(void)d;
	ck_assert_uint_ne(node, 0);	/* the NIC does not reach its node */
	reads_into++;
	for (int e = 0; e < FAKE_EXPORTS; e++)
		in_export |= exports[e].used && exports[e].writable &&
			     to >= exports[e].buf &&
			     to + n <= exports[e].buf + exports[e].len;
	ck_assert(in_export);
	if (reads_fail)
		return FI_EKEYREJECTED;
	for (uint32_t k = 0; k < q->count && pos < n; k++) {
		const struct fake_export *x = export_of(q->piece[k].key);
		size_t len = q->piece[k].len < n - pos ? q->piece[k].len : n - pos;

		if (!x || x->len < q->piece[k].len)
			return FI_EKEYREJECTED;
		memcpy(to + pos, x->buf, len);
		pos += len;
	}
	return 0;
}

int fnv_rdv_write_locked(struct fnv_domain *d, uint16_t node,
			 const struct fnv_rdv_req *q,
			 const struct fnv_rdv_cts *c)
{
	struct fake_export *to = export_of(c->piece.key);
	size_t pos = 0, end = c->off + c->piece.len, done = 0;

	(void)d;
	ck_assert_uint_ne(node, 0);	/* the NIC does not reach its node */
	writes++;
	/* NetVM exports whole pages: one offered to a writer must own its
	 * pages */
	ck_assert(!to || (!((uintptr_t)to->buf % 4096) && !(to->len % 4096)));
	if (writes_fail || !to || !to->writable ||
	    to->len < c->piece.len || (uintptr_t)to->buf != c->piece.addr)
		return FI_EKEYREJECTED;
	for (uint32_t k = 0; k < q->count && pos < end; k++) {
		const struct fake_export *x = export_of(q->piece[k].key);

		ck_assert_ptr_nonnull(x);	/* sources lie in exports */
		for (size_t off = 0; off < q->piece[k].len && pos < end; off++, pos++)
			if (pos >= c->off)
				to->buf[done++] = x->buf[off];
	}
	ck_assert_uint_eq(done, c->piece.len);
	return 0;
}

static bool table_reads_fail;	/* every ack table read: -EFAULT */
static unsigned long table_reads;

/* NetVM's read of an ack table's slot: from the fake export its key names */
int fnv_rdm_table_read_locked(struct fnv_domain *d, uint16_t node,
			      uint64_t key, uint32_t slot, uint64_t *val)
{
	(void)d;
	ck_assert_uint_eq(node, peer_node);
	ck_assert_uint_ne(node, 0);	/* never the own node's */
	table_reads++;
	if (table_reads_fail)
		return -EFAULT;
	for (int e = 0; e < FAKE_EXPORTS; e++) {
		if (!exports[e].used || exports[e].key != key)
			continue;
		if ((uint64_t)slot * 8 + 8 > exports[e].len)
			return -ERANGE;
		memcpy(val, exports[e].buf + (size_t)slot * 8, 8);
		return 0;
	}
	return -EKEYREJECTED;
}

/* ---- the test's endpoints, each with a send and a receive counter ---- */

static struct fnv_domain dom = {
	.lock = PTHREAD_MUTEX_INITIALIZER, .rdm = true,
};

struct node {
	struct fnv_ep ep;
	struct fnv_cq cq;
	struct fnv_cqe ring[512];
	struct fid_cntr *tx, *rx;	/* FI_SEND, FI_RECV */
};

static struct fid_cntr *cntr_open(void)
{
	struct fi_cntr_attr a = { .events = FI_CNTR_EVENTS_COMP,
				  .wait_obj = FI_WAIT_UNSPEC };
	struct fid_cntr *c;

	ck_assert_int_eq(fnv_cntr_open(&dom.dom, &a, &c, NULL), 0);
	return c;
}

static void node_init(struct node *n, uint16_t port)
{
	memset(n, 0, sizeof(*n));
	n->cq.size = 512;
	n->cq.ring = n->ring;
	n->ep.dom = &dom;
	n->ep.tx_cq = n->ep.rx_cq = &n->cq;
	n->ep.av = (struct fnv_av *)n;	/* never looked into: stand-ins */
	n->ep.enabled = true;
	n->ep.directed = true;
	n->ep.w.port = port;
	ck_assert_int_eq(fnv_rdm_init(&n->ep), 0);
	n->tx = cntr_open();
	n->rx = cntr_open();
	/* as fi_ep_bind does (fnv_ep.c) */
	n->ep.cntr_send = (struct fnv_cntr *)n->tx;
	n->ep.cntr_recv = (struct fnv_cntr *)n->rx;
	ck_assert_int_eq(fnv_cntr_attach_locked(n->ep.cntr_send, &n->ep), 0);
	ck_assert_int_eq(fnv_cntr_attach_locked(n->ep.cntr_recv, &n->ep), 0);
}

/* The endpoint's end: fnv_rdm_fini, and its counters closed. */
static void node_fini(struct node *n)
{
	fnv_rdm_fini(&n->ep);
	ck_assert_int_eq(fi_close(&n->tx->fid), -FI_EBUSY);	/* bound */
	fnv_cntr_detach_locked(n->ep.cntr_send, &n->ep);
	fnv_cntr_detach_locked(n->ep.cntr_recv, &n->ep);
	ck_assert_int_eq(fi_close(&n->tx->fid), 0);
	ck_assert_int_eq(fi_close(&n->rx->fid), 0);
}

/* Both endpoints ended, and their memory freed. */
static void fini_nodes(struct node *x, struct node *y)
{
	node_fini(x);
	node_fini(y);
	free(x);
	free(y);
}

/* A counter's value and error count are exactly these (as they are:
 * fi_cntr_read would progress the endpoints first). */
static void counts(struct fid_cntr *c, uint64_t value, uint64_t err)
{
	ck_assert_uint_eq(((struct fnv_cntr *)c)->value, value);
	ck_assert_uint_eq(((struct fnv_cntr *)c)->err, err);
}

static bool pop(struct node *n, struct fnv_cqe *e)
{
	if (!n->cq.n)
		return false;
	*e = n->cq.ring[n->cq.head];
	n->cq.head = (n->cq.head + 1) % n->cq.size;
	n->cq.n--;
	return true;
}

static void reset_wire(double drop, double dup, double swap)
{
	for (int p = 0; p < 4; p++) {
		while (qn[p]) {
			free(queue[p][qhead[p]]);
			qhead[p] = (qhead[p] + 1) % QCAP;
			qn[p]--;
		}
		deaf[p] = false;
	}
	peer_node = 0;
	table_reads_fail = false;
	table_reads = 0;
	memset(frames_of, 0, sizeof(frames_of));
	p_drop = drop;
	p_dup = dup;
	p_swap = swap;
	fake_now = 1000;
}

/* A hash of position and seed: no period within a message, and no
 * message's bytes pass for another's. */
static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t x = ((uint64_t)i + 1) * 0x9e3779b97f4a7c15ull ^
			     ((uint64_t)seed + 1) * 0xbf58476d1ce4e5b9ull;

		x ^= x >> 31;
		p[i] = (uint8_t)((x * 0x94d049bb133111ebull) >> 56);
	}
}

/*
 * x sends `total` tagged messages to y (tag i, length i * 97 % max,
 * bytes from i), y posts receives a few at a time; the clock moves 10 ms
 * a round.  Returns the rounds it took.
 */
static int stream(unsigned int total, unsigned int seed)
{
	static uint8_t out[FNV_RDM_MSG_MAX], in[64][FNV_RDM_MSG_MAX];
	struct node *x = calloc(1, sizeof(*x)), *y = calloc(1, sizeof(*y));
	unsigned int sent = 0, posted = 0, got = 0, done = 0;
	int rounds = 0;

	srandom(seed);
	node_init(x, 1);
	node_init(y, 2);
	while ((got < total || done < total) && rounds < 200000) {
		struct fnv_cqe e;

		rounds++;
		for (int k = 0; k < 8 && sent < total; k++) {
			size_t len = (sent * 97) % FNV_RDM_MSG_MAX;
			struct iovec iov = { out, len };
			ssize_t r;

			fill(out, len, sent);
			r = fnv_rdm_send_locked(&x->ep, FNV_RDM_TAGGED, &iov, 1, 2,
						sent, 0, false, (void *)(uintptr_t)(sent + 1),
						true);
			if (r == -FI_EAGAIN)
				break;
			ck_assert_int_eq(r, 0);
			sent++;
		}
		/* a window of 64 receives, each its own buffer by tag */
		while (posted < total && posted - got < 64 && (rnd() < 0.7)) {
			struct iovec iov = { in[posted % 64], FNV_RDM_MSG_MAX };

			ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, true, &iov, 1,
							     FI_ADDR_UNSPEC, posted, 0,
							     (void *)(uintptr_t)(posted + 1),
							     0), 0);
			posted++;
		}
		fnv_rdm_progress_locked(&y->ep);
		fnv_rdm_progress_locked(&x->ep);
		while (pop(y, &e)) {
			size_t len = (got * 97) % FNV_RDM_MSG_MAX;

			fill(out, len, got);
			ck_assert_int_eq(e.err, 0);
			ck_assert_uint_eq(e.flags, FI_RECV | FI_TAGGED);
			ck_assert_uint_eq(e.tag, got);
			ck_assert_ptr_eq(e.ctx, (void *)(uintptr_t)(got + 1));
			ck_assert_uint_eq(e.len, len);
			ck_assert_int_eq(memcmp(in[got % 64], out, len), 0);
			got++;
		}
		while (pop(x, &e)) {
			ck_assert_int_eq(e.err, 0);
			ck_assert_uint_eq(e.flags, FI_SEND | FI_TAGGED);
			/* completions in the order sent */
			ck_assert_ptr_eq(e.ctx, (void *)(uintptr_t)(done + 1));
			done++;
		}
		/* each completion counted once, and nothing else */
		counts(y->rx, got, 0);
		counts(x->tx, done, 0);
		counts(x->rx, 0, 0);
		counts(y->tx, 0, 0);
		fake_now += 10;
	}
	ck_assert_uint_eq(got, total);
	ck_assert_uint_eq(done, total);
	fini_nodes(x, y);
	return rounds;
}

START_TEST(lossless)
{
	reset_wire(0, 0, 0);
	stream(2000, 1);
}
END_TEST

START_TEST(lossy)
{
	/* loss, duplicates and reordering at once, several seeds */
	static const double rates[][3] = {
		{ 0.1, 0, 0 }, { 0, 0.2, 0 }, { 0, 0, 0.2 }, { 0.2, 0.1, 0.1 },
		{ 0.4, 0.1, 0.2 },
	};

	for (unsigned int i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		reset_wire(rates[i][0], rates[i][1], rates[i][2]);
		stream(600, 7 + i);
	}
}
END_TEST

START_TEST(lossy_remote)
{
	/* another node's peers: acks deferred, pulled, and on a lossy wire */
	static const double rates[][3] = {
		{ 0, 0, 0 }, { 0.2, 0.1, 0.1 }, { 0.4, 0.1, 0.2 },
	};

	for (unsigned int i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		reset_wire(rates[i][0], rates[i][1], rates[i][2]);
		peer_node = 1;
		stream(600, 17 + i);
		ck_assert_uint_gt(table_reads, 0);
	}
}
END_TEST

START_TEST(peer_gone)
{
	struct node *x = calloc(1, sizeof(*x));
	struct iovec iov = { "hello", 5 };
	struct fnv_cqe e;
	int64_t start;

	reset_wire(0, 0, 0);
	deaf[2] = true;
	node_init(x, 1);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &iov, 1, 2, 0, 0,
					     false, &iov, true), 0);
	start = fake_now;
	for (;;) {
		int t;

		fnv_rdm_progress_locked(&x->ep);
		if (pop(x, &e))
			break;
		/* sread would sleep this long: the next resend is due then */
		t = fnv_rdm_timer_ms(&x->ep);
		ck_assert_int_ge(t, 0);
		fake_now += t + 1;
		ck_assert_int_lt(fake_now - start, 600000);
	}
	ck_assert_int_eq(e.err, FI_EHOSTUNREACH);
	ck_assert_ptr_eq(e.ctx, &iov);
	counts(x->tx, 0, 1);
	/* 100 ms doubling to 3.2 s, 12 resends: about 30 s, not 10 minutes */
	ck_assert_int_lt(fake_now - start, 60000);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &iov, 1, 2, 0, 0,
					     false, NULL, true), -FI_EHOSTUNREACH);
	counts(x->tx, 0, 1);	/* refused: never started, not counted */
	ck_assert_int_eq(fnv_rdm_timer_ms(&x->ep), -1);
	node_fini(x);
	free(x);
}
END_TEST

/* y's messages to x, received by x in one buffer each */
static void send_texts(struct node *y, struct node *x, const char *const *t,
		       unsigned int n)
{
	char in[16];
	struct fnv_cqe e;

	for (unsigned int i = 0; i < n; i++) {
		struct iovec iov = { (void *)t[i], strlen(t[i]) };

		ck_assert_int_eq(fnv_rdm_send_locked(&y->ep, FNV_RDM_MSG, &iov, 1, 1,
						     0, 0, false, NULL, false), 0);
	}
	for (unsigned int i = 0; i < n; i++) {
		struct iovec iov = { in, sizeof(in) };

		memset(in, 0, sizeof(in));
		ck_assert_int_eq(fnv_rdm_post_locked(&x->ep, false, &iov, 1,
						     FI_ADDR_UNSPEC, 0, 0, NULL, 0), 0);
		fnv_rdm_progress_locked(&x->ep);
		ck_assert(pop(x, &e));
		ck_assert_int_eq(e.err, 0);
		ck_assert_str_eq(in, t[i]);
	}
	fnv_rdm_progress_locked(&y->ep);	/* takes the acks */
	/* sends without a completion (complete false) count all the same */
	ck_assert(!pop(y, &e));
	ck_assert_uint_eq(((struct fnv_cntr *)y->tx)->value, n);
}

START_TEST(peer_restarts)
{
	static const char *const before[] = { "one", "two", "three" };
	static const char *const after[] = { "new one", "new two" };
	struct node *x = calloc(1, sizeof(*x)), *y = calloc(1, sizeof(*y));

	reset_wire(0, 0, 0);
	node_init(x, 1);
	node_init(y, 2);
	send_texts(y, x, before, 3);
	/* y starts over on the same port: a new incarnation, sequence 0 */
	node_fini(y);
	node_init(y, 2);
	send_texts(y, x, after, 2);
	fini_nodes(x, y);
}
END_TEST

START_TEST(unexpected_overflow)
{
	/* 300 messages to a receiver that posts nothing: 256 kept aside,
	 * the rest dropped unacknowledged and sent again once it posts */
	struct node *x = calloc(1, sizeof(*x)), *y = calloc(1, sizeof(*y));
	unsigned int sent = 0, got = 0;
	uint32_t v;
	struct fnv_cqe e;

	reset_wire(0, 0, 0);
	node_init(x, 1);
	node_init(y, 2);
	while (sent < 300) {
		struct iovec iov = { &sent, sizeof(sent) };
		ssize_t r = fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &iov, 1, 2, 0, 0,
						false, NULL, false);

		if (r == -FI_EAGAIN) {
			fnv_rdm_progress_locked(&y->ep);
			fnv_rdm_progress_locked(&x->ep);
			continue;
		}
		ck_assert_int_eq(r, 0);
		sent++;
	}
	fnv_rdm_progress_locked(&y->ep);
	ck_assert_uint_eq(y->ep.rdm->unexp_n, FNV_RDM_UNEXP);
	ck_assert_uint_gt(y->ep.rdm->dropped_full, 0);
	for (int rounds = 0; got < 300 && rounds < 10000; rounds++) {
		struct iovec iov = { &v, sizeof(v) };

		if (fnv_rdm_post_locked(&y->ep, false, &iov, 1, FI_ADDR_UNSPEC, 0, 0,
					NULL, 0) == 0) {
			fnv_rdm_progress_locked(&y->ep);
			while (pop(y, &e)) {
				ck_assert_int_eq(e.err, 0);
				ck_assert_uint_eq(v, got);	/* one buffer: at once */
				got++;
			}
		}
		fnv_rdm_progress_locked(&x->ep);
		fake_now += 10;
	}
	ck_assert_uint_eq(got, 300);
	counts(y->rx, 300, 0);
	ck_assert_uint_gt(x->ep.rdm->resent, 0);
	fini_nodes(x, y);
}
END_TEST

START_TEST(refusals)
{
	struct node *x = calloc(1, sizeof(*x));
	static uint8_t big[1];
	/* two pieces of an export's most: too large for one message, and
	 * never looked at */
	struct iovec two[2] = { { big, FNV_RDV_MAX }, { big, FNV_RDV_MAX } };
	struct iovec one = { big, FNV_RDV_MAX + 1 };
	struct iovec iov = { big, 1 };

	reset_wire(0, 0, 0);
	node_init(x, 1);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, two, 2, 2, 0, 0,
					     false, NULL, true), -FI_EMSGSIZE);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &one, 1, 2, 0, 0,
					     false, NULL, true), -FI_EMSGSIZE);
	ck_assert_uint_eq(live_exports, 0);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &iov, 1, 9, 0, 0,
					     false, NULL, true), -FI_EINVAL);
	ck_assert_int_eq(fnv_rdm_post_locked(&x->ep, false, &iov, 1, FI_ADDR_UNSPEC,
					     0, 0, NULL, FI_PEEK), -FI_EBADFLAGS);
	ck_assert_int_eq(fnv_rdm_post_locked(&x->ep, true, &iov, 1, 9, 0, 0, NULL, 0),
			 -FI_EINVAL);
	/* a forged frame: too short, or of no known kind, is ignored */
	{
		struct frame f = { .src_port = 3, .len = 8 };

		enqueue(1, &f);
		f.len = sizeof(struct fnv_rdm_hdr);
		f.b[0] = 9;
		enqueue(1, &f);
		fnv_rdm_progress_locked(&x->ep);
		ck_assert_uint_eq(x->cq.n, 0);
		ck_assert_uint_eq(qn[1], 0);
	}
	node_fini(x);
	free(x);
}
END_TEST

/* ---- rendezvous ---- */

static const size_t rdv_sizes[] = {
	4057, 100000, 10, 70000, FNV_RDM_MSG_MAX, 1 << 20, 8191,
};
#define RDV_SIZES	(sizeof(rdv_sizes) / sizeof(rdv_sizes[0]))
static uint8_t expect[1 << 20];

/* Rendezvous exports alive: the ack tables (exported once a peer of
 * another node was acked) do not count. */
static size_t rdv_live(struct node *x, struct node *y)
{
	return live_exports - (x->ep.rdm->acks_key != 0) -
	       (y->ep.rdm->acks_key != 0);
}

static void pump(struct node *x, struct node *y)
{
	for (int i = 0; i < 4; i++) {
		fnv_rdm_progress_locked(&y->ep);
		fnv_rdm_progress_locked(&x->ep);
	}
}

/*
 * x sends `total` tagged messages to y (tag i, sizes from rdv_sizes:
 * eager and rendezvous mixed), y posts receives by tag, sometimes before
 * the message, sometimes after (unexpected); each arrives once, byte for
 * byte, nothing written past it; every send completes once, successfully;
 * no export is left.
 */
static void rdv_stream(unsigned int total, unsigned int seed, bool remote)
{
	struct node *x = calloc(1, sizeof(*x)), *y = calloc(1, sizeof(*y));
	uint8_t **out = calloc(total, sizeof(*out));
	uint8_t **in = calloc(total, sizeof(*in));
	bool *sent_ok = calloc(total, 1), *got_ok = calloc(total, 1);
	unsigned int sent = 0, posted = 0, got = 0, done = 0;
	size_t before = exported_total, wbefore = writable_total;
	unsigned long writes_before = writes;
	int rounds = 0;

	srandom(seed);
	peer_node = remote;	/* another node: the sender writes */
	node_init(x, 1);
	node_init(y, 2);
	while ((got < total || done < total) && rounds < 200000) {
		struct fnv_cqe e;

		rounds++;
		for (int k = 0; k < 4 && sent < total; k++) {
			size_t len = rdv_sizes[sent % RDV_SIZES];
			struct iovec iov;
			ssize_t r;

			if (!out[sent]) {
				out[sent] = malloc(len);
				fill(out[sent], len, seed * 1000 + sent);
			}
			iov = (struct iovec){ out[sent], len };
			r = fnv_rdm_send_locked(&x->ep, FNV_RDM_TAGGED, &iov, 1, 2,
						sent, 0, false,
						(void *)(uintptr_t)(sent + 1), true);
			if (r == -FI_EAGAIN)
				break;
			ck_assert_int_eq(r, 0);
			sent++;
		}
		while (posted < total && posted < sent + 2 && rnd() < 0.5) {
			size_t len = rdv_sizes[posted % RDV_SIZES];
			struct iovec iov;

			/* every other one on a page boundary: no bytes read */
			in[posted] = posted % 2 ? malloc(len + 1) :
				     aligned_alloc(4096, (len + 4096) / 4096 * 4096);
			memset(in[posted], 0xa5, len + 1);
			iov = (struct iovec){ in[posted], len };
			ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, true, &iov, 1,
							     FI_ADDR_UNSPEC, posted, 0,
							     (void *)(uintptr_t)(posted + 1),
							     0), 0);
			posted++;
		}
		fnv_rdm_progress_locked(&y->ep);
		fnv_rdm_progress_locked(&x->ep);
		while (pop(y, &e)) {
			unsigned int t = (unsigned int)e.tag;
			size_t len = rdv_sizes[t % RDV_SIZES];

			ck_assert_int_eq(e.err, 0);
			ck_assert_uint_lt(t, posted);
			ck_assert(!got_ok[t]);
			ck_assert_ptr_eq(e.ctx, (void *)(uintptr_t)(t + 1));
			ck_assert_uint_eq(e.len, len);
			fill(expect, len, seed * 1000 + t);
			ck_assert_int_eq(memcmp(in[t], expect, len), 0);
			ck_assert_uint_eq(in[t][len], 0xa5);
			got_ok[t] = true;
			got++;
		}
		while (pop(x, &e)) {
			unsigned int t = (unsigned int)(uintptr_t)e.ctx - 1;

			ck_assert_int_eq(e.err, 0);
			ck_assert_uint_eq(e.flags, FI_SEND | FI_TAGGED);
			ck_assert_uint_lt(t, sent);
			ck_assert(!sent_ok[t]);
			sent_ok[t] = true;
			done++;
		}
		/* a rendezvous send counts at its "done", not when its
		 * request is acknowledged; the "done"s count nowhere */
		counts(y->rx, got, 0);
		counts(x->tx, done, 0);
		counts(x->rx, 0, 0);
		counts(y->tx, 0, 0);
		fake_now += 10;
	}
	ck_assert_uint_eq(got, total);
	ck_assert_uint_eq(done, total);
	ck_assert_uint_eq(rdv_live(x, y), 0);
	ck_assert_uint_gt(exported_total, before);	/* rendezvous was used */
	/* written to another node, read on the own one */
	if (remote) {
		ck_assert_uint_gt(writable_total, wbefore);
		ck_assert_uint_eq(writes - writes_before, writable_total - wbefore);
	} else {
		ck_assert_uint_eq(writable_total, wbefore);
	}
	node_fini(x);
	node_fini(y);
	for (unsigned int i = 0; i < total; i++) {
		free(out[i]);
		free(in[i]);
	}
	free(out);
	free(in);
	free(sent_ok);
	free(got_ok);
	free(x);
	free(y);
}

START_TEST(rdv_lossless)
{
	for (int remote = 0; remote < 2; remote++) {
		reset_wire(0, 0, 0);
		rdv_stream(70, 3, remote);
	}
}
END_TEST

START_TEST(rdv_lossy)
{
	/* requests, "done"s, "clear to send"s and "finished"s lost,
	 * duplicated, reordered */
	static const double rates[][3] = {
		{ 0.2, 0, 0 }, { 0, 0.3, 0 }, { 0, 0, 0.3 }, { 0.3, 0.2, 0.2 },
	};

	for (unsigned int i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		for (int remote = 0; remote < 2; remote++) {
			reset_wire(rates[i][0], rates[i][1], rates[i][2]);
			rdv_stream(50, 11 + i, remote);
		}
	}
}
END_TEST

static void two_nodes(struct node **x, struct node **y)
{
	reset_wire(0, 0, 0);
	*x = calloc(1, sizeof(**x));
	*y = calloc(1, sizeof(**y));
	node_init(*x, 1);
	node_init(*y, 2);
}

static void free_nodes(struct node *x, struct node *y)
{
	ck_assert_uint_eq(rdv_live(x, y), 0);	/* every export taken back */
	fini_nodes(x, y);
}

START_TEST(rdv_truncated)
{
	struct node *x, *y;
	static uint8_t out[10000], in[6001];
	struct iovec ov = { out, sizeof(out) }, iv = { in, 6000 };
	struct fnv_cqe e;

	two_nodes(&x, &y);
	fill(out, sizeof(out), 5);
	memset(in, 0xa5, sizeof(in));
	ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, false, &iv, 1, FI_ADDR_UNSPEC,
					     0, 0, in, 0), 0);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 2, 0, 77,
					     true, out, true), 0);
	pump(x, y);
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, FI_ETRUNC);
	ck_assert_uint_eq(e.olen, 4000);
	ck_assert_uint_eq(e.len, 6000);
	ck_assert_uint_eq(e.flags, FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA);
	ck_assert_uint_eq(e.data, 77);
	ck_assert_ptr_eq(e.ctx, in);
	ck_assert_int_eq(memcmp(in, out, 6000), 0);
	ck_assert_uint_eq(in[6000], 0xa5);
	/* the sender's send is whole: a success */
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, 0);
	ck_assert_ptr_eq(e.ctx, out);
	ck_assert_uint_eq(e.flags, FI_SEND | FI_MSG);
	ck_assert(!pop(x, &e));
	counts(y->rx, 0, 1);	/* FI_ETRUNC: an error */
	counts(x->tx, 1, 0);
	free_nodes(x, y);
}
END_TEST

static void post_tagged(struct node *y, void *buf, size_t len, uint64_t tag,
			void *ctx, uint64_t flags)
{
	struct iovec iov = { buf, len };

	ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, true, &iov, buf ? 1 : 0,
					     FI_ADDR_UNSPEC, tag, 0, ctx, flags), 0);
}

START_TEST(rdv_unexpected)
{
	static const size_t len[3] = { 50000, 60000, 70000 };
	static uint8_t out[3][70000], in[2][70000];
	struct node *x, *y;
	struct fnv_cqe e;
	int peek, claim, disc, recv, seen = 0;

	two_nodes(&x, &y);
	for (int i = 0; i < 3; i++) {
		struct iovec iov = { out[i], len[i] };

		fill(out[i], len[i], 20 + i);
		ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_TAGGED, &iov, 1,
						     2, i + 1, 0, false, out[i],
						     true), 0);
	}
	pump(x, y);
	/* kept aside, unread: the senders wait for their "done" */
	ck_assert_uint_eq(y->ep.rdm->unexp_n, 3);
	ck_assert_uint_eq(live_exports, 3);
	ck_assert(!pop(x, &e));
	/* "done"s for those sends from port 3, which they did not go to */
	for (uint32_t id = 0; id < 3; id++) {
		struct frame f = { .src_port = 3 };
		struct fnv_rdm_hdr h = { .type = FNV_RDM_DONE, .epoch = 98,
					 .seq = id };
		struct fnv_rdv_done d = { .id = id };

		memcpy(f.b, &h, sizeof(h));
		memcpy(f.b + sizeof(h), &d, sizeof(d));
		f.len = sizeof(h) + sizeof(d);
		enqueue(1, &f);
	}
	pump(x, y);
	ck_assert(!pop(x, &e));
	ck_assert_uint_eq(live_exports, 3);
	/* FI_PEEK sees the true length */
	post_tagged(y, NULL, 0, 2, &peek, FI_PEEK);
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, 0);
	ck_assert_ptr_eq(e.ctx, &peek);
	ck_assert_uint_eq(e.len, 60000);
	ck_assert_uint_eq(e.tag, 2);
	counts(y->rx, 0, 0);	/* a look is no receive */
	counts(x->tx, 0, 0);	/* nothing read yet */
	/* FI_PEEK | FI_CLAIM, then FI_CLAIM reads it */
	post_tagged(y, NULL, 0, 1, &claim, FI_PEEK | FI_CLAIM);
	ck_assert(pop(y, &e));
	ck_assert_uint_eq(e.len, 50000);
	ck_assert_uint_eq(e.tag, 1);
	post_tagged(y, in[0], 50000, 1, &claim, FI_CLAIM);
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, 0);
	ck_assert_ptr_eq(e.ctx, &claim);
	ck_assert_uint_eq(e.len, 50000);
	ck_assert_int_eq(memcmp(in[0], out[0], 50000), 0);
	counts(y->rx, 1, 0);
	/* FI_PEEK | FI_DISCARD: never read, and its sender still completes */
	post_tagged(y, NULL, 0, 3, &disc, FI_PEEK | FI_DISCARD);
	ck_assert(pop(y, &e));
	ck_assert_uint_eq(e.len, 70000);
	ck_assert_uint_eq(e.tag, 3);
	counts(y->rx, 2, 0);	/* discarded: taken, so received */
	/* a plain receive of the one peeked at */
	post_tagged(y, in[1], 60000, 2, &recv, 0);
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, 0);
	ck_assert_ptr_eq(e.ctx, &recv);
	ck_assert_int_eq(memcmp(in[1], out[1], 60000), 0);
	ck_assert_uint_eq(y->ep.rdm->unexp_n, 0);
	pump(x, y);
	while (pop(x, &e)) {
		ck_assert_int_eq(e.err, 0);
		for (int i = 0; i < 3; i++)
			if (e.ctx == out[i])
				seen |= 1 << i;
	}
	ck_assert_int_eq(seen, 7);
	counts(y->rx, 3, 0);
	counts(x->tx, 3, 0);
	counts(y->tx, 0, 0);	/* the "done"s are no sends of the user's */
	free_nodes(x, y);
}
END_TEST

START_TEST(rdv_pieces)
{
	static uint8_t out[25001], r0[10000], r1[15002];
	struct iovec ov[3] = {
		{ out, 5000 }, { out + 5000, 1 }, { out + 5001, 20000 },
	};
	struct iovec iv[2] = { { r0, sizeof(r0) }, { r1, 15001 } };
	struct node *x, *y;
	struct fnv_cqe e;

	two_nodes(&x, &y);
	fill(out, sizeof(out), 31);
	for (int copy = 0; copy < 2; copy++) {
		size_t before = exported_total;

		/* the second time the pages cannot be exported: a copy */
		overlapping = copy ? out : NULL;
		memset(r0, 0, sizeof(r0));
		memset(r1, 0xa5, sizeof(r1));
		ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, false, iv, 2,
						     FI_ADDR_UNSPEC, 0, 0, r0, 0), 0);
		ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, ov, 3, 2,
						     0, 0, false, out, true), 0);
		ck_assert_uint_eq(exported_total - before, copy ? 1 : 3);
		pump(x, y);
		ck_assert(pop(y, &e));
		ck_assert_int_eq(e.err, 0);
		ck_assert_uint_eq(e.len, 25001);
		ck_assert_int_eq(memcmp(r0, out, 10000), 0);
		ck_assert_int_eq(memcmp(r1, out + 10000, 15001), 0);
		ck_assert_uint_eq(r1[15001], 0xa5);
		ck_assert(pop(x, &e));
		ck_assert_int_eq(e.err, 0);
		ck_assert_uint_eq(live_exports, 0);
	}
	overlapping = NULL;
	free_nodes(x, y);
}
END_TEST

START_TEST(rdv_read_fails)
{
	static uint8_t out[9000], in[9000];
	struct iovec ov = { out, sizeof(out) }, iv = { in, sizeof(in) };
	struct node *x, *y;
	struct fnv_cqe e;

	two_nodes(&x, &y);
	reads_fail = true;
	ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, false, &iv, 1, FI_ADDR_UNSPEC,
					     0, 0, in, 0), 0);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 2, 0, 0,
					     false, out, true), 0);
	pump(x, y);
	reads_fail = false;
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, FI_EKEYREJECTED);
	ck_assert_ptr_eq(e.ctx, in);
	/* the sender hears of it */
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, FI_EKEYREJECTED);
	ck_assert_ptr_eq(e.ctx, out);
	counts(y->rx, 0, 1);
	counts(x->tx, 0, 1);
	free_nodes(x, y);
}
END_TEST

START_TEST(rdv_peer_gone)
{
	static uint8_t out[9000];
	struct iovec ov = { out, sizeof(out) };
	struct node *x = calloc(1, sizeof(*x));
	struct fnv_cqe e = { 0 };

	reset_wire(0, 0, 0);
	deaf[2] = true;
	node_init(x, 1);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 2, 0, 0,
					     false, out, true), 0);
	ck_assert_uint_eq(live_exports, 1);
	for (int i = 0; i < 100 && !pop(x, &e); i++) {
		fnv_rdm_progress_locked(&x->ep);
		fake_now += 4000;
	}
	ck_assert_int_eq(e.err, FI_EHOSTUNREACH);
	ck_assert_ptr_eq(e.ctx, out);
	ck_assert(!pop(x, &e));		/* once */
	counts(x->tx, 0, 1);		/* once */
	ck_assert_uint_eq(live_exports, 0);
	node_fini(x);
	free(x);
}
END_TEST

START_TEST(rdv_forged)
{
	/* requests that do not add up, and "done"s nothing waits for, from
	 * port 3: taken and ignored, the stream goes on */
	static const struct { uint32_t count; uint64_t len, piece; } bad[] = {
		{ 0, 100, 100 }, { 5, 100, 100 }, { 1, 100, 99 },
		{ 1, 0, 0 }, { 1, FNV_RDV_MAX + 1ull, FNV_RDV_MAX + 1ull },
	};
	struct node *x, *y;
	struct fnv_cqe e;
	char in[16] = "";
	struct iovec iv = { in, sizeof(in) }, ov = { "after", 5 };
	uint32_t seq = 0;

	two_nodes(&x, &y);
	ck_assert_int_eq(fnv_rdm_post_locked(&x->ep, false, &iv, 1, FI_ADDR_UNSPEC,
					     0, 0, in, 0), 0);
	for (unsigned int i = 0; i <= sizeof(bad) / sizeof(bad[0]); i++) {
		struct frame f = { .src_port = 3 };
		struct fnv_rdm_hdr h = { .type = FNV_RDM_MSG, .flags = FNV_RDM_RDV,
					 .epoch = 99, .seq = seq++ };
		struct fnv_rdv_req q = { .id = 1 };
		struct fnv_rdv_done d = { .id = 12345 };

		if (i < sizeof(bad) / sizeof(bad[0])) {
			q.count = bad[i].count;
			q.len = bad[i].len;
			q.piece[0].len = bad[i].piece;
			memcpy(f.b + sizeof(h), &q, sizeof(q));
			f.len = sizeof(h) + sizeof(q);
		} else {
			h.type = FNV_RDM_DONE;
			h.flags = 0;
			memcpy(f.b + sizeof(h), &d, sizeof(d));
			f.len = sizeof(h) + sizeof(d);
		}
		memcpy(f.b, &h, sizeof(h));
		enqueue(1, &f);
	}
	fnv_rdm_progress_locked(&x->ep);
	ck_assert(!pop(x, &e));
	ck_assert_uint_eq(qn[1], 0);
	/* then a real message takes the receive */
	ck_assert_int_eq(fnv_rdm_send_locked(&y->ep, FNV_RDM_MSG, &ov, 1, 1, 0, 0,
					     false, NULL, false), 0);
	fnv_rdm_progress_locked(&x->ep);
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, 0);
	ck_assert_str_eq(in, "after");
	free_nodes(x, y);
}
END_TEST

/* ---- written rendezvous: the sender writes into the receiver's pages ---- */

/* x (port 1) and y (port 2) on different nodes: the write path */
static void remote_nodes(struct node **x, struct node **y)
{
	two_nodes(x, y);
	peer_node = 1;
	reads = writes = reads_into = 0;
}

/* The newest frame of h->type queued for port (acks may follow it): its
 * header and payload, which is len bytes exactly. */
static void last_frame(uint16_t port, struct fnv_rdm_hdr *h, void *payload,
		       size_t len)
{
	for (size_t i = qn[port]; i > 0; i--) {
		struct frame *f = queue[port][(qhead[port] + i - 1) % QCAP];

		if (f->b[0] != h->type)
			continue;
		ck_assert_uint_eq(f->len, sizeof(*h) + len);
		memcpy(h, f->b, sizeof(*h));
		memcpy(payload, f->b + sizeof(*h), len);
		return;
	}
	ck_abort_msg("no frame of type %u for port %u", h->type, port);
}

START_TEST(rdv_written)
{
	static uint8_t out[3 * 4096 + 1000];
	uint8_t *in = aligned_alloc(4096, 4 * 4096);
	struct iovec ov = { out, sizeof(out) }, iv = { in, sizeof(out) };
	struct fnv_rdm_hdr h;
	struct fnv_rdv_cts c;
	struct fnv_rdv_done d;
	struct node *x, *y;
	struct fnv_cqe e;

	remote_nodes(&x, &y);
	meanwhile = &x->ep;	/* x runs while y reads */
	fill(out, sizeof(out), 61);
	memset(in, 0xa5, 4 * 4096);
	/* a receive on a page boundary, 1000 B past its last whole page */
	ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, false, &iv, 1, FI_ADDR_UNSPEC,
					     0, 0, in, 0), 0);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 2, 0, 78,
					     true, out, true), 0);
	fnv_rdm_progress_locked(&y->ep);
	/* "clear to send": the whole pages, from offset 0 of the message */
	ck_assert_uint_eq(frames_of[FNV_RDM_CTS], 1);
	h.type = FNV_RDM_CTS;
	last_frame(1, &h, &c, sizeof(c));
	ck_assert_uint_eq(c.id, 0);
	ck_assert_uint_eq(c.off, 0);
	ck_assert_uint_eq(c.piece.addr, (uintptr_t)in);
	ck_assert_uint_eq(c.piece.len, 3 * 4096);
	/* the last 1000 B read first (x, running meanwhile, had nothing to
	 * write yet); nothing completes before the sender's "finished" */
	ck_assert_uint_eq(reads, 1);
	ck_assert_uint_eq(writes, 0);
	meanwhile = NULL;
	ck_assert_int_eq(memcmp(in + 3 * 4096, out + 3 * 4096, 1000), 0);
	ck_assert(!pop(y, &e));
	counts(y->rx, 0, 0);
	fnv_rdm_progress_locked(&x->ep);
	ck_assert_uint_eq(writes, 1);
	/* written: the send completes, and "finished" goes, status 0 */
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, 0);
	ck_assert_ptr_eq(e.ctx, out);
	ck_assert_uint_eq(e.flags, FI_SEND | FI_MSG);
	counts(x->tx, 1, 0);
	h.type = FNV_RDM_FIN;
	last_frame(2, &h, &d, sizeof(d));
	ck_assert_uint_eq(d.id, 0);
	ck_assert_uint_eq(d.status, 0);
	ck_assert(!pop(y, &e));
	fnv_rdm_progress_locked(&y->ep);
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, 0);
	ck_assert_ptr_eq(e.ctx, in);
	ck_assert_uint_eq(e.len, sizeof(out));
	ck_assert_uint_eq(e.flags, FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA);
	ck_assert_uint_eq(e.data, 78);
	ck_assert_int_eq(memcmp(in, out, sizeof(out)), 0);
	ck_assert_uint_eq(in[sizeof(out)], 0xa5);	/* nothing past */
	counts(y->rx, 1, 0);
	ck_assert_uint_eq(frames_of[FNV_RDM_DONE], 0);	/* no read, no "done" */
	ck_assert_uint_eq(writable_total, 1);
	pump(x, y);
	ck_assert(!pop(x, &e));
	ck_assert(!pop(y, &e));
	free_nodes(x, y);
	free(in);
}
END_TEST

/* ---- read into place: short messages from another node ---- */

START_TEST(rdv_in_place)
{
	static uint8_t out[3 * 4096 + 1000], in[3 * 4096 + 1002];
	struct iovec ov = { out, sizeof(out) }, iv = { in + 1, sizeof(out) };
	struct fnv_rdm_hdr h;
	struct fnv_rdv_done d;
	struct node *x, *y;
	struct fnv_cqe e;

	remote_nodes(&x, &y);
	y->ep.rdm->rdv_read_max = sizeof(out);	/* as long as it, no more */
	fill(out, sizeof(out), 17);
	memset(in, 0xa5, sizeof(in));
	/* a receive on no page boundary: read straight into it all the same */
	ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, false, &iv, 1, FI_ADDR_UNSPEC,
					     0, 0, in, 0), 0);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 2, 0, 5,
					     true, out, true), 0);
	fnv_rdm_progress_locked(&y->ep);
	/* no "clear to send", no write, no bounce: one read into place, the
	 * receive complete at once, "done" to the sender */
	ck_assert_uint_eq(frames_of[FNV_RDM_CTS], 0);
	ck_assert_uint_eq(reads_into, 1);
	ck_assert_uint_eq(reads, 0);
	ck_assert_uint_eq(writable_total, 1);
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, 0);
	ck_assert_ptr_eq(e.ctx, in);
	ck_assert_uint_eq(e.len, sizeof(out));
	ck_assert_uint_eq(e.data, 5);
	ck_assert_int_eq(memcmp(in + 1, out, sizeof(out)), 0);
	ck_assert_uint_eq(in[0], 0xa5);			/* nothing before */
	ck_assert_uint_eq(in[sizeof(in) - 1], 0xa5);	/* nor past */
	counts(y->rx, 1, 0);
	h.type = FNV_RDM_DONE;
	last_frame(1, &h, &d, sizeof(d));
	ck_assert_uint_eq(d.id, 0);
	ck_assert_uint_eq(d.status, 0);
	fnv_rdm_progress_locked(&x->ep);
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, 0);
	ck_assert_ptr_eq(e.ctx, out);
	counts(x->tx, 1, 0);
	ck_assert_uint_eq(writes, 0);
	ck_assert_uint_eq(y->ep.rdm->rdv_in_place, 1);

	/* one byte more than rdv_read_max: offered for writing instead */
	y->ep.rdm->rdv_read_max = sizeof(out) - 1;
	ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, false, &iv, 1, FI_ADDR_UNSPEC,
					     0, 0, in, 0), 0);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 2, 0, 0,
					     false, out, true), 0);
	fnv_rdm_progress_locked(&y->ep);
	ck_assert_uint_eq(frames_of[FNV_RDM_CTS], 1);
	ck_assert_uint_eq(reads_into, 1);
	pump(x, y);
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, 0);
	ck_assert_uint_eq(writes, 1);
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, 0);
	free_nodes(x, y);
}
END_TEST

START_TEST(rdv_in_place_fallbacks)
{
	static uint8_t out[9000], in[2][9000];
	struct iovec ov = { out, sizeof(out) }, iv = { in[0], sizeof(out) };
	struct iovec halves[2] = { { in[1], 4500 }, { in[1] + 4500, 4500 } }, riv;
	struct node *x, *y;
	uint8_t *ro;
	struct fnv_cqe e;

	remote_nodes(&x, &y);
	y->ep.rdm->rdv_read_max = 1 << 20;
	fill(out, sizeof(out), 23);
	/* the receive buffer's pages overlap another export: offered for
	 * writing (its whole pages), the rest read through the bounce */
	overlapping = in[0];
	ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, false, &iv, 1, FI_ADDR_UNSPEC,
					     0, 0, in[0], 0), 0);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 2, 0, 0,
					     false, out, true), 0);
	pump(x, y);
	overlapping = NULL;
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, 0);
	ck_assert_int_eq(memcmp(in[0], out, sizeof(out)), 0);
	ck_assert_uint_eq(frames_of[FNV_RDM_CTS], 1);
	ck_assert_uint_eq(writes, 1);
	ck_assert_uint_eq(reads_into, 0);
	ck_assert(pop(x, &e));
	reads = 0;
	/* a receive in two pieces: the bounce */
	ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, false, halves, 2,
					     FI_ADDR_UNSPEC, 0, 0, in[1], 0), 0);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 2, 0, 0,
					     false, out, true), 0);
	pump(x, y);
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, 0);
	ck_assert_int_eq(memcmp(in[1], out, sizeof(out)), 0);
	ck_assert_uint_eq(reads, 1);
	ck_assert_uint_eq(reads_into, 0);
	ck_assert(pop(x, &e));
	/* a receive into pages mapped read-only: not read into place (the
	 * NIC would wait for a page it cannot map), offered for writing,
	 * whose refusal both sides hear of */
	ro = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(ro, MAP_FAILED);
	riv = (struct iovec){ ro, 3 * 4096 };
	writes_fail = true;
	ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, false, &riv, 1, FI_ADDR_UNSPEC,
					     0, 0, ro, 0), 0);
	ov.iov_len = 3 * 4096;
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 2, 0, 0,
					     false, out, true), 0);
	pump(x, y);
	writes_fail = false;
	ov.iov_len = sizeof(out);
	ck_assert_uint_eq(reads_into, 0);
	ck_assert_uint_eq(writes, 2);
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, FI_EKEYREJECTED);
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, FI_EKEYREJECTED);
	munmap(ro, 3 * 4096);
	/* a read into place that fails: both sides hear of it */
	reads_fail = true;
	ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, false, &iv, 1, FI_ADDR_UNSPEC,
					     0, 0, in[0], 0), 0);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 2, 0, 0,
					     false, out, true), 0);
	pump(x, y);
	reads_fail = false;
	ck_assert_uint_eq(reads_into, 1);
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, FI_EKEYREJECTED);
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, FI_EKEYREJECTED);
	free_nodes(x, y);
}
END_TEST

START_TEST(rdv_written_cut)
{
	/* 5 pages' worth into a receive that starts 100 B into a page and
	 * holds 3 pages: 3996 B read before the first whole page, 2 pages
	 * written, 100 B read after; FI_ETRUNC */
	static uint8_t out[5 * 4096];
	uint8_t *page = aligned_alloc(4096, 5 * 4096), *in = page + 100;
	struct iovec ov = { out, sizeof(out) };
	struct fnv_rdm_hdr h;
	struct fnv_rdv_cts c;
	struct node *x, *y;
	struct fnv_cqe e;

	remote_nodes(&x, &y);
	meanwhile = &x->ep;
	fill(out, sizeof(out), 62);
	memset(page, 0xa5, 5 * 4096);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_TAGGED, &ov, 1, 2, 5,
					     0, false, out, true), 0);
	pump(x, y);	/* unexpected: it waits */
	ck_assert(!pop(x, &e));
	post_tagged(y, in, 3 * 4096, 5, in, 0);
	h.type = FNV_RDM_CTS;
	last_frame(1, &h, &c, sizeof(c));
	ck_assert_uint_eq(c.off, 4096 - 100);
	ck_assert_uint_eq(c.piece.addr, (uintptr_t)page + 4096);
	ck_assert_uint_eq(c.piece.len, 2 * 4096);
	ck_assert_uint_eq(reads, 2);
	meanwhile = NULL;
	pump(x, y);
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, FI_ETRUNC);
	ck_assert_uint_eq(e.len, 3 * 4096);
	ck_assert_uint_eq(e.olen, 2 * 4096);
	ck_assert_uint_eq(e.tag, 5);
	ck_assert_uint_eq(e.flags, FI_RECV | FI_TAGGED);
	ck_assert_int_eq(memcmp(in, out, 3 * 4096), 0);
	ck_assert_uint_eq(page[99], 0xa5);		/* nothing before */
	ck_assert_uint_eq(in[3 * 4096], 0xa5);		/* nor past */
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, 0);
	ck_assert_uint_eq(e.flags, FI_SEND | FI_TAGGED);
	ck_assert_uint_eq(writes, 1);
	counts(y->rx, 0, 1);
	counts(x->tx, 1, 0);
	free_nodes(x, y);
	free(page);
}
END_TEST

START_TEST(rdv_written_holes_fail)
{
	/* the bytes around the whole pages cannot be read: no "clear to
	 * send", the export taken back, and the read's failure ends both */
	static uint8_t out[3 * 4096];
	uint8_t *page = aligned_alloc(4096, 4 * 4096), *in = page + 10;
	struct iovec ov = { out, sizeof(out) }, iv = { in, sizeof(out) };
	struct node *x, *y;
	struct fnv_cqe e;

	remote_nodes(&x, &y);
	reads_fail = true;
	ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, false, &iv, 1, FI_ADDR_UNSPEC,
					     0, 0, in, 0), 0);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 2, 0, 0,
					     false, out, true), 0);
	pump(x, y);
	reads_fail = false;
	ck_assert_uint_eq(frames_of[FNV_RDM_CTS], 0);
	ck_assert_uint_eq(writes, 0);
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, FI_EKEYREJECTED);
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, FI_EKEYREJECTED);
	counts(y->rx, 0, 1);
	counts(x->tx, 0, 1);
	free_nodes(x, y);
	free(page);
}
END_TEST

START_TEST(rdv_write_fails)
{
	static uint8_t out[3 * 4096];
	uint8_t *in = aligned_alloc(4096, sizeof(out));
	struct iovec ov = { out, sizeof(out) }, iv = { in, sizeof(out) };
	struct fnv_rdm_hdr h;
	struct fnv_rdv_done d;
	struct node *x, *y;
	struct fnv_cqe e;

	remote_nodes(&x, &y);
	writes_fail = true;
	ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, false, &iv, 1, FI_ADDR_UNSPEC,
					     0, 0, in, 0), 0);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 2, 0, 0,
					     false, out, true), 0);
	fnv_rdm_progress_locked(&y->ep);
	fnv_rdm_progress_locked(&x->ep);
	writes_fail = false;
	/* the sender's error, and its "finished" says it */
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, FI_EKEYREJECTED);
	ck_assert_ptr_eq(e.ctx, out);
	h.type = FNV_RDM_FIN;
	last_frame(2, &h, &d, sizeof(d));
	ck_assert_uint_eq(d.status, FI_EKEYREJECTED);
	pump(x, y);
	ck_assert(pop(y, &e));
	ck_assert_int_eq(e.err, FI_EKEYREJECTED);
	ck_assert_ptr_eq(e.ctx, in);
	ck_assert_uint_eq(e.len, 0);
	counts(y->rx, 0, 1);
	counts(x->tx, 0, 1);
	ck_assert_uint_eq(reads, 0);
	free_nodes(x, y);
	free(in);
}
END_TEST

START_TEST(rdv_write_fallback)
{
	/* the receive buffer cannot be exported (NetVM's 64 exports taken),
	 * or is in pieces: read, as on the own node */
	static uint8_t out[3 * 4096];
	uint8_t *in = aligned_alloc(4096, sizeof(out));
	struct iovec ov = { out, sizeof(out) };
	struct iovec iv[2] = { { in, 4096 }, { in + 4096, 2 * 4096 } };
	struct node *x, *y;
	struct fnv_cqe e;

	remote_nodes(&x, &y);
	fill(out, sizeof(out), 63);
	for (int pieces = 1; pieces <= 2; pieces++) {
		memset(in, 0, sizeof(out));
		no_writable = pieces == 1;
		reads = writes = 0;
		ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, false,
						     pieces == 1 ? &iv[0] : iv, pieces,
						     FI_ADDR_UNSPEC, 0, 0, in, 0), 0);
		ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 2,
						     0, 0, false, out, true), 0);
		pump(x, y);
		ck_assert(pop(y, &e));
		ck_assert_int_eq(e.err, pieces == 1 ? FI_ETRUNC : 0);
		ck_assert_int_eq(memcmp(in, out, pieces == 1 ? 4096 : sizeof(out)), 0);
		ck_assert(pop(x, &e));
		ck_assert_int_eq(e.err, 0);
		ck_assert_uint_eq(reads, 1);
		ck_assert_uint_eq(writes, 0);
	}
	no_writable = false;
	ck_assert_uint_eq(frames_of[FNV_RDM_CTS], 0);
	ck_assert_uint_eq(frames_of[FNV_RDM_DONE], 2);
	free_nodes(x, y);
	free(in);
}
END_TEST

/* A frame from port 3 (epoch 99, sequence seq) to port 1. */
static void inject(uint8_t type, uint32_t seq, const void *payload,
		   size_t len)
{
	struct frame f = { .src_port = 3, .len = sizeof(struct fnv_rdm_hdr) + len };
	struct fnv_rdm_hdr h = { .type = type, .epoch = 99, .seq = seq };

	memcpy(f.b, &h, sizeof(h));
	memcpy(f.b + sizeof(h), payload, len);
	enqueue(1, &f);
}

START_TEST(rdv_cts_forged)
{
	/* x's rendezvous send to port 3, which no endpoint answers but the
	 * test: "clear to send"s of the wrong id, of the wrong length, then
	 * one past the message; and "finished"s nothing waits for */
	static uint8_t out[2 * 4096];
	struct iovec ov = { out, sizeof(out) };
	struct fnv_rdv_cts c = { .id = 7 };
	struct fnv_rdv_done d = { .id = 0 };
	struct fnv_rdm_hdr h;
	struct node *x, *y;
	struct fnv_cqe e;

	remote_nodes(&x, &y);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 3, 0, 0,
					     false, out, true), 0);
	c.piece.len = 4096;
	inject(FNV_RDM_CTS, 0, &c, sizeof(c));		/* no such id */
	c.id = 0;
	inject(FNV_RDM_CTS, 1, &c, sizeof(c) - 1);	/* not a cts */
	inject(FNV_RDM_FIN, 2, &d, sizeof(d));		/* no offer made */
	fnv_rdm_progress_locked(&x->ep);
	ck_assert(!pop(x, &e));
	ck_assert_uint_eq(writes, 0);
	c.off = 4097;		/* 4096 B from 4097 on: past the 8192 */
	inject(FNV_RDM_CTS, 3, &c, sizeof(c));
	fnv_rdm_progress_locked(&x->ep);
	ck_assert_uint_eq(writes, 0);		/* written nowhere */
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, FI_EINVAL);
	ck_assert_ptr_eq(e.ctx, out);
	counts(x->tx, 0, 1);
	h.type = FNV_RDM_FIN;
	last_frame(3, &h, &d, sizeof(d));
	ck_assert_uint_eq(d.id, 0);
	ck_assert_uint_eq(d.status, FI_EINVAL);
	/* the same again: nothing waits any more */
	inject(FNV_RDM_CTS, 4, &c, sizeof(c));
	fnv_rdm_progress_locked(&x->ep);
	ck_assert(!pop(x, &e));
	free_nodes(x, y);
}
END_TEST

START_TEST(rdv_writer_gone)
{
	/* the sender stops answering after its request: the receive that
	 * offered its pages fails once the sender is given up, and its
	 * export is taken back */
	static uint8_t out[2 * 4096];
	uint8_t *in = aligned_alloc(4096, sizeof(out));
	struct iovec ov = { out, sizeof(out) }, iv = { in, sizeof(out) };
	struct node *x, *y;
	struct fnv_cqe e = { 0 };

	remote_nodes(&x, &y);
	ck_assert_int_eq(fnv_rdm_post_locked(&y->ep, false, &iv, 1, FI_ADDR_UNSPEC,
					     0, 0, in, 0), 0);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &ov, 1, 2, 0, 0,
					     false, out, true), 0);
	deaf[1] = true;
	fnv_rdm_progress_locked(&y->ep);
	ck_assert_uint_eq(frames_of[FNV_RDM_CTS], 1);
	ck_assert_uint_eq(writable_total, 1);
	for (int i = 0; i < 100 && !pop(y, &e); i++) {
		fnv_rdm_progress_locked(&y->ep);
		fake_now += 4000;
	}
	ck_assert_int_eq(e.err, FI_EHOSTUNREACH);
	ck_assert_ptr_eq(e.ctx, in);
	ck_assert(!pop(y, &e));
	counts(y->rx, 0, 1);
	ck_assert_uint_eq(rdv_live(x, y), 1);	/* only x's, of its send */
	node_fini(x);
	free(x);
	ck_assert_uint_eq(live_exports, y->ep.rdm->acks_key != 0);
	node_fini(y);
	free(y);
	free(in);
}
END_TEST

/* ---- counters: the calls ---- */

/* a posts a receive for b's next message */
static void post_one(struct node *a, uint8_t *buf, size_t cap)
{
	struct iovec iov = { buf, cap };

	ck_assert_int_eq(fnv_rdm_post_locked(&a->ep, false, &iov, 1,
					     FI_ADDR_UNSPEC, 0, 0, buf, 0), 0);
}

/* a sends 64 bytes of seed to port `to`, with remote CQ data if data */
static void send64(struct node *a, fi_addr_t to, unsigned int seed,
		   uint64_t data, void *ctx)
{
	uint8_t out[64];
	struct iovec iov = { out, sizeof(out) };

	fill(out, sizeof(out), seed);
	ck_assert_int_eq(fnv_rdm_send_locked(&a->ep, FNV_RDM_MSG, &iov, 1, to,
					     0, data, data != 0, ctx, true), 0);
}

/* e is the receive of send64's seed into buf, with data */
static void check64(const struct fnv_cqe *e, const uint8_t *buf,
		    unsigned int seed, uint64_t data)
{
	uint8_t want[64];

	fill(want, sizeof(want), seed);
	ck_assert_int_eq(e->err, 0);
	ck_assert_uint_eq(e->flags,
			  FI_RECV | FI_MSG | (data ? FI_REMOTE_CQ_DATA : 0));
	ck_assert_uint_eq(e->len, 64);
	ck_assert_ptr_eq(e->ctx, buf);
	if (data)
		ck_assert_uint_eq(e->data, data);
	ck_assert_int_eq(memcmp(buf, want, sizeof(want)), 0);
}

/* x's 64-byte message SEED, taken by y into buf (a receive posted first) */
static void x_to_y(struct node *x, struct node *y, uint8_t *buf,
		   unsigned int seed)
{
	struct fnv_cqe e;

	post_one(y, buf, 64);
	send64(x, 2, seed, 0, x);
	fnv_rdm_progress_locked(&y->ep);
	ck_assert(pop(y, &e));
	check64(&e, buf, seed, 0);
}

/* x (port 1) and y (port 2) on different nodes, each having acked one
 * message of the other with a frame that says where its ack table is */
static void meet(struct node *x, struct node *y, uint8_t *buf)
{
	struct fnv_cqe e;

	reset_wire(0, 0, 0);
	peer_node = 1;
	node_init(x, 1);
	node_init(y, 2);
	x_to_y(x, y, buf, 100);
	/* x does not read y's table yet: an ack frame, with the table */
	ck_assert_uint_eq(frames_of[FNV_RDM_ACK], 1);
	ck_assert_uint_eq(last_len[FNV_RDM_ACK],
			  sizeof(struct fnv_rdm_hdr) +
			  sizeof(struct fnv_rdm_table));
	fnv_rdm_progress_locked(&x->ep);
	ck_assert(pop(x, &e));
	ck_assert_ptr_eq(e.ctx, x);
	post_one(x, buf, 64);
	send64(y, 1, 101, 0, y);
	fnv_rdm_progress_locked(&x->ep);
	ck_assert(pop(x, &e));
	check64(&e, buf, 101, 0);
	ck_assert_uint_eq(frames_of[FNV_RDM_ACK], 2);
	fnv_rdm_progress_locked(&y->ep);
	ck_assert(pop(y, &e));
	ck_assert_ptr_eq(e.ctx, y);
	memset(frames_of, 0, sizeof(frames_of));
}

/* n's progress, the clock moved to each of its timers, until its send
 * completes: within FNV_RDM_PULL_MS, its receiver calling nothing. */
static void complete_by_pull(struct node *n)
{
	int64_t start = fake_now;
	struct fnv_cqe e;

	while (!pop(n, &e)) {
		int t = fnv_rdm_timer_ms(&n->ep);

		ck_assert_int_ge(t, 0);	/* sread would wake for it */
		ck_assert_int_le(t, FNV_RDM_PULL_MS);
		fake_now += t ? t : 1;
		ck_assert_int_le(fake_now - start, FNV_RDM_PULL_MS);
		fnv_rdm_progress_locked(&n->ep);
	}
	ck_assert_ptr_eq(e.ctx, n);
	ck_assert_int_eq(e.err, 0);
}

START_TEST(pull_pingpong)
{
	struct node *x = calloc(1, sizeof(*x)), *y = calloc(1, sizeof(*y));
	static uint8_t xbuf[64], ybuf[64];
	struct fnv_cqe e;

	meet(x, y, xbuf);
	/* as fi_pingpong: take the message, post the next receive, answer */
	post_one(y, ybuf, 64);
	post_one(x, xbuf, 64);
	for (unsigned int i = 0; i < 50; i++) {
		uint64_t data = i % 2 ? 0x5eed0000 + i : 0;

		send64(x, 2, 2 * i, data, x);
		/* 64 bytes: a 96-byte frame (U-Net's inline limit), with
		 * remote CQ data 104 */
		ck_assert_uint_eq(last_len[FNV_RDM_MSG], data ? 104 : 96);
		fnv_rdm_progress_locked(&y->ep);
		if (i)	/* the ping acknowledged y's last pong */
			ck_assert(pop(y, &e) && e.ctx == y && !e.err);
		ck_assert(pop(y, &e));
		check64(&e, ybuf, 2 * i, data);
		ck_assert(!pop(y, &e));
		post_one(y, ybuf, 64);
		send64(y, 1, 2 * i + 1, 0, y);
		fnv_rdm_progress_locked(&x->ep);
		/* the pong acknowledged the ping: no ack frame between */
		ck_assert(pop(x, &e) && e.ctx == x && !e.err);
		ck_assert(pop(x, &e));
		check64(&e, xbuf, 2 * i + 1, 0);
		post_one(x, xbuf, 64);
		ck_assert_uint_eq(frames_of[FNV_RDM_ACK], 0);
		ck_assert_uint_eq(frames_of[FNV_RDM_MSG], 2 * i + 2);
	}
	/* the last pong: x calls nothing more, y completes by reading x's
	 * ack table once its pong waited FNV_RDM_PULL_MS */
	complete_by_pull(y);
	ck_assert_uint_eq(table_reads, 1);
	ck_assert_uint_eq(frames_of[FNV_RDM_ACK], 0);
	ck_assert_uint_eq(frames_of[FNV_RDM_MSG], 100);	/* nothing resent */
	counts(x->tx, 51, 0);
	counts(y->tx, 51, 0);
	/* before sleeping or closing, x sends the ack it deferred */
	fnv_rdm_flush_acks_locked(&x->ep);
	ck_assert_uint_eq(frames_of[FNV_RDM_ACK], 1);
	fnv_rdm_flush_acks_locked(&x->ep);
	ck_assert_uint_eq(frames_of[FNV_RDM_ACK], 1);	/* once */
	fini_nodes(x, y);
	ck_assert_uint_eq(live_exports, 0);	/* the ack tables too */
}
END_TEST

START_TEST(pull_silent_receiver)
{
	struct node *x = calloc(1, sizeof(*x)), *y = calloc(1, sizeof(*y));
	static uint8_t buf[64];
	struct fnv_cqe e;

	meet(x, y, buf);
	/* y takes x's message and then calls nothing more */
	x_to_y(x, y, buf, 7);
	fnv_rdm_progress_locked(&x->ep);
	ck_assert(!pop(x, &e));		/* not acknowledged yet */
	ck_assert_uint_eq(frames_of[FNV_RDM_ACK], 0);
	complete_by_pull(x);
	ck_assert_uint_eq(frames_of[FNV_RDM_ACK], 0);	/* pulled */
	ck_assert_uint_eq(frames_of[FNV_RDM_MSG], 1);
	ck_assert_uint_eq(table_reads, 1);
	counts(x->tx, 2, 0);
	fnv_rdm_flush_acks_locked(&y->ep);	/* as before y sleeps */
	ck_assert_uint_eq(frames_of[FNV_RDM_ACK], 1);
	fnv_rdm_progress_locked(&x->ep);	/* nothing new in it */
	ck_assert(!pop(x, &e));
	memset(frames_of, 0, sizeof(frames_of));

	/* a receiver that keeps calling sends the ack it deferred itself,
	 * FNV_RDM_ACK_PASSES passes after the one that took the message */
	x_to_y(x, y, buf, 8);
	for (int k = 0; k < FNV_RDM_ACK_PASSES; k++) {
		ck_assert_uint_eq(frames_of[FNV_RDM_ACK], 0);
		fnv_rdm_progress_locked(&y->ep);
	}
	ck_assert_uint_eq(frames_of[FNV_RDM_ACK], 1);
	fnv_rdm_progress_locked(&x->ep);
	ck_assert(pop(x, &e) && e.ctx == x && !e.err);
	ck_assert_uint_eq(table_reads, 1);	/* no read needed */
	fini_nodes(x, y);
}
END_TEST

/* A slot naming another incarnation of the sender (what the receiver
 * keeps for an earlier endpoint on the same port) acknowledges nothing. */
START_TEST(pull_stale_slot)
{
	struct node *x = calloc(1, sizeof(*x)), *y = calloc(1, sizeof(*y));
	static uint8_t buf[64];
	uint64_t *slot = NULL;
	struct fnv_cqe e;

	meet(x, y, buf);
	x_to_y(x, y, buf, 7);
	/* y's slot for x: x's incarnation and what y took of it */
	for (int i = 0; i < FAKE_EXPORTS; i++) {
		if (!exports[i].used || exports[i].key != y->ep.rdm->acks_key)
			continue;
		for (size_t at = 0; at + 8 <= exports[i].len; at += 8) {
			uint64_t *v = (uint64_t *)(uintptr_t)(exports[i].buf + at);

			if (*v >> 32 == x->ep.rdm->epoch)
				slot = v;
		}
	}
	ck_assert_ptr_nonnull(slot);
	*slot = fnv_rdm_slot(x->ep.rdm->epoch + 1, (uint32_t)*slot);
	fake_now += FNV_RDM_PULL_MS;
	fnv_rdm_progress_locked(&x->ep);
	ck_assert_uint_eq(table_reads, 1);
	ck_assert(!pop(x, &e));		/* read, and not taken */
	fnv_rdm_flush_acks_locked(&y->ep);	/* y's own ack frame */
	fnv_rdm_progress_locked(&x->ep);
	ck_assert(pop(x, &e) && e.ctx == x && !e.err);
	fini_nodes(x, y);
}
END_TEST

/* What a peer puts in an ack's table or before a message's payload is
 * checked where it is used: a slot out of the table, a table cut short,
 * key 0, remote CQ data cut short are each ignored. */
START_TEST(pull_forged_tables)
{
	struct node *x = calloc(1, sizeof(*x)), *y = calloc(1, sizeof(*y));
	static uint8_t buf[64];
	struct fnv_rdm_hdr h = { .type = FNV_RDM_ACK, .flags = FNV_RDM_TABLE };
	struct fnv_rdm_table t = { .key = 0x1234, .slot = FNV_RDM_PEERS };
	struct frame f = { .src_port = 2 };
	struct fnv_peer *p;
	struct fnv_cqe e;
	uint64_t key, dropped;
	uint32_t slot, seq;

	meet(x, y, buf);
	p = fnv_rdm_peer(x->ep.rdm, peer_node, 2, false);
	ck_assert_ptr_nonnull(p);
	key = p->pull_key;
	slot = p->pull_slot;
	ck_assert_uint_ne(key, 0);	/* learnt from y's ack */
	h.epoch = y->ep.rdm->epoch;
	memcpy(f.b, &h, sizeof(h));
	/* a slot past the table */
	memcpy(f.b + sizeof(h), &t, sizeof(t));
	f.len = sizeof(h) + sizeof(t);
	enqueue(1, &f);
	/* a table cut short (a valid slot) */
	t.slot = 1;
	memcpy(f.b + sizeof(h), &t, sizeof(t));
	f.len = sizeof(h) + sizeof(t) - 1;
	enqueue(1, &f);
	/* no key */
	t.key = 0;
	memcpy(f.b + sizeof(h), &t, sizeof(t));
	f.len = sizeof(h) + sizeof(t);
	enqueue(1, &f);
	fnv_rdm_progress_locked(&x->ep);
	ck_assert_uint_eq(p->pull_key, key);
	ck_assert_uint_eq(p->pull_slot, slot);
	/* y's next message, its remote CQ data cut short (4 of its 8
	 * bytes): not taken.  A receive waits for it first: one that found
	 * none would go the unexpected way, where the length a missing
	 * check lets wrap (n - off, near SIZE_MAX) fails the copy's malloc
	 * and so refuses the frame anyway.  And an ack x ignores (for
	 * another incarnation of x) leaves poison in x's frame buffer past
	 * the cut: were the message taken, it would complete, truncated,
	 * with poison for its data and its bytes. */
	memset(buf, 0xee, sizeof(buf));
	post_one(x, buf, 64);
	seq = p->rx_next;
	dropped = x->ep.rdm->dropped_full + x->ep.rdm->dropped_order;
	h = (struct fnv_rdm_hdr){ .type = FNV_RDM_ACK,
				  .epoch = y->ep.rdm->epoch,
				  .ack_epoch = x->ep.rdm->epoch + 1 };
	memcpy(f.b, &h, sizeof(h));
	memset(f.b + sizeof(h), 0xa5, 64);
	f.len = sizeof(h) + 64;
	enqueue(1, &f);
	h = (struct fnv_rdm_hdr){ .type = FNV_RDM_MSG, .flags = FNV_RDM_HAS_DATA,
				  .epoch = y->ep.rdm->epoch, .seq = seq };
	memcpy(f.b, &h, sizeof(h));
	memset(f.b + sizeof(h), 0x11, sizeof(uint64_t) / 2);
	f.len = sizeof(h) + sizeof(uint64_t) / 2;
	enqueue(1, &f);
	fnv_rdm_progress_locked(&x->ep);
	ck_assert(!pop(x, &e));
	ck_assert_uint_eq(p->rx_next, seq);
	/* ignored, not refused for want of room (which the sender resends) */
	ck_assert_uint_eq(x->ep.rdm->dropped_full + x->ep.rdm->dropped_order,
			  dropped);
	for (size_t i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], 0xee);
	/* the real one with that sequence number is, into that receive */
	send64(y, 1, 55, 0x77, y);
	fnv_rdm_progress_locked(&x->ep);
	ck_assert(pop(x, &e));
	check64(&e, buf, 55, 0x77);
	ck_assert_uint_eq(p->rx_next, seq + 1);
	ck_assert(!pop(x, &e));		/* and only it */
	fini_nodes(x, y);
}
END_TEST

START_TEST(pull_fails)
{
	struct node *x = calloc(1, sizeof(*x)), *y = calloc(1, sizeof(*y));
	static uint8_t buf[64];
	struct fnv_cqe e;
	int64_t start;

	meet(x, y, buf);
	table_reads_fail = true;
	/* y defers its ack, x cannot read it: y's ack comes as a frame
	 * after its passes (or the resend's repeat), and x stops saying
	 * it pulls */
	x_to_y(x, y, buf, 9);
	start = fake_now;
	while (!pop(x, &e)) {
		int t = fnv_rdm_timer_ms(&x->ep);

		ck_assert_int_ge(t, 0);
		fake_now += t ? t : 1;
		fnv_rdm_progress_locked(&x->ep);
		fnv_rdm_progress_locked(&y->ep);
		ck_assert(!pop(y, &e));		/* delivered once */
		ck_assert_int_lt(fake_now - start, 1000);
	}
	ck_assert_ptr_eq(e.ctx, x);
	ck_assert_int_eq(e.err, 0);
	ck_assert_uint_eq(table_reads, 1);	/* one failure: no more */
	ck_assert_uint_ge(frames_of[FNV_RDM_ACK], 1);
	/* from now on y acks x's messages with frames at once */
	memset(frames_of, 0, sizeof(frames_of));
	x_to_y(x, y, buf, 10);
	ck_assert_uint_eq(frames_of[FNV_RDM_ACK], 1);
	fnv_rdm_progress_locked(&x->ep);
	ck_assert(pop(x, &e) && e.ctx == x && !e.err);
	ck_assert_uint_eq(table_reads, 1);
	fini_nodes(x, y);
}
END_TEST

/*
 * sread and fi_cntr_wait sleep by fnv_rdm_timer_ms, read some time after
 * the pass that set the timers (a loaded guest: milliseconds).  A timer
 * past by then is due now (0), not none (-1): as none, sread slept its
 * whole timeout with sends in flight and their resend overdue, while the
 * receiver, which had dropped them (its unexpected queue full), waited
 * for that resend with nothing to send (fi-netvm-rdm-test's flood).
 */
START_TEST(timers_overdue)
{
	struct node *x = calloc(1, sizeof(*x)), *y = calloc(1, sizeof(*y));
	static uint8_t buf[64];
	unsigned long reads, sent;
	struct fnv_cqe e;
	int64_t start;

	meet(x, y, buf);
	deaf[2] = true;		/* x's message does not reach y */
	post_one(y, buf, 64);
	send64(x, 2, 12, 0, x);
	fnv_rdm_progress_locked(&x->ep);
	ck_assert_int_eq(fnv_rdm_timer_ms(&x->ep), FNV_RDM_PULL_MS);
	/* the pull past, the resend not yet */
	fake_now += FNV_RDM_PULL_MS + 1;
	ck_assert_int_eq(fnv_rdm_timer_ms(&x->ep), 0);
	/* both past */
	fake_now += FNV_RDM_RTO_MS;
	ck_assert_int_eq(fnv_rdm_timer_ms(&x->ep), 0);
	/* the pass sread then makes pulls and resends */
	reads = table_reads;
	sent = frames_of[FNV_RDM_MSG];
	fnv_rdm_progress_locked(&x->ep);
	ck_assert_uint_eq(table_reads, reads + 1);
	ck_assert_uint_eq(frames_of[FNV_RDM_MSG], sent + 1);
	ck_assert_int_gt(fnv_rdm_timer_ms(&x->ep), 0);
	/* y hears again: sleeping by the timer, each time a little late,
	 * x resends, y takes it, x completes */
	deaf[2] = false;
	start = fake_now;
	while (!pop(x, &e)) {
		int t = fnv_rdm_timer_ms(&x->ep);

		ck_assert_int_ge(t, 0);
		fake_now += t + 3;
		ck_assert_int_eq(fnv_rdm_timer_ms(&x->ep), 0);
		fnv_rdm_progress_locked(&x->ep);
		fnv_rdm_progress_locked(&y->ep);
		ck_assert_int_lt(fake_now - start, 1000);
	}
	ck_assert_ptr_eq(e.ctx, x);
	ck_assert_int_eq(e.err, 0);
	ck_assert(pop(y, &e));
	check64(&e, buf, 12, 0);
	fini_nodes(x, y);
}
END_TEST

START_TEST(cntr_open_refusals)
{
	struct fi_cntr_attr a = { .events = FI_CNTR_EVENTS_COMP,
				  .wait_obj = FI_WAIT_UNSPEC };
	struct fnv_domain dgram = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct fid_cntr *c;

	ck_assert_int_eq(fnv_cntr_open(&dgram.dom, &a, &c, NULL), -FI_ENOSYS);
	a.flags = 1;
	ck_assert_int_eq(fnv_cntr_open(&dom.dom, &a, &c, NULL), -FI_EBADFLAGS);
	a.flags = 0;
	a.events = (enum fi_cntr_events)1;
	ck_assert_int_eq(fnv_cntr_open(&dom.dom, &a, &c, NULL), -FI_ENOSYS);
	a.events = FI_CNTR_EVENTS_COMP;
	a.wait_obj = FI_WAIT_FD;
	ck_assert_int_eq(fnv_cntr_open(&dom.dom, &a, &c, NULL), -FI_ENOSYS);
	a.wait_obj = FI_WAIT_SET;
	ck_assert_int_eq(fnv_cntr_open(&dom.dom, &a, &c, NULL), -FI_ENOSYS);
	/* no attributes: the defaults, FI_WAIT_NONE (nothing to wait with) */
	ck_assert_int_eq(fnv_cntr_open(&dom.dom, NULL, &c, NULL), 0);
	ck_assert_int_eq(fi_cntr_wait(c, 1, 0), -FI_EINVAL);
	ck_assert_int_eq(fi_close(&c->fid), 0);
	ck_assert_int_eq(dom.refs, 0);	/* every open one closed */
}
END_TEST

START_TEST(cntr_calls)
{
	struct node *x, *y;
	char in[8];
	struct iovec iv = { in, sizeof(in) }, ov = { "hello", 5 };
	struct iovec big = { "a longer one", 12 };
	struct fnv_cqe e;
	int ctx;

	two_nodes(&x, &y);
	/* add, set, adderr, seterr: each the count it names */
	ck_assert_int_eq(fi_cntr_add(x->rx, 5), 0);
	ck_assert_int_eq(fi_cntr_add(x->rx, 2), 0);
	ck_assert_int_eq(fi_cntr_adderr(x->rx, 3), 0);
	counts(x->rx, 7, 3);
	ck_assert_int_eq(fi_cntr_set(x->rx, 1), 0);
	ck_assert_int_eq(fi_cntr_seterr(x->rx, 0), 0);
	counts(x->rx, 1, 0);
	ck_assert_int_eq(fi_cntr_set(x->rx, 0), 0);
	/* a receive cancelled completes in error: FI_ECANCELED */
	ck_assert_int_eq(fnv_rdm_post_locked(&x->ep, false, &iv, 1, FI_ADDR_UNSPEC,
					     0, 0, &ctx, 0), 0);
	ck_assert_int_eq(fnv_rdm_cancel_locked(&x->ep, &ctx), 0);
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, FI_ECANCELED);
	counts(x->rx, 0, 1);
	ck_assert_int_eq(fnv_rdm_cancel_locked(&x->ep, &ctx), -FI_ENOENT);
	counts(x->rx, 0, 1);
	/* nothing comes: the wait times out, the counts as they were */
	ck_assert_int_eq(fi_cntr_wait(x->rx, 1, 0), -FI_ETIMEDOUT);
	counts(x->rx, 0, 1);
	/* a message on the wire: the wait's progress takes it */
	ck_assert_int_eq(fnv_rdm_post_locked(&x->ep, false, &iv, 1, FI_ADDR_UNSPEC,
					     0, 0, &ctx, 0), 0);
	ck_assert_int_eq(fnv_rdm_send_locked(&y->ep, FNV_RDM_MSG, &ov, 1, 1, 0, 0,
					     false, NULL, true), 0);
	ck_assert_int_eq(fi_cntr_wait(x->rx, 1, 1000), 0);
	counts(x->rx, 1, 1);
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, 0);
	ck_assert_int_eq(memcmp(in, "hello", 5), 0);
	/* the sender's: fi_cntr_read progresses y, which takes the ack */
	counts(y->tx, 0, 0);
	ck_assert_uint_eq(fi_cntr_read(y->tx), 1);
	ck_assert_uint_eq(fi_cntr_readerr(y->tx), 0);
	/* an error while waiting (a message cut, FI_ETRUNC) ends the wait */
	iv.iov_len = 2;
	ck_assert_int_eq(fnv_rdm_post_locked(&x->ep, false, &iv, 1, FI_ADDR_UNSPEC,
					     0, 0, &ctx, 0), 0);
	ck_assert_int_eq(fnv_rdm_send_locked(&y->ep, FNV_RDM_MSG, &big, 1, 1, 0, 0,
					     false, NULL, true), 0);
	ck_assert_int_eq(fi_cntr_wait(x->rx, 5, 1000), -FI_EAVAIL);
	counts(x->rx, 1, 2);
	ck_assert(pop(x, &e));
	ck_assert_int_eq(e.err, FI_ETRUNC);
	/* nothing more comes: 1000 ms of the test's clock, then timed out */
	ck_assert_int_eq(fi_cntr_wait(x->rx, 2, 1000), -FI_ETIMEDOUT);
	counts(x->rx, 1, 2);
	/* reached already: no wait */
	ck_assert_int_eq(fi_cntr_wait(x->rx, 1, 0), 0);
	free_nodes(x, y);
}
END_TEST

int main(void)
{
	return CHECK_RUN("fnv_rdm", "rdm", 120,
			 lossless, lossy, lossy_remote, pull_pingpong,
			 pull_silent_receiver, pull_stale_slot, pull_forged_tables,
			 pull_fails, timers_overdue, peer_gone, peer_restarts,
			 unexpected_overflow, refusals, rdv_lossless, rdv_lossy,
			 rdv_truncated, rdv_unexpected, rdv_pieces, rdv_read_fails,
			 rdv_peer_gone, rdv_forged, rdv_written, rdv_in_place,
			 rdv_in_place_fallbacks, rdv_written_cut,
			 rdv_written_holes_fail, rdv_write_fails, rdv_write_fallback,
			 rdv_cts_forged, rdv_writer_gone, cntr_open_refusals,
			 cntr_calls);
}
