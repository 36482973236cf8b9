// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm-unmap-test: the driver's page-table invalidation waits for the NIC
 * (NetVM's unmapPPN), for the guest group netvm-unmap.
 *
 *   netvm-unmap-test serve
 *       Registers, exports "target" (3 pages, zeroed), writes "node N port
 *       P" to /tmp/nvunmap.info, waits for the client's notification 1,
 *       then checks the bytes the client wrote into pages 0 and 1.
 *   netvm-unmap-test client NODE PORT
 *       Exports its source buffer, arms the NIC's lock hold for its own
 *       endpoint (debugfs lock_hold: the NI keeps its lock on the next page
 *       it locks for us), writes page 0 of the source into the server's
 *       page 0: the NI now holds the source page, as if still reading it.
 *       A thread gives the page up (MADV_DONTNEED); the invalidation must
 *       wait for the NI (the endpoint's unmap_waits grows while the thread
 *       is still in the kernel) until the hold is released.  Then a new
 *       page at the same address goes to the server's page 1.  Then the
 *       same hold on a write of that page into the server's page 2, and
 *       a thread gives "src" a new key (netvm_rekey): it must wait for the
 *       NI too (rekey_waits grows) until the hold is released, since the
 *       held access may have checked the old key.
 *
 * One "ok - ..." or "not ok - ..." line per check; exit 1 if any failed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest_tap.h"
#include "netvm.h"

#define INFO		"/tmp/nvunmap.info"
#define DBG		"/sys/kernel/debug/netvm/netvm0"
#define EPS		"/sys/class/netvm/netvm0/endpoints"
#define PAGE		4096
#define TARGET_SIZE	(3 * PAGE)
#define DONE_NOTF	1
#define WAIT_MS		60000

/* Bytes that do not repeat, different for each seed. */
static uint8_t pat(uint32_t seed, uint32_t i)
{
	return tap_pattern(seed, i);
}

static void die(const char *what, int err)
{
	printf("not ok - %s: %s\n", what, netvm_strerror(err));
	exit(1);
}

static uint8_t *buffer(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap", -errno);
	memset(p, 0, len);
	return p;
}

static int serve(void)
{
	uint8_t *t = buffer(TARGET_SIZE);
	struct netvm_info info;
	struct netvm *nv;
	char line[64];
	int port, err, r, bad[2] = { 0, 0 };

	err = netvm_open(0, &nv);
	if (!err)
		err = netvm_info(nv, &info);
	if (err)
		die("open", err);
	port = netvm_register(nv, NETVM_PORT_ANY, 0);
	if (port < 0)
		die("register", port);
	err = netvm_export(nv, "target", t, TARGET_SIZE, 0, NULL);
	if (err < 0)
		die("export", err);
	snprintf(line, sizeof(line), "node %u port %d\n", info.node_id, port);
	write_file(INFO, line);
	r = netvm_notf_wait(nv, DONE_NOTF, 4 * WAIT_MS);
	check(r == 1, "the client's done (%d)", r);
	for (int i = 0; i < PAGE; i++) {
		bad[0] += t[i] != pat(1, i);
		bad[1] += t[PAGE + i] != pat(2, i);
	}
	check(bad[0] == 0, "page 0: the write from the held page, byte-verified (%d bad)",
	      bad[0]);
	check(bad[1] == 0, "page 1: the write from the new page at that address, byte-verified (%d bad)",
	      bad[1]);
	netvm_close(nv);
	return failures ? 1 : 0;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return -errno;
	if (fputs(text, f) < 0)
		err = -EIO;
	if (fclose(f))
		err = -errno;
	return err;
}

/* The "lock" of (port, va) in debugfs pt; -1 if it has no translation. */
static int pt_lock(int port, unsigned long va)
{
	FILE *f = fopen(DBG "/pt", "r");
	char line[256];
	int lock = -1;

	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f)) {
		unsigned int p, ppn, row, flags, hd, nd, l;
		unsigned long v;
		int way;

		if (sscanf(line, "port %u va %lx ppn %x row %u way %d flags %x hdirty %u ndirty %u lock %u",
			   &p, &v, &ppn, &row, &way, &flags, &hd, &nd, &l) == 9 &&
		    (int)p == port && v == va)
			lock = (int)l;
	}
	fclose(f);
	return lock;
}

/* One of the endpoint's counters in sysfs, or -1. */
static long ep_counter(int port, const char *name)
{
	char path[96], key[64];
	long v, got = -1;
	FILE *f;

	snprintf(path, sizeof(path), EPS "/%d/counters", port);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &v) == 2)
		if (!strcmp(key, name))
			got = v;
	fclose(f);
	return got;
}

struct giver {
	uint8_t *page;
	int err;
	int done;
};

