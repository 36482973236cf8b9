// SPDX-License-Identifier: GPL-2.0-only
/*
 * The firmware's SRAM map: where the layout block, counters, raw rings,
 * staging, wire slots, DMA descriptors, scratch, ACK buffers, NetVM's
 * retransmission buffers and endpoints sit.  The host learns it from the
 * layout block written at boot.
 */
#include <string.h>

#include "fw.h"
#include "netvm/packet.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the firmware accesses little-endian SRAM structures directly"
#endif

/* SRAM map of firmware 2.0 (the host learns it from the layout). */
#define L_LAYOUT	0x0000u
#define L_COUNTERS	0x0080u
#define L_RAW_TX	0x0400u
#define L_RAW_RX	0x0600u
#define L_RAW_ENTRIES	16u
#define L_STAGING	0x1000u
#define L_STAGING_SIZE	0x2000u
#define L_WIRE_RX	0x3000u
#define L_WIRE_SLOTS	8u
#define L_WIRE_SLOT	4352u	/* header + NVM_FRAME_MAX, rounded up */
#define L_DMA_DESCS	0xc000u
#define L_DMA_SIZE	(FW_HDMA_SLOTS * FW_HDMA_DESCS * 32u)
#define L_SCRATCH	(L_DMA_DESCS + L_DMA_SIZE)
#define L_ACKBUF	(L_SCRATCH + FW_HDMA_SLOTS * FW_NV_SCRATCH)
#define L_RAW_END	(L_ACKBUF + FW_NV_NODES * FW_NV_ACKBUF)
#define L_TXBUF		0x20000u
#define L_EP_BASE	(L_TXBUF + FW_NV_TXBUFS * FW_NV_TXBUF_SIZE)
#define L_NV_END	(L_EP_BASE + FW_NV_EPS * NVM_EP_STRIDE)

_Static_assert(L_COUNTERS + FW_CNT_MAX * 4 <= L_RAW_TX, "counters fit");
_Static_assert(L_RAW_TX + L_RAW_ENTRIES * sizeof(struct nvm_raw_desc) <=
	       L_RAW_RX, "raw tx ring fits");
_Static_assert(L_RAW_RX + L_RAW_ENTRIES * sizeof(struct nvm_raw_desc) <=
	       L_STAGING, "raw rx ring fits");
_Static_assert(L_WIRE_RX + L_WIRE_SLOTS * L_WIRE_SLOT <= L_DMA_DESCS,
	       "wire slots fit");
_Static_assert(sizeof(struct fw_rx_slot) + NVM_FRAME_MAX <= L_WIRE_SLOT,
	       "a frame fits a wire slot");
_Static_assert(NVM_FRAME_MAX <= L_STAGING_SIZE, "a frame fits staging");
_Static_assert(NVM_FRAME_MAX <= FW_NV_TXBUF_SIZE, "a frame fits a tx buffer");
_Static_assert(L_RAW_END <= L_TXBUF, "private areas fit");
_Static_assert(L_RAW_END <= LANAI_SRAM_MIN, "raw frames fit the smallest SRAM");
_Static_assert(L_EP_BASE % NVM_EP_STRIDE == 0, "endpoints are page aligned");

static void fw_layout(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	struct nvm_sram_layout *l = &fw->layout;

	memset(l, 0, sizeof(*l));
	l->version = NVM_LAYOUT_VERSION;
	l->sram_size = c->sram_size;
	l->fw_version = FW_VERSION;
	l->raw_tx_ring = L_RAW_TX;
	l->raw_tx_len = L_RAW_ENTRIES;
	l->raw_rx_ring = L_RAW_RX;
	l->raw_rx_len = L_RAW_ENTRIES;
	l->raw_max_payload = NVM_RAW_MAX_PAYLOAD;
	l->wire_rx_ring = L_WIRE_RX;
	l->wire_rx_slots = L_WIRE_SLOTS;
	l->wire_rx_slot_size = L_WIRE_SLOT;
	l->staging = L_STAGING;
	l->staging_size = L_STAGING_SIZE;
	l->counters = L_COUNTERS;
	l->counters_len = FW_CNT_MAX;
	l->dma_descs = L_DMA_DESCS;
	if (c->sram_size >= L_NV_END) {
		/* room for NetVM: endpoints and retransmission buffers;
		 * the page tables follow once the kernel configures them */
		l->txbuf = L_TXBUF;
		l->txbuf_count = FW_NV_TXBUFS;
		l->txbuf_size = FW_NV_TXBUF_SIZE;
		l->ep_base = L_EP_BASE;
		l->ep_count = FW_NV_EPS;
		l->ep_stride = NVM_EP_STRIDE;
		l->tables_end = L_NV_END;
	}
}

/*
 * Lay out SRAM at boot: the firmware-private regions and the host's rings
 * start clean and the layout block is written (magic last).
 */
void fw_sram_map_boot(struct fw *fw)
{
	struct fw_chip *c = fw->chip;

	memset(c->sram, 0, c->sram_size >= L_NV_END ? L_NV_END : L_RAW_END);
	fw_layout(fw);
	fw->layout_off = L_LAYOUT;
	memcpy(c->sram + L_LAYOUT, &fw->layout, sizeof(fw->layout));
	/* magic last: a host that sees it sees a complete layout */
	fw_sram_wr32(c, L_LAYOUT, NVM_LAYOUT_MAGIC);
	fw->layout.magic = NVM_LAYOUT_MAGIC;
}

/* The scratch area of a host DMA job slot (small host writes). */
uint32_t fw_scratch_off(struct fw *fw, int slot)
{
	(void)fw;
	return L_SCRATCH + (uint32_t)slot * FW_NV_SCRATCH;
}

/* Where ACK frames to @node are built. */
uint32_t fw_ackbuf_off(struct fw *fw, uint32_t node)
{
	(void)fw;
	return L_ACKBUF + node * FW_NV_ACKBUF;
}
