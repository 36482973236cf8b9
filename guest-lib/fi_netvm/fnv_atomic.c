// SPDX-License-Identifier: MIT
/*
 * Atomics on an RDM endpoint, on what the NIC does: 32-bit words
 * (FI_INT32, FI_UINT32; other types -FI_EOPNOTSUPP, as fi_query_atomic
 * says).  FI_ATOMIC_WRITE is NetVM's swap, FI_CSWAP its compare-and-swap,
 * FI_ATOMIC_READ a compare-and-swap that changes nothing; every other
 * operation (sums, products, minima, maxima, logic and bit operations,
 * the conditional swaps and FI_MSWAP) is a compare-and-swap loop: guess
 * the old value, swap in the result if the guess was right, else guess
 * what came back.  Each element is atomic; an operation on several
 * elements is not, as libfabric allows.  Synchronous like RMA
 * (fnv_rma.c), with its errors.
 */
#include <string.h>

#include "fnv_nvm.h"

#define ATOMIC_MAX	64	/* elements per operation */
#define CAS_TRIES	1000	/* then FI_EBUSY: the word never held still */

enum kind { A_WRITE, A_FETCH, A_COMPARE };

static bool valid(enum kind k, enum fi_datatype dt, enum fi_op op)
{
	if (dt != FI_INT32 && dt != FI_UINT32)
		return false;
	switch (op) {
	case FI_MIN: case FI_MAX: case FI_SUM: case FI_PROD: case FI_LOR:
	case FI_LAND: case FI_BOR: case FI_BAND: case FI_LXOR: case FI_BXOR:
	case FI_ATOMIC_WRITE:
		return k != A_COMPARE;
	case FI_ATOMIC_READ:
		return k == A_FETCH;
	case FI_CSWAP: case FI_CSWAP_NE: case FI_CSWAP_LE: case FI_CSWAP_LT:
	case FI_CSWAP_GE: case FI_CSWAP_GT: case FI_MSWAP:
		return k == A_COMPARE;
	default:
		return false;
	}
}

/* less than, as the datatype compares */
static bool lt(enum fi_datatype dt, uint32_t a, uint32_t b)
{
	return dt == FI_INT32 ? (int32_t)a < (int32_t)b : a < b;
}

/* The word after op on old, with operand v and compare c. */
static uint32_t apply(enum fi_op op, enum fi_datatype dt, uint32_t old,
		      uint32_t v, uint32_t c)
{
	switch (op) {
	case FI_MIN:	return lt(dt, v, old) ? v : old;
	case FI_MAX:	return lt(dt, old, v) ? v : old;
	case FI_SUM:	return old + v;
	case FI_PROD:	return old * v;
	case FI_LOR:	return (old || v) ? 1 : 0;
	case FI_LAND:	return (old && v) ? 1 : 0;
	case FI_BOR:	return old | v;
	case FI_BAND:	return old & v;
	case FI_LXOR:	return (!old != !v) ? 1 : 0;
	case FI_BXOR:	return old ^ v;
	case FI_CSWAP_NE: return c != old ? v : old;
	case FI_CSWAP_LE: return !lt(dt, old, c) ? v : old;	/* c <= old */
	case FI_CSWAP_LT: return lt(dt, c, old) ? v : old;
	case FI_CSWAP_GE: return !lt(dt, c, old) ? v : old;	/* c >= old */
	case FI_CSWAP_GT: return lt(dt, old, c) ? v : old;
	case FI_MSWAP:	return (v & c) | (old & ~c);
	default:	return old;	/* FI_ATOMIC_READ */
	}
}

static int element(struct fnv_domain *d, uint16_t node, uint64_t key,
		   uint64_t off, enum fi_op op, enum fi_datatype dt,
		   uint32_t v, uint32_t c, uint32_t *old)
{
	uint32_t guess = 0;

	if (op == FI_ATOMIC_WRITE)
		return fnv_nvm_swap_locked(d, node, key, off, v, old);
	if (op == FI_CSWAP)
		return fnv_nvm_cswap_locked(d, node, key, off, c, v, old);
	for (int i = 0; i < CAS_TRIES; i++) {
		int err = fnv_nvm_cswap_locked(d, node, key, off, guess,
					       apply(op, dt, guess, v, c), old);

		if (err || *old == guess)
			return err;
		guess = *old;
	}
	return -EBUSY;
}

