// SPDX-License-Identifier: MIT
/*
 * The API of an RDM endpoint: fi_ops_msg and fi_ops_tagged, each call
 * taking the domain lock and handing on to fnv_rdm_link.c (sends) or
 * fnv_rdm_match.c (receives).  Remote CQ data (8 bytes) travels right
 * after the header, only when there is some.  Sends up to one U-Net message copy the bytes (an inject is
 * one of those); larger ones go by rendezvous (fnv_rdm_rdv.c).
 */
#include "fnv_rdm.h"

#define TX_FLAGS	(FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | \
			 FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
			 FI_INJECT_COMPLETE | FI_FENCE)
#define RX_FLAGS	(FI_COMPLETION | FI_PEEK | FI_CLAIM | FI_DISCARD)

struct tx {
	uint8_t type;
	const struct iovec *iov;
	size_t count;
	fi_addr_t dest;
	uint64_t tag, data;
	bool has_data;
	void *ctx;
	bool complete;
	bool inject;		/* the buffer is free on return: eager only */
};

static ssize_t tx_locked_call(struct fid_ep *fep, const struct tx *t)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	ssize_t r;

	if (t->inject && fnv_iov_total(t->iov, t->count) > FNV_RDM_MSG_MAX)
		return -FI_EMSGSIZE;	/* inject_size */
	pthread_mutex_lock(&ep->dom->lock);
	r = fnv_rdm_send_locked(ep, t->type, t->iov, t->count, t->dest,
				t->tag, t->data, t->has_data, t->ctx,
				t->complete);
	if (r == -FI_EAGAIN)
		fnv_rdm_progress_locked(ep);	/* acks free the window */
	pthread_mutex_unlock(&ep->dom->lock);
	return r;
}

static bool tx_complete(const struct fnv_ep *ep, uint64_t flags)
{
	return !(flags & FI_INJECT) &&
	       (!ep->tx_selective || (flags & FI_COMPLETION));
}

static ssize_t rx_call(struct fid_ep *fep, bool tagged,
		       const struct iovec *iov, size_t count, fi_addr_t src,
		       uint64_t tag, uint64_t ignore, void *ctx,
		       uint64_t flags)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	ssize_t r;

	pthread_mutex_lock(&ep->dom->lock);
	r = fnv_rdm_post_locked(ep, tagged, iov, count, src, tag, ignore, ctx,
				flags);
	pthread_mutex_unlock(&ep->dom->lock);
	return r;
}

/* ---- FI_MSG ---- */

static ssize_t m_sendv(struct fid_ep *fep, const struct iovec *iov,
		       void **desc, size_t count, fi_addr_t dest, void *ctx)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	struct tx t = {
		.type = FNV_RDM_MSG, .iov = iov, .count = count, .dest = dest,
		.ctx = ctx, .complete = tx_complete(ep, ep->tx_op_flags),
	};

	(void)desc;
	return tx_locked_call(fep, &t);
}

static ssize_t m_send(struct fid_ep *fep, const void *buf, size_t len,
		      void *desc, fi_addr_t dest, void *ctx)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return m_sendv(fep, &iov, &desc, 1, dest, ctx);
}

static ssize_t m_sendmsg(struct fid_ep *fep, const struct fi_msg *msg,
			 uint64_t flags)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	struct tx t = {
		.type = FNV_RDM_MSG, .iov = msg->msg_iov,
		.count = msg->iov_count, .dest = msg->addr,
		.data = msg->data, .has_data = flags & FI_REMOTE_CQ_DATA,
		.ctx = msg->context, .complete = tx_complete(ep, flags),
		.inject = flags & FI_INJECT,
	};

	if (flags & ~TX_FLAGS)
		return -FI_EBADFLAGS;
	return tx_locked_call(fep, &t);
}

static ssize_t m_senddata(struct fid_ep *fep, const void *buf, size_t len,
			  void *desc, uint64_t data, fi_addr_t dest, void *ctx)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct tx t = {
		.type = FNV_RDM_MSG, .iov = &iov, .count = 1, .dest = dest,
		.data = data, .has_data = true, .ctx = ctx,
		.complete = tx_complete(ep, ep->tx_op_flags),
	};

	(void)desc;
	return tx_locked_call(fep, &t);
}

static ssize_t m_inject(struct fid_ep *fep, const void *buf, size_t len,
			fi_addr_t dest)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct tx t = {
		.type = FNV_RDM_MSG, .iov = &iov, .count = 1, .dest = dest,
		.inject = true,
	};

	return tx_locked_call(fep, &t);
}

static ssize_t m_injectdata(struct fid_ep *fep, const void *buf, size_t len,
			    uint64_t data, fi_addr_t dest)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct tx t = {
		.type = FNV_RDM_MSG, .iov = &iov, .count = 1, .dest = dest,
		.data = data, .has_data = true, .inject = true,
	};

	return tx_locked_call(fep, &t);
}

