// SPDX-License-Identifier: GPL-2.0-only
/*
 * NetVM endpoints: command intake, the command dispatch table, operation
 * progress on the source side, and completion (counters, shadow counters,
 * error records).
 *
 * A process writes commands into its endpoint's 64-entry queue in SRAM,
 * setting each command's seq (its number + 1) last, then writes its
 * producer count to its doorbell page.  The firmware takes commands in
 * order, copies and validates each into the operation slot of the same
 * index, and runs it: the command slot is free again once taken
 * (shadow.consumed), the operation ends with a completion (shadow.done).
 */
#include <string.h>

#include "fw.h"
#include "fw_load.h"

static uint32_t ep_off(struct fw *fw, uint32_t ep)
{
	return fw->layout.ep_base + ep * NVM_EP_STRIDE;
}

uint32_t fw_nv_req_id(uint32_t ep, uint32_t idx, uint32_t seq)
{
	return ep << 24 | idx << 16 | (seq & 0xffff);
}

/* The operation a job or a response names, if it is in @state. */
static struct fw_nv_op *op_in_state(struct fw *fw, uint32_t req,
				    uint32_t state, uint32_t *ep, uint32_t *idx)
{
	uint32_t e = req >> 24, i = (req >> 16) & 0xff;
	struct fw_nv_op *op;

	if (e >= FW_NV_EPS || i >= NVM_CMDQ_LEN)
		return NULL;
	op = &fw->nv.ep[e].ops[i];
	if (op->state != state)
		return NULL;
	*ep = e;
	*idx = i;
	return op;
}

static void unlock_pages(struct fw *fw, struct fw_nv_op *op, bool dirty)
{
	for (uint32_t i = 0; i < NVM_FRAG_MAX; i++) {
		if (op->locked[i]) {
			fw_nv_pt_unlock(fw, op->locked[i] - 1, dirty);
			op->locked[i] = 0;
		}
	}
}

/* The sent operation a response answers; NULL if it is gone (stale). */
struct fw_nv_op *fw_nv_op_by_req(struct fw *fw, uint32_t req, uint32_t *ep,
				 uint32_t *idx)
{
	struct fw_nv_op *op = op_in_state(fw, req, FW_OP_SENT, ep, idx);

	if (op && (op->cmd.seq & 0xffff) != (req & 0xffff))
		return NULL;	/* the slot holds a later command now */
	return op;
}

void fw_nv_boot(struct fw *fw)
{
	memset(&fw->nv, 0, sizeof(fw->nv));
	fw->hold_port = 0;
	fw->hold_ppn = 0;
	/* the kernel's endpoint takes control commands from the start */
	if (fw->layout.ep_count) {
		fw->nv.ep[NVM_EP_KERNEL].open = 1;
		fw->nv.ep[NVM_EP_KERNEL].flags = NVM_EPF_KERNEL;
	}
	for (uint32_t n = 0; n < FW_NV_NODES; n++) {
		fw->nv.peer[n].next_seq = 1;
		fw->nv.peer[n].una = 1;
		fw->nv.peer[n].lsn = 1;
		fw->nv.peer[n].acked = 1;
		fw->nv.peer[n].rto = FW_NV_RTO_TICKS;
	}
}

void fw_nv_doorbell(struct fw *fw, uint32_t off, uint32_t data)
{
	uint32_t ep = off / LANAI_DOORBELL_PAGE;
	struct fw_nv_ep *e = &fw->nv.ep[ep];

	/* a count behind what we took, or more than a queue ahead, is bogus */
	if ((uint32_t)(data - e->consumed) > NVM_CMDQ_LEN) {
		fw_count(fw, FW_CNT_BAD_DOORBELLS);
		fw_post(fw, NVM_EV_ERROR, (uint16_t)ep, NVM_ERR_BAD_DOORBELL,
			(uint64_t)off << 32 | data);
		return;
	}
	e->produced = data;
}

