/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netvm firmware: public entry points for the chip that hosts it.
 *
 * Version 1 is the raw-frame program: it brings the chip up, publishes the
 * SRAM layout, and moves raw frames host -> SRAM -> wire -> SRAM -> host
 * through all three DMA engines.  NetVM's protocol builds on it.
 *
 * All state lives in struct fw as fixed-width integers so the device can
 * save and restore it (VMState) along with SRAM.
 */
#ifndef NETVM_FW_H
#define NETVM_FW_H

#include "fw_chip.h"

#define FW_VERSION		0x00010000u	/* raw-frame program 1.0 */

/* Firmware counters, published in SRAM at layout.counters. */
enum fw_counter {
	FW_CNT_DOORBELLS,
	FW_CNT_BAD_DOORBELLS,
	FW_CNT_RAW_TX,
	FW_CNT_RAW_TX_ERR,
	FW_CNT_RAW_RX,
	FW_CNT_RAW_RX_ERR,
	FW_CNT_RX_BAD_FRAME,
	FW_CNT_RX_MISROUTED,
	FW_CNT_HOST_DMA_ERR,
	FW_CNT_MAX
};
extern const char *const fw_counter_names[FW_CNT_MAX];

/* Explicit state enums; names for tracing are in fw_state_names.c. */
enum fw_tx_state {
	FW_TX_IDLE,		/* waiting for an owned tx descriptor */
	FW_TX_FETCH,		/* host DMA: payload host -> staging */
	FW_TX_SEND,		/* send-wire DMA: staging -> link */
	FW_TX_STATE_COUNT
};

enum fw_rx_state {
	FW_RX_IDLE,		/* waiting for a full wire slot */
	FW_RX_DELIVER,		/* host DMA: slot payload -> host buffer */
	FW_RX_STATE_COUNT
};

enum fw_hdma_owner {
	FW_HDMA_NONE,
	FW_HDMA_TX,
	FW_HDMA_RX,
	FW_HDMA_OWNER_COUNT
};

extern const char *const fw_tx_state_names[FW_TX_STATE_COUNT];
extern const char *const fw_rx_state_names[FW_RX_STATE_COUNT];

struct fw {
	struct fw_chip *chip;		/* not saved: rebound on load */
	uint32_t state;			/* enum nvm_fw_state */
	uint32_t layout_off;
	struct nvm_sram_layout layout;	/* host-visible copy lives in SRAM */
	uint32_t hdma_owner;		/* enum fw_hdma_owner */
	uint32_t desc_tx, desc_rx;	/* SRAM offsets of our DMA descriptors */
	uint32_t tx_state, tx_idx, tx_next, tx_frame_len;
	uint32_t rx_state, rx_idx, rx_next, rx_slot, rx_len, rx_src;
	uint32_t counters[FW_CNT_MAX];
};

void fw_init(struct fw *fw, struct fw_chip *chip);
void fw_boot(struct fw *fw);	/* CPUC.RUN 0 -> 1 */
void fw_halt(struct fw *fw);	/* CPUC.RUN 1 -> 0 or chip reset */
void fw_run(struct fw *fw);	/* something happened: make progress */

/* fw_raw.c */
bool fw_raw_tx_step(struct fw *fw);
bool fw_raw_rx_step(struct fw *fw);
void fw_raw_hdma_done(struct fw *fw, uint32_t owner);
void fw_raw_send_done(struct fw *fw);

/* fw_core.c helpers shared by programs */
void fw_post(struct fw *fw, uint8_t type, uint16_t ep, uint32_t data,
	     uint64_t arg);
void fw_count(struct fw *fw, enum fw_counter c);
void fw_hdma(struct fw *fw, uint32_t owner, uint32_t desc, uint32_t flags,
	     uint32_t len, uint32_t sram, uint64_t host);
uint32_t fw_hdma_status(struct fw *fw, uint32_t desc);

/* fw_crc32.c: the chip's CRC-32 unit (IEEE 802.3 polynomial) */
uint32_t fw_crc32(uint32_t crc, const uint8_t *buf, uint32_t len);

#endif /* NETVM_FW_H */
