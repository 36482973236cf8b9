// SPDX-License-Identifier: MIT
/*
 * The calls the provider does not offer, and errno to libfabric errors.
 * Every member of every ops table the provider hands out is set: an
 * application calling what the provider does not offer gets -FI_ENOSYS
 * (libfabric's inline wrappers call most members unchecked, so a NULL
 * member would be a crash).  The RMA, tagged, atomic and collective
 * tables are in fnv_none_ops.c.
 */
#include <errno.h>

#include "fnv.h"

int fnv_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS;
}

int fnv_no_control(struct fid *fid, int command, void *arg)
{
	(void)fid; (void)command; (void)arg;
	return -FI_ENOSYS;
}

int fnv_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

int fnv_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		   void *ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

/* ---- fabric: no passive endpoints (no connections), no wait sets ---- */

int fnv_no_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		      struct fid_pep **pep, void *context)
{
	(void)fabric; (void)info; (void)pep; (void)context;
	return -FI_ENOSYS;
}

int fnv_no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		     struct fid_wait **waitset)
{
	(void)fabric; (void)attr; (void)waitset;
	return -FI_ENOSYS;
}

int fnv_no_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	(void)fabric; (void)fids; (void)count;
	return -FI_ENOSYS;
}

/* ---- domain: no scalable or shared contexts, no poll sets ---- */

int fnv_no_scalable_ep(struct fid_domain *domain, struct fi_info *info,
		       struct fid_ep **sep, void *context)
{
	(void)domain; (void)info; (void)sep; (void)context;
	return -FI_ENOSYS;
}

int fnv_no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		     struct fid_poll **pollset)
{
	(void)domain; (void)attr; (void)pollset;
	return -FI_ENOSYS;
}

int fnv_no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
		   struct fid_stx **stx, void *context)
{
	(void)domain; (void)attr; (void)stx; (void)context;
	return -FI_ENOSYS;
}

int fnv_no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
		   struct fid_ep **rx_ep, void *context)
{
	(void)domain; (void)attr; (void)rx_ep; (void)context;
	return -FI_ENOSYS;
}

int fnv_no_query_collective(struct fid_domain *domain,
			    enum fi_collective_op coll,
			    struct fi_collective_attr *attr, uint64_t flags)
{
	(void)domain; (void)coll; (void)attr; (void)flags;
	return -FI_ENOSYS;
}

/* ---- endpoints: no scalable contexts, no connections, no groups ---- */

int fnv_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		  struct fid_ep **tx_ep, void *context)
{
	(void)sep; (void)index; (void)attr; (void)tx_ep; (void)context;
	return -FI_ENOSYS;
}

int fnv_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		  struct fid_ep **rx_ep, void *context)
{
	(void)sep; (void)index; (void)attr; (void)rx_ep; (void)context;
	return -FI_ENOSYS;
}

int fnv_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void)ep; (void)addr; (void)addrlen;
	return -FI_ENOSYS;
}

int fnv_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		   size_t paramlen)
{
	(void)ep; (void)addr; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}

int fnv_no_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_ENOSYS;
}

int fnv_no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	(void)ep; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}

int fnv_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		  size_t paramlen)
{
	(void)pep; (void)handle; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}

int fnv_no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep; (void)flags;
	return -FI_ENOSYS;
}

int fnv_no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		struct fid_mc **mc, void *context)
{
	(void)ep; (void)addr; (void)flags; (void)mc; (void)context;
	return -FI_ENOSYS;
}

/* ---- address vectors: no AV sets (they serve collectives) ---- */

int fnv_no_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
		  struct fid_av_set **av_set, void *context)
{
	(void)av; (void)attr; (void)av_set; (void)context;
	return -FI_ENOSYS;
}

/* libfabric's error numbers are errno's for these (fi_errno.h) */
int fnv_errno_to_fi(int err)
{
	switch (-err) {
	case EHOSTUNREACH:	return FI_EHOSTUNREACH;
	case ENOTCONN:		return FI_ENOTCONN;
	case EMSGSIZE:		return FI_EMSGSIZE;
	case ERANGE:		return FI_EINVAL;
	case ENOBUFS:		return FI_ENOBUFS;
	case ETIMEDOUT:		return FI_ETIMEDOUT;
	case EFAULT:		return FI_EFAULT;
	case EADDRINUSE:	return FI_EADDRINUSE;
	case ENOSPC:		return FI_ENOSPC;
	default:		return FI_EIO;
	}
}
