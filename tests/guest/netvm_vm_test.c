// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm-vm-test: network virtual memory without pinning, for the guest
 * suite's netvm-vm and netvm-teardown groups (tests/guest/test_driver_vm.py)
 * and the driver benchmark (bench_driver.py).
 *
 *   netvm-vm-test serve
 *       Registers an endpoint (libnetvm), maps BUF_SIZE bytes 2 MiB aligned
 *       and exports them as "vm", writes "port P pid N" to /tmp/nvvm.info
 *       and serves one command per line written to the FIFO /tmp/nvvm.ctl,
 *       answering one line on the FIFO /tmp/nvvm.resp:
 *         prep SEED      R = pattern SEED, W and N zeroed
 *         event NAME     none | pageout | remap | fork | forkw | mremap |
 *                        dontneed | thp-on | thp-off | pressure; answers
 *                        "ok rseed S swap KB resident PAGES huge KB"
 *                        (S: what R holds now, 0 = zeros)
 *         verify WSEED NSEED NOTF   W holds WSEED; notification NOTF is
 *                        pending (waits up to 30 s), N holds NSEED; a
 *                        forked child checks its own copy and exits
 *         sigon SIG      O_ASYNC + F_SETSIG SIG on the endpoint's fd
 *         sigwait MS     waits for that signal: "ok signo S fd-match 1"
 *         status | quit
 *   netvm-vm-test client NODE PORT RSEED WSEED NSEED NOTF
 *       Imports "vm"; reads R and checks it, writes W, writes N with
 *       notification NOTF.  One "ok - ..."/"not ok - ..." line per check.
 *   netvm-vm-test stream NODE PORT
 *       Writes W over and over until a write fails (exit 3).
 *   netvm-vm-test death NODE PORT
 *       Streams asynchronous writes of W and reads of R (a flush every 8
 *       rounds, so the command queue is full and calls block in it) until
 *       a call fails; prints "first ERR MS N" (ERR the errno's name, MS
 *       since the last call that succeeded, N rounds done), then makes
 *       each kind of call once more: "later CALL ERR MS" (writeF, readF,
 *       write+flush, read+flush), and exits 3.  For a peer that dies.
 *   netvm-vm-test flood NODE PORT
 *       As death, with asynchronous writes only (a flush every 16), so
 *       the library's 32 commands in flight stay taken: for a peer that
 *       stops answering while others are served.
 *   netvm-vm-test stale NODE PORT
 *       Imports "vm" and writes W ("before ERR"), then waits for the file
 *       /tmp/nvvm.go ("PORT SEED": the exporter restarted and exports
 *       again at PORT with R = pattern SEED), makes a writeF and a readF
 *       through the old import ("stale CALL ERR"), imports again and
 *       reads R ("fresh ERR" and "fresh R ok" when every byte is right).
 *       For a peer that restarts (a new epoch).
 *   netvm-vm-test bench NODE PORT
 *       Tables 24 and 25: NETVM_IOC_PTBENCH, mlock, and page-miss restarts.
 *
 * Pattern byte i: (((i + seed) * 0x9e3779b97f4a7c15) >> 56).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <netvm/netvm_uapi.h>
#include "netvm.h"

#define CTL		"/tmp/nvvm.ctl"
#define RESP		"/tmp/nvvm.resp"
#define INFO		"/tmp/nvvm.info"
#define THP		"/sys/kernel/mm/transparent_hugepage/enabled"
#define HUGE		(2ul << 20)
#define BUF_SIZE	(4ul << 20)
#define R_OFF		(8192 + 100)
#define R_LEN		(3 * 4096 + 500)
#define W_OFF		((1ul << 20) + 77)
#define W_LEN		20000
#define N_OFF		(HUGE - 3000)	/* crosses a huge-page boundary */
#define N_LEN		9000
#define LOCAL_SIZE	(64 * 1024)
#define CHILD_SEED	77

static uint8_t pat(uint32_t seed, uint64_t i)
{
	return seed ? netvm_ktest_pattern(seed, i) : 0;
}

static void fill(uint8_t *p, uint64_t len, uint32_t seed)
{
	for (uint64_t i = 0; i < len; i++)
		p[i] = pat(seed, i);
}