static void *give_up(void *arg)
{
	struct giver *g = arg;

	g->err = madvise(g->page, PAGE, MADV_DONTNEED) ? -errno : 0;
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct rekeyer {
	struct netvm *nv;
	int handle;
	int err;
	int done;
};

static void *rekey(void *arg)
{
	struct rekeyer *r = arg;

	r->err = netvm_rekey(r->nv, r->handle, "src2", NULL);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A rekey of "src" while the NI holds one of its pages waits for it. */
static void rekey_waits(struct netvm *nv, int handle, int port, int seg,
			uint8_t *src)
{
	struct rekeyer r = { .nv = nv, .handle = handle };
	long w0, w1, t0, t1;
	char text[32];
	pthread_t th;
	int err, early;

	snprintf(text, sizeof(text), "%d\n", port);
	err = write_text(DBG "/lock_hold", text);
	if (!err)
		err = netvm_writeF(nv, seg, 2 * PAGE + 1024, src, 1024);
	check(!err && pt_lock(port, (unsigned long)src) == 1,
	      "the NI holds the source page of a write into page 2 (%s)",
	      netvm_strerror(err));
	w0 = ep_counter(port, "rekey_waits");
	t0 = ep_counter(port, "rekey_timeouts");
	err = -pthread_create(&th, NULL, rekey, &r);
	if (err)
		die("pthread_create", err);
	for (int i = 0; i < WAIT_MS; i++) {
		if (__atomic_load_n(&r.done, __ATOMIC_ACQUIRE) ||
		    ep_counter(port, "rekey_waits") > w0)
			break;
		usleep(1000);
	}
	early = __atomic_load_n(&r.done, __ATOMIC_ACQUIRE);
	err = write_text(DBG "/lock_hold", "release\n");
	check(!err, "the hold released (%s)", netvm_strerror(err));
	pthread_join(th, NULL);
	w1 = ep_counter(port, "rekey_waits");
	t1 = ep_counter(port, "rekey_timeouts");
	check(!r.err && w0 >= 0 && w1 > w0 && (!early || t1 > t0),
	      "netvm_rekey of the held page's export waited for the NI: %ld rekey waits, returned %s the release (%ld timeouts; %s)",
	      w1 - w0, early ? "before" : "after", t1 - t0,
	      netvm_strerror(r.err));
}

static int client(unsigned int node, unsigned int sport)
{
	uint8_t *src = buffer(2 * PAGE);
	struct giver g = { .page = src };
	long w0, t0, w1, t1, waits;
	int port, seg, err, lock, early, handle;
	struct netvm *nv;
	pthread_t th;
	char text[32];

	for (int i = 0; i < PAGE; i++)
		src[i] = pat(1, i);
	err = netvm_open(0, &nv);
	if (err)
		die("open", err);
	port = netvm_register(nv, NETVM_PORT_ANY, 0);
	if (port < 0)
		die("register", port);
	handle = netvm_export(nv, "src", src, 2 * PAGE, 0, NULL);
	if (handle < 0)
		die("export", handle);
	seg = netvm_import_wait(nv, node, sport, "target", WAIT_MS);
	if (seg < 0)
		die("import", seg);

	snprintf(text, sizeof(text), "%d\n", port);
	err = write_text(DBG "/lock_hold", text);
	check(!err, "the NI's lock hold armed for port %d (%s)", port,
	      netvm_strerror(err));
	err = netvm_writeF(nv, seg, 0, src, PAGE);
	check(!err, "page 0 written to the server (%s)", netvm_strerror(err));
	lock = pt_lock(port, (unsigned long)src);
	check(lock == 1, "the NI still holds the source page: debugfs pt lock %d", lock);

	w0 = ep_counter(port, "unmap_waits");
	t0 = ep_counter(port, "unmap_timeouts");
	err = -pthread_create(&th, NULL, give_up, &g);
	if (err)
		die("pthread_create", err);
	/* until the invalidation is seen waiting, or it ended without */
	for (int i = 0; i < WAIT_MS; i++) {
		if (__atomic_load_n(&g.done, __ATOMIC_ACQUIRE) ||
		    ep_counter(port, "unmap_waits") > w0)
			break;
		usleep(1000);
	}
	early = __atomic_load_n(&g.done, __ATOMIC_ACQUIRE);
	err = write_text(DBG "/lock_hold", "release\n");
	check(!err, "the hold released (%s)", netvm_strerror(err));
	pthread_join(th, NULL);
	w1 = ep_counter(port, "unmap_waits");
	t1 = ep_counter(port, "unmap_timeouts");
	waits = w1 - w0;
	/* returned before the release only through the driver's own give-up */
	check(!g.err && w0 >= 0 && waits > 0 && (!early || t1 > t0),
	      "MADV_DONTNEED of the held page waited for the NI: %ld unmap waits, returned %s the release (%ld timeouts; %s)",
	      waits, early ? "before" : "after", t1 - t0, netvm_strerror(g.err));
	lock = pt_lock(port, (unsigned long)src);
	check(lock == -1, "the translation is gone once it returned (%d)", lock);

	/* a new page at the same address: missed, mapped, sent */
	for (int i = 0; i < PAGE; i++)
		src[i] = pat(2, i);
	err = netvm_writeF(nv, seg, PAGE, src, PAGE);
	check(!err, "page 1 written from the new page (%s)", netvm_strerror(err));
	rekey_waits(nv, handle, port, seg, src);
	err = netvm_writeFN(nv, seg, 2 * PAGE, src, 8, DONE_NOTF);
	check(!err, "done sent (%s)", netvm_strerror(err));
	netvm_close(nv);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "serve"))
		return serve();
	if (argc == 4 && !strcmp(argv[1], "client"))
		return client((unsigned int)atoi(argv[2]),
			      (unsigned int)atoi(argv[3]));
	fprintf(stderr, "usage: netvm-unmap-test serve | client NODE PORT\n");
	return 2;
}
