// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * netvm-bench: perftest-style benchmark of libnetvm between two nodes, with
 * the same ping-pong and streaming over TCP as the baseline.
 *
 *   netvm-bench server [-p PORT] [-t TIMEOUT_S]
 *   netvm-bench client [-p PORT] [-P netvm|tcp|both] [-n ITERS]
 *                      [-s SIZE,SIZE,..] [-b BYTES] [-T TEST,..] [-S MS]
 *                      [-W] [-x] ADDR
 *
 * As in perftest (ib_write_lat, ib_write_bw), the two sides meet over TCP
 * (the server listens on PORT, default 18515, on every address; the
 * client connects to ADDR, the server's data-NIC address 10.77.0.2 in a
 * cluster): a control connection exchanges the NetVM (node, port) of each
 * side and drives the tests; a second connection carries the TCP tests'
 * data.  Both sides register an endpoint and export "bench" (BENCH_REGION
 * bytes: a receive area, a source area, an atomic word) and import each
 * other's.
 *
 * Tests (docs/bench.md):
 *   write_lat    as perftest's ib_write_lat: netvm_write of SIZE, no
 *                notification; the peer spins on the last byte of its
 *                receive area (each iteration's write stamps it anew) and
 *                answers the same way: round trip
 *   notf_spin    writeN SIZE + notification 1, the peer spins on its
 *                notification queue, acks and answers the same way: round
 *                trip (the thesis's notfSpin)
 *   notf_wait    the same at 8 B, sleeping in netvm_notf_wait (poll)
 *   notf_handler the same at 8 B, each side's handler (netvm_notf_arm)
 *                taking the notification: the server's answers from the
 *                handler, the client's wakes the client's thread
 *   read_lat     netvm_readF of SIZE from the peer
 *   write_bw     ITERS netvm_write of SIZE, then netvm_flushW
 *   read_bw      ITERS netvm_read of SIZE, then netvm_flushR
 *   atomic_lat   netvm_incr on the peer's word (SIZE 4)
 *   cswap_lat    netvm_cswap on the peer's word (SIZE 4)
 *   unet_lat     U-Net message of SIZE (<= 4096), the peer polls its receive
 *                queue and answers SIZE: round trip
 *   unet_bw      ITERS U-Net messages of SIZE, at most UNET_WINDOW in
 *                flight (the receiver returns a credit every UNET_CREDIT)
 *   unet_stop    only with -T: ITERS U-Net messages of SIZE paced
 *                UNET_PACE_US apart; the receiver stops itself (SIGSTOP)
 *                for -S ms (default 1000) after a quarter of them, then takes the
 *                rest; reports how many went direct and how many the NI
 *                diverted to the driver (FUGU), by cause
 *   tcp_lat      send SIZE, the peer answers SIZE: round trip (TCP_NODELAY)
 *   tcp_bw       ITERS sends of SIZE, the peer answers 1 byte at the end
 * Each latency test times every iteration (after a few untimed ones) and
 * reports min, median, p99 and mean in microseconds; bandwidth tests report
 * MB/s (10^6 bytes/s).  Latency tests run ITERS iterations up to 4 KiB
 * and fewer above (ITERS * 4096 / SIZE, at least 50 or ITERS); bandwidth
 * tests move about BYTES (default 16 MiB) per size, min(50, ITERS) ..
 * 2 * ITERS transfers.
 *
 * Every test verifies its data: the last message (or the memory read or
 * written) is compared byte for byte with the pattern of netvm_pattern.h
 * on the receiving side, and atomics check every old value; a mismatch
 * makes the row's "verified" column "no" and the exit status 1.
 *
 * Output: CSV on stdout, one header line then one row per (test, size):
 *   path,test,size,iters,min_us,median_us,p99_us,mean_us,mbps,verified
 * Progress and errors go to stderr.  Exit status: 0 all verified, 1 a
 * failure or mismatch, 2 usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "netvm.h"
#include "netvm_pattern.h"

#define DEFAULT_PORT	18515		/* perftest's */
#define MAX_SIZE	(1u << 20)
#define RECV_OFF	0u
#define SRC_OFF		(2u << 20)
#define ATOM_OFF	(4u << 20)
#define BENCH_REGION	((4u << 20) + 4096)
#define NOTF		1u
#define WAIT_MS		30000		/* no single wait takes longer */
#define CONNECT_S	60		/* the server may still be starting */
#define MAX_SIZES	32
#define MIN_ITERS	50

/*
 * U-Net: one endpoint per side beside the NetVM one (a second descriptor
 * on the device), one channel between them.  Segment: the library's tx
 * area, then UNET_BUFS receive buffers of UNET_BUFSZ (one per message up
 * to NETVM_UNET_MSG_MAX).  The window stays below both the buffers and
 * the receive queue (256), so the streaming test measures direct delivery.
 */
#define UNET_TAG	0x6265u		/* "be" */
#define UNET_BUFSZ	4096u
#define UNET_BUFS	96u
#define UNET_SEG	(NETVM_UNET_TX_AREA + UNET_BUFS * UNET_BUFSZ)
#define UNET_WINDOW	64u
#define UNET_CREDIT	16u
#define UNET_PACE_US	1000u		/* unet_stop: one message per ms */
#define UNET_STOP_MS	1000u		/* ... receiver stopped for 1 s (-S) */
#define UNET_STOP_MAX	60000u

static const char *prog = "netvm-bench";
static int corrupt;	/* -x: flip a byte of what the client sends */
/* unet_stop's pause (-S); the client sends it with every "run" */
static unsigned int stop_ms = UNET_STOP_MS;
/* unet_stop (-W): the receiver has the driver watch it (netvm_unet_sched),
 * so the NI diverts while it is stopped, not only once its queue is full */
static unsigned int stop_watch;
/* -M: latency iterations slower than mark_us are marked in the kernel's
 * trace (ftrace's trace_marker), so that a trace of the guest's scheduler
 * can be read at the slow ones (docs/bench.md, "The tail of a spinning
 * round trip") */
static unsigned int mark_us;
static int mark_fd = -1;
#define TRACE_MARKER	"/sys/kernel/tracing/trace_marker"

enum kind { K_LAT, K_BW };

enum op {
	OP_WRITE_LAT, OP_NOTF_SPIN, OP_NOTF_WAIT, OP_NOTF_HANDLER, OP_READ_LAT,
	OP_WRITE_BW, OP_READ_BW,
	OP_INCR, OP_CSWAP, OP_TCP_LAT, OP_TCP_BW, OP_UNET_LAT, OP_UNET_BW,
	OP_UNET_STOP,
};

struct test {
	const char *name;
	const char *path;	/* "netvm", "unet" or "tcp" */
	enum op op;
	enum kind kind;
	int fixed_size;		/* > 0: runs once, at this size */
	int explicit_only;	/* runs only when named by -T */
};

static const struct test tests[] = {
	{ "write_lat", "netvm", OP_WRITE_LAT, K_LAT, 0, 0 },
	{ "notf_spin", "netvm", OP_NOTF_SPIN, K_LAT, 0, 0 },
	{ "notf_wait", "netvm", OP_NOTF_WAIT, K_LAT, 8, 0 },
	{ "notf_handler", "netvm", OP_NOTF_HANDLER, K_LAT, 8, 0 },
	{ "read_lat", "netvm", OP_READ_LAT, K_LAT, 0, 0 },
	{ "write_bw", "netvm", OP_WRITE_BW, K_BW, 0, 0 },
	{ "read_bw", "netvm", OP_READ_BW, K_BW, 0, 0 },
	{ "atomic_lat", "netvm", OP_INCR, K_LAT, 4, 0 },
	{ "cswap_lat", "netvm", OP_CSWAP, K_LAT, 4, 0 },
	{ "unet_lat", "unet", OP_UNET_LAT, K_LAT, 0, 0 },
	{ "unet_bw", "unet", OP_UNET_BW, K_BW, 0, 0 },
	{ "unet_stop", "unet", OP_UNET_STOP, K_BW, 0, 1 },
	{ "tcp_lat", "tcp", OP_TCP_LAT, K_LAT, 0, 0 },
	{ "tcp_bw", "tcp", OP_TCP_BW, K_BW, 0, 0 },
};
#define NTESTS (sizeof(tests) / sizeof(tests[0]))

/* One side's state: its endpoint, region, the peer's segment, sockets. */
struct side {
	struct netvm *nv;	/* NULL: no NetVM (tcp only) */
	struct netvm_unet *u;	/* NULL: no U-Net endpoint */
	int uch;		/* its channel to the peer's */
	struct netvm_unet_stats ust0;	/* server: its counts before "ready" */
	struct netvm_unet_fugu_stats fst0;	/* ... by FUGU's causes */
	uint8_t *region;
	int seg;		/* the peer's "bench" */
	int ctl, data;		/* control and TCP data connections */
	char in[512];		/* control bytes received, not yet a line */
	size_t in_len;
};

static void warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void warnx(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ---- sockets ---- */

static int send_full(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t r = send(fd, p, len, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EPIPE;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* Receive exactly len bytes, waiting at most WAIT_MS for each piece. */
static int recv_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r = recv(fd, p, len, MSG_DONTWAIT);

		if (r > 0) {
			p += r;
			len -= (size_t)r;
			continue;
		}
		if (r == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		r = poll(&pfd, 1, WAIT_MS);
		if (r == 0)
			return -ETIMEDOUT;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

static void ctl_send(struct side *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ctl_send(struct side *s, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	if (send_full(s->ctl, line, (size_t)n))
		warnx("control connection: send failed");
}

/* One control line (newline stripped), waiting at most WAIT_MS. */
static int ctl_recv(struct side *s, char *line, size_t cap)
{
	for (;;) {
		char *nl = memchr(s->in, '\n', s->in_len);
		struct pollfd pfd = { .fd = s->ctl, .events = POLLIN };
		ssize_t r;

		if (nl) {
			size_t n = (size_t)(nl - s->in);

			if (n >= cap)
				return -EMSGSIZE;
			memcpy(line, s->in, n);
			line[n] = 0;
			s->in_len -= n + 1;
			memmove(s->in, nl + 1, s->in_len);
			return 0;
		}
		if (s->in_len == sizeof(s->in))
			return -EMSGSIZE;
		r = poll(&pfd, 1, WAIT_MS);
		if (r == 0)
			return -ETIMEDOUT;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		r = recv(s->ctl, s->in + s->in_len, sizeof(s->in) - s->in_len,
			 0);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s->in_len += (size_t)r;
	}
}

/* Every send goes out at once (no Nagle): the TCP tests measure messages,
 * as the NetVM ones do (Nagle and delayed ACKs would stall small sends). */
static void set_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---- NetVM ---- */

/* Open /dev/netvm0, register, export the region.  0, or an error (the
 * caller runs without NetVM). */
static int nv_setup(struct side *s, unsigned int *node, int *port)
{
	struct netvm_info info;
	int err;

	err = netvm_open(0, &s->nv);
	if (err)
		return err;
	err = netvm_info(s->nv, &info);
	if (!err)
		err = netvm_register(s->nv, NETVM_PORT_ANY, 0);
	if (err < 0)
		goto fail;
	*port = err;
	*node = info.node_id;
	err = netvm_export(s->nv, "bench", s->region, BENCH_REGION, 0, NULL);
	if (err < 0)
		goto fail;
	return 0;
fail:
	netvm_close(s->nv);
	s->nv = NULL;
	return err;
}

/* Drain the notification queue (spinning never does, and it holds one
 * entry per 0 -> 1 transition of a counting notification). */
static void drain_notfq(struct netvm *nv)
{
	struct netvm_notf n;

	while (netvm_notfq_remove(nv, &n) == 0)
		;
}

/*
 * Wait for notification NOTF and acknowledge it: spinning, or sleeping in
 * netvm_notf_wait.  The spin polls the notification queue (host memory the
 * NIC writes an entry into for each 0 -> 1 transition of a counting
 * notification), which also keeps that queue drained; spinning on
 * netvm_notf_test (the NIC's SRAM, an MMIO read per poll) measured the
 * same under TCG.  0 or an error.
 */
static int notf_take(struct netvm *nv, int spin)
{
	int c;

	if (spin) {
		double deadline = now_us() + WAIT_MS * 1e3;
		struct netvm_notf n;
		unsigned int k = 0;

		for (;;) {
			c = netvm_notfq_remove(nv, &n);
			if (c == 0 && n.notf == NOTF)
				break;
			if (c && c != -EAGAIN)
				return c;
			if (++k % 4096 == 0 && now_us() > deadline)
				return -ETIMEDOUT;
		}
	} else {
		c = netvm_notf_wait(nv, NOTF, WAIT_MS);
		if (c < 0)
			return c;
		drain_notfq(nv);
	}
	c = netvm_notf_ack(nv, NOTF);
	return c < 0 ? c : 0;
}

/* ---- the tests ---- */

static const struct test *find_test(const char *name)
{
	for (size_t i = 0; i < NTESTS; i++)
		if (!strcmp(tests[i].name, name))
			return &tests[i];
	return NULL;
}

/* Is every name of the comma-separated list a test? */
static int tests_known(const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL;
	int ok = copy != NULL;

	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!find_test(tok)) {
			warnx("no test %s", tok);
			ok = 0;
		}
	}
	free(copy);
	return ok;
}

static unsigned int warmup(unsigned int iters)
{
	return iters >= 100 ? 10 : 2;
}

/* Byte-for-byte check of len bytes at p against pattern k, with a message. */
static int verify(const char *what, const uint8_t *p, size_t len, uint32_t k,
		  char *msg, size_t cap)
{
	long bad = netvm_pattern_check(p, len, k);
	unsigned int want;

	if (bad < 0)
		return 0;
	/* the first 4 bytes carry k itself (netvm_pattern.h) */
	want = bad < 4 ? (k >> (8 * bad)) & 0xff :
	       netvm_pattern_byte(k, (size_t)bad);
	snprintf(msg, cap, "%s: byte %ld of %zu is %#x, want %#x", what, bad,
		 len, p[bad], want);
	return -EBADMSG;
}

/*
 * write_lat, as ib_write_lat: the last byte of each write carries a stamp
 * that is never 0 (what the receive area starts as) and never the previous
 * iteration's, and the receiver spins on that byte.  Only the stamp is
 * polled: which bytes of one DMA land first is the device's business, so
 * the rest is checked once, after the test.
 */
static uint8_t stamp(unsigned int i)
{
	return (uint8_t)(1 + i % 255);
}

/* Every 16 polls the spinner offers its CPU (netvm_yield): with the
 * device's yield-wait-us it waits there for the NIC's next write. */
static int await_byte(struct netvm *nv, const uint8_t *p, uint8_t want)
{
	const volatile uint8_t *v = p;
	double deadline = now_us() + WAIT_MS * 1e3;
	unsigned int k = 0;

	while (*v != want) {
		if (k % 16 == 15)
			netvm_yield(nv);
		if (++k % 4096 == 0 && now_us() > deadline)
			return -ETIMEDOUT;
	}
	return 0;
}

/*
 * notf_handler: each side's handler.  The server's answers from the
 * handler (its own thread does nothing with the handle meanwhile, as
 * netvm.h requires); the client's only wakes the client's thread.
 */
struct handler_ctx {
	struct side *s;
	size_t size;
	int answer;		/* server: answer with writeN + NOTF */
	int err;		/* the first answer that failed */
	int sem_ok, armed;	/* what handler_done must undo */
	sem_t calls;		/* posted once per call */
};

static void bench_handler(struct netvm *nv, uint32_t notf, void *arg)
{
	struct handler_ctx *h = arg;

	(void)notf;
	if (h->answer && !h->err)
		h->err = netvm_writeN(nv, h->s->seg, RECV_OFF,
				      h->s->region + SRC_OFF, h->size, NOTF);
	sem_post(&h->calls);
}

/* The next handler call, waiting at most WAIT_MS. */
static int await_call(struct handler_ctx *h)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WAIT_MS / 1000;
	while (sem_timedwait(&h->calls, &ts))
		if (errno != EINTR)
			return -errno;
	return 0;
}

static int handler_arm(struct side *s, struct handler_ctx *h, size_t size,
		       int answer)
{
	int err;

	*h = (struct handler_ctx){ .s = s, .size = size, .answer = answer };
	if (sem_init(&h->calls, 0, 0))
		return -errno;
	h->sem_ok = 1;
	err = netvm_notf_arm(s->nv, NOTF, bench_handler, h);
	h->armed = !err;
	return err;
}

/* Disarms whatever happened (h lives on the caller's stack: the handler
 * is not running once this returns); the test's error (err), else the
 * first failed answer. */
static int handler_done(struct side *s, struct handler_ctx *h, int err)
{
	if (h->armed)
		netvm_notf_disarm(s->nv, NOTF);
	if (h->sem_ok)
		sem_destroy(&h->calls);
	return err ? err : h->err;
}

/* What a stamped receive area must hold: pattern k (verify()'s check and
 * message), except its last byte, the last write's stamp. */
static int verify_stamped(const char *what, const uint8_t *p, size_t len,
			  uint32_t k, uint8_t stamp_byte, char *msg, size_t cap)
{
	long bad = netvm_pattern_check(p, len, k);

	if (bad >= 0 && (size_t)bad < len - 1)
		return verify(what, p, len, k, msg, cap);
	if (p[len - 1] == stamp_byte)
		return 0;
	snprintf(msg, cap, "%s: byte %zu of %zu is %#x, want %#x (the last write's stamp)",
		 what, len - 1, len, p[len - 1], stamp_byte);
	return -EBADMSG;
}

/* ---- U-Net ---- */

/* The U-Net endpoint beside the NetVM one.  0, or an error (s->u stays
 * NULL: the U-Net tests are refused). */
static int unet_setup(struct side *s)
{
	int err = netvm_unet_open(s->nv, UNET_SEG, UNET_BUFSZ, UNET_BUFS,
				  &s->u);

	if (err)
		s->u = NULL;
	return err;
}

/* Sets up the channel to the peer's endpoint (node, uport), or closes
 * ours if there is none.  0 or an error. */
static int unet_connect(struct side *s, unsigned int node, int uport)
{
	if (!s->u)
		return 0;
	s->uch = uport > 0 ? netvm_unet_channel(s->u, node,
						  (unsigned int)uport,
						  UNET_TAG) : -ENODEV;
	if (s->uch >= 0)
		return 0;
	netvm_unet_close(s->u);
	s->u = NULL;
	return s->uch;
}

static const char *unet_strerror(int err)
{
	if (err == -EPROTO)
		return "a message on another channel";
	if (err == -EBADMSG)
		return "a message of the wrong length";
	return netvm_strerror(err);
}

/* The next message, by polling the receive queue (no system call unless
 * the NI diverted some), at most WAIT_MS.  0, -EPROTO for a message on
 * another channel, or an error. */
static int unet_get(struct side *s, void *buf, size_t *len)
{
	double deadline = now_us() + WAIT_MS * 1e3;
	unsigned int ch, k = 0;
	int err;

	for (;;) {
		err = netvm_unet_recv(s->u, buf, NETVM_UNET_MSG_MAX, len, &ch,
				      0);
		if (!err)
			return ch == (unsigned int)s->uch ? 0 : -EPROTO;
		if (err != -EAGAIN)
			return err;
		if (++k % 4096 == 0 && now_us() > deadline)
			return -ETIMEDOUT;
	}
}

/* The streaming tests number their messages: k + index, little-endian,
 * in the first 4 bytes, where netvm_pattern.h keeps k. */
static void put_seq(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A credit: "got messages so far", 4 bytes. */
static int unet_credit(struct side *s, uint32_t got)
{
	uint8_t b[4];

	put_seq(b, got);
	return netvm_unet_send(s->u, s->uch, b, sizeof(b));
}

/* Take credits until the receiver has acknowledged want messages. */
static int unet_acked(struct side *s, unsigned int *acked, unsigned int want,
		      unsigned int n)
{
	uint8_t *in = s->region + RECV_OFF;
	size_t len;

	while (*acked < want) {
		int err = unet_get(s, in, &len);
		uint32_t v;

		if (err)
			return err;
		v = netvm_pattern_seq(in);
		if (len != 4 || v <= *acked || v > n)
			return -EBADMSG;
		*acked = v;
	}
	return 0;
}

/*
 * Stop this process for ms milliseconds (SIGSTOP; a child continues it
 * once it has seen it stopped, so an early SIGCONT cannot be lost).
 */
static int stop_self(unsigned int ms)
{
	pid_t child = fork();

	if (child < 0)
		return -errno;
	if (child == 0) {
		char path[64], st[256];
		pid_t parent = getppid();

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)parent);
		usleep(ms * 1000);
		for (int i = 0; i < 3000; i++) {
			FILE *f = fopen(path, "r");
			char *p = NULL;

			if (f) {
				p = fgets(st, sizeof(st), f) ?
				    strrchr(st, ')') : NULL;
				fclose(f);
			}
			if (p && p[1] == ' ' && p[2] == 'T')
				break;
			usleep(10000);
		}
		kill(parent, SIGCONT);
		_exit(0);
	}
	raise(SIGSTOP);
	return waitpid(child, NULL, 0) < 0 ? -errno : 0;
}

/*
 * The receiving side of unet_bw and unet_stop: n messages of size bytes,
 * each checked for its length and number (order), the last one byte for
 * byte; a credit every UNET_CREDIT messages and after the warm-up
 * (unet_bw) and one at the end.  unet_stop stops the process for
 * stop_ms after n / 4 messages (0: not at all), and leaves in msg what the NI
 * counted meanwhile: direct, diverted by cause, dropped.
 */
static int serve_unet_stream(struct side *s, const struct test *t,
			     size_t size, unsigned int iters, uint32_t k,
			     char *msg, size_t cap)
{
	uint8_t *recv = s->region + RECV_OFF;
	unsigned int n = iters + warmup(iters), w = warmup(iters), got = 0;
	int stop = t->op == OP_UNET_STOP, err = 0, bad = 0;
	struct netvm_unet_stats a = s->ust0, b;
	struct netvm_unet_fugu_stats fb;
	size_t len = 0;

	if (stop && stop_watch) {
		err = netvm_unet_sched(s->u, 1);
		if (err) {
			snprintf(msg, cap, "scheduler watch: %s",
				 unet_strerror(err));
			return err;
		}
	}

	while (got < n && !err) {
		if (stop && stop_ms && got == n / 4) {
			err = stop_self(stop_ms);
			if (err)
				break;
		}
		err = unet_get(s, recv, &len);
		if (err)
			break;
		/* a bad one is reported, and the stream taken to its end
		 * so that the sender's credits keep coming */
		if (!bad && (len != size ||
			     netvm_pattern_seq(recv) != k + got)) {
			snprintf(msg, cap,
				 "message %u: %zu B numbered %u, want %zu B numbered %u",
				 got, len, netvm_pattern_seq(recv) - k, size,
				 got);
			bad = 1;
		}
		got++;
		if (got == n || (!stop && (got % UNET_CREDIT == 0 || got == w)))
			err = unet_credit(s, got);
	}
	if (stop && stop_watch)
		netvm_unet_sched(s->u, 0);
	if (err) {
		snprintf(msg, cap, "message %u: %s", got, unet_strerror(err));
		return err;
	}
	if (bad)
		return -EBADMSG;
	netvm_unet_stats(s->u, &b);
	netvm_unet_fugu_stats(s->u, &fb);
	if (stop)
		snprintf(msg, cap,
			 "messages %u direct %u diverted %u ring_full %u no_buf %u order %u dropped %u not_running %u",
			 n, b.received - a.received, b.diverted - a.diverted,
			 b.rx_ring_full - a.rx_ring_full,
			 b.rx_no_buf - a.rx_no_buf, b.div_order - a.div_order,
			 b.dropped - a.dropped,
			 fb.not_running - s->fst0.not_running);
	put_seq(recv, k);	/* the rest must be pattern k */
	return verify("last message", recv, size, k, msg, cap);
}

/*
 * The sending side of unet_bw (at most UNET_WINDOW unacknowledged, timed
 * after the warm-up's credit) and unet_stop (one message every
 * UNET_PACE_US, timed whole).  *secs: until the final credit.
 */
static int client_unet_stream(struct side *s, const struct test *t,
			      size_t size, unsigned int iters, uint32_t k,
			      double *secs, char *msg, size_t cap)
{
	uint8_t *src = s->region + SRC_OFF;
	unsigned int n = iters + warmup(iters), w = warmup(iters), i;
	unsigned int acked = 0;
	int stop = t->op == OP_UNET_STOP, err = 0;
	double t0 = now_us();
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (i = 0; i < n && !err; i++) {
		if (!stop && i == w) {
			err = unet_acked(s, &acked, w, n);
			t0 = now_us();
		}
		if (!stop && !err && i - acked >= UNET_WINDOW)
			err = unet_acked(s, &acked, i - UNET_WINDOW + 1, n);
		if (stop) {
			next.tv_nsec += UNET_PACE_US * 1000;
			if (next.tv_nsec >= 1000000000) {
				next.tv_nsec -= 1000000000;
				next.tv_sec++;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
					NULL);
		}
		put_seq(src, k + i);
		if (corrupt && size / 2 < 4)	/* -x hit the number */
			src[size / 2] ^= 0x5a;
		if (!err)
			err = netvm_unet_send(s->u, s->uch, src, size);
	}
	if (!err)
		err = unet_acked(s, &acked, n, n);
	*secs = (now_us() - t0) / 1e6;
	if (err) {
		snprintf(msg, cap, "message %u: %s", i, unet_strerror(err));
		return err;
	}
	return 0;
}

/*
 * The server's part of a test, between "ready" and the client's "end":
 * answer the ping-pongs, then verify what arrived.  0, or an error with a
 * message in msg.
 */
static int serve_test(struct side *s, const struct test *t, size_t size,
		      unsigned int iters, uint32_t k, char *msg, size_t cap)
{
	uint8_t *recv = s->region + RECV_OFF, *src = s->region + SRC_OFF;
	unsigned int n = iters + warmup(iters), i;
	int err = 0;

	if (t->op == OP_WRITE_LAT) {
		for (i = 0; i < n && !err; i++) {
			err = await_byte(s->nv, recv + size - 1, stamp(i));
			src[size - 1] = stamp(i);
			if (!err)
				err = netvm_write(s->nv, s->seg, RECV_OFF, src,
						  size);
		}
		if (!err)
			err = netvm_flushW(s->nv);
		if (err) {
			snprintf(msg, cap, "iteration %u: %s", i - 1,
				 netvm_strerror(err));
			return err;
		}
		return verify_stamped("received", recv, size, k, stamp(n - 1),
				      msg, cap);
	}
	if (t->op == OP_NOTF_HANDLER) {
		struct handler_ctx h;

		err = handler_arm(s, &h, size, 1);
		for (i = 0; i < n && !err; i++)
			err = await_call(&h);
		err = handler_done(s, &h, err);
		if (!err)
			err = netvm_flushW(s->nv);
		if (err) {
			snprintf(msg, cap, "call %u: %s", i, netvm_strerror(err));
			return err;
		}
		return verify("received", recv, size, k, msg, cap);
	}
	if (t->op == OP_NOTF_SPIN || t->op == OP_NOTF_WAIT) {
		int spin = t->op == OP_NOTF_SPIN;

		for (i = 0; i < n && !err; i++) {
			err = notf_take(s->nv, spin);
			if (!err)
				err = netvm_writeN(s->nv, s->seg, RECV_OFF, src,
						   size, NOTF);
		}
		if (!err)
			err = netvm_flushW(s->nv);
		if (err) {
			snprintf(msg, cap, "iteration %u: %s", i,
				 netvm_strerror(err));
			return err;
		}
		return verify("received", recv, size, k, msg, cap);
	}
	if (t->op == OP_TCP_LAT) {
		for (i = 0; i < n && !err; i++) {
			err = recv_full(s->data, recv, size);
			if (!err)
				err = send_full(s->data, src, size);
		}
		if (err) {
			snprintf(msg, cap, "iteration %u: %s", i, strerror(-err));
			return err;
		}
		return verify("received", recv, size, k, msg, cap);
	}
	if (t->op == OP_TCP_BW) {
		uint8_t ack = 1;

		for (i = 0; i < n && !err; i++)
			err = recv_full(s->data, recv, size);
		if (!err)
			err = send_full(s->data, &ack, 1);
		if (err) {
			snprintf(msg, cap, "message %u: %s", i, strerror(-err));
			return err;
		}
		return verify("received", recv, size, k, msg, cap);
	}
	if (t->op == OP_UNET_LAT) {
		size_t len = 0;
		int bad = -1;	/* the first of the wrong length */

		for (i = 0; i < n && !err; i++) {
			err = unet_get(s, recv, &len);
			if (!err && len != size && bad < 0)
				bad = (int)i;
			if (!err)	/* answered anyway: the client goes on */
				err = netvm_unet_send(s->u, s->uch, src, size);
		}
		if (err || bad >= 0) {
			snprintf(msg, cap, "message %u: %s",
				 err ? i - 1 : (unsigned int)bad,
				 unet_strerror(err ? err : -EBADMSG));
			return err ? err : -EBADMSG;
		}
		return verify("received", recv, size, k, msg, cap);
	}
	if (t->op == OP_UNET_BW || t->op == OP_UNET_STOP)
		return serve_unet_stream(s, t, size, iters, k, msg, cap);
	return 0;	/* one-sided: checked at "end" */
}

/* After "end": what a one-sided test left in the server's memory. */
static int serve_check(struct side *s, const struct test *t, size_t size,
		       unsigned int iters, uint32_t k, char *msg, size_t cap)
{
	uint32_t word = *(volatile uint32_t *)(s->region + ATOM_OFF);
	unsigned int n = iters + warmup(iters);

	if (t->op == OP_WRITE_BW)
		return verify("written", s->region + RECV_OFF, size, k, msg,
			      cap);
	if (t->op == OP_INCR || t->op == OP_CSWAP) {
		if (word == n)
			return 0;
		snprintf(msg, cap, "the word is %u after %u operations", word,
			 n);
		return -EBADMSG;
	}
	return 0;
}

static int server_loop(struct side *s)
{
	char line[256], msg[200], name[32];
	unsigned int iters;
	uint32_t k;
	size_t size;

	for (;;) {
		const struct test *t;
		int err;

		err = ctl_recv(s, line, sizeof(line));
		if (err == -ETIMEDOUT)
			continue;	/* the client is between tests */
		if (err) {
			warnx("control connection: %s", strerror(-err));
			return 1;
		}
		if (!strcmp(line, "quit")) {
			ctl_send(s, "bye");
			return 0;
		}
		stop_ms = UNET_STOP_MS;
		stop_watch = 0;
		if (sscanf(line, "run %31s %zu %u %" SCNu32 " %u %u", name,
			   &size, &iters, &k, &stop_ms, &stop_watch) < 4 ||
		    !(t = find_test(name)) || stop_ms > UNET_STOP_MAX ||
		    stop_watch > 1 ||
		    size < 4 || size > MAX_SIZE || !iters ||
		    (!strcmp(t->path, "netvm") && !s->nv) ||
		    (!strcmp(t->path, "unet") &&
		     (!s->u || size > NETVM_UNET_MSG_MAX))) {
			ctl_send(s, "error bad request: %s", line);
			continue;
		}
		/* prepare: our source carries pattern k, the rest is zero */
		netvm_pattern_fill(s->region + SRC_OFF, size, k);
		memset(s->region + RECV_OFF, 0, size);
		*(volatile uint32_t *)(s->region + ATOM_OFF) = 0;
		/* before "ready": the first message may arrive right after */
		if (s->u) {
			netvm_unet_stats(s->u, &s->ust0);
			netvm_unet_fugu_stats(s->u, &s->fst0);
		}
		ctl_send(s, "ready");
		msg[0] = 0;
		err = serve_test(s, t, size, iters, k, msg, sizeof(msg));
		if (ctl_recv(s, line, sizeof(line)) || strcmp(line, "end")) {
			warnx("%s: no \"end\" from the client", t->name);
			return 1;
		}
		if (!err)
			err = serve_check(s, t, size, iters, k, msg,
					  sizeof(msg));
		if (err)
			ctl_send(s, "fail %s", msg);
		else if (msg[0])	/* unet_stop's counts */
			ctl_send(s, "ok %s", msg);
		else
			ctl_send(s, "ok");
	}
}

/* One slow iteration in the trace: its end is the marker's timestamp. */
static void mark_slow(const char *test, size_t size, unsigned int i, double us)
{
	char line[128];
	int n = snprintf(line, sizeof(line),
			 "netvm-bench slow %s %zu iter %u us %.0f\n", test, size,
			 i, us);

	if (mark_fd >= 0 && n > 0 && write(mark_fd, line, (size_t)n) < 0)
		warnx("%s: %s", TRACE_MARKER, strerror(errno));
}

/* The client's side of a latency test: fills samples[iters] (us). */
static int client_lat(struct side *s, const struct test *t, size_t size,
		      unsigned int iters, uint32_t k, double *samples,
		      char *msg, size_t cap)
{
	uint8_t *recv = s->region + RECV_OFF, *src = s->region + SRC_OFF;
	unsigned int w = warmup(iters), i;
	int atomic = t->op == OP_INCR || t->op == OP_CSWAP;
	int handler = t->op == OP_NOTF_HANDLER;
	struct handler_ctx h;
	size_t len = 0;
	int err = 0;

	if (handler)
		err = handler_arm(s, &h, size, 0);
	for (i = 0; i < iters + w && !err; i++) {
		double t0 = now_us();
		uint32_t old = 0;

		switch (t->op) {
		case OP_TCP_LAT:
			err = send_full(s->data, src, size);
			if (!err)
				err = recv_full(s->data, recv, size);
			break;
		case OP_WRITE_LAT:
			src[size - 1] = stamp(i);
			err = netvm_write(s->nv, s->seg, RECV_OFF, src, size);
			if (!err)
				err = await_byte(s->nv, recv + size - 1,
						 stamp(i));
			break;
		case OP_NOTF_SPIN:
		case OP_NOTF_WAIT:
			err = netvm_writeN(s->nv, s->seg, RECV_OFF, src, size,
					   NOTF);
			if (!err)
				err = notf_take(s->nv, t->op == OP_NOTF_SPIN);
			break;
		case OP_NOTF_HANDLER:
			err = netvm_writeN(s->nv, s->seg, RECV_OFF, src, size,
					   NOTF);
			if (!err)
				err = await_call(&h);
			break;
		case OP_READ_LAT:
			err = netvm_readF(s->nv, s->seg, SRC_OFF, recv, size);
			break;
		case OP_UNET_LAT:
			err = netvm_unet_send(s->u, s->uch, src, size);
			if (!err)
				err = unet_get(s, recv, &len);
			if (!err && len != size)
				err = -EBADMSG;
			break;
		case OP_INCR:
			err = netvm_incr(s->nv, s->seg, ATOM_OFF, &old);
			break;
		default:	/* OP_CSWAP */
			err = netvm_cswap(s->nv, s->seg, ATOM_OFF, i, i + 1,
					  &old);
			break;
		}
		/* the word counts the operations: old is always i */
		if (!err && atomic && old != i) {
			snprintf(msg, cap, "iteration %u: old value %u, want %u",
				 i, old, i);
			return -EBADMSG;
		}
		if (i >= w) {
			samples[i - w] = now_us() - t0;
			if (mark_us && samples[i - w] > mark_us)
				mark_slow(t->name, size, i - w, samples[i - w]);
		}
	}
	if (handler)
		err = handler_done(s, &h, err);
	/* a write's error surfaces at the flush */
	if (!err && t->op == OP_WRITE_LAT)
		err = netvm_flushW(s->nv);
	if (err) {
		snprintf(msg, cap, "iteration %u: %s", i - 1,
			 t->op == OP_TCP_LAT ? strerror(-err) :
			 t->op == OP_UNET_LAT ? unet_strerror(err) :
			 netvm_strerror(err));
		return err;
	}
	if (t->op == OP_WRITE_LAT)
		return verify_stamped("answer", recv, size, k,
				      stamp(iters + w - 1), msg, cap);
	return atomic ? 0 : verify(t->op == OP_READ_LAT ? "read" : "answer",
				   recv, size, k, msg, cap);
}

/* The client's side of a bandwidth test: the seconds of the timed part. */
static int client_bw(struct side *s, const struct test *t, size_t size,
		     unsigned int iters, uint32_t k, double *secs,
		     char *msg, size_t cap)
{
	uint8_t *recv = s->region + RECV_OFF, *src = s->region + SRC_OFF;
	unsigned int w = warmup(iters), i;
	int is_tcp = t->op == OP_TCP_BW;
	int rd = t->op == OP_READ_BW;
	double t0 = 0;
	int err = 0;
	uint8_t ack;

	for (i = 0; i < iters + w && !err; i++) {
		if (i == w)
			t0 = now_us();
		if (is_tcp)
			err = send_full(s->data, src, size);
		else if (rd)
			err = netvm_read(s->nv, s->seg, SRC_OFF, recv, size);
		else
			err = netvm_write(s->nv, s->seg, RECV_OFF, src, size);
		/* the untimed first transfers complete before timing starts */
		if (!err && !is_tcp && i + 1 == w)
			err = netvm_flushRW(s->nv);
	}
	if (!err)
		err = is_tcp ? recv_full(s->data, &ack, 1) :
		      netvm_flushRW(s->nv);
	*secs = (now_us() - t0) / 1e6;
	if (err) {
		snprintf(msg, cap, "%s", is_tcp ? strerror(-err) :
			 netvm_strerror(err));
		return err;
	}
	return rd ? verify("read", recv, size, k, msg, cap) : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* At least MIN_ITERS (so that a p99 means something), unless the user
 * asked for fewer with -n. */
static unsigned int at_least(unsigned long n, unsigned int base)
{
	unsigned int floor = base < MIN_ITERS ? base : MIN_ITERS;

	return n < floor ? floor : (unsigned int)n;
}

static unsigned int lat_iters(unsigned int base, size_t size)
{
	return at_least(size <= 4096 ? base :
			(unsigned long)base * 4096 / size, base);
}

static unsigned int bw_iters(unsigned int base, unsigned long bytes,
			     size_t size)
{
	unsigned long n = bytes / size;

	if (n > 2ul * base)
		n = 2ul * base;
	return at_least(n, base);
}

/* Run one (test, size) against the server and print its CSV row.
 * Returns 0 if it ran and verified. */
static int run_one(struct side *s, const struct test *t, size_t size,
		   unsigned int base, unsigned long bw_bytes, uint32_t k)
{
	unsigned int iters = t->kind == K_LAT ? lat_iters(base, size) :
			     t->op == OP_UNET_STOP ? base :
			     bw_iters(base, bw_bytes, size);
	double *v = calloc(iters, sizeof(*v));
	char line[256], msg[200] = "";
	double secs = 0, sum = 0, mbps;
	int err, ok;

	if (!v)
		return -ENOMEM;
	/* the source carries pattern k; what we receive into starts zeroed */
	netvm_pattern_fill(s->region + SRC_OFF, size, k);
	if (corrupt)	/* the server's check must catch this */
		s->region[SRC_OFF + size / 2] ^= 0x5a;
	memset(s->region + RECV_OFF, 0, size);
	ctl_send(s, "run %s %zu %u %" PRIu32 " %u %u", t->name, size, iters, k,
		 stop_ms, stop_watch);
	err = ctl_recv(s, line, sizeof(line));
	if (err || strcmp(line, "ready")) {
		warnx("%s %zu: server: %s", t->name, size,
		      err ? strerror(-err) : line);
		free(v);
		return -EPROTO;
	}
	if (t->kind == K_LAT)
		err = client_lat(s, t, size, iters, k, v, msg, sizeof(msg));
	else if (!strcmp(t->path, "unet"))
		err = client_unet_stream(s, t, size, iters, k, &secs, msg,
					 sizeof(msg));
	else
		err = client_bw(s, t, size, iters, k, &secs, msg, sizeof(msg));
	ctl_send(s, "end");
	if (ctl_recv(s, line, sizeof(line))) {
		warnx("%s %zu: no answer from the server", t->name, size);
		free(v);
		return -EPROTO;
	}
	ok = !err && (!strcmp(line, "ok") || !strncmp(line, "ok ", 3));
	if (err)
		warnx("%s %zu B: %s", t->name, size, msg);
	else if (!ok)
		warnx("%s %zu B: server: %s", t->name, size, line);
	else if (line[2])	/* unet_stop: what the receiver's NI counted */
		fprintf(stderr, "%s: %s %zu B receiver: %s\n", prog, t->name,
			size, line + 3);
	if (t->kind == K_LAT) {
		for (unsigned int i = 0; i < iters; i++)
			sum += v[i];
		qsort(v, iters, sizeof(*v), cmp_double);
		mbps = sum > 0 ? (double)size * iters / sum : 0;
		printf("%s,%s,%zu,%u,%.2f,%.2f,%.2f,%.2f,%.2f,%s\n", t->path,
		       t->name, size, iters, v[0], v[iters / 2],
		       v[(size_t)((iters - 1) * 0.99)], sum / iters, mbps,
		       ok ? "yes" : "no");
		fprintf(stderr, "%s: %-10s %8zu B  median %9.2f us  p99 %9.2f us%s\n",
			prog, t->name, size, v[iters / 2],
			v[(size_t)((iters - 1) * 0.99)], ok ? "" : "  FAILED");
	} else {
		mbps = secs > 0 ? (double)size * iters / secs / 1e6 : 0;
		printf("%s,%s,%zu,%u,,,,%.2f,%.2f,%s\n", t->path, t->name, size,
		       iters, secs * 1e6 / iters, mbps, ok ? "yes" : "no");
		fprintf(stderr, "%s: %-10s %8zu B  %9.2f MB/s%s\n", prog,
			t->name, size, mbps, ok ? "" : "  FAILED");
	}
	fflush(stdout);
	free(v);
	return ok ? 0 : -EBADMSG;
}

/* ---- setup: region, sockets, the hello exchange ---- */

static uint8_t *map_region(void)
{
	uint8_t *p = mmap(NULL, BENCH_REGION, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* unet_stop's helper child must not share it copy-on-write */
	madvise(p, BENCH_REGION, MADV_DONTFORK);
	memset(p, 0, BENCH_REGION);	/* no page miss while timing */
	return p;
}

/* hello: send ours (node, NetVM port, U-Net port or -1), read the peer's,
 * import its "bench", set up the U-Net channel */
static int hello(struct side *s, unsigned int node, int port, int want_nv,
		 int want_unet)
{
	char line[256];
	unsigned int pnode;
	int pport, puport = -1, err;

	if (s->nv)
		ctl_send(s, "hello %u %d %d", node, port,
			 s->u ? netvm_unet_port(s->u) : -1);
	else
		ctl_send(s, "hello - - -");
	err = ctl_recv(s, line, sizeof(line));
	if (err)
		return err;
	if (sscanf(line, "hello %u %d %d", &pnode, &pport, &puport) < 2) {
		if (want_nv && s->nv)
			warnx("the peer has no NetVM endpoint (%s)", line);
		if (s->nv) {
			netvm_unet_close(s->u);
			s->u = NULL;
			netvm_close(s->nv);
			s->nv = NULL;
		}
		return want_nv ? -ENODEV : 0;
	}
	if (!s->nv)
		return want_nv ? -ENODEV : 0;
	s->seg = netvm_import(s->nv, pnode, (unsigned int)pport, "bench");
	if (s->seg < 0) {
		warnx("import of \"bench\" from node %u port %d: %s", pnode,
		      pport, netvm_strerror(s->seg));
		return s->seg;
	}
	err = unet_connect(s, pnode, puport);
	if (err && want_unet) {
		warnx("U-Net channel to node %u port %d: %s", pnode, puport,
		      netvm_strerror(err));
		return err;
	}
	return 0;
}

static int accept_one(int lfd, int timeout_s)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	int r = poll(&pfd, 1, timeout_s * 1000);

	if (r <= 0)
		return r ? -errno : -ETIMEDOUT;
	r = accept(lfd, NULL, NULL);
	if (r < 0)
		return -errno;
	set_nodelay(r);
	return r;
}

static int server(int port, int timeout_s)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	struct side s = { .seg = -1 };
	unsigned int node = 0;
	int lfd, one = 1, nport = 0, err, rc;

	s.region = map_region();
	if (!s.region) {
		warnx("mmap: %s", strerror(errno));
		return 1;
	}
	err = nv_setup(&s, &node, &nport);
	if (err)
		warnx("no NetVM endpoint (%s): TCP tests only",
		      netvm_strerror(err));
	else if ((err = unet_setup(&s)))
		warnx("no U-Net endpoint (%s): no U-Net tests",
		      netvm_strerror(err));
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 2)) {
		warnx("listen on port %d: %s", port, strerror(errno));
		return 1;
	}
	fprintf(stderr, "%s: server listening on port %d (NetVM: %s)\n", prog,
		port, s.nv ? "yes" : "no");
	s.ctl = accept_one(lfd, timeout_s);
	if (s.ctl < 0) {
		warnx("no client within %d s", timeout_s);
		return 1;
	}
	s.data = accept_one(lfd, WAIT_MS / 1000);
	if (s.data < 0) {
		warnx("the client's data connection: %s", strerror(-s.data));
		return 1;
	}
	close(lfd);
	err = hello(&s, node, nport, 0, 0);
	if (err) {
		warnx("hello: %s", netvm_strerror(err));
		return 1;
	}
	fprintf(stderr, "%s: U-Net: %s\n", prog, s.u ? "yes" : "no");
	rc = server_loop(&s);
	netvm_unet_close(s.u);
	if (s.nv)
		netvm_close(s.nv);
	return rc;
}

static int connect_to(const char *addr, int port)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM }, *ai;
	char ps[16];
	double deadline = now_us() + CONNECT_S * 1e6;
	int fd, err;

	snprintf(ps, sizeof(ps), "%d", port);
	err = getaddrinfo(addr, ps, &hints, &ai);
	if (err) {
		warnx("%s: %s", addr, gai_strerror(err));
		return -EINVAL;
	}
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			break;
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		err = -errno;
		close(fd);
		fd = err;
		if (now_us() > deadline ||
		    (err != -ECONNREFUSED && err != -ENETUNREACH &&
		     err != -EHOSTUNREACH && err != -ETIMEDOUT))
			break;
		usleep(200000);
	}
	freeaddrinfo(ai);
	if (fd >= 0)
		set_nodelay(fd);
	return fd;
}

