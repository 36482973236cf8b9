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
 * Locking: see netvm_ep.h.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/hmm.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "netvm_drv.h"
#include "netvm_compat.h"

#define EP_HOST_SHADOW		0
#define EP_HOST_NOTF_CONS	32
#define EP_HOST_REPLY		64
#define EP_HOST_ERR		1024
#define EP_HOST_NOTF		4096
#define EP_UNMAP_TRIES		20000	/* ~1 s of 50 us waits */

static_assert(EP_HOST_ERR + NVM_ERR_RING_LEN * sizeof(struct nvm_err_rec) <=
	      EP_HOST_NOTF);
static_assert(EP_HOST_NOTF + NETVM_EP_NOTF_LEN * sizeof(struct nvm_notf_entry)
	      <= NETVM_EP_HOST_SIZE);

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
	[EPC_EVQ_OVERFLOW] = "evq_overflow",
	[EPC_SIGNALS] = "signals",
};

/* Count @c for the device and, when known, for the endpoint. */
static void ep_inc(struct netvm_eps *eps, struct netvm_ep *ep,
		   enum netvm_ep_counter c)
{
	atomic64_inc(&eps->cnt[c]);
	if (ep && c < EPC_PER_EP)
		atomic64_inc(&ep->cnt[c]);
}

/* ---- the shadow page table in SRAM (pt_lock held) ---- */

static void __iomem *pt_row(struct netvm_dev *nd, u32 row)
{
	return nd->sram + nd->layout.pt + row * NVM_PT_WAYS * 4;
}

static void __iomem *pmap_ent(struct netvm_dev *nd, u32 ppn)
{
	return nd->sram + nd->layout.pmap + ppn * sizeof(struct nvm_pmap_entry);
}

static u32 ep_row(struct netvm_dev *nd, u32 port, unsigned long va)
{
	return nvm_pt_hash(port, va >> PAGE_SHIFT, nd->eps.pt_rows);
}

/* Take @ppn out of @row: the last entry moves into the hole. */
static void pt_row_remove(struct netvm_dev *nd, u32 row, u32 ppn)
{
	void __iomem *r = pt_row(nd, row);
	int w, last = -1, at = -1;

	for (w = 0; w < NVM_PT_WAYS; w++) {
		u32 v = readl(r + w * 4);

		if (!v)
			break;
		last = w;
		if (v == ppn)
			at = w;
	}
	if (at < 0)
		return;
	if (at != last)
		writel(readl(r + last * 4), r + at * 4);
	writel(0, r + last * 4);
}

/*
 * NetVM's unmapPPN, then the bookkeeping: clear the tag (high word first:
 * it holds the port, so the NI never sees a half-cleared tag match), full
 * fence, look at the NI's lock; while it is held, put the tag back and
 * wait (the NI holds a page only for one DMA).  Then the PPN leaves its
 * row, the NI's dirty bit goes to the page (isPageDirty), and the records
 * are cleared.
 */
static void pt_unmap(struct netvm_dev *nd, struct netvm_export *exp,
		     unsigned long idx)
{
	struct netvm_eps *eps = &nd->eps;
	const struct nvm_sram_layout *l = &nd->layout;
	u32 ppn = exp->ppn[idx];
	void __iomem *e = pmap_ent(nd, ppn);
	unsigned int tries = 0;
	u32 lo, hi;
	u8 hd, ndb;

	if (!ppn)
		return;
	if (!READ_ONCE(nd->dead)) {
		lo = readl(e);
		hi = readl(e + 4);
		for (;;) {
			writel(0, e + 4);
			writel(0, e);
			mb();	/* the tag cleared before we look at the lock */
			if (!readb(nd->sram + l->pmap_lock + ppn))
				break;
			writel(lo, e);
			writel(hi, e + 4);
			ep_inc(eps, exp->ep, EPC_UNMAP_WAITS);
			if (++tries >= EP_UNMAP_TRIES) {
				ep_inc(eps, exp->ep, EPC_UNMAP_TIMEOUTS);
				dev_warn_ratelimited(&nd->pdev->dev,
						     "NetVM: page %#x still locked by the NIC after 1 s; unmapping anyway\n",
						     ppn);
				writel(0, e + 4);
				writel(0, e);
				break;
			}
			usleep_range(20, 50);
		}
		pt_row_remove(nd, ep_row(nd, exp->ep->port,
					 exp->start + idx * PAGE_SIZE), ppn);
		hd = readb(nd->sram + l->pmap_hdirty + ppn);
		ndb = readb(nd->sram + l->pmap_ndirty + ppn);
		if (hd == ndb) {	/* isPageDirty: the NI wrote to it */
			if (pfn_valid(ppn))
				set_page_dirty(pfn_to_page(ppn));
			ep_inc(eps, exp->ep, EPC_DIRTY);
			writeb(ndb ^ 1, nd->sram + l->pmap_hdirty + ppn);
		}
	}
	eps->owner[ppn] = NULL;
	exp->ppn[idx] = 0;
	ep_inc(eps, exp->ep, EPC_REMOVALS);
}

