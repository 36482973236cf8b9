// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * netvm-ktest: drive the driver's kernel-side NetVM tests (physical
 * addresses, kernel endpoint) through NETVM_IOC_KTEST / NETVM_IOC_KBENCH.
 * Root only.  See docs/driver.md ("NetVM").
 *
 *   netvm-ktest [-d INDEX] pa
 *   netvm-ktest [-d INDEX] fill  OFF LEN SEED
 *   netvm-ktest [-d INDEX] check OFF LEN SEED         exit 1 on a mismatch
 *   netvm-ktest [-d INDEX] write NODE REMOTE_PA OFF LEN SEED
 *   netvm-ktest [-d INDEX] read  NODE REMOTE_PA OFF LEN
 *   netvm-ktest [-d INDEX] atomic NODE REMOTE_PA OP A0 A1   prints r0 r1 r2
 *   netvm-ktest [-d INDEX] [--csv] bench NODE REMOTE_PA [ITER]
 *
 * Numbers may be decimal or 0x-hex.  OP is a number or one of tas, incr,
 * decr, swap, cswap.  Exit status: 0 ok, 1 failure (errno name on
 * stderr), 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <netvm/netvm_fw.h>
#include <netvm/netvm_uapi.h>

static int fd = -1;
static const char *cmd = "";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: netvm-ktest [-d INDEX] [--csv] COMMAND ARGS\n"
		"  pa                                  the local test window's physical address\n"
		"  fill  OFF LEN SEED                  pattern into the local window\n"
		"  check OFF LEN SEED                  check the local window (exit 1 on mismatch)\n"
		"  write NODE REMOTE_PA OFF LEN SEED   fill OFF..+LEN, then writeP to NODE\n"
		"  read  NODE REMOTE_PA OFF LEN        readP from NODE into OFF..+LEN\n"
		"  atomic NODE REMOTE_PA OP A0 A1      OP: tas incr decr swap cswap (or a number)\n"
		"  bench NODE REMOTE_PA [ITER]         round trips and bandwidth\n");
}

static uint64_t num(const char *s, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || !*s || *end || *s == '-' || v > max) {
		fprintf(stderr, "netvm-ktest %s: bad number '%s'\n", cmd, s);
		exit(2);
	}
	return v;
}

static int ktest(struct netvm_ktest *k)
{
	if (ioctl(fd, NETVM_IOC_KTEST, k) == 0)
		return 0;
	fprintf(stderr, "netvm-ktest %s: %s (%s)\n", cmd, strerror(errno),
		errno == EHOSTUNREACH ? "EHOSTUNREACH" :
		errno == ETIMEDOUT ? "ETIMEDOUT" :
		errno == EPERM ? "EPERM" : errno == EINVAL ? "EINVAL" :
		errno == ENODEV ? "ENODEV" : "error");
	return 1;
}

