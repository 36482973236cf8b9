// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm-lib-test: libnetvm's NetVM calls between two guests, for the guest
 * suite's netvm-lib group.
 *
 *   netvm-lib-test serve
 *       Registers an endpoint, exports "buf" (BUF_SIZE bytes, zeroed) and
 *       "ro" (64 KiB read-only, pattern seed 99), writes "node N port P"
 *       to /tmp/nvlib.info and serves one command per line written to the
 *       FIFO /tmp/nvlib.ctl, answering on /tmp/nvlib.resp:
 *         check OFF LEN SEED | fill OFF LEN SEED |
 *         notf N TIMEOUT_MS OFF LEN SEED (netvm_notf_wait, then check the
 *         data, netvm_notf_ack; "ok N pending") |
 *         spin N TIMEOUT_MS (netvm_notf_spin, netvm_notf_ack; "ok") |
 *         armfd (netvm_ep_fd(): "ok") |
 *         rekey ("ro" gets a new key and the name "ro2", netvm_rekey;
 *         "ok" once a bad handle gave -EBADF and a taken name -EEXIST) |
 *         quit
 *   netvm-lib-test client NODE PORT
 *       Imports "buf" and "ro" from (NODE, PORT) over the network and runs
 *       the sweep, atomics and error paths; one "ok - ..." or
 *       "not ok - ..." line per check; "range OFF LEN SEED" names each
 *       range the sweep wrote (disjoint, so all of them stay in place),
 *       for the server to check.  Exit 1 if any failed.
 *   netvm-lib-test notify NODE PORT OFF LEN SEED NOTF
 *       Imports "buf" and writes the pattern with netvm_writeN, flushes.
 *   netvm-lib-test describe NODE PORT
 *       Imports "ro", reads it, and prints its description (netvm_segment:
 *       node port addr len key flags pt_rows).
 *   netvm-lib-test rekeyed NODE PORT DESCRIPTION...
 *       After the server's "rekey": the old description reads nothing
 *       (-EKEYREJECTED), the old name imports nothing (-ENOENT), "ro2"
 *       has a new key and the same bytes.  "ok - " lines as the client.
 *
 * Pattern byte i: (((i + seed) * 0x9e3779b97f4a7c15) >> 56).
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "guest_tap.h"
#include "netvm.h"

#define CTL		"/tmp/nvlib.ctl"
#define RESP		"/tmp/nvlib.resp"
#define INFO		"/tmp/nvlib.info"
#define BUF_SIZE	((2u << 20) + 8192)
#define RO_SIZE		65536
#define ATOM_OFF	(2u << 20)
#define LOCAL_SIZE	((1u << 20) + 65536)

static void die(const char *what, int err)
{
	fprintf(stderr, "netvm-lib-test: %s: %s\n", what, netvm_strerror(err));
	exit(2);
}

static int netvm_ep_port;

static struct netvm *setup(void)
{
	struct netvm *nv;
	int err = netvm_open(0, &nv);

	if (err)
		die("netvm_open", err);
	err = netvm_register(nv, NETVM_PORT_ANY, 0);
	if (err < 0)
		die("netvm_register", err);
	netvm_ep_port = err;
	return nv;
}

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap", -errno);
	return p;
}

static void respond(const char *msg)
{
	FILE *f = fopen(RESP, "w");

	if (!f)
		die("open " RESP, -errno);
	fputs(msg, f);
	fclose(f);
}

static void nop_handler(struct netvm *nv, uint32_t notf, void *arg)
{
	(void)nv;
	(void)notf;
	(void)arg;
}

