// SPDX-License-Identifier: GPL-2.0-only
/*
 * U-Net's kernel commands: opening and closing endpoints and channels,
 * the divert ring, sends of kernel-emulated endpoints, and RESTART.
 */
#include <string.h>

#include "fw.h"

/* ---- kernel control commands ---- */

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static uint32_t k_open(struct fw *fw, const struct nvm_k_unet_open *k)
{
	struct fw_unet_ep *e;
	uint32_t gen;

	if (!fw->layout.ep_count || k->port == NVM_EP_KERNEL ||
	    k->port >= FW_UNET_EPS || fw->nv.ep[k->port].open ||
	    fw_unet_open_port(fw, k->port) || !pow2(k->rxq_len) ||
	    k->rxq_len < NVM_UNET_RXQ_MIN || k->rxq_len > NVM_UNET_RXQ_MAX ||
	    !pow2(k->buf_size) || k->buf_size < NVM_UNET_BUF_MIN ||
	    k->buf_size > NVM_UNET_BUF_MAX || !k->seg_size ||
	    k->seg_size > NVM_UNET_SEG_MAX ||
	    (k->flags & ~NVM_UNET_KO_PAGEABLE) ||
	    ((k->flags & NVM_UNET_KO_PAGEABLE) &&
	     (!fw->nv.configured || k->seg & (NVM_PAGE_SIZE - 1) ||
	      k->seg + k->seg_size < k->seg)) ||
	    fw->unet.ep[k->port].div_out)
		return NVM_ST_BAD_CMD;	/* (the last owner's records are out) */
	e = &fw->unet.ep[k->port];
	gen = (e->gen + 1) & 0xffff;
	/* a fetch of the last owner may still run: it only reads them */
	fw_unet_seg_unlock(fw, &e->tx_lk, false);
	memset(e, 0, sizeof(*e));
	e->gen = gen;
	e->seg = k->seg;
	e->rxq = k->rxq;
	e->seg_size = k->seg_size;
	e->buf_size = k->buf_size;
	e->rxq_len = k->rxq_len;
	e->pageable = !!(k->flags & NVM_UNET_KO_PAGEABLE);
	memset(fw->chip->sram + fw_unet_region(fw, k->port), 0, NVM_EP_STRIDE);
	fw_unet_ep_set_state(fw, k->port, FW_UNET_EP_DIRECT);
	fw_unet_publish(fw, k->port);
	return NVM_ST_OK;
}

static uint32_t k_close(struct fw *fw, uint32_t port)
{
	struct fw_unet_ep *e;

	if (!fw_unet_open_port(fw, port))
		return NVM_ST_BAD_CMD;
	fw_unet_release(fw, port, true);
	e = &fw->unet.ep[port];
	/* a fetch still running keeps its tx buffer and its pages:
	 * fw_unet_fetched() frees them */
	fw_unet_ep_set_state(fw, port, FW_UNET_EP_CLOSED);
	if (e->tx_state != FW_UNET_TX_READY)
		fw_unet_tx_set_state(fw, port, FW_UNET_TX_READY);
	memset(e->ch, 0, sizeof(e->ch));
	return NVM_ST_OK;
}

/*
 * Whether @e already has a channel that would take @k's frames: the rule
 * is per endpoint (nvm_unet_chan_clash), since every frame names the
 * endpoint it is for; the NIC's other endpoints may hold the same triple.
 */
static bool chan_taken(const struct fw_unet_ep *e,
		       const struct nvm_k_unet_chan *k)
{
	for (uint32_t c = 0; c < NVM_UNET_CHANNELS; c++)
		if (e->ch[c].open &&
		    nvm_unet_chan_clash(k->node, k->rport, k->tag,
					e->ch[c].node, e->ch[c].rport,
					e->ch[c].tag))
			return true;
	return false;
}

/*
 * A channel to a named (node, port), or an any-source one (both
 * NVM_UNET_ANY; half of it is refused by the bounds).
 */
