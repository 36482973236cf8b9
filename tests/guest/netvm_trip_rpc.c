// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm-trip-rpc: the Tripwire paper's RPC experiment on netvm -- a
 * request and a reply, each a NetVM write whose arrival a tripwire
 * reports, round trip measured with the server idle (blocked in
 * netvm_trip_wait: the hit interrupts and wakes it) and busy (computing,
 * and testing for hits between slices of work without a system call).
 *
 *   netvm-trip-rpc serve idle|busy
 *       Exports "rpc", sets a write tripwire on its request word, writes
 *       "node N port P" to /tmp/nvrpc.info, answers until a request with
 *       sequence 0, then prints how many hits it took while busy.
 *   netvm-trip-rpc call NODE PORT COUNT
 *       Exports "rpcc" (the reply word, with its own tripwire), imports
 *       "rpc", makes COUNT calls and prints "rpc N median_us p99_us
 *       min_us"; every reply is checked (sequence and payload).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "netvm.h"

#define INFO		"/tmp/nvrpc.info"
#define WAIT_MS		20000

struct msg {
	uint32_t arg[3];
	uint32_t seq;		/* last: the tripwire watches it */
};

static void die(const char *what, int err)
{
	fprintf(stderr, "netvm-trip-rpc: %s: %s\n", what, netvm_strerror(err));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap", -errno);
	memset(p, 0, 4096);
	return p;
}

static struct netvm *setup(const char *name, void *mem,
			   struct netvm_tripset *ts, int *port)
{
	struct netvm *nv;
	int err = netvm_open(0, &nv);

	if (err)
		die("open", err);
	*port = netvm_register(nv, NETVM_PORT_ANY, 0);
	if (*port < 0)
		die("register", *port);
	err = netvm_export(nv, name, mem, 4096, 0, NULL);
	if (err < 0)
		die("export", err);
	err = netvm_trip_set(nv, (char *)mem + offsetof(struct msg, seq), 4,
			     NETVM_TRIP_WRITE, ts);
	if (err)
		die("tripwire", err);
	return nv;
}

/* busy: a slice of work between looks at the tripwire queue */
static volatile uint64_t work;

static void wait_hit(struct netvm *nv, struct netvm_tripset *ts, int busy,
		     uint64_t *seen_busy)
{
	struct netvm_trip_event ev;
	int err;

	if (busy) {
		while (netvm_trip_test(nv, ts) == 0)
			for (int i = 0; i < 200; i++)
				work += (uint64_t)i * i;
		(*seen_busy)++;
	}
	err = netvm_trip_wait(nv, ts, WAIT_MS, &ev);
	if (err)
		die("waiting for a request", err);
}

static int serve(int busy)
{
	struct msg *req = page(), *rep = page();
	struct netvm_tripset ts = { 0 };
	uint64_t calls = 0, seen_busy = 0;
	struct netvm_trip_event ev;
	struct netvm_info info;
	struct netvm *nv;
	int port, seg = -1, err;
	FILE *f;

	nv = setup("rpc", req, &ts, &port);
	err = netvm_export(nv, "rep", rep, 4096, 0, NULL);
	if (err < 0 || (err = netvm_info(nv, &info)))
		die("setup", err);
	f = fopen(INFO ".tmp", "w");
	if (!f)
		die("info", -errno);
	fprintf(f, "node %u port %d\n", info.node_id, port);
	fclose(f);
	rename(INFO ".tmp", INFO);

	/* the first call tells us who the client is */
	err = netvm_trip_wait(nv, &ts, 60000, &ev);
	if (err)
		die("first request", err);
	seg = netvm_import_wait(nv, ev.node, ev.port, "rpcc", WAIT_MS);
	if (seg < 0)
		die("import rpcc", seg);
	for (;;) {
		uint32_t seq = req->seq;

		if (seq == 0)
			break;
		rep->arg[0] = req->arg[0] + req->arg[1];
		rep->arg[1] = req->arg[2] ^ 0x5a5a5a5au;
		rep->arg[2] = ~seq;
		rep->seq = seq;
		err = netvm_write(nv, seg, 0, rep, sizeof(*rep));
		if (err)
			die("reply", err);
		calls++;
		wait_hit(nv, &ts, busy, &seen_busy);
	}
	netvm_flushW(nv);
	printf("served %llu calls (%s; %llu hits found while working)\n",
	       (unsigned long long)calls, busy ? "busy" : "idle",
	       (unsigned long long)seen_busy);
	netvm_close(nv);
	return 0;
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int call(unsigned int node, unsigned int port, int count)
{
	struct msg *rep = page(), *req = page();
	uint64_t *rtt = calloc((size_t)count, sizeof(*rtt));
	struct netvm_tripset ts = { 0 };
	struct netvm_trip_event ev;
	struct netvm *nv;
	int me, seg, err, bad = 0;

	if (!rtt || count < 1)
		die("arguments", -EINVAL);
	nv = setup("rpcc", rep, &ts, &me);
	err = netvm_export(nv, "req", req, 4096, 0, NULL);
	if (err < 0)
		die("export", err);
	seg = netvm_import_wait(nv, node, port, "rpc", WAIT_MS);
	if (seg < 0)
		die("import rpc", seg);
	for (int i = 0; i <= count; i++) {
		uint32_t seq = i < count ? (uint32_t)i + 1 : 0;
		uint64_t t0;

		req->arg[0] = (uint32_t)i * 3;
		req->arg[1] = 7;
		req->arg[2] = (uint32_t)i;
		req->seq = seq;
		t0 = now_ns();
		err = netvm_write(nv, seg, 0, req, sizeof(*req));
		if (err)
			die("request", err);
		if (!seq)
			break;
		err = netvm_trip_wait(nv, &ts, WAIT_MS, &ev);
		if (err)
			die("waiting for the reply", err);
		rtt[i] = now_ns() - t0;
		if (rep->seq != seq || rep->arg[0] != (uint32_t)i * 3 + 7 ||
		    rep->arg[1] != ((uint32_t)i ^ 0x5a5a5a5au) ||
		    rep->arg[2] != ~seq)
			bad++;
	}
	netvm_flushW(nv);
	qsort(rtt, (size_t)count, sizeof(*rtt), cmp64);
	printf("rpc %d median_us %.1f p99_us %.1f min_us %.1f bad %d\n", count,
	       rtt[count / 2] / 1e3, rtt[(count * 99) / 100] / 1e3,
	       rtt[0] / 1e3, bad);
	netvm_close(nv);
	free(rtt);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "serve") &&
	    (!strcmp(argv[2], "idle") || !strcmp(argv[2], "busy")))
		return serve(!strcmp(argv[2], "busy"));
	if (argc == 5 && !strcmp(argv[1], "call"))
		return call((unsigned int)atoi(argv[2]),
			    (unsigned int)atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: netvm-trip-rpc serve idle|busy | call NODE PORT COUNT\n");
	return 2;
}