static int serve(void)
{
	struct netvm *nv = setup();
	struct netvm_info info;
	uint8_t *buf = map(BUF_SIZE), *ro = map(RO_SIZE);
	char line[256], msg[256];
	int err, ro_h;
	FILE *f;

	tap_fill(ro, RO_SIZE, 99);
	err = netvm_export(nv, "buf", buf, BUF_SIZE, 0, NULL);
	if (err < 0)
		die("export buf", err);
	ro_h = netvm_export(nv, "ro", ro, RO_SIZE, NETVM_EXPORT_RO, NULL);
	if (ro_h < 0)
		die("export ro", ro_h);
	netvm_info(nv, &info);
	unlink(CTL);
	unlink(RESP);
	if (mkfifo(CTL, 0600) || mkfifo(RESP, 0600))
		die("mkfifo", -errno);
	f = fopen(INFO ".tmp", "w");
	if (!f)
		die("open " INFO, -errno);
	fprintf(f, "node %u port %d\n", info.node_id, netvm_ep_port);
	fclose(f);
	rename(INFO ".tmp", INFO);

	for (;;) {
		uint64_t off = 0, len = 0, seed = 0, a = 0, b = 0;
		char cmd[32];
		FILE *c = fopen(CTL, "r");

		if (!c)
			die("open " CTL, -errno);
		if (!fgets(line, sizeof(line), c)) {
			fclose(c);
			continue;
		}
		fclose(c);
		cmd[0] = 0;
		sscanf(line, "%31s", cmd);
		if (!strcmp(cmd, "quit")) {
			respond("bye\n");
			break;
		} else if (!strcmp(cmd, "handler")) {
			/* a handler armed and disarmed again: the library's
			 * handler thread stays, the arm must not */
			int r;

			sscanf(line, "%*s %" SCNu64, &a);
			r = netvm_notf_arm(nv, (uint32_t)a, nop_handler, NULL);
			if (!r)
				r = netvm_notf_disarm(nv, (uint32_t)a);
			snprintf(msg, sizeof(msg), r ? "handler: %s\n" : "ok\n",
				 netvm_strerror(r));
		} else if (!strcmp(cmd, "rekey")) {
			int bad = netvm_rekey(nv, 63, "x", NULL);
			int taken = netvm_rekey(nv, ro_h, "buf", NULL);
			int r = netvm_rekey(nv, ro_h, "ro2", NULL);

			snprintf(msg, sizeof(msg), bad == -EBADF &&
				 taken == -EEXIST && !r ? "ok\n" :
				 "rekey: %d %d %d\n", bad, taken, r);
		} else if (!strcmp(cmd, "armfd")) {
			snprintf(msg, sizeof(msg), netvm_ep_fd(nv) >= 0 ?
				 "ok\n" : "no descriptor\n");
		} else if (!strcmp(cmd, "spin")) {
			int r;

			sscanf(line, "%*s %" SCNu64 " %" SCNu64, &a, &b);
			r = netvm_notf_spin(nv, (uint32_t)a, (int)b);
			if (r > 0)
				r = netvm_notf_ack(nv, (uint32_t)a);
			snprintf(msg, sizeof(msg), r >= 0 ? "ok\n" : "spin: %s\n",
				 netvm_strerror(r));
		} else if (!strcmp(cmd, "notf")) {
			int r;

			sscanf(line, "%*s %" SCNu64 " %" SCNu64 " %" SCNu64
			       " %" SCNu64 " %" SCNu64, &a, &b, &off, &len,
			       &seed);
			r = netvm_notf_wait(nv, (uint32_t)a, (int)b);
			if (r <= 0) {
				snprintf(msg, sizeof(msg), "wait: %s\n",
					 netvm_strerror(r));
			} else if (off + len > BUF_SIZE ||
				   tap_first_bad(buf + off, len, (uint32_t)seed) >= 0) {
				snprintf(msg, sizeof(msg), "data not there\n");
			} else {
				r = netvm_notf_ack(nv, (uint32_t)a);
				snprintf(msg, sizeof(msg), "ok %d pending\n", r);
			}
		} else {
			int64_t bad;

			sscanf(line, "%*s %" SCNu64 " %" SCNu64 " %" SCNu64,
			       &off, &len, &seed);
			if (off + len > BUF_SIZE) {
				snprintf(msg, sizeof(msg), "range\n");
			} else if (!strcmp(cmd, "fill")) {
				tap_fill(buf + off, len, (uint32_t)seed);
				snprintf(msg, sizeof(msg), "ok\n");
			} else if (!strcmp(cmd, "check")) {
				bad = tap_first_bad(buf + off, len, (uint32_t)seed);
				if (bad < 0)
					snprintf(msg, sizeof(msg), "ok\n");
				else
					snprintf(msg, sizeof(msg),
						 "bad at %" PRId64 "\n", bad);
			} else {
				snprintf(msg, sizeof(msg), "unknown\n");
			}
		}
		respond(msg);
	}
	unlink(CTL);
	unlink(RESP);
	unlink(INFO);
	return netvm_close(nv) ? 1 : 0;
}

