// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * netvm-raw: send, receive, echo and ping raw frames between two nodes.
 *
 *   netvm-raw [-d INDEX] [-r ROUTE] send N SIZE
 *   netvm-raw [-d INDEX] [-r ROUTE] recv N [TIMEOUT_MS]
 *   netvm-raw [-d INDEX] [-r ROUTE] echo N [TIMEOUT_MS]
 *   netvm-raw [-d INDEX] [-r ROUTE] ping N SIZE [TIMEOUT_MS]
 *
 * Frames carry the pattern of netvm_pattern.h: byte i of frame k is
 * (k*131 + i*7) & 0xff, with k little-endian in the first 4 bytes.
 * Exit status: 0 on success, 1 on any error, mismatch or timeout, 2 on a
 * usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "netvm.h"
#include "netvm_pattern.h"

#define DEFAULT_TIMEOUT_MS	10000
#define MAX_FRAMES		100000000ul

static const char *prog = "netvm-raw";
static uint8_t route[NETVM_ROUTE_MAX];
static unsigned int route_len;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-d INDEX] [-r ROUTE] COMMAND ...\n"
		"  send N SIZE              send N frames of SIZE bytes\n"
		"  recv N [TIMEOUT_MS]      receive N frames and verify their pattern\n"
		"  sweep-send MAX           send one frame of every size 1..MAX\n"
		"  sweep-recv MAX [TIMEOUT_MS] receive and verify a sweep\n"
		"  echo N [TIMEOUT_MS]      receive N frames and send each back\n"
		"  ping N SIZE [TIMEOUT_MS] send N frames, verify each echo, print RTT\n"
		"  -d INDEX  use /dev/netvmINDEX (default 0)\n"
		"  -r ROUTE  source route, hex bytes with MSB set, e.g. 80,81 (default: none)\n"
		"  TIMEOUT_MS is per frame (default %d)\n",
		prog, DEFAULT_TIMEOUT_MS);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Receive one frame, retrying after signals; 0 or a negative errno. */
static int recv_one(struct netvm *nv, void *buf, size_t cap, size_t *len,
		    unsigned int *src, unsigned int timeout_ms)
{
	int err;

	do {
		err = netvm_raw_recv(nv, buf, cap, len, src, timeout_ms);
	} while (err == -EINTR);
	return err;
}

static int cmd_send(struct netvm *nv, unsigned long n, size_t size)
{
	uint8_t *buf = malloc(size);
	unsigned long k;
	int err;

	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	for (k = 0; k < n; k++) {
		netvm_pattern_fill(buf, size, (uint32_t)k);
		err = netvm_raw_send(nv, buf, size, route, route_len);
		if (err) {
			fprintf(stderr, "%s: send: frame %lu: %s\n", prog, k,
				netvm_strerror(err));
			free(buf);
			return 1;
		}
	}
	printf("sent %lu frames of %zu bytes\n", n, size);
	free(buf);
	return 0;
}

static int cmd_recv(struct netvm *nv, unsigned long n, size_t cap,
		    unsigned int timeout_ms)
{
	uint8_t *buf = malloc(cap);
	unsigned long k, bad = 0, bytes = 0;
	unsigned int src = 0;
	size_t len;
	long off;
	int err;

	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	for (k = 0; k < n; k++) {
		err = recv_one(nv, buf, cap, &len, &src, timeout_ms);
		if (err) {
			fprintf(stderr, "%s: recv: frame %lu of %lu: %s\n",
				prog, k, n, netvm_strerror(err));
			printf("received %lu of %lu frames, %lu bad\n", k, n, bad);
			free(buf);
			return 1;
		}
		bytes += len;
		off = netvm_pattern_check(buf, len, (uint32_t)k);
		if (off >= 0) {
			if (bad < 10)
				fprintf(stderr,
					"%s: recv: frame %lu (%zu bytes from node %u): byte %ld is 0x%02x, want 0x%02x%s\n",
					prog, k, len, src, off, buf[off],
					off < 4 && len >= 4 ?
					(uint8_t)(k >> (8 * off)) :
					netvm_pattern_byte((uint32_t)k, (size_t)off),
					len >= 4 && off < 4 ? " (sequence number: lost or reordered frame)" : "");
			bad++;
		}
	}
	printf("received %lu frames, %lu bytes, from node %u, %lu bad\n",
	       n, bytes, src, bad);
	free(buf);
	return bad ? 1 : 0;
}

/*
 * Sweep: frame k (k = 1 .. max) is k bytes long and carries pattern k, so
 * one run moves a frame of every size from 1 byte to the maximum.
 */
