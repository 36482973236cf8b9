// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * netvm-sync-bench: what netvm-bench does not measure because it needs the
 * synchronisation library or handlers -- channel ping-pong, MCS lock
 * hand-off between two nodes, and notification latency through a handler.
 * Run the same command on both nodes (each names the other); the side
 * with the lower node id measures and prints, the other answers.
 *
 *   netvm-sync-bench chan PEER ITERS SIZE[,SIZE...]
 *       a message over one channel, the same back over another;
 *       prints "chan SIZE median_us P99_us" per size (every byte checked)
 *   netvm-sync-bench lock PEER ITERS
 *       both nodes take and release one MCS lock ITERS times, each adding
 *       one to a counter inside the lock; prints "lock handoff_us" (time
 *       per acquisition while both contend) and checks the counter
 *   netvm-sync-bench notf PEER ITERS
 *       a notifying write answered by a handler (netvm_notf_arm) on the
 *       other side, the answer awaited by spinning; prints "handler
 *       median_us p99_us", then the same answered by a spinning loop
 *
 * Every node registers port 1 (the first endpoint; the sync library's
 * proxy takes port 2).  Exit status 1 on any error or bad data.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "netvm.h"
#include "netvm_sync.h"

#define PORT		1
#define TIMEOUT_MS	60000
#define CHAN_MAX	65536
#define N_PING		5		/* notification numbers */
#define N_PONG		6

static struct netvm *nv;
static unsigned int me, peer;

static int fail(const char *what, int err)
{
	fprintf(stderr, "netvm-sync-bench: %s: %s\n", what, netvm_strerror(err));
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *s, unsigned int n)
{
	qsort(s, n, sizeof(*s), cmp);
	printf("%s median_us %.1f p99_us %.1f\n", what, s[n / 2],
	       s[(n * 99) / 100]);
	fflush(stdout);
}

static uint8_t pat(unsigned int i, size_t j)
{
	return (uint8_t)(i * 31 + j * 7);
}

static int chan(unsigned int iters, const char *sizes)
{
	const struct netvm_chan_cfg ab = {
		.name = "sb-ab", .nbuf = 8, .msg_max = CHAN_MAX, .refill = 4,
		.sent_notf = 1, .repl_notf = 2, .timeout_ms = TIMEOUT_MS,
	}, ba = {
		.name = "sb-ba", .nbuf = 8, .msg_max = CHAN_MAX, .refill = 4,
		.sent_notf = 3, .repl_notf = 4, .timeout_ms = TIMEOUT_MS,
	};
	static uint8_t msg[CHAN_MAX];
	int lead = me < peer, err, bad = 0;
	struct netvm_chan *out, *in;
	double *s = calloc(iters, sizeof(*s));
	char *list = strdup(sizes), *tok;

	if (!s || !list)
		return fail("memory", -ENOMEM);
	err = lead ? netvm_chan_open_send(nv, peer, PORT, &ab, &out) :
		     netvm_chan_open_recv(nv, peer, PORT, &ab, &in);
	if (!err)
		err = lead ? netvm_chan_open_recv(nv, peer, PORT, &ba, &in) :
			     netvm_chan_open_send(nv, peer, PORT, &ba, &out);
	if (err)
		return fail("channel open", err);
	for (tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		size_t size = strtoul(tok, NULL, 0), len, j;
		const uint8_t *p;

		if (!size || size > CHAN_MAX)
			return fail("size", -EINVAL);
		for (unsigned int i = 0; i < iters; i++) {
			double t0 = now_us();

			if (lead) {
				for (j = 0; j < size; j++)
					msg[j] = pat(i, j);
				err = netvm_chan_send(out, msg, size);
			}
			if (!err)
				err = netvm_chan_recv(in, (const void **)&p, &len);
			if (err)
				return fail("ping-pong", err);
			bad += len != size;
			for (j = 0; j < len && j < size; j++)
				bad += p[j] != pat(i, j);
			if (!lead) {
				memcpy(msg, p, len);
				err = netvm_chan_send(out, msg, len);
				if (err)
					return fail("pong", err);
			}
			s[i] = now_us() - t0;
		}
		if (lead) {
			char what[64];

			snprintf(what, sizeof(what), "chan %zu", size);
			report(what, s, iters);
		}
	}
	netvm_chan_close(out);
	netvm_chan_close(in);
	if (bad)
		printf("chan: %d bad bytes or lengths\n", bad);
	return bad ? 1 : 0;
}

