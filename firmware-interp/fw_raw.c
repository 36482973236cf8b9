// SPDX-License-Identifier: GPL-2.0-only
/*
 * Raw frames: host -> SRAM -> wire -> SRAM -> host, through all three
 * engines.  Used by the driver for link bring-up and by the tests.
 *
 * Transmit: an owned descriptor in the raw tx ring is fetched by host DMA
 * into the staging buffer behind a route and a packet header, then the
 * send-wire engine puts it on the link.  Receive: the receive-wire engine
 * fills a wire slot; the firmware checks the packet, waits for an owned
 * host buffer in the raw rx ring and host-DMAs the payload there.  A frame
 * waits in its wire slot while no host buffer is posted, so a receiver
 * that is not keeping up back-pressures the link instead of dropping.
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
	fw->tx_state = FW_TX_IDLE;
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

bool fw_raw_tx_step(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	struct nvm_raw_desc d;
	struct nvm_pkt_hdr h;
	uint32_t stage = fw->layout.staging;
	uint8_t st;

	if (fw->tx_state != FW_TX_IDLE || fw->hdma_owner != FW_HDMA_NONE)
		return false;
	raw_desc_read(fw, raw_desc_off(fw->layout.raw_tx_ring, fw->tx_next), &d);
	if (!(d.flags & NVM_RAW_OWN))
		return false;

	fw->tx_idx = fw->tx_next;
	st = tx_check(fw, &d);
	if (st != NVM_RAW_OK) {
		c->ops->trace(c->opaque, "raw_tx_refused", fw->tx_idx, st);
		tx_complete(fw, st);
		return true;
	}

	memcpy(c->sram + stage, d.route, d.route_len);
	h.type = NVM_PKT_RAW;
	h.version = NVM_PKT_VERSION;
	h.src_node = __builtin_bswap16(c->node_id);
	h.dst_node = 0xffff;
	h.len = __builtin_bswap16((uint16_t)d.len);
	memcpy(c->sram + stage + d.route_len, &h, sizeof(h));
	fw->tx_frame_len = d.route_len + sizeof(h) + d.len;
	fw->tx_state = FW_TX_FETCH;
	fw_hdma(fw, FW_HDMA_TX, fw->desc_tx, LANAI_DMA_E2L, d.len,
		stage + d.route_len + sizeof(h), d.host_addr);
	return true;
}

static void rx_release_slot(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	uint32_t slot = fw->layout.wire_rx_ring +
			fw->rx_slot * fw->layout.wire_rx_slot_size;

	fw_sram_wr32(c, slot, FW_RX_SLOT_EMPTY);
	fw->rx_slot = (fw->rx_slot + 1) % fw->layout.wire_rx_slots;
	fw->rx_state = FW_RX_IDLE;
	c->ops->recv_kick(c->opaque);
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

/* Validate the frame in the current wire slot; payload length or -1. */
static int32_t rx_parse(struct fw *fw, uint32_t slot, uint32_t *src)
{
	struct fw_chip *c = fw->chip;
	uint32_t len = fw_sram_rd32(c, slot + 4);
	struct nvm_pkt_hdr h;
	uint32_t max = fw->layout.wire_rx_slot_size - sizeof(struct fw_rx_slot);

	if (len < sizeof(h) || len > max) {
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		return -1;
	}
	memcpy(&h, c->sram + slot + sizeof(struct fw_rx_slot), sizeof(h));
	if (h.type & NVM_ROUTE_BYTE) {
		/* a route byte left over: the frame was sent to the wrong port */
		fw_count(fw, FW_CNT_RX_MISROUTED);
		return -1;
	}
	if (h.type != NVM_PKT_RAW || h.version != NVM_PKT_VERSION ||
	    __builtin_bswap16(h.len) != len - sizeof(h)) {
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		return -1;
	}
	*src = __builtin_bswap16(h.src_node);
	return (int32_t)(len - sizeof(h));
}

bool fw_raw_rx_step(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	uint32_t slot = fw->layout.wire_rx_ring +
			fw->rx_slot * fw->layout.wire_rx_slot_size;
	struct nvm_raw_desc d;
	int32_t plen;
	uint32_t src = 0;

	if (fw->rx_state != FW_RX_IDLE || fw->hdma_owner != FW_HDMA_NONE)
		return false;
	if (fw_sram_rd32(c, slot) != FW_RX_SLOT_FULL)
		return false;

	plen = rx_parse(fw, slot, &src);
	if (plen < 0) {
		c->ops->trace(c->opaque, "rx_drop", fw->rx_slot,
			      fw_sram_rd32(c, slot + 4));
		rx_release_slot(fw);
		return true;
	}

	raw_desc_read(fw, raw_desc_off(fw->layout.raw_rx_ring, fw->rx_next), &d);
	if (!(d.flags & NVM_RAW_OWN))
		return false;	/* no host buffer: the frame waits in SRAM */

	fw->rx_idx = fw->rx_next;
	fw->rx_src = src;
	fw->rx_len = (uint32_t)plen;
	if ((uint32_t)plen > d.len) {
		rx_complete(fw, NVM_RAW_ERR_LEN, (uint32_t)plen);
		rx_release_slot(fw);
		return true;
	}
	fw->rx_state = FW_RX_DELIVER;
	fw_hdma(fw, FW_HDMA_RX, fw->desc_rx, LANAI_DMA_L2E, (uint32_t)plen,
		slot + sizeof(struct fw_rx_slot) + sizeof(struct nvm_pkt_hdr),
		d.host_addr);
	return true;
}

void fw_raw_hdma_done(struct fw *fw, uint32_t owner)
{
	struct fw_chip *c = fw->chip;

	if (owner == FW_HDMA_TX && fw->tx_state == FW_TX_FETCH) {
		if (fw_hdma_status(fw, fw->desc_tx) != NVM_DMA_ST_DONE) {
			fw_count(fw, FW_CNT_HOST_DMA_ERR);
			tx_complete(fw, NVM_RAW_ERR_DMA);
			return;
		}
		fw->tx_state = FW_TX_SEND;
		c->ops->send_start(c->opaque, fw->layout.staging,
				   fw->tx_frame_len);
	} else if (owner == FW_HDMA_RX && fw->rx_state == FW_RX_DELIVER) {
		bool ok = fw_hdma_status(fw, fw->desc_rx) == NVM_DMA_ST_DONE;

		if (!ok)
			fw_count(fw, FW_CNT_HOST_DMA_ERR);
		rx_complete(fw, ok ? NVM_RAW_OK : NVM_RAW_ERR_DMA, fw->rx_len);
		rx_release_slot(fw);
	}
}

void fw_raw_send_done(struct fw *fw)
{
	if (fw->tx_state == FW_TX_SEND)
		tx_complete(fw, NVM_RAW_OK);
}
