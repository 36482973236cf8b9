// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * netvm-dsm-test: a TreadMarks-like request/reply mix on U-Net with the
 * DSM extensions (docs/dsm.md), between N guests (groups dsm and dsm4 of
 * run-guest-tests.py, which passes the ports between the nodes).
 *
 *   netvm-dsm-test node ME N ROUNDS
 *       opens one endpoint, writes "port P" to /tmp/dsm.info, waits for
 *       the N ports in /tmp/dsm.peers, sets up a channel to every other
 *       node, writes /tmp/dsm.ready, waits for /tmp/dsm.go, then runs
 *       ROUNDS rounds.  In each round every node asks node ME+1 for a page
 *       (4 KiB reply into a reply buffer) and node ME-1 for a diff (2 or 3
 *       pieces plus a header, gathered by the replier, > 1 KiB), serves the
 *       others' requests, and arrives at the barrier of node 0 (a message
 *       that does not interrupt); node 0 releases everyone (one that does).
 *       Some requests leave their reply unregistered and some register too
 *       small a buffer: those replies must arrive the free-buffer way.
 *       Every byte is checked, and the NI's hit and miss counts must be
 *       exactly the expected ones.  Then nodes 0 and 1 check that quiet
 *       messages raise nothing (upcalls on) and an interrupting one does.
 *       Prints "ok - " / "not ok - " lines and a "# " summary.
 *   netvm-dsm-test bench ME 2 ITER
 *       the same setup on two nodes; node 0 asks node 1 for a 4 KiB page
 *       ITER times with the reply buffer registered (zero copy) and ITER
 *       times without (free buffers, copied out), polling for the reply,
 *       and prints the round trips.  Figures only (bench_dsm.py).
 */
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "netvm.h"
#include "guest_tap.h"

#define MAXN		8
#define SEG		(256u * 1024)
#define BUFS		32
#define BUFSZ		2048
#define PAGE		4096u
#define PAGE_BUF	(64u * 1024)	/* page replies land here */
#define DIFF_BUF	(68u * 1024)	/* diff replies land here */
#define STAGE_PAGE	(72u * 1024)	/* the replier's page */
#define STAGE_DIFF	(80u * 1024)	/* header, then pieces 2 KiB apart */
#define QUIET_N		20
#define DIV_N		(BUFS + 8)	/* 1200 B each: the last 8 find no buffer */
#define POLL_MS		20	/* quiet messages are seen at the next look */

enum kind { K_REQ_PAGE = 1, K_REQ_DIFF, K_PAGE, K_DIFF, K_ARRIVE, K_RELEASE,
	    K_QGO, K_QUIET, K_QMORE, K_QLAST, K_QDIV, K_QEND };

struct dsm_hdr {
	uint32_t kind, from, round, id;
};

static struct netvm_unet *u;
static uint8_t *seg;
static unsigned int me, n_nodes;
static int ch_to[MAXN];		/* channel to each node */
static int peer_of[16];		/* node of each channel */
static uint8_t buf[NETVM_UNET_MSG_MAX];
static int bad;

static void fail(const char *what, unsigned int r, unsigned int x)
{
	if (bad++ < 10)
		fprintf(stderr, "node %u round %u: %s (%u)\n", me, r, what, x);
}

static void pattern(uint8_t *p, size_t n, unsigned int a, unsigned int b,
		    unsigned int c)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(a * 131 + b * 17 + c * 7 + i * 13 + (i >> 8));
}

/* The diff node @from sends in round @r: its data pieces' lengths. */
static unsigned int diff_pieces(unsigned int r, uint32_t *len)
{
	len[0] = 700 + (r % 3) * 37;
	len[1] = 500;
	len[2] = 300;
	return r % 2 ? 3 : 2;
}

static void expect_diff(uint8_t *out, unsigned int from, unsigned int r,
			uint32_t *total)
{
	uint32_t len[3], at = sizeof(struct dsm_hdr);
	unsigned int k = diff_pieces(r, len);
	struct dsm_hdr h = { K_DIFF, from, r, 0 };

	memcpy(out, &h, sizeof(h));
	for (unsigned int i = 0; i < k; i++) {
		pattern(out + at, len[i], from, r, 10 + i);
		at += len[i];
	}
	*total = at;
}

