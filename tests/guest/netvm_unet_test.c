// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * netvm-unet-test: U-Net endpoints between two guests (group "unet" of
 * run-guest-tests.py, which passes the ports between the nodes).
 *
 *   netvm-unet-test serve [NODE]
 *       the server (peer NODE, default 0): endpoints S (echo) and V
 *       (victim); writes "ps P pv P" to /tmp/unet.info, waits for "PC PX"
 *       in /tmp/unet.peer, sets up S's channel to (NODE, PC, 0x1001),
 *       V's to (NODE, PC, 0x3003) and, when PX is not 0, V's to (NODE,
 *       PX, 0x1001), writes /tmp/unet.ready, then echoes every message on
 *       S (blocking receive) until "quit", answering "bye ok" if V
 *       received nothing but X's two messages on that last channel;
 *       "hold" makes it wait (no echo) until a NetVM notification
 *       RESUME_NOTF into its export "resume" (port pn in unet.info).
 *       The client's endpoint C has a pageable segment (but when
 *       NETVM_UNET_EMULATE asks for kernel-emulated ones), so everything
 *       runs against the shadow page table; S, V and X keep pinned ones.
 *   netvm-unet-test client NODE PS PV PN
 *       node 0: endpoints C and X; writes "pc P px P" to /tmp/unet.info,
 *       sets up channels, waits for /tmp/unet.go, then runs the checks and
 *       prints "ok - ..." / "not ok - ..." lines.
 *   netvm-unet-test bench NODE PS
 *       node 0 against "serve": like client (writes "pc P px 0", waits
 *       for /tmp/unet.go), then prints round trips by polling for several
 *       sizes and the echoed streaming bandwidth (16 in flight), and quits
 *       the server.  Figures only (bench_unet.py).
 *   netvm-unet-test unreach GONE NODE PS
 *       against "serve" on NODE (test_security.py isolation4): like bench
 *       (writes "pc P px 0", waits for /tmp/unet.go); a message to node
 *       GONE (no route, or NetVM gave it up) must end with exactly
 *       -EHOSTUNREACH at the flush, then the same endpoint's 4 KiB
 *       exchange with the server is echoed byte for byte; quits the
 *       server and prints "ok - " / "not ok - " lines.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netvm.h"
#include "guest_tap.h"
#include "unet_pattern.h"

#define T1		0x1001u	/* C <-> S; X -> V (V's second channel), and
				 * X -> S, which S has from C only */
#define T2		0x2002u	/* X -> S: S has no such channel */
#define T3		0x3003u	/* V expects it from C; X uses it */
#define SEG		(256u * 1024)
#define BUFS		32
#define BUFSZ		2048
#define RESUME_NOTF	1	/* into the server's "resume": echo on */
#define X_TO_V		2	/* X's messages to V on T1 */
#define X_TO_V_K	40	/* ... their patterns' first number */

static void pattern(uint8_t *p, size_t n, unsigned int k)
{
	unet_pattern(p, n, k);
}

/*
 * The patterns catch what a receive can get wrong: 4 KiB message k with
 * its 2 KiB halves swapped, a half duplicated, one 1 KiB buffer from
 * message k + 256 (a pattern with a 256-message period matched it), and
 * the bytes shifted by one 4 KiB page's worth of another message.
 */
static void pattern_self_check(void)
{
	static uint8_t m[4096], x[4096];
	int caught = 0;

	pattern(m, 4096, 77);
	memcpy(x, m + 2048, 2048);
	memcpy(x + 2048, m, 2048);
	caught += !unet_pattern_ok(x, 4096, 77);
	memcpy(x, m, 2048);
	memcpy(x + 2048, m, 2048);
	caught += !unet_pattern_ok(x, 4096, 77);
	memcpy(x, m, 4096);
	pattern(x + 1024, 1024, 77 + 256);
	caught += !unet_pattern_ok(x, 4096, 77);
	pattern(x, 4096, 78);
	caught += !unet_pattern_ok(x, 4096, 77);
	check(caught == 4 && unet_pattern_ok(m, 4096, 77),
	      "the test patterns catch swapped and duplicated halves, another message's buffer and another message (%d of 4)",
	      caught);
}

