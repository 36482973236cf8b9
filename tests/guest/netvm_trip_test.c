// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm-trip-test: tripwires between two guests (docs/tripwire.md), for
 * the guest suite's netvm-trip group.
 *
 *   netvm-trip-test serve
 *       Registers, exports "tw" (TW_SIZE bytes, zeroed), sets the
 *       tripwires below, writes "node N port P" to /tmp/nvtrip.info, then
 *       follows the client step by step: the client ends each step with a
 *       notifying write of notification STEP, and the server checks the
 *       hits of that step (and that there are no others).
 *   netvm-trip-test client NODE PORT
 *       Imports "tw" and makes the accesses of each step; then checks an
 *       outgoing tripwire of its own.
 *
 *   netvm-trip-test serve-multi K / client-multi NODE PORT
 *       A write tripwire per client node n (1..K) on [n * 4096 + 500, +8);
 *       each client writes beside its range and into it; each tripwire
 *       fires once, naming its node (4 VMs: the guest group netvm-trip4).
 *
 * One "ok - ..." or "not ok - ..." line per check; exit 1 if any failed.
 * The tripwires (offsets into "tw"):
 *   A  write        [4096 + 100, +64)
 *   B  read, once   [8192 + 4000, +96)
 *   C  write        [16384 + 2000, +9000): three pages, one tripset
 *   D  read+write   [32768, +4): the atomic's word
 *   E  write        [36864 + 100, +64): cleared before the client starts
 *   F  write        [45056 + 100, +8): interrupts only for a sleeping owner
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_tap.h"
#include "netvm.h"

#define INFO		"/tmp/nvtrip.info"
#define TW_SIZE		(64 * 1024)
#define SYNC_OFF	(60 * 1024)	/* the step notifications' 8 bytes */
#define A_OFF		(4096 + 100)
#define B_OFF		(8192 + 4000)
#define C_OFF		(16384 + 2000)
#define C_LEN		9000
#define D_OFF		32768
#define E_OFF		(36864 + 100)
#define F_OFF		(45056 + 100)
#define F_HITS		20
#define FLOOD_OFF	(48 * 1024)	/* nobody accesses this page */
#define WAIT_MS		20000

/*
 * C's data: a hash of the position, so no two pieces of the 9200 bytes
 * look alike (i * 7 repeated every 256 bytes: a piece landing in the
 * wrong page would still have matched).
 */
static uint8_t c_byte(int i)
{
	return tap_pattern(0, (size_t)i);
}

static void die(const char *what, int err)
{
	printf("not ok - %s: %s\n", what, netvm_strerror(err));
	exit(1);
}

static void *buffer(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap", -errno);
	memset(p, 0, len);
	return p;
}

/* Open, register and export "tw" (TW_SIZE bytes at tw); 0 or exits. */
static struct netvm *serve_open(uint8_t *tw, struct netvm_info *info,
				int *port)
{
	struct netvm *nv;
	int err = netvm_open(0, &nv);

	if (!err)
		err = netvm_info(nv, info);
	if (err)
		die("open", err);
	*port = netvm_register(nv, NETVM_PORT_ANY, 0);
	if (*port < 0)
		die("register", *port);
	err = netvm_export(nv, "tw", tw, TW_SIZE, 0, NULL);
	if (err < 0)
		die("export", err);
	return nv;
}

/* "node N port P" in INFO, for the test driver (never half written). */
static void publish(const struct netvm_info *info, int port)
{
	char line[64];

	snprintf(line, sizeof(line), "node %u port %d\n", info->node_id,
		 port);
	write_file(INFO, line);
}