static int send_small(unsigned int to, enum kind k, unsigned int r,
		      unsigned int id, unsigned int flags, size_t len)
{
	struct dsm_hdr h = { k, me, r, id };

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &h, sizeof(h));
	pattern(buf + sizeof(h), len - sizeof(h), me, r, k);
	return netvm_unet_sendx(u, ch_to[to], buf, len, flags, 0);
}

/* Answer a request: the page from the staging area, or the diff gathered. */
static void serve(const struct dsm_hdr *q, unsigned int from)
{
	struct netvm_unet_piece pv[4];
	struct dsm_hdr h = { 0, me, q->round, 0 };
	unsigned int n = 1;
	int err;

	if (q->kind == K_REQ_PAGE) {
		h.kind = K_PAGE;
		memcpy(seg + STAGE_PAGE, &h, sizeof(h));
		pattern(seg + STAGE_PAGE + sizeof(h), PAGE - sizeof(h), me,
			q->round, 1);
		pv[0] = (struct netvm_unet_piece){ STAGE_PAGE, PAGE };
	} else {
		uint32_t len[3];
		unsigned int k = diff_pieces(q->round, len);

		h.kind = K_DIFF;
		memcpy(seg + STAGE_DIFF, &h, sizeof(h));
		pv[0] = (struct netvm_unet_piece){ STAGE_DIFF, sizeof(h) };
		for (unsigned int i = 0; i < k; i++, n++) {
			uint32_t off = STAGE_DIFF + 2048 * (i + 1);

			pattern(seg + off, len[i], me, q->round, 10 + i);
			pv[n] = (struct netvm_unet_piece){ off, len[i] };
		}
	}
	err = netvm_unet_sendv(u, ch_to[from], pv, n, NETVM_UNET_REPLY, q->id);
	/* the staging area is reused: wait until the NI has the bytes */
	if (!err)
		err = netvm_unet_flush(u, 30000);
	if (err)
		fail("reply not sent", q->round, (unsigned int)-err);
}

struct round_state {
	unsigned int r, pending, arrivals, released;
	unsigned int hits, misses;	/* expected */
	unsigned int served;
};

static void on_reply(struct round_state *s, const struct netvm_unet_msg *m,
		     const struct dsm_hdr *h, const uint8_t *data)
{
	static uint8_t want[NETVM_UNET_MSG_MAX];
	unsigned int page = h->kind == K_PAGE;
	unsigned int slot = (s->r % 64) * 2 + !page;
	int hit = page ? s->r % 3 != 2 : s->r % 5 != 4;
	uint32_t len;

	if (page) {
		memcpy(want, h, sizeof(*h));
		pattern(want + sizeof(*h), PAGE - sizeof(*h),
			(me + 1) % n_nodes, s->r, 1);
		len = PAGE;
	} else {
		expect_diff(want, (me + n_nodes - 1) % n_nodes, s->r, &len);
	}
	if (h->from != (page ? (me + 1) % n_nodes : (me + n_nodes - 1) % n_nodes) ||
	    h->round != s->r)
		fail("reply from the wrong node or round", s->r, h->from);
	if (!(m->flags & NETVM_UNET_REPLY) || m->reply != slot)
		fail("reply number", s->r, m->reply);
	if (!!(m->flags & NETVM_UNET_HIT) != hit)
		fail(hit ? "expected a hit" : "expected a miss", s->r, slot);
	if (hit && m->seg_off != (page ? PAGE_BUF : DIFF_BUF))
		fail("hit at the wrong offset", s->r, m->seg_off);
	/* the NI disarmed the entry the hit used */
	if (hit && netvm_unet_reply_disarm(u, slot) != 0)
		fail("disarm after a hit used the entry", s->r, slot);
	if (m->flags & NETVM_UNET_NOINTR)
		fail("reply marked quiet", s->r, 0);
	if (m->len != len || memcmp(data, want, len))
		fail(page ? "page bytes" : "diff bytes", s->r, (unsigned int)m->len);
	if (!page && len <= 1024)
		fail("diff not > 1 KiB", s->r, len);
	s->hits += hit;
	s->misses += !hit;
	s->pending--;
}