static int serve(struct netvm *nv, unsigned int peer)
{
	struct netvm_unet *s, *v;
	struct netvm_unet_stats st;
	static uint8_t buf[NETVM_UNET_MSG_MAX];
	static uint8_t resume[4096];
	unsigned int pc, px, ch;
	struct netvm *rn;
	char text[128];
	size_t len;
	int cs, cv, cx, err, pn, good = 0;

	if (netvm_unet_open(nv, SEG, BUFSZ, BUFS, &s) ||
	    netvm_unet_open(nv, SEG, BUFSZ, BUFS, &v)) {
		fprintf(stderr, "serve: cannot open endpoints\n");
		return 1;
	}
	/* a NetVM endpoint of its own for the client's "resume" */
	err = netvm_open(0, &rn);
	pn = err ? err : netvm_register(rn, NETVM_PORT_ANY, 0);
	err = pn < 0 ? pn : netvm_export(rn, "resume", resume, sizeof(resume), 0, NULL);
	if (err < 0) {
		fprintf(stderr, "serve: resume endpoint: %s\n", netvm_strerror(err));
		return 1;
	}
	snprintf(text, sizeof(text), "ps %d pv %d pn %d\n", netvm_unet_port(s),
		 netvm_unet_port(v), pn);
	write_file("/tmp/unet.info", text);
	if (wait_file("/tmp/unet.peer", text, sizeof(text), 120) ||
	    sscanf(text, "%u %u", &pc, &px) != 2) {
		fprintf(stderr, "serve: no peer ports\n");
		return 1;
	}
	cs = netvm_unet_channel(s, peer, pc, T1);
	cv = netvm_unet_channel(v, peer, pc, T3);
	/*
	 * S's (node, tag) on another endpoint of this NIC: per endpoint.
	 * Only against "client": "bench" and "unreach" have no X (PX 0).
	 */
	cx = px ? netvm_unet_channel(v, peer, px, T1) : 0;
	if (cs < 0 || cv < 0 || cx < 0) {
		fprintf(stderr, "serve: channels: %s / %s / %s\n",
			netvm_strerror(cs), netvm_strerror(cv),
			netvm_strerror(cx));
		return 1;
	}
	write_file("/tmp/unet.ready", "ready\n");
	for (;;) {
		err = netvm_unet_recv(s, buf, sizeof(buf), &len, &ch, 120000);
		if (err) {
			fprintf(stderr, "serve: recv: %s\n", netvm_strerror(err));
			return 1;
		}
		if (ch != (unsigned int)cs) {
			fprintf(stderr, "serve: message on channel %u\n", ch);
			return 1;
		}
		if (len == 4 && !memcmp(buf, "quit", 4))
			break;
		if (len == 4 && !memcmp(buf, "hold", 4)) {
			int r = netvm_notf_wait(rn, RESUME_NOTF, 120000);

			if (r <= 0) {
				fprintf(stderr, "serve: no resume: %s\n",
					netvm_strerror(r ? r : -EIO));
				return 1;
			}
			netvm_notf_ack(rn, RESUME_NOTF);
			continue;
		}
		err = netvm_unet_send(s, cs, buf, len);
		if (err) {
			fprintf(stderr, "serve: send: %s\n", netvm_strerror(err));
			return 1;
		}
	}
	/*
	 * The victim must have seen nothing of the intruder's messages but
	 * the ones X sent it on T1, each whole on the channel from X.
	 */
	for (int i = 0; px && i < X_TO_V; i++) {
		err = netvm_unet_recv(v, buf, sizeof(buf), &len, &ch, 30000);
		good += !err && ch == (unsigned int)cx &&
			len == 1000u + (unsigned int)i &&
			unet_pattern_ok(buf, len, X_TO_V_K + i);
	}
	err = netvm_unet_recv(v, buf, sizeof(buf), &len, NULL, 0);
	netvm_unet_stats(v, &st);
	snprintf(text, sizeof(text), "bye %s %u %d",
		 err == -EAGAIN && st.received == (px ? X_TO_V : 0) &&
		 good == (px ? X_TO_V : 0) ?
		 "ok" : "bad", st.received, good);
	err = netvm_unet_send(s, cs, text, strlen(text));
	if (!err)
		err = netvm_unet_flush(s, 10000);
	netvm_unet_close(v);
	netvm_unet_close(s);
	netvm_close(rn);
	return err ? 1 : 0;
}

/* Receive one message: by polling (spinning on the queue) or blocking. */
static int get(struct netvm_unet *u, uint8_t *buf, size_t cap, size_t *len,
	       unsigned int *ch, int block)
{
	struct timespec t0, t;
	int err;

	if (block)
		return netvm_unet_recv(u, buf, cap, len, ch, 30000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		err = netvm_unet_recv(u, buf, cap, len, ch, 0);
		if (err != -EAGAIN)
			return err;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 30)
			return -ETIMEDOUT;
	}
}

static const size_t sizes[] = { 1, 40, 95, 96, 97, 1000, 2048, 2049, 4000,
				 4096 };

static void pingpong(struct netvm_unet *c, int ch, int block)
{
	static uint8_t out[NETVM_UNET_MSG_MAX], in[NETVM_UNET_MSG_MAX];
	int bad = 0, n = 0;
	unsigned int got_ch;
	size_t len;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (unsigned int k = 0; k < 3; k++, n++) {
			int err;

			pattern(out, sizes[s], k + 7 * block);
			err = netvm_unet_send(c, ch, out, sizes[s]);
			if (!err)
				err = get(c, in, sizeof(in), &len, &got_ch,
					  block);
			if (err || len != sizes[s] || got_ch != (unsigned int)ch ||
			    memcmp(in, out, len)) {
				fprintf(stderr, "size %zu #%u: %s, len %zu\n",
					sizes[s], k, netvm_strerror(err), len);
				bad++;
			}
		}
	}
	check(!bad, "ping-pong by %s: %d messages of 1..4096 B (inline and buffered) echoed, byte-verified",
	      block ? "blocking receive (poll(2) on the fd)" : "polling", n);
}

/* ---- upcalls ---- */

static struct netvm_unet *up_u;
static volatile sig_atomic_t up_in, up_pri, up_drain, up_got;
static uint8_t up_buf[8][NETVM_UNET_MSG_MAX];
static size_t up_len[8];

static void on_upcall(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	if (si->si_band & POLLPRI)
		up_pri++;
	if (si->si_band & POLLIN)
		up_in++;
	while (up_drain && up_got < 8 &&
	       netvm_unet_recv(up_u, up_buf[up_got], sizeof(up_buf[0]),
			       &up_len[up_got], NULL, 0) == 0)
		up_got++;
}

/* Wait (sleeping, 30 s at most) until *v reaches want. */
static int wait_for(volatile sig_atomic_t *v, int want)
{
	for (int i = 0; i < 30000 && *v < want; i++)
		usleep(1000);
	return *v >= want;
}

static int wait_received(struct netvm_unet *u, uint32_t want)
{
	struct netvm_unet_stats st;

	for (int i = 0; i < 30000; i++) {
		netvm_unet_stats(u, &st);
		if (st.received >= want)
			return 1;
		usleep(1000);
	}
	return 0;
}

