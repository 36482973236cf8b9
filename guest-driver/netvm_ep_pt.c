// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: NetVM's shadow page table in SRAM, kept in step with each
 * process's address space through HMM and interval notifiers; exports.
 *
 * A translation (PMAP entry, then the PPN in its row) is found with
 * hmm_range_fault() under the notifier's sequence and written under
 * pt_lock only if no invalidation ran in between.  The invalidate
 * callback removes translations with NetVM's unmapPPN protocol (clear
 * the tag, full fence, look at the NI's lock; restore and retry while
 * locked) and carries the NI's dirty bit to the page.  Nothing is pinned.
 *
 * Locking: see netvm_ep.h.
 */
#include <linux/delay.h>
#include <linux/hmm.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "netvm_drv.h"
#include "netvm_ep_priv.h"

#define EP_UNMAP_TRIES		20000	/* ~1 s of 50 us waits */

/* ---- the shadow page table in SRAM (pt_lock held) ---- */

/* Take @ppn out of @row: the last entry moves into the hole. */
static void pt_row_remove(struct netvm_dev *nd, u32 row, u32 ppn)
{
	void __iomem *r = netvm_pt_row(nd, row);
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
void netvm_pt_unmap(struct netvm_dev *nd, struct netvm_export *exp,
		    unsigned long idx)
{
	struct netvm_eps *eps = &nd->eps;
	const struct nvm_sram_layout *l = &nd->layout;
	u32 ppn = exp->ppn[idx];
	void __iomem *e = netvm_pmap_ent(nd, ppn);
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
			netvm_ep_inc(eps, exp->ep, EPC_UNMAP_WAITS);
			if (++tries >= EP_UNMAP_TRIES) {
				netvm_ep_inc(eps, exp->ep, EPC_UNMAP_TIMEOUTS);
				dev_warn_ratelimited(&nd->pdev->dev,
						     "NetVM: page %#x still locked by the NIC after 1 s; unmapping anyway\n",
						     ppn);
				writel(0, e + 4);
				writel(0, e);
				break;
			}
			usleep_range(20, 50);
		}
		pt_row_remove(nd, netvm_pt_ep_row(nd, exp->ep->port,
						  exp->start + idx * PAGE_SIZE), ppn);
		hd = readb(nd->sram + l->pmap_hdirty + ppn);
		ndb = readb(nd->sram + l->pmap_ndirty + ppn);
		if (hd == ndb) {	/* isPageDirty: the NI wrote to it */
			if (pfn_valid(ppn))
				set_page_dirty(pfn_to_page(ppn));
			netvm_ep_inc(eps, exp->ep, EPC_DIRTY);
			writeb(ndb ^ 1, nd->sram + l->pmap_hdirty + ppn);
		}
	}
	eps->owner[ppn] = NULL;
	exp->ppn[idx] = 0;
	netvm_ep_inc(eps, exp->ep, EPC_REMOVALS);
}

/* The protection key of @ppn's PMAP entry (pt_lock held). */
static void pt_write_key(struct netvm_dev *nd, u32 ppn, u64 key)
{
	void __iomem *e = netvm_pmap_ent(nd, ppn);

	writel(lower_32_bits(key), e + 8);
	writel(upper_32_bits(key), e + 12);
}

