// SPDX-License-Identifier: GPL-2.0-only
/*
 * NetVM's work owed to peers, from the pending table fw_nv_rx.c fills:
 * remote reads and atomics served, incoming writes finished (placed or
 * bounced to the kernel), responses sent; and NetVM's job completions,
 * one handler per kind (our own operations' go on to fw_nv_ep.c).
 */
#include <string.h>

#include "fw.h"

/* A peer's access to our memory reached it: incoming tripwires. */
static void incoming(struct fw *fw, const struct fw_nv_pending *pd,
		     uint32_t access, uint32_t len)
{
	if (!(pd->h.flags & NVM_CF_PHYS))
		fw_tw_access(fw, access, fw->chip->node_id, pd->h.dst_port,
			     pd->h.va, len, pd->src_node, pd->h.src_port);
}

static void respond(struct fw *fw, struct fw_nv_pending *pd, uint32_t tb,
		    uint32_t payload)
{
	static const uint8_t resp_op[NVM_NET_OP_COUNT] = {
		[NVM_NET_WRITE] = NVM_NET_WRITE_RESP,
		[NVM_NET_READ_REQ] = NVM_NET_READ_RESP,
		[NVM_NET_ATOMIC_REQ] = NVM_NET_ATOMIC_RESP,
	};
	struct nvm_net_hdr *h = fw_nv_txbuf_hdr(fw, tb);

	fw_nv_hdr_init(fw, h, resp_op[pd->h.op], pd->h.dst_port,
		       pd->h.src_port);
	h->status = fw_be16((uint16_t)pd->status);
	h->req = fw_be32(pd->h.req);
	for (int i = 0; i < 3; i++)
		h->arg[i] = fw_be32(pd->r[i]);
	if (pd->h.op == NVM_NET_WRITE)	/* completed when this is acked */
		h->arg[0] = fw_be32(pd->h.seq);
	h->len = fw_be32(payload);
	fw_nv_send_seq(fw, pd->src_node, tb, payload);
	fw_nv_txbuf_put(fw, tb, FW_TB_OP);
	fw_nv_pend_set_state(fw, pd, FW_PEND_FREE);
}

static bool serve(struct fw *fw, uint32_t i)
{
	struct fw_nv_pending *pd = &fw->nv.pending[i];
	struct nvm_net_hdr *h = &pd->h;
	bool atomic = h->op == NVM_NET_ATOMIC_REQ;
	uint32_t len = atomic ? fw_nv_atomic_words(h->atomic_op) * 4 : h->len;
	uint32_t st = NVM_ST_OK, ppn, tb, data;
	int64_t addr;
	int job;

	if (atomic && fw->nv.atomic_busy)
		return false;	/* one atomic at a time keeps them atomic */
	if (fw_hdma_free_slots(fw) < 2)
		return false;
	tb = fw_nv_txbuf_alloc_for(fw, FW_TB_OP, pd->src_node);
	if (!tb)
		return false;
	if (!fw_nv_req_port_ok(fw, h))
		st = NVM_ST_NO_PORT;
	else if (!len || fw_nv_req_page_check(h, len) ||
		 (atomic && (h->va & 3)))
		st = NVM_ST_BAD_CMD;
	if (st == NVM_ST_OK) {
		addr = fw_nv_req_target(fw, pd->src_node, h, len, atomic ?
					NVM_PW_READ | NVM_PW_WRITE :
					NVM_PW_READ, &ppn, &st);
		if (addr == -1) {
			/* the page is missing: the kernel faults it in and
			 * restarts us (NVM_KOP_RESTART) */
			fw_nv_txbuf_put(fw, tb, FW_TB_OP);
			fw_nv_pend_set_state(fw, pd, FW_PEND_MISS);
			fw_count(fw, FW_CNT_PAGE_MISS);
			fw_post(fw, NVM_EV_PAGE_MISS, h->dst_port,
				0x80000000u | i, h->va);
			return true;
		}
	}
	if (st != NVM_ST_OK) {
		pd->status = st;
		respond(fw, pd, tb, 0);
		return true;
	}
	pd->ppn = ppn;
	pd->txbuf = tb;
	data = fw_nv_txbuf_off(fw, tb) + NVM_ROUTE_MAX +
	       sizeof(struct nvm_pkt_hdr) + sizeof(struct nvm_net_hdr);
	job = fw_hdma_alloc(fw, atomic ? FW_JOB_NV_ATOMIC_IN :
			    FW_JOB_NV_READ_FETCH, i);
	fw_hdma_add(fw, job, LANAI_DMA_E2L, len, data, (uint64_t)addr);
	pd->addr = (uint64_t)addr;	/* the atomic writes back there */
	fw_nv_pend_set_state(fw, pd, FW_PEND_BUSY);
	if (atomic)
		fw->nv.atomic_busy = 1;
	fw_hdma_submit(fw, job);
	return true;
}

