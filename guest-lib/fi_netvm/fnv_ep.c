// SPDX-License-Identifier: MIT
/*
 * Endpoints, datagram and RDM: opened, bound to an address vector and
 * completion queues, enabled (which opens the U-Net endpoint below:
 * fnv_wire.c), named (fi_getname) and closed.  The data path is fnv_msg.c
 * (FI_EP_DGRAM) and fnv_rdm_*.c (FI_EP_RDM).
 */
#include <stdlib.h>
#include <string.h>

#include "fnv_rdm.h"

/* The counters bound, by the flag each counts for. */
#define CNTR_KINDS	4
static const uint64_t cntr_flag[CNTR_KINDS] = {
	FI_SEND, FI_RECV, FI_READ, FI_WRITE
};

static struct fnv_cntr **cntr_slot(struct fnv_ep *ep, int kind)
{
	struct fnv_cntr **slot[CNTR_KINDS] = {
		&ep->cntr_send, &ep->cntr_recv, &ep->cntr_read, &ep->cntr_write
	};

	return slot[kind];
}

static void detach_cntrs_locked(struct fnv_ep *ep)
{
	/* one attachment per counter, however many kinds it counts */
	for (int k = 0; k < CNTR_KINDS; k++)
		if (*cntr_slot(ep, k))
			fnv_cntr_detach_locked(*cntr_slot(ep, k), ep);
}

static int ep_close(struct fid *fid)
{
	struct fnv_ep *ep = (struct fnv_ep *)fid;
	struct fnv_domain *d = ep->dom;

	pthread_mutex_lock(&d->lock);
	/* one attachment per queue, however many directions it serves */
	if (ep->tx_cq)
		fnv_cq_detach_locked(ep->tx_cq, ep);
	if (ep->rx_cq)
		fnv_cq_detach_locked(ep->rx_cq, ep);
	if (ep->av)
		ep->av->refs--;
	detach_cntrs_locked(ep);
	if (ep->enabled && ep->rdm) {
		fnv_rdm_flush_acks_locked(ep);	/* deferred ones too */
		(void)netvm_unet_flush(ep->w.u, 1000);	/* the last acks out */
	}
	if (ep->enabled)
		fnv_wire_close(&ep->w);
	fnv_rdm_fini(ep);
	d->refs--;
	pthread_mutex_unlock(&d->lock);
	free(ep);
	return 0;
}

static int bind_cq_locked(struct fnv_ep *ep, struct fnv_cq *cq,
			  uint64_t flags)
{
	int err;

	if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION) ||
	    !(flags & (FI_TRANSMIT | FI_RECV)))
		return -FI_EBADFLAGS;
	if (((flags & FI_TRANSMIT) && ep->tx_cq) ||
	    ((flags & FI_RECV) && ep->rx_cq))
		return -FI_EINVAL;
	err = fnv_cq_attach_locked(cq, ep);
	if (err)
		return err;
	if (flags & FI_TRANSMIT) {
		ep->tx_cq = cq;
		ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
	}
	if (flags & FI_RECV) {
		ep->rx_cq = cq;
		ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
	}
	return 0;
}

static int bind_cntr_locked(struct fnv_ep *ep, struct fnv_cntr *c,
			    uint64_t flags)
{
	int err;

	/* NetVM tells a target nothing: no FI_REMOTE_READ, FI_REMOTE_WRITE
	 * (nor FI_RMA_EVENT in fi_info) */
	if (!flags || (flags & ~(FI_SEND | FI_RECV | FI_READ | FI_WRITE)))
		return -FI_EBADFLAGS;
	if (c->dom != ep->dom)
		return -FI_EINVAL;	/* counted under another lock */
	for (int k = 0; k < CNTR_KINDS; k++)
		if ((flags & cntr_flag[k]) && *cntr_slot(ep, k))
			return -FI_EINVAL;	/* one counter per kind */
	err = fnv_cntr_attach_locked(c, ep);
	if (err)
		return err;
	for (int k = 0; k < CNTR_KINDS; k++)
		if (flags & cntr_flag[k])
			*cntr_slot(ep, k) = c;
	return 0;
}

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fnv_ep *ep = (struct fnv_ep *)fid;
	int err = 0;

	pthread_mutex_lock(&ep->dom->lock);
	if (ep->enabled) {
		err = -FI_EOPBADSTATE;
	} else if (bfid->fclass == FI_CLASS_CQ) {
		err = bind_cq_locked(ep, (struct fnv_cq *)bfid, flags);
	} else if (bfid->fclass == FI_CLASS_AV) {
		if (ep->av || flags)
			err = -FI_EINVAL;
		else {
			ep->av = (struct fnv_av *)bfid;
			ep->av->refs++;
		}
	} else if (bfid->fclass == FI_CLASS_EQ) {
		err = 0;	/* no connection events on datagrams */
	} else if (bfid->fclass == FI_CLASS_CNTR && ep->rdm) {
		err = bind_cntr_locked(ep, (struct fnv_cntr *)bfid, flags);
	} else {
		err = -FI_ENOSYS;	/* counters on datagram endpoints */
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return err;
}

