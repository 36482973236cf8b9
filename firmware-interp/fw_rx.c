// SPDX-License-Identifier: GPL-2.0-only
/*
 * The receive dispatcher: takes full wire slots in ring order, checks the
 * packet header and hands the payload to the program for its type.  A slot
 * stays full while its handler waits (no host buffer, no credit) or a host
 * DMA job still reads it; that is how a busy NIC back-pressures the link.
 */
#include <string.h>

#include "fw.h"
#include "netvm/packet.h"

uint32_t fw_rx_slot_off(struct fw *fw)
{
	return fw->layout.wire_rx_ring +
	       fw->rx_slot * fw->layout.wire_rx_slot_size;
}

void fw_rx_release(struct fw *fw)
{
	struct fw_chip *c = fw->chip;

	fw_sram_wr32(c, fw_rx_slot_off(fw), FW_RX_SLOT_EMPTY);
	fw->rx_slot = (fw->rx_slot + 1) % fw->layout.wire_rx_slots;
	fw->rx_held = 0;
	c->ops->recv_kick(c->opaque);
}

bool fw_rx_step(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	uint32_t slot = fw_rx_slot_off(fw);
	uint32_t max = fw->layout.wire_rx_slot_size - sizeof(struct fw_rx_slot);
	uint32_t len, data;
	struct nvm_pkt_hdr h;
	enum fw_rx_verdict v;

	if (fw->rx_held || fw_sram_rd32(c, slot) != FW_RX_SLOT_FULL)
		return false;
	len = fw_sram_rd32(c, slot + 4);
	data = slot + sizeof(struct fw_rx_slot);
	if (len < sizeof(h) || len > max) {
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		goto drop;
	}
	memcpy(&h, c->sram + data, sizeof(h));
	if (h.type & NVM_ROUTE_BYTE) {
		/* a route byte left over: the frame was sent to the wrong port */
		fw_count(fw, FW_CNT_RX_MISROUTED);
		goto drop;
	}
	if (h.version != NVM_PKT_VERSION || fw_be16(h.len) != len - sizeof(h)) {
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		goto drop;
	}
	switch (h.type) {
	case NVM_PKT_RAW:
		v = fw_raw_rx(fw, data + sizeof(h), len - sizeof(h),
			      fw_be16(h.src_node));
		break;
	case NVM_PKT_NETVM:
		v = fw_nv_rx(fw, data + sizeof(h), len - sizeof(h),
			     fw_be16(h.src_node));
		break;
	case NVM_PKT_UNET:
		v = fw_unet_rx(fw, data + sizeof(h), len - sizeof(h),
			       fw_be16(h.src_node));
		break;
	default:
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		goto drop;
	}
	if (v == FW_RX_WAIT)
		return false;
	if (v == FW_RX_HOLD) {
		fw->rx_held = 1;
		return true;
	}
	fw_rx_release(fw);
	return true;
drop:
	fw_trace(fw, "rx_drop", fw->rx_slot, len);
	fw_rx_release(fw);
	return true;
}
