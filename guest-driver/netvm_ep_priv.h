/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netvm.ko: what the NetVM endpoint files share and nobody else uses:
 * netvm_ep.c (endpoints' life), netvm_ep_pt.c (page table, HMM, exports),
 * netvm_ep_miss.c (page misses, bounces), netvm_ep_ioctl.c, netvm_ep_mmap.c
 * and netvm_obs.c (what they show).  Locking: see netvm_ep.h.
 */
#ifndef NETVM_EP_PRIV_H
#define NETVM_EP_PRIV_H

#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <linux/io.h>
#include <linux/mm.h>

#include "netvm_drv.h"

/* An endpoint's host block (NETVM_EP_HOST_SIZE), by offset */
#define EP_HOST_SHADOW		0
#define EP_HOST_NOTF_CONS	32
#define EP_HOST_REPLY		64
#define EP_HOST_ERR		1024
#define EP_HOST_NOTF		4096

static_assert(EP_HOST_ERR + NVM_ERR_RING_LEN * sizeof(struct nvm_err_rec) <=
	      EP_HOST_NOTF);
static_assert(EP_HOST_NOTF + NETVM_EP_NOTF_LEN * sizeof(struct nvm_notf_entry)
	      <= NETVM_EP_HOST_SIZE);

struct hmm_range;

/* Count @c for the device and, when known, for the endpoint. */
static inline void netvm_ep_inc(struct netvm_eps *eps, struct netvm_ep *ep,
				enum netvm_ep_counter c)
{
	atomic64_inc(&eps->cnt[c]);
	if (ep && c < EPC_PER_EP)
		atomic64_inc(&ep->cnt[c]);
}

/* ---- the shadow page table in SRAM (netvm_ep_pt.c; pt_lock held) ---- */

static inline void __iomem *netvm_pt_row(struct netvm_dev *nd, u32 row)
{
	return nd->sram + nd->layout.pt + row * NVM_PT_WAYS * 4;
}

static inline void __iomem *netvm_pmap_ent(struct netvm_dev *nd, u32 ppn)
{
	return nd->sram + nd->layout.pmap + ppn * sizeof(struct nvm_pmap_entry);
}

/* The row where @port's translation of @va belongs */
static inline u32 netvm_pt_ep_row(struct netvm_dev *nd, u32 port,
				  unsigned long va)
{
	return nvm_pt_hash(port, va >> PAGE_SHIFT, nd->eps.pt_rows);
}

void netvm_pt_map(struct netvm_dev *nd, struct netvm_export *exp,
		  unsigned long idx, u32 ppn);
void netvm_pt_unmap(struct netvm_dev *nd, struct netvm_export *exp,
		    unsigned long idx);
int netvm_ep_hmm_fault(struct hmm_range *range, struct mm_struct *mm,
		       unsigned long timeout);
int netvm_ep_install(struct netvm_export *exp, struct mm_struct *mm,
		     unsigned long va, unsigned long n, bool fault);
struct netvm_export *netvm_ep_find_export(struct netvm_ep *ep,
					  unsigned long va, unsigned long len);
void netvm_export_drop(struct netvm_export *exp);

/* netvm_ep_miss.c: the paging worker */
void netvm_ep_work(struct work_struct *work);

/* netvm_ep_ioctl.c */
long netvm_ep_ptbench(struct netvm_ep *ep, void __user *u);

#endif /* NETVM_EP_PRIV_H */
