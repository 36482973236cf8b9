// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm-ep-test: NetVM user endpoints straight on the driver's ioctls and
 * mmap (no library yet), for the guest suite's netvm-user group.
 *
 *   netvm-ep-test serve SIZE
 *       Opens an endpoint, maps SIZE bytes (anonymous, zeroed) and exports
 *       them read-write, and 64 KiB read-only (pattern seed 99).  Writes
 *       "node N port P pt_rows R addr A key K roaddr A2 rokey K2" to
 *       /tmp/nvep.info, then serves one command per line written to the
 *       FIFO /tmp/nvep.ctl, answering on the FIFO /tmp/nvep.resp:
 *         fill OFF LEN SEED | check OFF LEN SEED | zero OFF LEN |
 *         dontneed OFF LEN | remap | vmstat | quit
 *   netvm-ep-test write NODE PORT ADDR KEY PT_ROWS LEN SEED
 *   netvm-ep-test read  NODE PORT ADDR KEY PT_ROWS LEN SEED
 *       Opens an endpoint, exports a local buffer of LEN bytes (before
 *       touching it, so its pages come in by page misses), and writes the
 *       pattern to (reads and checks it from) the remote range, one
 *       command per page-bounded fragment.  Prints "ok" or one
 *       "error status S tag T" line per failed command (exit 3).
 *   netvm-ep-test read-ro NODE PORT ADDR KEY PT_ROWS LEN SEED
 *       The same read into a buffer the process maps read-only: the NIC
 *       misses its pages, which netvm.ko cannot map for writing, and
 *       each command fails with BAD_ADDR (one "error status 7" line
 *       each, exit 3) instead of waiting for the endpoint's close.
 *   netvm-ep-test rekey
 *       NETVM_IOC_REKEY given what a hostile caller would: an unmapped
 *       request, an address with no export (or inside one, not its
 *       start), a name with no NUL, another process's call on the same
 *       file, an export removed; one "ok - ..." or "not ok - ..." line
 *       per check (exit 1 if any failed).
 *
 * Pattern byte i: netvm_ktest_pattern(seed, i) (include/netvm/netvm_uapi.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <netvm/netvm_fw.h>
#include <netvm/netvm_uapi.h>

#define DEV	"/dev/netvm0"
#define CTL	"/tmp/nvep.ctl"
#define RESP	"/tmp/nvep.resp"
#define INFO	"/tmp/nvep.info"
#define RO_SIZE	65536

struct ep {
	int fd;
	struct netvm_ep_info info;
	volatile uint8_t *sram;
	volatile uint32_t *db;
	volatile uint8_t *host;
	uint32_t issued;
};

static void die(const char *what)
{
	fprintf(stderr, "netvm-ep-test: %s: %s\n", what, strerror(errno));
	exit(2);
}

static uint8_t pat(uint32_t seed, uint64_t i)
{
	return netvm_ktest_pattern(seed, i);
}

static void ep_open(struct ep *e)
{
	memset(e, 0, sizeof(*e));
	e->fd = open(DEV, O_RDWR);
	if (e->fd < 0)
		die("open " DEV);
	if (ioctl(e->fd, NETVM_IOC_EP_OPEN, &e->info))
		die("NETVM_IOC_EP_OPEN");
	e->sram = mmap(NULL, e->info.sram_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, e->fd, NETVM_EP_MMAP_SRAM);
	e->db = mmap(NULL, e->info.db_size, PROT_WRITE, MAP_SHARED, e->fd,
		     NETVM_EP_MMAP_DB);
	e->host = mmap(NULL, e->info.host_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, e->fd, NETVM_EP_MMAP_HOST);
	if (e->sram == MAP_FAILED || e->db == MAP_FAILED ||
	    e->host == MAP_FAILED)
		die("mmap");
}

static uint64_t ep_export(struct ep *e, void *addr, uint64_t len, int ro,
			  const char *name)
{
	struct netvm_export_req r;

	memset(&r, 0, sizeof(r));
	r.addr = (uintptr_t)addr;
	r.len = len;
	r.flags = ro ? NETVM_EXPORT_RO : 0;
	snprintf(r.name, sizeof(r.name), "%s", name);
	if (ioctl(e->fd, NETVM_IOC_EXPORT, &r))
		die("NETVM_IOC_EXPORT");
	return r.key;
}

static volatile struct nvm_shadow *shadow(struct ep *e)
{
	return (volatile struct nvm_shadow *)(e->host + e->info.shadow_off);
}

static uint32_t status_consumed(struct ep *e)
{
	return *(volatile uint32_t *)(e->sram + NVM_EP_STATUS +
				      offsetof(struct nvm_ep_status, consumed));
}

/* Command n into slot n % 64, seq last, then the doorbell. */
static void ep_post(struct ep *e, struct nvm_cmd *c)
{
	volatile uint8_t *slot;
	time_t t0 = time(NULL);

	while (e->issued - status_consumed(e) >= NVM_CMDQ_LEN) {
		if (time(NULL) - t0 > 30) {
			fprintf(stderr, "netvm-ep-test: command queue stuck\n");
			exit(4);
		}
		usleep(50);
	}
	slot = e->sram + NVM_EP_CMDQ + (e->issued % NVM_CMDQ_LEN) * NVM_CMD_SIZE;
	c->seq = e->issued + 1;
	for (size_t i = 0; i < offsetof(struct nvm_cmd, seq); i += 4)
		*(volatile uint32_t *)(slot + i) = *(uint32_t *)((uint8_t *)c + i);
	__sync_synchronize();
	*(volatile uint32_t *)(slot + offsetof(struct nvm_cmd, seq)) = c->seq;
	e->issued++;
	__sync_synchronize();
	*e->db = e->issued;
}

/* Wait for every command; print the errors.  Returns the error count. */
static int ep_finish(struct ep *e, uint32_t errors_before)
{
	volatile struct nvm_shadow *s = shadow(e);
	time_t t0 = time(NULL);
	uint32_t n, i;

	while (s->done != e->issued) {
		if (time(NULL) - t0 > 60) {
			fprintf(stderr, "netvm-ep-test: timed out: done %u of %u\n",
				s->done, e->issued);
			exit(4);
		}
		usleep(100);
	}
	__sync_synchronize();
	n = s->errors - errors_before;
	for (i = errors_before; i < s->errors; i++) {
		volatile struct nvm_err_rec *r = (volatile struct nvm_err_rec *)
			(e->host + e->info.err_off +
			 (i % e->info.err_len) * sizeof(struct nvm_err_rec));

		printf("error status %u tag %u op %u\n", r->status, r->tag, r->op);
	}
	return (int)n;
}

static uint32_t page_left(uint64_t a)
{
	return NVM_PAGE_SIZE - (uint32_t)(a & (NVM_PAGE_SIZE - 1));
}

/* is_write: 1 write, 0 read, -1 read into a read-only mapping */
static int xfer(int argc, char **argv, int is_write)
{
	uint16_t node, port;
	uint64_t addr, key, lkey, len, done = 0;
	uint32_t rows, seed, tag = 0, errs0;
	struct ep e;
	uint8_t *buf;
	int errs;

	if (argc != 9) {
		fprintf(stderr, "usage: netvm-ep-test write|read NODE PORT ADDR KEY PT_ROWS LEN SEED\n");
		return 2;
	}
	node = (uint16_t)strtoul(argv[2], NULL, 0);
	port = (uint16_t)strtoul(argv[3], NULL, 0);
	addr = strtoull(argv[4], NULL, 0);
	key = strtoull(argv[5], NULL, 0);
	rows = (uint32_t)strtoul(argv[6], NULL, 0);
	len = strtoull(argv[7], NULL, 0);
	seed = (uint32_t)strtoul(argv[8], NULL, 0);
	ep_open(&e);
	buf = mmap(NULL, len + NVM_PAGE_SIZE,
		   is_write < 0 ? PROT_READ : PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap buffer");
	/* exported before it is touched: its pages come in by page misses */
	lkey = ep_export(&e, buf, len + NVM_PAGE_SIZE, 0, "src");
	if (is_write > 0)
		for (uint64_t i = 0; i < len; i++)
			buf[i] = pat(seed, i);
	errs0 = shadow(&e)->errors;
	while (done < len) {
		struct nvm_cmd c;
		uint64_t n = len - done;

		if (n > page_left((uintptr_t)buf + done))
			n = page_left((uintptr_t)buf + done);
		if (n > page_left(addr + done))
			n = page_left(addr + done);
		memset(&c, 0, sizeof(c));
		c.op = is_write > 0 ? NVM_OP_WRITE : NVM_OP_READ;
		c.dst_node = node;
		c.dst_port = port;
		c.len = (uint32_t)n;
		c.dst_va = addr + done;
		c.dst_key = key;
		c.dst_hash = nvm_pt_hash(port, (addr + done) >> NVM_PAGE_SHIFT,
					 rows);
		c.nfrag = 1;
		c.src[0].va = (uintptr_t)buf + done;
		c.src[0].len = (uint32_t)n;
		c.src[0].key = lkey;
		c.src[0].hash = nvm_pt_hash(e.info.port,
					    ((uintptr_t)buf + done) >> NVM_PAGE_SHIFT,
					    e.info.pt_rows);
		c.tag = tag++;
		done += n;
		if (done == len)
			c.flags |= NVM_CF_SHADOW;
		ep_post(&e, &c);
	}
	errs = ep_finish(&e, errs0);
	if (errs)
		return 3;
	if (!is_write) {
		for (uint64_t i = 0; i < len; i++) {
			if (buf[i] != pat(seed, i)) {
				printf("bad at %" PRIu64 ": got %u want %u\n", i,
				       buf[i], pat(seed, i));
				return 1;
			}
		}
	}
	printf("ok %u commands\n", tag);
	return 0;
}

static void respond(const char *msg)
{
	FILE *f = fopen(RESP, "w");

	if (!f)
		die("open " RESP);
	fputs(msg, f);
	fclose(f);
}

static long vmstat(const char *name)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name)))
			v = strtol(line + strlen(name), NULL, 10);
	fclose(f);
	return v;
}

