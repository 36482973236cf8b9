// SPDX-License-Identifier: MIT
/*
 * An endpoint's RMA, tagged, atomic and collective operations, which the
 * provider does not offer (fi_getinfo refuses FI_RMA, FI_TAGGED,
 * FI_ATOMIC and FI_COLLECTIVE): every one returns -FI_ENOSYS.  The tables
 * exist so that ep->rma, ep->tagged, ep->atomic and ep->collective are
 * never NULL: libfabric's inline wrappers (fi_write, fi_tsend, ...) call
 * through them unchecked.  Each stub has its member's exact type.
 */
#include "fnv.h"

/* ---- RMA ---- */

static ssize_t no_rma_read(struct fid_ep *ep, void *buf, size_t len,
			   void *desc, fi_addr_t src_addr, uint64_t addr,
			   uint64_t key, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)src_addr;
	(void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_rma_readv(struct fid_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t src_addr,
			    uint64_t addr, uint64_t key, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)src_addr;
	(void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_rma_msg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			  uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t no_rma_write(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest_addr, uint64_t addr,
			    uint64_t key, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)dest_addr;
	(void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_rma_writev(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest_addr,
			     uint64_t addr, uint64_t key, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)dest_addr;
	(void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_rma_inject(struct fid_ep *ep, const void *buf, size_t len,
			     fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	(void)ep; (void)buf; (void)len; (void)dest_addr; (void)addr;
	(void)key;
	return -FI_ENOSYS;
}

static ssize_t no_rma_writedata(struct fid_ep *ep, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest_addr, uint64_t addr,
				uint64_t key, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)data;
	(void)dest_addr; (void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_rma_injectdata(struct fid_ep *ep, const void *buf,
				 size_t len, uint64_t data,
				 fi_addr_t dest_addr, uint64_t addr,
				 uint64_t key)
{
	(void)ep; (void)buf; (void)len; (void)data; (void)dest_addr;
	(void)addr; (void)key;
	return -FI_ENOSYS;
}

struct fi_ops_rma fnv_no_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = no_rma_read,
	.readv = no_rma_readv,
	.readmsg = no_rma_msg,
	.write = no_rma_write,
	.writev = no_rma_writev,
	.writemsg = no_rma_msg,
	.inject = no_rma_inject,
	.writedata = no_rma_writedata,
	.injectdata = no_rma_injectdata,
};

/* ---- tagged messages ---- */

static ssize_t no_trecv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, uint64_t tag, uint64_t ignore,
			void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)src_addr;
	(void)tag; (void)ignore; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_trecvv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src_addr,
			 uint64_t tag, uint64_t ignore, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)src_addr;
	(void)tag; (void)ignore; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_tmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg,
		       uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t no_tsend(struct fid_ep *ep, const void *buf, size_t len,
			void *desc, fi_addr_t dest_addr, uint64_t tag,
			void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)dest_addr;
	(void)tag; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_tsendv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest_addr,
			 uint64_t tag, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)dest_addr;
	(void)tag; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_tinject(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest_addr, uint64_t tag)
{
	(void)ep; (void)buf; (void)len; (void)dest_addr; (void)tag;
	return -FI_ENOSYS;
}

static ssize_t no_tsenddata(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest_addr,
			    uint64_t tag, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)data;
	(void)dest_addr; (void)tag; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_tinjectdata(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest_addr, uint64_t tag)
{
	(void)ep; (void)buf; (void)len; (void)data; (void)dest_addr;
	(void)tag;
	return -FI_ENOSYS;
}

struct fi_ops_tagged fnv_no_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = no_trecv,
	.recvv = no_trecvv,
	.recvmsg = no_tmsg,
	.send = no_tsend,
	.sendv = no_tsendv,
	.sendmsg = no_tmsg,
	.inject = no_tinject,
	.senddata = no_tsenddata,
	.injectdata = no_tinjectdata,
};