static int64_t check(const uint8_t *p, uint64_t len, uint32_t seed)
{
	for (uint64_t i = 0; i < len; i++)
		if (p[i] != pat(seed, i))
			return (int64_t)i;
	return -1;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "netvm-vm-test: %s: %s\n", what, netvm_strerror(err));
	exit(2);
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static struct netvm *setup(void)
{
	struct netvm *nv;
	int err = netvm_open(0, &nv);

	if (err)
		die("netvm_open", err);
	err = netvm_register(nv, NETVM_PORT_ANY, 0);
	if (err < 0)
		die("netvm_register", err);
	return nv;
}

/* ---- server ---- */

static struct netvm *srv_nv;
static uint8_t *buf;
static int exp_handle = -1;
static pid_t child;
static int child_pipe = -1;
static int child_mode;		/* 1: fork (child reads), 2: forkw */
static char thp_saved[64];
static int sig_no;

/* Swap and AnonHugePages (kB) of the mapping at buf, from @path (smaps). */
static void smaps(const char *path, long *swap, long *huge)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int in = 0;

	*swap = *huge = -1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') <
		    strchr(line, ' ')) {
			in = a <= (uintptr_t)buf && (uintptr_t)buf < b;
			continue;
		}
		if (!in)
			continue;
		if (!strncmp(line, "Swap:", 5))
			*swap = strtol(line + 5, NULL, 10);
		else if (!strncmp(line, "AnonHugePages:", 14))
			*huge = strtol(line + 14, NULL, 10);
	}
	fclose(f);
}

static long resident(void)
{
	unsigned char vec[BUF_SIZE / 4096];
	long n = 0;

	if (mincore(buf, BUF_SIZE, vec))
		return -1;
	for (size_t i = 0; i < sizeof(vec); i++)
		n += vec[i] & 1;
	return n;
}

static void status(char *msg, size_t cap, uint32_t rseed)
{
	long swap, huge;

	smaps("/proc/self/smaps", &swap, &huge);
	snprintf(msg, cap, "ok rseed %u swap %ld resident %ld huge %ld\n",
		 rseed, swap, resident(), huge);
}