static int cmd_sweep_send(struct netvm *nv, size_t max)
{
	uint8_t *buf = malloc(max);
	size_t k;
	int err;

	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	for (k = 1; k <= max; k++) {
		netvm_pattern_fill(buf, k, (uint32_t)k);
		err = netvm_raw_send(nv, buf, k, route, route_len);
		if (err) {
			fprintf(stderr, "%s: sweep: frame of %zu bytes: %s\n", prog,
				k, netvm_strerror(err));
			free(buf);
			return 1;
		}
	}
	printf("sent one frame of every size from 1 to %zu bytes\n", max);
	free(buf);
	return 0;
}

static int cmd_sweep_recv(struct netvm *nv, size_t max, size_t cap,
			  unsigned int timeout_ms)
{
	uint8_t *buf = malloc(cap);
	unsigned long bad = 0;
	unsigned int src = 0;
	size_t k, len;
	long off;
	int err;

	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	for (k = 1; k <= max; k++) {
		err = recv_one(nv, buf, cap, &len, &src, timeout_ms);
		if (err) {
			fprintf(stderr, "%s: sweep: waiting for the %zu-byte frame: %s\n",
				prog, k, netvm_strerror(err));
			free(buf);
			return 1;
		}
		off = len == k ? netvm_pattern_check(buf, len, (uint32_t)k) : 0;
		if (off >= 0) {
			if (bad < 10)
				fprintf(stderr, "%s: sweep: frame %zu: %zu bytes, first bad byte %ld\n",
					prog, k, len, off);
			bad++;
		}
	}
	printf("received one frame of every size from 1 to %zu bytes from node %u, %lu bad\n",
	       max, src, bad);
	free(buf);
	return bad ? 1 : 0;
}

static int cmd_echo(struct netvm *nv, unsigned long n, size_t cap,
		    unsigned int timeout_ms)
{
	uint8_t *buf = malloc(cap);
	unsigned long k;
	size_t len;
	int err;

	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	for (k = 0; k < n; k++) {
		err = recv_one(nv, buf, cap, &len, NULL, timeout_ms);
		if (err) {
			fprintf(stderr, "%s: echo: receiving frame %lu of %lu: %s\n",
				prog, k, n, netvm_strerror(err));
			free(buf);
			return 1;
		}
		err = netvm_raw_send(nv, buf, len, route, route_len);
		if (err) {
			fprintf(stderr, "%s: echo: sending frame %lu back: %s\n",
				prog, k, netvm_strerror(err));
			free(buf);
			return 1;
		}
	}
	printf("echoed %lu frames\n", n);
	free(buf);
	return 0;
}

static int cmd_ping(struct netvm *nv, unsigned long n, size_t size,
		    size_t cap, unsigned int timeout_ms)
{
	uint8_t *tx = malloc(size), *rx = malloc(cap);
	double *rtt = calloc(n ? n : 1, sizeof(double));
	double t0, min = 0, max = 0, median;
	unsigned long k, drained = 0;
	int err, ret = 1;
	size_t len;

	if (!tx || !rx || !rtt) {
		fprintf(stderr, "%s: out of memory\n", prog);
		goto out;
	}
	/* Throw away stale frames so that every echo matches its ping. */
	while (netvm_raw_recv(nv, rx, cap, &len, NULL, 0) == 0)
		drained++;
	if (drained)
		fprintf(stderr, "%s: ping: discarded %lu stale frames\n", prog,
			drained);

	for (k = 0; k < n; k++) {
		netvm_pattern_fill(tx, size, (uint32_t)k);
		t0 = now_us();
		err = netvm_raw_send(nv, tx, size, route, route_len);
		if (err) {
			fprintf(stderr, "%s: ping: sending frame %lu: %s\n",
				prog, k, netvm_strerror(err));
			goto out;
		}
		err = recv_one(nv, rx, cap, &len, NULL, timeout_ms);
		if (err) {
			fprintf(stderr, "%s: ping: echo of frame %lu: %s\n",
				prog, k, netvm_strerror(err));
			goto out;
		}
		rtt[k] = now_us() - t0;
		if (len != size || memcmp(tx, rx, size)) {
			long off = len == size ? netvm_pattern_check(rx, len, (uint32_t)k) : -1;

			fprintf(stderr,
				"%s: ping: echo of frame %lu differs (%zu bytes, want %zu; first bad byte %ld)\n",
				prog, k, len, size, off);
			goto out;
		}
		if (!k || rtt[k] < min)
			min = rtt[k];
		if (rtt[k] > max)
			max = rtt[k];
	}
	median = netvm_median(rtt, n);
	printf("ping: %lu frames of %zu bytes: rtt min %.1f us, median %.1f us, max %.1f us\n",
	       n, size, min, median, max);
	ret = 0;
out:
	free(tx);
	free(rx);
	free(rtt);
	return ret;
}

