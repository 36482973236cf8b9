// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Ping-pong over NetVM: each side exports a buffer; the pinger writes
 * SIZE bytes into the ponger's buffer with a notifying write, the ponger
 * writes them back the same way, and the pinger checks every byte.
 *
 *   netvm-pingpong pong PEER_NODE ITERS SIZE      (start it first)
 *   netvm-pingpong ping PEER_NODE ITERS SIZE
 *
 * Both take port 1 on their node (the first endpoint registered).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <netvm.h>

#define NOTF	1
#define MAXSZ	(64 * 1024)

static int fail(const char *what, int err)
{
	fprintf(stderr, "netvm-pingpong: %s: %s\n", what, netvm_strerror(err));
	return 1;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	static uint8_t buf[2 * MAXSZ] __attribute__((aligned(4096)));
	uint8_t *out = buf, *in = buf + MAXSZ;	/* what we send / receive */
	struct netvm *nv;
	double t0 = 0, best = 1e30;
	int ping, seg, err, i, iters, size;

	if (argc != 5 || (strcmp(argv[1], "ping") && strcmp(argv[1], "pong")))
		return fprintf(stderr, "usage: netvm-pingpong ping|pong PEER_NODE ITERS SIZE\n"), 2;
	ping = !strcmp(argv[1], "ping");
	iters = atoi(argv[3]);
	size = atoi(argv[4]);
	if (iters < 1 || size < 1 || size > MAXSZ)
		return fprintf(stderr, "netvm-pingpong: SIZE is 1..%d\n", MAXSZ), 2;

	if ((err = netvm_open(0, &nv)) || (err = netvm_register(nv, NETVM_PORT_ANY, 0)) < 0)
		return fail("open/register", err);
	if ((err = netvm_export(nv, "pp", buf, sizeof(buf), 0, NULL)) < 0)
		return fail("export", err);
	seg = netvm_import_wait(nv, atoi(argv[2]), 1, "pp", 30000);
	if (seg < 0)
		return fail("import", seg);

	for (i = 0; i < iters; i++) {
		err = 0;
		if (ping) {
			memset(out, (i * 7 + 1) & 0xff, size);
			out[size - 1] = (uint8_t)i;
			t0 = now_us();
			err = netvm_writeN(nv, seg, MAXSZ, out, size, NOTF);
		}
		if (!err)	/* the data is in `in` before the notification */
			err = netvm_notf_wait(nv, NOTF, 30000);
		if (err >= 0)
			err = netvm_notf_ack(nv, NOTF);
		if (err >= 0 && !ping)	/* send it back */
			err = netvm_writeN(nv, seg, MAXSZ, in, size, NOTF);
		if (err < 0)
			return fail(ping ? "ping" : "pong", err);
		if (ping) {
			if (now_us() - t0 < best)
				best = now_us() - t0;
			if (memcmp(in, out, size))
				return fprintf(stderr, "netvm-pingpong: round %d: data differs\n", i), 1;
		}
	}
	if ((err = netvm_flushW(nv)))
		return fail("flush", err);
	if (ping)
		printf("pingpong: %d rounds of %d bytes verified, best round trip %.1f us\n",
		       iters, size, best);
	else
		printf("pong: %d rounds of %d bytes echoed\n", iters, size);
	netvm_close(nv);
	return 0;
}