static void upcalls(struct netvm_unet *c, int cc)
{
	static uint8_t out[8][NETVM_UNET_MSG_MAX], in[NETVM_UNET_MSG_MAX];
	struct netvm_unet_dsm_stats d0, d1;
	struct netvm_unet_stats st;
	struct sigaction sa;
	int sig = SIGRTMIN + 1, bad = 0, in0, err, r;
	size_t len;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_upcall;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	up_u = c;
	up_drain = 1;
	err = netvm_unet_upcall_setup(c, sig, 0);
	check(err == 0, "upcalls set up (real-time signal, O_ASYNC): %s",
	      netvm_strerror(err));

	for (unsigned int k = 0; k < 10; k++) {
		size_t n = sizes[k];

		up_got = 0;
		pattern(out[0], n, 40 + k);
		err = netvm_unet_send(c, cc, out[0], n);
		if (err || !wait_for(&up_got, 1) || up_len[0] != n ||
		    memcmp(up_buf[0], out[0], n)) {
			fprintf(stderr, "upcall #%u (%zu B): %s, got %d\n", k, n,
				netvm_strerror(err), (int)up_got);
			bad++;
		}
	}
	check(!bad && up_in >= 10,
	      "ping-pong by upcall: 10 messages of 1..4096 B received in the signal handler, byte-verified (%d upcalls)",
	      (int)up_in);

	/*
	 * One store turns them off: messages queue, no signal.  No sleep
	 * for a wrong signal to show: a signal needs an event, and the NI
	 * publishes a message's events (dsm_stats) in the same status
	 * store as the message, so "no event" is exact once the 3 are
	 * received.  (The kernel's emulation publishes them just after,
	 * in the same locked step.)
	 */
	netvm_unet_upcalls(c, 0);
	in0 = up_in;
	netvm_unet_stats(c, &st);
	netvm_unet_dsm_stats(c, &d0);
	for (int i = 0; i < 3; i++) {
		pattern(out[i], 500, 60 + i);
		netvm_unet_send(c, cc, out[i], 500);
	}
	r = wait_received(c, st.received + 3);
	netvm_unet_dsm_stats(c, &d1);
	check(r && up_in == in0 && d1.events == d0.events,
	      "upcalls off (one store, no system call): 3 messages queued, no event (%u), no signal",
	      d1.events - d0.events);
	up_drain = 0;
	r = netvm_unet_upcalls(c, 1);
	bad = 0;
	for (int i = 0; i < 3; i++) {
		err = netvm_unet_recv(c, in, sizeof(in), &len, NULL, 0);
		bad += err || len != 500 || memcmp(in, out[i], 500);
	}
	check(r == 1 && !bad && up_in == in0,
	      "upcalls on again reports the 3 pending messages; drained in order, byte-verified");

	/*
	 * Almost full: threshold 4, the handler leaves the messages queued.
	 * Two events (non-empty, then 4 queued), each one signal: once the
	 * 5 are received and both signals are in, a third would need a
	 * third event, which the count shows there is not.
	 */
	err = netvm_unet_upcall_setup(c, sig, 4);
	netvm_unet_stats(c, &st);
	netvm_unet_dsm_stats(c, &d0);
	for (int i = 0; i < 5; i++) {
		pattern(out[i], 100 + i, 70 + i);
		netvm_unet_send(c, cc, out[i], 100 + i);
	}
	r = wait_received(c, st.received + 5) && wait_for(&up_pri, 1) &&
	    wait_for(&up_in, in0 + 1);
	netvm_unet_upcalls(c, 0);
	netvm_unet_dsm_stats(c, &d1);
	bad = 0;
	for (int i = 0; i < 5; i++) {
		err = netvm_unet_recv(c, in, sizeof(in), &len, NULL, 0);
		bad += err || len != (size_t)(100 + i) || memcmp(in, out[i], len);
	}
	check(!err && r && up_in == in0 + 1 && up_pri == 1 &&
	      d1.events - d0.events == 2 && !bad,
	      "5 messages with upcalls at 4: one upcall for non-empty (POLLIN), one at 4 queued (POLLPRI), %u events; all 5 in order",
	      d1.events - d0.events);
}

/* ---- stopping ourselves: a child wakes us on what the NIC shows ---- */

static unsigned int srv_node, srv_nport;	/* the server's "resume" */
static int emu_eps;				/* kernel-emulated endpoints */

/* The NIC's counter @name (sysfs fw_counters), or -1. */
static long fw_counter(const char *name)
{
	FILE *f = fopen("/sys/class/netvm/netvm0/fw_counters", "r");
	char key[64];
	long v, got = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &v) == 2)
		if (!strcmp(key, name))
			got = v;
	fclose(f);
	return got;
}

/* What the NIC received for U-Net endpoints, and the HOLDs it sent. */
struct nic_rx {
	long rx, diverted, hold_tx;
};

static struct nic_rx nic_rx_now(void)
{
	struct nic_rx r = { fw_counter("unet_rx"), fw_counter("unet_diverted"),
			    fw_counter("unet_hold_tx") };

	return r;
}

enum wake {
	WAKE_STOPPED,	/* as soon as we are seen stopped */
	WAKE_ECHOED,	/* once n messages were delivered or diverted */
	WAKE_HELD,	/* once the NIC told the sender to hold */
};

