// SPDX-License-Identifier: GPL-2.0-only
/*
 * NetVM reception: the per-packet-type handler table, the receive side of
 * the sequence windows, peers' requests taken in (writes placed or
 * bounced, reads and atomics queued in the pending table for
 * fw_nv_serve.c), and the responses to our own operations.
 *
 * Receive window, per peer: lsn is the lowest sequence number not yet
 * complete; `seen` and `complete` are bitmaps of [lsn, lsn + FW_NV_WIN).
 * Data is delivered on arrival, in any order; a notification is delivered
 * only when lsn passes its entry, so notifications keep the sender's order.
 * Duplicates (below lsn or already seen) are dropped and re-acknowledged.
 *
 * A write that succeeded gets no response: the cumulative ACK says it is
 * complete (the writer completes it then, fw_nv_acked), which saves a
 * packet, and a wake-up of the writer's NIC, per write.  A write that
 * failed is answered by a WRITE_RESP with the status, and its entry
 * completes only once the writer has acknowledged that response: no ACK
 * can then tell the writer it succeeded before the error reaches it, even
 * if the response is lost and resent.
 */
#include <string.h>

#include "fw.h"

/* Wire (big-endian) to host order, or back: the swap is its own inverse. */
void fw_nv_hdr_swap(struct nvm_net_hdr *h)
{
	h->src_port = fw_be16(h->src_port);
	h->dst_port = fw_be16(h->dst_port);
	h->status = fw_be16(h->status);
	h->src_epoch = fw_be32(h->src_epoch);
	h->dst_epoch = fw_be32(h->dst_epoch);
	h->seq = fw_be32(h->seq);
	h->ack = fw_be32(h->ack);
	h->req = fw_be32(h->req);
	h->notify = fw_be32(h->notify);
	h->va = fw_be64(h->va);
	h->key = fw_be64(h->key);
	h->hash = fw_be32(h->hash);
	h->atomic_op = fw_be32(h->atomic_op);
	for (int i = 0; i < 3; i++)
		h->arg[i] = fw_be32(h->arg[i]);
	h->len = fw_be32(h->len);
}

/* Entries of the pending table held for @node. */
static uint32_t pend_held(struct fw *fw, uint32_t node)
{
	uint32_t n = 0;

	for (int i = 0; i < FW_NV_PENDING; i++)
		n += fw->nv.pending[i].state != FW_PEND_FREE &&
		     fw->nv.pending[i].src_node == node;
	return n;
}

int fw_nv_pend_alloc(struct fw *fw)
{
	for (int i = 0; i < FW_NV_PENDING; i++)
		if (fw->nv.pending[i].state == FW_PEND_FREE)
			return i;
	return -1;
}

static struct fw_nv_pending *pend_new(struct fw *fw, uint32_t src,
				      const struct nvm_net_hdr *h,
				      uint32_t state, uint32_t status)
{
	int i = fw_nv_pend_alloc(fw);
	struct fw_nv_pending *pd;

	if (i < 0)
		return NULL;
	pd = &fw->nv.pending[i];
	memset(pd, 0, sizeof(*pd));
	fw_nv_pend_set_state(fw, pd, state);
	pd->src_node = src;
	pd->status = status;
	pd->h = *h;
	return pd;
}

/* ---- window ---- */

void fw_nv_entry_complete(struct fw *fw, uint32_t node, uint32_t seq)
{
	struct fw_nv_peer *p = &fw->nv.peer[node];
	uint32_t off = seq - p->lsn;
	bool now = false;

	if (off >= FW_NV_WIN)
		return;
	p->complete |= 1ull << off;
	while (p->complete & 1) {
		uint32_t e = p->lsn % FW_NV_WIN;

		if (p->notf[e]) {
			fw_nv_notify_deliver(fw, p->notf_port[e], p->notf[e], node,
					     p->notf_flags[e] >> 8,
					     p->notf_flags[e] & 0xff);
			p->notf[e] = 0;
		}
		now |= p->notf_flags[e] & NVM_CF_ACK_NOW;
		p->notf_flags[e] = 0;
		p->complete >>= 1;
		p->seen >>= 1;
		p->lsn++;
	}
	/*
	 * The ACK completes writes: at once when the writer waits for one,
	 * or every FW_NV_ACK_EVERY entries (a writer streaming within its
	 * window); else the next packet to the writer carries it (a reply,
	 * in a ping-pong), or the delayed ACK.
	 */
	if (p->lsn != p->acked &&
	    (now || p->lsn - p->acked >= FW_NV_ACK_EVERY))
		fw_nv_send_ack(fw, node);
	else if (p->lsn != p->acked)
		p->ack_due = 1;
}

/* ---- requests (their checks also serve fw_nv_serve.c) ---- */