static int serve(int argc, char **argv)
{
	uint64_t size, key, rokey;
	uint8_t *buf, *ro;
	struct ep e;
	FILE *f;
	char line[256], msg[256];

	if (argc != 3) {
		fprintf(stderr, "usage: netvm-ep-test serve SIZE\n");
		return 2;
	}
	size = strtoull(argv[2], NULL, 0);
	ep_open(&e);
	buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, RO_SIZE, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || ro == MAP_FAILED)
		die("mmap");
	memset(buf, 0, size);
	for (uint32_t i = 0; i < RO_SIZE; i++)
		ro[i] = pat(99, i);
	key = ep_export(&e, buf, size, 0, "rw");
	rokey = ep_export(&e, ro, RO_SIZE, 1, "ro");
	unlink(CTL);
	unlink(RESP);
	if (mkfifo(CTL, 0600) || mkfifo(RESP, 0600))
		die("mkfifo");
	f = fopen(INFO ".tmp", "w");
	if (!f)
		die("open " INFO);
	fprintf(f, "node %u port %u pt_rows %u addr %#" PRIx64 " key %#" PRIx64
		" roaddr %#" PRIx64 " rokey %#" PRIx64 "\n", e.info.node_id,
		e.info.port, e.info.pt_rows, (uint64_t)(uintptr_t)buf, key,
		(uint64_t)(uintptr_t)ro, rokey);
	fclose(f);
	rename(INFO ".tmp", INFO);

	for (;;) {
		uint64_t off = 0, len = 0, seed = 0;
		char cmd[32];
		FILE *c = fopen(CTL, "r");

		if (!c)
			die("open " CTL);
		if (!fgets(line, sizeof(line), c)) {
			fclose(c);
			continue;
		}
		fclose(c);
		cmd[0] = 0;
		sscanf(line, "%31s %" SCNu64 " %" SCNu64 " %" SCNu64, cmd, &off,
		       &len, &seed);
		if (strcmp(cmd, "quit") == 0) {
			respond("bye\n");
			break;
		} else if (strcmp(cmd, "vmstat") == 0) {
			snprintf(msg, sizeof(msg), "Mlocked %ld\n",
				 vmstat("Mlocked:"));
		} else if (strcmp(cmd, "remap") == 0) {
			if (munmap(buf, size) ||
			    mmap(buf, size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
			    buf)
				die("remap");
			snprintf(msg, sizeof(msg), "ok\n");
		} else if (off + len > size) {
			snprintf(msg, sizeof(msg), "range\n");
		} else if (strcmp(cmd, "fill") == 0) {
			for (uint64_t i = 0; i < len; i++)
				buf[off + i] = pat((uint32_t)seed, i);
			snprintf(msg, sizeof(msg), "ok\n");
		} else if (strcmp(cmd, "zero") == 0) {
			memset(buf + off, 0, len);
			snprintf(msg, sizeof(msg), "ok\n");
		} else if (strcmp(cmd, "dontneed") == 0) {
			snprintf(msg, sizeof(msg), "%s\n",
				 madvise(buf + off, len, MADV_DONTNEED) ? "fail" :
				 "ok");
		} else if (strcmp(cmd, "check") == 0) {
			uint64_t i, zero = 1;

			for (i = 0; i < len; i++)
				if (buf[off + i] != pat((uint32_t)seed, i))
					break;
			if (seed == 0)	/* "check OFF LEN 0": all zero */
				for (i = 0; i < len && zero; i++)
					zero = buf[off + i] == 0;
			if (seed == 0)
				snprintf(msg, sizeof(msg), "%s\n",
					 zero ? "ok" : "not zero");
			else if (i == len)
				snprintf(msg, sizeof(msg), "ok\n");
			else
				snprintf(msg, sizeof(msg),
					 "bad at %" PRIu64 ": got %u want %u\n",
					 i, buf[off + i], pat((uint32_t)seed, i));
		} else {
			snprintf(msg, sizeof(msg), "unknown\n");
		}
		respond(msg);
	}
	unlink(CTL);
	unlink(RESP);
	unlink(INFO);
	return 0;
}

