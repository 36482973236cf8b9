// SPDX-License-Identifier: MIT
/*
 * RMA on an RDM endpoint: fi_write and fi_read straight onto NetVM
 * writes and reads into the peer's memory region (fnv_nvm.c), the
 * address an offset into the region (no FI_MR_VIRT_ADDR), the key the
 * one the region's owner got from fi_mr_key.  Synchronous: the
 * completion (FI_RMA | FI_WRITE or FI_READ) is written once the NIC
 * reported the transfer done, or an error completion: a wrong key
 * FI_EKEYREJECTED, past the region FI_EINVAL, a write to a region
 * without FI_REMOTE_WRITE FI_EACCES.  No remote CQ data (writedata,
 * injectdata: -FI_ENOSYS).
 */
#include "fnv_nvm.h"

#define RMA_FLAGS	(FI_COMPLETION | FI_INJECT | FI_TRANSMIT_COMPLETE | \
			 FI_DELIVERY_COMPLETE | FI_INJECT_COMPLETE | FI_FENCE)

struct rma {
	bool write;
	const struct iovec *iov;
	size_t count;
	fi_addr_t peer;
	uint64_t addr, key;
	void *ctx;
	bool complete;		/* a completion on success */
	bool inject;		/* errors are returned, not completed */
};

static ssize_t rma_locked(struct fnv_ep *ep, const struct rma *o)
{
	struct fnv_cqe e = {
		.ctx = o->ctx, .src = FI_ADDR_NOTAVAIL,
		.flags = FI_RMA | (o->write ? FI_WRITE : FI_READ),
		.len = fnv_iov_total(o->iov, o->count),
	};
	struct fnv_addr a;
	int err;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!ep->dom->prov_key)
		return -FI_ENOSYS;	/* the domain's fi_info had no FI_RMA */
	if (o->count > FNV_IOV_MAX || e.len == SIZE_MAX)
		return -FI_EINVAL;
	if (fnv_av_resolve(ep->av, o->peer, &a))
		return -FI_EINVAL;
	if (!o->inject && ep->tx_cq && !fnv_cq_room_locked(ep->tx_cq, 1))
		return -FI_EAGAIN;
	if (o->write)
		err = fnv_nvm_write_locked(ep->dom, a.node, o->key, o->addr,
					   o->iov, o->count);
	else
		err = fnv_nvm_read_locked(ep->dom, a.node, o->key, o->addr,
					  o->iov, o->count);
	if (err)
		FI_INFO(&fnv_prov, FI_LOG_EP_DATA, "RMA %s node %u key %#llx: %d\n",
			o->write ? "write to" : "read from", a.node,
			(unsigned long long)o->key, err);
	if (err && o->inject)
		return -fnv_nvm_fi_err(err);	/* refused: not counted */
	e.err = err ? fnv_nvm_fi_err(err) : 0;
	if (ep->tx_cq && (err || o->complete))
		fnv_cq_push_locked(ep->tx_cq, &e);
	fnv_cntr_count_locked(o->write ? ep->cntr_write : ep->cntr_read, e.err);
	return 0;
}

static ssize_t call(struct fid_ep *fep, const struct rma *o)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	ssize_t r;

	pthread_mutex_lock(&ep->dom->lock);
	r = rma_locked(ep, o);
	pthread_mutex_unlock(&ep->dom->lock);
	return r;
}

static bool completes(const struct fnv_ep *ep, uint64_t flags)
{
	return !ep->tx_selective || (flags & FI_COMPLETION);
}

static ssize_t r_readv(struct fid_ep *fep, const struct iovec *iov,
		       void **desc, size_t count, fi_addr_t src, uint64_t addr,
		       uint64_t key, void *ctx)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	struct rma o = {
		.iov = iov, .count = count, .peer = src, .addr = addr,
		.key = key, .ctx = ctx,
		.complete = completes(ep, ep->tx_op_flags),
	};

	(void)desc;
	return call(fep, &o);
}

static ssize_t r_read(struct fid_ep *fep, void *buf, size_t len, void *desc,
		      fi_addr_t src, uint64_t addr, uint64_t key, void *ctx)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return r_readv(fep, &iov, &desc, 1, src, addr, key, ctx);
}

/* one remote piece per call: rma_iov_limit 1 */
static ssize_t msg_call(struct fid_ep *fep, const struct fi_msg_rma *m,
			uint64_t flags, bool write)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	struct rma o = {
		.write = write, .iov = m->msg_iov, .count = m->iov_count,
		.peer = m->addr, .ctx = m->context,
		.inject = write && (flags & FI_INJECT),
		.complete = completes(ep, flags),
	};

	if (flags & ~RMA_FLAGS)
		return -FI_EBADFLAGS;
	if (m->rma_iov_count != 1 ||
	    m->rma_iov[0].len != fnv_iov_total(m->msg_iov, m->iov_count))
		return -FI_EINVAL;
	o.addr = m->rma_iov[0].addr;
	o.key = m->rma_iov[0].key;
	return call(fep, &o);
}

static ssize_t r_readmsg(struct fid_ep *fep, const struct fi_msg_rma *m,
			 uint64_t flags)
{
	if (flags & FI_INJECT)
		return -FI_EBADFLAGS;
	return msg_call(fep, m, flags, false);
}

static ssize_t r_writev(struct fid_ep *fep, const struct iovec *iov,
			void **desc, size_t count, fi_addr_t dest,
			uint64_t addr, uint64_t key, void *ctx)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	struct rma o = {
		.write = true, .iov = iov, .count = count, .peer = dest,
		.addr = addr, .key = key, .ctx = ctx,
		.complete = completes(ep, ep->tx_op_flags),
	};

	(void)desc;
	return call(fep, &o);
}

static ssize_t r_write(struct fid_ep *fep, const void *buf, size_t len,
		       void *desc, fi_addr_t dest, uint64_t addr, uint64_t key,
		       void *ctx)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return r_writev(fep, &iov, &desc, 1, dest, addr, key, ctx);
}

static ssize_t r_writemsg(struct fid_ep *fep, const struct fi_msg_rma *m,
			  uint64_t flags)
{
	return msg_call(fep, m, flags, true);
}

static ssize_t r_inject(struct fid_ep *fep, const void *buf, size_t len,
			fi_addr_t dest, uint64_t addr, uint64_t key)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct rma o = {
		.write = true, .iov = &iov, .count = 1, .peer = dest,
		.addr = addr, .key = key, .inject = true,
	};

	return call(fep, &o);
}

static ssize_t r_writedata(struct fid_ep *fep, const void *buf, size_t len,
			   void *desc, uint64_t data, fi_addr_t dest,
			   uint64_t addr, uint64_t key, void *ctx)
{
	(void)fep; (void)buf; (void)len; (void)desc; (void)data; (void)dest;
	(void)addr; (void)key; (void)ctx;
	return -FI_ENOSYS;	/* NetVM writes carry no completion data */
}

static ssize_t r_injectdata(struct fid_ep *fep, const void *buf, size_t len,
			    uint64_t data, fi_addr_t dest, uint64_t addr,
			    uint64_t key)
{
	(void)fep; (void)buf; (void)len; (void)data; (void)dest; (void)addr;
	(void)key;
	return -FI_ENOSYS;
}

struct fi_ops_rma fnv_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = r_read,
	.readv = r_readv,
	.readmsg = r_readmsg,
	.write = r_write,
	.writev = r_writev,
	.writemsg = r_writemsg,
	.inject = r_inject,
	.writedata = r_writedata,
	.injectdata = r_injectdata,
};