bool fw_nv_pend_step(struct fw *fw)
{
	bool progress = false;

	for (uint32_t i = 0; i < FW_NV_PENDING; i++) {
		struct fw_nv_pending *pd = &fw->nv.pending[i];

		if (pd->state == FW_PEND_NEW) {
			progress |= serve(fw, i);
		} else if (pd->state == FW_PEND_RESPOND) {
			uint32_t tb = fw_nv_txbuf_alloc_for(fw, FW_TB_OP,
							    pd->src_node);

			if (!tb)
				continue;	/* pool empty or its share held */
			respond(fw, pd, tb, 0);
			progress = true;
		}
	}
	return progress;
}

void fw_nv_retry_pending(struct fw *fw, uint32_t port, uint64_t page)
{
	for (uint32_t i = 0; i < FW_NV_PENDING; i++) {
		struct fw_nv_pending *pd = &fw->nv.pending[i];

		if (pd->state == FW_PEND_MISS && pd->h.dst_port == port &&
		    (!page || (pd->h.va & ~(uint64_t)(NVM_PAGE_SIZE - 1)) == page))
			fw_nv_pend_set_state(fw, pd, FW_PEND_NEW);
	}
}

bool fw_nv_bounce_done(struct fw *fw, uint32_t node, uint32_t seq,
		       uint32_t status)
{
	for (uint32_t i = 0; i < FW_NV_PENDING; i++) {
		struct fw_nv_pending *pd = &fw->nv.pending[i];

		if (pd->state == FW_PEND_BOUNCED && pd->src_node == node &&
		    pd->h.seq == seq) {
			pd->status = status;
			if (status != NVM_ST_OK) {
				/* nothing to notify about; the response
				 * completes the entry once acknowledged */
				fw->nv.peer[node].notf[seq % FW_NV_WIN] = 0;
				fw_nv_pend_set_state(fw, pd, FW_PEND_RESPOND);
				return true;
			}
			incoming(fw, pd, NVM_TW_WRITE, pd->h.len);
			fw_nv_pend_set_state(fw, pd, FW_PEND_FREE);
			fw_nv_entry_complete(fw, node, seq);
			return true;
		}
	}
	return false;
}

/* The pending entry a job's @arg names, if it still waits for the job. */
static struct fw_nv_pending *busy_pend(struct fw *fw, uint32_t arg)
{
	struct fw_nv_pending *pd = &fw->nv.pending[(arg & 0xffff) %
						   FW_NV_PENDING];

	return pd->state == FW_PEND_BUSY ? pd : NULL;
}

/* An incoming write reached its page. */
static void write_in_done(struct fw *fw, uint32_t arg, uint32_t status)
{
	struct fw_nv_pending *pd = busy_pend(fw, arg);

	if (!pd)
		return;
	if (pd->ppn)
		fw_nv_pt_unlock(fw, pd->ppn - 1, true);
	pd->ppn = 0;
	if (status == NVM_DMA_ST_DONE) {
		incoming(fw, pd, NVM_TW_WRITE, pd->h.len);
		fw_nv_pend_set_state(fw, pd, FW_PEND_FREE);	/* the ACK answers it */
		fw_nv_entry_complete(fw, pd->src_node, pd->h.seq);
	} else {
		pd->status = NVM_ST_BAD_ADDR;
		fw_nv_pend_set_state(fw, pd, FW_PEND_RESPOND);
	}
	fw_rx_release(fw);
}

/* DELIVER serves both directions: FW_NV_JOB_PEND marks an incoming
 * write's (a pending entry), else a read's data for our own op. */
static void deliver_done(struct fw *fw, uint32_t arg, uint32_t status)
{
	if (arg & FW_NV_JOB_PEND)
		write_in_done(fw, arg, status);
	else
		fw_nv_delivered(fw, arg, status);
}

/* An incoming write went to the bounce buffer: the kernel places it. */
static void bounce_done(struct fw *fw, uint32_t arg, uint32_t status)
{
	struct fw_nv_pending *pd = busy_pend(fw, arg);

	if (!pd)
		return;
	if (status != NVM_DMA_ST_DONE) {
		pd->status = NVM_ST_BAD_ADDR;
		fw_nv_pend_set_state(fw, pd, FW_PEND_RESPOND);
	} else {
		fw_nv_pend_set_state(fw, pd, FW_PEND_BOUNCED);
		fw_post(fw, NVM_EV_BOUNCE, pd->h.dst_port, pd->src_node,
			(uint64_t)pd->h.len << 32 | pd->h.seq);
	}
	fw_rx_release(fw);
}

