// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: the NetVM endpoint ioctls: NETVM_IOC_EP_OPEN (a free port,
 * pinned coherent host areas and NVM_KOP_EP_OPEN), EP_INFO, EXPORT,
 * UNEXPORT, REKEY and PTBENCH.
 *
 * Locking: see netvm_ep.h.
 */
#include <linux/dma-mapping.h>
#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "netvm_drv.h"
#include "netvm_ep_priv.h"

static void ep_fill_info(struct netvm_ep *ep, struct netvm_ep_info *info)
{
	memset(info, 0, sizeof(*info));
	info->port = ep->port;
	info->node_id = ep->nd->node_id;
	info->pt_rows = ep->nd->eps.pt_rows;
	info->notf_len = NETVM_EP_NOTF_LEN;
	info->sram_size = NVM_EP_STRIDE;
	info->db_size = LANAI_DOORBELL_PAGE;
	info->host_size = NETVM_EP_HOST_SIZE;
	info->shadow_off = EP_HOST_SHADOW;
	info->err_off = EP_HOST_ERR;
	info->err_len = NVM_ERR_RING_LEN;
	info->reply_off = EP_HOST_REPLY;
	info->notf_off = EP_HOST_NOTF;
	info->notf_cons_off = EP_HOST_NOTF_CONS;
}

static int ep_open(struct netvm_file *nf)
{
	struct netvm_dev *nd = nf->nd;
	struct netvm_eps *eps = &nd->eps;
	u32 count = min_t(u32, nd->layout.ep_count, NETVM_EP_MAX);
	struct nvm_k_ep_open ko;
	struct netvm_ep *ep;
	u32 port;
	int ret;

	if (!eps->ready)
		return -ENODEV;
	if (nf->ep)
		return -EBUSY;
	ep = kzalloc(sizeof(*ep), GFP_KERNEL);
	if (!ep)
		return -ENOMEM;
	ep->nd = nd;
	mutex_init(&ep->lock);
	INIT_LIST_HEAD(&ep->exports);
	ep->host = dma_alloc_coherent(&nd->pdev->dev, NETVM_EP_HOST_SIZE,
				      &ep->host_dma, GFP_KERNEL);
	if (!ep->host) {
		kfree(ep);
		return -ENOMEM;
	}

	mutex_lock(&eps->lock);
	for (port = 1; port < count && eps->ep[port]; port++)
		;
	if (port >= count) {
		ret = -EBUSY;
		goto err;
	}
	ep->port = port;
	memset(&ko, 0, sizeof(ko));
	ko.shadow = ep->host_dma + EP_HOST_SHADOW;
	ko.err_ring = ep->host_dma + EP_HOST_ERR;
	ko.reply = ep->host_dma + EP_HOST_REPLY;
	ko.notf_ring = ep->host_dma + EP_HOST_NOTF;
	ko.notf_len = NETVM_EP_NOTF_LEN;
	ko.port = port;
	ret = nv_kcmd(nd, NVM_KOP_EP_OPEN, 0, 0, 0, 0, &ko, sizeof(ko));
	if (ret)
		goto err;
	ep->mm = current->mm;
	mmgrab(ep->mm);
	ep->pid = task_tgid_vnr(current);
	eps->ep[port] = ep;
	netvm_port_own(nd, port, NETVM_PORT_EP);
	mutex_unlock(&eps->lock);
	nf->ep = ep;
	netvm_obs_ep_add(ep);
	return 0;
err:
	mutex_unlock(&eps->lock);
	dma_free_coherent(&nd->pdev->dev, NETVM_EP_HOST_SIZE, ep->host,
			  ep->host_dma);
	kfree(ep);
	return ret;
}