/* munmap + mmap at the same address; zero-filled again. */
static int remap(void)
{
	if (munmap(buf, BUF_SIZE))
		return -1;
	if (mmap(buf, BUF_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != buf)
		return -1;
	return 0;
}

static int thp_set(const char *mode)
{
	FILE *f = fopen(THP, "w");

	if (!f)
		return -1;
	fputs(mode, f);
	return fclose(f);
}

static void thp_save(void)
{
	FILE *f = fopen(THP, "r");
	char *b, *e;

	if (!f || !fgets(thp_saved, sizeof(thp_saved), f))
		strcpy(thp_saved, "[always]");
	if (f)
		fclose(f);
	b = strchr(thp_saved, '[');
	e = b ? strchr(b, ']') : NULL;
	if (b && e) {
		*e = 0;
		memmove(thp_saved, b + 1, strlen(b + 1) + 1);
	}
}

/*
 * The child of fork/forkw: (forkw: writes its whole copy, breaking COW on
 * its side, and says so on @wfd), waits for a word on @rfd, checks its copy.
 */
static void child_main(int rfd, int wfd, uint32_t rseed, int mode)
{
	char c = 'r';
	int bad = 0;

	if (mode == 2)		/* COW broken on the child's side */
		fill(buf, BUF_SIZE, CHILD_SEED);
	if (write(wfd, &c, 1) != 1)
		_exit(3);
	if (read(rfd, &c, 1) != 1)
		_exit(3);
	if (mode == 2) {
		bad = check(buf, BUF_SIZE, CHILD_SEED) >= 0;
	} else {
		/* the parent's remote writes must not show in the child */
		bad = check(buf + R_OFF, R_LEN, rseed) >= 0 ||
		      check(buf + W_OFF, W_LEN, 0) >= 0 ||
		      check(buf + N_OFF, N_LEN, 0) >= 0;
	}
	_exit(bad);
}

/* Another process takes memory until our buffer has been swapped out. */
static int pressure(void)
{
	pid_t parent = getpid(), p = fork();
	int st;

	if (p < 0)
		return -1;
	if (p == 0) {
		time_t t0 = time(NULL);
		size_t total = 0;
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/smaps", parent);
		while (time(NULL) - t0 < 120 && total < (2048ul << 20)) {
			char *m = mmap(NULL, 4ul << 20, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			long swap, huge;

			if (m == MAP_FAILED)
				_exit(2);
			memset(m, 1, 4ul << 20);
			total += 4ul << 20;
			smaps(path, &swap, &huge);	/* the parent's buf */
			if (swap > 0)
				_exit(0);
		}
		_exit(1);
	}
	if (waitpid(p, &st, 0) != p)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void event(const char *name, uint32_t seed, char *msg, size_t cap)
{
	uint32_t rseed = seed;
	int ok = 1;

	if (!strcmp(name, "none")) {
		;
	} else if (!strcmp(name, "pageout")) {
		ok = !madvise(buf, BUF_SIZE, MADV_PAGEOUT);
	} else if (!strcmp(name, "dontneed")) {
		ok = !madvise(buf, BUF_SIZE, MADV_DONTNEED);
		rseed = 0;
	} else if (!strcmp(name, "remap")) {
		ok = !remap();
		rseed = 0;
	} else if (!strcmp(name, "mremap")) {
		void *tmp = mmap(NULL, BUF_SIZE, PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ok = tmp != MAP_FAILED &&
		     mremap(buf, BUF_SIZE, BUF_SIZE,
			    MREMAP_MAYMOVE | MREMAP_FIXED, tmp) == tmp &&
		     check((uint8_t *)tmp + R_OFF, R_LEN, seed) < 0 &&
		     mremap(tmp, BUF_SIZE, BUF_SIZE,
			    MREMAP_MAYMOVE | MREMAP_FIXED, buf) == buf;
	} else if (!strcmp(name, "fork") || !strcmp(name, "forkw")) {
		int pfd[2], rfd[2];
		char c;

		child_mode = name[4] == 'w' ? 2 : 1;
		ok = !pipe(pfd) && !pipe(rfd);
		if (ok) {
			child = fork();
			if (child == 0) {
				close(pfd[1]);
				close(rfd[0]);
				child_main(pfd[0], rfd[1], seed, child_mode);
			}
			close(pfd[0]);
			close(rfd[1]);
			child_pipe = pfd[1];
			/* the child is ready (forkw: its copy written) */
			ok = child > 0 && read(rfd[0], &c, 1) == 1;
			close(rfd[0]);
		}
	} else if (!strcmp(name, "thp-on") || !strcmp(name, "thp-off")) {
		ok = !thp_set(name[5] == 'n' ? "always" : "never") && !remap();
		if (ok && name[5] == 'n')
			madvise(buf, BUF_SIZE, MADV_HUGEPAGE);
		if (ok) {
			memset(buf, 0, BUF_SIZE);
			fill(buf + R_OFF, R_LEN, seed);
		}
	} else if (!strcmp(name, "pressure")) {
		ok = pressure() == 0;
	} else {
		snprintf(msg, cap, "unknown event\n");
		return;
	}
	if (!ok) {
		snprintf(msg, cap, "fail %s: %s\n", name, strerror(errno));
		return;
	}
	status(msg, cap, rseed);
}

static void verify(uint32_t wseed, uint32_t nseed, uint32_t notf, char *msg,
		   size_t cap)
{
	int64_t bad = check(buf + W_OFF, W_LEN, wseed);
	int r;

	if (bad >= 0) {
		snprintf(msg, cap, "W bad at %" PRId64 ": got %u want %u\n", bad,
			 buf[W_OFF + bad], pat(wseed, bad));
		return;
	}
	r = netvm_notf_wait(srv_nv, notf, 30000);
	if (r < 1) {
		snprintf(msg, cap, "notification %u: %s\n", notf,
			 netvm_strerror(r));
		return;
	}
	bad = check(buf + N_OFF, N_LEN, nseed);
	if (bad >= 0) {
		snprintf(msg, cap, "N bad at %" PRId64 "\n", bad);
		return;
	}
	r = netvm_notf_ack(srv_nv, notf);
	if (r != 0) {
		snprintf(msg, cap, "ack left %d\n", r);
		return;
	}
	if (child > 0) {
		int st = -1;

		if (write(child_pipe, "x", 1) != 1 ||
		    waitpid(child, &st, 0) != child) {
			snprintf(msg, cap, "child lost\n");
			return;
		}
		close(child_pipe);
		child = 0;
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			snprintf(msg, cap, "child's copy changed (status %#x)\n",
				 st);
			return;
		}
		snprintf(msg, cap, "ok child ok\n");
		return;
	}
	snprintf(msg, cap, "ok\n");
}

static void sigon(int sig, char *msg, size_t cap)
{
	int fd = netvm_ep_fd(srv_nv);
	sigset_t set;

	sig_no = sig;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (fcntl(fd, F_SETOWN, getpid()) || fcntl(fd, F_SETSIG, sig) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC))
		snprintf(msg, cap, "fail %s\n", strerror(errno));
	else
		snprintf(msg, cap, "ok\n");
}

static void sigwait_ms(long ms, char *msg, size_t cap)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	siginfo_t si;
	sigset_t set;
	int s;

	sigemptyset(&set);
	sigaddset(&set, sig_no);
	s = sigtimedwait(&set, &si, &ts);
	if (s < 0)
		snprintf(msg, cap, "fail %s\n", strerror(errno));
	else
		snprintf(msg, cap, "ok signo %d fd-match %d code-pollin %d\n",
			 s, si.si_fd == netvm_ep_fd(srv_nv),
			 si.si_code == POLL_IN);
}

static void respond(const char *msg)
{
	FILE *f = fopen(RESP, "w");

	if (!f)
		die("open " RESP, -errno);
	fputs(msg, f);
	fclose(f);
}

static int serve(void)
{
	char line[256], msg[256], cmd[32], arg[32];
	struct netvm_ep_info info;
	uint8_t *raw;
	FILE *f;

	srv_nv = setup();
	thp_save();
	raw = mmap(NULL, BUF_SIZE + HUGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		die("mmap", -errno);
	buf = (uint8_t *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
	memset(buf, 0, BUF_SIZE);
	exp_handle = netvm_export(srv_nv, "vm", buf, BUF_SIZE, 0, NULL);
	if (exp_handle < 0)
		die("export vm", exp_handle);
	unlink(CTL);
	unlink(RESP);
	if (mkfifo(CTL, 0600) || mkfifo(RESP, 0600))
		die("mkfifo", -errno);
	if (ioctl(netvm_ep_fd(srv_nv), NETVM_IOC_EP_INFO, &info))
		die("NETVM_IOC_EP_INFO", -errno);
	f = fopen(INFO ".tmp", "w");
	if (!f)
		die("open " INFO, -errno);
	fprintf(f, "port %u pid %d\n", info.port, (int)getpid());
	fclose(f);
	rename(INFO ".tmp", INFO);

	for (;;) {
		unsigned long a = 0, b = 0, c = 0;
		FILE *in = fopen(CTL, "r");

		if (!in)
			die("open " CTL, -errno);
		if (!fgets(line, sizeof(line), in)) {
			fclose(in);
			continue;
		}
		fclose(in);
		cmd[0] = arg[0] = 0;
		sscanf(line, "%31s", cmd);
		if (!strcmp(cmd, "quit")) {
			respond("bye\n");
			break;
		} else if (!strcmp(cmd, "prep") &&
			   sscanf(line, "%*s %lu", &a) == 1) {
			fill(buf + R_OFF, R_LEN, (uint32_t)a);
			memset(buf + W_OFF, 0, W_LEN);
			memset(buf + N_OFF, 0, N_LEN);
			snprintf(msg, sizeof(msg), "ok\n");
		} else if (!strcmp(cmd, "event") &&
			   sscanf(line, "%*s %31s %lu", arg, &a) == 2) {
			event(arg, (uint32_t)a, msg, sizeof(msg));
		} else if (!strcmp(cmd, "verify") &&
			   sscanf(line, "%*s %lu %lu %lu", &a, &b, &c) == 3) {
			verify((uint32_t)a, (uint32_t)b, (uint32_t)c, msg,
			       sizeof(msg));
		} else if (!strcmp(cmd, "sigon") &&
			   sscanf(line, "%*s %lu", &a) == 1) {
			sigon((int)a, msg, sizeof(msg));
		} else if (!strcmp(cmd, "sigwait") &&
			   sscanf(line, "%*s %lu", &a) == 1) {
			sigwait_ms((long)a, msg, sizeof(msg));
		} else if (!strcmp(cmd, "status")) {
			status(msg, sizeof(msg), 0);
		} else {
			snprintf(msg, sizeof(msg), "unknown\n");
		}
		respond(msg);
	}
	thp_set(thp_saved);
	unlink(CTL);
	unlink(RESP);
	unlink(INFO);
	return netvm_close(srv_nv) ? 1 : 0;
}

/* ---- client ---- */

static int failures;

static void ok(int cond, const char *what, int err)
{
	if (cond)
		printf("ok - %s\n", what);
	else
		printf("not ok - %s (%s)\n", what, netvm_strerror(err));
	fflush(stdout);
	failures += !cond;
}

static int connect_vm(struct netvm **nvp, uint8_t **local, int argc,
		      char **argv)
{
	struct netvm *nv = setup();
	int seg, e;

	if (argc < 4) {
		fprintf(stderr, "netvm-vm-test: NODE PORT missing\n");
		exit(2);
	}
	*local = mmap(NULL, LOCAL_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*local == MAP_FAILED)
		die("mmap", -errno);
	e = netvm_export(nv, "local", *local, LOCAL_SIZE, 0, NULL);
	if (e < 0)
		die("export local", e);
	seg = netvm_import(nv, (unsigned int)strtoul(argv[2], NULL, 0),
			   (unsigned int)strtoul(argv[3], NULL, 0), "vm");
	if (seg < 0)
		die("import vm", seg);
	*nvp = nv;
	return seg;
}

static int client(int argc, char **argv)
{
	uint32_t rseed, wseed, nseed, notf;
	struct netvm *nv;
	uint8_t *local;
	int seg, e;

	if (argc != 8) {
		fprintf(stderr, "usage: netvm-vm-test client NODE PORT RSEED WSEED NSEED NOTF\n");
		return 2;
	}
	seg = connect_vm(&nv, &local, argc, argv);
	rseed = (uint32_t)strtoul(argv[4], NULL, 0);
	wseed = (uint32_t)strtoul(argv[5], NULL, 0);
	nseed = (uint32_t)strtoul(argv[6], NULL, 0);
	notf = (uint32_t)strtoul(argv[7], NULL, 0);

	memset(local, 0xee, R_LEN);
	e = netvm_readF(nv, seg, R_OFF, local, R_LEN);
	ok(e == 0 && check(local, R_LEN, rseed) < 0,
	   "read R (13 KiB over 5 pages), every byte as expected", e);
	fill(local, W_LEN, wseed);
	e = netvm_writeF(nv, seg, W_OFF, local, W_LEN);
	ok(e == 0, "write W (20000 B) completed", e);
	fill(local + 32768, N_LEN, nseed);
	e = netvm_writeN(nv, seg, N_OFF, local + 32768, N_LEN, notf);
	if (!e)
		e = netvm_flushW(nv);
	ok(e == 0, "write N (9000 B, across a 2 MiB boundary) + notification",
	   e);
	netvm_close(nv);
	return failures ? 1 : 0;
}

static int stream(int argc, char **argv)
{
	struct netvm *nv;
	uint8_t *local;
	unsigned long n = 0;
	int seg, e;

	seg = connect_vm(&nv, &local, argc, argv);
	fill(local, W_LEN, 5);
	printf("streaming\n");
	fflush(stdout);
	for (;;) {
		e = netvm_writeF(nv, seg, W_OFF, local, W_LEN);
		if (e) {
			printf("stopped after %lu writes: %s\n", n,
			       netvm_strerror(e));
			return 3;
		}
		n++;
	}
}

/* ---- death: what calls return once the exporter is gone ---- */

static const char *errname(int e)
{
	switch (-e) {
	case 0:
		return "OK";
	case EHOSTUNREACH:
		return "EHOSTUNREACH";
	case ECONNRESET:
		return "ECONNRESET";
	case ETIMEDOUT:
		return "ETIMEDOUT";
	default:
		return "other";
	}
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int death(int argc, char **argv, bool writes_only)
{
	struct netvm *nv;
	uint8_t *local;
	unsigned long n = 0;
	uint64_t last, t;
	int seg, e;

	seg = connect_vm(&nv, &local, argc, argv);
	fill(local, W_LEN, 5);
	printf("streaming\n");
	fflush(stdout);
	last = ms_now();
	for (;;) {
		e = netvm_write(nv, seg, W_OFF, local, W_LEN);
		/* a read waits for its data: with writes only, 16 rounds of
		 * 5 commands keep the library's 32 in flight */
		if (!e && !writes_only)
			e = netvm_read(nv, seg, R_OFF, local + W_LEN, R_LEN);
		if (!e && n % (writes_only ? 16 : 8) == (writes_only ? 15 : 7))
			e = netvm_flushRW(nv);
		if (e)
			break;
		last = ms_now();
		n++;
	}
	printf("first %s %" PRIu64 " %lu\n", errname(e), ms_now() - last, n);
	t = ms_now();
	e = netvm_writeF(nv, seg, W_OFF, local, W_LEN);
	printf("later writeF %s %" PRIu64 "\n", errname(e), ms_now() - t);
	t = ms_now();
	e = netvm_readF(nv, seg, R_OFF, local + W_LEN, R_LEN);
	printf("later readF %s %" PRIu64 "\n", errname(e), ms_now() - t);
	t = ms_now();
	e = netvm_write(nv, seg, W_OFF, local, W_LEN);
	if (!e)
		e = netvm_flushRW(nv);
	printf("later write+flush %s %" PRIu64 "\n", errname(e), ms_now() - t);
	t = ms_now();
	e = netvm_read(nv, seg, R_OFF, local + W_LEN, R_LEN);
	if (!e)
		e = netvm_flushRW(nv);
	printf("later read+flush %s %" PRIu64 "\n", errname(e), ms_now() - t);
	return 3;
}

/* ---- stale: an import made before the exporter restarted ---- */

#define STALE_GO	"/tmp/nvvm.go"

static int stale(int argc, char **argv)
{
	unsigned int port, seed;
	struct netvm *nv;
	uint8_t *local;
	int seg, e;
	FILE *f;

	seg = connect_vm(&nv, &local, argc, argv);
	fill(local, W_LEN, 5);
	e = netvm_writeF(nv, seg, W_OFF, local, W_LEN);
	printf("before %s\n", errname(e));
	fflush(stdout);
	if (e)
		return 1;
	/* the test's timeout bounds the wait */
	while (!(f = fopen(STALE_GO, "r")))
		usleep(100000);
	if (fscanf(f, "%u %u", &port, &seed) != 2) {
		fprintf(stderr, "netvm-vm-test: %s: want PORT SEED\n", STALE_GO);
		return 2;
	}
	fclose(f);
	e = netvm_writeF(nv, seg, W_OFF, local, W_LEN);
	printf("stale writeF %s %d\n", errname(e), e);
	e = netvm_readF(nv, seg, R_OFF, local + W_LEN, R_LEN);
	printf("stale readF %s %d\n", errname(e), e);
	seg = netvm_import(nv, (unsigned int)strtoul(argv[2], NULL, 0), port,
			   "vm");
	if (seg < 0) {
		printf("fresh import %s %d\n", errname(seg), seg);
		return 1;
	}
	memset(local + W_LEN, 0xee, R_LEN);
	e = netvm_readF(nv, seg, R_OFF, local + W_LEN, R_LEN);
	printf("fresh %s\n", errname(e));
	if (!e && check(local + W_LEN, R_LEN, seed) < 0)
		printf("fresh R ok\n");
	netvm_close(nv);
	return 0;
}

/* ---- bench: NetVM Tables 24 and 25 ---- */

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return v[n / 2];
}

#define BENCH_PAGES	256
#define BENCH_ITER	20
#define MISS_ITER	60

static int bench(int argc, char **argv)
{
	struct netvm_ptbench b;
	struct netvm *nv;
	uint8_t *local, *pages;
	double ml[BENCH_ITER], mu[BENCH_ITER], hit[MISS_ITER], miss[MISS_ITER];
	int seg, e, fd;

	seg = connect_vm(&nv, &local, argc, argv);
	fd = netvm_ep_fd(nv);
	pages = mmap(NULL, BENCH_PAGES * 4096ul, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED)
		die("mmap", -errno);
	memset(pages, 1, BENCH_PAGES * 4096ul);
	e = netvm_export(nv, "bench", pages, BENCH_PAGES * 4096ul, 0, NULL);
	if (e < 0)
		die("export bench", e);

	memset(&b, 0, sizeof(b));
	b.addr = (uintptr_t)pages;
	b.npages = BENCH_PAGES;
	b.iterations = BENCH_ITER;
	if (ioctl(fd, NETVM_IOC_PTBENCH, &b))
		die("NETVM_IOC_PTBENCH", -errno);

	for (int i = 0; i < BENCH_ITER; i++) {
		double t0 = now_ns();

		if (mlock(pages, BENCH_PAGES * 4096ul))
			die("mlock", -errno);
		ml[i] = (now_ns() - t0) / BENCH_PAGES;
		t0 = now_ns();
		munlock(pages, BENCH_PAGES * 4096ul);
		mu[i] = (now_ns() - t0) / BENCH_PAGES;
	}

	/*
	 * Page-miss restart: a 4 KiB write whose source page is resident but
	 * not in the NIC (MADV_DONTNEED then touched: the invalidation took
	 * the translation out) against the same write once it is mapped.
	 */
	for (int i = 0; i < MISS_ITER; i++) {
		double t0;

		madvise(local, 4096, MADV_DONTNEED);
		fill(local, 4096, 3);
		t0 = now_ns();
		e = netvm_writeF(nv, seg, W_OFF & ~4095ul, local, 4096);
		miss[i] = now_ns() - t0;
		if (e)
			die("writeF (miss)", e);
		t0 = now_ns();
		e = netvm_writeF(nv, seg, W_OFF & ~4095ul, local, 4096);
		hit[i] = now_ns() - t0;
		if (e)
			die("writeF (hit)", e);
	}
	printf("# per page, ns (NetVM Table 24/25; %u pages x %u rounds)\n",
	       BENCH_PAGES, BENCH_ITER);
	printf("translation install (mapPage)      %8.0f\n",
	       (double)b.map_ns / b.pages);
	printf("translation remove (unmapPage)     %8.0f\n",
	       (double)b.unmap_ns / b.pages);
	printf("page lookup (hmm_range_fault)      %8.0f\n",
	       (double)b.lookup_ns / b.pages);
	printf("pin_user_pages_fast (LONGTERM)     %8.0f\n",
	       (double)b.pin_ns / b.pages);
	printf("unpin_user_pages                   %8.0f\n",
	       (double)b.unpin_ns / b.pages);
	printf("mlock (median)                     %8.0f\n", median(ml, BENCH_ITER));
	printf("munlock (median)                   %8.0f\n", median(mu, BENCH_ITER));
	printf("# 4 KiB writeF, median of %d, us\n", MISS_ITER);
	printf("source page mapped in the NIC      %8.1f\n", median(hit, MISS_ITER) / 1e3);
	printf("source page miss + restart         %8.1f\n", median(miss, MISS_ITER) / 1e3);
	printf("page-miss restart cost             %8.1f\n",
	       (median(miss, MISS_ITER) - median(hit, MISS_ITER)) / 1e3);
	netvm_close(nv);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "serve"))
		return serve();
	if (argc >= 2 && !strcmp(argv[1], "client"))
		return client(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "stream"))
		return stream(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "bench"))
		return bench(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "death"))
		return death(argc, argv, false);
	if (argc >= 2 && !strcmp(argv[1], "flood"))
		return death(argc, argv, true);
	if (argc >= 2 && !strcmp(argv[1], "stale"))
		return stale(argc, argv);
	fprintf(stderr, "usage: netvm-vm-test serve | client NODE PORT RSEED WSEED NSEED NOTF | stream NODE PORT | death NODE PORT | flood NODE PORT | stale NODE PORT | bench NODE PORT\n");
	return 2;
}