/* mapPage: PMAP fields first, the PPN into its row last. */
static void pt_map(struct netvm_dev *nd, struct netvm_export *exp,
		   unsigned long idx, u32 ppn)
{
	struct netvm_eps *eps = &nd->eps;
	const struct nvm_sram_layout *l = &nd->layout;
	unsigned long va = exp->start + idx * PAGE_SIZE;
	u32 port = exp->ep->port;
	u32 row = ep_row(nd, port, va);
	void __iomem *r = pt_row(nd, row);
	void __iomem *e = pmap_ent(nd, ppn);
	u64 tag = nvm_pt_tag(port, va >> PAGE_SHIFT);
	struct netvm_export *old = eps->owner[ppn];
	int w;

	if (old == exp && eps->owner_idx[ppn] == idx && exp->ppn[idx] == ppn)
		return;			/* already there */
	if (old)			/* 1:1: the page had another VA */
		pt_unmap(nd, old, eps->owner_idx[ppn]);
	if (exp->ppn[idx])		/* the VA had another page */
		pt_unmap(nd, exp, idx);

	for (w = 0; w < NVM_PT_WAYS && readl(r + w * 4); w++)
		;
	if (w == NVM_PT_WAYS) {		/* full row: a random victim */
		u32 victim = readl(r + get_random_u32_below(NVM_PT_WAYS) * 4);
		struct netvm_export *vx = victim < eps->max_ppn ?
					  eps->owner[victim] : NULL;

		if (vx)
			pt_unmap(nd, vx, eps->owner_idx[victim]);
		else
			pt_row_remove(nd, row, victim);
		for (w = 0; w < NVM_PT_WAYS && readl(r + w * 4); w++)
			;
		if (w == NVM_PT_WAYS)
			return;
	}

	writel(lower_32_bits(exp->key), e + 8);
	writel(upper_32_bits(exp->key), e + 12);
	writeb(exp->ro ? NVM_PMAP_RO : 0, nd->sram + l->pmap_flags + ppn);
	/* start clean: host bit = NI bit ^ 1 */
	writeb(readb(nd->sram + l->pmap_ndirty + ppn) ^ 1,
	       nd->sram + l->pmap_hdirty + ppn);
	writel(lower_32_bits(tag), e);
	writel(upper_32_bits(tag), e + 4);
	wmb();	/* the PMAP entry before the PPN that leads to it */
	writel(ppn, r + w * 4);

	eps->owner[ppn] = exp;
	eps->owner_idx[ppn] = idx;
	exp->ppn[idx] = ppn;
	ep_inc(eps, exp->ep, EPC_INSTALLS);
}

/* ---- invalidation ---- */

static bool ep_invalidate(struct mmu_interval_notifier *mni,
			  const struct mmu_notifier_range *range,
			  unsigned long cur_seq)
{
	struct netvm_export *exp = container_of(mni, struct netvm_export, mni);
	struct netvm_dev *nd = exp->ep->nd;
	struct netvm_eps *eps = &nd->eps;
	unsigned long s, e, i;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&eps->pt_lock);
	mmu_interval_set_seq(mni, cur_seq);
	s = max(range->start, exp->start);
	e = min(range->end, exp->end);
	ep_inc(eps, exp->ep, EPC_INVALIDATIONS);
	if (s >= e)
		goto out;
	for (i = (s - exp->start) >> PAGE_SHIFT;
	     i < exp->npages && exp->start + i * PAGE_SIZE < e; i++) {
		if (!exp->ppn[i])
			continue;
		if (eps->ready)
			pt_unmap(nd, exp, i);
		else
			exp->ppn[i] = 0;
	}