static int parse_count(const char *s, const char *what, unsigned long max,
		       unsigned long *out)
{
	if (netvm_parse_uint(s, max, out)) {
		fprintf(stderr, "%s: bad %s '%s'\n", prog, what, s);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long index = 0, n = 0, size = 0, timeout = DEFAULT_TIMEOUT_MS;
	struct netvm_info info;
	struct netvm *nv;
	const char *cmd;
	int opt, err, ret, nargs;

	while ((opt = getopt(argc, argv, "+d:r:h")) != -1) {
		switch (opt) {
		case 'd':
			if (parse_count(optarg, "device index", 255, &index))
				return 2;
			break;
		case 'r':
			if (netvm_parse_route(optarg, route, &route_len)) {
				fprintf(stderr, "%s: bad route '%s' (up to %d hex bytes with MSB set, e.g. 80,81)\n",
					prog, optarg, NETVM_ROUTE_MAX);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	cmd = argv[optind++];
	nargs = argc - optind;

	if (!strcmp(cmd, "send") || !strcmp(cmd, "ping")) {
		if (nargs < 2 || nargs > (cmd[0] == 'p' ? 3 : 2)) {
			usage(stderr);
			return 2;
		}
		if (parse_count(argv[optind], "frame count", MAX_FRAMES, &n) ||
		    parse_count(argv[optind + 1], "frame size", 1ul << 20, &size))
			return 2;
		if (!size) {
			fprintf(stderr, "%s: frame size must be at least 1\n", prog);
			return 2;
		}
		if (nargs == 3 &&
		    parse_count(argv[optind + 2], "timeout", 3600000, &timeout))
			return 2;
	} else if (!strcmp(cmd, "sweep-send") || !strcmp(cmd, "sweep-recv")) {
		if (nargs < 1 || nargs > (cmd[6] == 'r' ? 2 : 1)) {
			usage(stderr);
			return 2;
		}
		if (parse_count(argv[optind], "largest frame", 1ul << 20, &size))
			return 2;
		if (!size) {
			fprintf(stderr, "%s: MAX must be at least 1\n", prog);
			return 2;
		}
		if (nargs == 2 &&
		    parse_count(argv[optind + 1], "timeout", 3600000, &timeout))
			return 2;
	} else if (!strcmp(cmd, "recv") || !strcmp(cmd, "echo")) {
		if (nargs < 1 || nargs > 2) {
			usage(stderr);
			return 2;
		}
		if (parse_count(argv[optind], "frame count", MAX_FRAMES, &n))
			return 2;
		if (nargs == 2 &&
		    parse_count(argv[optind + 1], "timeout", 3600000, &timeout))
			return 2;
	} else {
		fprintf(stderr, "%s: unknown command '%s'\n", prog, cmd);
		usage(stderr);
		return 2;
	}

	err = netvm_open((int)index, &nv);
	if (err) {
		fprintf(stderr, "%s: /dev/" NETVM_DEV_PREFIX "%lu: %s\n", prog,
			index, netvm_strerror(err));
		return 1;
	}
	err = netvm_info(nv, &info);
	if (err) {
		fprintf(stderr, "%s: info: %s\n", prog, netvm_strerror(err));
		netvm_close(nv);
		return 1;
	}
	if (size > info.raw_max_payload) {
		fprintf(stderr, "%s: frame size %lu above the NIC's maximum %u\n",
			prog, size, info.raw_max_payload);
		netvm_close(nv);
		return 2;
	}

	if (!strcmp(cmd, "sweep-send")) {
		ret = cmd_sweep_send(nv, size);
		netvm_close(nv);
		return ret;
	}
	if (!strcmp(cmd, "sweep-recv")) {
		ret = cmd_sweep_recv(nv, size, info.raw_max_payload,
				     (unsigned int)timeout);
		netvm_close(nv);
		return ret;
	}
	switch (cmd[0]) {
	case 's':
		ret = cmd_send(nv, n, size);
		break;
	case 'r':
		ret = cmd_recv(nv, n, info.raw_max_payload, (unsigned int)timeout);
		break;
	case 'e':
		ret = cmd_echo(nv, n, info.raw_max_payload, (unsigned int)timeout);
		break;
	default:
		ret = cmd_ping(nv, n, size, info.raw_max_payload,
			       (unsigned int)timeout);
		break;
	}
	netvm_close(nv);
	return ret;
}
