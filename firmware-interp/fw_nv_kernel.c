// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel control commands, on endpoint 0 only: configure the page tables
 * and the bounce buffer, open and close endpoints, restart after a page
 * miss, return bounce credits, set routes and the windows peers may reach
 * by physical address.  Each completes at once.
 */
#include <string.h>

#include "fw.h"

static uint32_t align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static uint32_t k_config(struct fw *fw, const struct nvm_k_config *k)
{
	struct nvm_sram_layout *l = &fw->layout;
	uint64_t end;
	uint32_t off;

	if (!k->max_ppn || !k->pt_rows || !k->epoch ||
	    k->max_nodes > FW_NV_NODES ||
	    (uint64_t)k->max_nodes * FW_NV_WIN > k->bounce_slots)
		return NVM_ST_BAD_CMD;
	/* tables after the endpoints: PT, PMAP, then the byte arrays */
	off = align_up(l->ep_base + l->ep_count * l->ep_stride, NVM_PAGE_SIZE);
	end = off;
	end += (uint64_t)k->pt_rows * NVM_PT_WAYS * 4;
	end += (uint64_t)k->max_ppn * sizeof(struct nvm_pmap_entry);
	end += (uint64_t)k->max_ppn * 4;
	if (!l->ep_count || end > fw->chip->sram_size)
		return NVM_ST_BAD_CMD;		/* does not fit this SRAM */

	l->pt = off;
	l->pt_rows = k->pt_rows;
	l->pmap = l->pt + k->pt_rows * NVM_PT_WAYS * 4;
	l->pmap_lock = l->pmap + k->max_ppn * sizeof(struct nvm_pmap_entry);
	l->pmap_hdirty = l->pmap_lock + k->max_ppn;
	l->pmap_ndirty = l->pmap_hdirty + k->max_ppn;
	l->pmap_flags = l->pmap_ndirty + k->max_ppn;
	l->max_ppn = k->max_ppn;
	l->tables_end = (uint32_t)end;
	memset(fw->chip->sram + l->pt, 0, (uint32_t)end - l->pt);
	/* host dirty bits start at 1, NI bits at 0: equal means dirty */
	memset(fw->chip->sram + l->pmap_hdirty, 1, k->max_ppn);
	memcpy(fw->chip->sram + fw->layout_off, l, sizeof(*l));

	fw->nv.epoch = k->epoch;
	fw->nv.bounce_base = k->bounce_base;
	fw->nv.bounce_slots = k->bounce_slots;
	fw->nv.max_nodes = k->max_nodes;
	fw->nv.giveup_ticks = k->giveup_ms ? k->giveup_ms /
			      (uint32_t)(FW_NV_TICK_NS / 1000000) :
			      FW_NV_GIVEUP_TICKS;
	if (fw->nv.giveup_ticks < FW_NV_GIVEUP_MIN_TICKS)
		fw->nv.giveup_ticks = FW_NV_GIVEUP_MIN_TICKS;
	if (fw->nv.giveup_ticks > FW_NV_GIVEUP_MAX_TICKS)
		fw->nv.giveup_ticks = FW_NV_GIVEUP_MAX_TICKS;
	fw->nv.configured = 1;
	fw_tr_fw_nv_config(fw, k->max_ppn, k->pt_rows);
	return NVM_ST_OK;
}

static void ep_abort(struct fw *fw, uint32_t ep)
{
	struct fw_nv_ep *e = &fw->nv.ep[ep];

	for (uint32_t i = 0; i < NVM_CMDQ_LEN; i++)
		if (e->ops[i].state != FW_OP_FREE)
			fw_nv_complete(fw, ep, i, NVM_ST_ABORTED);
	e->fence = 0;
	e->missing = 0;
}

static uint32_t k_ep_open(struct fw *fw, const struct nvm_k_ep_open *k)
{
	struct fw_nv_ep *e;

	if (!fw->nv.configured || k->port >= FW_NV_EPS ||
	    (k->notf_len & (k->notf_len - 1)))
		return NVM_ST_BAD_CMD;
	e = &fw->nv.ep[k->port];
	if ((e->open || fw_unet_open_port(fw, k->port)) &&
	    k->port != NVM_EP_KERNEL)
		return NVM_ST_BAD_CMD;
	if (k->port != NVM_EP_KERNEL)
		memset(e, 0, sizeof(*e));
	e->open = 1;
	e->flags = (k->port == NVM_EP_KERNEL ? NVM_EPF_KERNEL : 0) |
		   (k->flags & NVM_EPF_KERNEL && k->port == NVM_EP_KERNEL);
	e->shadow = k->shadow;
	e->err_ring = k->err_ring;
	e->reply = k->reply;
	e->notf_ring = k->notf_ring;
	e->notf_len = k->notf_len;
	/* the endpoint's SRAM region starts clean */
	if (k->port != NVM_EP_KERNEL)
		memset(fw->chip->sram + fw->layout.ep_base +
		       k->port * NVM_EP_STRIDE, 0, NVM_EP_STRIDE);
	return NVM_ST_OK;
}

static uint32_t k_ep_close(struct fw *fw, uint32_t port)
{
	if (port == NVM_EP_KERNEL || port >= FW_NV_EPS ||
	    !fw->nv.ep[port].open)
		return NVM_ST_BAD_CMD;
	ep_abort(fw, port);
	fw_tw_clear_owner(fw, port);
	fw->nv.ep[port].open = 0;
	/* remote requests for it fail when they run (no such port) */
	return NVM_ST_OK;
}