/* NetVM notification events the driver has taken (interrupts). */
static long notify_events(void)
{
	FILE *f = fopen("/sys/class/netvm/netvm0/nv_notifications", "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* Wait for the client's step notification, then acknowledge it. */
static void step(struct netvm *nv, uint32_t n)
{
	int r = netvm_notf_wait(nv, n, WAIT_MS);

	if (r <= 0)
		die("waiting for the client's step", r ? r : -EIO);
	netvm_notf_ack(nv, n);
}

/* One hit of ts, from (node, port), of this access. */
static void expect_hit(struct netvm *nv, const struct netvm_tripset *ts,
		       const char *name, uint32_t node, uint32_t port,
		       uint32_t access)
{
	struct netvm_trip_event ev;
	int err = netvm_trip_wait(nv, ts, WAIT_MS, &ev);

	check(!err && ev.node == node && ev.port == port &&
	      ev.access == access,
	      "tripwire %s fires: id %u, by %u:%u, access %#x (want %u:%u %#x; %s)",
	      name, err ? 0 : ev.id, err ? 0 : ev.node, err ? 0 : ev.port,
	      err ? 0 : ev.access, node, port, access, netvm_strerror(err));
}

static void expect_none(struct netvm *nv, const struct netvm_tripset *ts,
			const char *name, const char *when)
{
	int n = netvm_trip_test(nv, ts);

	check(n == 0, "tripwire %s: no hit %s (%d)", name, when, n);
}

/*
 * Steps 2..6 start only when the server says so (notification GO_STEP +
 * k into the client's export): the server's "no hit" checks of step k
 * must not see the hits of step k + 1.
 */
#define GO_STEP	100

static void send_go(struct netvm *nv, int cseg, const uint8_t *tw, uint32_t n)
{
	int err = netvm_writeFN(nv, cseg, 0, tw, 8, n);

	if (err)
		die("the go to the client", err);
}

static void wait_go(struct netvm *nv, uint32_t n)
{
	int r = netvm_notf_wait(nv, n, WAIT_MS);

	if (r <= 0)
		die("waiting for the server's go", r ? r : -EIO);
	netvm_notf_ack(nv, n);
}

/*
 * The goes of F's sleeping rounds (8..10) come from a thread with its own
 * endpoint (a handle is not shared between threads), each sent only once
 * the server's main thread is seen asleep in poll(2) inside
 * netvm_trip_wait -- so the hit that answers it finds the owner asleep.
 */
struct sleeper_go {
	uint32_t cn, cp;	/* the client's "local" export */
	pid_t tid;		/* the main thread, which sleeps */
	uint32_t round;		/* the go it is about to sleep for */
	int err;
};

/* Until /proc/self/task/TID/wchan names poll (WAIT_MS at most). */
static int asleep_in_poll(pid_t tid)
{
	char path[64], w[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", (int)tid);
	for (int i = 0; i < WAIT_MS; i++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(w, 1, sizeof(w) - 1, f) : 0;

		if (f)
			fclose(f);
		w[n] = 0;
		if (strstr(w, "poll"))
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

static void *sleeper_go_main(void *arg)
{
	struct sleeper_go *g = arg;
	uint8_t word[8] = { 0 };
	struct netvm *h = NULL;
	int seg = -1, err = netvm_open(0, &h);

	if (!err) {
		err = netvm_register(h, NETVM_PORT_ANY, 0);
		err = err < 0 ? err : 0;
		if (!err) {
			seg = netvm_import_wait(h, g->cn, g->cp, "local", WAIT_MS);
			err = seg < 0 ? seg : 0;
		}
	}
	for (uint32_t go = 8; go <= 10 && !err; go++) {
		for (int i = 0; i < WAIT_MS &&
		     __atomic_load_n(&g->round, __ATOMIC_ACQUIRE) != go; i++)
			usleep(1000);
		err = asleep_in_poll(g->tid);
		if (!err)
			err = netvm_writeFN(h, seg, 0, word, 8, go);
	}
	if (h)
		netvm_close(h);
	g->err = err;
	return NULL;
}

static int serve(void)
{
	struct netvm_tripset a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 }, x = { 0 };
	struct netvm_tripset e = { 0 }, e_was, fw = { 0 };
	struct netvm_trip_event ev;
	long ev0, ev1, ev2;
	int cseg;
	uint8_t *tw = buffer(TW_SIZE), *other = buffer(4096);
	struct netvm_info info;
	struct netvm *nv;
	int port, err, n, held;
	uint32_t cn, cp;

	nv = serve_open(tw, &info, &port);

	err = netvm_trip_set(nv, tw + A_OFF, 64, NETVM_TRIP_WRITE, &a);
	check(!err && a.n == 1, "set A (64 B, writes)");
	err = netvm_trip_set(nv, tw + B_OFF, 96,
			     NETVM_TRIP_READ | NETVM_TRIP_ONCE, &b);
	check(!err && b.n == 1, "set B (96 B, reads, once)");
	err = netvm_trip_set(nv, tw + C_OFF, C_LEN, NETVM_TRIP_WRITE, &c);
	check(!err && c.n == 3, "set C (9000 B: a tripset of %u)", c.n);
	err = netvm_trip_set(nv, tw + D_OFF, 4,
			     NETVM_TRIP_READ | NETVM_TRIP_WRITE, &d);
	check(!err && d.n == 1, "set D (4 B, reads and writes)");
	err = netvm_trip_set(nv, tw + F_OFF, 8, NETVM_TRIP_WRITE, &fw);
	check(!err && fw.n == 1, "set F (8 B, writes)");

	/* E: set and cleared before the client starts; it writes there in
	 * step 6 and nothing may fire */
	err = netvm_trip_set(nv, tw + E_OFF, 64, NETVM_TRIP_WRITE, &e);
	e_was = e;
	err = err ? err : netvm_trip_clear(nv, &e);
	check(!err && e.n == 0, "set and clear E: %s", netvm_strerror(err));

	/* refused: outside every export, no access kind, an outgoing flag */
	err = netvm_trip_set(nv, other, 8, NETVM_TRIP_WRITE, &x);
	check(err == -ENOENT && x.n == 0, "a range outside the exports: %s",
	      netvm_strerror(err));
	err = netvm_trip_set(nv, tw, 8, NETVM_TRIP_ONCE, &x);
	check(err == -EINVAL, "no access kind: %s", netvm_strerror(err));
	err = netvm_trip_set(nv, tw, 8, NETVM_TRIP_WRITE | NETVM_TRIP_OUTGOING, &x);
	check(err == -EINVAL, "netvm_trip_set with OUTGOING: %s",
	      netvm_strerror(err));
	err = netvm_trip_set(nv, tw + TW_SIZE - 8, 16, NETVM_TRIP_WRITE, &x);
	check(err == -ENOENT && x.n == 0,
	      "a range running past the export's end: %s (nothing kept)",
	      netvm_strerror(err));

	publish(&info, port);

	/* 1: accesses next to the ranges, and a read of write-only A */
	step(nv, 1);
	expect_none(nv, &a, "A", "for writes next to it or a read of it");
	expect_none(nv, &b, "B", "for reads next to it or a write of it");
	expect_none(nv, &c, "C", "for writes just outside");
	expect_none(nv, &d, "D", "");
	/* who the client is: from the step's own notification entry */
	cn = 0;
	cp = 0;
	{
		struct netvm_notf e;

		while (netvm_notfq_remove(nv, &e) == 0)
			if (e.notf == 1) {
				cn = e.src_node;
				cp = e.src_port;
			}
	}
	check(cp != 0, "the client is %u:%u", cn, cp);
	cseg = netvm_import_wait(nv, cn, cp, "local", WAIT_MS);
	if (cseg < 0)
		die("import the client's buffer", cseg);

	/* 2: one byte, A's last */
	send_go(nv, cseg, tw, GO_STEP + 2);
	step(nv, 2);
	expect_hit(nv, &a, "A", cn, cp, NETVM_TRIP_WRITE);
	expect_none(nv, &a, "A", "twice for one write");
	check(tw[A_OFF + 63] == 0x5a, "the byte is in place when the hit is seen");

	/* 3: two reads of B: once-only, so one hit */
	send_go(nv, cseg, tw, GO_STEP + 3);
	step(nv, 3);
	expect_hit(nv, &b, "B", cn, cp, NETVM_TRIP_READ);
	expect_none(nv, &b, "B", "for the second read (once-only)");

	/* 4: one write over all of C: a hit per page piece */
	send_go(nv, cseg, tw, GO_STEP + 4);
	step(nv, 4);
	n = netvm_trip_test(nv, &c);
	check(n == 3, "C (3 pieces): %d hits for a write covering it", n);
	for (int i = 0; i < 3; i++)
		expect_hit(nv, &c, "C", cn, cp, NETVM_TRIP_WRITE);
	n = 0;
	for (int i = 0; i < C_LEN + 200; i++)
		n += tw[C_OFF - 100 + i] != c_byte(i);
	check(n == 0, "C's data byte-verified (%d bad)", n);

	/* 5: an atomic increment of D: a read and a write */
	send_go(nv, cseg, tw, GO_STEP + 5);
	step(nv, 5);
	expect_hit(nv, &d, "D", cn, cp, NETVM_TRIP_READ | NETVM_TRIP_WRITE);
	check(*(volatile uint32_t *)(tw + D_OFF) == 1, "D's word is 1");

	/* 6: a write over E, cleared before the client started: silent */
	send_go(nv, cseg, tw, GO_STEP + 6);
	step(nv, 6);
	expect_none(nv, &e_was, "E", "after it was cleared");
	err = netvm_trip_clear(nv, &a);
	check(!err && a.n == 0, "clear A: %s", netvm_strerror(err));

	/* 7: hits while the owner polls raise no interrupt; 8: one while it
	 * sleeps does.  The client writes F only when told (notifications
	 * 7 and 8 into its own export), so the server is in the right state. */
	ev0 = notify_events();
	err = netvm_writeFN(nv, cseg, 0, tw, 8, 7);
	if (err)
		die("go 7", err);
	for (int i = 0; i < 200000000 && netvm_trip_test(nv, &fw) < F_HITS; i++)
		;
	ev1 = notify_events();
	n = netvm_trip_test(nv, &fw);
	check(n == F_HITS && ev0 >= 0 && ev1 == ev0,
	      "%d hits of F while the owner polls: %ld interrupts (none wanted)",
	      n, ev1 - ev0);
	while (netvm_trip_wait(nv, &fw, 0, &ev) == 0)
		;
	/* three rounds, each go sent once we sleep (sleeper_go): each hit
	 * finds us asleep and raises one interrupt */
	{
		struct sleeper_go g = { .cn = cn, .cp = cp,
					.tid = (pid_t)syscall(SYS_gettid) };
		pthread_t th;

		err = -pthread_create(&th, NULL, sleeper_go_main, &g);
		for (uint32_t go = 8; go <= 10 && !err; go++) {
			__atomic_store_n(&g.round, go, __ATOMIC_RELEASE);
			err = netvm_trip_wait(nv, &fw, WAIT_MS, &ev);
		}
		if (!pthread_join(th, NULL) && !err)
			err = g.err;
	}
	ev2 = notify_events();
	check(!err && ev2 - ev1 == 3,
	      "hits of F while the owner sleeps in netvm_trip_wait wake it: %ld interrupt(s) in 3 rounds (%s)",
	      ev2 - ev1, netvm_strerror(err));

	/* nothing late: every hit so far was expected and taken.  The
	 * client's step 11 comes after all its accesses, on the same queue
	 * as their hits: once it is here, a late hit would be too.  (Asked
	 * for only now: arriving while we slept it would have counted.) */
	send_go(nv, cseg, tw, 11);
	step(nv, 11);
	{
		struct netvm_tripset *sets[] = { &b, &c, &d, &fw };
		const char *names = "BCDF";

		for (int i = 0; i < 4; i++) {
			struct netvm_trip_event ev;

			while (netvm_trip_wait(nv, sets[i], 0, &ev) == 0)
				check(0, "a late hit of %c: id %u by %u:%u access %#x",
				      names[i], ev.id, ev.node, ev.port,
				      ev.access);
		}
	}

	/* the NIC's table: exactly NETVM_TRIP_MAX, then -ENOSPC (on a page
	 * the client does not touch: it may still be writing) */
	held = (int)(b.n + c.n + d.n + fw.n);	/* A cleared, E before */
	n = 0;
	for (;;) {
		struct netvm_tripset one = { 0 };

		err = netvm_trip_set(nv, tw + FLOOD_OFF + n % 4096, 1,
				     NETVM_TRIP_WRITE, &one);
		if (err)
			break;
		n++;
	}
	check(err == -ENOSPC && n + held == NETVM_TRIP_MAX,
	      "the NIC holds %d + %d = %d tripwires, then %s", n, held,
	      n + held, netvm_strerror(err));
	printf("# unregistering frees them all\n");
	netvm_unregister(nv);
	netvm_close(nv);
	return failures ? 1 : 0;
}

static int client(unsigned int node, unsigned int port)
{
	uint8_t *buf = buffer(TW_SIZE);
	struct netvm_tripset o = { 0 };
	struct netvm_trip_event ev;
	struct netvm *nv;
	uint32_t old;
	int seg, err;

	err = netvm_open(0, &nv);
	if (err)
		die("open", err);
	err = netvm_register(nv, NETVM_PORT_ANY, 0);
	if (err < 0)
		die("register", err);
	err = netvm_export(nv, "local", buf, TW_SIZE, 0, NULL);
	if (err < 0)
		die("export", err);
	seg = netvm_import_wait(nv, node, port, "tw", WAIT_MS);
	if (seg < 0)
		die("import", seg);

	/* 1 */
	memset(buf, 0x11, 4096);
	err = netvm_writeF(nv, seg, A_OFF - 100, buf, 100);
	err = err ? err : netvm_writeF(nv, seg, A_OFF + 64, buf, 100);
	err = err ? err : netvm_readF(nv, seg, A_OFF, buf + 8192, 64);
	err = err ? err : netvm_readF(nv, seg, B_OFF - 100, buf + 8192, 100);
	err = err ? err : netvm_writeF(nv, seg, B_OFF, buf, 96);
	err = err ? err : netvm_writeF(nv, seg, C_OFF - 100, buf, 100);
	err = err ? err : netvm_writeF(nv, seg, C_OFF + C_LEN, buf, 100);
	err = err ? err : netvm_writeFN(nv, seg, SYNC_OFF, buf, 8, 1);
	check(!err, "step 1: accesses beside the tripwires (%s)",
	      netvm_strerror(err));
	wait_go(nv, GO_STEP + 2);
	/* 2 */
	buf[0] = 0x5a;
	err = netvm_writeFN(nv, seg, A_OFF + 63, buf, 1, 2);
	check(!err, "step 2: one byte into A (%s)", netvm_strerror(err));
	wait_go(nv, GO_STEP + 3);
	/* 3 */
	err = netvm_readF(nv, seg, B_OFF + 90, buf + 8192, 10);
	err = err ? err : netvm_readF(nv, seg, B_OFF, buf + 8192, 1);
	err = err ? err : netvm_writeFN(nv, seg, SYNC_OFF, buf, 8, 3);
	check(!err, "step 3: two reads of B (%s)", netvm_strerror(err));
	wait_go(nv, GO_STEP + 4);
	/* 4: source and target at the same page offset, so the library
	 * sends one command per page and each piece of C sees one */
	for (int i = 0; i < C_LEN + 200; i++)
		buf[C_OFF - 100 + i] = c_byte(i);
	err = netvm_writeF(nv, seg, C_OFF - 100, buf + C_OFF - 100,
			   C_LEN + 200);
	err = err ? err : netvm_writeFN(nv, seg, SYNC_OFF, buf, 8, 4);
	check(!err, "step 4: %d B over C (%s)", C_LEN + 200,
	      netvm_strerror(err));
	wait_go(nv, GO_STEP + 5);
	/* 5 */
	err = netvm_incr(nv, seg, D_OFF, &old);
	err = err ? err : netvm_writeFN(nv, seg, SYNC_OFF, buf, 8, 5);
	check(!err && old == 0, "step 5: incr of D (old %u; %s)", old,
	      netvm_strerror(err));
	wait_go(nv, GO_STEP + 6);
	/* 6 */
	err = netvm_writeF(nv, seg, E_OFF, buf, 64);
	err = err ? err : netvm_writeFN(nv, seg, SYNC_OFF, buf, 8, 6);
	check(!err, "step 6: a write over cleared E (%s)", netvm_strerror(err));

	/* 7: F_HITS writes into F when told; 8-10: one more each when told
	 * (the server sends these goes once it sleeps) */
	for (uint32_t go = 7; go <= 10; go++) {
		int r = netvm_notf_wait(nv, go, WAIT_MS);

		if (r <= 0)
			die("waiting for the server's go", r ? r : -EIO);
		netvm_notf_ack(nv, go);
		for (int i = 0; i < (go == 7 ? F_HITS : 1) && !err; i++)
			err = netvm_writeF(nv, seg, F_OFF + (i % 8), buf, 1);
		check(!err, "step %u: writes into F (%s)", go,
		      netvm_strerror(err));
	}
	/* our own accesses: an outgoing tripwire on the server's memory,
	 * away from its tripwires; before step 11, after which the server
	 * may close its endpoint (and our writes would be refused) */
	err = netvm_trip_set_remote(nv, seg, 40000, 16, NETVM_TRIP_WRITE, &o);
	check(!err && o.n == 1, "set an outgoing tripwire (%s)",
	      netvm_strerror(err));
	err = netvm_writeF(nv, seg, 39000, buf, 1000);	/* ends before it */
	check(!err && netvm_trip_test(nv, &o) == 0,
	      "our write ending at its first byte: no hit");
	err = netvm_writeF(nv, seg, 40008, buf, 4);
	err = err ? err : netvm_trip_wait(nv, &o, WAIT_MS, &ev);
	check(!err && ev.node == node && ev.port == port &&
	      ev.access == (NETVM_TRIP_WRITE | NETVM_TRIP_OUTGOING),
	      "our write into it: a hit naming the target %u:%u (%s)",
	      err ? 0 : ev.node, err ? 0 : ev.port, netvm_strerror(err));
	err = netvm_trip_set_remote(nv, seg, TW_SIZE - 8, 16, NETVM_TRIP_WRITE,
				    &o);
	check(err == -ERANGE, "an outgoing range past the segment: %s",
	      netvm_strerror(err));
	err = netvm_trip_clear(nv, &o);
	check(!err, "clear it (%s)", netvm_strerror(err));
	/* 11: after every access above (the server's "nothing late") */
	wait_go(nv, 11);
	err = netvm_writeFN(nv, seg, SYNC_OFF, buf, 8, 11);
	check(!err, "step 11 (%s)", netvm_strerror(err));

	netvm_close(nv);
	return failures ? 1 : 0;
}

/*
 * serve-multi K: a write tripwire on [n * 4096 + 500, +8) for each client
 * node n = 1..K; each must fire exactly once, naming node n.
 */
static int serve_multi(int k)
{
	uint8_t *tw = buffer(TW_SIZE);
	struct netvm_tripset all = { 0 };
	struct netvm_trip_event ev;
	struct netvm_info info;
	uint32_t range_of[NETVM_TRIP_MAX] = { 0 };	/* 0: no client's range */
	int hits[16] = { 0 };
	struct netvm *nv;
	int port, err;

	if (k < 1 || k > 15)
		die("serve-multi K: 1..15", -EINVAL);
	nv = serve_open(tw, &info, &port);
	for (int n = 1; n <= k; n++) {
		err = netvm_trip_set(nv, tw + n * 4096 + 500, 8,
				     NETVM_TRIP_WRITE, &all);
		if (err)
			die("tripwire", err);
		range_of[all.id[all.n - 1]] = (uint32_t)n;
	}
	publish(&info, port);
	for (int i = 0; i < k; i++) {
		err = netvm_trip_wait(nv, &all, 60000, &ev);
		if (err)
			die("waiting for the clients", err);
		uint32_t n = ev.id < NETVM_TRIP_MAX ? range_of[ev.id] : 0;

		check(n && n == ev.node && ev.access == NETVM_TRIP_WRITE,
		      "node %u's range (tripwire id %u): it fired, naming node %u",
		      n, ev.id, ev.node);
		hits[n]++;
	}
	/*
	 * Each client wrote beside its range before writing into it, and a
	 * hit is queued when the write is applied: any wrong hit was queued
	 * before the k right ones we have seen.  No sleep needed.
	 */
	check(netvm_trip_test(nv, &all) == 0,
	      "no other hit (writes beside each range)");
	for (int n = 1; n <= k; n++)
		check(hits[n] == 1, "node %d: exactly one hit (%d)", n, hits[n]);
	netvm_close(nv);
	return failures ? 1 : 0;
}

/* client-multi NODE PORT: write into our own range, and just beside it. */
static int client_multi(unsigned int node, unsigned int port)
{
	uint8_t *buf = buffer(4096);
	struct netvm_info info;
	struct netvm *nv;
	int seg, err;

	err = netvm_open(0, &nv);
	if (!err)
		err = netvm_info(nv, &info);
	if (err)
		die("open", err);
	err = netvm_register(nv, NETVM_PORT_ANY, 0);
	if (err < 0)
		die("register", err);
	seg = netvm_import_wait(nv, node, port, "tw", WAIT_MS);
	if (seg < 0)
		die("import", seg);
	memset(buf, (int)info.node_id, 64);
	/* beside (before and after), then inside */
	err = netvm_writeF(nv, seg, info.node_id * 4096 + 480, buf, 20);
	err = err ? err : netvm_writeF(nv, seg, info.node_id * 4096 + 508,
				       buf, 20);
	err = err ? err : netvm_writeF(nv, seg, info.node_id * 4096 + 504,
				       buf, 2);
	check(!err, "node %u: wrote (%s)", info.node_id, netvm_strerror(err));
	netvm_close(nv);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "serve-multi"))
		return serve_multi(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "client-multi"))
		return client_multi((unsigned int)atoi(argv[2]),
				    (unsigned int)atoi(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "serve"))
		return serve();
	if (argc == 4 && !strcmp(argv[1], "client"))
		return client((unsigned int)atoi(argv[2]),
			      (unsigned int)atoi(argv[3]));
	fprintf(stderr, "usage: netvm-trip-test serve | client NODE PORT | serve-multi K | client-multi NODE PORT\n");
	return 2;
}
