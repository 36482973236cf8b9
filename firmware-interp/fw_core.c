// SPDX-License-Identifier: GPL-2.0-only
/*
 * Firmware core: boot (SRAM layout), the main loop, and the helpers every
 * program uses (events, counters, host DMA descriptors).
 */
#include <string.h>

#include "fw.h"
#include "netvm/packet.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the firmware accesses little-endian SRAM structures directly"
#endif

/* SRAM map of firmware 1.0 (the host learns it from the layout). */
#define L_LAYOUT	0x0000u
#define L_COUNTERS	0x0080u
#define L_DMA_DESCS	0x0200u
#define L_RAW_TX	0x0400u
#define L_RAW_RX	0x0600u
#define L_RAW_ENTRIES	16u
#define L_STAGING	0x1000u
#define L_STAGING_SIZE	0x2000u
#define L_WIRE_RX	0x3000u
#define L_WIRE_SLOTS	8u
#define L_WIRE_SLOT	4352u	/* header + NVM_FRAME_MAX, rounded up */
#define L_END		(L_WIRE_RX + L_WIRE_SLOTS * L_WIRE_SLOT)

_Static_assert(L_COUNTERS + FW_CNT_MAX * 4 <= L_DMA_DESCS, "counters fit");
_Static_assert(L_RAW_TX + L_RAW_ENTRIES * sizeof(struct nvm_raw_desc) <=
	       L_RAW_RX, "raw tx ring fits");
_Static_assert(L_RAW_RX + L_RAW_ENTRIES * sizeof(struct nvm_raw_desc) <=
	       L_STAGING, "raw rx ring fits");
_Static_assert(sizeof(struct fw_rx_slot) + NVM_FRAME_MAX <= L_WIRE_SLOT,
	       "a frame fits a wire slot");
_Static_assert(NVM_FRAME_MAX <= L_STAGING_SIZE, "a frame fits staging");
_Static_assert(L_END <= LANAI_SRAM_MIN, "layout fits the smallest SRAM");

void fw_init(struct fw *fw, struct fw_chip *chip)
{
	memset(fw, 0, sizeof(*fw));
	fw->chip = chip;
	fw->state = NVM_FW_HALTED;
}

void fw_count(struct fw *fw, enum fw_counter c)
{
	fw->counters[c]++;
}

void fw_post(struct fw *fw, uint8_t type, uint16_t ep, uint32_t data,
	     uint64_t arg)
{
	struct nvm_event ev = {
		.type = type, .endpoint = ep, .data = data, .arg = arg,
	};

	fw->chip->ops->event_post(fw->chip->opaque, &ev);
}

/* Build one terminal descriptor at desc and start the host DMA engine. */
void fw_hdma(struct fw *fw, uint32_t owner, uint32_t desc, uint32_t flags,
	     uint32_t len, uint32_t sram, uint64_t host)
{
	struct lanai_dma_desc d = {
		.next = flags | LANAI_DMA_TERMINAL | LANAI_DMA_WAKE,
		.len = len,
		.lar = sram,
		.eah = (uint32_t)(host >> 32),
		.eal = (uint32_t)host,
		.status = NVM_DMA_ST_PENDING,
	};

	memcpy(fw->chip->sram + desc, &d, sizeof(d));
	fw->hdma_owner = owner;
	fw->chip->ops->host_dma_start(fw->chip->opaque, desc);
}

uint32_t fw_hdma_status(struct fw *fw, uint32_t desc)
{
	return fw_sram_rd32(fw->chip,
			    desc + offsetof(struct lanai_dma_desc, status));
}

static void fw_set_state(struct fw *fw, enum nvm_fw_state st)
{
	fw->state = st;
	fw->chip->ops->set_state(fw->chip->opaque, st,
				 st == NVM_FW_HALTED ? 0 : FW_VERSION,
				 fw->layout_off);
	fw->chip->ops->trace(fw->chip->opaque, "state", st, 0);
}