out:
	mutex_unlock(&eps->pt_lock);
	return true;
}

static const struct mmu_interval_notifier_ops ep_mni_ops = {
	.invalidate = ep_invalidate,
};

/* ---- installing translations ---- */

/*
 * hmm_range_fault() of @range in @mm under mmap_read_lock, again while an
 * invalidation makes it -EBUSY (until @timeout); range->notifier_seq is
 * the sequence to check under pt_lock before the result is used.
 */
static int ep_hmm_fault(struct hmm_range *range, struct mm_struct *mm,
			unsigned long timeout)
{
	int ret;

	do {
		if (time_after(jiffies, timeout))
			return -EBUSY;
		range->notifier_seq = mmu_interval_read_begin(range->notifier);
		mmap_read_lock(mm);
		ret = hmm_range_fault(range);
		mmap_read_unlock(mm);
	} while (ret == -EBUSY);
	return ret;
}

/*
 * Install translations for [va, va + n pages) of @exp in @mm: fault them
 * in when @fault, else only those resident (and, for a writable export,
 * writable: a read-only page may be shared copy-on-write).  The caller
 * holds a reference on @mm (mmget) and exp->ep->lock.
 */
static int ep_install(struct netvm_export *exp, struct mm_struct *mm,
		      unsigned long va, unsigned long n, bool fault)
{
	struct netvm_dev *nd = exp->ep->nd;
	struct netvm_eps *eps = &nd->eps;
	unsigned long *pfns, i, idx;
	struct hmm_range range = {
		.notifier = &exp->mni,
		.start = va,
		.end = va + n * PAGE_SIZE,
		.dev_private_owner = NULL,
	};
	unsigned long timeout = jiffies + msecs_to_jiffies(HMM_RANGE_DEFAULT_TIMEOUT);
	bool write = true;
	int ret;

	pfns = kvcalloc(n, sizeof(*pfns), GFP_KERNEL);
	if (!pfns)
		return -ENOMEM;
	range.hmm_pfns = pfns;
	/*
	 * Fault with write access even for read-only exports (the NIC will
	 * not write them): a read fault of a never-written page maps the
	 * shared zero page, and the PMAP holds one address per page, so two
	 * addresses would keep taking the zero page from each other.  A
	 * mapping that cannot be written is faulted for reading.
	 */
	if (fault)
		range.default_flags = HMM_PFN_REQ_FAULT | HMM_PFN_REQ_WRITE;
again:
	ret = ep_hmm_fault(&range, mm, timeout);
	if ((ret == -EPERM || ret == -EFAULT) && fault && write && exp->ro) {
		write = false;
		range.default_flags = HMM_PFN_REQ_FAULT;
		goto again;
	}
	if (ret)
		goto out;

	mutex_lock(&eps->pt_lock);
	if (mmu_interval_read_retry(&exp->mni, range.notifier_seq)) {
		mutex_unlock(&eps->pt_lock);
		goto again;
	}
	for (i = 0; i < n && eps->ready; i++) {
		unsigned long f = pfns[i];
		unsigned long pfn;

		if (!(f & HMM_PFN_VALID) || (f & HMM_PFN_ERROR))
			continue;
		if (!exp->ro && !(f & HMM_PFN_WRITE))
			continue;
		pfn = page_to_pfn(hmm_pfn_to_page(f));
		if (!pfn || pfn >= eps->max_ppn || is_zero_pfn(pfn))
			continue;	/* the zero page is nobody's: never map it */
		idx = ((va - exp->start) >> PAGE_SHIFT) + i;
		pt_map(nd, exp, idx, (u32)pfn);
	}
	mutex_unlock(&eps->pt_lock);
out:
	kvfree(pfns);
	return ret;
}

static struct netvm_export *ep_find_export(struct netvm_ep *ep,
					   unsigned long va, unsigned long len)
{
	struct netvm_export *exp;

	list_for_each_entry(exp, &ep->exports, node)
		if (va >= exp->start && va < exp->end && len <= exp->end - va)
			return exp;
	return NULL;
}

/* ---- events: page miss, bounce, notification ---- */