static int import(struct netvm *nv, unsigned int node, unsigned int port,
		  const char *name)
{
	int seg = netvm_import(nv, node, port, name);

	if (seg < 0)
		die("netvm_import", seg);
	return seg;
}

/* *all stays -EINVAL while every e is -EINVAL; anything else sticks. */
static void e_all(int *all, int e)
{
	if (*all == -EINVAL)
		*all = e;
}

/*
 * netvm_export_info of this process's "src" export, and imports made from
 * a description with no round trip (netvm_import_segment): the read-only
 * import's own description reads the same bytes; a wrong key is refused
 * by the exporter's NIC; unusable descriptions are refused at once.
 */
static void described_imports(struct netvm *nv, int roseg, uint8_t *src,
			      uint8_t *dst)
{
	struct netvm_segment me, ro, bad;
	struct netvm_info info;
	uint64_t key = 0;
	int h, seg, err;

	h = netvm_export_lookup(nv, "src", &key);
	err = netvm_export_info(nv, h, &me);
	check(h >= 0 && !err && netvm_info(nv, &info) == 0 &&
	   me.node == info.node_id && me.port == (uint32_t)netvm_ep_port &&
	   me.addr == (uintptr_t)src && me.len == LOCAL_SIZE &&
	   me.key == key && me.flags == 0 && me.pt_rows > 0,
	   "netvm_export_info of \"src\": node %u port %u, its address, "
	   "length and key, pt_rows %u", me.node, me.port, me.pt_rows);
	check(netvm_export_info(nv, 63, &me) == -EBADF,
	   "netvm_export_info of a free handle: -EBADF");

	err = netvm_import_info(nv, roseg, &ro);
	seg = err ? err : netvm_import_segment(nv, &ro, "ro-described");
	memset(dst, 0, 8192);
	err = seg < 0 ? seg : netvm_readF(nv, seg, 0, dst, 8192);
	check(seg >= 0 && !err && tap_first_bad(dst, 8192, 99) < 0 &&
	   netvm_import_lookup(nv, ro.node, ro.port, "ro-described") == seg,
	   "netvm_import_segment of \"ro\"'s description: 8 KiB read, "
	   "byte-verified, and found by its name (%s)", netvm_strerror(err));
	check(seg >= 0 && netvm_write(nv, seg, 0, src, 20) == -EROFS,
	   "... read-only as described: a write is -EROFS");
	if (seg >= 0)
		netvm_unimport(nv, seg);

	bad = ro;
	bad.key ^= 1;
	seg = netvm_import_segment(nv, &bad, "ro-wrong-key");
	err = seg < 0 ? seg : netvm_readF(nv, seg, 0, dst, 64);
	check(seg >= 0 && err == -EKEYREJECTED,
	   "a described import with a wrong key: the read is -EKEYREJECTED "
	   "(%s)", netvm_strerror(err));
	if (seg >= 0)
		netvm_unimport(nv, seg);

	bad = ro;
	bad.pt_rows = 0;
	err = netvm_import_segment(nv, &bad, "x");
	bad = ro;
	bad.len = 0;
	e_all(&err, netvm_import_segment(nv, &bad, "x"));
	bad = ro;
	bad.addr = UINT64_MAX - 4095;
	e_all(&err, netvm_import_segment(nv, &bad, "x"));
	bad = ro;
	bad.flags = 2;
	e_all(&err, netvm_import_segment(nv, &bad, "x"));
	bad = ro;
	bad.port = 0x10000;
	e_all(&err, netvm_import_segment(nv, &bad, "x"));
	check(err == -EINVAL,
	   "described imports with pt_rows 0, length 0, a wrapping range, "
	   "unknown flags, port 0x10000: each -EINVAL");
	check(netvm_import_segment(nv, &ro, "") == -EINVAL &&
	   netvm_import_segment(nv, NULL, "x") == -EINVAL,
	   "no name, no description: -EINVAL");
}

