// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * netvm-fugu-test: FUGU's overflow control between two guests (group
 * "unet-flow" of run-guest-tests.py, unet_flow_groups.py; benchmark
 * bench_fugu.py).  One sender streams messages of random size
 * (1..4096 B, deterministic from SEED) as fast as netvm_unet_send allows;
 * the receiver checks every one for its number, size and every byte.
 *
 *   netvm-fugu-test recv NAME PEER N SEED [-p AT:MS]... [-s US] [-q SECS]
 *       opens an endpoint, writes "port P" to /tmp/NAME.info, waits for
 *       the sender's port in /tmp/NAME.peer, sets up the channel (tag from
 *       NAME), writes /tmp/NAME.ready, then receives N messages.  -p: after
 *       message AT, stop (SIGSTOP, a child sends SIGCONT) for MS ms; -s:
 *       sleep US µs after every receive (a slow receiver); -q: stop
 *       quietly at the first SECS without a message (the sender was
 *       killed) and report what arrived.  Prints one "fugu-recv ..." line.
 *   netvm-fugu-test send NAME PEER PORT N SEED [-r US] [-n]
 *       opens an endpoint, sets up the channel to (PEER, PORT), writes
 *       "port P" to /tmp/NAME.info, waits for /tmp/NAME.go, sends N
 *       messages (-r: one every US µs instead of full speed; -n: with
 *       NETVM_UNET_DONTWAIT, retrying after 100 µs on -EAGAIN), flushes and
 *       prints one "fugu-send ..." line.  A thread samples the NI's
 *       "held" flag every millisecond for the time held.
 * Both write their pid to /tmp/NAME.pid (recv: NAME.rpid) for the runner,
 * which kills one of them in two checks.
 *
 * The lines are key=value pairs; the runner decides what they must show.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netvm.h"
#include "guest_tap.h"
#include "unet_pattern.h"

#define SEG		(512u * 1024)
#define BUFS		64
#define BUFSZ		4096
#define MAX_PAUSES	4

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Message k's size, 1..4096, the same at both ends. */
static size_t msg_size(uint32_t seed, uint32_t k)
{
	return 1 + unet_mix32(seed ^ unet_mix32(k)) % NETVM_UNET_MSG_MAX;
}

static uint32_t name_tag(const char *name)
{
	uint32_t h = 0x4000;

	while (*name)
		h = h * 31 + (uint8_t)*name++;
	return 0x40000000u | (h & 0xffffff);
}

static void path(char *buf, size_t cap, const char *name, const char *what)
{
	snprintf(buf, cap, "/tmp/%s.%s", name, what);
}

/* Stop ourselves for ms: a child wakes us (SIGSTOP cannot be caught). */
/*
 * The child that wakes the stopped receiver execs "wake" rather than
 * sleeping as a fork: a fork would share the endpoint's mappings, and
 * the endpoint would stay open until it exits, however early the
 * receiver is killed (the descriptor itself is close-on-exec).
 */
static void stop_for(unsigned int ms)
{
	pid_t child = fork();

	if (child == 0) {
		char a_ms[16], a_pid[16];

		snprintf(a_ms, sizeof(a_ms), "%u", ms);
		snprintf(a_pid, sizeof(a_pid), "%d", (int)getppid());
		execl("/proc/self/exe", "netvm-fugu-test", "wake", a_ms, a_pid,
		      (char *)NULL);
		_exit(127);
	}
	if (child > 0) {
		raise(SIGSTOP);
		waitpid(child, NULL, 0);
	}
}