static void ep_page_miss(struct netvm_dev *nd, u32 port, u32 data, u64 va)
{
	struct netvm_eps *eps = &nd->eps;
	struct netvm_ep *ep = eps->ep[port];
	struct netvm_export *exp;
	int ret = -ENOENT;

	ep_inc(eps, ep, EPC_PAGE_MISSES);
	if (!ep)
		return;		/* closed: its operations were aborted */
	mutex_lock(&ep->lock);
	exp = ep_find_export(ep, (unsigned long)va, 1);
	if (exp && mmget_not_zero(ep->mm)) {
		ret = ep_install(exp, ep->mm, (unsigned long)va & PAGE_MASK, 1,
				 true);
		mmput(ep->mm);
	}
	mutex_unlock(&ep->lock);
	if (ret && ep->unet && !(data & BIT(31))) {
		/* a U-Net send: its retry misses again and fails (FAULT) */
		ep_inc(eps, ep, EPC_MISS_ERRORS);
		nv_kcmd(nd, NVM_KOP_RESTART, 0, (u16)port,
			lower_32_bits(va & PAGE_MASK),
			upper_32_bits(va & PAGE_MASK), NULL, 0);
		return;
	}
	if (ret) {
		/*
		 * Not ours to map (outside every export, or the process no
		 * longer has it): a restart would only miss again.  The
		 * endpoint waits until it is closed, which aborts it.  (A
		 * U-Net delivery that missed was diverted: nothing waits.)
		 */
		ep_inc(eps, ep, EPC_MISS_ERRORS);
		if (ep->unet)
			return;
		dev_warn_ratelimited(&nd->pdev->dev,
				     "NetVM: port %u: %s page miss at %#llx cannot be served (%d); endpoint stalled until closed\n",
				     port, data & BIT(31) ? "remote" : "local",
				     va, ret);
		return;
	}
	/* only what waits for this page retries (see NVM_KOP_RESTART) */
	if (!nv_kcmd(nd, NVM_KOP_RESTART, 0, (u16)port,
		     lower_32_bits(va & PAGE_MASK), upper_32_bits(va & PAGE_MASK),
		     NULL, 0))
		ep_inc(eps, ep, EPC_RESTARTS);
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
	exp = ep_find_export(ep, va, len);
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
	ep_install(exp, ep->mm, va & PAGE_MASK, 1, false);
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
	ep_inc(eps, port < NETVM_EP_MAX ? eps->ep[port] : NULL,
	       st == NVM_ST_OK ? EPC_BOUNCES : EPC_BOUNCE_REFUSED);
	nv_kcmd(nd, NVM_KOP_CREDIT, (u16)node, 0, seq, st, NULL, 0);
}

static void ep_work(struct work_struct *work)
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
				ep_inc(eps, NULL, EPC_SIGNALS);
				kill_fasync(&eps->fasync[e.endpoint], SIGIO,
					    POLL_IN);
			}
		}
		return;
	}
	if (!kfifo_in_spinlocked(&eps->evq, &e, 1, &eps->evlock)) {
		ep_inc(eps, NULL, EPC_EVQ_OVERFLOW);
		WRITE_ONCE(eps->events_lost, true);
		dev_err_ratelimited(&nd->pdev->dev,
				    "NetVM: paging event queue full; event lost\n");
		return;
	}
	queue_work(eps->wq_ev, &eps->work);
}

/* ---- endpoints ---- */

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

/* Remove every translation of @exp; then nothing of it is in the NIC. */
static void ep_export_drop(struct netvm_export *exp)
{
	struct netvm_eps *eps = &exp->ep->nd->eps;
	unsigned long i;

	mutex_lock(&eps->pt_lock);
	for (i = 0; i < exp->npages; i++) {
		if (!exp->ppn[i])
			continue;
		if (eps->ready)
			pt_unmap(exp->ep->nd, exp, i);
		else
			exp->ppn[i] = 0;
	}
	mutex_unlock(&eps->pt_lock);
	mmu_interval_notifier_remove(&exp->mni);
	kvfree(exp->ppn);
	kfree(exp);
}

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
		ep_export_drop(exp);
	}
	mutex_unlock(&ep->lock);
	mmdrop(ep->mm);
	dma_free_coherent(&nd->pdev->dev, NETVM_EP_HOST_SIZE, ep->host,
			  ep->host_dma);
	kfree(ep);
}

/*
 * Track [addr, addr + len) of the calling process for @ep's port: an
 * interval notifier, and the translations of the pages resident now (all
 * of them, faulted in, with @fault).  @name "" makes it unimportable (a
 * U-Net segment).  Returns the export (on ep->exports) or an ERR_PTR.
 */