struct atomic {
	enum kind kind;
	const uint32_t *buf, *compare;
	uint32_t *result;
	size_t count;
	fi_addr_t dest;
	uint64_t addr, key;
	enum fi_datatype dt;
	enum fi_op op;
	void *ctx;
	bool complete, inject;
};

static ssize_t atomic_locked(struct fnv_ep *ep, const struct atomic *o)
{
	struct fnv_cqe e = {
		.ctx = o->ctx, .src = FI_ADDR_NOTAVAIL,
		.flags = FI_ATOMIC | (o->kind == A_WRITE ? FI_WRITE : FI_READ),
	};
	struct fnv_addr a;
	int err = 0;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!ep->dom->prov_key)
		return -FI_ENOSYS;
	if (!valid(o->kind, o->dt, o->op))
		return -FI_EOPNOTSUPP;
	if (!o->count || o->count > ATOMIC_MAX ||
	    (o->op != FI_ATOMIC_READ && !o->buf))
		return -FI_EINVAL;
	if (fnv_av_resolve(ep->av, o->dest, &a))
		return -FI_EINVAL;
	if (!o->inject && ep->tx_cq && !fnv_cq_room_locked(ep->tx_cq, 1))
		return -FI_EAGAIN;
	for (size_t i = 0; i < o->count && !err; i++) {
		uint32_t v = o->buf ? o->buf[i] : 0, old;

		err = element(ep->dom, a.node, o->key, o->addr + 4 * i, o->op,
			      o->dt, v, o->compare ? o->compare[i] : 0, &old);
		if (!err && o->result)
			o->result[i] = old;
	}
	if (err && o->inject)
		return -fnv_nvm_fi_err(err);	/* refused: not counted */
	e.err = err == -EBUSY ? FI_EBUSY : err ? fnv_nvm_fi_err(err) : 0;
	e.len = err ? 0 : o->count * sizeof(uint32_t);
	if (ep->tx_cq && (err || o->complete))
		fnv_cq_push_locked(ep->tx_cq, &e);
	fnv_cntr_count_locked(o->kind == A_WRITE ? ep->cntr_write :
			      ep->cntr_read, e.err);
	return 0;
}

static ssize_t call(struct fid_ep *fep, struct atomic *o, uint64_t flags)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	ssize_t r;

	pthread_mutex_lock(&ep->dom->lock);
	o->complete = !o->inject &&
		      (!ep->tx_selective || (flags & FI_COMPLETION));
	r = atomic_locked(ep, o);
	pthread_mutex_unlock(&ep->dom->lock);
	return r;
}

static uint64_t op_flags(struct fid_ep *fep)
{
	return ((struct fnv_ep *)fep)->tx_op_flags;
}

/* ---- FI_ATOMIC writes ---- */

static ssize_t a_write(struct fid_ep *fep, const void *buf, size_t count,
		       void *desc, fi_addr_t dest, uint64_t addr, uint64_t key,
		       enum fi_datatype dt, enum fi_op op, void *ctx)
{
	struct atomic o = {
		.kind = A_WRITE, .buf = buf, .count = count, .dest = dest,
		.addr = addr, .key = key, .dt = dt, .op = op, .ctx = ctx,
	};

	(void)desc;
	return call(fep, &o, op_flags(fep));
}

static ssize_t a_writev(struct fid_ep *fep, const struct fi_ioc *iov,
			void **desc, size_t count, fi_addr_t dest,
			uint64_t addr, uint64_t key, enum fi_datatype dt,
			enum fi_op op, void *ctx)
{
	if (count != 1)
		return -FI_EINVAL;
	return a_write(fep, iov[0].addr, iov[0].count, desc ? desc[0] : NULL,
		       dest, addr, key, dt, op, ctx);
}

/* one local and one remote piece: iov_limit and rma_iov_limit 1 */
static bool one_piece(const struct fi_msg_atomic *m)
{
	return m->iov_count == 1 && m->rma_iov_count == 1 &&
	       m->rma_iov[0].count == m->msg_iov[0].count;
}