static int recv_main(struct netvm *nv, int argc, char **argv)
{
	static uint8_t buf[NETVM_UNET_MSG_MAX];
	unsigned int at[MAX_PAUSES], ms[MAX_PAUSES], np = 0, slow_us = 0;
	const char *name = argv[0];
	unsigned int peer = atoi(argv[1]), n = atoi(argv[2]);
	uint32_t seed = strtoul(argv[3], NULL, 0);
	double back[MAX_PAUSES] = { 0 }, resumed = 0, t0;
	struct netvm_unet_fugu_stats fa, fb;
	struct netvm_unet_flow_stats wb;
	unsigned int got = 0, bad = 0, pause = 0, sender, ch;
	int quiet = 0, c, err = 0, waiting = -1, wait_ms = 30000;
	struct netvm_unet *u;
	char p[64], text[64];
	size_t len;

	optind = 4;
	while ((c = getopt(argc, argv, "p:s:q:")) != -1) {
		if (c == 'p' && np < MAX_PAUSES &&
		    sscanf(optarg, "%u:%u", &at[np], &ms[np]) == 2)
			np++;
		else if (c == 's')
			slow_us = atoi(optarg);
		else if (c == 'q')
			quiet = 1, wait_ms = 1000 * atoi(optarg);
		else
			return 2;
	}
	err = netvm_unet_open(nv, SEG, BUFSZ, BUFS, &u);
	if (err) {
		fprintf(stderr, "recv: open: %s\n", netvm_strerror(err));
		return 1;
	}
	snprintf(text, sizeof(text), "%d\n", (int)getpid());
	path(p, sizeof(p), name, "rpid");
	write_file(p, text);
	snprintf(text, sizeof(text), "port %d\n", netvm_unet_port(u));
	path(p, sizeof(p), name, "info");
	write_file(p, text);
	path(p, sizeof(p), name, "peer");
	if (wait_file(p, text, sizeof(text), 300) ||
	    sscanf(text, "%u", &sender) != 1)
		return 1;
	err = netvm_unet_channel(u, peer, sender, name_tag(name));
	if (err < 0) {
		fprintf(stderr, "recv: channel: %s\n", netvm_strerror(err));
		return 1;
	}
	path(p, sizeof(p), name, "ready");
	write_file(p, "ready\n");
	netvm_unet_fugu_stats(u, &fa);
	t0 = now_s();
	while (got < n) {
		err = netvm_unet_recv(u, buf, sizeof(buf), &len, &ch, wait_ms);
		if (err == -ETIMEDOUT && quiet)
			break;
		if (err) {
			fprintf(stderr, "recv: #%u: %s\n", got,
				netvm_strerror(err));
			break;
		}
		if (len != msg_size(seed, got) ||
		    !unet_pattern_ok(buf, len, got)) {
			if (bad++ < 3)
				fprintf(stderr, "recv: #%u wrong: %zu B (want %zu)\n",
					got, len, msg_size(seed, got));
		}
		got++;
		if (waiting >= 0) {
			netvm_unet_flow_stats(u, &wb);
			if (!wb.divert_mode) {
				back[waiting] = now_s() - resumed;
				waiting = -1;
			}
		}
		if (pause < np && got == at[pause]) {
			stop_for(ms[pause]);
			resumed = now_s();
			waiting = pause++;
		}
		if (slow_us)
			usleep(slow_us);
	}
	netvm_unet_fugu_stats(u, &fb);
	netvm_unet_flow_stats(u, &wb);
	printf("fugu-recv name=%s n=%u got=%u bad=%u err=%d secs=%.3f direct=%u diverted=%u ring_full=%u no_buf=%u order=%u dropped=%u lost=%u hold_on=%u hold_off=%u divert_mode=%u",
	       name, n, got, bad, err, now_s() - t0, fb.direct - fa.direct,
	       fb.diverted - fa.diverted, fb.ring_full - fa.ring_full,
	       fb.no_buf - fa.no_buf, fb.order - fa.order,
	       fb.dropped - fa.dropped, fb.buffered_lost - fa.buffered_lost,
	       wb.hold_on, wb.hold_off, wb.divert_mode);
	for (unsigned int i = 0; i < np; i++)
		printf(" back%u=%.3f", i, waiting == (int)i ? -1.0 : back[i]);
	printf("\n");
	fflush(stdout);
	netvm_unet_close(u);
	return (got == n || quiet) && !bad ? 0 : 1;
}

/* The sender's time held, sampled every millisecond from the NI's flag. */
struct sampler {
	struct netvm_unet *u;
	volatile int stop;
	double held;
};

static void *sample(void *arg)
{
	struct sampler *s = arg;
	struct netvm_unet_flow_stats f;
	double last = now_s();

	while (!s->stop) {
		double t;

		usleep(1000);
		t = now_s();
		netvm_unet_flow_stats(s->u, &f);
		if (f.tx_held_now)
			s->held += t - last;
		last = t;
	}
	return NULL;
}