static int parse_list(const char *arg, size_t *sizes, int max)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int n = 0;

	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned long v;

		if (n == max || netvm_parse_uint(tok, MAX_SIZE, &v) || v < 4) {
			free(copy);
			return -EINVAL;
		}
		sizes[n++] = v;
	}
	free(copy);
	return n;
}

/* Does test t run, given -P and -T? */
static int selected(const struct test *t, int want_nv, int want_tcp,
		    const char *only)
{
	int is_tcp = !strcmp(t->path, "tcp");
	size_t l = strlen(t->name);
	const char *p;

	/* U-Net is on the same device: part of -P netvm */
	if ((is_tcp && !want_tcp) || (!is_tcp && !want_nv))
		return 0;
	if (!only)
		return !t->explicit_only;
	for (p = strstr(only, t->name); p; p = strstr(p + 1, t->name))
		if ((p == only || p[-1] == ',') && (!p[l] || p[l] == ','))
			return 1;
	return 0;
}

static int client(const char *addr, int port, const char *paths,
		  unsigned int base, unsigned long bw_bytes,
		  const size_t *sizes, int nsizes, const char *only)
{
	int want_nv = strcmp(paths, "tcp") != 0;
	int want_tcp = strcmp(paths, "netvm") != 0;
	struct side s = { .seg = -1 };
	unsigned int node = 0;
	int nport = 0, err, failed = 0, want_unet = 0;
	uint32_t k = 1;
	char line[64];

	s.region = map_region();
	if (!s.region) {
		warnx("mmap: %s", strerror(errno));
		return 1;
	}
	for (size_t ti = 0; ti < NTESTS; ti++)
		want_unet |= !strcmp(tests[ti].path, "unet") &&
			     selected(&tests[ti], want_nv, want_tcp, only);
	if (want_nv) {
		err = nv_setup(&s, &node, &nport);
		if (err) {
			warnx("NetVM endpoint: %s", netvm_strerror(err));
			return 1;
		}
	}
	if (want_unet) {
		err = unet_setup(&s);
		if (err) {
			warnx("U-Net endpoint: %s", netvm_strerror(err));
			return 1;
		}
	}
	s.ctl = connect_to(addr, port);
	if (s.ctl < 0) {
		warnx("cannot reach the server at %s port %d: %s", addr, port,
		      strerror(-s.ctl));
		return 1;
	}
	s.data = connect_to(addr, port);
	if (s.data < 0) {
		warnx("data connection to %s: %s", addr, strerror(-s.data));
		return 1;
	}
	err = hello(&s, node, nport, want_nv, want_unet);
	if (err)
		return 1;
	printf("path,test,size,iters,min_us,median_us,p99_us,mean_us,mbps,verified\n");
	/*
	 * Sizes outside, tests inside: the NetVM and TCP figures of one size
	 * are taken minutes apart at most, so that a burst of load on a
	 * shared host skews both paths alike rather than one of them.
	 */
	for (int si = 0; si < nsizes; si++) {
		for (size_t ti = 0; ti < NTESTS; ti++) {
			const struct test *t = &tests[ti];

			if (!selected(t, want_nv, want_tcp, only) ||
			    (t->fixed_size && si) ||
			    (!strcmp(t->path, "unet") &&
			     sizes[si] > NETVM_UNET_MSG_MAX))
				continue;
			err = run_one(&s, t, t->fixed_size ?
				      (size_t)t->fixed_size : sizes[si],
				      base, bw_bytes, k++);
			if (err == -EPROTO)
				return 1;
			failed += err != 0;
		}
	}
	ctl_send(&s, "quit");
	if (ctl_recv(&s, line, sizeof(line)) || strcmp(line, "bye"))
		warnx("the server did not say bye");
	netvm_unet_close(s.u);
	if (s.nv)
		netvm_close(s.nv);
	if (failed)
		warnx("%d test(s) failed", failed);
	return failed ? 1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s server [-p PORT] [-t TIMEOUT_S]\n"
		"       %s client [-p PORT] [-P netvm|tcp|both] [-n ITERS] [-s SIZES]\n"
		"                   [-b BYTES] [-T TESTS] [-S MS] [-W] [-M US] [-x] ADDR\n"
		"  -p PORT     TCP port of the server (default %d)\n"
		"  -t S        server: give up if no client came within S s (default 300)\n"
		"  -P PATHS    netvm (with U-Net), tcp or both (default both)\n"
		"  -n ITERS    latency iterations up to 4 KiB, fewer above (default 1000)\n"
		"  -s SIZES    message sizes, comma-separated, 4..%u (U-Net: up to 4096)\n"
		"              (default 4,8,64,256,1024,4096,16384,65536,262144,1048576)\n"
		"  -b BYTES    bytes moved per bandwidth point (default 16777216)\n"
		"  -T TESTS    only these tests, comma-separated: write_lat notf_spin\n"
		"              notf_wait notf_handler\n"
		"              read_lat write_bw read_bw atomic_lat cswap_lat unet_lat\n"
		"              unet_bw tcp_lat tcp_bw; unet_stop (FUGU under a stopped\n"
		"              receiver, -n messages) runs only when named\n"
		"  -S MS       unet_stop: the receiver stops for MS ms, 0..%u (default %u)\n"
		"  -W          unet_stop: the receiver is watched (netvm_unet_sched): the\n"
		"              NI diverts while it is stopped (FUGU's \"not running\")\n"
		"  -M US       mark each latency iteration slower than US us in the\n"
		"              kernel trace (" TRACE_MARKER ")\n"
		"  -x          flip a byte of every message sent (checks that the\n"
		"              verification catches it: those rows fail)\n"
		"CSV on stdout: path,test,size,iters,min_us,median_us,p99_us,mean_us,mbps,verified\n",
		prog, prog, DEFAULT_PORT, MAX_SIZE, UNET_STOP_MAX, UNET_STOP_MS);
}