/* The operation a one_piece() message describes (the *msg calls). */
static struct atomic from_msg(enum kind kind, const struct fi_msg_atomic *m)
{
	struct atomic o = {
		.kind = kind, .buf = m->msg_iov[0].addr,
		.count = m->msg_iov[0].count, .dest = m->addr,
		.addr = m->rma_iov[0].addr, .key = m->rma_iov[0].key,
		.dt = m->datatype, .op = m->op, .ctx = m->context,
	};

	return o;
}

static ssize_t a_writemsg(struct fid_ep *fep, const struct fi_msg_atomic *m,
			  uint64_t flags)
{
	struct atomic o;

	if (!one_piece(m))
		return -FI_EINVAL;
	o = from_msg(A_WRITE, m);
	o.inject = flags & FI_INJECT;
	return call(fep, &o, flags);
}

static ssize_t a_inject(struct fid_ep *fep, const void *buf, size_t count,
			fi_addr_t dest, uint64_t addr, uint64_t key,
			enum fi_datatype dt, enum fi_op op)
{
	struct atomic o = {
		.kind = A_WRITE, .buf = buf, .count = count, .dest = dest,
		.addr = addr, .key = key, .dt = dt, .op = op, .inject = true,
	};

	return call(fep, &o, 0);
}

/* ---- fetching ---- */

static ssize_t a_readwrite(struct fid_ep *fep, const void *buf, size_t count,
			   void *desc, void *result, void *result_desc,
			   fi_addr_t dest, uint64_t addr, uint64_t key,
			   enum fi_datatype dt, enum fi_op op, void *ctx)
{
	struct atomic o = {
		.kind = A_FETCH, .buf = buf, .result = result, .count = count,
		.dest = dest, .addr = addr, .key = key, .dt = dt, .op = op,
		.ctx = ctx,
	};

	(void)desc; (void)result_desc;
	if (!result)
		return -FI_EINVAL;
	return call(fep, &o, op_flags(fep));
}

static ssize_t a_readwritev(struct fid_ep *fep, const struct fi_ioc *iov,
			    void **desc, size_t count, struct fi_ioc *resultv,
			    void **result_desc, size_t result_count,
			    fi_addr_t dest, uint64_t addr, uint64_t key,
			    enum fi_datatype dt, enum fi_op op, void *ctx)
{
	(void)desc; (void)result_desc;
	if (count != 1 || result_count != 1 ||
	    resultv[0].count != iov[0].count)
		return -FI_EINVAL;
	return a_readwrite(fep, iov[0].addr, iov[0].count, NULL,
			   resultv[0].addr, NULL, dest, addr, key, dt, op, ctx);
}

static ssize_t a_readwritemsg(struct fid_ep *fep,
			      const struct fi_msg_atomic *m,
			      struct fi_ioc *resultv, void **result_desc,
			      size_t result_count, uint64_t flags)
{
	struct atomic o;

	(void)result_desc;
	if (!one_piece(m) || result_count != 1 ||
	    resultv[0].count != m->msg_iov[0].count || !resultv[0].addr ||
	    (flags & FI_INJECT))
		return -FI_EINVAL;
	o = from_msg(A_FETCH, m);
	o.result = resultv[0].addr;
	return call(fep, &o, flags);
}

/* ---- comparing ---- */

static ssize_t a_compwrite(struct fid_ep *fep, const void *buf, size_t count,
			   void *desc, const void *compare, void *compare_desc,
			   void *result, void *result_desc, fi_addr_t dest,
			   uint64_t addr, uint64_t key, enum fi_datatype dt,
			   enum fi_op op, void *ctx)
{
	struct atomic o = {
		.kind = A_COMPARE, .buf = buf, .compare = compare,
		.result = result, .count = count, .dest = dest, .addr = addr,
		.key = key, .dt = dt, .op = op, .ctx = ctx,
	};

	(void)desc; (void)compare_desc; (void)result_desc;
	if (!compare || !result)
		return -FI_EINVAL;
	return call(fep, &o, op_flags(fep));
}

