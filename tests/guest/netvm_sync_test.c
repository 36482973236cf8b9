// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm-sync-test: libnetvm on N guests at once (2 or 4), one process per
 * node, all started together by tests/guest/test_lib.py:
 *
 *   netvm-sync-test RANK NODE0 NODE1 ...
 *
 * Every process registers port 1, joins a sync group of all of them and
 * runs the phases below, separated by the group's barriers.  One
 * "ok - ..." / "not ok - ..." line per check; exit 1 if any failed.
 *
 *   data     all pairs: each variant of write (plain + flushW, F, N +
 *            flushRW, FN) of 5000 B at an unaligned offset crossing a
 *            page, read and readF back; the receiver checks its memory
 *            and the notifications counted; atomics on every peer;
 *            export/import lookups and info
 *
 * Shared counters live in rank 0's "data".  The NI has no loopback, so
 * rank 0 updates them with its CPU (sh_*), and only where that cannot
 * race with an NI atomic: inside the critical section under test, or
 * where rank 0 does not take part.
 *   sync     MCS lock, semaphore, wait queue, monitor (bounded buffer),
 *            each with its mutual exclusion or wake-ups checked through
 *            remote counters; a channel ring (rank r -> r + 1)
 *   notf     pairs (even sender, odd receiver): handlers called exactly
 *            once per event, events pending at arm time, disarm; spin;
 *            one-shot notification queue with its source; bad numbers
 *   errors   pairs: notification 0, offset past the end, a bad key (the
 *            export re-created), a closed peer (endpoint gone): each
 *            gives its error and the receiver finds its memory unchanged
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "guest_tap.h"
#include "netvm.h"
#include "netvm_sync.h"

#define TMO		120000		/* ms: any wait */
#define SLOT		32768		/* per writer in "data": 4 variants */
#define VSLOT		8192
#define XFER		5000
#define XOFF		3		/* unaligned, crosses a page */
#define W_ATOM		(8 * SLOT)	/* words in rank 0's "data" */
#define W_INSIDE	(W_ATOM + 0)
#define W_COUNT		(W_ATOM + 4)
#define W_WOKEN		(W_ATOM + 8)
#define W_BUF		(W_ATOM + 12)
#define W_CONSUMED	(W_ATOM + 16)
#define W_INCR		(W_ATOM + 20)
#define W_HANDLER	(W_ATOM + 24)
#define W_PEER(r)	(W_ATOM + 64 + 4 * (r))	/* each rank's word */
#define DATA_SIZE	(W_ATOM + 4096)
#define ERR_OFF		(W_ATOM + 2048)	/* 1 KiB left alone by the writers */
#define ERR_LEN		1024
#define END_LEN		64		/* the last bytes: the past-the-end write's aim */
#define GONE_PORT	3		/* after ours (1) and the group's proxy (2) */

static uint8_t data[DATA_SIZE] __attribute__((aligned(4096)));
static uint8_t src[3 * 4096 + XFER] __attribute__((aligned(4096)));
static uint8_t victim[8192] __attribute__((aligned(4096)));
static uint8_t gone[4096] __attribute__((aligned(4096)));

static struct netvm *nv;
static struct netvm_sync *grp;
static struct netvm_sync_member mem[8];
static unsigned int me, n;
static int seg[8];
static char rank_prefix[24];	/* the TAP lines say whose they are */

static void die(const char *what, int err)
{
	printf("not ok - rank %u: %s: %s\n", me, what, netvm_strerror(err));
	exit(1);
}

static void barrier(void)
{
	int err = netvm_sync_barrier(grp);

	if (err)
		die("barrier", err);
}

static uint8_t pat(unsigned int from, unsigned int to, unsigned int i)
{
	return (uint8_t)((from * 31 + to * 7 + i * 13 + (i >> 8)) ^ 0x5c);
}

static uint32_t local_word(uint32_t off)
{
	return __atomic_load_n((uint32_t *)(data + off), __ATOMIC_ACQUIRE);
}

/* ---- data ---- */