static uint32_t k_chan(struct fw *fw, const struct nvm_k_unet_chan *k)
{
	struct fw_unet_ep *e;
	struct fw_unet_chan *ch;

	if (!fw_unet_open_port(fw, k->port) || k->channel >= NVM_UNET_CHANNELS)
		return NVM_ST_BAD_CMD;
	e = &fw->unet.ep[k->port];
	ch = &e->ch[k->channel];
	if (!k->open) {
		memset(ch, 0, sizeof(*ch));
		return NVM_ST_OK;
	}
	if (ch->open ||
	    (!nvm_unet_is_any(k->node, k->rport) &&
	     (k->node >= FW_NV_NODES || k->rport >= NVM_UNET_VPORT_MAX ||
	      k->rport == NVM_EP_KERNEL)) ||
	    chan_taken(e, k))
		return NVM_ST_BAD_CMD;
	ch->node = k->node;
	ch->rport = k->rport;
	ch->tag = k->tag;
	ch->open = 1;
	return NVM_ST_OK;
}

/*
 * A message of a kernel-emulated endpoint: built like a NIC endpoint's,
 * the data fetched from the kernel's buffer.  The command completes at
 * once, before the fetch; the NI writes the kernel's cookie to done_addr
 * when it has the bytes, and only then may the kernel reuse its buffer.
 */
static uint32_t k_ksend(struct fw *fw, const struct nvm_k_unet_ksend *k)
{
	struct fw_unet_chan ch = {
		.open = 1, .node = k->node, .rport = k->dst_port, .tag = k->tag,
	};
	uint32_t tb, off;
	int slot;

	if (k->node >= FW_NV_NODES || !k->len || k->len > NVM_UNET_MSG_MAX ||
	    k->src_port < NVM_UNET_VPORT_MIN ||
	    k->src_port >= NVM_UNET_VPORT_MAX ||
	    (k->hflags & ~(NVM_UNET_HF_NOINTR | NVM_UNET_HF_REPLY)) ||
	    k->reply >= NVM_UNET_REPLY_SLOTS ||
	    (k->cookie & NVM_UNET_KS_UNREACHABLE))
		return NVM_ST_BAD_CMD;
	if (fw_nv_unreachable(fw, k->node))
		return NVM_ST_UNREACHABLE;	/* nothing sent, as for a NIC endpoint */
	if (fw_sendq_room(fw) < 2)
		return NVM_ST_BUSY;	/* the kernel tries again */
	tb = fw_nv_txbuf_alloc_for(fw, FW_TB_WIRE, k->node);	/* its share */
	if (!tb)
		return NVM_ST_BUSY;
	slot = fw_hdma_alloc(fw, FW_JOB_UNET_KFETCH, tb);
	if (slot < 0) {
		fw_nv_txbuf_put(fw, tb, FW_TB_WIRE);
		return NVM_ST_BUSY;
	}
	/* headers now (the route and tag are the kernel's), data by DMA */
	fw->nv.txbuf_len[tb - 1] = fw_unet_frame_build(fw, k->src_port, tb, &ch,
						       k->len, k->hflags, k->reply,
						       &off);
	fw_hdma_add(fw, slot, LANAI_DMA_E2L, k->len, fw_unet_data_off(fw, tb),
		    k->addr);
	fw_hdma_submit(fw, slot);
	fw->unet.ks_done[tb - 1] = k->done_addr;
	fw->unet.ks_cookie[tb - 1] = k->cookie;
	return NVM_ST_OK;
}

/*
 * A KSEND's bytes are here.  Its node may have become unreachable since
 * the command was accepted (the route removed, NetVM gave it up): then it
 * is not sent (it would leave without route bytes) and the kernel is told
 * so with the cookie marked NVM_UNET_KS_UNREACHABLE, as a NIC endpoint's
 * message is checked again after its fetch.
 */
void fw_unet_kfetched(struct fw *fw, uint32_t tb, uint32_t status)
{
	struct nvm_pkt_hdr ph;
	uint32_t base = fw_nv_txbuf_off(fw, tb);
	uint32_t flen = fw->nv.txbuf_len[tb - 1];
	uint32_t done = fw->unet.ks_cookie[tb - 1];
	bool gone;
	uint8_t rl;

	/* the header as the NI built it; a guest may have rewritten it in
	 * SRAM since, so the node is bounded where it is used */
	memcpy(&ph, fw->chip->sram + base + NVM_ROUTE_MAX, sizeof(ph));
	gone = status == NVM_DMA_ST_DONE &&
	       fw_nv_unreachable(fw, fw_be16(ph.dst_node));
	if (gone)
		done |= NVM_UNET_KS_UNREACHABLE;
	/* the bytes are here: the kernel may reuse its buffer */
	if (fw->unet.ks_done[tb - 1])
		fw_nv_host_write(fw, fw->unet.ks_done[tb - 1], &done, 4);
	fw->unet.ks_done[tb - 1] = 0;
	rl = fw_nv_route_len(fw, fw_be16(ph.dst_node));
	if (status != NVM_DMA_ST_DONE || gone ||
	    !fw_send_submit(fw, FW_PROG_UNET, tb, base + NVM_ROUTE_MAX - rl,
			    flen)) {
		fw_nv_txbuf_put(fw, tb, FW_TB_WIRE);
		if (gone)
			fw_count(fw, FW_CNT_UNET_TX_BAD);
		return;
	}
	fw_count(fw, FW_CNT_UNET_TX);
}