/* ---- atomics ---- */

static ssize_t no_atomic_write(struct fid_ep *ep, const void *buf,
			       size_t count, void *desc, fi_addr_t dest_addr,
			       uint64_t addr, uint64_t key,
			       enum fi_datatype datatype, enum fi_op op,
			       void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)dest_addr;
	(void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov,
				void **desc, size_t count,
				fi_addr_t dest_addr, uint64_t addr,
				uint64_t key, enum fi_datatype datatype,
				enum fi_op op, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)dest_addr;
	(void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_atomic_writemsg(struct fid_ep *ep,
				  const struct fi_msg_atomic *msg,
				  uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t no_atomic_inject(struct fid_ep *ep, const void *buf,
				size_t count, fi_addr_t dest_addr,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op)
{
	(void)ep; (void)buf; (void)count; (void)dest_addr; (void)addr;
	(void)key; (void)datatype; (void)op;
	return -FI_ENOSYS;
}

static ssize_t no_atomic_readwrite(struct fid_ep *ep, const void *buf,
				   size_t count, void *desc, void *result,
				   void *result_desc, fi_addr_t dest_addr,
				   uint64_t addr, uint64_t key,
				   enum fi_datatype datatype, enum fi_op op,
				   void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result;
	(void)result_desc; (void)dest_addr; (void)addr; (void)key;
	(void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_atomic_readwritev(struct fid_ep *ep,
				    const struct fi_ioc *iov, void **desc,
				    size_t count, struct fi_ioc *resultv,
				    void **result_desc, size_t result_count,
				    fi_addr_t dest_addr, uint64_t addr,
				    uint64_t key, enum fi_datatype datatype,
				    enum fi_op op, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)resultv;
	(void)result_desc; (void)result_count; (void)dest_addr; (void)addr;
	(void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_atomic_readwritemsg(struct fid_ep *ep,
				      const struct fi_msg_atomic *msg,
				      struct fi_ioc *resultv,
				      void **result_desc, size_t result_count,
				      uint64_t flags)
{
	(void)ep; (void)msg; (void)resultv; (void)result_desc;
	(void)result_count; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t no_atomic_compwrite(struct fid_ep *ep, const void *buf,
				   size_t count, void *desc,
				   const void *compare, void *compare_desc,
				   void *result, void *result_desc,
				   fi_addr_t dest_addr, uint64_t addr,
				   uint64_t key, enum fi_datatype datatype,
				   enum fi_op op, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)compare;
	(void)compare_desc; (void)result; (void)result_desc;
	(void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op;
	(void)context;
	return -FI_ENOSYS;
}

static ssize_t no_atomic_compwritev(struct fid_ep *ep,
				    const struct fi_ioc *iov, void **desc,
				    size_t count,
				    const struct fi_ioc *comparev,
				    void **compare_desc, size_t compare_count,
				    struct fi_ioc *resultv,
				    void **result_desc, size_t result_count,
				    fi_addr_t dest_addr, uint64_t addr,
				    uint64_t key, enum fi_datatype datatype,
				    enum fi_op op, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)comparev;
	(void)compare_desc; (void)compare_count; (void)resultv;
	(void)result_desc; (void)result_count; (void)dest_addr; (void)addr;
	(void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_atomic_compwritemsg(struct fid_ep *ep,
				      const struct fi_msg_atomic *msg,
				      const struct fi_ioc *comparev,
				      void **compare_desc,
				      size_t compare_count,
				      struct fi_ioc *resultv,
				      void **result_desc, size_t result_count,
				      uint64_t flags)
{
	(void)ep; (void)msg; (void)comparev; (void)compare_desc;
	(void)compare_count; (void)resultv; (void)result_desc;
	(void)result_count; (void)flags;
	return -FI_ENOSYS;
}

/* writevalid, readwritevalid and compwritevalid share one type */
static int no_atomic_valid(struct fid_ep *ep, enum fi_datatype datatype,
			   enum fi_op op, size_t *count)
{
	(void)ep; (void)datatype; (void)op; (void)count;
	return -FI_ENOSYS;
}

struct fi_ops_atomic fnv_no_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = no_atomic_write,
	.writev = no_atomic_writev,
	.writemsg = no_atomic_writemsg,
	.inject = no_atomic_inject,
	.readwrite = no_atomic_readwrite,
	.readwritev = no_atomic_readwritev,
	.readwritemsg = no_atomic_readwritemsg,
	.compwrite = no_atomic_compwrite,
	.compwritev = no_atomic_compwritev,
	.compwritemsg = no_atomic_compwritemsg,
	.writevalid = no_atomic_valid,
	.readwritevalid = no_atomic_valid,
	.compwritevalid = no_atomic_valid,
};

/* ---- collectives ---- */

static ssize_t no_barrier(struct fid_ep *ep, fi_addr_t coll_addr,
			  void *context)
{
	(void)ep; (void)coll_addr; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_broadcast(struct fid_ep *ep, void *buf, size_t count,
			    void *desc, fi_addr_t coll_addr,
			    fi_addr_t root_addr, enum fi_datatype datatype,
			    uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)coll_addr;
	(void)root_addr; (void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}

/* alltoall and allgather share one type */
static ssize_t no_all(struct fid_ep *ep, const void *buf, size_t count,
		      void *desc, void *result, void *result_desc,
		      fi_addr_t coll_addr, enum fi_datatype datatype,
		      uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result;
	(void)result_desc; (void)coll_addr; (void)datatype; (void)flags;
	(void)context;
	return -FI_ENOSYS;
}

/* allreduce and reduce_scatter share one type */
static ssize_t no_allreduce(struct fid_ep *ep, const void *buf, size_t count,
			    void *desc, void *result, void *result_desc,
			    fi_addr_t coll_addr, enum fi_datatype datatype,
			    enum fi_op op, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result;
	(void)result_desc; (void)coll_addr; (void)datatype; (void)op;
	(void)flags; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_reduce(struct fid_ep *ep, const void *buf, size_t count,
			 void *desc, void *result, void *result_desc,
			 fi_addr_t coll_addr, fi_addr_t root_addr,
			 enum fi_datatype datatype, enum fi_op op,
			 uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result;
	(void)result_desc; (void)coll_addr; (void)root_addr;
	(void)datatype; (void)op; (void)flags; (void)context;
	return -FI_ENOSYS;
}

/* scatter and gather share one type */
static ssize_t no_rooted(struct fid_ep *ep, const void *buf, size_t count,
			 void *desc, void *result, void *result_desc,
			 fi_addr_t coll_addr, fi_addr_t root_addr,
			 enum fi_datatype datatype, uint64_t flags,
			 void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result;
	(void)result_desc; (void)coll_addr; (void)root_addr;
	(void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_coll_msg(struct fid_ep *ep,
			   const struct fi_msg_collective *msg,
			   struct fi_ioc *resultv, void **result_desc,
			   size_t result_count, uint64_t flags)
{
	(void)ep; (void)msg; (void)resultv; (void)result_desc;
	(void)result_count; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t no_barrier2(struct fid_ep *ep, fi_addr_t coll_addr,
			   uint64_t flags, void *context)
{
	(void)ep; (void)coll_addr; (void)flags; (void)context;
	return -FI_ENOSYS;
}

struct fi_ops_collective fnv_no_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = no_barrier,
	.broadcast = no_broadcast,
	.alltoall = no_all,
	.allreduce = no_allreduce,
	.allgather = no_all,
	.reduce_scatter = no_allreduce,
	.reduce = no_reduce,
	.scatter = no_rooted,
	.gather = no_rooted,
	.msg = no_coll_msg,
	.barrier2 = no_barrier2,
};
