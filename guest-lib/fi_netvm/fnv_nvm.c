// SPDX-License-Identifier: MIT
/*
 * A domain's NetVM side, for RMA and atomics: the NetVM endpoint (one per
 * domain, registered at the first memory region or remote access), its
 * bounce buffer, the segments imported from peers' memory regions, and
 * the transfers.  A memory region is a NetVM export named after its key
 * (fnv_mr.c): the key's top 16 bits are the owner's NetVM port, the rest
 * random, so a key names its export and nothing else finds it.  NetVM
 * wants the local side of a transfer in an export too; rather than export
 * every buffer an application passes, the bytes go through one exported
 * bounce area (a copy, no pinning; long-lived, so the NIC's translations
 * of its pages stay warm).  Transfers are synchronous (the F
 * calls): an RMA completes when the NIC reported it done.  The NIC does
 * not send to its own node: a region of this node is reached by the CPU
 * (this process's regions only, fnv_mr_local), atomics included.  Also
 * here: the NetVM side of rendezvous messages (fnv_rdm_rdv.c; their
 * exports kept from message to message, fnv_rdv_cache.c) and of the RDM
 * acks a sender pulls from its receiver's ack table (fnv_rdm_link.c).
 */
#define _GNU_SOURCE	/* process_vm_readv */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>

#include "fnv_nvm.h"
#include "fnv_rdm.h"
#include "fnv_rdv_pipe.h"

void fnv_nvm_key_name(uint64_t key, char name[FNV_NVM_NAME])
{
	snprintf(name, FNV_NVM_NAME, "fi%012" PRIx64,
		 (uint64_t)(key & FNV_KEY_RAND_MASK));
}

int fnv_nvm_fresh_key(const struct fnv_domain *d, uint64_t *key,
		      char name[FNV_NVM_NAME])
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		return -EIO;
	*key = (uint64_t)d->nvm_port << FNV_KEY_PORT_SHIFT |
	       (r & FNV_KEY_RAND_MASK);
	fnv_nvm_key_name(*key, name);
	return 0;
}

int fnv_nvm_ready_locked(struct fnv_domain *d)
{
	int port, h;

	if (d->nvm_port > 0)
		return 0;
	port = netvm_register(d->nv, NETVM_PORT_ANY, 0);
	if (port < 0)
		return port;
	d->bounce = aligned_alloc(4096, FNV_NVM_AREA);
	if (!d->bounce) {
		netvm_unregister(d->nv);
		return -ENOMEM;
	}
	h = netvm_export(d->nv, "fi-bounce", d->bounce, FNV_NVM_AREA, 0, NULL);
	if (h < 0) {
		free(d->bounce);
		d->bounce = NULL;
		netvm_unregister(d->nv);
		return h;
	}
	d->nvm_port = port;
	return 0;
}

void fnv_nvm_fini(struct fnv_domain *d)
{
	if (d->nvm_port > 0)
		netvm_unregister(d->nv);	/* its exports and imports go */
	fnv_rdv_cache_fini(d);
	free(d->bounce);
	d->bounce = NULL;
	d->nvm_port = 0;
}

/* The segment of (node, key): imported once, kept (64 at most, the oldest
 * forgotten first). */
static int segment_locked(struct fnv_domain *d, uint16_t node, uint64_t key)
{
	struct fnv_import *im;
	char name[FNV_NVM_NAME];
	int seg;

	for (int i = 0; i < d->nimports; i++)
		if (d->imports[i].node == node && d->imports[i].key == key)
			return d->imports[i].seg;
	fnv_nvm_key_name(key, name);
	seg = netvm_import(d->nv, node, (unsigned int)(key >> FNV_KEY_PORT_SHIFT),
			   name);
	if (seg == -ENOENT || seg == -ECONNREFUSED)
		return -EKEYREJECTED;	/* no such region there: a wrong key */
	if (seg < 0)
		return seg;
	if (d->nimports == FNV_IMPORTS) {
		netvm_unimport(d->nv, d->imports[0].seg);
		memmove(&d->imports[0], &d->imports[1],
			(FNV_IMPORTS - 1) * sizeof(d->imports[0]));
		d->nimports--;
	}
	im = &d->imports[d->nimports++];
	im->node = node;
	im->key = key;
	im->seg = seg;
	return seg;
}