static void phase_data(void)
{
	struct netvm_segment si;
	uint32_t old, p, i, v, off;
	uint8_t *back = src + 2 * 4096 + 1;
	int err, e2, bad;

	for (p = 0; p < n; p++) {
		if (p == me)
			continue;
		for (i = 0; i < XFER; i++)
			src[1 + i] = pat(me, p, i);
		for (v = 0; v < 4; v++) {
			off = me * SLOT + v * VSLOT + XOFF;
			switch (v) {
			case 0:
				err = netvm_write(nv, seg[p], off, src + 1, XFER);
				e2 = netvm_flushW(nv);
				break;
			case 1:
				err = netvm_writeF(nv, seg[p], off, src + 1, XFER);
				e2 = 0;
				break;
			case 2:
				err = netvm_writeN(nv, seg[p], off, src + 1, XFER, 10);
				e2 = netvm_flushRW(nv);
				break;
			default:
				err = netvm_writeFN(nv, seg[p], off, src + 1, XFER, 10);
				e2 = 0;
				break;
			}
			check(!err && !e2, "write variant %u (%s) of %u B to rank %u (%s)", v,
			      (const char *[]){ "write+flushW", "writeF", "writeN+flushRW",
					        "writeFN" }[v], XFER, p,
			      netvm_strerror(err ? err : e2));
			memset(back, 0, XFER);
			err = v % 2 ? netvm_readF(nv, seg[p], off, back, XFER) :
				      netvm_read(nv, seg[p], off, back, XFER);
			e2 = v % 2 ? 0 : netvm_flushR(nv);
			check(!err && !e2 && !memcmp(back, src + 1, XFER),
			      "%s of rank %u gives the bytes written back",
			      v % 2 ? "readF" : "read + flushR", p);
		}

		/* atomics on the peer's word for us */
		err = netvm_swap(nv, seg[p], W_PEER(me), 5, &old);
		check(!err && old == 0, "swap on rank %u: old 0 (%u)", p, old);
		err = netvm_incr(nv, seg[p], W_PEER(me), &old);
		check(!err && old == 5, "incr: old 5 (%u)", old);
		err = netvm_decr(nv, seg[p], W_PEER(me), &old);
		check(!err && old == 6, "decr: old 6 (%u)", old);
		err = netvm_cswap(nv, seg[p], W_PEER(me), 4, 9, &old);
		check(!err && old == 5, "cswap(4 -> 9) fails: old 5 (%u)", old);
		err = netvm_cswap(nv, seg[p], W_PEER(me), 5, 0, &old);
		check(!err && old == 5, "cswap(5 -> 0) succeeds: old 5 (%u)", old);
		err = netvm_testandset(nv, seg[p], W_PEER(me), &old);
		e2 = netvm_testandset(nv, seg[p], W_PEER(me), &v);
		check(!err && !e2 && old == 0 && v == 1, "testandset: 0 then 1 (%u %u)", old, v);
	}
	if (me) {	/* concurrent NI atomics: not rank 0's CPU */
		for (err = 0, i = 0; i < 10 && !err; i++)
			err = netvm_incr(nv, seg[0], W_INCR, &old);
		check(!err, "10 incr on rank 0 (%s)", netvm_strerror(err));
	}
	p = (me + 1) % n;
	check(netvm_export_lookup(nv, "data", NULL) >= 0 &&
	      netvm_import_lookup(nv, mem[p].node, 1, "data") == seg[p] &&
	      netvm_import_info(nv, seg[p], &si) == 0 && si.len == DATA_SIZE &&
	      si.node == mem[p].node && si.port == 1,
	      "export_lookup, import_lookup and import_info agree");
	barrier();

	/* what the others wrote here, and their notifications */
	for (p = 0; p < n; p++) {
		if (p == me)
			continue;
		for (bad = 0, v = 0; v < 4; v++) {
			off = p * SLOT + v * VSLOT + XOFF;
			for (i = 0; i < XFER; i++)
				bad += data[off + i] != pat(p, me, i);
			bad += data[off - 1] != 0 || data[off + XFER] != 0;
		}
		check(!bad, "the 4 x %u B from rank %u are in place, neighbours untouched (%d bad)",
		      XFER, p, bad);
		check(local_word(W_PEER(p)) == 1, "rank %u's atomics left 1 in its word (%u)",
		      p, local_word(W_PEER(p)));
	}
	err = netvm_notf_test(nv, 10);
	check(err == (int)(2 * (n - 1)), "notification 10 counted %u times (%d)", 2 * (n - 1), err);
	while (netvm_notf_ack(nv, 10) > 0)
		;
	if (me == 0)
		check(local_word(W_INCR) == 10 * (n - 1), "rank 0: the incr word is %u (%u)",
		      10 * (n - 1), local_word(W_INCR));
	barrier();
}

