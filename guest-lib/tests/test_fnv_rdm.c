// SPDX-License-Identifier: MIT
/*
 * Unit tests of the libfabric provider's RDM logic (fi_netvm/fnv_rdm_link.c
 * and fnv_rdm_match.c) on a simulated wire that loses, duplicates and
 * reorders frames, with a clock the test advances: every message arrives
 * once, in order, byte for byte, and every send completes; a peer that
 * never answers is given up (FI_EHOSTUNREACH); a restarted peer (a new
 * incarnation on the same port) starts a new stream; 300 unexpected
 * messages (256 kept, the rest resent) all arrive.  The wire, the AV and
 * the completion queues are stand-ins defined here.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

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
	*node = 0;
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
	*out = (struct fnv_addr){ .magic = FNV_ADDR_MAGIC, .port = (uint16_t)fa };
	return 0;
}

fi_addr_t fnv_av_reverse(const struct fnv_av *av, uint16_t node, uint16_t port)
{
	(void)av;
	(void)node;
	return port;
}

size_t fnv_iov_total(const struct iovec *iov, size_t n)
{
	size_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

int fnv_errno_to_fi(int err)
{
	return -err;
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

/* ---- the test's endpoints ---- */

struct node {
	struct fnv_ep ep;
	struct fnv_cq cq;
	struct fnv_cqe ring[512];
};

static void node_init(struct node *n, uint16_t port)
{
	memset(n, 0, sizeof(*n));
	n->cq.size = 512;
	n->cq.ring = n->ring;
	n->ep.tx_cq = n->ep.rx_cq = &n->cq;
	n->ep.av = (struct fnv_av *)n;	/* never looked into: stand-ins */
	n->ep.enabled = true;
	n->ep.directed = true;
	n->ep.w.port = port;
	ck_assert_int_eq(fnv_rdm_init(&n->ep), 0);
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
		fake_now += 10;
	}
	ck_assert_uint_eq(got, total);
	ck_assert_uint_eq(done, total);
	fnv_rdm_fini(&x->ep);
	fnv_rdm_fini(&y->ep);
	free(x);
	free(y);
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
	/* 100 ms doubling to 3.2 s, 12 resends: about 30 s, not 10 minutes */
	ck_assert_int_lt(fake_now - start, 60000);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &iov, 1, 2, 0, 0,
					     false, NULL, true), -FI_EHOSTUNREACH);
	ck_assert_int_eq(fnv_rdm_timer_ms(&x->ep), -1);
	fnv_rdm_fini(&x->ep);
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
	fnv_rdm_fini(&y->ep);
	node_init(y, 2);
	send_texts(y, x, after, 2);
	fnv_rdm_fini(&x->ep);
	fnv_rdm_fini(&y->ep);
	free(x);
	free(y);
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
	ck_assert_uint_gt(x->ep.rdm->resent, 0);
	fnv_rdm_fini(&x->ep);
	fnv_rdm_fini(&y->ep);
	free(x);
	free(y);
}
END_TEST

START_TEST(refusals)
{
	struct node *x = calloc(1, sizeof(*x));
	uint8_t big[FNV_RDM_MSG_MAX + 1] = { 0 };
	struct iovec iov = { big, sizeof(big) };

	reset_wire(0, 0, 0);
	node_init(x, 1);
	ck_assert_int_eq(fnv_rdm_send_locked(&x->ep, FNV_RDM_MSG, &iov, 1, 2, 0, 0,
					     false, NULL, true), -FI_EMSGSIZE);
	iov.iov_len = 1;
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
	fnv_rdm_fini(&x->ep);
	free(x);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fnv_rdm");
	TCase *tc = tcase_create("rdm");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, lossless);
	tcase_add_test(tc, lossy);
	tcase_add_test(tc, peer_gone);
	tcase_add_test(tc, peer_restarts);
	tcase_add_test(tc, unexpected_overflow);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
