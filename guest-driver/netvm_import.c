// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: import over the network (NETVM_IOC_IMPORT).
 *
 * The importing kernel sends an IMPORT request {node, port, name} to the
 * exporting node's kernel and sleeps until the answer or a timeout.  The
 * exporting kernel looks the export up by (port, name) and answers with
 * {addr, len, key, pt_rows, flags} or an errno.
 *
 * Transport: raw frames (netvm_raw.c) that start with the 8-byte marker
 * NVM_IMP_MAGIC and have exactly the size of struct nvm_imp_msg
 * (netvm/import.h; big-endian, as every wire format).  The raw receive
 * IRQ handler gives every such frame to netvm_import_rx()
 * before the raw queue, so raw readers never see them.  Replies are
 * matched to waiters in the IRQ handler; requests are queued (at most
 * NETVM_IMP_REQQ) for a work item, which needs to sleep (endpoint locks,
 * raw send).  Raw frames are not retransmitted; a lost frame ends in the
 * requester's timeout.  A request that arrives at another node than the
 * one it names (no route: the frame went to the cable's other end) is
 * answered with EHOSTUNREACH.
 *
 * Locking: imp.lock (IRQ-safe spinlock) guards the pending list, the
 * request ids and the request fifo.  The work item takes eps.lock and
 * then ep.lock, as the endpoint code does, and sends with nothing held.
 */
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include <netvm/import.h>

#include "netvm_drv.h"

#define NETVM_IMP_REQQ		16
#define NETVM_IMP_TIMEOUT_MS	5000
#define NETVM_IMP_TIMEOUT_MAX	60000

/* One sleeping importer, on imp.pending. */
struct netvm_imp_wait {
	struct list_head node;
	u32 id;
	bool done;
	struct nvm_imp_msg reply;
};

static int netvm_imp_route(struct netvm_dev *nd, u32 node, u8 *route,
			   u8 *len)
{
	struct netvm_nv *nv = &nd->nv;

	if (node >= NETVM_NV_ROUTE_NODES)
		return -EHOSTUNREACH;
	mutex_lock(&nv->lock);
	*len = nv->route_len[node];
	memcpy(route, nv->route[node], *len);
	mutex_unlock(&nv->lock);
	return 0;
}

static int netvm_imp_send(struct netvm_dev *nd, u32 node,
			  const struct nvm_imp_msg *m)
{
	u8 route[NVM_ROUTE_MAX];
	u8 rlen;
	int ret;

	ret = netvm_imp_route(nd, node, route, &rlen);
	if (ret)
		return ret;
	return netvm_raw_send_kernel(nd, m, sizeof(*m), rlen, route);
}

/* Look the export up here: fills the reply fields, returns an errno. */
static int netvm_imp_lookup(struct netvm_dev *nd, u32 port, const char *name,
			    struct nvm_imp_msg *r)
{
	struct netvm_eps *eps = &nd->eps;
	struct netvm_export *exp;
	struct netvm_ep *ep;
	int ret = -ENOENT;

	if (!eps->ready)
		return -ENODEV;
	if (port >= NETVM_EP_MAX)
		return -ENOENT;
	mutex_lock(&eps->lock);
	ep = eps->ep[port];
	if (ep) {
		mutex_lock(&ep->lock);
		list_for_each_entry(exp, &ep->exports, node) {
			/* unnamed: a U-Net segment, nobody's to import */
			if (!exp->name[0] ||
			    strncmp(exp->name, name, sizeof(exp->name)))
				continue;
			r->addr = cpu_to_be64(exp->addr);
			r->len = cpu_to_be64(exp->len);
			r->key = cpu_to_be64(exp->key);
			r->flags = cpu_to_be32(exp->ro ? NETVM_EXPORT_RO : 0);
			r->pt_rows = cpu_to_be32(eps->pt_rows);
			ret = 0;
			break;
		}
		mutex_unlock(&ep->lock);
	}
	mutex_unlock(&eps->lock);
	return ret;
}

static void netvm_imp_work(struct work_struct *work)
{
	struct netvm_imp *imp = container_of(work, struct netvm_imp, work);
	struct netvm_dev *nd = container_of(imp, struct netvm_dev, imp);
	struct nvm_imp_msg m, r;
	char name[32];
	int ret;

	for (;;) {
		spin_lock_irq(&imp->lock);
		if (!imp->req_count || READ_ONCE(nd->dead)) {
			spin_unlock_irq(&imp->lock);
			return;
		}
		m = imp->reqq[imp->req_head];
		imp->req_head = (imp->req_head + 1) % NETVM_IMP_REQQ;
		imp->req_count--;
		spin_unlock_irq(&imp->lock);

		memset(&r, 0, sizeof(r));
		memcpy(r.magic, NVM_IMP_MAGIC, sizeof(r.magic));
		r.type = cpu_to_be32(NVM_IMP_REPLY);
		r.id = m.id;
		r.src_node = cpu_to_be16(nd->node_id);
		r.dst_node = m.src_node;
		r.port = m.port;
		memcpy(r.name, m.name, sizeof(r.name));
		if (be16_to_cpu(m.dst_node) != nd->node_id) {
			ret = -EHOSTUNREACH;
		} else {
			memcpy(name, m.name, sizeof(name));
			name[sizeof(name) - 1] = 0;
			ret = netvm_imp_lookup(nd, be16_to_cpu(m.port), name, &r);
		}
		r.status = cpu_to_be32(-ret);
		atomic64_inc(&imp->served);
		ret = netvm_imp_send(nd, be16_to_cpu(m.src_node), &r);
		if (ret)
			dev_warn_ratelimited(&nd->pdev->dev,
					     "NetVM: import reply to node %u failed: %d\n",
					     be16_to_cpu(m.src_node), ret);
	}
}

/* IRQ context: true if @buf is a control frame (consumed here). */
bool netvm_import_rx(struct netvm_dev *nd, const void *buf, u32 len, u32 src)
{
	struct netvm_imp *imp = &nd->imp;
	const struct nvm_imp_msg *m = buf;
	struct netvm_imp_wait *w;
	u32 type;

	if (len != sizeof(*m) ||
	    memcmp(m->magic, NVM_IMP_MAGIC, sizeof(m->magic)))
		return false;
	if (!imp->reqq) {
		atomic64_inc(&imp->dropped);
		return true;
	}
	type = be32_to_cpu(m->type);
	spin_lock(&imp->lock);
	if (type == NVM_IMP_REPLY) {
		list_for_each_entry(w, &imp->pending, node) {
			if (w->id != be32_to_cpu(m->id) || w->done)
				continue;
			w->reply = *m;
			w->done = true;
			atomic64_inc(&imp->replies);
			wake_up_all(&imp->wq);
			break;
		}
	} else if (type == NVM_IMP_REQ &&
		   imp->req_count < NETVM_IMP_REQQ) {
		imp->reqq[(imp->req_head + imp->req_count) % NETVM_IMP_REQQ] = *m;
		imp->req_count++;
		queue_work(system_unbound_wq, &imp->work);
	} else {
		atomic64_inc(&imp->dropped);
	}
	spin_unlock(&imp->lock);
	return true;
}

static bool netvm_imp_done(struct netvm_dev *nd, struct netvm_imp_wait *w)
{
	unsigned long flags;
	bool done;

	spin_lock_irqsave(&nd->imp.lock, flags);
	done = w->done;
	spin_unlock_irqrestore(&nd->imp.lock, flags);
	return done || READ_ONCE(nd->dead);
}

static int netvm_imp_remote(struct netvm_dev *nd, struct netvm_import_req *req,
			    struct nvm_imp_msg *out)
{
	struct netvm_imp *imp = &nd->imp;
	struct nvm_imp_msg m;
	struct netvm_imp_wait *w;
	u32 tmo = req->timeout_ms ? req->timeout_ms : NETVM_IMP_TIMEOUT_MS;
	long left;
	int ret;

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	spin_lock_irq(&imp->lock);
	w->id = ++imp->next_id;
	list_add_tail(&w->node, &imp->pending);
	spin_unlock_irq(&imp->lock);

	memset(&m, 0, sizeof(m));
	memcpy(m.magic, NVM_IMP_MAGIC, sizeof(m.magic));
	m.type = cpu_to_be32(NVM_IMP_REQ);
	m.id = cpu_to_be32(w->id);
	m.src_node = cpu_to_be16(nd->node_id);
	m.dst_node = cpu_to_be16(req->node);
	m.port = cpu_to_be16(req->port);
	memcpy(m.name, req->name, sizeof(m.name));
	atomic64_inc(&imp->sent);
	ret = netvm_imp_send(nd, req->node, &m);
	if (!ret) {
		left = wait_event_interruptible_timeout(imp->wq,
							netvm_imp_done(nd, w),
							msecs_to_jiffies(tmo));
		if (READ_ONCE(nd->dead))
			ret = -ENODEV;
		else if (left < 0)
			ret = -EINTR;
	}
	spin_lock_irq(&imp->lock);
	list_del(&w->node);
	if (!ret && !w->done)
		ret = -ETIMEDOUT;
	if (!ret)
		*out = w->reply;
	spin_unlock_irq(&imp->lock);
	kfree(w);
	if (ret == -ETIMEDOUT)
		atomic64_inc(&imp->timeouts);
	if (!ret)
		ret = -(int)be32_to_cpu(out->status);
	return ret;
}

long netvm_import_ioctl(struct netvm_dev *nd, void __user *u)
{
	struct netvm_import_req req;
	struct nvm_imp_msg r;
	int ret;

	if (copy_from_user(&req, u, sizeof(req)))
		return -EFAULT;
	if (req.reserved || memchr_inv(req.reserved2, 0, sizeof(req.reserved2)) ||
	    req.node > U16_MAX || req.port > U16_MAX ||
	    req.timeout_ms > NETVM_IMP_TIMEOUT_MAX ||
	    !memchr(req.name, 0, sizeof(req.name)) || !req.name[0])
		return -EINVAL;
	if (!nd->eps.ready || !nd->imp.reqq)
		return -ENODEV;
	memset(&r, 0, sizeof(r));
	if (req.node == nd->node_id)
		ret = netvm_imp_lookup(nd, req.port, req.name, &r);
	else
		ret = netvm_imp_remote(nd, &req, &r);
	if (ret)
		return ret;
	req.addr = be64_to_cpu(r.addr);
	req.len = be64_to_cpu(r.len);
	req.key = be64_to_cpu(r.key);
	req.pt_rows = be32_to_cpu(r.pt_rows);
	req.flags = be32_to_cpu(r.flags);
	if (!req.pt_rows || !req.len)
		return -EPROTO;
	if (copy_to_user(u, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

int netvm_import_init(struct netvm_dev *nd)
{
	struct netvm_imp *imp = &nd->imp;

	spin_lock_init(&imp->lock);
	INIT_LIST_HEAD(&imp->pending);
	init_waitqueue_head(&imp->wq);
	INIT_WORK(&imp->work, netvm_imp_work);
	imp->reqq = kcalloc(NETVM_IMP_REQQ, sizeof(*imp->reqq), GFP_KERNEL);
	return imp->reqq ? 0 : -ENOMEM;
}

/* After the IRQs are gone: nothing queues work any more. */
void netvm_import_free(struct netvm_dev *nd)
{
	struct netvm_imp *imp = &nd->imp;

	if (!imp->reqq)
		return;
	wake_up_all(&imp->wq);
	cancel_work_sync(&imp->work);
	kfree(imp->reqq);
	imp->reqq = NULL;
}