static int ep_control(struct fid *fid, int command, void *arg)
{
	struct fnv_ep *ep = (struct fnv_ep *)fid;
	int err;

	switch (command) {
	case FI_ENABLE:
		break;
	case FI_GETOPSFLAG:
		if (!arg)
			return -FI_EINVAL;
		*(uint64_t *)arg = (*(uint64_t *)arg & FI_TRANSMIT) ?
				   ep->tx_op_flags : ep->rx_op_flags;
		return 0;
	case FI_SETOPSFLAG: {
		uint64_t f = arg ? *(uint64_t *)arg : 0;

		if (f & FI_TRANSMIT)
			ep->tx_op_flags = f & ~(FI_TRANSMIT | FI_RECV);
		else
			ep->rx_op_flags = f & ~(FI_TRANSMIT | FI_RECV);
		return 0;
	}
	default:
		return -FI_ENOSYS;
	}
	pthread_mutex_lock(&ep->dom->lock);
	if (ep->enabled)
		err = 0;
	else if (!ep->av || (!ep->tx_cq && !ep->rx_cq))
		err = -FI_ENOCQ;	/* nothing to report to, nowhere to send */
	else
		err = fnv_wire_open(&ep->w, ep->dom);
	if (!err) {
		ep->enabled = true;
		ep->w.lo_lossy = ep->rdm != NULL;
	}
	else if (err != -FI_ENOCQ)
		err = err == -EBUSY || err == -ENOSPC ? -FI_EBUSY : -FI_EIO;
	pthread_mutex_unlock(&ep->dom->lock);
	return err;
}

static int ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct fnv_ep *ep = (struct fnv_ep *)fid;
	struct fnv_addr a = { .magic = FNV_ADDR_MAGIC };
	size_t cap = *addrlen;

	pthread_mutex_lock(&ep->dom->lock);
	if (!ep->enabled) {
		/* the port is known once the U-Net endpoint exists */
		pthread_mutex_unlock(&ep->dom->lock);
		return -FI_EOPBADSTATE;
	}
	a.node = ep->w.node;
	a.port = ep->w.port;
	a.nic = ep->w.nic;
	pthread_mutex_unlock(&ep->dom->lock);
	*addrlen = sizeof(a);
	if (cap < sizeof(a))
		return -FI_ETOOSMALL;
	memcpy(addr, &a, sizeof(a));
	return 0;
}

static int ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid; (void)addr; (void)addrlen;
	return -FI_ENOSYS;	/* the driver gives the port */
}