static void dispatch(struct round_state *s, const struct netvm_unet_msg *m)
{
	const uint8_t *data = m->flags & NETVM_UNET_HIT ? seg + m->seg_off : buf;
	struct dsm_hdr h;
	unsigned int from = m->channel < 16 ? (unsigned int)peer_of[m->channel] : ~0u;

	memcpy(&h, data, sizeof(h));
	if (from >= n_nodes || h.from != from) {
		fail("message from nowhere", s->r, h.from);
		return;
	}
	switch (h.kind) {
	case K_REQ_PAGE:
	case K_REQ_DIFF:
		if (m->flags & (NETVM_UNET_NOINTR | NETVM_UNET_REPLY))
			fail("request flags", s->r, m->flags);
		serve(&h, from);
		s->served++;
		break;
	case K_PAGE:
	case K_DIFF:
		on_reply(s, m, &h, data);
		break;
	case K_ARRIVE: {
		static uint8_t want[600];

		pattern(want, sizeof(want) - sizeof(h), from, s->r, K_ARRIVE);
		if (me || h.round != s->r || !(m->flags & NETVM_UNET_NOINTR) ||
		    m->len != sizeof(want) ||
		    memcmp(data + sizeof(h), want, sizeof(want) - sizeof(h)))
			fail("barrier arrival", s->r, h.round);
		s->arrivals++;
		break;
	}
	case K_RELEASE:
		if (h.round != s->r || from != 0 ||
		    (m->flags & NETVM_UNET_NOINTR))
			fail("release", s->r, h.round);
		s->released = 1;
		break;
	default:
		fail("unexpected message", s->r, h.kind);
	}
}

/* One round; returns 0, or -1 if the endpoint failed. */
static int round_run(struct round_state *s)
{
	unsigned int next = (me + 1) % n_nodes, prev = (me + n_nodes - 1) % n_nodes;
	unsigned int arrived = 0;
	struct netvm_unet_msg m;
	int err;

	s->pending = 2;
	s->arrivals = 0;
	s->released = 0;
	/* the page: registered, but every third round disarmed (a miss) */
	netvm_unet_reply_arm(u, (s->r % 64) * 2, ch_to[next], PAGE_BUF, PAGE);
	if (s->r % 3 == 2 && netvm_unet_reply_disarm(u, (s->r % 64) * 2) != 1)
		fail("disarm of an entry still armed", s->r, 0);
	/* the diff: every fifth round's buffer is too small (a miss) */
	netvm_unet_reply_arm(u, (s->r % 64) * 2 + 1, ch_to[prev], DIFF_BUF,
			     s->r % 5 == 4 ? 1024 : 2048);
	if (send_small(next, K_REQ_PAGE, s->r, (s->r % 64) * 2, 0, 32) ||
	    send_small(prev, K_REQ_DIFF, s->r, (s->r % 64) * 2 + 1, 0, 32))
		return -1;
	while (!s->released) {
		if (!s->pending && !arrived) {
			arrived = 1;
			if (me == 0)
				s->arrivals++;
			else if (send_small(0, K_ARRIVE, s->r, 0,
					    NETVM_UNET_NOINTR, 600))
				return -1;
		}
		if (me == 0 && s->arrivals == n_nodes) {
			for (unsigned int j = 1; j < n_nodes; j++)
				if (send_small(j, K_RELEASE, s->r, 0, 0, 16))
					return -1;
			s->released = 1;
			break;
		}
		err = netvm_unet_recvmsg(u, buf, sizeof(buf), &m, POLL_MS);
		if (err == -ETIMEDOUT)
			continue;	/* a look at the queue: quiet ones */
		if (err) {
			fprintf(stderr, "node %u: recvmsg: %s\n", me,
				netvm_strerror(err));
			return -1;
		}
		dispatch(s, &m);
	}
	return 0;
}

static volatile sig_atomic_t upcalls;

static void on_upcall(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	(void)ctx;
	upcalls++;
}

static int wait_received(uint32_t want)
{
	struct netvm_unet_stats st;

	for (int i = 0; i < 60000; i++) {
		netvm_unet_stats(u, &st);
		if (st.received >= want)
			return 1;
		usleep(1000);
	}
	return 0;
}

