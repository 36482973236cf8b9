// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: NetVM's paging events.  The IRQ handler queues page misses
 * (NVM_EV_PAGE_MISS) and bounced writes (NVM_EV_BOUNCE) for an ordered
 * worker, which installs the missing translation and restarts what
 * waits for it, or copies the bounced bytes into the process and credits
 * the writer.  Notifications (NVM_EV_NOTIFY) only wake the port's
 * waiters, from the IRQ handler.
 *
 * Locking: see netvm_ep.h.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>

#include "netvm_drv.h"
#include "netvm_compat.h"
#include "netvm_ep_priv.h"

/* Kernel command @op (RESTART, MISS_FAIL) for the page of @va of @port. */
static int page_kcmd(struct netvm_dev *nd, u8 op, u32 port, u64 va)
{
	return nv_kcmd(nd, op, 0, (u16)port, lower_32_bits(va & PAGE_MASK),
		       upper_32_bits(va & PAGE_MASK), NULL, 0);
}

static void ep_page_miss(struct netvm_dev *nd, u32 port, u32 data, u64 va)
{
	struct netvm_eps *eps = &nd->eps;
	struct netvm_ep *ep = eps->ep[port];
	struct netvm_export *exp;
	int ret = -ENOENT;

	netvm_ep_inc(eps, ep, EPC_PAGE_MISSES);
	if (!ep)
		return;		/* closed: its operations were aborted */
	mutex_lock(&ep->lock);
	exp = netvm_ep_find_export(ep, (unsigned long)va, 1);
	if (exp && mmget_not_zero(ep->mm)) {
		ret = netvm_ep_install(exp, ep->mm, (unsigned long)va & PAGE_MASK, 1,
				       true);
		mmput(ep->mm);
	}
	mutex_unlock(&ep->lock);
	if (ret && ep->unet && !(data & BIT(31))) {
		/* a U-Net send: its retry misses again and fails (FAULT) */
		netvm_ep_inc(eps, ep, EPC_MISS_ERRORS);
		page_kcmd(nd, NVM_KOP_RESTART, port, va);
		return;
	}
	if (ret) {
		/*
		 * Not ours to map (outside every export, or the process no
		 * longer has it, or cannot write it): a restart would only
		 * miss again.  A local operation's miss (a source, a read's
		 * target) fails what waits for it, BAD_ADDR, and the
		 * endpoint goes on.  A remote one waits until the endpoint
		 * is closed, which aborts it.  (A U-Net delivery that missed
		 * was diverted: nothing waits.)
		 */
		netvm_ep_inc(eps, ep, EPC_MISS_ERRORS);
		if (ep->unet)
			return;
		if (!(data & BIT(31))) {
			page_kcmd(nd, NVM_KOP_MISS_FAIL, port, va);
			return;
		}
		dev_warn_ratelimited(&nd->pdev->dev,
				     "NetVM: port %u: remote page miss at %#llx cannot be served (%d); endpoint stalled until closed\n",
				     port, va, ret);
		return;
	}
	/* only what waits for this page retries (see NVM_KOP_RESTART) */
	if (!page_kcmd(nd, NVM_KOP_RESTART, port, va))
		netvm_ep_inc(eps, ep, EPC_RESTARTS);
}

/* Copy a bounced write into the process; the status for the writer. */
static u32 ep_bounce_copy(struct netvm_dev *nd, u32 port,
			  const struct nvm_net_hdr *h, const u8 *data, u32 len)
{
	struct netvm_ep *ep = nd->eps.ep[port];
	unsigned long va = (unsigned long)be64_to_cpu((__force __be64)h->va);
	u64 key = be64_to_cpu((__force __be64)h->key);
	struct netvm_export *exp;
	struct page *page;
	u32 st = NVM_ST_OK;
	void *kaddr;
	long got;

	if (!ep)
		return NVM_ST_NO_PORT;
	if (!len || len > PAGE_SIZE - offset_in_page(va))
		return NVM_ST_BAD_CMD;
	mutex_lock(&ep->lock);
	exp = netvm_ep_find_export(ep, va, len);
	if (!exp) {
		st = NVM_ST_BAD_ADDR;
		goto out;
	}
	if (key != exp->key) {
		st = NVM_ST_BAD_KEY;
		goto out;
	}
	if (exp->ro) {
		st = NVM_ST_READ_ONLY;
		goto out;
	}
	if (!mmget_not_zero(ep->mm)) {
		st = NVM_ST_BAD_ADDR;
		goto out;
	}
	mmap_read_lock(ep->mm);
	got = netvm_gup_remote_one(ep->mm, va & PAGE_MASK, FOLL_WRITE, &page);
	mmap_read_unlock(ep->mm);
	if (got != 1) {
		mmput(ep->mm);
		st = NVM_ST_BAD_ADDR;
		goto out;
	}
	kaddr = kmap_local_page(page);
	memcpy(kaddr + offset_in_page(va), data, len);
	kunmap_local(kaddr);
	set_page_dirty_lock(page);
	put_page(page);		/* not pinned: only held for the copy */
	/* the next write to this page goes straight in */
	netvm_ep_install(exp, ep->mm, va & PAGE_MASK, 1, false);
	mmput(ep->mm);
out:
	mutex_unlock(&ep->lock);
	return st;
}