static uint32_t atomic_op(const char *s)
{
	static const char *const names[] = {
		[NVM_AT_TAS] = "tas", [NVM_AT_INC] = "incr", [NVM_AT_DEC] = "decr",
		[NVM_AT_SWAP] = "swap", [NVM_AT_CSWAP] = "cswap",
	};

	for (uint32_t i = 1; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return i;
	return (uint32_t)num(s, NVM_AT_COUNT - 1);
}

struct bench_row {
	const char *name;
	uint32_t op, size, inflight, iter;
};

static int kbench(uint32_t node, uint64_t rpa, const struct bench_row *r,
		  struct netvm_kbench *b)
{
	memset(b, 0, sizeof(*b));
	b->op = r->op;
	b->node = node;
	b->remote_pa = rpa;
	b->size = r->size;
	b->iterations = r->iter;
	b->inflight = r->inflight;
	if (ioctl(fd, NETVM_IOC_KBENCH, b)) {
		fprintf(stderr, "netvm-ktest bench %s: %s\n", r->name, strerror(errno));
		return 1;
	}
	return 0;
}

static int bench(uint32_t node, uint64_t rpa, uint32_t iter, int csv)
{
	uint32_t bw_iter = iter / 50 ? iter / 50 : 1;
	const struct bench_row rows[] = {
		{ "writeP 8 B", NETVM_KTEST_WRITE, 8, 1, iter },
		{ "readP 8 B", NETVM_KTEST_READ, 8, 1, iter },
		{ "writeP 4 KiB", NETVM_KTEST_WRITE, 4096, 1, iter },
		{ "readP 4 KiB", NETVM_KTEST_READ, 4096, 1, iter },
		{ "writeP 64 KiB", NETVM_KTEST_WRITE, 65536, 32, bw_iter * 4 },
		{ "readP 64 KiB", NETVM_KTEST_READ, 65536, 32, bw_iter * 4 },
		{ "writeP 256 KiB", NETVM_KTEST_WRITE, 262144, 32, bw_iter },
		{ "readP 256 KiB", NETVM_KTEST_READ, 262144, 32, bw_iter },
		{ "writeP 1 MiB", NETVM_KTEST_WRITE, 1048576, 32, bw_iter / 2 ? bw_iter / 2 : 1 },
		{ "readP 1 MiB", NETVM_KTEST_READ, 1048576, 32, bw_iter / 2 ? bw_iter / 2 : 1 },
	};
	struct netvm_kbench b;

	if (csv)
		printf("test,size,inflight,iterations,min_us,median_us,p99_us,MB_per_s\n");
	else
		printf("%-16s %8s %4s %6s %10s %10s %10s %10s\n", "test", "bytes",
		       "infl", "iter", "min us", "median us", "p99 us", "MB/s");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double mbs;

		if (kbench(node, rpa, &rows[i], &b))
			return 1;
		mbs = b.total_ns ? (double)b.bytes * 1e3 / (double)b.total_ns : 0;
		if (csv)
			printf("%s,%u,%u,%u,%.1f,%.1f,%.1f,%.2f\n", rows[i].name,
			       rows[i].size, rows[i].inflight, rows[i].iter,
			       b.min_ns / 1e3, b.median_ns / 1e3, b.p99_ns / 1e3, mbs);
		else
			printf("%-16s %8u %4u %6u %10.1f %10.1f %10.1f %10.2f\n",
			       rows[i].name, rows[i].size, rows[i].inflight,
			       rows[i].iter, b.min_ns / 1e3, b.median_ns / 1e3,
			       b.p99_ns / 1e3, mbs);
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct netvm_ktest k;
	char dev[64];
	unsigned int index = 0;
	int csv = 0, i = 1;

	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "--csv")) {
			csv = 1;
			i++;
		} else if (!strcmp(argv[i], "-d") && i + 1 < argc) {
			index = (unsigned int)num(argv[i + 1], 255);
			i += 2;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	cmd = argv[i++];
	argc -= i;
	argv += i;

	snprintf(dev, sizeof(dev), "/dev/" NETVM_DEV_PREFIX "%u", index);
	fd = open(dev, O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "netvm-ktest: %s: %s\n", dev, strerror(errno));
		return 1;
	}
	memset(&k, 0, sizeof(k));

	if (!strcmp(cmd, "pa") && argc == 0) {
		k.op = NETVM_KTEST_INFO;
		if (ktest(&k))
			return 1;
		printf("0x%llx\n", (unsigned long long)k.window_pa);
		return 0;
	}
	if ((!strcmp(cmd, "fill") || !strcmp(cmd, "check")) && argc == 3) {
		k.op = !strcmp(cmd, "fill") ? NETVM_KTEST_FILL : NETVM_KTEST_CHECK;
		k.offset = (uint32_t)num(argv[0], UINT32_MAX);
		k.len = (uint32_t)num(argv[1], UINT32_MAX);
		k.seed = (uint32_t)num(argv[2], UINT32_MAX);
		if (ktest(&k))
			return 1;
		if (k.op == NETVM_KTEST_CHECK && k.bad_offset != UINT32_MAX) {
			fprintf(stderr,
				"netvm-ktest check: mismatch at window offset %u (byte %u of %u): got 0x%02x, want 0x%02x\n",
				k.bad_offset, k.bad_offset - k.offset, k.len,
				k.result[0], k.result[1]);
			return 1;
		}
		return 0;
	}
	if (!strcmp(cmd, "write") && argc == 5) {
		k.op = NETVM_KTEST_FILL;
		k.offset = (uint32_t)num(argv[2], UINT32_MAX);
		k.len = (uint32_t)num(argv[3], UINT32_MAX);
		k.seed = (uint32_t)num(argv[4], UINT32_MAX);
		if (ktest(&k))
			return 1;
		k.op = NETVM_KTEST_WRITE;
		k.node = (uint32_t)num(argv[0], 65535);
		k.remote_pa = num(argv[1], UINT64_MAX);
		return ktest(&k);
	}
	if (!strcmp(cmd, "read") && argc == 4) {
		k.op = NETVM_KTEST_READ;
		k.node = (uint32_t)num(argv[0], 65535);
		k.remote_pa = num(argv[1], UINT64_MAX);
		k.offset = (uint32_t)num(argv[2], UINT32_MAX);
		k.len = (uint32_t)num(argv[3], UINT32_MAX);
		return ktest(&k);
	}
	if (!strcmp(cmd, "atomic") && argc == 5) {
		k.op = NETVM_KTEST_ATOMIC;
		k.node = (uint32_t)num(argv[0], 65535);
		k.remote_pa = num(argv[1], UINT64_MAX);
		k.atomic_op = atomic_op(argv[2]);
		k.arg[0] = (uint32_t)num(argv[3], UINT32_MAX);
		k.arg[1] = (uint32_t)num(argv[4], UINT32_MAX);
		if (ktest(&k))
			return 1;
		printf("%u %u %u\n", k.result[0], k.result[1], k.result[2]);
		return 0;
	}
	if (!strcmp(cmd, "bench") && (argc == 2 || argc == 3))
		return bench((uint32_t)num(argv[0], 65535), num(argv[1], UINT64_MAX),
			     argc == 3 ? (uint32_t)num(argv[2], 100000) : 1000, csv);
	usage(stderr);
	return 2;
}