static int recv_kind(enum kind k)
{
	struct netvm_unet_msg m;
	struct dsm_hdr h;
	int err = netvm_unet_recvmsg(u, buf, sizeof(buf), &m, 120000);

	memcpy(&h, buf, sizeof(h));
	return err ? err : h.kind == k ? 0 : -EPROTO;
}

/* Node 1 sends quiet messages to node 0, whose upcalls are on. */
static void quiet_phase(void)
{
	struct netvm_unet_dsm_stats d0, d1;
	struct netvm_unet_stats st;
	struct netvm_unet_msg m;
	struct sigaction sa;
	int err, okq = 1;

	if (me == 1) {
		err = recv_kind(K_QGO);
		for (unsigned int i = 0; !err && i < QUIET_N; i++)
			err = send_small(0, K_QUIET, i, 0, NETVM_UNET_NOINTR,
					 i % 2 ? 1200 : 64);
		if (!err)
			err = netvm_unet_flush(u, 30000);
		if (!err)
			err = recv_kind(K_QMORE);
		if (!err)
			err = send_small(0, K_QLAST, 0, 0, 0, 16);
		if (!err)
			err = recv_kind(K_QDIV);
		for (unsigned int i = 0; !err && i < DIV_N; i++) {
			struct dsm_hdr h = { K_QUIET, me, i, 0 };

			memcpy(buf, &h, sizeof(h));
			pattern(buf + sizeof(h), 1200 - sizeof(h), me, i, K_QDIV);
			err = netvm_unet_sendx(u, ch_to[0], buf, 1200,
					       NETVM_UNET_NOINTR |
					       NETVM_UNET_REPLY, 100 + i);
		}
		if (!err)
			err = recv_kind(K_QEND);
		check(!err, "node 1: %d quiet messages and an interrupting one sent to node 0",
		      QUIET_N);
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_upcall;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGRTMIN, &sa, NULL);
	err = netvm_unet_upcall_setup(u, SIGRTMIN, 0);
	netvm_unet_stats(u, &st);
	netvm_unet_dsm_stats(u, &d0);
	if (!err)
		err = send_small(1, K_QGO, 0, 0, 0, 16);
	/*
	 * Not waiting in recv: only an upcall could tell us.  No sleep for a
	 * wrong upcall to show: an upcall needs an event, and the NI (or the
	 * kernel's emulation) counts a message's events before it handles
	 * the next message.  The NI publishes both counts in one status
	 * store, so they are checked here; the interrupting message below
	 * is handled after all QUIET_N, and once it is received the event
	 * count covers them all: exactly one event, its own, and one upcall.
	 */
	okq = !err && wait_received(st.received + QUIET_N);
	netvm_unet_dsm_stats(u, &d1);
	check(okq && upcalls == 0 && d1.events == d0.events &&
	      d1.quiet == d0.quiet + QUIET_N,
	      "node 0: %d quiet messages queued with upcalls on: %d upcalls, %u NI events, %u quiet (no interrupt)",
	      QUIET_N, (int)upcalls, d1.events - d0.events, d1.quiet - d0.quiet);
	err = send_small(1, K_QMORE, 0, 0, 0, 16);
	okq = !err && wait_received(st.received + QUIET_N + 1);
	for (int i = 0; i < 30000 && !upcalls; i++)
		usleep(1000);
	netvm_unet_dsm_stats(u, &d1);
	check(okq && upcalls == 1 && d1.events == d0.events + 1,
	      "node 0: the interrupting message after them raises one upcall (%d, %u NI events)",
	      (int)upcalls, d1.events - d0.events);
	netvm_unet_upcalls(u, 0);
	for (unsigned int i = 0; i <= QUIET_N; i++) {
		struct dsm_hdr h;
		size_t len = i == QUIET_N ? 16 : i % 2 ? 1200 : 64;
		static uint8_t want[1200];

		err = netvm_unet_recvmsg(u, buf, sizeof(buf), &m, 0);
		memcpy(&h, buf, sizeof(h));
		pattern(want, len - sizeof(h), 1, i == QUIET_N ? 0 : i,
			i == QUIET_N ? K_QLAST : K_QUIET);
		if (err || m.len != len || h.round != (i == QUIET_N ? 0 : i) ||
		    !!(m.flags & NETVM_UNET_NOINTR) != (i < QUIET_N) ||
		    memcmp(buf + sizeof(h), want, len - sizeof(h))) {
			fail("quiet message", i, err ? (unsigned int)-err : m.flags);
			okq = 0;
		}
	}
	check(okq, "node 0: all %d quiet messages and the last one received in order, flags and bytes right",
	      QUIET_N + 1);
	/* quiet replies with no free buffer left: diverted, flags kept */
	netvm_unet_stats(u, &st);
	err = send_small(1, K_QDIV, 0, 0, 0, 16);
	okq = !err;
	for (int i = 0; okq && i < 60000; i++) {
		struct netvm_unet_stats s2;

		netvm_unet_stats(u, &s2);
		if (s2.received + s2.diverted >= st.received + st.diverted + DIV_N)
			break;
		usleep(1000);
	}
	for (unsigned int i = 0; okq && i < DIV_N; i++) {
		static uint8_t want[1200];
		struct dsm_hdr h;

		err = netvm_unet_recvmsg(u, buf, sizeof(buf), &m, 30000);
		memcpy(&h, buf, sizeof(h));
		pattern(want, sizeof(want) - sizeof(h), 1, i, K_QDIV);
		if (err || m.len != sizeof(want) || h.round != i ||
		    m.flags != (NETVM_UNET_NOINTR | NETVM_UNET_REPLY) ||
		    m.reply != 100 + i ||
		    memcmp(buf + sizeof(h), want, sizeof(want) - sizeof(h))) {
			fail("diverted reply", i, err ? (unsigned int)-err : m.flags);
			okq = 0;
		}
	}
	{
		struct netvm_unet_stats s2;

		netvm_unet_stats(u, &s2);
		check(okq && s2.diverted > st.diverted,
		      "node 0: %d quiet replies with buffers running out: %u diverted to the driver, all in order with NOINTR, REPLY and their numbers kept",
		      DIV_N, s2.diverted - st.diverted);
	}
	send_small(1, K_QEND, 0, 0, 0, 16);
	netvm_unet_flush(u, 30000);
}