/* ---- sync ---- */

/* Shared words at rank 0: its CPU there, the NI elsewhere (see top). */
static int sh_add(uint32_t off, int d, uint32_t *old)
{
	if (me == 0) {
		*old = __atomic_fetch_add((uint32_t *)(data + off), (uint32_t)d,
					  __ATOMIC_SEQ_CST);
		return 0;
	}
	return d > 0 ? netvm_incr(nv, seg[0], off, old) : netvm_decr(nv, seg[0], off, old);
}

static int sh_read(uint32_t off, uint32_t *v)
{
	int err = 0;

	if (me == 0)
		*v = local_word(off);
	else if (!(err = netvm_readF(nv, seg[0], off, src, 4)))
		memcpy(v, src, 4);
	return err;
}

static int sh_write(uint32_t off, uint32_t v)
{
	if (me == 0) {
		__atomic_store_n((uint32_t *)(data + off), v, __ATOMIC_SEQ_CST);
		return 0;
	}
	return netvm_writeF(nv, seg[0], off, &v, 4);
}

/* In a critical section: nobody else inside; count it. */
static void inside_check(uint32_t *bad)
{
	uint32_t old;

	if (sh_add(W_INSIDE, 1, &old) || old != 0)
		(*bad)++;
	usleep(2000);		/* widen the window a second holder would hit */
	if (sh_add(W_COUNT, 1, &old) || sh_add(W_INSIDE, -1, &old))
		(*bad)++;
}

static void phase_sync(void)
{
	struct netvm_sync_obj lock, sem, wq, mon, notempty, notfull;
	uint32_t i, bad = 0, v, old;
	int err = 0, r;

	/* MCS */
	netvm_mcs_init(grp, &lock, n - 1, 0);
	for (i = 0; i < 15 && !err; i++) {
		err = netvm_mcs_acquire(&lock);
		if (!err)
			inside_check(&bad);
		if (!err)
			err = netvm_mcs_release(&lock);
	}
	check(!err && !bad, "MCS lock: 15 critical sections, never two inside (%s, %u)",
	      netvm_strerror(err), bad);
	check(netvm_mcs_release(&lock) == -EPERM, "release of a lock not held: -EPERM");
	barrier();
	if (me == 0)
		check(local_word(W_COUNT) == 15 * n && local_word(W_INSIDE) == 0,
		      "MCS: count %u (%u)", 15 * n, local_word(W_COUNT));
	barrier();

	/* binary semaphore */
	netvm_sem_init(grp, &sem, 1 % n, 1, 1);
	barrier();
	for (i = 0; i < 10 && !err; i++) {
		r = netvm_sem_wait(&sem);
		err = r < 0 ? r : 0;
		if (!err)
			inside_check(&bad);
		r = err ? 0 : netvm_sem_signal(&sem);
		err = r < 0 ? r : err;
	}
	check(!err && !bad, "semaphore(1): 10 waits/signals, never two inside (%s, %u)",
	      netvm_strerror(err), bad);
	barrier();
	if (me == 0)
		check(local_word(W_COUNT) == 25 * n, "semaphore: count %u (%u)", 25 * n,
		      local_word(W_COUNT));

	/* wait queue: everyone but 0 waits, 0 wakes them */
	netvm_wq_init(grp, &wq, n - 1, 2);
	if (me)
		err = netvm_wq_insert(&wq);
	barrier();
	if (me) {
		if (!err)
			err = netvm_wq_wait(&wq);
		if (!err)	/* rank 0 only reads it */
			err = netvm_incr(nv, seg[0], W_WOKEN, &old);
		check(!err, "wait queue: woken (%s)", netvm_strerror(err));
	} else {
		uint64_t tries = 0;

		for (v = 0; local_word(W_WOKEN) < n - 1 && tries < 2000000; tries++) {
			r = netvm_wq_remove(&wq);
			if (r < 0) {
				err = r;
				break;
			}
			v += r;
			if (!r)
				usleep(1000);
		}
		check(!err && local_word(W_WOKEN) == n - 1 && v <= n - 1,
		      "wait queue: %u waiters woken by %u removes (%s)", n - 1, v,
		      netvm_strerror(err));
	}
	barrier();

	/* monitor: even ranks produce, odd consume, through a buffer of 1 */
	netvm_mcs_init(grp, &mon, 0, 3);
	netvm_wq_init(grp, &notempty, 1 % n, 4);
	netvm_wq_init(grp, &notfull, 0, 5);
	for (i = 0; i < 6 && !err; i++) {
		int producer = me % 2 == 0;

		err = netvm_mon_enter(&mon);
		for (;;) {
			if (!err)
				err = sh_read(W_BUF, &v);
			if (err || (producer ? v == 0 : v == 1))
				break;
			err = netvm_cond_wait(&mon, producer ? &notfull : &notempty);
		}
		if (!err)
			err = sh_write(W_BUF, producer);
		if (!err && !producer)
			err = sh_add(W_CONSUMED, 1, &old);
		if (!err) {
			r = netvm_cond_signal(&mon, producer ? &notempty : &notfull);
			err = r < 0 ? r : 0;
		}
		if (!err)
			err = netvm_mon_exit(&mon);
	}
	check(!err, "monitor: 6 items %s (%s)", me % 2 ? "consumed" : "produced",
	      netvm_strerror(err));
	barrier();
	if (me == 0)
		check(local_word(W_CONSUMED) == 6 * (n / 2) && local_word(W_BUF) == 0,
		      "monitor: %u consumed, buffer empty (%u, %u)", 6 * (n / 2),
		      local_word(W_CONSUMED), local_word(W_BUF));
	barrier();
}