static double secs(struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int client(unsigned int node, unsigned int port)
{
	static const uint64_t sizes[] = {
		1, 3, 95, 96, 97, 1000, 4095, 4096, 4097, 10000, 65537,
		262147, 1u << 20,
	};
	struct netvm *nv = setup();
	struct netvm_segment si;
	uint8_t *src = map(LOCAL_SIZE), *dst = map(LOCAL_SIZE);
	uint8_t *unexp = map(8192);
	uint64_t off = 0, next = 13, size = 0;
	uint32_t old, r[3], seed = 0;
	struct timespec t0;
	int seg, roseg, err, e2;
	size_t i;

	/*
	 * Exported before their pages exist: every first touch by the NIC is
	 * a page miss that the driver serves (this once exposed a firmware
	 * bug: a write restarted in a slot last used by a read).
	 */
	if (netvm_export(nv, "src", src, LOCAL_SIZE, 0, NULL) < 0 ||
	    netvm_export(nv, "dst", dst, LOCAL_SIZE, 0, NULL) < 0)
		die("export", -EIO);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	seg = import(nv, node, port, "buf");
	err = netvm_import_info(nv, seg, &si);
	check(!err && si.len == BUF_SIZE,
	   "import of \"buf\" from node %u port %u over the network (%.3f s): "
	   "%" PRIu64 " bytes", node, port, secs(&t0), si.len);
	check(netvm_import_lookup(nv, node, port, "buf") == seg,
	   "netvm_import_lookup finds it");
	roseg = import(nv, node, port, "ro");

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t loff = 1 + 7 * i;
		int64_t bad;
		int f = i & 1;

		size = sizes[i];
		seed = 100 + (uint32_t)i;
		/* one after the other below ATOM_OFF, at odd offsets: a
		 * write that lands in the wrong place cannot be hidden by
		 * the next size's write, and the exporter checks them all */
		off = next;
		next = off + size + 7 * i + 5;
		tap_fill(src + loff, size, seed);
		memset(dst + loff, 0, size);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		err = f ? netvm_writeF(nv, seg, off, src + loff, size) :
		      netvm_write(nv, seg, off, src + loff, size);
		if (!err && !f)
			err = netvm_flushW(nv);
		e2 = f ? netvm_readF(nv, seg, off, dst + loff, size) :
		     netvm_read(nv, seg, off, dst + loff, size);
		if (!e2 && !f)
			e2 = netvm_flushR(nv);
		bad = tap_first_bad(dst + loff, size, seed);
		check(!err && !e2 && bad < 0,
		   "%s %" PRIu64 " B at remote offset %" PRIu64 " (local +%" PRIu64
		   ") and read back, byte-verified (%.3f s)%s%s%s",
		   f ? "writeF/readF" : "write/read + flush", size, off, loff,
		   secs(&t0), err ? " write: " : "", err ? netvm_strerror(err) :
		   "", e2 ? netvm_strerror(e2) : "");
		if (bad >= 0) {
			uint64_t nbad = 0;

			for (uint64_t j = 0; j < size; j++)
				nbad += dst[loff + j] != tap_pattern(seed, j);
			printf("# first bad byte %" PRId64 " (got %u want %u), "
			       "%" PRIu64 " bad\n", bad, dst[loff + bad],
			       tap_pattern(seed, (uint64_t)bad), nbad);
		}
		printf("range %" PRIu64 " %" PRIu64 " %u\n", off, size, seed);
	}
	if (next > ATOM_OFF)
		die("the sweep's ranges overrun the atomics", -EOVERFLOW);

	/* atomics on the word at ATOM_OFF + 16 */
	err = netvm_swap(nv, seg, ATOM_OFF + 16, 5, &old);
	check(!err, "swap: %s", netvm_strerror(err));
	err = netvm_incr(nv, seg, ATOM_OFF + 16, &old);
	check(!err && old == 5, "incr returns the old value 5 (got %u)", old);
	err = netvm_decr(nv, seg, ATOM_OFF + 16, &old);
	check(!err && old == 6, "decr returns the old value 6 (got %u)", old);
	err = netvm_testandset(nv, seg, ATOM_OFF + 16, &old);
	check(!err && old == 1, "testandset of a set word returns 1 (got %u)", old);
	err = netvm_cswap(nv, seg, ATOM_OFF + 16, 1, 42, &old);
	check(!err && old == 1, "cswap(1 -> 42) succeeds, old 1 (got %u)", old);
	err = netvm_cswap(nv, seg, ATOM_OFF + 16, 7, 9, &old);
	check(!err && old == 42, "cswap(7 -> 9) fails, old 42 (got %u)", old);
	memset(dst, 0, 64);
	err = netvm_readF(nv, seg, ATOM_OFF + 16, dst, 4);
	check(!err && *(uint32_t *)dst == 42, "the word reads back as 42 (got %u)",
	   *(uint32_t *)dst);
	/* wait queue / semaphore block at ATOM_OFF + 64: zeroed */
	memset(src, 0, 64);
	err = netvm_writeF(nv, seg, ATOM_OFF + 64, src, 20);
	err = err ? err : netvm_semV(nv, seg, ATOM_OFF + 64, r);
	check(!err && r[0] == NETVM_WQ_EMPTY && r[2] == 1,
	   "semV with nobody waiting: S = 1 (r %#x %u %u)", r[0], r[1], r[2]);
	err = netvm_semP(nv, seg, ATOM_OFF + 64, 3, r);
	check(!err && r[0] == NETVM_WQ_EMPTY && r[1] == 1,
	   "semP takes it at once (r %#x %u)", r[0], r[1]);
	err = netvm_semP(nv, seg, ATOM_OFF + 64, 4, r);
	check(!err && r[0] == NETVM_WQ_EMPTY && r[1] == 0,
	   "semP again queues id 4 on an empty queue (r %#x %u)", r[0], r[1]);
	err = netvm_enqueue(nv, seg, ATOM_OFF + 64, 5, r);
	check(!err && r[0] == 4, "enqueue 5 returns the old tail 4 (r %u)", r[0]);
	err = netvm_dequeue(nv, seg, ATOM_OFF + 64, r);
	check(!err && r[0] == 4 && r[1] == 1, "dequeue gives head 4, count 1 "
	   "(r %u %u)", r[0], r[1]);
	err = netvm_newhead(nv, seg, ATOM_OFF + 64, 5, r);
	check(!err && r[0] == 0 && r[1] == 1, "newhead 5 (r %u %u)", r[0], r[1]);
	err = netvm_incr(nv, seg, ATOM_OFF + 18, &old);
	check(err == -EINVAL, "unaligned atomic: -EINVAL (%s)", netvm_strerror(err));

	/* error paths: nothing sent */
	tap_fill(src, 100, 7);
	err = netvm_writeF(nv, seg, BUF_SIZE - 100, src, 100);
	tap_fill(src, 20, 8);
	e2 = netvm_write(nv, seg, BUF_SIZE - 10, src, 20);
	check(!err && e2 == -ERANGE, "write past the end of the import: -ERANGE "
	   "(%s)", netvm_strerror(e2));
	e2 = netvm_write(nv, seg, UINT64_MAX - 5, src, 20);
	check(e2 == -ERANGE, "write at a wrapping offset: -ERANGE");
	memset(dst, 0, 100);
	err = netvm_readF(nv, seg, BUF_SIZE - 100, dst, 100);
	check(!err && tap_first_bad(dst, 100, 7) < 0,
	   "... and nothing was written there (read back, byte-verified)");
	e2 = netvm_read(nv, seg, BUF_SIZE, dst, 1);
	check(e2 == -ERANGE, "read past the end: -ERANGE");
	e2 = netvm_write(nv, 17, 0, src, 20);
	check(e2 == -EBADF, "bad segment handle: -EBADF");
	e2 = netvm_write(nv, seg, 0, unexp, 4096);
	check(e2 == -ENOKEY, "source outside every export: -ENOKEY (%s)",
	   netvm_strerror(e2));
	e2 = netvm_writeN(nv, seg, 0, src, 4, 0);
	check(e2 == -EINVAL, "notification 0: -EINVAL");
	e2 = netvm_notf_test(nv, 1024);
	check(e2 == -EINVAL, "notf_test of a one-shot number: -EINVAL");
	e2 = netvm_write(nv, roseg, 0, src, 20);
	check(e2 == -EROFS, "write to a read-only import: -EROFS");
	/* from byte 0: the refused write aimed at bytes 0..19 */
	err = netvm_readF(nv, roseg, 0, dst, 4000);
	check(!err && tap_first_bad(dst, 4000, 99) < 0,
	   "read of the read-only import, byte-verified: the refused write "
	   "left bytes 0..19 alone");
	described_imports(nv, roseg, src, dst);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	e2 = netvm_import(nv, node, port, "nope");
	check(e2 == -ENOENT, "import of a missing name: -ENOENT (%s, %.3f s)",
	   netvm_strerror(e2), secs(&t0));
	e2 = netvm_import(nv, node, port + 1, "buf");
	check(e2 == -ENOENT, "import from a port with no endpoint: -ENOENT (%s)",
	   netvm_strerror(e2));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	e2 = netvm_import(nv, 5, port, "buf");
	check(e2 == -EHOSTUNREACH || e2 == -ETIMEDOUT,
	   "import from node 5 (not on the cable): %s (%.3f s)",
	   netvm_strerror(e2), secs(&t0));
	check(netvm_unimport(nv, seg) == 0 && netvm_unimport(nv, seg) == -EBADF &&
	   netvm_write(nv, seg, 0, src, 4) == -EBADF,
	   "unimport; the handle is then bad (-EBADF)");
	check(netvm_flushRW(nv) == 0, "flushRW: nothing outstanding");
	err = netvm_close(nv);
	check(!err, "netvm_close");
	return failures ? 1 : 0;
}