/* ---- benchmark (bench_dsm.py): figures only ---- */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int bench_serve(void)
{
	struct netvm_unet_msg m;
	struct dsm_hdr h;
	int err;

	for (;;) {
		err = netvm_unet_recvmsg(u, buf, sizeof(buf), &m, 120000);
		if (err)
			return 1;
		memcpy(&h, buf, sizeof(h));
		if (h.kind == K_QEND)
			return bad ? 1 : 0;
		serve(&h, 0);
	}
}

static int bench_client(unsigned int iters)
{
	static uint64_t rtt[100000];
	struct netvm_unet_msg m;
	int err = 0;

	if (iters > 100000)
		iters = 100000;
	for (int hit = 1; hit >= 0 && !err; hit--) {
		for (unsigned int i = 0; i < iters + 20 && !err; i++) {
			uint64_t t0;

			if (hit)
				netvm_unet_reply_arm(u, 0, ch_to[1], PAGE_BUF,
						     PAGE);
			t0 = now_ns();
			err = send_small(1, K_REQ_PAGE, i, 0, 0, 32);
			while (!err && (err = netvm_unet_recvmsg(u, buf,
					sizeof(buf), &m, 0)) == -EAGAIN)
				err = 0;
			if (i >= 20)	/* the first ones warm up */
				rtt[i - 20] = now_ns() - t0;
			if (!err && (m.len != PAGE ||
				     !!(m.flags & NETVM_UNET_HIT) != hit))
				err = -EPROTO;
		}
		if (err)
			break;
		qsort(rtt, iters, sizeof(rtt[0]), cmp_u64);
		printf("4 KiB page request/reply, %-34s min %6.1f  median %6.1f  p99 %6.1f us (%u)\n",
		       hit ? "reply table (zero copy):" :
		       "free-buffer path (copied out):",
		       rtt[0] / 1e3, rtt[iters / 2] / 1e3,
		       rtt[iters * 99 / 100] / 1e3, iters);
	}
	if (err)
		fprintf(stderr, "bench: %s\n", netvm_strerror(err));
	send_small(1, K_QEND, 0, 0, 0, 16);
	netvm_unet_flush(u, 30000);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct netvm_unet_dsm_stats d0, d1;
	struct round_state s = { 0 };
	unsigned int ports[MAXN], rounds;
	char text[256], *p;
	struct netvm *nv;
	int err;

	if (argc != 5 || (strcmp(argv[1], "node") && strcmp(argv[1], "bench"))) {
		fprintf(stderr, "usage: netvm-dsm-test node|bench ME N ROUNDS\n");
		return 2;
	}
	me = (unsigned int)atoi(argv[2]);
	n_nodes = (unsigned int)atoi(argv[3]);
	rounds = (unsigned int)atoi(argv[4]);
	if (n_nodes < 2 || n_nodes > MAXN || me >= n_nodes || !rounds) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	err = netvm_open(0, &nv);
	if (!err)
		err = netvm_unet_open(nv, SEG, BUFSZ, BUFS, &u);
	if (err) {
		fprintf(stderr, "open: %s\n", netvm_strerror(err));
		return 1;
	}
	seg = netvm_unet_segment(u, NULL, NULL);
	if (getenv("NETVM_UNET_EMULATE"))
		check(netvm_unet_emulated(u) == 1 && netvm_unet_port(u) >= 16,
		      "node %u: a kernel-emulated endpoint (virtual port %d): the driver plays the NI",
		      me, netvm_unet_port(u));
	snprintf(text, sizeof(text), "port %d\n", netvm_unet_port(u));
	write_file("/tmp/dsm.info", text);
	if (wait_file("/tmp/dsm.peers", text, sizeof(text), 300)) {
		fprintf(stderr, "no peers\n");
		return 1;
	}
	p = text;
	for (unsigned int j = 0; j < n_nodes; j++)
		ports[j] = (unsigned int)strtoul(p, &p, 10);
	for (unsigned int j = 0; j < n_nodes; j++) {
		unsigned int lo = j < me ? j : me, hi = j < me ? me : j;

		if (j == me)
			continue;
		ch_to[j] = netvm_unet_channel(u, j, ports[j],
					      0x5000 + lo * 16 + hi);
		if (ch_to[j] < 0 || ch_to[j] >= 16) {
			fprintf(stderr, "channel to %u: %s\n", j,
				netvm_strerror(ch_to[j]));
			return 1;
		}
		peer_of[ch_to[j]] = (int)j;
	}
	write_file("/tmp/dsm.ready", "ready\n");
	if (wait_file("/tmp/dsm.go", text, sizeof(text), 300))
		return 1;
	if (!strcmp(argv[1], "bench")) {
		err = n_nodes != 2 ? 2 : me ? bench_serve() : bench_client(rounds);
		netvm_unet_close(u);
		netvm_close(nv);
		return err;
	}
	netvm_unet_dsm_stats(u, &d0);
	for (s.r = 0; s.r < rounds; s.r++)
		if (round_run(&s))
			break;
	netvm_unet_dsm_stats(u, &d1);
	check(s.r == rounds && !bad,
	      "node %u: %u rounds of requests, 4 KiB page replies, gathered diff replies (2-3 pieces, > 1 KiB) and barriers among %u nodes, byte-verified",
	      me, rounds, n_nodes);
	check(d1.reply_hits - d0.reply_hits == s.hits &&
	      d1.reply_misses - d0.reply_misses == s.misses && s.hits && s.misses,
	      "node %u: reply table: %u hits (zero copy) and %u misses (disarmed, too small), as expected (NI: %u, %u)",
	      me, s.hits, s.misses, d1.reply_hits - d0.reply_hits,
	      d1.reply_misses - d0.reply_misses);
	check(d1.quiet - d0.quiet == (me ? 0 : (n_nodes - 1) * rounds),
	      "node %u: %u quiet (non-interrupting) messages received (node 0: the barrier arrivals)",
	      me, d1.quiet - d0.quiet);
	printf("# dsm node %u: %u rounds, %u requests served, %u hits, %u misses, %u quiet, %u NI events\n",
	       me, rounds, s.served, d1.reply_hits - d0.reply_hits,
	       d1.reply_misses - d0.reply_misses, d1.quiet - d0.quiet,
	       d1.events - d0.events);
	if (me < 2 && s.r == rounds)
		quiet_phase();
	err = netvm_unet_flush(u, 30000);
	netvm_unet_close(u);
	netvm_close(nv);
	return failures || bad || err ? 1 : 0;
}