/* Until /proc/PID/stat says stopped (T); 60 s at most. */
static int wait_stopped(pid_t pid)
{
	char path[64], st[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 60000; i++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(st, 1, sizeof(st) - 1, f) : 0;
		char *p;

		if (f)
			fclose(f);
		st[n] = 0;
		p = strrchr(st, ')');
		if (p && p[1] == ' ' && p[2] == 'T')
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

/* The server's "hold" ends: RESUME_NOTF into its "resume" export. */
static int send_resume(void)
{
	uint8_t word[8] = { 0 };
	struct netvm *h;
	int seg, err = netvm_open(0, &h);

	if (err)
		return err;
	err = netvm_register(h, NETVM_PORT_ANY, 0);
	if (err >= 0) {
		seg = netvm_import_wait(h, srv_node, srv_nport, "resume", 30000);
		err = seg < 0 ? seg : netvm_writeFN(h, seg, 0, word, 8, RESUME_NOTF);
	}
	netvm_close(h);
	return err < 0 ? err : 0;
}

/*
 * The child of stop_until(): once the parent is seen stopped, it resumes
 * the server's echo (if asked), waits for what the parent is stopped for
 * (counted by the NIC from @base), and wakes it -- always, so that a
 * failure cannot leave it stopped.  Exit status 0 if all was seen.
 */
static int waker(pid_t parent, struct nic_rx base, enum wake w, int n,
		 int resume)
{
	int err = wait_stopped(parent), i;

	if (!err && resume)
		err = send_resume();
	for (i = 0; !err && w != WAKE_STOPPED && i < 60000; i++) {
		struct nic_rx now = nic_rx_now();

		if (w == WAKE_HELD ? now.hold_tx > base.hold_tx :
		    now.rx - base.rx + now.diverted - base.diverted >= n)
			break;
		usleep(1000);
	}
	if (!err && i == 60000)
		err = -ETIMEDOUT;
	if (err)
		fprintf(stderr, "waker: %s\n", netvm_strerror(err));
	kill(parent, SIGCONT);
	return err ? 1 : 0;
}

/* Stop ourselves (SIGSTOP) until the waker sees what @w names. */
static int stop_until(struct nic_rx base, enum wake w, int n, int resume)
{
	int status;
	pid_t child = fork();

	if (child < 0)
		return -errno;
	if (child == 0)
		_exit(waker(getppid(), base, w, n, resume));
	raise(SIGSTOP);
	if (waitpid(child, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/*
 * FUGU's two cases: n echoes of size bytes come back while nothing
 * receives, so the receive queue (256) or the free buffers (32) run out
 * and the rest is diverted to the driver; all must arrive in order.
 */
static void divert(struct netvm_unet *c, int cc, int n, size_t size,
		   const char *what, int stop)
{
	static uint8_t out[NETVM_UNET_MSG_MAX], in[NETVM_UNET_MSG_MAX];
	struct netvm_unet_stats a, b;
	struct nic_rx base = nic_rx_now();
	int bad = 0, err = 0, k;
	size_t len;

	netvm_unet_stats(c, &a);
	for (k = 0; k < n && !err; k++) {
		pattern(out, size, 1000 + k);
		err = netvm_unet_send(c, cc, out, size);
	}
	/* really not running: stopped until the NIC has all the echoes
	 * (the kernel's emulation has no such count: only the stop) */
	if (stop && !err)
		err = stop_until(base, emu_eps ? WAKE_STOPPED : WAKE_ECHOED, n, 0);
	for (k = 0; k < 3000; k++) {
		netvm_unet_stats(c, &b);
		if (b.received + b.diverted - a.received - a.diverted >=
		    (uint32_t)n)
			break;
		usleep(10000);
	}
	for (k = 0; k < n && !err; k++) {
		err = netvm_unet_recv(c, in, sizeof(in), &len, NULL, 30000);
		pattern(out, size, 1000 + k);
		if (err || len != size || memcmp(in, out, size)) {
			int was = -1;

			/* which message it was: order or contents? */
			for (int j = 0; j < n && !err && len == size; j++) {
				pattern(out, size, 1000 + j);
				if (!memcmp(in, out, size))
					was = j;
			}
			if (bad++ < 3)
				fprintf(stderr, "divert %s #%d: %s, len %zu, got #%d\n",
					what, k, netvm_strerror(err), len, was);
		}
	}
	netvm_unet_stats(c, &b);
	check(!err && !bad && b.diverted > a.diverted && b.dropped == a.dropped,
	      "%d echoes of %zu B with nobody receiving: %u direct, %u diverted (%u queue full, %u no buffer, %u for order), all %d in order, byte-verified (%s)",
	      n, size, b.received - a.received, b.diverted - a.diverted,
	      b.rx_ring_full - a.rx_ring_full, b.rx_no_buf - a.rx_no_buf,
	      b.div_order - a.div_order, n, what);
	/* and back to direct delivery */
	netvm_unet_stats(c, &a);
	pattern(out, 50, 7);
	err = netvm_unet_send(c, cc, out, 50);
	if (!err)
		err = netvm_unet_recv(c, in, sizeof(in), &len, NULL, 30000);
	netvm_unet_stats(c, &b);
	check(!err && len == 50 && !memcmp(in, out, 50) &&
	      b.received == a.received + 1 && b.diverted == a.diverted,
	      "after the buffered ones are taken, delivery is direct again (%s)",
	      what);
}

/* Echo one message of size (pattern k) and check it came back whole. */
static int echo(struct netvm_unet *c, int cc, size_t size, unsigned int k)
{
	static uint8_t out[NETVM_UNET_MSG_MAX], in[NETVM_UNET_MSG_MAX];
	size_t len = 0;
	int err;

	pattern(out, size, k);
	err = netvm_unet_send(c, cc, out, size);
	if (!err)
		err = netvm_unet_recv(c, in, sizeof(in), &len, NULL, 30000);
	if (!err && (len != size || memcmp(in, out, size)))
		err = -EBADMSG;
	return err;
}

/* Receive n echoes of size, patterns k0.., in order: bad ones counted. */
static int take_echoes(struct netvm_unet *c, int n, size_t size,
		       unsigned int k0, int *bad)
{
	static uint8_t out[NETVM_UNET_MSG_MAX], in[NETVM_UNET_MSG_MAX];
	size_t len = 0;
	int err = 0;

	for (int k = 0; k < n && !err; k++) {
		err = netvm_unet_recv(c, in, sizeof(in), &len, NULL, 30000);
		pattern(out, size, k0 + k);
		if (!err && (len != size || memcmp(in, out, size)))
			++*bad;
	}
	return err;
}

/* Pages of [p, p + len) resident now (mincore). */
static size_t resident(void *p, size_t len)
{
	unsigned char vec[256];
	size_t n = len / 4096, r = 0;

	if (n > sizeof(vec) || mincore(p, len, vec))
		return (size_t)-1;
	for (size_t i = 0; i < n; i++)
		r += vec[i] & 1;
	return r;
}

/*
 * FUGU's "pages not resident": C's receive buffers are swapped out, so the
 * NI finds no translation for them; the echoes are diverted to the driver
 * (which maps the page the NI missed) and still arrive in order.  Then a
 * send whose tx page was swapped out waits for the kernel, and one from a
 * page the process unmapped fails with EFAULT.
 */
static void paged_out(struct netvm_unet *c, int cc)
{
	static uint8_t out[NETVM_UNET_MSG_MAX];
	struct netvm_unet_fugu_stats a, b;
	size_t segsz, app_end, rx_len, before, after;
	int bad = 0, err = 0, e2, k;
	uint8_t *seg;

	seg = netvm_unet_segment(c, &segsz, &app_end);
	rx_len = segsz - app_end;
	netvm_unet_fugu_stats(c, &a);
	before = resident(seg + app_end, rx_len);
	err = madvise(seg + app_end, rx_len, MADV_PAGEOUT) ? -errno : 0;
	after = resident(seg + app_end, rx_len);
	check(!err && before == rx_len / 4096 && after == 0,
	      "pageable segment: its %zu receive-buffer pages swapped out (MADV_PAGEOUT: %zu resident before, %zu after)",
	      rx_len / 4096, before, after);
	for (k = 0; k < 20 && !err; k++) {
		pattern(out, 1000, 2000 + k);
		err = netvm_unet_send(c, cc, out, 1000);
	}
	if (!err)
		err = take_echoes(c, 20, 1000, 2000, &bad);
	netvm_unet_fugu_stats(c, &b);
	check(!err && !bad && b.not_resident > a.not_resident &&
	      b.dropped == a.dropped,
	      "20 echoes of 1000 B into swapped-out buffers: %u direct, %u diverted (%u not resident, %u for order), all in order, byte-verified (%s)",
	      b.direct - a.direct, b.diverted - a.diverted,
	      b.not_resident - a.not_resident, b.order - a.order,
	      netvm_strerror(err));
	/* each buffer page comes back at its first miss */
	for (k = 0; k < 2 * BUFS && !err; k++)
		err = echo(c, cc, 1000, 2100 + k);
	netvm_unet_fugu_stats(c, &a);
	for (k = 0; k < 10 && !err; k++)
		err = echo(c, cc, 1000, 2200 + k);
	netvm_unet_fugu_stats(c, &b);
	check(!err && b.diverted == a.diverted && b.direct == a.direct + 10,
	      "once the driver has mapped the pages the NI missed, echoes go direct again (%u direct of 10; %s)",
	      b.direct - a.direct, netvm_strerror(err));

	/* a send's data page swapped out: the NI waits for the kernel */
	netvm_unet_fugu_stats(c, &a);
	pattern(seg + NETVM_UNET_TX_AREA, 3000, 2300);
	err = madvise(seg + NETVM_UNET_TX_AREA, 4096, MADV_PAGEOUT) ? -errno : 0;
	if (!err)
		err = netvm_unet_send_seg(c, cc, NETVM_UNET_TX_AREA, 3000);
	e2 = netvm_unet_flush(c, 10000);
	if (!err && !e2)
		err = take_echoes(c, 1, 3000, 2300, &bad);
	netvm_unet_fugu_stats(c, &b);
	check(!err && !e2 && !bad && b.tx_misses > a.tx_misses,
	      "send_seg of 3000 B from a swapped-out page: the NI missed (%u), the kernel mapped it, the echo is byte-verified (%s / %s)",
	      b.tx_misses - a.tx_misses, netvm_strerror(err),
	      netvm_strerror(e2));
	/* a page the process gave up: the send fails, nothing goes out */
	err = munmap(seg + NETVM_UNET_TX_AREA, 4096) ? -errno : 0;
	if (!err)
		err = netvm_unet_send_seg(c, cc, NETVM_UNET_TX_AREA, 100);
	e2 = netvm_unet_flush(c, 10000);
	if (mmap(seg + NETVM_UNET_TX_AREA, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		err = -errno;
	check(!err && e2 == -EFAULT,
	      "send_seg from a segment page the process unmapped: EFAULT (%s), the endpoint goes on",
	      netvm_strerror(e2));
	err = echo(c, cc, 1000, 2400);
	check(!err, "and the next echo is C's own, byte-verified (%s)",
	      netvm_strerror(err));
}

/*
 * FUGU's "process not running": the server holds its echo, C sends 100
 * short messages and stops itself; the echoes arrive while C is stopped.
 * With the scheduler watch off they go direct (nothing is full); with it
 * on the NI diverts them (the owner is not running); in order either way.
 */
/*
 * The server holds ("hold"); n messages of size (patterns k0..) go out and
 * we stop ourselves (SIGSTOP); a child, once it sees us stopped, lets the
 * server echo and wakes us when the NIC shows what @w names.
 */
static int burst_then_stop(struct netvm_unet *c, int cc, int n, size_t size,
			   unsigned int k0, enum wake w)
{
	static uint8_t out[NETVM_UNET_MSG_MAX];
	struct nic_rx base = nic_rx_now();
	int err;

	err = netvm_unet_send(c, cc, "hold", 4);
	for (int k = 0; k < n && !err; k++) {
		pattern(out, size, k0 + k);
		err = netvm_unet_send(c, cc, out, size);
	}
	if (!err)
		err = netvm_unet_flush(c, 10000);
	if (!err)
		err = stop_until(base, w, n, 1);
	return err;
}

static void stopped(struct netvm_unet *c, int cc, int watch)
{
	struct netvm_unet_fugu_stats a, b;
	int bad = 0, err;

	err = netvm_unet_sched(c, watch);
	netvm_unet_fugu_stats(c, &a);
	if (!err)
		err = burst_then_stop(c, cc, 100, 64, 3000, WAKE_ECHOED);
	if (!err)
		err = take_echoes(c, 100, 64, 3000, &bad);
	netvm_unet_fugu_stats(c, &b);
	if (watch)
		check(!err && !bad && b.not_running > a.not_running &&
		      b.diverted - a.diverted == 100 && b.ring_full == a.ring_full,
		      "watched and stopped: all 100 echoes diverted (%u not running, %u for order), in order, byte-verified (%s)",
		      b.not_running - a.not_running, b.order - a.order,
		      netvm_strerror(err));
	else
		check(!err && !bad && b.diverted == a.diverted &&
		      b.direct == a.direct + 100,
		      "not watched, stopped: the 100 echoes go direct into the queue (%u direct, %u diverted), in order (%s)",
		      b.direct - a.direct, b.diverted - a.diverted,
		      netvm_strerror(err));
	err = netvm_unet_sched(c, 0);
	if (!err)
		err = echo(c, cc, 64, 3200);
	netvm_unet_fugu_stats(c, &a);
	if (!err)
		err = echo(c, cc, 64, 3201);
	netvm_unet_fugu_stats(c, &b);
	check(!err && b.direct == a.direct + 1,
	      "watch off: the next echo goes direct (%s)", netvm_strerror(err));
}

/*
 * FUGU's overflow control: a runaway sender to a stopped (watched)
 * receiver.  Past the high-water mark of C's buffered FIFO (the group sets
 * netvm's unet_divert_kib to DIV_KIB on this node) C's NI tells S's NI to
 * hold S's sends; S waits in netvm_unet_send until C, awake again, has
 * taken everything and is back to direct delivery.  Nothing is lost.
 */
#define DIV_KIB		256
static void runaway(struct netvm_unet *c, int cc)
{
	static uint8_t out[NETVM_UNET_MSG_MAX], in[NETVM_UNET_MSG_MAX];
	const int n = 150, size = 4000;
	struct netvm_unet_fugu_stats a, b;
	struct netvm_unet_flow_stats fa, fb;
	int err, got = 0, bad = 0;
	size_t len;

	err = netvm_unet_sched(c, 1);
	netvm_unet_fugu_stats(c, &a);
	netvm_unet_flow_stats(c, &fa);
	if (!err)
		err = burst_then_stop(c, cc, n, size, 4000, WAKE_HELD);
	netvm_unet_sched(c, 0);
	while (!err && got < n) {
		err = netvm_unet_recv(c, in, sizeof(in), &len, NULL, 30000);
		if (err)
			break;
		pattern(out, size, 4000 + got);
		bad += len != (size_t)size || memcmp(in, out, size);
		got++;
	}
	netvm_unet_fugu_stats(c, &b);
	netvm_unet_flow_stats(c, &fb);
	check(!err && !bad && got == n &&
	      b.buffered_lost == a.buffered_lost && b.dropped == a.dropped &&
	      fb.hold_on > fa.hold_on &&
	      fb.hold_off - fa.hold_off == fb.hold_on - fa.hold_on,
	      "runaway sender, 150 x 4000 B to a stopped receiver past its %d KiB high-water mark: all %d arrive in order, byte-verified, none lost (%u diverted; holds asserted %u, released %u) (%s)",
	      DIV_KIB, got, b.diverted - a.diverted, fb.hold_on - fa.hold_on,
	      fb.hold_off - fa.hold_off, netvm_strerror(err));
	err = echo(c, cc, 1000, 4500);
	netvm_unet_fugu_stats(c, &a);
	check(!err && a.direct == b.direct + 1,
	      "after the hold, the next echo arrives whole and direct (%s)",
	      netvm_strerror(err));
}

static int client(struct netvm *nv, unsigned int node, unsigned int ps,
		  unsigned int pv, unsigned int pn)
{
	static uint8_t out[NETVM_UNET_MSG_MAX], in[NETVM_UNET_MSG_MAX];
	struct netvm_unet *c, *x;
	struct netvm_unet_stats st;
	size_t segsz, app_end, len;
	unsigned int got_ch;
	char text[128];
	uint8_t *seg;
	int cc, xt, xs, xv, xw, err, e2;

	int emu = !!getenv("NETVM_UNET_EMULATE");

	srv_node = node;
	srv_nport = pn;
	emu_eps = emu;

	if (netvm_unet_openx(nv, SEG, BUFSZ, BUFS,
			     emu ? 0 : NETVM_UNET_OPEN_PAGEABLE, &c) ||
	    netvm_unet_open(nv, SEG, BUFSZ, BUFS, &x)) {
		fprintf(stderr, "client: cannot open endpoints\n");
		return 1;
	}
	if (emu)
		check(netvm_unet_emulated(c) == 1 && netvm_unet_emulated(x) == 1 &&
		      netvm_unet_port(c) >= 16 && netvm_unet_port(x) >= 16,
		      "kernel-emulated endpoints: virtual ports %d and %d",
		      netvm_unet_port(c), netvm_unet_port(x));
	else
		check(netvm_unet_emulated(c) == 0 && netvm_unet_port(c) < 16,
		      "NIC endpoints: ports %d and %d", netvm_unet_port(c),
		      netvm_unet_port(x));
	cc = netvm_unet_channel(c, node, ps, T1);
	pattern_self_check();
	check(cc >= 0, "channel to node %u port %u, tag %#x: id %d", node, ps,
	      T1, cc);
	xt = netvm_unet_channel(x, node, ps, T1);
	check(xt >= 0,
	      "a second endpoint of this NIC takes the same (node %u, port %u, tag %#x): id %d",
	      node, ps, T1, xt);
	err = netvm_unet_channel(x, node, ps, T1);
	check(err == -EADDRINUSE,
	      "but one endpoint cannot take it twice: EADDRINUSE (%s)",
	      netvm_strerror(err));
	err = netvm_unet_channel(x, node, 0, T2);
	check(err == -EINVAL, "a channel to port 0 (the kernel's) is refused: %s",
	      netvm_strerror(err));
	xs = netvm_unet_channel(x, node, ps, T2);
	xv = netvm_unet_channel(x, node, pv, T3);
	/* T1 again, to another port: a channel of its own */
	xw = netvm_unet_channel(x, node, pv, T1);
	if (cc < 0 || xt < 0 || xs < 0 || xv < 0 || xw < 0)
		return 1;
	snprintf(text, sizeof(text), "%d %d\n", netvm_unet_port(c),
		 netvm_unet_port(x));
	write_file("/tmp/unet.info", text);
	if (wait_file("/tmp/unet.go", text, sizeof(text), 120)) {
		fprintf(stderr, "client: no go\n");
		return 1;
	}

	pingpong(c, cc, 0);
	pingpong(c, cc, 1);
	upcalls(c, cc);
	divert(c, cc, 400, 40, "receive queue full", 0);
	divert(c, cc, 60, 1000, "no free buffer", 0);
	divert(c, cc, 300, 200, "process stopped (SIGSTOP) meanwhile", 1);
	if (!emu) {
		paged_out(c, cc);
		stopped(c, cc, 0);
		stopped(c, cc, 1);
		runaway(c, cc);
	} else {
		err = netvm_unet_sched(c, 1);
		check(err == -EOPNOTSUPP,
		      "the scheduler watch on a kernel-emulated endpoint: EOPNOTSUPP (%s)",
		      netvm_strerror(err));
	}

	/* a receive buffer too small leaves the message queued */
	pattern(out, 3000, 99);
	err = netvm_unet_send(c, cc, out, 3000);
	if (!err)
		err = netvm_unet_recv(c, in, 100, &len, NULL, 30000);
	e2 = netvm_unet_recv(c, in, sizeof(in), &len, &got_ch, 30000);
	check(err == -EMSGSIZE && len == 3000 && !e2 && !memcmp(in, out, 3000),
	      "a 100 B receive buffer gives EMSGSIZE with the size; the message stays queued and arrives whole");

	/* U-Net's own send: data built in the segment, named by offset */
	seg = netvm_unet_segment(c, &segsz, &app_end);
	pattern(seg + NETVM_UNET_TX_AREA + 5, 3333, 5);
	err = netvm_unet_send_seg(c, cc, NETVM_UNET_TX_AREA + 5, 3333);
	e2 = netvm_unet_flush(c, 10000);
	if (!err && !e2)
		err = netvm_unet_recv(c, in, sizeof(in), &len, NULL, 30000);
	check(!err && !e2 && len == 3333 &&
	      !memcmp(in, seg + NETVM_UNET_TX_AREA + 5, 3333),
	      "send_seg: 3333 B at an unaligned segment offset echoed, byte-verified");

	/* the NI checks every descriptor against the segment */
	err = netvm_unet_send_seg(c, cc, (uint32_t)segsz - 10, 100);
	e2 = netvm_unet_flush(c, 10000);
	check(!err && e2 == -ERANGE, "offset + length past the segment: rejected by the NI, ERANGE (%s)",
	      netvm_strerror(e2));
	err = netvm_unet_send_seg(c, cc, 0xfffffff0u, 64);
	e2 = netvm_unet_flush(c, 10000);
	check(!err && e2 == -ERANGE, "offset that wraps: ERANGE (%s)",
	      netvm_strerror(e2));
	err = netvm_unet_send_seg(c, cc, 0, 5000);
	e2 = netvm_unet_flush(c, 10000);
	check(!err && e2 == -EMSGSIZE, "5000 B descriptor: EMSGSIZE (%s)",
	      netvm_strerror(e2));
	err = netvm_unet_send_seg(c, 9, 0, 64);
	e2 = netvm_unet_flush(c, 10000);
	check(!err && e2 == -ENOTCONN, "descriptor on a channel not set up: ENOTCONN (%s)",
	      netvm_strerror(e2));
	netvm_unet_stats(c, &st);
	/* (and the EFAULT one of paged_out on a NIC endpoint) */
	check(st.send_errors == (emu ? 4u : 5u),
	      "the endpoint's status counts %d refused descriptors (%u)",
	      emu ? 4 : 5, st.send_errors);

	/*
	 * Isolation: X's messages on xs, xv and xt match no channel at node
	 * 1 (xt: S's tag, but from X's port; V has a channel for it, but the
	 * frames name S), and are dropped there; the ones on xw name V and
	 * take V's channel from X.
	 */
	pattern(out, 64, 1);
	for (int i = 0; i < 3; i++) {
		netvm_unet_send(x, xs, out, 64);
		netvm_unet_send(x, xv, out, 1500);
		netvm_unet_send(x, xt, out, 700);
	}
	for (int i = 0; i < X_TO_V; i++) {
		pattern(out, 1000 + i, X_TO_V_K + i);
		netvm_unet_send(x, xw, out, 1000 + i);
	}
	err = netvm_unet_flush(x, 10000);
	check(!err, "the intruder's 9 messages and its %d to V left node 0 (%s)",
	      X_TO_V, netvm_strerror(err));
	/* and the pair still works, nothing of X's in between */
	pattern(out, 77, 3);
	err = netvm_unet_send(c, cc, out, 77);
	if (!err)
		err = netvm_unet_recv(c, in, sizeof(in), &len, NULL, 30000);
	check(!err && len == 77 && !memcmp(in, out, 77),
	      "after the intruder, the next echo is C's own message");

	err = netvm_unet_send(c, cc, "quit", 4);
	if (!err)
		err = netvm_unet_recv(c, in, sizeof(in) - 1, &len, NULL, 30000);
	in[err ? 0 : len] = 0;
	check(!err && !strncmp((char *)in, "bye ok", 6),
	      "the server's victim endpoint received X's %d messages on T1, byte-verified, and nothing else: \"%s\"",
	      X_TO_V, (char *)in);
	netvm_unet_close(x);
	netvm_unet_close(c);
	return failures ? 1 : 0;
}

static uint64_t ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int bench(struct netvm *nv, unsigned int node, unsigned int ps)
{
	static const size_t bsz[] = { 8, 64, 96, 512, 1024, 4096 };
	static uint8_t out[NETVM_UNET_MSG_MAX], in[NETVM_UNET_MSG_MAX];
	static uint64_t rtt[1000];
	struct netvm_unet *c;
	char text[64];
	size_t len;
	int cc, err = 0, n = 500;

	if (netvm_unet_open(nv, SEG, BUFSZ, BUFS, &c))
		return 1;
	cc = netvm_unet_channel(c, node, ps, T1);
	if (cc < 0)
		return 1;
	snprintf(text, sizeof(text), "%d 0\n", netvm_unet_port(c));
	write_file("/tmp/unet.info", text);
	if (wait_file("/tmp/unet.go", text, sizeof(text), 120))
		return 1;
	for (size_t s = 0; s < sizeof(bsz) / sizeof(bsz[0]) && !err; s++) {
		pattern(out, bsz[s], (unsigned int)s);
		for (int i = 0; i < n && !err; i++) {
			uint64_t t0 = ns();

			err = netvm_unet_send(c, cc, out, bsz[s]);
			if (!err)
				err = get(c, in, sizeof(in), &len, NULL, 0);
			rtt[i] = ns() - t0;
		}
		qsort(rtt, n, sizeof(rtt[0]), cmp64);
		printf("rtt %zu B: min %.1f us, median %.1f us, p99 %.1f us\n",
		       bsz[s], rtt[0] / 1e3, rtt[n / 2] / 1e3, rtt[n * 99 / 100] / 1e3);
	}
	for (size_t s = 0; s < sizeof(bsz) / sizeof(bsz[0]) && !err; s++) {
		int total = 2000, sent = 0, got = 0;
		uint64_t t0 = ns(), t;

		while (got < total && !err) {
			while (sent < total && sent - got < 16 && !err)
				err = netvm_unet_send(c, cc, out, bsz[s]), sent++;
			if (!err)
				err = get(c, in, sizeof(in), &len, NULL, 0);
			got++;
		}
		t = ns() - t0;
		printf("stream %zu B: %d echoed, %.2f MB/s each way, %.0f msg/s\n",
		       bsz[s], total, (double)total * bsz[s] / (t / 1e9) / 1e6,
		       total / (t / 1e9));
	}
	if (!err)
		err = netvm_unet_send(c, cc, "quit", 4);
	if (!err)
		err = netvm_unet_recv(c, in, sizeof(in), &len, NULL, 30000);
	if (err)
		fprintf(stderr, "bench: %s\n", netvm_strerror(err));
	netvm_unet_close(c);
	return err ? 1 : 0;
}

/* The channel to GONE names port 1: nothing there is ever reached. */
static int unreach(struct netvm *nv, unsigned int gone, unsigned int node,
		   unsigned int ps)
{
	static uint8_t out[NETVM_UNET_MSG_MAX], in[NETVM_UNET_MSG_MAX];
	struct netvm_unet *c;
	char text[64];
	size_t len = 0;
	int cc, cg, err, flushed;

	if (netvm_unet_open(nv, SEG, BUFSZ, BUFS, &c))
		return 1;
	cc = netvm_unet_channel(c, node, ps, T1);
	cg = netvm_unet_channel(c, gone, 1, T2);
	if (cc < 0 || cg < 0) {
		fprintf(stderr, "unreach: channels: %s / %s\n",
			netvm_strerror(cc), netvm_strerror(cg));
		return 1;
	}
	snprintf(text, sizeof(text), "%d 0\n", netvm_unet_port(c));
	write_file("/tmp/unet.info", text);
	if (wait_file("/tmp/unet.go", text, sizeof(text), 120))
		return 1;
	pattern(out, 64, 5);
	err = netvm_unet_send(c, cg, out, 64);
	flushed = err ? err : netvm_unet_flush(c, 10000);
	check(!err && flushed == -EHOSTUNREACH,
	      "a message to node %u (unreachable) ends with EHOSTUNREACH "
	      "(send %s, flush %s)", gone, netvm_strerror(err),
	      netvm_strerror(flushed));
	pattern(out, 4096, 6);
	err = netvm_unet_send(c, cc, out, 4096);
	if (!err)
		err = netvm_unet_flush(c, 10000);
	if (!err)
		err = netvm_unet_recv(c, in, sizeof(in), &len, NULL, 30000);
	check(!err && len == 4096 && unet_pattern_ok(in, 4096, 6),
	      "then the same endpoint's 4 KiB to node %u comes back echoed, "
	      "byte for byte (%s, %zu B)", node, netvm_strerror(err), len);
	err = netvm_unet_send(c, cc, "quit", 4);
	if (!err)
		err = netvm_unet_recv(c, in, sizeof(in), &len, NULL, 30000);
	check(!err && len >= 6 && !memcmp(in, "bye ok", 6),
	      "the server quits: nothing reached its victim endpoint (%s)",
	      netvm_strerror(err));
	netvm_unet_close(c);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct netvm *nv;
	int err, rc;

	if (argc < 2) {
		fprintf(stderr, "usage: netvm-unet-test serve | client NODE PS PV PN"
			" | bench NODE PS | unreach GONE NODE PS\n");
		return 2;
	}
	err = netvm_open(0, &nv);
	if (err) {
		fprintf(stderr, "netvm_open: %s\n", netvm_strerror(err));
		return 1;
	}
	if (!strcmp(argv[1], "serve") && argc <= 3)
		rc = serve(nv, argc == 3 ? (unsigned int)atoi(argv[2]) : 0);
	else if (!strcmp(argv[1], "bench") && argc == 4)
		rc = bench(nv, (unsigned int)atoi(argv[2]),
			   (unsigned int)atoi(argv[3]));
	else if (!strcmp(argv[1], "unreach") && argc == 5)
		rc = unreach(nv, (unsigned int)atoi(argv[2]),
			     (unsigned int)atoi(argv[3]),
			     (unsigned int)atoi(argv[4]));
	else if (!strcmp(argv[1], "client") && argc == 6)
		rc = client(nv, (unsigned int)atoi(argv[2]),
			    (unsigned int)atoi(argv[3]),
			    (unsigned int)atoi(argv[4]),
			    (unsigned int)atoi(argv[5]));
	else
		rc = 2;
	netvm_close(nv);
	return rc;
}