/* Forget (node, key)'s segment: its region may be gone. */
static void forget_locked(struct fnv_domain *d, uint16_t node, uint64_t key)
{
	for (int i = 0; i < d->nimports; i++) {
		if (d->imports[i].node != node || d->imports[i].key != key)
			continue;
		netvm_unimport(d->nv, d->imports[i].seg);
		memmove(&d->imports[i], &d->imports[i + 1],
			(size_t)(d->nimports - i - 1) * sizeof(d->imports[0]));
		d->nimports--;
		return;
	}
}

int fnv_nvm_fi_err(int err)
{
	switch (err) {
	case -EKEYREJECTED:
	case -EFAULT:		/* the range is not exported (any more) */
	case -ENOENT:
	case -ECONNREFUSED:
		return FI_EKEYREJECTED;
	case -ERANGE:
	case -EINVAL:
		return FI_EINVAL;	/* past the region, misaligned */
	case -EROFS:
		return FI_EACCES;	/* registered without FI_REMOTE_WRITE */
	case -EHOSTUNREACH:
		return FI_EHOSTUNREACH;
	case -ETIMEDOUT:
		return FI_ETIMEDOUT;
	default:
		return fnv_errno_to_fi(err);
	}
}

/* Open the way to (node, key): the segment, or an error. */
static int prepare(struct fnv_domain *d, uint16_t node, uint64_t key)
{
	int err = fnv_nvm_ready_locked(d);

	return err ? err : segment_locked(d, node, key);
}

static int done(struct fnv_domain *d, uint16_t node, uint64_t key, int err)
{
	if (err == -EKEYREJECTED || err == -EFAULT)
		forget_locked(d, node, key);
	return err;
}

/* The loop-back's copy between [off, +total) of key and the pieces. */
static int local_copy(uint64_t key, uint64_t off, const struct iovec *iov,
		      size_t count, bool write)
{
	size_t total = 0;
	uint8_t *at;
	int err;

	for (size_t i = 0; i < count; i++)
		total += iov[i].iov_len;
	err = fnv_mr_local(key, off, total, write, &at);
	for (size_t i = 0; i < count && !err; i++) {
		if (write)
			memcpy(at, iov[i].iov_base, iov[i].iov_len);
		else
			memcpy(iov[i].iov_base, at, iov[i].iov_len);
		at += iov[i].iov_len;
	}
	return err;
}

static int local_word(uint64_t key, uint64_t off, bool write, uint32_t **w)
{
	uint8_t *at;
	int err;

	if (off & 3)
		return -EINVAL;
	err = fnv_mr_local(key, off, sizeof(uint32_t), write, &at);
	if (!err)
		*w = (uint32_t *)(void *)at;
	return err;
}

/*
 * @iov to (@write) or from the region @key names at @off on @node, through
 * the domain's bounce buffer in FNV_BOUNCE pieces.
 */
static int copy_locked(struct fnv_domain *d, uint16_t node, uint64_t key,
		       uint64_t off, const struct iovec *iov, size_t count,
		       bool write)
{
	int seg, err = 0;

	if (node == d->node)
		return local_copy(key, off, iov, count, write);
	seg = prepare(d, node, key);

	if (seg < 0)
		return seg;
	for (size_t i = 0; i < count && !err; i++)
		for (size_t at = 0; at < iov[i].iov_len && !err;) {
			uint8_t *mem = (uint8_t *)iov[i].iov_base + at;
			size_t n = iov[i].iov_len - at < FNV_BOUNCE ?
				   iov[i].iov_len - at : FNV_BOUNCE;

			if (write) {
				memcpy(d->bounce, mem, n);
				err = netvm_writeF(d->nv, seg, off, d->bounce,
						   n);
			} else {
				err = netvm_readF(d->nv, seg, off, d->bounce,
						  n);
				if (!err)
					memcpy(mem, d->bounce, n);
			}
			off += n;
			at += n;
		}
	return done(d, node, key, err);
}

