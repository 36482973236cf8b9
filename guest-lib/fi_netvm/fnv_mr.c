// SPDX-License-Identifier: MIT
/*
 * Memory regions.  Messages need none (mr_mode 0: no FI_MR_LOCAL), so on
 * a domain whose keys are the application's (opened from an fi_info
 * without FI_MR_PROV_KEY) fi_mr_reg records the key it is given and
 * nothing else.  On a domain with FI_MR_PROV_KEY (RDM with FI_RMA), a
 * region for remote access (FI_REMOTE_READ, FI_REMOTE_WRITE) is a NetVM
 * export of the buffer: nothing is pinned (NetVM
 * faults pages in, swapped out or not), and the key the provider hands
 * out names the export (fnv_nvm.c): the owner's NetVM port and 48 random
 * bits.  Access without FI_REMOTE_WRITE exports read-only (a peer's
 * write fails FI_EACCES).
 */
#include <errno.h>
#include <stdlib.h>

#include "fnv_nvm.h"
#include "fnv_rdm.h"

struct fnv_mr {
	struct fid_mr mr;
	struct fnv_domain *dom;
	int export;		/* the NetVM export; -1: none */
	uint8_t *buf;
	size_t len;
	bool writable;		/* FI_REMOTE_WRITE */
	struct fnv_mr *next;	/* in this process's exported regions */
};

/*
 * This process's exported regions, for the loop-back: the NIC does not
 * send to its own node, so RMA to a region of this node is a copy by the
 * CPU, which can reach only this process's regions.
 */
static pthread_mutex_t local_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fnv_mr *local_regions;

int fnv_mr_local(uint64_t key, uint64_t off, size_t len, bool write,
		 uint8_t **at)
{
	int err = -EKEYREJECTED;	/* not ours: another process's */

	pthread_mutex_lock(&local_lock);
	for (struct fnv_mr *m = local_regions; m; m = m->next) {
		if (m->mr.key != key)
			continue;
		if (off > m->len || len > m->len - off)
			err = -ERANGE;
		else if (write && !m->writable)
			err = -EROFS;
		else {
			*at = m->buf + off;
			err = 0;
		}
		break;
	}
	pthread_mutex_unlock(&local_lock);
	return err;
}

static void local_remove(struct fnv_mr *m)
{
	pthread_mutex_lock(&local_lock);
	for (struct fnv_mr **p = &local_regions; *p; p = &(*p)->next)
		if (*p == m) {
			*p = m->next;
			break;
		}
	pthread_mutex_unlock(&local_lock);
}

static int mr_close(struct fid *fid)
{
	struct fnv_mr *m = (struct fnv_mr *)fid;

	pthread_mutex_lock(&m->dom->lock);
	if (m->export >= 0) {
		local_remove(m);
		netvm_unexport(m->dom->nv, m->export);
	}
	m->dom->refs--;
	pthread_mutex_unlock(&m->dom->lock);
	free(m);
	return 0;
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = fnv_no_bind,
	.control = fnv_no_control,
	.ops_open = fnv_no_ops_open,
	.tostr = fnv_tostr,
	.ops_set = fnv_no_ops_set,
};

/* Export [buf, +len) under a fresh key: 0 or a negative errno. */
static int export_locked(struct fnv_domain *d, struct fnv_mr *m,
			 const void *buf, size_t len, uint64_t access)
{
	unsigned int flags = access & FI_REMOTE_WRITE ? 0 : NETVM_EXPORT_RO;
	int err = fnv_nvm_ready_locked(d);

	if (err)
		return err;
	for (int tries = 0; tries < 4; tries++) {
		char name[FNV_NVM_NAME];

		err = fnv_nvm_fresh_key(d, &m->mr.key, name);
		if (err)
			return err;
		m->export = netvm_export(d->nv, name, (void *)buf, len, flags,
					 NULL);
		if (m->export >= 0) {
			m->buf = (uint8_t *)buf;
			m->len = len;
			m->writable = !flags;
			pthread_mutex_lock(&local_lock);
			m->next = local_regions;
			local_regions = m;
			pthread_mutex_unlock(&local_lock);
			return 0;
		}
		if (m->export != -EEXIST)
			break;
		/* the name taken, or the range already exported: again, once
		 * a rendezvous's idle exports on these pages gave way */
		(void)fnv_rdv_cache_evict_locked(d, buf, len);
	}
	err = m->export;
	m->export = -1;
	return err;
}

static int mr_reg(struct fid *fid, const void *buf, size_t len,
		  uint64_t access, uint64_t offset, uint64_t requested_key,
		  uint64_t flags, struct fid_mr **mr, void *context)
{
	struct fnv_domain *d = (struct fnv_domain *)fid;
	static uint64_t next_key = 1;
	struct fnv_mr *m;
	int err = 0;

	if (flags || fid->fclass != FI_CLASS_DOMAIN)
		return -FI_EINVAL;
	if (d->prov_key && (offset || !buf || !len))
		return -FI_EINVAL;	/* remote addresses are offsets from 0 */
	m = calloc(1, sizeof(*m));
	if (!m)
		return -FI_ENOMEM;
	m->mr.fid.fclass = FI_CLASS_MR;
	m->mr.fid.context = context;
	m->mr.fid.ops = &mr_fi_ops;
	m->mr.mem_desc = NULL;	/* local buffers need no registration */
	m->dom = d;
	m->export = -1;
	pthread_mutex_lock(&d->lock);
	if (d->prov_key && (access & (FI_REMOTE_READ | FI_REMOTE_WRITE)))
		err = export_locked(d, m, buf, len, access);
	else	/* local use only: nothing for a peer to find */
		m->mr.key = requested_key ? requested_key : next_key++;
	if (!err)
		d->refs++;
	pthread_mutex_unlock(&d->lock);
	if (err) {
		FI_WARN(&fnv_prov, FI_LOG_MR, "export of %zu bytes: %d\n", len,
			err);
		free(m);
		/* overlapping an existing region: NetVM exports one range once */
		return err == -EEXIST ? -FI_EBUSY :
		       err == -ENOSPC ? -FI_ENOSPC : -FI_EIO;
	}
	*mr = &m->mr;
	return 0;
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		   uint64_t access, uint64_t offset, uint64_t requested_key,
		   uint64_t flags, struct fid_mr **mr, void *context)
{
	if (count != 1)
		return -FI_EINVAL;
	return mr_reg(fid, iov[0].iov_base, iov[0].iov_len, access, offset,
		      requested_key, flags, mr, context);
}

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		      uint64_t flags, struct fid_mr **mr)
{
	return mr_regv(fid, attr->mr_iov, attr->iov_count, attr->access,
		       attr->offset, attr->requested_key, flags, mr,
		       attr->context);
}

struct fi_ops_mr fnv_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};
