// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: NetVM user endpoints, exports without pinning, and the
 * shadow page table kept in step with each process's address space.
 *
 * An open file asks for an endpoint with NETVM_IOC_EP_OPEN: a free port,
 * pinned coherent host areas (shadow counters, error ring, atomic reply,
 * notification ring) and NVM_KOP_EP_OPEN.  mmap() gives the process its
 * own SRAM region, doorbell page and host areas, nothing else.
 *
 * Exports register an mmu_interval_notifier over their range; nothing is
 * pinned.  A translation (PMAP entry, then the PPN in its row) is installed
 * when the NI misses (NVM_EV_PAGE_MISS), when a bounced write is copied
 * (NVM_EV_BOUNCE), and for the pages already resident at export time.  It
 * is found with hmm_range_fault() under the notifier's sequence and
 * written under pt_lock only if no invalidation ran in between.  The
 * invalidate callback removes translations with NetVM's unmapPPN protocol
 * (clear the tag, full fence, look at the NI's lock; restore and retry
 * while locked) and carries the NI's dirty bit to the page.
 *
 * By role: this file, an endpoint's life (release, poll, O_ASYNC) and the
 * per-device state; netvm_ep_pt.c the page table, HMM and exports;
 * netvm_ep_miss.c page misses and bounces; netvm_ep_ioctl.c the ioctls;
 * netvm_ep_mmap.c mmap; netvm_obs.c what sysfs and debugfs show.
 * netvm_ep_priv.h holds what they share.
 *
 * Locking: see netvm_ep.h.
 */
#include <linux/dma-mapping.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "netvm_drv.h"
#include "netvm_ep_priv.h"

const char * const netvm_ep_counter_names[EPC_MAX] = {
	[EPC_INSTALLS] = "installs",
	[EPC_REMOVALS] = "removals",
	[EPC_INVALIDATIONS] = "invalidations",
	[EPC_UNMAP_WAITS] = "unmap_waits",
	[EPC_UNMAP_TIMEOUTS] = "unmap_timeouts",
	[EPC_PAGE_MISSES] = "page_misses",
	[EPC_RESTARTS] = "restarts",
	[EPC_MISS_ERRORS] = "miss_errors",
	[EPC_BOUNCES] = "bounces",
	[EPC_BOUNCE_REFUSED] = "bounce_refused",
	[EPC_DIRTY] = "dirty",
	[EPC_REKEY_WAITS] = "rekey_waits",
	[EPC_REKEY_TIMEOUTS] = "rekey_timeouts",
	[EPC_EVQ_OVERFLOW] = "evq_overflow",
	[EPC_SIGNALS] = "signals",
};

/* ---- an endpoint's life after EP_OPEN (netvm_ep_ioctl.c) ---- */

/* The file is closing: the port, its exports and host areas go. */
void netvm_ep_release(struct netvm_file *nf)
{
	struct netvm_ep *ep = nf->ep;
	struct netvm_dev *nd = nf->nd;
	struct netvm_export *exp, *tmp;

	if (!ep)
		return;
	nf->ep = NULL;
	netvm_obs_ep_del(ep);	/* no sysfs reader of it from here on */
	mutex_lock(&nd->eps.lock);
	nd->eps.ep[ep->port] = NULL;
	netvm_port_own(nd, ep->port, NETVM_PORT_FREE);
	mutex_unlock(&nd->eps.lock);
	/* abort its operations; remote requests for it now fail (NO_PORT) */
	if (!READ_ONCE(nd->dead) && nd->eps.ready)
		nv_kcmd(nd, NVM_KOP_EP_CLOSE, 0, (u16)ep->port, 0, 0, NULL, 0);
	netvm_trip_release(nd, ep);
	mutex_lock(&ep->lock);
	list_for_each_entry_safe(exp, tmp, &ep->exports, node) {
		list_del(&exp->node);
		netvm_export_drop(exp);
	}
	mutex_unlock(&ep->lock);
	mmdrop(ep->mm);
	dma_free_coherent(&nd->pdev->dev, NETVM_EP_HOST_SIZE, ep->host,
			  ep->host_dma);
	kfree(ep);
}

/* Readable when the notification ring holds an entry not yet consumed. */
__poll_t netvm_ep_poll(struct netvm_file *nf, struct file *file,
		       struct poll_table_struct *wait)
{
	struct netvm_ep *ep = READ_ONCE(nf->ep);
	const struct nvm_notf_entry *e;
	u32 cons, phase;