struct netvm_export *netvm_export_add(struct netvm_ep *ep, u64 addr, u64 len,
				      bool ro, const char *name, bool fault)
{
	struct netvm_export *exp, *o;
	unsigned long start, end;
	int ret;

	if (!len || len > NETVM_EXPORT_MAX || addr + len < addr ||
	    addr + len > TASK_SIZE)
		return ERR_PTR(-EINVAL);
	start = addr & PAGE_MASK;
	end = PAGE_ALIGN(addr + len);
	exp = kzalloc(sizeof(*exp), GFP_KERNEL);
	if (!exp)
		return ERR_PTR(-ENOMEM);
	exp->ep = ep;
	exp->start = start;
	exp->end = end;
	exp->npages = (end - start) >> PAGE_SHIFT;
	exp->ro = ro;
	exp->addr = addr;
	exp->len = len;
	strscpy(exp->name, name, sizeof(exp->name));
	do {
		exp->key = get_random_u64();
	} while (!exp->key);
	exp->ppn = kvcalloc(exp->npages, sizeof(*exp->ppn), GFP_KERNEL);
	if (!exp->ppn) {
		kfree(exp);
		return ERR_PTR(-ENOMEM);
	}

	mutex_lock(&ep->lock);
	list_for_each_entry(o, &ep->exports, node)
		if (o->start < end && start < o->end) {
			ret = -EEXIST;
			goto err;
		}
	ret = mmu_interval_notifier_insert(&exp->mni, current->mm, start,
					   end - start, &ep_mni_ops);
	if (ret)
		goto err;
	list_add(&exp->node, &ep->exports);
	/* what is resident now goes in at once; the rest on demand */
	ret = ep_install(exp, current->mm, start, exp->npages, fault);
	mutex_unlock(&ep->lock);
	if (ret && fault) {
		netvm_export_del(ep, exp);
		return ERR_PTR(ret);
	}
	return exp;
err:
	mutex_unlock(&ep->lock);
	kvfree(exp->ppn);
	kfree(exp);
	return ERR_PTR(ret);
}

/* Take @exp off @ep and out of the NIC. */
void netvm_export_del(struct netvm_ep *ep, struct netvm_export *exp)
{
	mutex_lock(&ep->lock);
	list_del(&exp->node);
	ep_export_drop(exp);
	mutex_unlock(&ep->lock);
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

static int ep_unexport(struct netvm_ep *ep, void __user *uarg)
{
	struct netvm_unexport_req req;
	struct netvm_export *exp;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;
	mutex_lock(&ep->lock);
	list_for_each_entry(exp, &ep->exports, node) {
		if (exp->start == (req.addr & PAGE_MASK)) {
			list_del(&exp->node);
			ep_export_drop(exp);
			mutex_unlock(&ep->lock);
			return 0;
		}
	}
	mutex_unlock(&ep->lock);
	return -ENOENT;
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
	} else if (cmd == NETVM_IOC_PTBENCH) {
		ret = netvm_ep_ptbench(ep, u);
	} else {
		ret = -ENOTTY;
	}
	mutex_unlock(&nf->lock);
	return ret;
}

/*
 * Map one of a port's three regions, chosen by the offset (the same for
 * NetVM and U-Net endpoints): its SRAM window, its doorbell page, or its
 * host block (@host_size bytes of coherent memory at @host).  The caller
 * has checked that the mapping is the port owner's.
 */
int netvm_mmap_port(struct netvm_dev *nd, struct vm_area_struct *vma,
		    u32 port, void *host, dma_addr_t host_dma, size_t host_size)
{
	unsigned long off = vma->vm_pgoff << PAGE_SHIFT;
	unsigned long size = vma->vm_end - vma->vm_start;
	phys_addr_t pa;

	netvm_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	switch (off) {
	case NETVM_EP_MMAP_SRAM:
		if (size > NVM_EP_STRIDE)
			return -EINVAL;
		pa = pci_resource_start(nd->pdev, LANAI_BAR_SRAM) +
		     nd->layout.ep_base + port * NVM_EP_STRIDE;
		break;
	case NETVM_EP_MMAP_DB:
		if (size > LANAI_DOORBELL_PAGE)
			return -EINVAL;
		pa = pci_resource_start(nd->pdev, LANAI_BAR_DOORBELL) +
		     port * LANAI_DOORBELL_PAGE;
		break;
	case NETVM_EP_MMAP_HOST:
		if (size > PAGE_ALIGN(host_size))
			return -EINVAL;
		vma->vm_pgoff = 0;
		return dma_mmap_coherent(&nd->pdev->dev, vma, host, host_dma,
					 host_size);
	default:
		return -EINVAL;
	}
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	return io_remap_pfn_range(vma, vma->vm_start, pa >> PAGE_SHIFT, size,
				  vma->vm_page_prot);
}