static ssize_t m_recvv(struct fid_ep *fep, const struct iovec *iov,
		       void **desc, size_t count, fi_addr_t src, void *ctx)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;

	(void)desc;
	return rx_call(fep, false, iov, count, src, 0, 0, ctx,
		       ep->rx_op_flags);
}

static ssize_t m_recv(struct fid_ep *fep, void *buf, size_t len, void *desc,
		      fi_addr_t src, void *ctx)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return m_recvv(fep, &iov, &desc, 1, src, ctx);
}

static ssize_t m_recvmsg(struct fid_ep *fep, const struct fi_msg *msg,
			 uint64_t flags)
{
	if (flags & ~FI_COMPLETION)
		return -FI_EBADFLAGS;	/* no FI_MULTI_RECV */
	return rx_call(fep, false, msg->msg_iov, msg->iov_count, msg->addr, 0,
		       0, msg->context, flags);
}

struct fi_ops_msg fnv_rdm_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = m_recv,
	.recvv = m_recvv,
	.recvmsg = m_recvmsg,
	.send = m_send,
	.sendv = m_sendv,
	.sendmsg = m_sendmsg,
	.inject = m_inject,
	.senddata = m_senddata,
	.injectdata = m_injectdata,
};

/* ---- FI_TAGGED ---- */

static ssize_t t_sendv(struct fid_ep *fep, const struct iovec *iov,
		       void **desc, size_t count, fi_addr_t dest, uint64_t tag,
		       void *ctx)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	struct tx t = {
		.type = FNV_RDM_TAGGED, .iov = iov, .count = count,
		.dest = dest, .tag = tag, .ctx = ctx,
		.complete = tx_complete(ep, ep->tx_op_flags),
	};

	(void)desc;
	return tx_locked_call(fep, &t);
}

static ssize_t t_send(struct fid_ep *fep, const void *buf, size_t len,
		      void *desc, fi_addr_t dest, uint64_t tag, void *ctx)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return t_sendv(fep, &iov, &desc, 1, dest, tag, ctx);
}

static ssize_t t_sendmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg,
			 uint64_t flags)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	struct tx t = {
		.type = FNV_RDM_TAGGED, .iov = msg->msg_iov,
		.count = msg->iov_count, .dest = msg->addr, .tag = msg->tag,
		.data = msg->data, .has_data = flags & FI_REMOTE_CQ_DATA,
		.ctx = msg->context, .complete = tx_complete(ep, flags),
		.inject = flags & FI_INJECT,
	};

	if (flags & ~TX_FLAGS)
		return -FI_EBADFLAGS;
	return tx_locked_call(fep, &t);
}

static ssize_t t_senddata(struct fid_ep *fep, const void *buf, size_t len,
			  void *desc, uint64_t data, fi_addr_t dest,
			  uint64_t tag, void *ctx)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct tx t = {
		.type = FNV_RDM_TAGGED, .iov = &iov, .count = 1, .dest = dest,
		.tag = tag, .data = data, .has_data = true, .ctx = ctx,
		.complete = tx_complete(ep, ep->tx_op_flags),
	};

	(void)desc;
	return tx_locked_call(fep, &t);
}

static ssize_t t_inject(struct fid_ep *fep, const void *buf, size_t len,
			fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct tx t = {
		.type = FNV_RDM_TAGGED, .iov = &iov, .count = 1, .dest = dest,
		.tag = tag, .inject = true,
	};

	return tx_locked_call(fep, &t);
}

static ssize_t t_injectdata(struct fid_ep *fep, const void *buf, size_t len,
			    uint64_t data, fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct tx t = {
		.type = FNV_RDM_TAGGED, .iov = &iov, .count = 1, .dest = dest,
		.tag = tag, .data = data, .has_data = true, .inject = true,
	};

	return tx_locked_call(fep, &t);
}

static ssize_t t_recvv(struct fid_ep *fep, const struct iovec *iov,
		       void **desc, size_t count, fi_addr_t src, uint64_t tag,
		       uint64_t ignore, void *ctx)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;

	(void)desc;
	return rx_call(fep, true, iov, count, src, tag, ignore, ctx,
		       ep->rx_op_flags);
}

static ssize_t t_recv(struct fid_ep *fep, void *buf, size_t len, void *desc,
		      fi_addr_t src, uint64_t tag, uint64_t ignore, void *ctx)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return t_recvv(fep, &iov, &desc, 1, src, tag, ignore, ctx);
}

static ssize_t t_recvmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg,
			 uint64_t flags)
{
	if (flags & ~RX_FLAGS)
		return -FI_EBADFLAGS;
	return rx_call(fep, true, msg->msg_iov, msg->iov_count, msg->addr,
		       msg->tag, msg->ignore, msg->context, flags);
}

struct fi_ops_tagged fnv_rdm_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = t_recv,
	.recvv = t_recvv,
	.recvmsg = t_recvmsg,
	.send = t_send,
	.sendv = t_sendv,
	.sendmsg = t_sendmsg,
	.inject = t_inject,
	.senddata = t_senddata,
	.injectdata = t_injectdata,
};