int fnv_nvm_write_locked(struct fnv_domain *d, uint16_t node, uint64_t key,
			 uint64_t off, const struct iovec *iov, size_t count)
{
	return copy_locked(d, node, key, off, iov, count, true);
}

int fnv_nvm_read_locked(struct fnv_domain *d, uint16_t node, uint64_t key,
			uint64_t off, const struct iovec *iov, size_t count)
{
	return copy_locked(d, node, key, off, iov, count, false);
}

int fnv_nvm_swap_locked(struct fnv_domain *d, uint16_t node, uint64_t key,
			uint64_t off, uint32_t val, uint32_t *old)
{
	uint32_t *w;
	int seg, err;

	if (node == d->node) {
		err = local_word(key, off, true, &w);
		if (!err)
			*old = __atomic_exchange_n(w, val, __ATOMIC_SEQ_CST);
		return err;
	}
	seg = prepare(d, node, key);

	if (seg < 0)
		return seg;
	return done(d, node, key, netvm_swap(d->nv, seg, off, val, old));
}

int fnv_nvm_cswap_locked(struct fnv_domain *d, uint16_t node, uint64_t key,
			 uint64_t off, uint32_t expect, uint32_t val,
			 uint32_t *old)
{
	uint32_t *w;
	int seg, err;

	if (node == d->node) {
		/* a compare that fails writes nothing: read-only is fine */
		err = local_word(key, off, expect != val, &w);
		if (!err) {
			*old = expect;
			__atomic_compare_exchange_n(w, old, val, false,
						    __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
		}
		return err;
	}
	seg = prepare(d, node, key);

	if (seg < 0)
		return seg;
	return done(d, node, key,
		    netvm_cswap(d->nv, seg, off, expect, val, old));
}

/* ---- rendezvous (fnv_rdm_rdv.c): a send's buffers, read by the receiver
 * or written by the sender into the receiver's */

int fnv_nvm_export_locked(struct fnv_domain *d, const void *buf, size_t len,
			  bool writable, struct fnv_rdv_piece *out)
{
	int err = fnv_nvm_ready_locked(d);
	struct netvm_segment me;
	char name[FNV_NVM_NAME];
	uint64_t key;
	int h;

	if (!err)
		err = fnv_nvm_fresh_key(d, &key, name);
	if (err)
		return err;
	/* -EEXIST: the pages overlap another export (a name taken by 48
	 * random bits is as unlikely): the caller copies */
	h = netvm_export(d->nv, name, (void *)buf, len,
			 writable ? 0 : NETVM_EXPORT_RO, NULL);
	if (h < 0)
		return h;
	err = netvm_export_info(d->nv, h, &me);
	if (err) {
		netvm_unexport(d->nv, h);
		return err;
	}
	*out = (struct fnv_rdv_piece){
		.key = key, .addr = (uintptr_t)buf, .len = len,
		.nvm_key = me.key, .pt_rows = me.pt_rows,
	};
	return h;
}

void fnv_nvm_unexport_locked(struct fnv_domain *d, int handle)
{
	(void)netvm_unexport(d->nv, handle);
}

int fnv_nvm_rekey_locked(struct fnv_domain *d, int handle,
			 struct fnv_rdv_piece *piece)
{
	int err = -EEXIST;

	/* -EEXIST: the name another export's (48 random bits): again */
	for (int tries = 0; tries < 4 && err == -EEXIST; tries++) {
		char name[FNV_NVM_NAME];
		uint64_t key, nvm_key;

		err = fnv_nvm_fresh_key(d, &key, name);
		if (err)
			return err;
		err = netvm_rekey(d->nv, handle, name, &nvm_key);
		if (!err) {
			piece->key = key;
			piece->nvm_key = nvm_key;
		}
	}
	return err;
}

/* The loop-back: the sender is a process of this node.  (The write
 * path is for other nodes only, so from is 0 here.) */
static int read_local(const struct fnv_rdv_req *q, const struct iovec *iov,
		      size_t count, size_t n)
{
	struct iovec loc[FNV_IOV_MAX], rem[FNV_IOV_MAX];
	size_t nloc = 0, nrem = 0, left = n;
	ssize_t got;

	for (size_t i = 0; i < count && left; i++) {
		size_t k = iov[i].iov_len < left ? iov[i].iov_len : left;

		loc[nloc].iov_base = iov[i].iov_base;
		loc[nloc++].iov_len = k;
		left -= k;
	}
	left = n;
	for (uint32_t i = 0; i < q->count && left; i++) {
		size_t k = q->piece[i].len < left ? q->piece[i].len : left;

		rem[nrem].iov_base = (void *)(uintptr_t)q->piece[i].addr;
		rem[nrem++].iov_len = k;
		left -= k;
	}
	/* the kernel faults the sender's pages in; short only past an
	 * unmapped one */
	got = process_vm_readv((pid_t)q->pid, loc, nloc, rem, nrem, 0);
	if (got < 0)
		return errno == ESRCH ? FI_EHOSTUNREACH : FI_EIO;
	return (size_t)got == n ? 0 : FI_EIO;
}

/* libnetvm under fnv_rdv_pipe's NIC calls */
struct pipe_nic {
	struct fnv_domain *d;
	uint16_t node;
	int segs[FNV_IOV_MAX];	/* the message's imports, dropped after */
	int nsegs;
};

/* The piece's segment, from its description: the sender's kernel is not
 * asked (netvm_import's round trip cost 0.5-1 ms a message), and the
 * sender's NIC checks the key of every page read. */
static int pipe_seg(void *ctx, const struct fnv_rdv_piece *piece)
{
	struct pipe_nic *p = ctx;
	struct netvm_segment s = {
		.node = p->node,
		.port = (uint32_t)(piece->key >> FNV_KEY_PORT_SHIFT),
		.addr = piece->addr, .len = piece->len,
		.key = piece->nvm_key, .flags = NETVM_EXPORT_RO,
		.pt_rows = piece->pt_rows,
	};
	char name[FNV_NVM_NAME];
	int seg;

	if (p->nsegs == FNV_IOV_MAX)
		return -EINVAL;		/* one per piece: never */
	fnv_nvm_key_name(piece->key, name);
	seg = netvm_import_segment(p->d->nv, &s, name);
	if (seg >= 0)
		p->segs[p->nsegs++] = seg;
	return seg;
}

static int pipe_read(void *ctx, int seg, uint64_t off, void *to, size_t len)
{
	struct pipe_nic *p = ctx;

	return netvm_read(p->d->nv, seg, off, to, len);
}

static int pipe_flush(void *ctx)
{
	struct pipe_nic *p = ctx;

	return netvm_flushR(p->d->nv);
}

int fnv_rdv_read_locked(struct fnv_domain *d, uint16_t node,
			const struct fnv_rdv_req *q, const struct iovec *iov,
			size_t count, size_t from, size_t n)
{
	struct pipe_nic p = { .d = d, .node = node };
	struct fnv_rdv_nic nic = {
		.ctx = &p, .seg = pipe_seg, .read = pipe_read,
		.flush = pipe_flush,
	};
	int err;

	if (node == d->node)
		return from ? FI_EINVAL : read_local(q, iov, count, n);
	err = fnv_nvm_ready_locked(d);
	if (!err)
		err = fnv_rdv_pipe(&nic, q, iov, count, from, n, d->bounce,
				   FNV_RDV_CHUNK);
	/* a fresh key each message: no use keeping its imports */
	for (int i = 0; i < p.nsegs; i++)
		netvm_unimport(d->nv, p.segs[i]);
	return err ? fnv_nvm_fi_err(err) : 0;
}

/*
 * The receiver's side of a rendezvous read into place: bytes [0, n) of
 * q's pieces straight into dst (one piece, in an export of this process
 * whose key the peer was not told), one netvm_read per piece, all
 * queued, then one flush: no bounce area, no copy out, and no "clear to
 * send" between the request and the bytes.
 */
int fnv_rdv_read_into_locked(struct fnv_domain *d, uint16_t node,
			     const struct fnv_rdv_req *q, void *dst, size_t n)
{
	struct pipe_nic p = { .d = d, .node = node };
	bool queued = false;
	size_t done = 0;
	int err;

	if (node == d->node)
		return FI_EINVAL;	/* the NIC does not reach its node */
	err = fnv_nvm_ready_locked(d);
	for (uint32_t i = 0; i < q->count && done < n && !err; i++) {
		size_t k = q->piece[i].len < n - done ?
			   (size_t)q->piece[i].len : n - done;
		int seg = pipe_seg(&p, &q->piece[i]);

		if (seg < 0) {
			err = seg;
			break;
		}
		err = netvm_read(d->nv, seg, 0, (uint8_t *)dst + done, k);
		queued = true;
		done += k;
	}
	if (queued) {
		/* drained even after an error: a later flush must not see
		 * these reads */
		int f = netvm_flushR(d->nv);

		err = err ? err : f;
	}
	for (int i = 0; i < p.nsegs; i++)
		netvm_unimport(d->nv, p.segs[i]);	/* a fresh key each */
	return err ? fnv_nvm_fi_err(err) : 0;
}

/*
 * The sender's side of a written rendezvous: c's export (the receiver's
 * whole pages) imported from its description, then one netvm_write per
 * run of the message that stays in one of the sender's exports (the
 * source must lie in one), all queued, then one flush: the NIC streams
 * them as netvm-bench's write_bw does, and the writing runs on this CPU
 * while the receiver's only takes the frames in.
 */
int fnv_rdv_write_locked(struct fnv_domain *d, uint16_t node,
			 const struct fnv_rdv_req *q,
			 const struct fnv_rdv_cts *c)
{
	struct netvm_segment s = {
		.node = node,
		.port = (uint32_t)(c->piece.key >> FNV_KEY_PORT_SHIFT),
		.addr = c->piece.addr, .len = c->piece.len,
		.key = c->piece.nvm_key, .pt_rows = c->piece.pt_rows,
	};
	uint64_t at = c->off, left = c->piece.len, done = 0;
	char name[FNV_NVM_NAME];
	bool queued = false;
	int seg, err;

	if (node == d->node)
		return FI_EINVAL;	/* the NIC does not reach its node */
	err = fnv_nvm_ready_locked(d);
	if (err)
		return fnv_nvm_fi_err(err);
	fnv_nvm_key_name(c->piece.key, name);
	seg = netvm_import_segment(d->nv, &s, name);
	if (seg < 0)
		return fnv_nvm_fi_err(seg);
	for (uint32_t i = 0; i < q->count && left && !err; i++) {
		uint64_t k;

		if (at >= q->piece[i].len) {
			at -= q->piece[i].len;
			continue;
		}
		k = q->piece[i].len - at < left ? q->piece[i].len - at : left;
		err = netvm_write(d->nv, seg, done,
				  (const uint8_t *)(uintptr_t)q->piece[i].addr +
				  at, k);
		queued = true;
		done += k;
		left -= k;
		at = 0;
	}
	if (!err && left)
		err = -EINVAL;		/* past the message: checked before */
	if (queued) {
		/* drained even after an error: a later flush must not see
		 * these writes */
		int f = netvm_flushW(d->nv);

		err = err ? err : f;
	}
	netvm_unimport(d->nv, seg);	/* a fresh key each message */
	return err ? fnv_nvm_fi_err(err) : 0;
}

/* ---- an RDM peer's ack table (fnv_rdm_link.c): one slot, pulled ---- */

int fnv_rdm_table_read_locked(struct fnv_domain *d, uint16_t node,
			      uint64_t key, uint32_t slot, uint64_t *val)
{
	uint64_t off = (uint64_t)slot * sizeof(*val);
	int seg, err;

	if (node == d->node)
		return -EHOSTUNREACH;	/* the NIC does not reach its node */
	seg = prepare(d, node, key);	/* imported once, kept */
	if (seg < 0)
		return seg;
	/* one aligned 8-byte slot, written with one 64-bit store */
	err = netvm_readF(d->nv, seg, off, d->bounce, sizeof(*val));
	if (!err)
		memcpy(val, d->bounce, sizeof(*val));
	return done(d, node, key, err);
}