/* The endpoint a request names is open (the kernel's: configured). */
bool fw_nv_req_port_ok(struct fw *fw, const struct nvm_net_hdr *h)
{
	return h->dst_port < FW_NV_EPS && fw->nv.ep[h->dst_port].open &&
	       (h->dst_port != NVM_EP_KERNEL ||
		fw->nv.ep[NVM_EP_KERNEL].shadow);
}

/*
 * Physical addressing: only between the kernels' endpoints, and only
 * inside a window our kernel opened to this peer for this access (the
 * frame's ports prove nothing: any peer can claim port 0).
 */
static bool phys_ok(struct fw *fw, uint32_t src, const struct nvm_net_hdr *h,
		    uint32_t len, uint32_t access)
{
	if (h->src_port == NVM_EP_KERNEL && h->dst_port == NVM_EP_KERNEL &&
	    fw_nv_phys_ok(fw, src, h->va, len, access))
		return true;
	fw_count(fw, FW_CNT_PHYS_REFUSED);
	fw_tr_fw_phys_refused(fw, src, h->va, len);
	return false;
}

/* A request's bytes lie inside one page. */
uint32_t fw_nv_req_page_check(const struct nvm_net_hdr *h, uint32_t len)
{
	if (len > NVM_PAGE_SIZE ||
	    (h->va & (NVM_PAGE_SIZE - 1)) + len > NVM_PAGE_SIZE)
		return NVM_ST_BAD_CMD;
	return NVM_ST_OK;
}

/* Translate and lock the target page of a request from @src (@len bytes
 * at h->va, @access NVM_PW_*): >= 0 address, -1 missing, -2 refused
 * (status set). */
int64_t fw_nv_req_target(struct fw *fw, uint32_t src,
			 const struct nvm_net_hdr *h, uint32_t len,
			 uint32_t access, uint32_t *ppn, uint32_t *status)
{
	bool write = access & NVM_PW_WRITE;
	int64_t p;

	*ppn = 0;
	if (h->flags & NVM_CF_PHYS) {
		if (!phys_ok(fw, src, h, len, access)) {
			*status = NVM_ST_PERM;
			return -2;
		}
		return (int64_t)h->va;
	}
	p = fw_nv_pt_lock(fw, h->dst_port, h->va, h->hash);
	if (p < 0)
		return -1;
	*ppn = (uint32_t)p + 1;
	if (!fw_nv_pt_key_ok(fw, (uint32_t)p, h->key)) {
		fw_count(fw, FW_CNT_KEY_FAILURES);
		*status = NVM_ST_BAD_KEY;
	} else if (write && fw_nv_pt_read_only(fw, (uint32_t)p)) {
		*status = NVM_ST_READ_ONLY;
	} else {
		return (int64_t)(((uint64_t)p << NVM_PAGE_SHIFT) |
				 (h->va & (NVM_PAGE_SIZE - 1)));
	}
	fw_nv_pt_unlock(fw, (uint32_t)p, false);
	*ppn = 0;
	return -2;
}

static enum fw_rx_verdict rx_write(struct fw *fw, uint32_t src,
				   struct nvm_net_hdr *h, uint32_t data,
				   uint32_t len)
{
	struct fw_nv_peer *p = &fw->nv.peer[src];
	struct fw_nv_pending *pd;
	uint32_t st = NVM_ST_OK, ppn;
	int64_t addr = 0;
	int job;

	if (fw_nv_pend_alloc(fw) < 0 || fw_hdma_free_slots(fw) < 2)
		return FW_RX_WAIT;
	/* ACK_NOW is honoured when lsn passes the entry, errors included */
	p->notf[h->seq % FW_NV_WIN] = 0;
	p->notf_flags[h->seq % FW_NV_WIN] = (uint16_t)(h->src_port << 8 |
						       h->flags);
	if (!fw_nv_req_port_ok(fw, h))
		st = NVM_ST_NO_PORT;
	else if (len != h->len || fw_nv_req_page_check(h, len))
		st = NVM_ST_BAD_CMD;
	else if (len)
		addr = fw_nv_req_target(fw, src, h, len, NVM_PW_WRITE, &ppn,
					&st);
	if (st != NVM_ST_OK) {
		/* completes when the writer acknowledges the response */
		pend_new(fw, src, h, FW_PEND_RESPOND, st);
		return FW_RX_RELEASE;
	}
	if (h->flags & NVM_CF_NOTIFY) {
		p->notf[h->seq % FW_NV_WIN] = h->notify;
		p->notf_port[h->seq % FW_NV_WIN] = h->dst_port;
	}
	if (len == 0) {		/* a notification alone: the ACK answers it */
		fw_nv_entry_complete(fw, src, h->seq);
		return FW_RX_RELEASE;
	}
	if (addr == -1) {
		/* page not resident: the whole packet goes to the bounce buffer */
		uint64_t slot = nvm_bounce_slot(src, h->seq);

		if (src >= fw->nv.max_nodes || slot >= fw->nv.bounce_slots) {
			pend_new(fw, src, h, FW_PEND_RESPOND, NVM_ST_BAD_ADDR);
			p->notf[h->seq % FW_NV_WIN] = 0;
			return FW_RX_RELEASE;
		}
		pd = pend_new(fw, src, h, FW_PEND_BUSY, NVM_ST_OK);
		job = fw_hdma_alloc(fw, FW_JOB_NV_BOUNCE,
				    (uint32_t)(pd - fw->nv.pending));
		fw_hdma_add(fw, job, LANAI_DMA_L2E,
			    (uint32_t)sizeof(*h) + len, data - sizeof(*h),
			    fw->nv.bounce_base + slot * NVM_BOUNCE_SLOT);
		fw_hdma_submit(fw, job);
		fw_count(fw, FW_CNT_BOUNCES);
		return FW_RX_HOLD;
	}
	pd = pend_new(fw, src, h, FW_PEND_BUSY, NVM_ST_OK);
	pd->ppn = ppn;
	job = fw_hdma_alloc(fw, FW_JOB_NV_DELIVER,
			    FW_NV_JOB_PEND | (uint32_t)(pd - fw->nv.pending));
	fw_hdma_add(fw, job, LANAI_DMA_L2E, len, data, (uint64_t)addr);
	fw_hdma_submit(fw, job);
	fw_count_n(fw, FW_CNT_RX_BYTES, len);
	return FW_RX_HOLD;
}