static void phase_chan(void)
{
	const struct netvm_chan_cfg cfg = {
		.name = "ring", .nbuf = 4, .msg_max = 3000, .refill = 2,
		.sent_notf = 20, .repl_notf = 21, .timeout_ms = TMO,
	};
	struct netvm_chan *out, *in;
	unsigned int next = (me + 1) % n, prev = (me + n - 1) % n, i, j, bad = 0;
	const uint8_t *m;
	size_t len;
	int err;

	err = netvm_chan_open_send(nv, mem[next].node, 1, &cfg, &out);
	if (!err)
		err = netvm_chan_open_recv(nv, mem[prev].node, 1, &cfg, &in);
	if (err)
		die("chan_open", err);
	for (i = 0; i < 30 && !err; i++) {
		size_t sz = (i * 613) % 3000 + 1;

		for (j = 0; j < sz; j++)
			src[j] = pat(me, next, i + j);
		err = netvm_chan_send(out, src, sz);
		if (!err)
			err = netvm_chan_recv(in, (const void **)&m, &len);
		if (!err) {
			bad += len != sz;
			for (j = 0; j < len; j++)
				bad += m[j] != pat(prev, me, i + j);
		}
	}
	check(!err && !bad, "channel: 30 messages of 1..3000 B to rank %u and from rank %u, "
	      "byte-verified (%s, %u bad)", next, prev, netvm_strerror(err), bad);
	check(netvm_chan_send(out, src, 3001) == -EMSGSIZE &&
	      netvm_chan_recv(out, (const void **)&m, &len) == -EINVAL,
	      "channel: oversized send -EMSGSIZE, receive on a sender -EINVAL");
	barrier();
	check(netvm_chan_close(out) == 0 && netvm_chan_close(in) == 0, "channels closed");
	barrier();
}

/* ---- notifications (pairs) ---- */

static int h_count[1024];

static void handler(struct netvm *h, uint32_t notf, void *arg)
{
	(void)h;
	(void)arg;
	__atomic_add_fetch(&h_count[notf], 1, __ATOMIC_SEQ_CST);
}

/* The handler's calls of notf once there are at least want (30 s at most). */
static int wait_count(uint32_t notf, int want)
{
	int i;

	for (i = 0; i < 3000 && __atomic_load_n(&h_count[notf], __ATOMIC_SEQ_CST) < want; i++)
		usleep(10000);
	return __atomic_load_n(&h_count[notf], __ATOMIC_SEQ_CST);
}