static int ep_export(struct netvm_ep *ep, void __user *uarg)
{
	struct netvm_export_req req;
	struct netvm_export *exp;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved || (req.flags & ~NETVM_EXPORT_RO))
		return -EINVAL;
	req.name[sizeof(req.name) - 1] = 0;
	exp = netvm_export_add(ep, req.addr, req.len,
			       req.flags & NETVM_EXPORT_RO, req.name, false);
	if (IS_ERR(exp))
		return PTR_ERR(exp);
	req.key = exp->key;
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

/* The export made at @addr (as given to NETVM_IOC_EXPORT); ep->lock held. */
static struct netvm_export *ep_export_at(struct netvm_ep *ep, u64 addr)
{
	struct netvm_export *exp;

	list_for_each_entry(exp, &ep->exports, node)
		if (exp->start == (addr & PAGE_MASK))
			return exp;
	return NULL;
}

static int ep_unexport(struct netvm_ep *ep, void __user *uarg)
{
	struct netvm_unexport_req req;
	struct netvm_export *exp;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;
	mutex_lock(&ep->lock);
	exp = ep_export_at(ep, req.addr);
	if (exp) {
		list_del(&exp->node);
		netvm_export_drop(exp);
	}
	mutex_unlock(&ep->lock);
	return exp ? 0 : -ENOENT;
}

static int ep_rekey(struct netvm_ep *ep, void __user *uarg)
{
	struct netvm_rekey_req req;
	struct netvm_export *exp;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	req.name[sizeof(req.name) - 1] = 0;
	mutex_lock(&ep->lock);
	exp = ep_export_at(ep, req.addr);
	if (exp)
		req.key = netvm_export_rekey(exp, req.name);
	mutex_unlock(&ep->lock);
	if (!exp)
		return -ENOENT;
	return copy_to_user(uarg, &req, sizeof(req)) ? -EFAULT : 0;
}

/* Called with nd->lifetime held for reading. */
long netvm_ep_ioctl(struct netvm_file *nf, unsigned int cmd, void __user *u)
{
	struct netvm_ep_info info;
	struct netvm_ep *ep;
	long ret;

	mutex_lock(&nf->lock);
	if (cmd == NETVM_IOC_EP_OPEN) {
		ret = ep_open(nf);
		if (!ret) {
			ep_fill_info(nf->ep, &info);
			if (copy_to_user(u, &info, sizeof(info)))
				ret = -EFAULT;
		}
		mutex_unlock(&nf->lock);
		return ret;
	}
	ep = nf->ep;
	if (!ep) {
		ret = -ENXIO;
	} else if (ep->mm != current->mm) {
		ret = -EACCES;		/* only the process that opened it */
	} else if (cmd == NETVM_IOC_EP_INFO) {
		ep_fill_info(ep, &info);
		ret = copy_to_user(u, &info, sizeof(info)) ? -EFAULT : 0;
	} else if (cmd == NETVM_IOC_EXPORT) {
		ret = ep_export(ep, u);
	} else if (cmd == NETVM_IOC_UNEXPORT) {
		ret = ep_unexport(ep, u);
	} else if (cmd == NETVM_IOC_REKEY) {
		ret = ep_rekey(ep, u);
	} else if (cmd == NETVM_IOC_PTBENCH) {
		ret = netvm_ep_ptbench(ep, u);
	} else {
		ret = -ENOTTY;
	}
	mutex_unlock(&nf->lock);
	return ret;
}

/* ---- NETVM_IOC_PTBENCH: NetVM's Tables 24 and 25 ---- */

/*
 * Per iteration, on the caller's exported pages [addr, +npages): look the
 * pages up with hmm_range_fault (faulting them in the first time), install
 * every translation (mapPage), remove every one (unmapPage with the lock
 * check and the dirty bit), then pin and unpin the same pages as an RDMA
 * registration does (pin_user_pages_fast with FOLL_LONGTERM).  Sums in ns.
 */
