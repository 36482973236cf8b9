// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * libnetvm: NetVM endpoints -- register, exports, imports, data transfer,
 * atomics and notifications, on the driver's endpoint ioctls and mmaps
 * (docs/driver.md) and the firmware's command queue (docs/firmware.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "netvm_frag.h"
#include "netvm_priv.h"

#define NVL_WAIT_NS		(30ull * 1000000000ull)
/* a synchronous call spins this long before it sleeps (await_word) */
#define NVL_SPIN_NS		(200ull * 1000ull)
#define NVL_NOTF_LEN_MAX	256
#define NVL_INFLIGHT		32	/* commands issued and not done */
#define NVL_SHADOW_EVERY	8	/* NVM_CF_SHADOW on every 8th command */

static volatile struct nvm_shadow *shadow(struct netvm *nv)
{
	return (volatile struct nvm_shadow *)(nv->host + nv->ep.shadow_off);
}

/* ---- register ---- */

void nvl_ep_close(struct netvm *nv)
{
	if (nv->efd < 0)
		return;
	/* the handler thread reads the mappings: it goes first */
	nvl_notf_stop(nv);
	if (nv->sram)
		munmap((void *)nv->sram, nv->ep.sram_size);
	if (nv->db)
		munmap((void *)nv->db, nv->ep.db_size);
	if (nv->host)
		munmap((void *)nv->host, nv->ep.host_size);
	close(nv->efd);
	nv->efd = -1;
	nv->sram = NULL;
	nv->db = NULL;
	nv->host = NULL;
	memset(nv->exp, 0, sizeof(nv->exp));
	memset(nv->imp, 0, sizeof(nv->imp));
	nv->stash_count = 0;
}

