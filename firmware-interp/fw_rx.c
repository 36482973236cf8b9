// SPDX-License-Identifier: GPL-2.0-only
/*
 * The receive dispatcher: takes full wire slots in ring order, checks the
 * packet header and hands the payload to the program for its type.  A slot
 * stays full while its handler waits (no host buffer, no credit) or a host
 * DMA job still reads it; that is how a busy NIC back-pressures the link.
 * Urgent frames (U-Net's overflow control) are taken from behind a waiting
 * head, so that a frame telling this NIC to stop sending cannot wait
 * behind the data that made the receiver full.
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

/*
 * The header of the frame in the wire slot at @slot, checked: its length
 * in @len and its data offset in @data; false (counted) if it is bad.
 */
static bool rx_frame_ok(struct fw *fw, uint32_t slot, struct nvm_pkt_hdr *h,
			uint32_t *len, uint32_t *data)
{
	struct fw_chip *c = fw->chip;
	uint32_t max = fw->layout.wire_rx_slot_size - sizeof(struct fw_rx_slot);

	*len = fw_sram_rd32(c, slot + 4);
	*data = slot + sizeof(struct fw_rx_slot);
	if (*len < sizeof(*h) || *len > max) {
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		return false;
	}
	memcpy(h, c->sram + *data, sizeof(*h));
	if (h->type & NVM_ROUTE_BYTE) {
		/* a route byte left over: the frame was sent to the wrong port */
		fw_count(fw, FW_CNT_RX_MISROUTED);
		return false;
	}
	if (h->version != NVM_PKT_VERSION || fw_be16(h->len) != *len - sizeof(*h)) {
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		return false;
	}
	return true;
}

/* The program that receives packet type @type, or NULL. */
static const struct fw_program *rx_program(uint8_t type)
{
	for (uint32_t p = 0; p < FW_PROG_COUNT; p++)
		if (type != FW_PKT_NONE && fw_programs[p]->pkt_type == type &&
		    fw_programs[p]->receive)
			return fw_programs[p];
	return NULL;
}

static enum fw_rx_verdict rx_dispatch(struct fw *fw, const struct nvm_pkt_hdr *h,
				      uint32_t data, uint32_t len)
{
	const struct fw_program *prog = rx_program(h->type);

	if (!prog) {
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		return FW_RX_RELEASE;
	}
	return prog->receive(fw, data + sizeof(*h), len - sizeof(*h),
			     fw_be16(h->src_node));
}

/*
 * Frames that must not wait behind data, such as U-Net's overflow-control
 * frames (the "second network" that stops a sender): the program's
 * urgent hook says which.  They are taken at once, by nothing but
 * firmware state, whatever waits at the head of the ring.
 */
static bool rx_urgent(struct fw *fw, const struct nvm_pkt_hdr *h,
		      uint32_t data, uint32_t len)
{
	const struct fw_program *prog = rx_program(h->type);

	return prog && prog->urgent &&
	       prog->urgent(fw, data + sizeof(*h), len - sizeof(*h));
}

/*
 * The head of the ring waits (no host buffer, no credit, a DMA running):
 * take the urgent frames queued behind it, in ring order, and mark their
 * slots TAKEN so that the head's release skips them.
 */
static bool rx_bypass(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	uint32_t n = fw->layout.wire_rx_slots, i, slot, len, data, state;
	struct nvm_pkt_hdr h;
	bool progress = false;

	for (i = 1; i < n; i++) {
		slot = fw->layout.wire_rx_ring +
		       ((fw->rx_slot + i) % n) * fw->layout.wire_rx_slot_size;
		state = fw_sram_rd32(c, slot);
		if (state == FW_RX_SLOT_TAKEN)
			continue;
		if (state != FW_RX_SLOT_FULL)
			break;		/* the engine fills slots in order */
		if (!rx_frame_ok(fw, slot, &h, &len, &data) ||
		    !rx_urgent(fw, &h, data, len))
			continue;	/* judged when it reaches the head */
		rx_dispatch(fw, &h, data, len);
		fw_sram_wr32(c, slot, FW_RX_SLOT_TAKEN);
		progress = true;
	}
	return progress;
}

bool fw_rx_step(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	uint32_t slot = fw_rx_slot_off(fw);
	uint32_t len, data, state;
	struct nvm_pkt_hdr h;
	enum fw_rx_verdict v;

	if (fw->rx_held)
		return rx_bypass(fw);
	state = fw_sram_rd32(c, slot);
	if (state == FW_RX_SLOT_TAKEN) {
		fw_rx_release(fw);
		return true;
	}
	if (state != FW_RX_SLOT_FULL)
		return false;
	if (!rx_frame_ok(fw, slot, &h, &len, &data))
		goto drop;
	v = rx_dispatch(fw, &h, data, len);
	if (v == FW_RX_WAIT)
		return rx_bypass(fw);
	if (v == FW_RX_HOLD) {
		fw->rx_held = 1;
		return true;
	}
	fw_rx_release(fw);
	return true;
drop:
	fw_tr_fw_rx_drop(fw, fw->rx_slot, len);
	fw_rx_release(fw);
	return true;
}