/* The kernel handed records up to @count on: their slots are free. */
static uint32_t k_div_done(struct fw *fw, uint32_t count)
{
	struct fw_unet *u = &fw->unet;

	if (!u->div_slots ||
	    (uint32_t)(count - u->div_cons) > u->div_prod - u->div_cons)
		return NVM_ST_BAD_CMD;
	for (; u->div_cons != count; u->div_cons++) {
		uint32_t p = u->div_port[u->div_cons % u->div_slots];

		if (p < FW_UNET_EPS && u->ep[p].div_out)
			u->ep[p].div_out--;
	}
	return NVM_ST_OK;
}

uint32_t fw_unet_kernel_cmd(struct fw *fw, const struct nvm_cmd *c)
{
	switch (c->op) {
	case NVM_KOP_UNET_OPEN: {
		struct nvm_k_unet_open k;

		memcpy(&k, c->inline_data, sizeof(k));
		return k_open(fw, &k);
	}
	case NVM_KOP_UNET_CLOSE:
		return k_close(fw, c->dst_port);
	case NVM_KOP_UNET_DIVERT_CFG:
		if (c->dst_node > NVM_UNET_DIV_SLOTS)
			return NVM_ST_BAD_CMD;
		fw->unet.div_base = (uint64_t)c->arg[1] << 32 | c->arg[0];
		fw->unet.div_slots = c->dst_node;
		fw->unet.div_prod = fw->unet.div_cons = 0;
		return NVM_ST_OK;
	case NVM_KOP_UNET_DIVERT_DONE:
		return k_div_done(fw, c->arg[0]);
	case NVM_KOP_UNET_KSEND: {
		struct nvm_k_unet_ksend k;

		memcpy(&k, c->inline_data, sizeof(k));
		return k_ksend(fw, &k);
	}
	case NVM_KOP_UNET_KCTL: {
		struct nvm_k_unet_kctl k;

		memcpy(&k, c->inline_data, sizeof(k));
		return fw_unet_kctl(fw, &k);
	}
	case NVM_KOP_UNET_DIRECT:
		if (!fw_unet_open_port(fw, c->dst_port) ||
		    fw->unet.ep[c->dst_port].div_out)
			return NVM_ST_BAD_CMD;
		/* the senders may go on, then the messages go direct */
		fw_unet_release(fw, c->dst_port, false);
		if (fw->unet.ep[c->dst_port].state != FW_UNET_EP_DIRECT)
			fw_unet_ep_set_state(fw, c->dst_port,
					     FW_UNET_EP_DIRECT);
		fw_unet_publish(fw, c->dst_port);
		return NVM_ST_OK;
	case NVM_KOP_UNET_HOLD:
		if (!fw_unet_open_port(fw, c->dst_port))
			return NVM_ST_BAD_CMD;
		fw_unet_hold(fw, c->dst_port);
		return NVM_ST_OK;
	case NVM_KOP_UNET_CHAN: {
		struct nvm_k_unet_chan k;

		memcpy(&k, c->inline_data, sizeof(k));
		return k_chan(fw, &k);
	}
	default:
		return FW_KOP_UNCLAIMED;
	}
}

/*
 * The kernel mapped @page of @port (NVM_KOP_RESTART): a send that waits
 * for it tries once more.  Page 0 (the kernel lost events) retries
 * without counting, so a page still missing is reported again.
 */
void fw_unet_restart(struct fw *fw, uint32_t port, uint64_t page)
{
	struct fw_unet_ep *e;

	if (!fw_unet_open_port(fw, port))
		return;
	e = &fw->unet.ep[port];
	if (e->tx_state != FW_UNET_TX_PAGE_WAIT)
		return;
	if (page && page != (e->tx_miss & ~(uint64_t)(NVM_PAGE_SIZE - 1)))
		return;
	fw_unet_tx_set_state(fw, port, page ? FW_UNET_TX_RETRY :
			     FW_UNET_TX_READY);
}