static void ep_bounce(struct netvm_dev *nd, u32 port, u32 node, u64 arg)
{
	struct netvm_eps *eps = &nd->eps;
	u32 seq = (u32)arg, len = (u32)(arg >> 32);
	struct nvm_net_hdr h;
	const u8 *slot;
	u32 st;

	if (node >= NETVM_NV_MAX_NODES) {
		st = NVM_ST_BAD_ADDR;
	} else {
		slot = nd->nv.bounce +
		       nvm_bounce_slot(node, seq) * NVM_BOUNCE_SLOT;
		memcpy(&h, slot, sizeof(h));
		if (len > NVM_BOUNCE_SLOT - sizeof(h) ||
		    len != be32_to_cpu((__force __be32)h.len))
			st = NVM_ST_BAD_CMD;
		else
			st = ep_bounce_copy(nd, port, &h, slot + sizeof(h), len);
	}
	netvm_ep_inc(eps, port < NETVM_EP_MAX ? eps->ep[port] : NULL,
		     st == NVM_ST_OK ? EPC_BOUNCES : EPC_BOUNCE_REFUSED);
	nv_kcmd(nd, NVM_KOP_CREDIT, (u16)node, 0, seq, st, NULL, 0);
}

void netvm_ep_work(struct work_struct *work)
{
	struct netvm_dev *nd = container_of(work, struct netvm_dev, eps.work);
	struct netvm_eps *eps = &nd->eps;
	struct nvm_event ev;

	while (kfifo_out_spinlocked(&eps->evq, &ev, 1, &eps->evlock)) {
		u32 port = ev.endpoint;
		u32 data = ev.data;
		u64 arg = ev.arg;

		if (READ_ONCE(nd->dead))
			continue;
		if (port >= NETVM_EP_MAX)
			continue;
		mutex_lock(&eps->lock);
		if (ev.type == NVM_EV_PAGE_MISS)
			ep_page_miss(nd, port, data, arg);
		else
			ep_bounce(nd, port, data, arg);
		mutex_unlock(&eps->lock);
		cond_resched();
	}
	/*
	 * Page-miss events were lost: their operations would wait for ever.
	 * Retry everything every endpoint waits for (page 0): whatever still
	 * misses is reported again.
	 */
	if (xchg(&eps->events_lost, false) && !READ_ONCE(nd->dead)) {
		u32 port;

		mutex_lock(&eps->lock);
		for (port = 1; port < NETVM_EP_MAX; port++)
			if (eps->ep[port])
				nv_kcmd(nd, NVM_KOP_RESTART, 0, (u16)port, 0, 0,
					NULL, 0);
		mutex_unlock(&eps->lock);
	}
}

/* From the event IRQ handler. */
void netvm_ep_event(struct netvm_dev *nd, const struct nvm_event *ev)
{
	struct netvm_eps *eps = &nd->eps;
	struct nvm_event e = *ev;

	if (!eps->ready)
		return;
	e.endpoint = le16_to_cpu((__force __le16)ev->endpoint);
	e.data = le32_to_cpu((__force __le32)ev->data);
	e.arg = le64_to_cpu((__force __le64)ev->arg);
	if (e.type == NVM_EV_NOTIFY) {
		if (e.endpoint < NETVM_EP_MAX) {
			wake_up_interruptible(&eps->wq[e.endpoint]);
			/* O_ASYNC: SIGIO (or the F_SETSIG signal) to the owner */
			if (READ_ONCE(eps->fasync[e.endpoint])) {
				netvm_ep_inc(eps, NULL, EPC_SIGNALS);
				kill_fasync(&eps->fasync[e.endpoint], SIGIO,
					    POLL_IN);
			}
		}
		return;
	}
	if (!kfifo_in_spinlocked(&eps->evq, &e, 1, &eps->evlock)) {
		netvm_ep_inc(eps, NULL, EPC_EVQ_OVERFLOW);
		WRITE_ONCE(eps->events_lost, true);
		dev_err_ratelimited(&nd->pdev->dev,
				    "NetVM: paging event queue full; event lost\n");
		return;
	}
	queue_work(eps->wq_ev, &eps->work);
}
