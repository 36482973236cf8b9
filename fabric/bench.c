// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm-fabric-bench: throughput of a switch between two fake nodes.
 *   netvm-fabric-bench SRC_SOCK DST_SOCK ROUTE_HEX FRAMES BYTES [SRC_NODE]
 * Sends FRAMES frames of BYTES payload bytes (plus route, header, CRC
 * placeholder) from SRC to DST and prints frames/s and MB/s.  ROUTE_HEX is
 * the whole route, e.g. 81 on one switch or 840181 through tree16.topo.
 * SRC_NODE (default 0) is the node on SRC_SOCK: the switch drops frames
 * that claim another source.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib.h>

static long nframes;
static size_t fsize, rlen;

static int dial(const char *path)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	g_strlcpy(un.sun_path, path, sizeof(un.sun_path));
	if (fd < 0 || connect(fd, (struct sockaddr *)&un, sizeof(un)) < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

static void *receiver(void *arg)
{
	int fd = *(int *)arg;
	size_t cap = 1 << 20, have = 0;
	uint8_t *buf = malloc(cap);
	long got = 0;

	while (got < nframes) {
		ssize_t n = read(fd, buf + have, cap - have);
		size_t off = 0;

		if (n <= 0) {
			fprintf(stderr, "receiver: eof after %ld frames\n", got);
			exit(1);
		}
		have += n;
		while (have - off >= 4) {
			uint32_t len;

			memcpy(&len, buf + off, 4);
			len = ntohl(len);
			if (len != fsize - rlen) {
				fprintf(stderr, "receiver: bad length %u\n", len);
				exit(1);
			}
			if (have - off < 4 + len)
				break;
			off += 4 + len;
			got++;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	int s, d, batch = 16;
	uint8_t route[8];
	size_t payload, rec;
	uint8_t *buf;
	pthread_t th;
	gint64 t0, t1;
	double secs;
	int src;

	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: %s SRC_SOCK DST_SOCK ROUTE_HEX FRAMES BYTES "
			"[SRC_NODE]\n",
			argv[0]);
		return 2;
	}
	rlen = strlen(argv[3]) / 2;
	if (rlen < 1 || rlen > 8 || strlen(argv[3]) % 2) {
		fprintf(stderr, "bad route %s\n", argv[3]);
		return 2;
	}
	for (size_t i = 0; i < rlen; i++) {
		char h[3] = { argv[3][2 * i], argv[3][2 * i + 1], 0 };

		route[i] = strtoul(h, NULL, 16) | 0x80;
	}
	src = argc == 7 ? atoi(argv[6]) : 0;
	nframes = atol(argv[4]);
	payload = atol(argv[5]);
	fsize = rlen + 8 + payload + 4;
	rec = 4 + fsize;
	s = dial(argv[1]);
	d = dial(argv[2]);
	buf = calloc(batch, rec);
	for (int i = 0; i < batch; i++) {
		uint8_t *r = buf + i * rec;
		uint32_t be = htonl(fsize);

		memcpy(r, &be, 4);
		memcpy(r + 4, route, rlen);
		r[4 + rlen] = 1;	/* RAW */
		r[5 + rlen] = 1;	/* version */
		r[6 + rlen] = src >> 8;
		r[7 + rlen] = src;
		r[10 + rlen] = payload >> 8;
		r[11 + rlen] = payload;
	}
	usleep(100000);	/* let the switch accept both */
	pthread_create(&th, NULL, receiver, &d);
	t0 = g_get_monotonic_time();
	for (long sent = 0; sent < nframes;) {
		int k = nframes - sent < batch ? nframes - sent : batch;
		size_t len = k * rec, off = 0;

		while (off < len) {
			ssize_t n = write(s, buf + off, len - off);

			if (n <= 0) {
				perror("write");
				return 1;
			}
			off += n;
		}
		sent += k;
	}
	pthread_join(th, NULL);
	t1 = g_get_monotonic_time();
	secs = (t1 - t0) / 1e6;
	printf("%ld frames of %zu bytes in %.3f s: %.0f frames/s, %.1f MB/s\n",
	       nframes, fsize, secs, nframes / secs, nframes * (double)fsize / secs / 1e6);
	return 0;
}