/* Reads and atomics are copied into the pending table and served there. */
static enum fw_rx_verdict rx_request(struct fw *fw, uint32_t src,
				     struct nvm_net_hdr *h, uint32_t data,
				     uint32_t len)
{
	(void)data;
	(void)len;
	if (!pend_new(fw, src, h, FW_PEND_NEW, NVM_ST_OK))
		return FW_RX_WAIT;
	fw_nv_entry_complete(fw, src, h->seq);
	return FW_RX_RELEASE;
}

/* ---- responses to our own operations ---- */

/* The command op each response answers. */
static const uint8_t resp_of[NVM_NET_OP_COUNT] = {
	[NVM_NET_WRITE_RESP] = NVM_OP_WRITE,
	[NVM_NET_READ_RESP] = NVM_OP_READ,
	[NVM_NET_ATOMIC_RESP] = NVM_OP_ATOMIC,
};

/*
 * Does the response from @src fit the operation it names?  The peer the
 * op went to and the port it addressed, the op's kind, a status we know,
 * and for a read's data exactly the length asked for: the data goes into
 * the reader's own locked page (op_deliver), never past it, and never
 * over a writer's source buffer.
 */
static bool resp_fits(const struct fw_nv_op *op, uint32_t src,
		      const struct nvm_net_hdr *h, uint32_t len)
{
	if (op->cmd.dst_node != src || op->cmd.dst_port != h->src_port ||
	    op->cmd.op != resp_of[h->op] || h->status >= NVM_ST_COUNT)
		return false;
	if (h->op == NVM_NET_READ_RESP && h->status == NVM_ST_OK)
		return len == op->cmd.len && h->len == len;
	return len == 0;
}

static enum fw_rx_verdict rx_response(struct fw *fw, uint32_t src,
				      struct nvm_net_hdr *h, uint32_t data,
				      uint32_t len)
{
	uint32_t ep, idx;
	struct fw_nv_op *op = fw_nv_op_by_req(fw, h->req, &ep, &idx);

	if (!op || op->cmd.dst_node != src) {
		/* late (the op gave up) or forged: nothing of ours to touch */
		fw_count(fw, FW_CNT_STALE_RESPONSE);
		fw_tr_fw_stale_response(fw, src, h->req, h->op);
	} else if (!resp_fits(op, src, h, len)) {
		/* the peer answered with something we did not ask for: drop
		 * its bytes, and fail the op rather than wait for ever */
		fw_count(fw, FW_CNT_BAD_RESPONSE);
		fw_tr_fw_bad_response(fw, src, (uint64_t)h->op << 32 | h->req,
				      len);
		fw_nv_complete(fw, ep, idx, NVM_ST_BAD_CMD);
	} else if (h->status != NVM_ST_OK) {
		fw_nv_complete(fw, ep, idx, h->status);
	} else if (h->op == NVM_NET_WRITE_RESP) {
		fw_nv_complete(fw, ep, idx, NVM_ST_OK);
	} else if (h->op == NVM_NET_READ_RESP) {
		/* into the tx buffer; delivered from there (op_deliver) */
		memcpy(fw->chip->sram + fw_nv_txbuf_off(fw, op->txbuf) +
		       NVM_ROUTE_MAX + sizeof(struct nvm_pkt_hdr) +
		       sizeof(*h), fw->chip->sram + data, len);
		op->resp_len = len;
		fw_nv_op_set_state(fw, op, FW_OP_DELIVER);
	} else {
		struct nvm_atomic_reply r = {
			.r = { h->arg[0], h->arg[1], h->arg[2] },
			.seq = op->cmd.seq,
		};

		if (fw->nv.ep[ep].reply)
			fw_nv_host_write(fw, fw->nv.ep[ep].reply, &r, sizeof(r));
		fw_nv_complete(fw, ep, idx, NVM_ST_OK);
	}
	fw_nv_entry_complete(fw, src, h->seq);
	return FW_RX_RELEASE;
}

