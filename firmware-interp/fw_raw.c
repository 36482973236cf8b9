// SPDX-License-Identifier: GPL-2.0-only
/*
 * Raw frames: host -> SRAM -> wire -> SRAM -> host, through all three
 * engines.  Used by the driver for link bring-up and by the tests.
 *
 * Transmit: an owned descriptor in the raw tx ring is fetched by host DMA
 * into the staging buffer behind a route and a packet header, then the
 * send-wire engine puts it on the link.  Receive: the dispatcher hands us
 * a RAW packet in a wire slot; we wait for an owned host buffer in the raw
 * rx ring and host-DMA the payload there.  A frame waits in its wire slot
 * while no host buffer is posted, so a receiver that is not keeping up
 * back-pressures the link instead of dropping.
 */
#include <stddef.h>
#include <string.h>

#include "fw.h"
#include "netvm/packet.h"

static uint32_t raw_desc_off(uint32_t ring, uint32_t idx)
{
	return ring + idx * sizeof(struct nvm_raw_desc);
}

static void raw_desc_read(struct fw *fw, uint32_t off, struct nvm_raw_desc *d)
{
	memcpy(d, fw->chip->sram + off, sizeof(*d));
}

/*
 * Hand a descriptor back to the host: outcome fields first, then (after a
 * release fence, since vCPUs read SRAM concurrently) the flags without OWN.
 */
static void raw_desc_complete(struct fw *fw, uint32_t off,
			      struct nvm_raw_desc *d, uint8_t status)
{
	uint8_t *p = fw->chip->sram + off;
	uint16_t flags = d->flags & (uint16_t)~NVM_RAW_OWN;

	d->status = status;
	memcpy(p + offsetof(struct nvm_raw_desc, len), &d->len, sizeof(d->len));
	p[offsetof(struct nvm_raw_desc, status)] = status;
	memcpy(p + offsetof(struct nvm_raw_desc, src_node), &d->src_node,
	       sizeof(d->src_node));
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(p + offsetof(struct nvm_raw_desc, flags), &flags, sizeof(flags));
}

static void tx_complete(struct fw *fw, uint8_t status)
{
	uint32_t off = raw_desc_off(fw->layout.raw_tx_ring, fw->tx_idx);
	struct nvm_raw_desc d;

	raw_desc_read(fw, off, &d);
	raw_desc_complete(fw, off, &d, status);
	fw_count(fw, status == NVM_RAW_OK ? FW_CNT_RAW_TX : FW_CNT_RAW_TX_ERR);
	fw_post(fw, NVM_EV_RAW_TX, 0, fw->tx_idx, status);
	fw->tx_next = (fw->tx_idx + 1) % fw->layout.raw_tx_len;
	fw_raw_set_tx_state(fw, FW_TX_IDLE);
}

static uint8_t tx_check(struct fw *fw, const struct nvm_raw_desc *d)
{
	uint32_t i;

	if (d->len == 0 || d->len > fw->layout.raw_max_payload)
		return NVM_RAW_ERR_LEN;
	if (d->route_len > NVM_ROUTE_MAX)
		return NVM_RAW_ERR_ROUTE;
	for (i = 0; i < d->route_len; i++)
		if (!(d->route[i] & NVM_ROUTE_BYTE))
			return NVM_RAW_ERR_ROUTE;
	if (!(fw->chip->ops->link_state(fw->chip->opaque) & NVM_LINK_UP))
		return NVM_RAW_ERR_LINK;
	return NVM_RAW_OK;
}

static bool raw_tx_step(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	struct nvm_raw_desc d;
	struct nvm_pkt_hdr h;
	uint32_t stage = fw->layout.staging;
	uint8_t st;
	int job;

	if (fw->tx_state != FW_TX_IDLE)
		return false;
	raw_desc_read(fw, raw_desc_off(fw->layout.raw_tx_ring, fw->tx_next), &d);
	if (!(d.flags & NVM_RAW_OWN))
		return false;

	fw->tx_idx = fw->tx_next;
	st = tx_check(fw, &d);
	if (st != NVM_RAW_OK) {
		fw_tr_fw_raw_tx_refused(fw, fw->tx_idx, st);
		tx_complete(fw, st);
		return true;
	}
	job = fw_hdma_alloc(fw, FW_JOB_RAW_TX, fw->tx_idx);
	if (job < 0)
		return false;

	memcpy(c->sram + stage, d.route, d.route_len);
	h.type = NVM_PKT_RAW;
	h.version = NVM_PKT_VERSION;
	h.src_node = fw_be16(c->node_id);
	h.dst_node = 0xffff;
	h.len = fw_be16((uint16_t)d.len);
	memcpy(c->sram + stage + d.route_len, &h, sizeof(h));
	fw->tx_frame_len = d.route_len + sizeof(h) + d.len;
	fw_raw_set_tx_state(fw, FW_TX_FETCH);
	fw_hdma_add(fw, job, LANAI_DMA_E2L, d.len,
		    stage + d.route_len + sizeof(h), d.host_addr);
	fw_hdma_submit(fw, job);
	return true;
}