static ssize_t ep_cancel(fid_t fid, void *context)
{
	struct fnv_ep *ep = (struct fnv_ep *)fid;
	ssize_t r = -FI_ENOENT;

	pthread_mutex_lock(&ep->dom->lock);
	if (ep->rdm) {
		r = fnv_rdm_cancel_locked(ep, context);
		pthread_mutex_unlock(&ep->dom->lock);
		return r;
	}
	for (size_t i = 0; i < ep->rx_n; i++) {
		size_t k = (ep->rx_head + i) % FNV_RX_SIZE;
		struct fnv_cqe e = {
			.ctx = context, .flags = FI_RECV | FI_MSG,
			.src = FI_ADDR_NOTAVAIL, .err = FI_ECANCELED,
		};

		if (ep->rx[k].ctx != context)
			continue;
		if (ep->rx_cq && !fnv_cq_room_locked(ep->rx_cq, 1)) {
			r = -FI_EAGAIN;
			break;
		}
		/* keep the others in order: shift the later ones down */
		for (size_t j = i; j + 1 < ep->rx_n; j++)
			ep->rx[(ep->rx_head + j) % FNV_RX_SIZE] =
				ep->rx[(ep->rx_head + j + 1) % FNV_RX_SIZE];
		ep->rx_n--;
		if (ep->rx_cq)
			fnv_cq_push_locked(ep->rx_cq, &e);
		r = 0;
		break;
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return r;
}

static int ep_getopt(fid_t fid, int level, int optname, void *optval,
		     size_t *optlen)
{
	(void)fid;
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (optname == FI_OPT_MIN_MULTI_RECV || optname == FI_OPT_CM_DATA_SIZE) {
		if (*optlen < sizeof(size_t))
			return -FI_ETOOSMALL;
		*(size_t *)optval = 0;
		*optlen = sizeof(size_t);
		return 0;
	}
	return -FI_ENOPROTOOPT;
}

static int ep_setopt(fid_t fid, int level, int optname, const void *optval,
		     size_t optlen)
{
	(void)fid; (void)optval; (void)optlen;
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	(void)optname;
	return -FI_ENOPROTOOPT;
}

static ssize_t ep_rx_size_left(struct fid_ep *fep)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;

	if (ep->rdm)
		return (ssize_t)(FNV_RDM_POSTED - ep->rdm->msg_n);
	return (ssize_t)(FNV_RX_SIZE - ep->rx_n);
}

static ssize_t ep_tx_size_left(struct fid_ep *fep)
{
	struct fnv_ep *ep = (struct fnv_ep *)fep;

	if (ep->rdm)
		return (ssize_t)fnv_rdm_tx_left(ep);
	return FNV_TX_SIZE;	/* sends complete before they return */
}

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = fnv_no_ops_open,
	.tostr = fnv_tostr,
	.ops_set = fnv_no_ops_set,
};

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = fnv_no_tx_ctx,
	.rx_ctx = fnv_no_rx_ctx,
	.rx_size_left = ep_rx_size_left,
	.tx_size_left = ep_tx_size_left,
};

static struct fi_ops_cm ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = ep_setname,
	.getname = ep_getname,
	.getpeer = fnv_no_getpeer,
	.connect = fnv_no_connect,
	.listen = fnv_no_listen,
	.accept = fnv_no_accept,
	.reject = fnv_no_reject,
	.shutdown = fnv_no_shutdown,
	.join = fnv_no_join,
};

int fnv_ep_open(struct fid_domain *fd, struct fi_info *info,
		struct fid_ep **fep, void *context)
{
	struct fnv_domain *d = (struct fnv_domain *)fd;
	struct fnv_ep *ep;

	if (!info || !info->ep_attr || (info->ep_attr->type != FI_EP_DGRAM &&
					 info->ep_attr->type != FI_EP_RDM))
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	if (info->ep_attr->type == FI_EP_RDM && fnv_rdm_init(ep)) {
		free(ep);
		return -FI_ENOMEM;
	}
	if (ep->rdm)
		ep->rdm->rdv_read_max = fnv_rdv_read_max_param();
	ep->dom = d;
	ep->w.lo_fd = -1;
	ep->directed = info->caps & FI_DIRECTED_RECV;
	ep->tx_op_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	ep->rx_op_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
	ep->ep.fid.fclass = FI_CLASS_EP;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &ep_fi_ops;
	ep->ep.ops = &ep_ops;
	ep->ep.cm = &ep_cm_ops;
	ep->ep.msg = &fnv_msg_ops;
	ep->ep.rma = &fnv_no_rma_ops;
	ep->ep.tagged = &fnv_no_tagged_ops;
	ep->ep.atomic = &fnv_no_atomic_ops;
	ep->ep.collective = &fnv_no_collective_ops;
	if (ep->rdm) {
		ep->ep.msg = &fnv_rdm_msg_ops;
		ep->ep.tagged = &fnv_rdm_tagged_ops;
		ep->ep.rma = &fnv_rma_ops;	/* -FI_ENOSYS without FI_RMA */
		ep->ep.atomic = &fnv_atomic_ops;
	}
	pthread_mutex_lock(&d->lock);
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	*fep = &ep->ep;
	return 0;
}