static int failed;

static void check(int ok, const char *what)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	failed |= !ok;
}

/* NETVM_IOC_REKEY of @addr with @name (any bytes): 0 or -errno. */
static int rekey(struct ep *e, uint64_t addr, const char *name, size_t n,
		 uint64_t *key)
{
	struct netvm_rekey_req r;

	memset(&r, 0, sizeof(r));
	r.addr = addr;
	memcpy(r.name, name, n < sizeof(r.name) ? n : sizeof(r.name));
	if (ioctl(e->fd, NETVM_IOC_REKEY, &r))
		return -errno;
	*key = r.key;
	return 0;
}

static int rekey_hostile(void)
{
	static char buf[4 * 4096] __attribute__((aligned(4096)));
	char full[NETVM_EXPORT_NAME_LEN];
	struct netvm_unexport_req u = { 0 };
	uint64_t key, k1 = 0, k2 = 0;
	struct ep e;
	pid_t pid;
	int st;

	ep_open(&e);
	key = ep_export(&e, buf, sizeof(buf), 0, "rk");
	memset(full, 'x', sizeof(full));
	check(ioctl(e.fd, NETVM_IOC_REKEY, (void *)8) == -1 && errno == EFAULT,
	      "REKEY with its request at an unmapped address: EFAULT");
	check(rekey(&e, (uintptr_t)buf + 4096, "a", 1, &k1) == -ENOENT,
	      "REKEY of an address inside an export, not where it was made: ENOENT");
	check(rekey(&e, 0x1000, "a", 1, &k1) == -ENOENT,
	      "REKEY of an address with no export: ENOENT");
	check(rekey(&e, (uintptr_t)buf, full, sizeof(full), &k1) == 0 && k1 &&
	      k1 != key, "REKEY with a name of 32 bytes and no NUL: done, a new key");
	check(rekey(&e, (uintptr_t)buf, "rk2", 3, &k2) == 0 && k2 && k2 != k1 &&
	      k2 != key, "REKEY again: another new key");
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(rekey(&e, (uintptr_t)buf, "c", 1, &k1) == -EACCES ? 0 : 1);
	check(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0,
	      "REKEY from a forked child on the same file: EACCES");
	u.addr = (uintptr_t)buf;
	check(ioctl(e.fd, NETVM_IOC_UNEXPORT, &u) == 0 &&
	      rekey(&e, (uintptr_t)buf, "a", 1, &k1) == -ENOENT,
	      "REKEY of an export removed: ENOENT");
	return failed;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "serve") == 0)
		return serve(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "write") == 0)
		return xfer(argc, argv, 1);
	if (argc >= 2 && strcmp(argv[1], "read") == 0)
		return xfer(argc, argv, 0);
	if (argc >= 2 && strcmp(argv[1], "read-ro") == 0)
		return xfer(argc, argv, -1);
	if (argc == 2 && strcmp(argv[1], "rekey") == 0)
		return rekey_hostile();
	fprintf(stderr, "usage: netvm-ep-test serve SIZE | write|read|read-ro NODE PORT ADDR KEY PT_ROWS LEN SEED | rekey\n");
	return 2;
}