int main(int argc, char **argv)
{
	size_t sizes[MAX_SIZES] = { 4, 8, 64, 256, 1024, 4096, 16384, 65536,
				    262144, 1048576 };
	int nsizes = 10, port = DEFAULT_PORT, timeout_s = 300, opt;
	unsigned long v, base = 1000, bw_bytes = 16ul << 20;
	const char *paths = "both", *only = NULL, *mode;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	mode = argv[1];
	if (!strcmp(mode, "-h") || !strcmp(mode, "--help")) {
		usage(stdout);
		return 0;
	}
	optind = 2;
	while ((opt = getopt(argc, argv, "p:t:P:n:s:b:T:S:M:Wxh")) != -1) {
		switch (opt) {
		case 'p':
			if (netvm_parse_uint(optarg, 65535, &v) || !v)
				goto bad;
			port = (int)v;
			break;
		case 't':
			if (netvm_parse_uint(optarg, 86400, &v) || !v)
				goto bad;
			timeout_s = (int)v;
			break;
		case 'P':
			paths = optarg;
			if (strcmp(paths, "netvm") && strcmp(paths, "tcp") &&
			    strcmp(paths, "both"))
				goto bad;
			break;
		case 'n':
			if (netvm_parse_uint(optarg, 10000000, &v) || !v)
				goto bad;
			base = v;
			break;
		case 's':
			nsizes = parse_list(optarg, sizes, MAX_SIZES);
			if (nsizes <= 0)
				goto bad;
			break;
		case 'b':
			if (netvm_parse_uint(optarg, 1ul << 34, &v) || !v)
				goto bad;
			bw_bytes = v;
			break;
		case 'T':
			if (!tests_known(optarg))
				goto bad;
			only = optarg;
			break;
		case 'S':
			if (netvm_parse_uint(optarg, UNET_STOP_MAX, &v))
				goto bad;
			stop_ms = (unsigned int)v;
			break;
		case 'W':
			stop_watch = 1;
			break;
		case 'M':
			if (netvm_parse_uint(optarg, 60000000, &v) || !v)
				goto bad;
			mark_us = (unsigned int)v;
			break;
		case 'x':
			corrupt = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (!strcmp(mode, "server") && optind == argc)
		return server(port, timeout_s);
	if (mark_us && !strcmp(mode, "client") && optind + 1 == argc) {
		mark_fd = open(TRACE_MARKER, O_WRONLY | O_CLOEXEC);
		if (mark_fd < 0) {
			warnx("-M: %s: %s", TRACE_MARKER, strerror(errno));
			return 1;
		}
	}
	if (!strcmp(mode, "client") && optind + 1 == argc)
		return client(argv[optind], port, paths, (unsigned int)base,
			      bw_bytes, sizes, nsizes, only);
bad:
	usage(stderr);
	return 2;
}