static void raw_tx_fetched(struct fw *fw, uint32_t arg, uint32_t status)
{
	(void)arg;
	if (fw->tx_state != FW_TX_FETCH)
		return;
	if (status != NVM_DMA_ST_DONE) {
		tx_complete(fw, NVM_RAW_ERR_DMA);
		return;
	}
	fw_raw_set_tx_state(fw, FW_TX_SEND);
	if (!fw_send_submit(fw, FW_PROG_RAW, fw->tx_idx, fw->layout.staging,
			    fw->tx_frame_len))
		tx_complete(fw, NVM_RAW_ERR_LINK);
}

static void raw_sent(struct fw *fw, uint32_t arg)
{
	(void)arg;
	if (fw->tx_state == FW_TX_SEND)
		tx_complete(fw, NVM_RAW_OK);
}

static void rx_complete(struct fw *fw, uint8_t status, uint32_t len)
{
	uint32_t off = raw_desc_off(fw->layout.raw_rx_ring, fw->rx_idx);
	struct nvm_raw_desc d;

	raw_desc_read(fw, off, &d);
	d.len = len;
	d.src_node = (uint16_t)fw->rx_src;
	raw_desc_complete(fw, off, &d, status);
	fw_count(fw, status == NVM_RAW_OK ? FW_CNT_RAW_RX : FW_CNT_RAW_RX_ERR);
	fw_post(fw, NVM_EV_RAW_RX, 0, fw->rx_idx,
		(uint64_t)fw->rx_src << 32 | len);
	fw->rx_next = (fw->rx_idx + 1) % fw->layout.raw_rx_len;
}

static enum fw_rx_verdict raw_rx(struct fw *fw, uint32_t data, uint32_t len,
				 uint32_t src)
{
	struct nvm_raw_desc d;
	int job;

	raw_desc_read(fw, raw_desc_off(fw->layout.raw_rx_ring, fw->rx_next), &d);
	if (!(d.flags & NVM_RAW_OWN))
		return FW_RX_WAIT;	/* no host buffer: the frame waits in SRAM */

	fw->rx_idx = fw->rx_next;
	fw->rx_src = src;
	fw->rx_len = len;
	if (len > d.len) {
		rx_complete(fw, NVM_RAW_ERR_LEN, len);
		return FW_RX_RELEASE;
	}
	job = fw_hdma_alloc(fw, FW_JOB_RAW_RX, fw->rx_idx);
	if (job < 0)
		return FW_RX_WAIT;
	fw_hdma_add(fw, job, LANAI_DMA_L2E, len, data, d.host_addr);
	fw_hdma_submit(fw, job);
	return FW_RX_HOLD;
}

static void raw_rx_delivered(struct fw *fw, uint32_t arg, uint32_t status)
{
	(void)arg;
	rx_complete(fw, status == NVM_DMA_ST_DONE ? NVM_RAW_OK : NVM_RAW_ERR_DMA,
		    fw->rx_len);
	fw_rx_release(fw);
}

static void raw_job_done(struct fw *fw, uint32_t kind, uint32_t arg,
			 uint32_t status)
{
	if (kind == FW_JOB_RAW_TX)
		raw_tx_fetched(fw, arg, status);
	else
		raw_rx_delivered(fw, arg, status);
}

/* The raw rings are scanned on every pass, so the two raw doorbells need
 * no action beyond waking us. */
static bool raw_doorbell(struct fw *fw, uint32_t ep, uint32_t off,
			 uint32_t data)
{
	(void)fw;
	(void)off;
	return ep == 0 && (data == NVM_DB_RAW_TX || data == NVM_DB_RAW_RX);
}

static void raw_halt(struct fw *fw)
{
	fw_raw_set_tx_state(fw, FW_TX_IDLE);
}

const struct fw_program fw_prog_raw = {
	.name = "raw",
	.pkt_type = NVM_PKT_RAW,
	.halt = raw_halt,
	.doorbell = raw_doorbell,
	.step = raw_tx_step,
	.receive = raw_rx,
	.job_done = raw_job_done,
	.sent = raw_sent,
};