/* mapPage: PMAP fields first, the PPN into its row last. */
void netvm_pt_map(struct netvm_dev *nd, struct netvm_export *exp,
		  unsigned long idx, u32 ppn)
{
	struct netvm_eps *eps = &nd->eps;
	const struct nvm_sram_layout *l = &nd->layout;
	unsigned long va = exp->start + idx * PAGE_SIZE;
	u32 port = exp->ep->port;
	u32 row = netvm_pt_ep_row(nd, port, va);
	void __iomem *r = netvm_pt_row(nd, row);
	void __iomem *e = netvm_pmap_ent(nd, ppn);
	u64 tag = nvm_pt_tag(port, va >> PAGE_SHIFT);
	struct netvm_export *old = eps->owner[ppn];
	int w;

	if (old == exp && eps->owner_idx[ppn] == idx && exp->ppn[idx] == ppn)
		return;			/* already there */
	if (old)			/* 1:1: the page had another VA */
		netvm_pt_unmap(nd, old, eps->owner_idx[ppn]);
	if (exp->ppn[idx])		/* the VA had another page */
		netvm_pt_unmap(nd, exp, idx);

	for (w = 0; w < NVM_PT_WAYS && readl(r + w * 4); w++)
		;
	if (w == NVM_PT_WAYS) {		/* full row: a random victim */
		u32 victim = readl(r + get_random_u32_below(NVM_PT_WAYS) * 4);
		struct netvm_export *vx = victim < eps->max_ppn ?
					  eps->owner[victim] : NULL;

		if (vx)
			netvm_pt_unmap(nd, vx, eps->owner_idx[victim]);
		else
			pt_row_remove(nd, row, victim);
		for (w = 0; w < NVM_PT_WAYS && readl(r + w * 4); w++)
			;
		if (w == NVM_PT_WAYS)
			return;
	}

	pt_write_key(nd, ppn, exp->key);
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
	netvm_ep_inc(eps, exp->ep, EPC_INSTALLS);
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
	netvm_ep_inc(eps, exp->ep, EPC_INVALIDATIONS);
	if (s >= e)
		goto out;
	for (i = (s - exp->start) >> PAGE_SHIFT;
	     i < exp->npages && exp->start + i * PAGE_SIZE < e; i++) {
		if (!exp->ppn[i])
			continue;
		if (eps->ready)
			netvm_pt_unmap(nd, exp, i);
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
int netvm_ep_hmm_fault(struct hmm_range *range, struct mm_struct *mm,
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
int netvm_ep_install(struct netvm_export *exp, struct mm_struct *mm,
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
	ret = netvm_ep_hmm_fault(&range, mm, timeout);
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
		netvm_pt_map(nd, exp, idx, (u32)pfn);
	}
	mutex_unlock(&eps->pt_lock);
out:
	kvfree(pfns);
	return ret;
}

/* ---- exports ---- */

/* The export of @ep holding [va, va + len); ep->lock held. */
struct netvm_export *netvm_ep_find_export(struct netvm_ep *ep,
					  unsigned long va, unsigned long len)
{
	struct netvm_export *exp;

	list_for_each_entry(exp, &ep->exports, node)
		if (va >= exp->start && va < exp->end && len <= exp->end - va)
			return exp;
	return NULL;
}

/* Remove every translation of @exp; then nothing of it is in the NIC. */
void netvm_export_drop(struct netvm_export *exp)
{
	struct netvm_eps *eps = &exp->ep->nd->eps;
	unsigned long i;

	mutex_lock(&eps->pt_lock);
	for (i = 0; i < exp->npages; i++) {
		if (!exp->ppn[i])
			continue;
		if (eps->ready)
			netvm_pt_unmap(exp->ep->nd, exp, i);
		else
			exp->ppn[i] = 0;
	}
	mutex_unlock(&eps->pt_lock);
	mmu_interval_notifier_remove(&exp->mni);
	kvfree(exp->ppn);
	kfree(exp);
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
	ret = netvm_ep_install(exp, current->mm, start, exp->npages, fault);
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

/*
 * An access may have checked the old key before it was replaced: the NI
 * locks a page, then checks the key, then moves the bytes.  Wait, after a
 * full fence, until it holds none of @exp's pages (as unmapPPN waits for
 * its lock): then no access under the old key is still going on.  Bounded
 * like an unmap (a page the NIC keeps locked is left after ~1 s, warned).
 * pt_lock held.
 */
static void rekey_drain(struct netvm_dev *nd, struct netvm_export *exp)
{
	struct netvm_eps *eps = &nd->eps;
	const struct nvm_sram_layout *l = &nd->layout;
	unsigned int tries = 0;
	unsigned long i;

	mb();	/* the new key written before we look at the locks */
	for (i = 0; i < exp->npages; i++) {
		u32 ppn = exp->ppn[i];

		while (ppn && readb(nd->sram + l->pmap_lock + ppn)) {
			netvm_ep_inc(eps, exp->ep, EPC_REKEY_WAITS);
			if (++tries >= EP_UNMAP_TRIES) {
				netvm_ep_inc(eps, exp->ep, EPC_REKEY_TIMEOUTS);
				dev_warn_ratelimited(&nd->pdev->dev,
						     "NetVM: page %#x still locked by the NIC 1 s after a rekey\n",
						     ppn);
				return;
			}
			usleep_range(20, 50);
		}
	}
}

/*
 * A new random key (and @name) for @exp, written into the PMAP entry of
 * every page it has in the NIC; the translations themselves stay.  The
 * low word goes first: in between, the entry matches neither key, so an
 * access under the old one fails as it will after.  Returns once no
 * access under the old key is in progress (rekey_drain).  Returns the
 * key.  ep->lock held.
 */
u64 netvm_export_rekey(struct netvm_export *exp, const char *name)
{
	struct netvm_dev *nd = exp->ep->nd;
	struct netvm_eps *eps = &nd->eps;
	unsigned long i;
	bool live;
	u64 key;

	do {
		key = get_random_u64();
	} while (!key || key == exp->key);
	mutex_lock(&eps->pt_lock);
	exp->key = key;
	strscpy(exp->name, name, sizeof(exp->name));
	live = eps->ready && !READ_ONCE(nd->dead);
	for (i = 0; i < exp->npages && live; i++)
		if (exp->ppn[i])
			pt_write_key(nd, exp->ppn[i], key);
	if (live)
		rekey_drain(nd, exp);
	mutex_unlock(&eps->pt_lock);
	return key;
}

/* Take @exp off @ep and out of the NIC. */
void netvm_export_del(struct netvm_ep *ep, struct netvm_export *exp)
{
	mutex_lock(&ep->lock);
	list_del(&exp->node);
	netvm_export_drop(exp);
	mutex_unlock(&ep->lock);
}
