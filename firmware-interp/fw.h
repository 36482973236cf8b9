/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netvm firmware: public entry points for the chip that hosts it.
 *
 * Two programs share the chip's engines through fw_queue.c:
 *  - raw frames (fw_raw.c): link bring-up and tests, host -> SRAM -> wire
 *    -> SRAM -> host through all three DMA engines;
 *  - NetVM (fw_nv_*.c): endpoints, command queues, remote write, read and
 *    atomics, notifications, the shadow page table, the bounce buffer, and
 *    reliable delivery over per-node sequence windows.
 *
 * All state lives in struct fw as fixed-width integers and arrays (no
 * pointers but the chip binding), so the device saves and restores it as
 * one block, next to SRAM.
 */
#ifndef NETVM_FW_H
#define NETVM_FW_H

#include <stddef.h>

#include "fw_chip.h"
#include "fw_program.h"
#include "fw_trace.h"
#include "fw_queue.h"
#include "fw_nv.h"
#include "fw_tripwire.h"
#include "fw_unet.h"
#include "fw_eth.h"
#include "netvm/fw_counters.h"

#define FW_VERSION		0x00020200u	/* 2.2: raw frames, NetVM, tripwires, U-Net, DSM */

/* Firmware counters, published in SRAM at layout.counters. */
enum fw_counter {
#define FW_CNT_ENUM(e, n) FW_CNT_##e,
	NVM_FW_COUNTERS(FW_CNT_ENUM)
#undef FW_CNT_ENUM
	FW_CNT_MAX
};
extern const char *const fw_counter_names[FW_CNT_MAX];

/* Explicit state enums; their names and transitions are in fw_state.c. */
enum fw_tx_state {
	FW_TX_IDLE,		/* waiting for an owned tx descriptor */
	FW_TX_FETCH,		/* host DMA: payload host -> staging */
	FW_TX_SEND,		/* send-wire DMA: staging -> link */
	FW_TX_STATE_COUNT
};

extern const char *const fw_tx_state_names[FW_TX_STATE_COUNT];

/* fw_state.c: every state change, checked and traced */
void fw_set_fw_state(struct fw *fw, enum nvm_fw_state to);
void fw_raw_set_tx_state(struct fw *fw, enum fw_tx_state to);

struct fw {
	struct fw_chip *chip;		/* not saved: rebound on load */
	/* everything below is saved as one block (see FW_SAVED_OFFSET) */
	uint32_t state;			/* enum nvm_fw_state */
	uint32_t layout_off;
	struct nvm_sram_layout layout;	/* the host-visible copy is in SRAM */
	struct fw_queues q;
	/* receive path */
	uint32_t rx_slot;		/* next wire slot */
	uint32_t rx_held;		/* 1 while a job reads the current slot */
	/* raw program */
	uint32_t tx_state, tx_idx, tx_next, tx_frame_len;
	uint32_t rx_next, rx_idx, rx_len, rx_src;
	uint32_t counters[FW_CNT_MAX];
	/* NetVM program */
	struct fw_nv nv;
	/* tripwires on NetVM accesses */
	struct fw_tw tw;
	/* U-Net program */
	struct fw_unet unet;
	/* Ethernet frames (fw_eth.c) */
	struct fw_eth eth;
	/* test hook NVM_KOP_LOCK_HOLD (fw_nv_pt.c), last so that it moves
	 * nothing: armed for endpoint hold_port - 1, holding page
	 * hold_ppn - 1; 0 = not */
	uint32_t hold_port, hold_ppn;
};
#define FW_SAVED_OFFSET		offsetof(struct fw, state)
#define FW_SAVED_SIZE		(sizeof(struct fw) - FW_SAVED_OFFSET)

void fw_init(struct fw *fw, struct fw_chip *chip);
void fw_boot(struct fw *fw);	/* CPUC.RUN 0 -> 1 */
void fw_halt(struct fw *fw);	/* CPUC.RUN 1 -> 0 or chip reset */
void fw_run(struct fw *fw);	/* something happened: make progress */

/* fw_rx.c: the receive dispatcher */
bool fw_rx_step(struct fw *fw);
void fw_rx_release(struct fw *fw);
uint32_t fw_rx_slot_off(struct fw *fw);

/* fw_services.c: what every program uses */
void fw_post(struct fw *fw, uint8_t type, uint16_t ep, uint32_t data,
	     uint64_t arg);
void fw_count(struct fw *fw, enum fw_counter c);
void fw_count_n(struct fw *fw, enum fw_counter c, uint32_t n);
void fw_publish_counters(struct fw *fw);

/* fw_sram_map.c: the SRAM areas */
void fw_sram_map_boot(struct fw *fw);
uint32_t fw_scratch_off(struct fw *fw, int slot);
uint32_t fw_ackbuf_off(struct fw *fw, uint32_t node);

/* fw_crc32.c: the chip's CRC-32 unit (IEEE 802.3 polynomial) */
uint32_t fw_crc32(uint32_t crc, const uint8_t *buf, uint32_t len);

/* big-endian helpers for the wire */
static inline uint16_t fw_be16(uint16_t v)
{
	return __builtin_bswap16(v);
}

static inline uint32_t fw_be32(uint32_t v)
{
	return __builtin_bswap32(v);
}

static inline uint64_t fw_be64(uint64_t v)
{
	return __builtin_bswap64(v);
}

#endif /* NETVM_FW_H */