void fw_nv_shadow(struct fw *fw, uint32_t ep)
{
	struct fw_nv_ep *e = &fw->nv.ep[ep];
	struct nvm_shadow sh = {
		.consumed = e->consumed, .done = e->done, .errors = e->errors,
	};
	struct nvm_ep_status st = {
		.consumed = e->consumed, .done = e->done, .errors = e->errors,
		.notf_queued = e->notf_prod,
		.credit_stalls = e->credit_stalls,
	};

	memcpy(fw->chip->sram + ep_off(fw, ep) + NVM_EP_STATUS, &st, sizeof(st));
	e->shadow_done = e->done;
	if (e->shadow)
		fw_nv_host_write(fw, e->shadow, &sh, sizeof(sh));
}

void fw_nv_complete(struct fw *fw, uint32_t ep, uint32_t idx, uint32_t status)
{
	struct fw_nv_ep *e = &fw->nv.ep[ep];
	struct fw_nv_op *op = &e->ops[idx];
	bool shadow = op->cmd.flags & NVM_CF_SHADOW;

	unlock_pages(fw, op, op->cmd.op == NVM_OP_READ);
	if (op->txbuf) {
		fw_nv_txbuf_put(fw, op->txbuf, FW_TB_OP);
		op->txbuf = 0;
	}
	if (status != NVM_ST_OK) {
		struct nvm_err_rec r = {
			.seq = op->cmd.seq, .tag = op->cmd.tag, .op = op->cmd.op,
			.status = (uint8_t)status,
			.phase = ((e->errors / NVM_ERR_RING_LEN) & 1) ? 0 : 1,
			.detail = op->cmd.dst_node,
		};

		e->errors++;
		fw_count(fw, FW_CNT_ERR_COMPLETIONS);
		fw_tr_fw_op_error(fw, fw_nv_req_id(ep, idx, op->cmd.seq),
				  status);
		if (e->err_ring)
			fw_nv_host_write(fw, e->err_ring +
					 ((e->errors - 1) % NVM_ERR_RING_LEN) *
					 sizeof(r), &r, sizeof(r));
		shadow = true;
	}
	fw_nv_op_set_state(fw, op, FW_OP_FREE);
	op->status = status;
	e->done++;
	e->inflight--;
	if (shadow || e->done - e->shadow_done >= NVM_SHADOW_EVERY ||
	    e->inflight == 0)
		fw_nv_shadow(fw, ep);
}

/* ---- validation and start, one entry per command op ---- */

static uint32_t check_frag(const struct nvm_frag *f)
{
	if (f->len > NVM_PAGE_SIZE ||
	    (f->va & (NVM_PAGE_SIZE - 1)) + f->len > NVM_PAGE_SIZE)
		return NVM_ST_BAD_CMD;
	return NVM_ST_OK;
}

static uint32_t check_remote(struct fw *fw, const struct nvm_cmd *c)
{
	if (c->dst_node >= FW_NV_NODES || c->dst_node == fw->chip->node_id ||
	    c->dst_port >= FW_NV_EPS ||
	    fw->nv.route_len[c->dst_node] == FW_NV_NO_ROUTE ||
	    fw_nv_peer_dead(fw, c->dst_node))
		return NVM_ST_UNREACHABLE;
	if ((c->dst_va & (NVM_PAGE_SIZE - 1)) + c->len > NVM_PAGE_SIZE)
		return NVM_ST_BAD_CMD;
	return NVM_ST_OK;
}