NETVM_PUBLIC int netvm_register(struct netvm *nv, int port,
				unsigned int notf_len)
{
	void *p;
	int err, fd;
	uint32_t i;

	if (!nv)
		return -EINVAL;
	if (port != NETVM_PORT_ANY)
		return -EOPNOTSUPP;
	if (notf_len > NVL_NOTF_LEN_MAX)
		return -EINVAL;
	if (nv->efd >= 0)
		return -EBUSY;
	fd = open(nv->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	nv->efd = fd;
	if (ioctl(fd, NETVM_IOC_EP_OPEN, &nv->ep) < 0) {
		err = -errno;
		goto fail;
	}
	p = mmap(NULL, nv->ep.sram_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 NETVM_EP_MMAP_SRAM);
	if (p == MAP_FAILED)
		goto fail_errno;
	nv->sram = p;
	p = mmap(NULL, nv->ep.db_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 NETVM_EP_MMAP_DB);
	if (p == MAP_FAILED)
		goto fail_errno;
	nv->db = p;
	p = mmap(NULL, nv->ep.host_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 NETVM_EP_MMAP_HOST);
	if (p == MAP_FAILED)
		goto fail_errno;
	nv->host = p;
	nv->issued = 0;
	nv->errs_seen = nvl_ld32(&shadow(nv)->errors);
	nv->notf_cons = nvl_ld32(nv->host + nv->ep.notf_cons_off);
	nv->stash_head = 0;
	nv->stash_count = 0;
	/* nothing interrupts until someone can be woken (nvl_arm_hold) */
	for (i = 0; i < NVM_NOTF_COUNTING; i += 4)
		*nvl_sram32(nv, NVM_EP_ARM + i) = 0;
	nv->sleepers = 0;
	nv->arm_holders = 0;
	nv->arm_forever = 0;
	__sync_synchronize();
	return (int)nv->ep.port;

fail_errno:
	err = -errno;
fail:
	nvl_ep_close(nv);
	return err;
}

NETVM_PUBLIC int netvm_unregister(struct netvm *nv)
{
	if (!nv || nv->efd < 0)
		return -ENXIO;
	if (nvl_notf_stop(nv) == -EDEADLK)
		return -EDEADLK;
	nvl_ep_close(nv);
	return 0;
}

NETVM_PUBLIC int netvm_ep_fd(const struct netvm *nv)
{
	if (!nv || nv->efd < 0)
		return -ENXIO;
	/* the caller may poll it or take SIGIO: every notification must
	 * interrupt from now on.  The handle is the library's own (from
	 * netvm_open), const only in the API. */
	nvl_arm_forever((struct netvm *)nv);
	return nv->efd;
}

/* ---- exports ---- */

static int name_ok(const char *name)
{
	size_t n;

	if (!name)
		return -EINVAL;
	n = strlen(name);
	if (!n)
		return -EINVAL;
	return n < NETVM_NAME_MAX ? 0 : -ENAMETOOLONG;
}

NETVM_PUBLIC int netvm_export(struct netvm *nv, const char *name, void *addr,
			      size_t size, unsigned int flags, uint64_t *key)
{
	struct netvm_export_req r;
	int i, slot = -1, err;

	if (!nv)
		return -EINVAL;
	if (nv->efd < 0)
		return -ENXIO;
	err = name_ok(name);
	if (err)
		return err;
	if (!addr || !size || (flags & ~NETVM_EXPORT_RO))
		return -EINVAL;
	for (i = 0; i < NVL_MAX_EXPORTS; i++) {
		if (nv->exp[i].used && !strcmp(nv->exp[i].name, name))
			return -EEXIST;
		if (!nv->exp[i].used && slot < 0)
			slot = i;
	}
	if (slot < 0)
		return -ENOSPC;
	memset(&r, 0, sizeof(r));
	r.addr = (uintptr_t)addr;
	r.len = size;
	r.flags = flags;
	snprintf(r.name, sizeof(r.name), "%s", name);
	if (ioctl(nv->efd, NETVM_IOC_EXPORT, &r) < 0)
		return -errno;
	nv->exp[slot].used = 1;
	nv->exp[slot].addr = r.addr;
	nv->exp[slot].len = r.len;
	nv->exp[slot].key = r.key;
	nv->exp[slot].flags = flags;
	snprintf(nv->exp[slot].name, sizeof(nv->exp[slot].name), "%s", name);
	if (key)
		*key = r.key;
	return slot;
}

NETVM_PUBLIC int netvm_unexport(struct netvm *nv, int h)
{
	struct netvm_unexport_req r;

	if (!nv)
		return -EINVAL;
	if (nv->efd < 0)
		return -ENXIO;
	if (h < 0 || h >= NVL_MAX_EXPORTS || !nv->exp[h].used)
		return -EBADF;
	memset(&r, 0, sizeof(r));
	r.addr = nv->exp[h].addr;
	nv->exp[h].used = 0;
	if (ioctl(nv->efd, NETVM_IOC_UNEXPORT, &r) < 0)
		return -errno;
	return 0;
}

NETVM_PUBLIC int netvm_rekey(struct netvm *nv, int h, const char *new_name,
			     uint64_t *key)
{
	struct netvm_rekey_req r;
	int i, err;

	if (!nv)
		return -EINVAL;
	if (nv->efd < 0)
		return -ENXIO;
	err = name_ok(new_name);
	if (err)
		return err;
	if (h < 0 || h >= NVL_MAX_EXPORTS || !nv->exp[h].used)
		return -EBADF;
	for (i = 0; i < NVL_MAX_EXPORTS; i++)
		if (i != h && nv->exp[i].used &&
		    !strcmp(nv->exp[i].name, new_name))
			return -EEXIST;
	memset(&r, 0, sizeof(r));
	r.addr = nv->exp[h].addr;
	snprintf(r.name, sizeof(r.name), "%s", new_name);
	if (ioctl(nv->efd, NETVM_IOC_REKEY, &r) < 0)
		return -errno;
	nv->exp[h].key = r.key;
	snprintf(nv->exp[h].name, sizeof(nv->exp[h].name), "%s", new_name);
	if (key)
		*key = r.key;
	return 0;
}

NETVM_PUBLIC int netvm_export_lookup(struct netvm *nv, const char *name,
				     uint64_t *key)
{
	int i, err;

	if (!nv)
		return -EINVAL;
	err = name_ok(name);
	if (err)
		return err;
	for (i = 0; i < NVL_MAX_EXPORTS; i++) {
		if (nv->exp[i].used && !strcmp(nv->exp[i].name, name)) {
			if (key)
				*key = nv->exp[i].key;
			return i;
		}
	}
	return -ENOENT;
}

NETVM_PUBLIC int netvm_export_info(struct netvm *nv, int h,
				   struct netvm_segment *out)
{
	struct nvl_export *e;

	if (!nv || !out)
		return -EINVAL;
	if (nv->efd < 0)
		return -ENXIO;
	if (h < 0 || h >= NVL_MAX_EXPORTS || !nv->exp[h].used)
		return -EBADF;
	e = &nv->exp[h];
	memset(out, 0, sizeof(*out));
	out->node = nv->ep.node_id;
	out->port = nv->ep.port;
	out->addr = e->addr;
	out->len = e->len;
	out->key = e->key;
	out->flags = e->flags;
	out->pt_rows = nv->ep.pt_rows;
	return 0;
}

/* The export holding all of [a, a + n), or NULL. */
static struct nvl_export *find_local(struct netvm *nv, uint64_t a, uint64_t n)
{
	int i;

	for (i = 0; i < NVL_MAX_EXPORTS; i++) {
		struct nvl_export *e = &nv->exp[i];

		if (e->used && a >= e->addr && a + n <= e->addr + e->len &&
		    a + n >= a)
			return e;
	}
	return NULL;
}

/* ---- imports ---- */

/* A free import slot, or -ENOSPC. */
static int import_slot(struct netvm *nv)
{
	for (int i = 0; i < NVL_MAX_IMPORTS; i++)
		if (!nv->imp[i].used)
			return i;
	return -ENOSPC;
}

/* Take slot for the segment d describes, findable by name. */
static int import_store(struct netvm *nv, int slot,
			const struct netvm_segment *d, const char *name)
{
	struct nvl_import *m = &nv->imp[slot];

	m->used = 1;
	m->node = d->node;
	m->port = d->port;
	m->addr = d->addr;
	m->len = d->len;
	m->key = d->key;
	m->pt_rows = d->pt_rows;
	m->flags = d->flags;
	snprintf(m->name, sizeof(m->name), "%s", name);
	return slot;
}

NETVM_PUBLIC int netvm_import(struct netvm *nv, unsigned int node,
			      unsigned int port, const char *name)
{
	struct netvm_import_req r;
	int slot, err;

	if (!nv)
		return -EINVAL;
	err = name_ok(name);
	if (err)
		return err;
	if (node > 0xffff || port > 0xffff)
		return -EINVAL;
	slot = import_slot(nv);
	if (slot < 0)
		return slot;
	memset(&r, 0, sizeof(r));
	r.node = node;
	r.port = port;
	snprintf(r.name, sizeof(r.name), "%s", name);
	if (ioctl(nv->fd, NETVM_IOC_IMPORT, &r) < 0)
		return -errno;
	return import_store(nv, slot, &(struct netvm_segment){
		.node = node, .port = port, .addr = r.addr, .len = r.len,
		.key = r.key, .flags = r.flags, .pt_rows = r.pt_rows,
	}, name);
}

/*
 * Everything here comes from a peer: the values are only checked to be
 * usable (a hash needs rows, a range must not wrap).  Whether they name
 * a real export is the exporter's NIC's business: it checks every page's
 * key, so a wrong description costs its transfers -EKEYREJECTED or
 * -EFAULT, like a stale import.
 */
NETVM_PUBLIC int netvm_import_segment(struct netvm *nv,
				      const struct netvm_segment *s,
				      const char *name)
{
	struct netvm_segment d;
	int slot, err;

	if (!nv || !s)
		return -EINVAL;
	err = name_ok(name);
	if (err)
		return err;
	memcpy(&d, s, sizeof(d));	/* one read of each field */
	if (d.node > 0xffff || d.port > 0xffff || !d.pt_rows || !d.len ||
	    d.len > NETVM_EXPORT_MAX || d.addr + d.len < d.addr ||
	    (d.flags & ~NETVM_EXPORT_RO))
		return -EINVAL;
	slot = import_slot(nv);
	if (slot < 0)
		return slot;
	return import_store(nv, slot, &d, name);
}

static struct nvl_import *seg_get(struct netvm *nv, int seg)
{
	if (seg < 0 || seg >= NVL_MAX_IMPORTS || !nv->imp[seg].used)
		return NULL;
	return &nv->imp[seg];
}

NETVM_PUBLIC int netvm_unimport(struct netvm *nv, int seg)
{
	if (!nv)
		return -EINVAL;
	if (!seg_get(nv, seg))
		return -EBADF;
	nv->imp[seg].used = 0;
	return 0;
}

NETVM_PUBLIC int netvm_import_lookup(struct netvm *nv, unsigned int node,
				     unsigned int port, const char *name)
{
	int i, err;

	if (!nv)
		return -EINVAL;
	err = name_ok(name);
	if (err)
		return err;
	for (i = 0; i < NVL_MAX_IMPORTS; i++) {
		struct nvl_import *m = &nv->imp[i];

		if (m->used && m->node == node && m->port == port &&
		    !strcmp(m->name, name))
			return i;
	}
	return -ENOENT;
}

NETVM_PUBLIC int netvm_import_info(struct netvm *nv, int seg,
				   struct netvm_segment *out)
{
	struct nvl_import *m;

	if (!nv || !out)
		return -EINVAL;
	m = seg_get(nv, seg);
	if (!m)
		return -EBADF;
	memset(out, 0, sizeof(*out));
	out->node = m->node;
	out->port = m->port;
	out->addr = m->addr;
	out->len = m->len;
	out->key = m->key;
	out->flags = m->flags;
	out->pt_rows = m->pt_rows;
	return 0;
}

/* ---- the command queue ---- */

static int status_errno(uint8_t st)
{
	switch (st) {
	case NVM_ST_OK:
		return 0;
	case NVM_ST_BAD_CMD:
		return -EINVAL;
	case NVM_ST_BAD_KEY:
		return -EKEYREJECTED;
	case NVM_ST_NO_PORT:
		return -ECONNREFUSED;
	case NVM_ST_READ_ONLY:
		return -EROFS;
	case NVM_ST_PEER_RESET:
		return -ECONNRESET;
	case NVM_ST_UNREACHABLE:
		return -EHOSTUNREACH;
	case NVM_ST_BAD_ADDR:
		return -EFAULT;
	case NVM_ST_PERM:
		return -EPERM;
	case NVM_ST_ABORTED:
		return -ECANCELED;
	default:
		return -EIO;
	}
}

static void ring(struct netvm *nv)
{
	__sync_synchronize();
	*nv->db = nv->issued;
}

/* Wait for a free slot; the doorbell is rung first if we must wait. */
static int post(struct netvm *nv, struct nvm_cmd *c)
{
	volatile uint32_t *slot;
	const uint32_t *w = (const uint32_t *)c;
	uint64_t t0 = 0;
	size_t i;

	/*
	 * At most NVL_INFLIGHT commands not done (as the driver's own
	 * queue): many operations parked on page misses at once flood the
	 * paging events.  A full queue also waits (consumed is behind done).
	 */
	while (nv->issued - nvl_ld32(&shadow(nv)->done) >= NVL_INFLIGHT &&
	       nv->issued - *nvl_sram32(nv, NVM_EP_STATUS +
				    offsetof(struct nvm_ep_status, done)) >=
	       NVL_INFLIGHT) {
		if (!t0) {
			ring(nv);
			t0 = nvl_now_ns();
		} else if (nvl_now_ns() - t0 > NVL_WAIT_NS) {
			return -ETIMEDOUT;
		}
		usleep(20);
	}
	slot = nvl_sram32(nv, NVM_EP_CMDQ +
		      (nv->issued % NVM_CMDQ_LEN) * NVM_CMD_SIZE);
	c->seq = nv->issued + 1;
	if (c->seq % NVL_SHADOW_EVERY == 0)
		c->flags |= NVM_CF_SHADOW;
	for (i = 0; i < offsetof(struct nvm_cmd, seq) / 4; i++)
		slot[i] = w[i];
	__sync_synchronize();
	slot[offsetof(struct nvm_cmd, seq) / 4] = c->seq;
	nv->issued++;
	return 0;
}

/* Collect the error records not yet seen: the first one's errno, or 0. */
static int collect_errors(struct netvm *nv)
{
	uint32_t errs = nvl_ld32(&shadow(nv)->errors);
	int ret = 0;

	while (nv->errs_seen != errs) {
		volatile struct nvm_err_rec *r = (volatile struct nvm_err_rec *)
			(nv->host + nv->ep.err_off +
			 (nv->errs_seen % nv->ep.err_len) *
			 sizeof(struct nvm_err_rec));

		if (!ret)
			ret = status_errno(r->status);
		if (!ret)
			ret = -EIO;
		nv->errs_seen++;
	}
	return ret;
}

/*
 * Wait until the NI has set *p to want: spin for NVL_SPIN_NS, then sleep
 * in 10 us steps; -ETIMEDOUT after NVL_WAIT_NS.  A synchronous call
 * (readF, writeF, an atomic, a flush) waits one round trip, 20-80 us under
 * TCG: sleeping after a few hundred polls, as this did, made each one
 * cost a guest timer tick (readF and atomics took 80 us where a write's
 * round trip takes 25).
 */
static int await_word(const volatile uint32_t *p, uint32_t want)
{
	uint64_t t0 = nvl_now_ns(), waited;
	unsigned int k = 0;

	while (nvl_ld32(p) != want) {
		if (++k % 64)
			continue;
		waited = nvl_now_ns() - t0;
		if (waited > NVL_WAIT_NS)
			return -ETIMEDOUT;
		if (waited > NVL_SPIN_NS)
			usleep(10);
	}
	return 0;
}

/* Ring, then wait until every command issued has completed. */
static int wait_all(struct netvm *nv)
{
	int err, ret;

	ring(nv);
	err = await_word(&shadow(nv)->done, nv->issued);
	ret = collect_errors(nv);	/* drained either way */
	return err ? err : ret;
}

static int flush(struct netvm *nv)
{
	if (!nv)
		return -EINVAL;
	if (nv->efd < 0)
		return -ENXIO;
	return wait_all(nv);
}

NETVM_PUBLIC int netvm_flushR(struct netvm *nv)
{
	return flush(nv);
}

NETVM_PUBLIC int netvm_flushW(struct netvm *nv)
{
	return flush(nv);
}

NETVM_PUBLIC int netvm_flushRW(struct netvm *nv)
{
	return flush(nv);
}

static void cmd_dst(struct nvm_cmd *c, const struct nvl_import *m, uint64_t va)
{
	c->dst_node = (uint16_t)m->node;
	c->dst_port = (uint16_t)m->port;
	c->dst_va = va;
	c->dst_key = m->key;
	c->dst_hash = nvm_pt_hash(m->port, va >> NVM_PAGE_SHIFT, m->pt_rows);
}

static int xfer(struct netvm *nv, int seg, uint64_t off, const void *addr,
		size_t size, int is_write, uint32_t notf, int wait)
{
	struct nvl_frag_iter it;
	struct nvl_export *le = NULL;
	struct nvl_import *m;
	struct nvl_frag f;
	struct nvm_cmd c;
	int err, need_key = 0;

	if (!nv)
		return -EINVAL;
	if (nv->efd < 0)
		return -ENXIO;
	m = seg_get(nv, seg);
	if (!m)
		return -EBADF;
	if (!size)
		return 0;
	if (!addr)
		return -EINVAL;
	if (off > m->len || size > m->len - off)
		return -ERANGE;
	if (is_write && (m->flags & NETVM_EXPORT_RO))
		return -EROFS;
	nvl_frag_begin(&it, (uintptr_t)addr, m->addr + off, size, is_write);
	while (nvl_frag_next(&it, &f))
		need_key |= !f.inl;
	if (need_key) {
		le = find_local(nv, (uintptr_t)addr, size);
		if (!le)
			return -ENOKEY;
		if (!is_write && (le->flags & NETVM_EXPORT_RO))
			return -EROFS;
	}

	nvl_frag_begin(&it, (uintptr_t)addr, m->addr + off, size, is_write);
	while (nvl_frag_next(&it, &f)) {
		memset(&c, 0, sizeof(c));
		c.op = is_write ? NVM_OP_WRITE : NVM_OP_READ;
		c.len = f.len;
		cmd_dst(&c, m, f.remote);
		if (f.inl) {
			c.flags |= NVM_CF_INLINE;
			memcpy(c.inline_data, (const void *)(uintptr_t)f.local,
			       f.len);
		} else {
			c.nfrag = 1;
			c.src[0].va = f.local;
			c.src[0].len = f.len;
			c.src[0].key = le->key;
			c.src[0].hash = nvm_pt_hash(nv->ep.port,
						    f.local >> NVM_PAGE_SHIFT,
						    nv->ep.pt_rows);
		}
		if (f.last) {
			c.flags |= NVM_CF_SHADOW;
			/* we wait: the receiver acknowledges at once */
			if (wait && is_write)
				c.flags |= NVM_CF_ACK_NOW;
			if (notf) {
				c.flags |= NVM_CF_NOTIFY;
				c.notify = notf;
			}
		}
		c.tag = (uint32_t)seg;
		err = post(nv, &c);
		if (err)
			return err;
	}
	if (wait)
		return wait_all(nv);
	ring(nv);
	return 0;
}

NETVM_PUBLIC int netvm_write(struct netvm *nv, int seg, uint64_t off,
			     const void *addr, size_t size)
{
	return xfer(nv, seg, off, addr, size, 1, 0, 0);
}

NETVM_PUBLIC int netvm_writeF(struct netvm *nv, int seg, uint64_t off,
			      const void *addr, size_t size)
{
	return xfer(nv, seg, off, addr, size, 1, 0, 1);
}

NETVM_PUBLIC int netvm_writeN(struct netvm *nv, int seg, uint64_t off,
			      const void *addr, size_t size, uint32_t notf)
{
	if (!notf)
		return -EINVAL;
	return xfer(nv, seg, off, addr, size, 1, notf, 0);
}

NETVM_PUBLIC int netvm_writeFN(struct netvm *nv, int seg, uint64_t off,
			       const void *addr, size_t size, uint32_t notf)
{
	if (!notf)
		return -EINVAL;
	return xfer(nv, seg, off, addr, size, 1, notf, 1);
}

NETVM_PUBLIC int netvm_read(struct netvm *nv, int seg, uint64_t off,
			    void *addr, size_t size)
{
	return xfer(nv, seg, off, addr, size, 0, 0, 0);
}

NETVM_PUBLIC int netvm_readF(struct netvm *nv, int seg, uint64_t off,
			     void *addr, size_t size)
{
	return xfer(nv, seg, off, addr, size, 0, 0, 1);
}

/* ---- atomics ---- */

static int atomic_op(struct netvm *nv, int seg, uint64_t off, uint32_t op,
		     uint32_t a0, uint32_t a1, uint32_t r[3])
{
	volatile struct nvm_atomic_reply *rep;
	uint64_t bytes = op >= NVM_AT_ENQUEUE ? NVM_WQ_WORDS * 4 : 4;
	struct nvl_import *m;
	struct nvm_cmd c;
	uint64_t va;
	int err;

	if (!nv)
		return -EINVAL;
	if (nv->efd < 0)
		return -ENXIO;
	m = seg_get(nv, seg);
	if (!m)
		return -EBADF;
	if (off & 3)
		return -EINVAL;
	if (off > m->len || bytes > m->len - off)
		return -ERANGE;
	va = m->addr + off;
	if ((va & (NVM_PAGE_SIZE - 1)) + bytes > NVM_PAGE_SIZE)
		return -EINVAL;
	if (m->flags & NETVM_EXPORT_RO)
		return -EROFS;
	memset(&c, 0, sizeof(c));
	c.op = NVM_OP_ATOMIC;
	c.flags = NVM_CF_SHADOW;
	c.len = (uint32_t)bytes;
	cmd_dst(&c, m, va);
	c.atomic_op = op;
	c.arg[0] = a0;
	c.arg[1] = a1;
	c.tag = (uint32_t)seg;
	err = post(nv, &c);
	if (err)
		return err;
	err = wait_all(nv);
	if (err)
		return err;
	rep = (volatile struct nvm_atomic_reply *)(nv->host + nv->ep.reply_off);
	err = await_word(&rep->seq, c.seq);
	if (err)
		return err;
	r[0] = rep->r[0];
	r[1] = rep->r[1];
	r[2] = rep->r[2];
	return 0;
}

static int atomic1(struct netvm *nv, int seg, uint64_t off, uint32_t op,
		   uint32_t a0, uint32_t a1, uint32_t *old)
{
	uint32_t r[3];
	int err;

	if (!old)
		return -EINVAL;
	err = atomic_op(nv, seg, off, op, a0, a1, r);
	if (!err)
		*old = r[0];
	return err;
}

NETVM_PUBLIC int netvm_testandset(struct netvm *nv, int seg, uint64_t off,
				  uint32_t *old)
{
	return atomic1(nv, seg, off, NVM_AT_TAS, 0, 0, old);
}

NETVM_PUBLIC int netvm_incr(struct netvm *nv, int seg, uint64_t off,
			    uint32_t *old)
{
	return atomic1(nv, seg, off, NVM_AT_INC, 0, 0, old);
}

NETVM_PUBLIC int netvm_decr(struct netvm *nv, int seg, uint64_t off,
			    uint32_t *old)
{
	return atomic1(nv, seg, off, NVM_AT_DEC, 0, 0, old);
}

NETVM_PUBLIC int netvm_swap(struct netvm *nv, int seg, uint64_t off,
			    uint32_t val, uint32_t *old)
{
	return atomic1(nv, seg, off, NVM_AT_SWAP, val, 0, old);
}

NETVM_PUBLIC int netvm_cswap(struct netvm *nv, int seg, uint64_t off,
			     uint32_t expect, uint32_t val, uint32_t *old)
{
	return atomic1(nv, seg, off, NVM_AT_CSWAP, expect, val, old);
}

static int atomic3(struct netvm *nv, int seg, uint64_t off, uint32_t op,
		   uint32_t a0, uint32_t r[3])
{
	if (!r)
		return -EINVAL;
	return atomic_op(nv, seg, off, op, a0, 0, r);
}

NETVM_PUBLIC int netvm_enqueue(struct netvm *nv, int seg, uint64_t off,
			       uint32_t id, uint32_t r[3])
{
	return atomic3(nv, seg, off, NVM_AT_ENQUEUE, id, r);
}

NETVM_PUBLIC int netvm_dequeue(struct netvm *nv, int seg, uint64_t off,
			       uint32_t r[3])
{
	return atomic3(nv, seg, off, NVM_AT_DEQUEUE, 0, r);
}

NETVM_PUBLIC int netvm_newhead(struct netvm *nv, int seg, uint64_t off,
			       uint32_t head, uint32_t r[3])
{
	return atomic3(nv, seg, off, NVM_AT_NEWHEAD, head, r);
}

NETVM_PUBLIC int netvm_semP(struct netvm *nv, int seg, uint64_t off,
			    uint32_t id, uint32_t r[3])
{
	return atomic3(nv, seg, off, NVM_AT_SEMP, id, r);
}

NETVM_PUBLIC int netvm_semV(struct netvm *nv, int seg, uint64_t off,
			    uint32_t r[3])
{
	return atomic3(nv, seg, off, NVM_AT_SEMV, 0, r);
}

NETVM_PUBLIC void netvm_yield(struct netvm *nv)
{
	if (nv && nv->db)
		(void)nv->db[LANAI_DB_YIELD / sizeof(*nv->db)];
}