/* A remote read's data is in the tx buffer: respond with it. */
static void read_fetched(struct fw *fw, uint32_t arg, uint32_t status)
{
	struct fw_nv_pending *pd = busy_pend(fw, arg);

	if (!pd)
		return;
	if (pd->ppn)
		fw_nv_pt_unlock(fw, pd->ppn - 1, false);
	pd->ppn = 0;
	pd->status = status == NVM_DMA_ST_DONE ? NVM_ST_OK : NVM_ST_BAD_ADDR;
	memset(pd->r, 0, sizeof(pd->r));
	if (pd->status == NVM_ST_OK)
		incoming(fw, pd, NVM_TW_READ, pd->h.len);
	respond(fw, pd, pd->txbuf, pd->status ? 0 : pd->h.len);
}

/* A remote atomic's operand is in SRAM: apply it, write the result back. */
static void atomic_in_done(struct fw *fw, uint32_t arg, uint32_t status)
{
	struct fw_nv_pending *pd = busy_pend(fw, arg);
	uint32_t w[NVM_WQ_WORDS], r[3] = { 0 }, off, words;
	uint64_t addr;
	int job;

	if (!pd)
		return;
	addr = pd->addr;
	if (status != NVM_DMA_ST_DONE) {
		if (pd->ppn)
			fw_nv_pt_unlock(fw, pd->ppn - 1, false);
		pd->ppn = 0;
		fw->nv.atomic_busy = 0;
		pd->status = NVM_ST_BAD_ADDR;
		memset(pd->r, 0, sizeof(pd->r));
		respond(fw, pd, pd->txbuf, 0);
		return;
	}
	words = fw_nv_atomic_words(pd->h.atomic_op);
	off = fw_nv_txbuf_off(fw, pd->txbuf) + NVM_ROUTE_MAX +
	      sizeof(struct nvm_pkt_hdr) + sizeof(struct nvm_net_hdr);
	memcpy(w, fw->chip->sram + off, words * 4);
	fw_nv_atomic_apply(pd->h.atomic_op, w, pd->h.arg, r);
	memcpy(fw->chip->sram + off, w, words * 4);
	memcpy(pd->r, r, sizeof(r));
	job = fw_hdma_alloc(fw, FW_JOB_NV_ATOMIC_OUT, arg);
	if (job < 0) {
		/* cannot happen: serve() kept a slot free */
		fw->nv.atomic_busy = 0;
		return;
	}
	fw_hdma_add(fw, job, LANAI_DMA_L2E, words * 4, off, addr);
	fw_hdma_submit(fw, job);
}

/* A remote atomic's new value is in place: respond with the old. */
static void atomic_out_done(struct fw *fw, uint32_t arg, uint32_t status)
{
	struct fw_nv_pending *pd;

	fw->nv.atomic_busy = 0;
	pd = busy_pend(fw, arg);
	if (!pd)
		return;
	if (pd->ppn)
		fw_nv_pt_unlock(fw, pd->ppn - 1, true);
	pd->ppn = 0;
	pd->status = status == NVM_DMA_ST_DONE ? NVM_ST_OK : NVM_ST_BAD_ADDR;
	if (pd->status == NVM_ST_OK)	/* the new value is in place */
		incoming(fw, pd, NVM_TW_READ | NVM_TW_WRITE,
			 fw_nv_atomic_words(pd->h.atomic_op) * 4);
	respond(fw, pd, pd->txbuf, 0);
}

static void hostwrite_done(struct fw *fw, uint32_t arg, uint32_t status)
{
	(void)status;	/* a lost host write is counted by the queue */
	fw_nv_host_write_done(fw, arg);
}

/* NetVM's job completions, one handler per kind. */
typedef void fw_nv_job_fn(struct fw *fw, uint32_t arg, uint32_t status);
static fw_nv_job_fn *const nv_job_done[FW_JOB_COUNT] = {
	[FW_JOB_NV_FETCH] = fw_nv_fetched,
	[FW_JOB_NV_DELIVER] = deliver_done,
	[FW_JOB_NV_READ_FETCH] = read_fetched,
	[FW_JOB_NV_ATOMIC_IN] = atomic_in_done,
	[FW_JOB_NV_ATOMIC_OUT] = atomic_out_done,
	[FW_JOB_NV_HOSTWRITE] = hostwrite_done,
	[FW_JOB_NV_BOUNCE] = bounce_done,
};

void fw_nv_job_done(struct fw *fw, uint32_t kind, uint32_t arg,
		    uint32_t status)
{
	if (kind < FW_JOB_COUNT && nv_job_done[kind])
		nv_job_done[kind](fw, arg, status);
}