static uint32_t validate_write(struct fw *fw, uint32_t ep,
			       const struct nvm_cmd *c)
{
	uint32_t st, total = 0;

	(void)ep;
	if (c->len > NVM_PAGE_SIZE)
		return NVM_ST_BAD_CMD;
	st = check_remote(fw, c);
	if (st)
		return st;
	if (c->nfrag > NVM_FRAG_MAX)
		return NVM_ST_BAD_CMD;
	if (c->flags & NVM_CF_INLINE)
		return c->len <= NVM_INLINE_MAX ? NVM_ST_OK : NVM_ST_BAD_CMD;
	if (c->nfrag < 1)	/* only a notification carries no data */
		return c->len == 0 ? NVM_ST_OK : NVM_ST_BAD_CMD;
	for (uint32_t i = 0; i < c->nfrag; i++) {
		if (check_frag(&c->src[i]))
			return NVM_ST_BAD_CMD;
		total += c->src[i].len;
	}
	return total == c->len ? NVM_ST_OK : NVM_ST_BAD_CMD;
}

static uint32_t validate_read(struct fw *fw, uint32_t ep,
			      const struct nvm_cmd *c)
{
	uint32_t st;

	(void)ep;
	if (c->len == 0 || c->len > NVM_PAGE_SIZE)
		return NVM_ST_BAD_CMD;
	st = check_remote(fw, c);
	if (st)
		return st;
	if (c->src[0].len != c->len || check_frag(&c->src[0]))
		return NVM_ST_BAD_CMD;
	return NVM_ST_OK;
}

static uint32_t validate_atomic(struct fw *fw, uint32_t ep,
				const struct nvm_cmd *c)
{
	struct nvm_cmd t = *c;
	uint32_t words = fw_nv_atomic_words(c->atomic_op);

	(void)ep;
	if (!words || (c->dst_va & 3))
		return NVM_ST_BAD_CMD;
	t.len = words * 4;
	return check_remote(fw, &t);
}

static uint32_t validate_fence(struct fw *fw, uint32_t ep,
			       const struct nvm_cmd *c)
{
	(void)fw;
	(void)ep;
	(void)c;
	return NVM_ST_OK;
}

struct fw_nv_cmd_desc {
	const char *name;
	uint32_t (*validate)(struct fw *fw, uint32_t ep, const struct nvm_cmd *c);
	enum fw_counter counter;
	uint32_t access;	/* what outgoing tripwires see (NVM_TW_*) */
};

static const struct fw_nv_cmd_desc fw_nv_cmds[NVM_OP_COUNT] = {
	[NVM_OP_WRITE] = { "write", validate_write, FW_CNT_CMD_WRITE,
			   NVM_TW_WRITE },
	[NVM_OP_READ] = { "read", validate_read, FW_CNT_CMD_READ, NVM_TW_READ },
	[NVM_OP_ATOMIC] = { "atomic", validate_atomic, FW_CNT_CMD_ATOMIC,
			    NVM_TW_READ | NVM_TW_WRITE },
	[NVM_OP_FENCE] = { "fence", validate_fence, FW_CNT_CMD_FENCE, 0 },
};