/*
 * mmap: only the endpoint's own SRAM region, doorbell page and host
 * areas, each from its start; nothing is inherited across fork.
 */
int netvm_ep_mmap(struct netvm_file *nf, struct vm_area_struct *vma)
{
	struct netvm_ep *ep;
	struct netvm_dev *nd = nf->nd;
	int ret;

	mutex_lock(&nf->lock);
	ep = nf->ep;
	if (!ep) {
		ret = -ENXIO;
		goto out;
	}
	if (ep->mm != current->mm || READ_ONCE(nd->dead)) {
		ret = -EACCES;
		goto out;
	}
	ret = netvm_mmap_port(nd, vma, ep->port, ep->host, ep->host_dma,
			      NETVM_EP_HOST_SIZE);
out:
	mutex_unlock(&nf->lock);
	return ret;
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

/* ---- observability (netvm_obs.c shows these) ---- */

static u32 ep_status_word(struct netvm_ep *ep, size_t field)
{
	struct netvm_dev *nd = ep->nd;

	return readl(nd->sram + nd->layout.ep_base + ep->port * NVM_EP_STRIDE +
		     NVM_EP_STATUS + field);
}

/* Translations of @exp in the NIC now; pt_lock held. */
static unsigned long ep_export_pages(struct netvm_export *exp)
{
	unsigned long i, n = 0;

	for (i = 0; i < exp->npages; i++)
		n += !!exp->ppn[i];
	return n;
}

/*
 * endpoints/<port>/counters: the endpoint's paging counters, then the
 * firmware's view of its queue (struct nvm_ep_status in SRAM).
 */
ssize_t netvm_ep_counters_fmt(struct netvm_ep *ep, char *buf)
{
	int len = 0, c;

	for (c = 0; c < EPC_PER_EP; c++)
		len += sysfs_emit_at(buf, len, "%s %lld\n",
				     netvm_ep_counter_names[c],
				     atomic64_read(&ep->cnt[c]));
	if (READ_ONCE(ep->nd->dead))
		return len;
	len += sysfs_emit_at(buf, len,
			     "consumed %u\ndone %u\nerrors %u\nnotf_queued %u\ncredit_stalls %u\n",
			     ep_status_word(ep, offsetof(struct nvm_ep_status, consumed)),
			     ep_status_word(ep, offsetof(struct nvm_ep_status, done)),
			     ep_status_word(ep, offsetof(struct nvm_ep_status, errors)),
			     ep_status_word(ep, offsetof(struct nvm_ep_status, notf_queued)),
			     ep_status_word(ep, offsetof(struct nvm_ep_status, credit_stalls)));
	return len;
}

/* endpoints/<port>/exports: "NAME START PAGES MAPPED rw|ro" per export. */
ssize_t netvm_ep_exports_fmt(struct netvm_ep *ep, char *buf)
{
	struct netvm_eps *eps = &ep->nd->eps;
	struct netvm_export *exp;
	int len = 0;

	mutex_lock(&ep->lock);
	mutex_lock(&eps->pt_lock);
	list_for_each_entry(exp, &ep->exports, node)
		len += sysfs_emit_at(buf, len, "%s %#lx %lu %lu %s\n",
				     exp->name, exp->start, exp->npages,
				     ep_export_pages(exp),
				     exp->ro ? "ro" : "rw");
	mutex_unlock(&eps->pt_lock);
	mutex_unlock(&ep->lock);
	return len;
}

/* debugfs netvm/netvmN/endpoints: one line per open endpoint. */
int netvm_ep_list_show(struct seq_file *m, struct netvm_dev *nd)
{
	struct netvm_eps *eps = &nd->eps;
	struct netvm_export *exp;
	unsigned long pages;
	u32 port, nexp;

	mutex_lock(&eps->lock);
	for (port = 0; port < NETVM_EP_MAX; port++) {
		struct netvm_ep *ep = eps->ep[port];

		if (!ep)
			continue;
		nexp = 0;
		pages = 0;
		mutex_lock(&ep->lock);
		mutex_lock(&eps->pt_lock);
		list_for_each_entry(exp, &ep->exports, node) {
			nexp++;
			pages += ep_export_pages(exp);
		}
		mutex_unlock(&eps->pt_lock);
		mutex_unlock(&ep->lock);
		seq_printf(m, "port %u pid %d exports %u mapped %lu done %u errors %u\n",
			   port, ep->pid, nexp, pages,
			   ep_status_word(ep, offsetof(struct nvm_ep_status, done)),
			   ep_status_word(ep, offsetof(struct nvm_ep_status, errors)));
	}
	mutex_unlock(&eps->lock);
	return 0;
}

/*
 * debugfs netvm/netvmN/pt: every translation the driver has installed,
 * with what the NIC holds for it (row, way, PMAP flags, dirty and lock
 * bytes).  "way -1" would mean the PPN is missing from its row: a bug.
 */
int netvm_ep_pt_show(struct seq_file *m, struct netvm_dev *nd)
{
	struct netvm_eps *eps = &nd->eps;
	const struct nvm_sram_layout *l = &nd->layout;
	unsigned long n = 0;
	u32 ppn;

	mutex_lock(&eps->pt_lock);
	if (!eps->ready || READ_ONCE(nd->dead)) {
		mutex_unlock(&eps->pt_lock);
		seq_puts(m, "NetVM off\n");
		return 0;
	}
	for (ppn = 0; ppn < eps->max_ppn; ppn++)
		n += !!eps->owner[ppn];
	seq_printf(m, "max_ppn %u pt_rows %u ways %u mapped %lu\n",
		   eps->max_ppn, eps->pt_rows, NVM_PT_WAYS, n);
	for (ppn = 0; ppn < eps->max_ppn; ppn++) {
		struct netvm_export *exp = eps->owner[ppn];
		unsigned long va;
		void __iomem *r;
		u32 row;
		int w, way = -1;

		if (!exp)
			continue;
		va = exp->start + eps->owner_idx[ppn] * PAGE_SIZE;
		row = ep_row(nd, exp->ep->port, va);
		r = pt_row(nd, row);
		for (w = 0; w < NVM_PT_WAYS; w++)
			if (readl(r + w * 4) == ppn)
				way = w;
		seq_printf(m, "port %u va %#lx ppn %#x row %u way %d flags %#x hdirty %u ndirty %u lock %u\n",
			   exp->ep->port, va, ppn, row, way,
			   readb(nd->sram + l->pmap_flags + ppn),
			   readb(nd->sram + l->pmap_hdirty + ppn),
			   readb(nd->sram + l->pmap_ndirty + ppn),
			   readb(nd->sram + l->pmap_lock + ppn));
	}
	mutex_unlock(&eps->pt_lock);
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
	exp = ep_find_export(ep, b.addr, (unsigned long)b.npages * PAGE_SIZE);
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
		ret = ep_hmm_fault(&range, ep->mm, jiffies +
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
				pt_map(nd, exp, idx0 + i, (u32)pfn);
		}
		b.map_ns += ktime_get_ns() - t0;
		t0 = ktime_get_ns();
		for (i = 0; i < b.npages; i++)
			pt_unmap(nd, exp, idx0 + i);
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

/* ---- per device ---- */

static ssize_t ep_counters_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct netvm_dev *nd = container_of(dev, struct netvm_dev, dev);
	struct netvm_eps *eps = &nd->eps;
	u32 open = 0, p;
	int len, c;

	for (p = 0; p < NETVM_EP_MAX; p++)
		open += !!READ_ONCE(eps->ep[p]);
	len = sysfs_emit(buf, "endpoints %u\n", open);
	for (c = 0; c < EPC_MAX; c++)
		len += sysfs_emit_at(buf, len, "%s %lld\n",
				     netvm_ep_counter_names[c],
				     atomic64_read(&eps->cnt[c]));
	return len;
}
DEVICE_ATTR_RO(ep_counters);

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
	INIT_WORK(&eps->work, ep_work);
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