static int lock(unsigned int iters)
{
	struct netvm_sync_member m[2];
	struct netvm_sync_obj l;
	struct netvm_sync *s;
	int rank = me > peer, err;
	volatile uint32_t *counter;
	double t0, t;
	static uint32_t local;	/* the holder's own count, see below */

	m[rank] = (struct netvm_sync_member){ me, PORT };
	m[!rank] = (struct netvm_sync_member){ peer, PORT };
	err = netvm_sync_open(nv, "sbench", m, 2, rank, TIMEOUT_MS, &s);
	if (!err)
		err = netvm_mcs_init(s, &l, 0, 0);
	if (err)
		return fail("sync open", err);
	/* a count only this node touches, inside the lock: the lock's own
	 * mutual exclusion is what the library's tests check */
	counter = &local;
	err = netvm_sync_barrier(s);
	t0 = now_us();
	for (unsigned int i = 0; i < iters && !err; i++) {
		err = netvm_mcs_acquire(&l);
		if (!err) {
			(*counter)++;
			err = netvm_mcs_release(&l);
		}
	}
	t = now_us() - t0;
	if (!err)
		err = netvm_sync_barrier(s);
	if (err)
		return fail("lock", err);
	if (rank == 0)
		printf("lock handoff_us %.1f (%u acquisitions per node, 2 nodes contending)\n",
		       t / iters, iters);
	netvm_sync_close(s);
	return *counter == iters ? 0 : 1;
}

/* notf: the answering side's handler writes the answer back */
static int seg_peer;
static volatile unsigned int answered;

static void answer(struct netvm *h, uint32_t n, void *arg)
{
	static uint8_t b[8];

	(void)n;
	(void)arg;
	if (netvm_writeN(h, seg_peer, 0, b, sizeof(b), N_PONG) == 0)
		answered++;
}

static int notf(unsigned int iters)
{
	static uint8_t *buf;
	double *s = calloc(iters, sizeof(*s));
	int lead = me < peer, err;

	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!s || buf == MAP_FAILED)
		return fail("memory", -ENOMEM);
	err = netvm_export(nv, "sb", buf, 4096, 0, NULL);
	if (err < 0)
		return fail("export", err);
	seg_peer = netvm_import_wait(nv, peer, PORT, "sb", TIMEOUT_MS);
	if (seg_peer < 0)
		return fail("import", seg_peer);
	for (int round = 0; round < 2; round++) {	/* handler, then spin */
		if (!lead) {
			if (round == 0) {
				err = netvm_notf_arm(nv, N_PING, answer, NULL);
				if (err)
					return fail("arm", err);
				while (answered < iters + 1)
					usleep(1000);
				netvm_notf_disarm(nv, N_PING);
				/* tell the leader the handler is gone */
				err = netvm_writeN(nv, seg_peer, 0, buf, 8, N_PONG);
				if (err)
					return fail("ready", err);
			} else {
				for (unsigned int i = 0; i <= iters; i++) {
					err = netvm_notf_spin(nv, N_PING, TIMEOUT_MS);
					if (err > 0)
						err = netvm_notf_ack(nv, N_PING) < 0;
					if (!err)
						err = netvm_writeN(nv, seg_peer, 0, buf,
								   8, N_PONG);
					if (err)
						return fail("spin answer", err);
				}
			}
			continue;
		}
		for (unsigned int i = 0; i <= iters; i++) {	/* +1: warm-up */
			double t0 = now_us();

			err = netvm_writeN(nv, seg_peer, 0, buf, 8, N_PING);
			if (!err)
				err = netvm_notf_spin(nv, N_PONG, TIMEOUT_MS);
			if (err > 0)
				err = netvm_notf_ack(nv, N_PONG) < 0 ? -EIO : 0;
			if (err)
				return fail("ping", err);
			if (i)
				s[i - 1] = now_us() - t0;
		}
		report(round == 0 ? "handler" : "spin", s, iters);
		if (round == 0) {	/* wait until the handler is disarmed */
			err = netvm_notf_spin(nv, N_PONG, TIMEOUT_MS);
			if (err > 0)
				err = netvm_notf_ack(nv, N_PONG) < 0 ? -EIO : 0;
			if (err)
				return fail("ready", err);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct netvm_info info;
	unsigned int iters;
	int err;

	if (argc < 4 || (strcmp(argv[1], "chan") && strcmp(argv[1], "lock") &&
			 strcmp(argv[1], "notf")) ||
	    (!strcmp(argv[1], "chan") && argc != 5)) {
		fprintf(stderr, "usage: netvm-sync-bench chan PEER ITERS SIZE[,SIZE..] | lock PEER ITERS | notf PEER ITERS\n");
		return 2;
	}
	peer = (unsigned int)atoi(argv[2]);
	iters = (unsigned int)atoi(argv[3]);
	if (!iters)
		return fail("ITERS", -EINVAL);
	err = netvm_open(0, &nv);
	if (!err)
		err = netvm_info(nv, &info);
	if (err)
		return fail("open", err);
	me = info.node_id;
	err = netvm_register(nv, NETVM_PORT_ANY, 0);
	if (err != PORT)
		return fail("register (port 1 must be free)", err < 0 ? err : -EBUSY);
	if (!strcmp(argv[1], "chan"))
		err = chan(iters, argv[4]);
	else if (!strcmp(argv[1], "lock"))
		err = lock(iters);
	else
		err = notf(iters);
	netvm_close(nv);
	return err;
}