/* Take one command from an endpoint's queue, if there is one to take. */
static bool take_command(struct fw *fw, uint32_t ep)
{
	struct fw_nv_ep *e = &fw->nv.ep[ep];
	uint32_t idx = e->consumed % NVM_CMDQ_LEN;
	struct fw_nv_op *op = &e->ops[idx];
	uint32_t st;

	if (e->produced == e->consumed || e->fence || e->missing ||
	    op->state != FW_OP_FREE)
		return false;
	memcpy(&op->cmd, fw->chip->sram + ep_off(fw, ep) + NVM_EP_CMDQ +
	       idx * NVM_CMD_SIZE, sizeof(op->cmd));
	if (op->cmd.seq != e->consumed + 1)
		return false;	/* the process has not finished writing it */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	e->consumed++;
	e->inflight++;
	/* the slot is free again: tell the process through SRAM at once */
	fw_sram_wr32(fw->chip, ep_off(fw, ep) + NVM_EP_STATUS +
		     offsetof(struct nvm_ep_status, consumed), e->consumed);
	memset(op->locked, 0, sizeof(op->locked));
	op->txbuf = 0;
	op->status = NVM_ST_OK;
	op->resp_len = 0;	/* the slot may have held a read before */
	op->stalled = 0;

	if (ep == NVM_EP_KERNEL && op->cmd.op >= NVM_KOP_MIN) {
		fw_nv_op_set_state(fw, op, FW_OP_NEW);
		fw_nv_complete(fw, ep, idx, fw_kernel_cmd(fw, &op->cmd));
		return true;
	}
	if (!fw->nv.configured || op->cmd.op >= NVM_OP_COUNT ||
	    !fw_nv_cmds[op->cmd.op].validate) {
		st = NVM_ST_BAD_CMD;
	} else if ((op->cmd.flags & NVM_CF_PHYS) &&
		   !(e->flags & NVM_EPF_KERNEL)) {
		st = NVM_ST_PERM;
	} else {
		st = fw_nv_cmds[op->cmd.op].validate(fw, ep, &op->cmd);
		fw_count(fw, fw_nv_cmds[op->cmd.op].counter);
	}
	fw_nv_op_set_state(fw, op, FW_OP_NEW);
	if (st != NVM_ST_OK) {
		fw_count(fw, FW_CNT_CMD_BAD);
		fw_nv_complete(fw, ep, idx, st);
		return true;
	}
	if (op->cmd.op == NVM_OP_FENCE)
		e->fence = 1;
	if (fw_nv_cmds[op->cmd.op].access && !(op->cmd.flags & NVM_CF_PHYS))
		fw_tw_access(fw, fw_nv_cmds[op->cmd.op].access | NVM_TW_OUTGOING,
			     op->cmd.dst_node, op->cmd.dst_port, op->cmd.dst_va,
			     op->cmd.op == NVM_OP_ATOMIC ?
			     fw_nv_atomic_words(op->cmd.atomic_op) * 4 :
			     op->cmd.len, op->cmd.dst_node, op->cmd.dst_port);
	return true;
}

/* ---- operation progress (source side) ---- */

/* Lock and check the local pages of fragments [0, n); false if waiting. */
static bool lock_local(struct fw *fw, uint32_t ep, uint32_t idx, uint32_t n,
		       uint32_t *status)
{
	struct fw_nv_op *op = &fw->nv.ep[ep].ops[idx];

	*status = NVM_ST_OK;
	if (op->cmd.flags & NVM_CF_PHYS)
		return true;
	if (n > NVM_FRAG_MAX)
		n = NVM_FRAG_MAX;	/* validated already; never trust a count */
	for (uint32_t i = 0; i < n; i++) {
		const struct nvm_frag *f = &op->cmd.src[i];
		int64_t ppn;

		if (op->locked[i] || f->len == 0)
			continue;
		ppn = fw_nv_pt_lock(fw, ep, f->va, f->hash);
		if (ppn < 0) {
			/* a source page is missing: ask the kernel, then wait */
			fw_nv_op_set_state(fw, op, FW_OP_MISS);
			op->miss_va_lo = (uint32_t)f->va;
			op->miss_va_hi = (uint32_t)(f->va >> 32);
			fw->nv.ep[ep].missing = 1;
			fw_count(fw, FW_CNT_PAGE_MISS);
			fw_post(fw, NVM_EV_PAGE_MISS, (uint16_t)ep, idx, f->va);
			return false;
		}
		op->locked[i] = (uint32_t)ppn + 1;
		if (!fw_nv_pt_key_ok(fw, (uint32_t)ppn, f->key)) {
			fw_count(fw, FW_CNT_KEY_FAILURES);
			*status = NVM_ST_BAD_KEY;
			return true;
		}
	}
	return true;
}

static uint64_t local_addr(struct fw_nv_op *op, uint32_t i)
{
	const struct nvm_frag *f = &op->cmd.src[i];

	if (op->cmd.flags & NVM_CF_PHYS)
		return f->va;
	return ((uint64_t)(op->locked[i] - 1) << NVM_PAGE_SHIFT) |
	       (f->va & (NVM_PAGE_SIZE - 1));
}