static ssize_t a_compwritev(struct fid_ep *fep, const struct fi_ioc *iov,
			    void **desc, size_t count,
			    const struct fi_ioc *comparev, void **compare_desc,
			    size_t compare_count, struct fi_ioc *resultv,
			    void **result_desc, size_t result_count,
			    fi_addr_t dest, uint64_t addr, uint64_t key,
			    enum fi_datatype dt, enum fi_op op, void *ctx)
{
	(void)desc; (void)compare_desc; (void)result_desc;
	if (count != 1 || compare_count != 1 || result_count != 1 ||
	    comparev[0].count != iov[0].count ||
	    resultv[0].count != iov[0].count)
		return -FI_EINVAL;
	return a_compwrite(fep, iov[0].addr, iov[0].count, NULL,
			   comparev[0].addr, NULL, resultv[0].addr, NULL, dest,
			   addr, key, dt, op, ctx);
}

static ssize_t a_compwritemsg(struct fid_ep *fep,
			      const struct fi_msg_atomic *m,
			      const struct fi_ioc *comparev,
			      void **compare_desc, size_t compare_count,
			      struct fi_ioc *resultv, void **result_desc,
			      size_t result_count, uint64_t flags)
{
	struct atomic o;

	(void)compare_desc; (void)result_desc;
	if (!one_piece(m) || compare_count != 1 || result_count != 1 ||
	    comparev[0].count != m->msg_iov[0].count ||
	    resultv[0].count != m->msg_iov[0].count || !comparev[0].addr ||
	    !resultv[0].addr || (flags & FI_INJECT))
		return -FI_EINVAL;
	o = from_msg(A_COMPARE, m);
	o.compare = comparev[0].addr;
	o.result = resultv[0].addr;
	return call(fep, &o, flags);
}

/* ---- what is valid ---- */

static int is_valid(enum kind k, enum fi_datatype dt, enum fi_op op,
		    size_t *count)
{
	if (!valid(k, dt, op))
		return -FI_EOPNOTSUPP;
	if (count)
		*count = ATOMIC_MAX;
	return 0;
}

static int a_writevalid(struct fid_ep *fep, enum fi_datatype dt,
			enum fi_op op, size_t *count)
{
	(void)fep;
	return is_valid(A_WRITE, dt, op, count);
}

static int a_readwritevalid(struct fid_ep *fep, enum fi_datatype dt,
			    enum fi_op op, size_t *count)
{
	(void)fep;
	return is_valid(A_FETCH, dt, op, count);
}

static int a_compwritevalid(struct fid_ep *fep, enum fi_datatype dt,
			    enum fi_op op, size_t *count)
{
	(void)fep;
	return is_valid(A_COMPARE, dt, op, count);
}

int fnv_query_atomic(struct fid_domain *domain, enum fi_datatype dt,
		     enum fi_op op, struct fi_atomic_attr *attr,
		     uint64_t flags)
{
	enum kind k = flags & FI_COMPARE_ATOMIC ? A_COMPARE :
		      flags & FI_FETCH_ATOMIC ? A_FETCH : A_WRITE;

	if (!((struct fnv_domain *)domain)->prov_key)
		return -FI_ENOSYS;	/* its fi_info had no FI_ATOMIC */
	if (flags & ~(FI_COMPARE_ATOMIC | FI_FETCH_ATOMIC) || !attr)
		return -FI_EINVAL;
	if (!valid(k, dt, op))
		return -FI_EOPNOTSUPP;
	attr->count = ATOMIC_MAX;
	attr->size = sizeof(uint32_t);
	return 0;
}

struct fi_ops_atomic fnv_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = a_write,
	.writev = a_writev,
	.writemsg = a_writemsg,
	.inject = a_inject,
	.readwrite = a_readwrite,
	.readwritev = a_readwritev,
	.readwritemsg = a_readwritemsg,
	.compwrite = a_compwrite,
	.compwritev = a_compwritev,
	.compwritemsg = a_compwritemsg,
	.writevalid = a_writevalid,
	.readwritevalid = a_readwritevalid,
	.compwritevalid = a_compwritevalid,
};