typedef enum fw_rx_verdict (*fw_nv_rx_fn)(struct fw *fw, uint32_t src,
					  struct nvm_net_hdr *h, uint32_t data,
					  uint32_t len);

static const struct {
	const char *name;
	fw_nv_rx_fn fn;
} fw_nv_rx_table[NVM_NET_OP_COUNT] = {
	[NVM_NET_WRITE] = { "write", rx_write },
	[NVM_NET_WRITE_RESP] = { "write_resp", rx_response },
	[NVM_NET_READ_REQ] = { "read_req", rx_request },
	[NVM_NET_READ_RESP] = { "read_resp", rx_response },
	[NVM_NET_ATOMIC_REQ] = { "atomic_req", rx_request },
	[NVM_NET_ATOMIC_RESP] = { "atomic_resp", rx_response },
};

enum fw_rx_verdict fw_nv_rx(struct fw *fw, uint32_t data, uint32_t len,
			    uint32_t src)
{
	struct nvm_net_hdr h;
	struct fw_nv_peer *p;
	enum fw_rx_verdict v;
	uint32_t off;

	if (!fw->nv.configured || len < sizeof(h) || src >= FW_NV_NODES ||
	    src == fw->chip->node_id) {
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		return FW_RX_RELEASE;
	}
	memcpy(&h, fw->chip->sram + data, sizeof(h));
	fw_nv_hdr_swap(&h);
	data += sizeof(h);
	len -= sizeof(h);
	p = &fw->nv.peer[src];

	if (h.dst_epoch && h.dst_epoch != fw->nv.epoch) {
		/* meant for this NIC before it restarted: tell the sender */
		fw_tr_fw_stale_epoch(fw, src, h.dst_epoch);
		if (!p->epoch)
			p->epoch = h.src_epoch;
		fw_nv_send_ack(fw, src);
		return FW_RX_RELEASE;
	}
	if (!p->epoch)
		p->epoch = h.src_epoch;
	else if (h.src_epoch != p->epoch)
		fw_nv_peer_reset(fw, src, h.src_epoch);

	if (h.op >= NVM_NET_OP_COUNT || (h.op != NVM_NET_ACK &&
					 !fw_nv_rx_table[h.op].fn)) {
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		return FW_RX_RELEASE;
	}
	if (h.dst_epoch)	/* acks from before the peer knew us mean nothing */
		fw_nv_acked(fw, src, h.ack);
	if (h.op == NVM_NET_ACK)
		return FW_RX_RELEASE;

	off = h.seq - p->lsn;
	if (h.seq == 0 || off >= FW_NV_WIN || (p->seen >> off) & 1) {
		fw_count(fw, (int32_t)(h.seq - p->lsn) < 0 || (off < FW_NV_WIN) ?
			 FW_CNT_DUPLICATES : FW_CNT_OUT_OF_WINDOW);
		fw_nv_send_ack(fw, src);
		return FW_RX_RELEASE;
	}
	/*
	 * A request takes an entry of the pending table: one peer may hold
	 * only its share, so a flood of requests that never complete cannot
	 * starve the others.  Over it, the request is dropped unseen; the
	 * peer sends it again (its retransmission timer paces it).
	 */
	if (h.op != NVM_NET_WRITE_RESP && h.op != NVM_NET_READ_RESP &&
	    h.op != NVM_NET_ATOMIC_RESP && pend_held(fw, src) >= FW_NV_PEND_PEER) {
		fw_count(fw, FW_CNT_PEER_QUOTA);
		fw_tr_fw_peer_quota(fw, src, h.seq, h.op);
		return FW_RX_RELEASE;
	}
	/* mark it before the handler runs: completing it moves lsn */
	p->seen |= 1ull << off;
	v = fw_nv_rx_table[h.op].fn(fw, src, &h, data, len);
	if (v == FW_RX_WAIT)
		p->seen &= ~(1ull << off);	/* not taken: it will come again */
	return v;
}