	if (!ep)
		return 0;
	poll_wait(file, &nf->nd->eps.wq[ep->port], wait);
	cons = READ_ONCE(*(u32 *)(ep->host + EP_HOST_NOTF_CONS));
	e = ep->host + EP_HOST_NOTF +
	    (cons % NETVM_EP_NOTF_LEN) * sizeof(*e);
	phase = (cons / NETVM_EP_NOTF_LEN) & 1 ? 0 : 1;
	if (READ_ONCE(e->phase) == phase && READ_ONCE(e->notify))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

/* ---- signals: O_ASYNC on the file ---- */

/*
 * fcntl(F_SETFL, O_ASYNC) on a file with an endpoint: every notification
 * interrupt for its port sends SIGIO (or the F_SETSIG signal, with
 * si_fd and POLL_IN) to the F_SETOWN owner.  The list head lives per port
 * in netvm_eps, so the IRQ handler reaches it without the endpoint;
 * __fput() removes the file from it before netvm_release() frees the port.
 */
int netvm_ep_fasync(struct netvm_file *nf, int fd, struct file *file, int on)
{
	struct netvm_ep *ep;
	int ret;

	mutex_lock(&nf->lock);
	ep = nf->ep;
	if (!ep)
		ret = on ? -ENXIO : 0;
	else if (on && ep->mm != current->mm)
		ret = -EACCES;
	else
		ret = fasync_helper(fd, file, on, &nf->nd->eps.fasync[ep->port]);
	mutex_unlock(&nf->lock);
	return ret;
}

/* ---- per device ---- */

/*
 * After netvm_nv_init(): the firmware has placed its tables at CONFIG, so
 * read the layout again for pt, pmap* and max_ppn.
 */
int netvm_ep_init(struct netvm_dev *nd)
{
	struct netvm_eps *eps = &nd->eps;
	struct nvm_sram_layout l;
	u32 off, p;

	mutex_init(&eps->lock);
	mutex_init(&eps->pt_lock);
	spin_lock_init(&eps->evlock);
	INIT_KFIFO(eps->evq);
	INIT_WORK(&eps->work, netvm_ep_work);
	for (p = 0; p < NETVM_EP_MAX; p++)
		init_waitqueue_head(&eps->wq[p]);
	if (!nd->nv.enabled)
		return 0;

	off = netvm_rd(nd, NVM_REG_LAYOUT_OFF);
	memcpy_fromio(&l, nd->sram + off, sizeof(l));
	if (l.magic != NVM_LAYOUT_MAGIC || !l.pt_rows || !l.max_ppn ||
	    l.pt_rows != nd->nv.pt_rows || l.max_ppn != nd->nv.max_ppn ||
	    l.tables_end > nd->sram_len) {
		dev_err(&nd->pdev->dev, "NetVM: page tables not as configured; no user endpoints\n");
		return 0;
	}
	nd->layout = l;
	eps->max_ppn = l.max_ppn;
	eps->pt_rows = l.pt_rows;
	eps->owner = kvcalloc(eps->max_ppn, sizeof(*eps->owner), GFP_KERNEL);
	eps->owner_idx = kvcalloc(eps->max_ppn, sizeof(*eps->owner_idx),
				  GFP_KERNEL);
	eps->wq_ev = alloc_ordered_workqueue("netvm%d-paging", WQ_MEM_RECLAIM,
					     nd->index);
	if (!eps->owner || !eps->owner_idx || !eps->wq_ev) {
		netvm_ep_free(nd);
		return -ENOMEM;
	}
	eps->ready = true;
	return 0;
}

/* After the NIC is halted and its IRQs freed: no new events. */
void netvm_ep_free(struct netvm_dev *nd)
{
	struct netvm_eps *eps = &nd->eps;

	if (!eps->wq_ev && !eps->owner && !eps->owner_idx)
		return;		/* never set up (or NetVM off) */
	if (eps->wq_ev)
		destroy_workqueue(eps->wq_ev);
	eps->wq_ev = NULL;
	mutex_lock(&eps->pt_lock);
	eps->ready = false;
	kvfree(eps->owner);
	kvfree(eps->owner_idx);
	eps->owner = NULL;
	eps->owner_idx = NULL;
	mutex_unlock(&eps->pt_lock);
}