static int send_main(struct netvm *nv, int argc, char **argv)
{
	static uint8_t buf[NETVM_UNET_MSG_MAX];
	const char *name = argv[0];
	unsigned int peer = atoi(argv[1]), port = atoi(argv[2]);
	unsigned int n = atoi(argv[3]), rate_us = 0, k, eagain = 0;
	unsigned int flags = 0;
	uint32_t seed = strtoul(argv[4], NULL, 0);
	struct netvm_unet_flow_stats f;
	struct sampler s = { 0 };
	double t0, secs;
	uint64_t bytes = 0;
	struct netvm_unet *u;
	pthread_t th;
	char p[64], text[64];
	int c, ch, err;

	optind = 5;
	while ((c = getopt(argc, argv, "r:n")) != -1) {
		if (c == 'r')
			rate_us = atoi(optarg);
		else if (c == 'n')
			flags = NETVM_UNET_DONTWAIT;
		else
			return 2;
	}
	err = netvm_unet_open(nv, SEG, BUFSZ, BUFS, &u);
	if (err) {
		fprintf(stderr, "send: open: %s\n", netvm_strerror(err));
		return 1;
	}
	ch = netvm_unet_channel(u, peer, port, name_tag(name));
	if (ch < 0) {
		fprintf(stderr, "send: channel: %s\n", netvm_strerror(ch));
		return 1;
	}
	snprintf(text, sizeof(text), "%d\n", (int)getpid());
	path(p, sizeof(p), name, "pid");
	write_file(p, text);
	snprintf(text, sizeof(text), "port %d\n", netvm_unet_port(u));
	path(p, sizeof(p), name, "info");
	write_file(p, text);
	path(p, sizeof(p), name, "go");
	if (wait_file(p, text, sizeof(text), 300))
		return 1;
	s.u = u;
	if (pthread_create(&th, NULL, sample, &s))
		return 1;
	t0 = now_s();
	for (k = 0, err = 0; k < n && !err; k++) {
		size_t len = msg_size(seed, k);

		unet_pattern(buf, len, k);
		while ((err = netvm_unet_sendx(u, ch, buf, len, flags, 0)) ==
		       -EAGAIN && flags) {
			eagain++;
			usleep(100);
		}
		bytes += len;
		if (rate_us)
			usleep(rate_us);
	}
	if (!err)
		err = netvm_unet_flush(u, 600000);
	secs = now_s() - t0;
	s.stop = 1;
	pthread_join(th, NULL);
	netvm_unet_flow_stats(u, &f);
	printf("fugu-send name=%s n=%u sent=%u err=%d secs=%.3f msgs_per_s=%.0f mb_per_s=%.2f tx_held=%u held_secs=%.3f hold_expired=%u peer_dropped=%u eagain=%u\n",
	       name, n, k, err, secs, k / secs, bytes / secs / 1e6, f.tx_held,
	       s.held, f.hold_expired, f.peer_dropped, eagain);
	fflush(stdout);
	netvm_unet_close(u);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct netvm *nv;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "wake")) {
		/* stop_for's child: SIGCONT to PID after MS ms */
		usleep(strtoul(argv[2], NULL, 10) * 1000u);
		return kill((pid_t)atoi(argv[3]), SIGCONT) ? 1 : 0;
	}
	if (argc < 2 || (strcmp(argv[1], "recv") && strcmp(argv[1], "send")) ||
	    (!strcmp(argv[1], "recv") && argc < 6) ||
	    (!strcmp(argv[1], "send") && argc < 7)) {
		fprintf(stderr, "usage: netvm-fugu-test recv NAME PEER N SEED [-p AT:MS]... [-s US] [-q SECS]\n"
			"       netvm-fugu-test send NAME PEER PORT N SEED [-r US] [-n]\n");
		return 2;
	}
	rc = netvm_open(0, &nv);
	if (rc) {
		fprintf(stderr, "netvm_open: %s\n", netvm_strerror(rc));
		return 1;
	}
	if (!strcmp(argv[1], "recv"))
		rc = recv_main(nv, argc - 2, argv + 2);
	else
		rc = send_main(nv, argc - 2, argv + 2);
	netvm_close(nv);
	return rc;
}