/* The page @op missed (FW_OP_MISS). */
static uint64_t op_miss_page(const struct fw_nv_op *op)
{
	return ((uint64_t)op->miss_va_hi << 32 | op->miss_va_lo) &
	       ~(uint64_t)(NVM_PAGE_SIZE - 1);
}

/*
 * The kernel mapped @page (0: anything) for @port: retry what waits for it.
 * Retrying only those keeps one miss from waking every other waiter, which
 * would miss again at once and flood the kernel with events.
 */
static uint32_t k_restart(struct fw *fw, uint32_t port, uint64_t page)
{
	struct fw_nv_ep *e;
	bool waiting = false;

	if (port >= FW_NV_EPS)
		return NVM_ST_BAD_CMD;
	e = &fw->nv.ep[port];
	page &= ~(uint64_t)(NVM_PAGE_SIZE - 1);
	fw_count(fw, FW_CNT_RESTARTS);
	for (uint32_t i = 0; i < NVM_CMDQ_LEN; i++) {
		struct fw_nv_op *op = &e->ops[i];

		if (op->state != FW_OP_MISS)
			continue;
		if (page && op_miss_page(op) != page) {
			waiting = true;
			continue;
		}
		/* a read whose data came back waits to deliver it; anything
		 * else starts over */
		fw_nv_op_set_state(fw, op, op->cmd.op == NVM_OP_READ &&
				   op->resp_len ? FW_OP_DELIVER : FW_OP_NEW);
	}
	e->missing = waiting;
	fw_nv_retry_pending(fw, port, page);
	fw_unet_restart(fw, port, page);
	return NVM_ST_OK;
}

/*
 * The kernel cannot map @page of @port for the local operations that
 * missed it (outside every export, or the process cannot write it): they
 * fail with BAD_ADDR, and the endpoint goes on.
 */
static uint32_t k_miss_fail(struct fw *fw, uint32_t port, uint64_t page)
{
	struct fw_nv_ep *e;
	bool waiting = false;

	if (port >= FW_NV_EPS || !fw->nv.ep[port].open)
		return NVM_ST_BAD_CMD;
	e = &fw->nv.ep[port];
	page &= ~(uint64_t)(NVM_PAGE_SIZE - 1);
	for (uint32_t i = 0; i < NVM_CMDQ_LEN; i++) {
		const struct fw_nv_op *op = &e->ops[i];

		if (op->state != FW_OP_MISS)
			continue;
		if (op_miss_page(op) == page)
			fw_nv_complete(fw, port, i, NVM_ST_BAD_ADDR);
		else
			waiting = true;
	}
	e->missing = waiting;
	return NVM_ST_OK;
}

uint32_t fw_nv_kernel_cmd(struct fw *fw, const struct nvm_cmd *c)
{
	switch (c->op) {
	case NVM_KOP_CONFIG: {
		struct nvm_k_config k;

		memcpy(&k, c->inline_data, sizeof(k));
		return k_config(fw, &k);
	}
	case NVM_KOP_EP_OPEN: {
		struct nvm_k_ep_open k;

		memcpy(&k, c->inline_data, sizeof(k));
		return k_ep_open(fw, &k);
	}
	case NVM_KOP_EP_CLOSE:
		return k_ep_close(fw, c->dst_port);
	case NVM_KOP_RESTART:
		return k_restart(fw, c->dst_port,
				 (uint64_t)c->arg[1] << 32 | c->arg[0]);
	case NVM_KOP_CREDIT:
		if (c->dst_node >= FW_NV_NODES)
			return NVM_ST_BAD_CMD;
		return fw_nv_bounce_done(fw, c->dst_node, c->arg[0], c->arg[1]) ?
		       NVM_ST_OK : NVM_ST_BAD_CMD;
	case NVM_KOP_PHYS_WIN: {
		struct nvm_k_phys_win k;

		memcpy(&k, c->inline_data, sizeof(k));
		return fw_nv_phys_win_set(fw, &k);
	}
	case NVM_KOP_LOCK_HOLD:
		return fw_nv_pt_hold(fw, c->dst_port, c->arg[0]);
	case NVM_KOP_MISS_FAIL:
		return k_miss_fail(fw, c->dst_port,
				   (uint64_t)c->arg[1] << 32 | c->arg[0]);
	case NVM_KOP_ROUTE:
		if (c->dst_node >= FW_NV_NODES || c->arg[0] > NVM_ROUTE_MAX ||
		    (c->arg[1] & ~NVM_ROUTE_F_NONE) ||
		    ((c->arg[1] & NVM_ROUTE_F_NONE) && c->arg[0]))
			return NVM_ST_BAD_CMD;
		for (uint32_t i = 0; i < c->arg[0]; i++)
			if (!(c->inline_data[i] & NVM_ROUTE_BYTE))
				return NVM_ST_BAD_CMD;
		memcpy(fw->nv.route[c->dst_node], c->inline_data, c->arg[0]);
		fw->nv.route_len[c->dst_node] = c->arg[1] & NVM_ROUTE_F_NONE ?
			FW_NV_NO_ROUTE : (uint8_t)c->arg[0];
		/* gone: what waits for it fails now, not at the give-up */
		if (c->arg[1] & NVM_ROUTE_F_NONE)
			fw_nv_fail_peer_ops(fw, c->dst_node, NVM_ST_UNREACHABLE);
		return NVM_ST_OK;
	default:
		return FW_KOP_UNCLAIMED;	/* another program's, or none's */
	}
}