void fw_boot(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	struct nvm_sram_layout *l = &fw->layout;
	uint32_t i;

	if (fw->state != NVM_FW_HALTED)
		return;
	fw_set_state(fw, NVM_FW_BOOTING);

	/* Firmware-private regions start clean; the host's raw rings too. */
	memset(c->sram, 0, L_END);
	memset(l, 0, sizeof(*l));
	l->version = NVM_LAYOUT_VERSION;
	l->sram_size = c->sram_size;
	l->fw_version = FW_VERSION;
	l->raw_tx_ring = L_RAW_TX;
	l->raw_tx_len = L_RAW_ENTRIES;
	l->raw_rx_ring = L_RAW_RX;
	l->raw_rx_len = L_RAW_ENTRIES;
	l->raw_max_payload = NVM_PKT_MAX_PAYLOAD;
	l->wire_rx_ring = L_WIRE_RX;
	l->wire_rx_slots = L_WIRE_SLOTS;
	l->wire_rx_slot_size = L_WIRE_SLOT;
	l->staging = L_STAGING;
	l->staging_size = L_STAGING_SIZE;
	l->counters = L_COUNTERS;
	l->counters_len = FW_CNT_MAX;
	fw->layout_off = L_LAYOUT;
	memcpy(c->sram + L_LAYOUT, l, sizeof(*l));
	/* magic last: a host that sees it sees a complete layout */
	fw_sram_wr32(c, L_LAYOUT, NVM_LAYOUT_MAGIC);
	l->magic = NVM_LAYOUT_MAGIC;

	fw->desc_tx = L_DMA_DESCS;
	fw->desc_rx = L_DMA_DESCS + sizeof(struct lanai_dma_desc);
	fw->hdma_owner = FW_HDMA_NONE;
	fw->tx_state = FW_TX_IDLE;
	fw->tx_next = 0;
	fw->rx_state = FW_RX_IDLE;
	fw->rx_next = 0;
	fw->rx_slot = 0;
	for (i = 0; i < FW_CNT_MAX; i++)
		fw->counters[i] = 0;
	c->ops->isr_clear(c->opaque, LANAI_ISR_WAKE0 | LANAI_ISR_SEND |
			  LANAI_ISR_RECV | LANAI_ISR_BUFF);
	c->ops->recv_setup(c->opaque, L_WIRE_RX, L_WIRE_SLOTS, L_WIRE_SLOT);

	fw_set_state(fw, NVM_FW_READY);
	fw_post(fw, NVM_EV_FW_STATE, 0, NVM_FW_READY, FW_VERSION);
}

void fw_halt(struct fw *fw)
{
	if (fw->state == NVM_FW_HALTED)
		return;
	fw->hdma_owner = FW_HDMA_NONE;
	fw->tx_state = FW_TX_IDLE;
	fw->rx_state = FW_RX_IDLE;
	fw_set_state(fw, NVM_FW_HALTED);
}

static void fw_doorbells(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	uint32_t off, data;

	while (c->ops->doorbell_pop(c->opaque, &off, &data)) {
		fw_count(fw, FW_CNT_DOORBELLS);
		/* The raw rings are scanned on every pass, so the two raw
		 * doorbells need no action beyond waking us. */
		if (off / LANAI_DOORBELL_PAGE == 0 &&
		    (data == NVM_DB_RAW_TX || data == NVM_DB_RAW_RX))
			continue;
		fw_count(fw, FW_CNT_BAD_DOORBELLS);
		c->ops->trace(c->opaque, "bad_doorbell", off, data);
		fw_post(fw, NVM_EV_ERROR, (uint16_t)(off / LANAI_DOORBELL_PAGE),
			NVM_ERR_BAD_DOORBELL, (uint64_t)off << 32 | data);
	}
}

static void fw_publish_counters(struct fw *fw)
{
	memcpy(fw->chip->sram + fw->layout.counters, fw->counters,
	       sizeof(fw->counters));
}

void fw_run(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	uint32_t isr;
	bool progress;

	if (fw->state != NVM_FW_READY)
		return;

	isr = c->ops->isr_read(c->opaque);
	if (isr & LANAI_ISR_WAKE0) {
		uint32_t owner = fw->hdma_owner;

		c->ops->isr_clear(c->opaque, LANAI_ISR_WAKE0);
		fw->hdma_owner = FW_HDMA_NONE;
		fw_raw_hdma_done(fw, owner);
	}
	if (isr & LANAI_ISR_SEND) {
		c->ops->isr_clear(c->opaque, LANAI_ISR_SEND);
		fw_raw_send_done(fw);
	}
	if (isr & (LANAI_ISR_RECV | LANAI_ISR_BUFF))
		c->ops->isr_clear(c->opaque, LANAI_ISR_RECV | LANAI_ISR_BUFF);

	fw_doorbells(fw);
	do {
		progress = fw_raw_tx_step(fw);
		progress |= fw_raw_rx_step(fw);
	} while (progress);
	fw_publish_counters(fw);
}