static void phase_notf(int peer, int sender)
{
	struct netvm_notf e;
	uint32_t i;
	int err = 0, c;

	if (sender) {
		for (i = 0; i < 3 && !err; i++)	/* before the receiver arms 31 */
			err = netvm_writeFN(nv, seg[peer], W_HANDLER, &i, 4, 31);
		check(!err, "3 notifications 31 sent (%s)", netvm_strerror(err));
	} else {
		check(netvm_notf_arm(nv, 30, handler, NULL) == 0, "arm 30");
		check(netvm_notf_arm(nv, 30, handler, NULL) == -EBUSY, "arm 30 again: -EBUSY");
		check(netvm_notf_arm(nv, 0, handler, NULL) == -EINVAL &&
		      netvm_notf_arm(nv, 1024, handler, NULL) == -EINVAL &&
		      netvm_notf_arm(nv, 33, NULL, NULL) == -EINVAL,
		      "arm 0, 1024, or without a handler: -EINVAL");
		check(netvm_notf_ack(nv, 30) == -EBUSY && netvm_notf_wait(nv, 30, 0) == -EBUSY,
		      "ack/wait of an armed number: -EBUSY");
		check(netvm_notf_test(nv, 0) == -EINVAL && netvm_notf_wait(nv, 1024, 10) == -EINVAL &&
		      netvm_notf_spin(nv, 2000, 10) == -EINVAL,
		      "test 0, wait 1024, spin 2000: -EINVAL");
		check(netvm_notf_ack(nv, 33) == -EAGAIN, "ack with nothing pending: -EAGAIN");
		check(netvm_notf_spin(nv, 33, 50) == -ETIMEDOUT &&
		      netvm_notf_wait(nv, 33, 50) == -ETIMEDOUT,
		      "spin/wait with nothing coming: -ETIMEDOUT");
	}
	barrier();
	if (sender) {
		for (i = 0; i < 25 && !err; i++)
			err = netvm_writeFN(nv, seg[peer], W_HANDLER, &i, 4, 30);
		check(!err, "25 notifying writes with 30 (%s)", netvm_strerror(err));
	} else {
		check(netvm_notf_test(nv, 31) == 3, "3 events of 31 pending before arming (%d)",
		      netvm_notf_test(nv, 31));
		check(netvm_notf_arm(nv, 31, handler, NULL) == 0, "arm 31");
		/* armed last: the handler thread takes the armed numbers in
		 * the order they were armed, 29 after 30 and 31 */
		check(netvm_notf_arm(nv, 29, handler, NULL) == 0, "arm 29 (the marker)");
	}
	barrier();
	if (!sender) {
		wait_count(30, 25);
		wait_count(31, 3);
	}
	/*
	 * "No extra call" without a sleep: once the receiver has seen the
	 * calls it wants, one more notification, 29, comes after them.  The
	 * handler thread calls 29 only after it has left 30's and 31's loops
	 * (no event of theirs pending): a call too many would come first.
	 */
	barrier();
	if (sender) {
		err = netvm_writeFN(nv, seg[peer], W_HANDLER, &i, 4, 29);
		check(!err, "the marker 29 sent (%s)", netvm_strerror(err));
	} else {
		c = wait_count(29, 1);
		check(c == 1, "handler of the marker 29 called once (%d)", c);
		c = __atomic_load_n(&h_count[30], __ATOMIC_SEQ_CST);
		check(c == 25, "handler of 30 called exactly 25 times (%d)", c);
		c = __atomic_load_n(&h_count[31], __ATOMIC_SEQ_CST);
		check(c == 3, "handler of 31 called for the 3 events pending at arm time (%d)", c);
		check(netvm_notf_test(nv, 30) == 0, "all 25 acknowledged");
		check(netvm_notf_disarm(nv, 30) == 0 && netvm_notf_disarm(nv, 30) == -ENOENT,
		      "disarm 30; again: -ENOENT");
	}
	barrier();
	if (sender) {
		err = netvm_writeFN(nv, seg[peer], W_HANDLER, &i, 4, 30);
		if (!err)
			err = netvm_writeFN(nv, seg[peer], W_HANDLER, &i, 4, 32);
		if (!err)
			err = netvm_writeFN(nv, seg[peer], W_HANDLER, &i, 4, 5000);
		check(!err, "30, 32 and one-shot 5000 sent (%s)", netvm_strerror(err));
	} else {
		c = netvm_notf_spin(nv, 32, TMO);
		check(c == 1 && netvm_notf_ack(nv, 32) == 0, "notf_spin sees 32 (%d)", c);
		c = netvm_notf_wait(nv, 30, TMO);
		check(c == 1 && h_count[30] == 25 && netvm_notf_ack(nv, 30) == 0,
		      "after disarm 30 is pending, not handled (%d, %d calls)", c, h_count[30]);
		err = netvm_notfq_wait(nv, TMO, &e);
		while (!err && e.notf != 5000)	/* skip 30 and 32's entries */
			err = netvm_notfq_wait(nv, TMO, &e);
		check(!err && e.src_node == mem[peer].node && e.src_port == 1,
		      "one-shot 5000 from node %u port 1 in the queue (%s, node %u port %u)",
		      mem[peer].node, netvm_strerror(err), e.src_node, e.src_port);
		err = netvm_notfq_remove(nv, &e);
		check(err == -EAGAIN, "queue empty: -EAGAIN (%s, %u)", netvm_strerror(err),
		      err ? 0 : e.notf);
		check(netvm_notf_disarm(nv, 31) == 0 && netvm_notf_disarm(nv, 29) == 0,
		      "disarm 31 and 29");
	}
	barrier();
}

