// SPDX-License-Identifier: MIT
/*
 * The data path of a datagram endpoint (FI_MSG).  A send goes out at
 * once: the bytes are copied into the U-Net segment (or the loop-back
 * socket), the NI's verdict is waited for, and the completion (or error
 * completion) is written before the call returns, so every send is also
 * an inject.  Receives are posted in order and filled by progress, which
 * the completion queue's reads drive: each message fills the oldest
 * posted receive, cut to its size (FI_ETRUNC, olen) if larger.
 */
#include <stdint.h>
#include <string.h>

#include "fnv_rdm.h"

/* ---- send ---- */

static ssize_t send_locked(struct fnv_ep *ep, const struct iovec *iov,
			   size_t count, fi_addr_t dest, void *ctx,
			   bool complete)
{
	struct fnv_cqe e = {
		.ctx = ctx, .flags = FI_SEND | FI_MSG, .src = FI_ADDR_NOTAVAIL,
	};
	const void *buf = count ? iov[0].iov_base : NULL;
	size_t len = fnv_iov_total(iov, count);
	struct fnv_addr to;
	int err;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (count > FNV_IOV_MAX)
		return -FI_EINVAL;
	if (len > FNV_MSG_MAX)
		return -FI_EMSGSIZE;
	if (!len)
		return -FI_EINVAL;	/* U-Net carries 1..4096 bytes */
	if (fnv_av_resolve(ep->av, dest, &to))
		return -FI_EINVAL;
	complete = complete && ep->tx_cq;
	if (complete && !fnv_cq_room_locked(ep->tx_cq, 1))
		return -FI_EAGAIN;	/* FI_RM_ENABLED: no overrun */
	if (count > 1) {
		size_t off = 0;

		for (size_t i = 0; i < count; i++) {
			memcpy(ep->bounce + off, iov[i].iov_base,
			       iov[i].iov_len);
			off += iov[i].iov_len;
		}
		buf = ep->bounce;
	}
	err = fnv_wire_send(&ep->w, &to, buf, len);
	if (err)
		FI_WARN(&fnv_prov, FI_LOG_EP_DATA, "send to %u:%u: %d\n",
			to.node, to.port, err);
	if (err && !complete)
		return -fnv_errno_to_fi(err);	/* an inject: say it now */
	if (complete) {
		e.err = err ? fnv_errno_to_fi(err) : 0;
		fnv_cq_push_locked(ep->tx_cq, &e);
	}
	return 0;
}

static bool tx_complete(const struct fnv_ep *ep, uint64_t flags)
{
	return !ep->tx_selective || (flags & FI_COMPLETION);
}

static ssize_t ep_sendv(struct fid_ep *fep, const struct iovec *iov,
			void **desc, size_t count, fi_addr_t dest, void *ctx)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	ssize_t r;

	(void)desc;
	pthread_mutex_lock(&ep->dom->lock);
	r = send_locked(ep, iov, count, dest, ctx,
			tx_complete(ep, ep->tx_op_flags));
	pthread_mutex_unlock(&ep->dom->lock);
	return r;
}

static ssize_t ep_send(struct fid_ep *fep, const void *buf, size_t len,
		       void *desc, fi_addr_t dest, void *ctx)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return ep_sendv(fep, &iov, &desc, 1, dest, ctx);
}

static ssize_t ep_sendmsg(struct fid_ep *fep, const struct fi_msg *msg,
			  uint64_t flags)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	ssize_t r;

	if (flags & (FI_REMOTE_CQ_DATA | FI_MULTI_RECV))
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&ep->dom->lock);
	r = send_locked(ep, msg->msg_iov, msg->iov_count, msg->addr,
			msg->context,
			!(flags & FI_INJECT) && tx_complete(ep, flags));
	pthread_mutex_unlock(&ep->dom->lock);
	return r;
}

static ssize_t ep_inject(struct fid_ep *fep, const void *buf, size_t len,
			 fi_addr_t dest)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	ssize_t r;

	pthread_mutex_lock(&ep->dom->lock);
	r = send_locked(ep, &iov, 1, dest, NULL, false);
	pthread_mutex_unlock(&ep->dom->lock);
	return r;
}

static ssize_t ep_senddata(struct fid_ep *fep, const void *buf, size_t len,
			   void *desc, uint64_t data, fi_addr_t dest,
			   void *ctx)
{
	(void)fep; (void)buf; (void)len; (void)desc; (void)data; (void)dest;
	(void)ctx;
	return -FI_ENOSYS;	/* no remote CQ data (cq_data_size 0) */
}

static ssize_t ep_injectdata(struct fid_ep *fep, const void *buf, size_t len,
			     uint64_t data, fi_addr_t dest)
{
	(void)fep; (void)buf; (void)len; (void)data; (void)dest;
	return -FI_ENOSYS;
}

/* ---- receive ---- */