static int notify(int argc, char **argv)
{
	struct netvm *nv = setup();
	uint64_t off = strtoull(argv[4], NULL, 0);
	uint64_t len = strtoull(argv[5], NULL, 0);
	uint32_t seed = (uint32_t)strtoul(argv[6], NULL, 0);
	uint32_t notf = (uint32_t)strtoul(argv[7], NULL, 0);
	uint8_t *src = map(len + 4096);
	int seg, err;

	(void)argc;
	if (netvm_export(nv, "src", src, len + 4096, 0, NULL) < 0)
		die("export", -EIO);
	seg = import(nv, (unsigned int)strtoul(argv[2], NULL, 0),
		     (unsigned int)strtoul(argv[3], NULL, 0), "buf");
	tap_fill(src + 3, len, seed);
	err = netvm_writeN(nv, seg, off, src + 3, len, notf);
	if (!err)
		err = netvm_flushW(nv);
	printf("writeN: %s\n", netvm_strerror(err));
	netvm_close(nv);
	return err ? 1 : 0;
}

static int describe(unsigned int node, unsigned int port)
{
	struct netvm *nv = setup();
	uint8_t *dst = map(4096);
	struct netvm_segment d;
	int seg = import(nv, node, port, "ro"), err;

	if (netvm_export(nv, "dst", dst, 4096, 0, NULL) < 0)
		die("export dst", -EIO);
	err = netvm_import_info(nv, seg, &d);
	if (!err)
		err = netvm_readF(nv, seg, 0, dst, 64);
	if (err || tap_first_bad(dst, 64, 99) >= 0)
		die("read \"ro\"", err ? err : -EIO);
	printf("%u %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %u %u\n", d.node,
	       d.port, d.addr, d.len, d.key, d.flags, d.pt_rows);
	netvm_close(nv);
	return 0;
}