long netvm_ep_ptbench(struct netvm_ep *ep, void __user *u)
{
	struct netvm_dev *nd = ep->nd;
	struct netvm_eps *eps = &nd->eps;
	struct netvm_ptbench b;
	struct netvm_export *exp;
	struct page **pages = NULL;
	unsigned long *pfns = NULL, idx0, i;
	struct hmm_range range = { .dev_private_owner = NULL };
	u64 t0;
	u32 it;
	long ret = 0;
	int got;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&b, u, sizeof(b)))
		return -EFAULT;
	if (b.reserved[0] || b.reserved[1] || !b.npages ||
	    b.npages > NETVM_PTBENCH_MAX_PAGES || !b.iterations ||
	    b.iterations > NETVM_PTBENCH_MAX_ITER || offset_in_page(b.addr))
		return -EINVAL;
	if (!eps->ready)
		return -ENODEV;
	pfns = kvcalloc(b.npages, sizeof(*pfns), GFP_KERNEL);
	pages = kvcalloc(b.npages, sizeof(*pages), GFP_KERNEL);
	if (!pfns || !pages) {
		ret = -ENOMEM;
		goto out_free;
	}
	b.lookup_ns = 0;
	b.map_ns = 0;
	b.unmap_ns = 0;
	b.pin_ns = 0;
	b.unpin_ns = 0;
	b.pages = 0;

	mutex_lock(&ep->lock);
	exp = netvm_ep_find_export(ep, b.addr, (unsigned long)b.npages * PAGE_SIZE);
	if (!exp) {
		ret = -EINVAL;
		goto out;
	}
	idx0 = (b.addr - exp->start) >> PAGE_SHIFT;
	range.notifier = &exp->mni;
	range.start = b.addr;
	range.end = b.addr + (unsigned long)b.npages * PAGE_SIZE;
	range.hmm_pfns = pfns;
	range.default_flags = HMM_PFN_REQ_FAULT |
			      (exp->ro ? 0 : HMM_PFN_REQ_WRITE);
	for (it = 0; it < b.iterations; it++) {
		u64 lookup;
again:
		t0 = ktime_get_ns();
		ret = netvm_ep_hmm_fault(&range, ep->mm, jiffies +
				   msecs_to_jiffies(HMM_RANGE_DEFAULT_TIMEOUT));
		lookup = ktime_get_ns() - t0;
		if (ret)
			goto out;
		mutex_lock(&eps->pt_lock);
		if (mmu_interval_read_retry(&exp->mni, range.notifier_seq)) {
			mutex_unlock(&eps->pt_lock);
			goto again;
		}
		b.lookup_ns += lookup;
		t0 = ktime_get_ns();
		for (i = 0; i < b.npages; i++) {
			unsigned long pfn = page_to_pfn(hmm_pfn_to_page(pfns[i]));

			if (pfn && pfn < eps->max_ppn && !is_zero_pfn(pfn))
				netvm_pt_map(nd, exp, idx0 + i, (u32)pfn);
		}
		b.map_ns += ktime_get_ns() - t0;
		t0 = ktime_get_ns();
		for (i = 0; i < b.npages; i++)
			netvm_pt_unmap(nd, exp, idx0 + i);
		b.unmap_ns += ktime_get_ns() - t0;
		mutex_unlock(&eps->pt_lock);

		t0 = ktime_get_ns();
		got = pin_user_pages_fast(b.addr, b.npages,
					  FOLL_WRITE | FOLL_LONGTERM, pages);
		b.pin_ns += ktime_get_ns() - t0;
		if (got < 0) {
			ret = got;
			goto out;
		}
		t0 = ktime_get_ns();
		unpin_user_pages(pages, got);
		b.unpin_ns += ktime_get_ns() - t0;
		if (got != b.npages) {
			ret = -EFAULT;
			goto out;
		}
		b.pages += b.npages;
	}
out:
	mutex_unlock(&ep->lock);
	if (!ret && copy_to_user(u, &b, sizeof(b)))
		ret = -EFAULT;
out_free:
	kvfree(pages);
	kvfree(pfns);
	return ret;
}