/* ---- errors (pairs) ---- */

static int untouched(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

static void phase_errors(int peer, int sender)
{
	struct netvm *nv2 = NULL;
	int vseg = -1, gseg = -1, err, h = -1;

	memset(src, 0xee, 4096);
	if (!sender) {
		memset(data + ERR_OFF, 0xa5, ERR_LEN);
		memset(data + DATA_SIZE - END_LEN, 0xa5, END_LEN);
		memset(victim, 0x5a, sizeof(victim));
		memset(gone, 0x3c, sizeof(gone));
		h = netvm_export(nv, "victim", victim, sizeof(victim), 0, NULL);
		check(h >= 0, "export victim");
		err = netvm_open(0, &nv2);
		if (!err)
			err = netvm_register(nv2, NETVM_PORT_ANY, 0);
		check(err == GONE_PORT, "another endpoint: port %d (%d)", GONE_PORT, err);
		err = netvm_export(nv2, "gone", gone, sizeof(gone), 0, NULL);
		check(err >= 0, "export gone on port %d", GONE_PORT);
	}
	barrier();
	if (sender) {
		vseg = netvm_import(nv, mem[peer].node, 1, "victim");
		gseg = netvm_import(nv, mem[peer].node, GONE_PORT, "gone");
		check(vseg >= 0 && gseg >= 0, "import victim and gone (%d %d)", vseg, gseg);
		err = netvm_writeN(nv, seg[peer], ERR_OFF, src, 64, 0);
		check(err == -EINVAL, "writeN with notification 0: -EINVAL (%s)",
		      netvm_strerror(err));
		err = netvm_writeFN(nv, seg[peer], DATA_SIZE - 2, src, 4, 12);
		check(err == -ERANGE, "write past the end of the import: -ERANGE (%s)",
		      netvm_strerror(err));
		err = netvm_readF(nv, seg[peer], DATA_SIZE, src, 1);
		check(err == -ERANGE, "read at the end: -ERANGE");
		check(netvm_writeF(nv, 63, 0, src, 4) == -EBADF, "bad segment: -EBADF");
	}
	barrier();
	if (!sender) {
		/* a new key for the same memory: the sender's import is stale */
		check(netvm_unexport(nv, h) == 0 &&
		      netvm_export(nv, "victim", victim, sizeof(victim), 0, NULL) >= 0,
		      "victim re-exported (new key)");
		check(netvm_unregister(nv2) == 0 && netvm_unregister(nv2) == -ENXIO &&
		      netvm_ep_fd(nv2) == -ENXIO && netvm_close(nv2) == 0,
		      "port %d unregistered (again: -ENXIO), handle closed", GONE_PORT);
	}
	barrier();
	if (sender) {
		err = netvm_writeF(nv, vseg, 100, src, 3000);
		check(err == -EKEYREJECTED, "write with a stale key: -EKEYREJECTED (%s)",
		      netvm_strerror(err));
		err = netvm_writeF(nv, vseg, 5000, src, 40);
		check(err == -EKEYREJECTED, "inline write with a stale key: -EKEYREJECTED (%s)",
		      netvm_strerror(err));
		err = netvm_writeF(nv, gseg, 0, src, 2000);
		check(err == -ECONNREFUSED, "write to a closed endpoint: -ECONNREFUSED (%s)",
		      netvm_strerror(err));
		err = netvm_incr(nv, gseg, 0, (uint32_t *)(src + 8));
		check(err == -ECONNREFUSED, "atomic on a closed endpoint: -ECONNREFUSED (%s)",
		      netvm_strerror(err));
		check(netvm_flushRW(nv) == 0, "errors were reported once: flush clean");
	}
	barrier();
	if (!sender) {
		check(untouched(data + ERR_OFF, ERR_LEN, 0xa5), "notification 0: nothing written");
		check(untouched(data + DATA_SIZE - END_LEN, END_LEN, 0xa5),
		      "past the end: nothing written in the last %d bytes", END_LEN);
		check(untouched(victim, sizeof(victim), 0x5a), "stale key: nothing written");
		check(untouched(gone, sizeof(gone), 0x3c), "closed endpoint: nothing written");
	}
	barrier();
	if (sender) {
		/* the control: a fresh import writes */
		netvm_unimport(nv, vseg);
		vseg = netvm_import(nv, mem[peer].node, 1, "victim");
		err = vseg < 0 ? vseg : netvm_writeF(nv, vseg, 200, src, 16);
		check(!err, "a fresh import of victim writes (%s)", netvm_strerror(err));
	}
	barrier();
	if (!sender)
		check(victim[199] == 0x5a && untouched(victim + 200, 16, 0xee) &&
		      victim[216] == 0x5a, "the fresh import's 16 B arrived, exactly");
	barrier();
}

int main(int argc, char **argv)
{
	unsigned int i;
	int err, peer;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 4 || argc - 2 > 8)
		return fprintf(stderr, "usage: netvm-sync-test RANK NODE0 NODE1 ...\n"), 2;
	me = atoi(argv[1]);
	snprintf(rank_prefix, sizeof(rank_prefix), "rank %u: ", me);
	tap_prefix = rank_prefix;
	n = argc - 2;
	for (i = 0; i < n; i++)
		mem[i] = (struct netvm_sync_member){ .node = atoi(argv[2 + i]), .port = 1 };
	err = netvm_open(0, &nv);
	if (err)
		die("open", err);
	err = netvm_register(nv, NETVM_PORT_ANY, 0);
	if (err != 1)
		die("register (port 1 expected)", err < 0 ? err : -EBUSY);
	{
		struct netvm_info info;

		check(netvm_info(nv, &info) == 0 && info.node_id == mem[me].node &&
		      netvm_ep_fd(nv) >= 0 && netvm_fd(nv) >= 0,
		      "info: node %u; descriptors", mem[me].node);
	}
	err = netvm_export(nv, "data", data, DATA_SIZE, 0, NULL);
	if (err < 0)
		die("export", err);
	err = netvm_export(nv, "src", src, sizeof(src), 0, NULL);
	if (err < 0)
		die("export src", err);
	err = netvm_sync_open(nv, "nvsync", mem, n, me, TMO, &grp);
	if (err)
		die("sync_open", err);
	check(netvm_sync_rank(grp) == me && netvm_sync_size(grp) == n, "sync group of %u joined", n);
	for (i = 0; i < n; i++) {
		seg[i] = netvm_import(nv, mem[i].node, 1, "data");
		if (seg[i] < 0)
			die("import", seg[i]);
	}
	phase_data();
	phase_sync();
	phase_chan();
	peer = me ^ 1;
	if ((unsigned int)peer < n) {
		phase_notf(peer, !(me & 1));
		phase_errors(peer, !(me & 1));
	} else {
		/* an odd rank out: keep the barriers in step */
		for (i = 0; i < 11; i++)
			barrier();
	}
	barrier();
	netvm_sync_close(grp);
	err = netvm_close(nv);
	check(!err, "close");
	printf("# rank %u: %d failed\n", me, failures);
	return failures ? 1 : 0;
}