static int rekeyed(unsigned int node, unsigned int port, char **desc)
{
	struct netvm *nv = setup();
	uint8_t *dst = map(8192);
	struct netvm_segment old = {
		.node = (uint32_t)strtoul(desc[0], NULL, 0),
		.port = (uint32_t)strtoul(desc[1], NULL, 0),
		.addr = strtoull(desc[2], NULL, 0),
		.len = strtoull(desc[3], NULL, 0),
		.key = strtoull(desc[4], NULL, 0),
		.flags = (uint32_t)strtoul(desc[5], NULL, 0),
		.pt_rows = (uint32_t)strtoul(desc[6], NULL, 0),
	}, now;
	int seg, err;

	if (netvm_export(nv, "dst", dst, 8192, 0, NULL) < 0)
		die("export dst", -EIO);
	seg = netvm_import_segment(nv, &old, "ro-old");
	err = seg < 0 ? seg : netvm_readF(nv, seg, 0, dst, 64);
	check(seg >= 0 && err == -EKEYREJECTED,
	   "after netvm_rekey: a read under the old key is -EKEYREJECTED "
	   "(%s)", netvm_strerror(err));
	err = netvm_import(nv, node, port, "ro");
	check(err == -ENOENT, "... the old name imports nothing: -ENOENT (%s)",
	   netvm_strerror(err));
	seg = netvm_import(nv, node, port, "ro2");
	err = seg < 0 ? seg : netvm_import_info(nv, seg, &now);
	memset(dst, 0, 8192);
	if (!err)
		err = netvm_readF(nv, seg, 0, dst, 8192);
	check(!err && now.key != old.key && now.addr == old.addr &&
	   now.len == old.len && tap_first_bad(dst, 8192, 99) < 0,
	   "... the new name imports it under a new key: 8 KiB read, "
	   "byte-verified (%s)", netvm_strerror(err));
	netvm_close(nv);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "serve"))
		return serve();
	if (argc == 4 && !strcmp(argv[1], "client"))
		return client((unsigned int)strtoul(argv[2], NULL, 0),
			      (unsigned int)strtoul(argv[3], NULL, 0));
	if (argc == 8 && !strcmp(argv[1], "notify"))
		return notify(argc, argv);
	if (argc == 4 && !strcmp(argv[1], "describe"))
		return describe((unsigned int)strtoul(argv[2], NULL, 0),
				(unsigned int)strtoul(argv[3], NULL, 0));
	if (argc == 11 && !strcmp(argv[1], "rekeyed"))
		return rekeyed((unsigned int)strtoul(argv[2], NULL, 0),
			       (unsigned int)strtoul(argv[3], NULL, 0),
			       argv + 4);
	fprintf(stderr, "usage: netvm-lib-test serve | client NODE PORT | "
		"notify NODE PORT OFF LEN SEED NOTF | describe NODE PORT | "
		"rekeyed NODE PORT DESCRIPTION...\n");
	return 2;
}