static void build_request(struct fw *fw, uint32_t ep, uint32_t idx,
			  uint32_t tb)
{
	struct fw_nv_op *op = &fw->nv.ep[ep].ops[idx];
	struct nvm_net_hdr *h = fw_nv_txbuf_hdr(fw, tb);
	static const uint8_t net_op[NVM_OP_COUNT] = {
		[NVM_OP_WRITE] = NVM_NET_WRITE,
		[NVM_OP_READ] = NVM_NET_READ_REQ,
		[NVM_OP_ATOMIC] = NVM_NET_ATOMIC_REQ,
	};

	fw_nv_hdr_init(fw, h, net_op[op->cmd.op], ep, op->cmd.dst_port);
	h->flags = op->cmd.flags & (NVM_CF_NOTIFY | NVM_CF_NOINTR | NVM_CF_PHYS |
				    NVM_CF_ACK_NOW);
	h->req = fw_be32(fw_nv_req_id(ep, idx, op->cmd.seq));
	h->notify = fw_be32(op->cmd.notify);
	h->va = fw_be64(op->cmd.dst_va);
	h->key = fw_be64(op->cmd.dst_key);
	h->hash = fw_be32(op->cmd.dst_hash);
	h->atomic_op = fw_be32(op->cmd.atomic_op);
	for (int i = 0; i < 3; i++)
		h->arg[i] = fw_be32(op->cmd.arg[i]);
	h->len = fw_be32(op->cmd.op == NVM_OP_ATOMIC ?
			 fw_nv_atomic_words(op->cmd.atomic_op) * 4 :
			 op->cmd.len);
}

static bool op_start(struct fw *fw, uint32_t ep, uint32_t idx)
{
	struct fw_nv_op *op = &fw->nv.ep[ep].ops[idx];
	uint32_t st, tb, data;
	int job;

	if (op->cmd.op == NVM_OP_FENCE) {
		if (fw->nv.ep[ep].inflight > 1)
			return false;
		fw->nv.ep[ep].fence = 0;
		fw_nv_complete(fw, ep, idx, NVM_ST_OK);
		return true;
	}
	if (op->cmd.op == NVM_OP_WRITE && !(op->cmd.flags & NVM_CF_INLINE)) {
		if (!lock_local(fw, ep, idx, op->cmd.nfrag, &st))
			return true;
		if (st) {
			fw_nv_complete(fw, ep, idx, st);
			return true;
		}
	}
	tb = fw_nv_txbuf_alloc_req(fw, op->cmd.dst_node);
	if (!tb) {
		fw_count(fw, FW_CNT_CREDIT_STALLS);
		if (!op->stalled)
			fw->nv.ep[ep].credit_stalls++;
		op->stalled = 1;
		return false;
	}
	job = -1;
	if (op->cmd.op == NVM_OP_WRITE && !(op->cmd.flags & NVM_CF_INLINE) &&
	    op->cmd.len) {
		job = fw_hdma_alloc(fw, FW_JOB_NV_FETCH,
				    fw_nv_req_id(ep, idx, op->cmd.seq));
		if (job < 0) {
			fw_nv_txbuf_put(fw, tb, FW_TB_OP);
			return false;
		}
	}
	op->txbuf = tb;
	build_request(fw, ep, idx, tb);
	data = fw_nv_txbuf_off(fw, tb) + NVM_ROUTE_MAX +
	       sizeof(struct nvm_pkt_hdr) + sizeof(struct nvm_net_hdr);
	if (op->cmd.op == NVM_OP_WRITE && (op->cmd.flags & NVM_CF_INLINE)) {
		memcpy(fw->chip->sram + data, op->cmd.inline_data, op->cmd.len);
		fw_nv_op_set_state(fw, op, FW_OP_READY);
	} else if (job >= 0) {
		for (uint32_t i = 0; i < op->cmd.nfrag && i < NVM_FRAG_MAX; i++) {
			if (!op->cmd.src[i].len)
				continue;
			fw_hdma_add(fw, job, LANAI_DMA_E2L, op->cmd.src[i].len,
				    data, local_addr(op, i));
			data += op->cmd.src[i].len;
			fw_count(fw, FW_CNT_FRAGMENTS);
		}
		fw_nv_op_set_state(fw, op, FW_OP_FETCH);
		fw_hdma_submit(fw, job);
		return true;
	} else {
		fw_nv_op_set_state(fw, op, FW_OP_READY);
	}
	return true;
}