static ssize_t post_locked(struct fnv_ep *ep, const struct iovec *iov,
			   size_t count, void *ctx, uint64_t flags)
{
	struct fnv_rx *r;

	if (count > FNV_IOV_MAX)
		return -FI_EINVAL;
	if (ep->rx_n == FNV_RX_SIZE)
		return -FI_EAGAIN;
	r = &ep->rx[(ep->rx_head + ep->rx_n) % FNV_RX_SIZE];
	memset(r, 0, sizeof(*r));
	r->ctx = ctx;
	r->iov_count = count;
	memcpy(r->iov, iov, count * sizeof(*iov));
	r->flags = flags;
	ep->rx_n++;
	return 0;
}

static ssize_t ep_recvv(struct fid_ep *fep, const struct iovec *iov,
			void **desc, size_t count, fi_addr_t src, void *ctx)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	ssize_t r;

	(void)desc;
	(void)src;	/* no FI_DIRECTED_RECV: any sender */
	pthread_mutex_lock(&ep->dom->lock);
	r = post_locked(ep, iov, count, ctx, ep->rx_op_flags);
	pthread_mutex_unlock(&ep->dom->lock);
	return r;
}

static ssize_t ep_recv(struct fid_ep *fep, void *buf, size_t len, void *desc,
		       fi_addr_t src, void *ctx)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return ep_recvv(fep, &iov, &desc, 1, src, ctx);
}

static ssize_t ep_recvmsg(struct fid_ep *fep, const struct fi_msg *msg,
			  uint64_t flags)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;
	ssize_t r;

	if (flags & FI_MULTI_RECV)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&ep->dom->lock);
	r = post_locked(ep, msg->msg_iov, msg->iov_count, msg->context, flags);
	pthread_mutex_unlock(&ep->dom->lock);
	return r;
}

/* One message into the oldest posted receive; false if none came. */
static bool take_one_locked(struct fnv_ep *ep)
{
	struct fnv_rx *r = &ep->rx[ep->rx_head];
	bool one = r->iov_count == 1;
	size_t cap = fnv_iov_total(r->iov, r->iov_count), got;
	uint8_t *dst = one ? r->iov[0].iov_base : ep->bounce;
	struct fnv_cqe e = { .ctx = r->ctx, .flags = FI_RECV | FI_MSG };
	uint16_t node, port;
	ssize_t n;

	n = fnv_wire_recv(&ep->w, dst, one ? cap : sizeof(ep->bounce), &node,
			  &port);
	if (n == -FI_EAGAIN)
		return false;
	if (n < 0) {
		e.err = fnv_errno_to_fi((int)n);
		n = 0;
	}
	got = (size_t)n < cap ? (size_t)n : cap;
	if (!one)
		fnv_iov_scatter(r->iov, r->iov_count, 0, ep->bounce, got);
	e.len = got;
	e.buf = r->iov_count ? r->iov[0].iov_base : NULL;
	e.src = e.err ? FI_ADDR_NOTAVAIL : fnv_av_reverse(ep->av, node, port);
	if (e.err)
		FI_WARN(&fnv_prov, FI_LOG_EP_DATA, "receive: error %d\n", e.err);
	if (!e.err && (size_t)n > cap) {
		FI_INFO(&fnv_prov, FI_LOG_EP_DATA,
			"%zd bytes into a %zu-byte receive\n", n, cap);
		e.err = FI_ETRUNC;
		e.olen = (size_t)n - cap;
	}
	ep->rx_head = (ep->rx_head + 1) % FNV_RX_SIZE;
	ep->rx_n--;
	if (ep->rx_cq && (e.err || !ep->rx_selective ||
			  (r->flags & FI_COMPLETION)))
		fnv_cq_push_locked(ep->rx_cq, &e);
	return true;
}

void fnv_ep_progress_locked(struct fnv_ep *ep)
{
	size_t keep = 1;

	if (ep->rdm) {
		fnv_rdm_progress_locked(ep);
		return;
	}
	if (!ep->enabled)
		return;
	/*
	 * Only while the queue can take the completion (FI_RM_ENABLED).  A
	 * queue shared with the sends keeps a quarter of itself (up to 16)
	 * for them: filled with receives, it would refuse the very sends
	 * (acknowledgements, answers) that the reader of those receives
	 * makes next.  The messages wait in U-Net meanwhile.
	 */
	if (ep->rx_cq && ep->rx_cq == ep->tx_cq)
		keep += ep->rx_cq->size / 4 < 16 ? ep->rx_cq->size / 4 : 16;
	while (ep->rx_n && (!ep->rx_cq || fnv_cq_room_locked(ep->rx_cq, keep)) &&
	       take_one_locked(ep))
		;
}

struct fi_ops_msg fnv_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = ep_recv,
	.recvv = ep_recvv,
	.recvmsg = ep_recvmsg,
	.send = ep_send,
	.sendv = ep_sendv,
	.sendmsg = ep_sendmsg,
	.inject = ep_inject,
	.senddata = ep_senddata,
	.injectdata = ep_injectdata,
};