static bool op_send(struct fw *fw, uint32_t ep, uint32_t idx)
{
	struct fw_nv_op *op = &fw->nv.ep[ep].ops[idx];
	uint32_t len = op->cmd.op == NVM_OP_WRITE ? op->cmd.len : 0;

	/* the peer died (or lost its route) while we fetched or waited */
	if (fw_nv_peer_dead(fw, op->cmd.dst_node) ||
	    fw->nv.route_len[op->cmd.dst_node] == FW_NV_NO_ROUTE) {
		fw_nv_complete(fw, ep, idx, NVM_ST_UNREACHABLE);
		return true;
	}
	fw_nv_op_set_state(fw, op, FW_OP_SENT);
	op->age = 0;
	fw_count_n(fw, FW_CNT_TX_BYTES, len);
	if (fw_nv_send_seq(fw, op->cmd.dst_node, op->txbuf, len) &&
	    !op->stalled)
		fw->nv.ep[ep].credit_stalls++;
	return true;
}

/* The fetch of a write's source pages finished. */
void fw_nv_fetched(struct fw *fw, uint32_t req, uint32_t status)
{
	uint32_t ep, idx;
	struct fw_nv_op *op = op_in_state(fw, req, FW_OP_FETCH, &ep, &idx);

	if (!op)
		return;
	/* the source pages are in the tx buffer: unlock them now */
	unlock_pages(fw, op, false);
	if (status != NVM_DMA_ST_DONE) {
		fw_nv_complete(fw, ep, idx, NVM_ST_BAD_ADDR);
		return;
	}
	fw_nv_op_set_state(fw, op, FW_OP_READY);
}

/* A read's data is in its tx buffer: put it into the local page. */
static bool op_deliver(struct fw *fw, uint32_t ep, uint32_t idx)
{
	struct fw_nv_op *op = &fw->nv.ep[ep].ops[idx];
	uint32_t st, data;
	int job;

	job = fw_hdma_alloc(fw, FW_JOB_NV_DELIVER,
			    fw_nv_req_id(ep, idx, op->cmd.seq) | 0);
	if (job < 0)
		return false;
	if (!lock_local(fw, ep, idx, 1, &st) || st) {
		fw_hdma_cancel(fw, job);
		/* a miss made it MISS already: the data stays in the tx buffer */
		if (st)
			fw_nv_complete(fw, ep, idx, st);
		return true;
	}
	data = fw_nv_txbuf_off(fw, op->txbuf) + NVM_ROUTE_MAX +
	       sizeof(struct nvm_pkt_hdr) + sizeof(struct nvm_net_hdr);
	fw_hdma_add(fw, job, LANAI_DMA_L2E, op->resp_len, data,
		    local_addr(op, 0));
	fw_nv_op_set_state(fw, op, FW_OP_DELIVERING);
	fw_hdma_submit(fw, job);
	return true;
}

/* The read's data reached the local page. */
void fw_nv_delivered(struct fw *fw, uint32_t req, uint32_t status)
{
	uint32_t ep, idx;
	struct fw_nv_op *op = op_in_state(fw, req, FW_OP_DELIVERING, &ep, &idx);

	if (!op)
		return;
	fw_count_n(fw, FW_CNT_RX_BYTES, op->resp_len);
	fw_nv_complete(fw, ep, idx, status == NVM_DMA_ST_DONE ? NVM_ST_OK :
		       NVM_ST_BAD_ADDR);
}

/*
 * One operation's next step.  in_order is false once an older operation of
 * the endpoint has not been sent yet: requests take sequence numbers in
 * the order they were issued, so a notification never overtakes the data
 * written before it.
 */
static bool op_step(struct fw *fw, uint32_t ep, uint32_t idx, bool *in_order)
{
	struct fw_nv_op *op = &fw->nv.ep[ep].ops[idx];
	bool progress;

	switch (op->state) {
	case FW_OP_NEW:
		progress = op_start(fw, ep, idx);
		if (op->state != FW_OP_SENT && op->state != FW_OP_FREE)
			*in_order = false;
		return progress;
	case FW_OP_MISS:
	case FW_OP_FETCH:
		*in_order = false;
		return false;
	case FW_OP_READY:
		if (!*in_order)
			return false;
		return op_send(fw, ep, idx);
	case FW_OP_DELIVER:
		return op_deliver(fw, ep, idx);
	default:
		return false;	/* waiting for an engine, the wire or the host */
	}
}

bool fw_nv_cmd_step(struct fw *fw)
{
	bool progress = false;

	for (uint32_t n = 0; n < FW_NV_EPS; n++) {
		uint32_t ep = (fw->nv.rr_ep + n) % FW_NV_EPS;
		struct fw_nv_ep *e = &fw->nv.ep[ep];

		if (!e->open)
			continue;
		while (take_command(fw, ep))
			progress = true;
		/* oldest first: slot consumed % LEN holds the oldest command */
		bool in_order = true;

		for (uint32_t k = 0; k < NVM_CMDQ_LEN && e->inflight; k++)
			progress |= op_step(fw, ep, (e->consumed + k) % NVM_CMDQ_LEN,
					    &in_order);
	}
	fw->nv.rr_ep = (fw->nv.rr_ep + 1) % FW_NV_EPS;
	progress |= fw_nv_pend_step(fw);
	progress |= fw_nv_host_write_pump(fw);
	return progress;
}

/*
 * Loading saved state (fw_load.c): a command held in an op slot was
 * validated when taken and is used from then on (dst_node and fragments
 * as indices, lengths as DMA sizes) without a second look, so a loaded
 * one must have the shape its validator allows.  Routes and peers may
 * have changed since: those are checked again at use.
 */
static bool cmd_shape_ok(const struct nvm_cmd *c)
{
	if (c->op >= NVM_OP_COUNT || !fw_nv_cmds[c->op].validate)
		return false;
	if (c->op == NVM_OP_FENCE)
		return true;
	if (c->dst_node >= FW_NV_NODES || c->dst_port >= FW_NV_EPS ||
	    c->len > NVM_PAGE_SIZE || c->nfrag > NVM_FRAG_MAX)
		return false;
	if (c->op == NVM_OP_ATOMIC)
		return fw_nv_atomic_words(c->atomic_op) != 0;
	for (uint32_t i = 0; i < c->nfrag; i++)
		if (check_frag(&c->src[i]))
			return false;
	return c->op != NVM_OP_READ || !check_frag(&c->src[0]);
}

bool fw_nv_op_state_ok(const struct fw *fw, const struct fw_nv_op *op,
		       const char **what)
{
	FW_LOAD_CHECK(op->state < FW_OP_STATE_COUNT);
	FW_LOAD_CHECK(op->state == FW_OP_FREE || cmd_shape_ok(&op->cmd));
	for (uint32_t k = 0; k < NVM_FRAG_MAX; k++)
		FW_LOAD_CHECK(op->locked[k] <= fw->layout.max_ppn);
	return true;
}
