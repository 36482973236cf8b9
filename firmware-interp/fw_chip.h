/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The firmware's view of the LANai chip.
 *
 * The firmware (this directory) is a C state machine that runs inside the
 * QEMU device model and, unchanged, inside host unit tests against a
 * simulated chip.  It sees the chip only through this interface: SRAM as
 * plain memory, three DMA engines it starts and whose completion it learns
 * from ISR bits, the doorbell FIFO, the host event queue, a clock and a
 * timer.  Nothing here depends on QEMU.
 *
 * Execution model: the chip calls fw_run() whenever something the firmware
 * may care about happened (doorbell, engine done, packet arrived, timer,
 * CPUC written).  fw_run() does all the work it can without waiting and
 * returns; it never blocks and never calls back into itself.
 */
#ifndef NETVM_FW_CHIP_H
#define NETVM_FW_CHIP_H

#include <stdbool.h>
#include <stdint.h>

#include "netvm/lanai_event.h"
#include "netvm/lanai_regs.h"
#include "netvm/lanai_sram.h"

/*
 * Receive-wire slot header, at the start of each slot of the ring the
 * firmware hands to the receive engine.  The engine fills EMPTY slots in
 * ring order and marks them FULL; the firmware marks them EMPTY again.
 */
struct fw_rx_slot {
	uint32_t state;		/* FW_RX_SLOT_* */
	uint32_t len;		/* frame bytes after the header, CRC stripped */
};

#define FW_RX_SLOT_EMPTY	0
#define FW_RX_SLOT_FULL		1
/* taken out of order (a control frame behind a waiting one); the firmware
 * empties it when the ring's head reaches it */
#define FW_RX_SLOT_TAKEN	2

struct fw_chip_ops {
	/* Host DMA engine: run the descriptor chain starting at SRAM offset
	 * desc.  When the chain ends (TERMINAL, or an error) the engine sets
	 * ISR.WAKE0.  Each descriptor's status field tells its outcome. */
	void (*host_dma_start)(void *chip, uint32_t desc);

	/* Send-wire engine: put SRAM [off, off + len) on the link as one
	 * frame, appending the CRC-32.  Sets ISR.SEND when the link took it. */
	void (*send_start)(void *chip, uint32_t off, uint32_t len);

	/* Receive-wire engine: use slots of slot_size bytes at ring; (re)starts
	 * from slot 0.  Sets ISR.RECV when it fills a slot. */
	void (*recv_setup)(void *chip, uint32_t ring, uint32_t slots,
			   uint32_t slot_size);
	/* A slot went back to EMPTY: the engine may accept frames again. */
	void (*recv_kick)(void *chip);

	/* Pop one doorbell write; false when the FIFO is empty. */
	bool (*doorbell_pop)(void *chip, uint32_t *offset, uint32_t *data);

	/* Queue an event for the host (sets its ISR cause bit, may interrupt). */
	void (*event_post)(void *chip, const struct nvm_event *ev);

	/* ISR: read, and clear firmware-owned bits (WAKE0, SEND, RECV, ...). */
	uint32_t (*isr_read)(void *chip);
	void (*isr_clear)(void *chip, uint32_t bits);

	/* Publish firmware state, version and the layout offset (registers). */
	void (*set_state)(void *chip, enum nvm_fw_state state,
			  uint32_t fw_version, uint32_t layout_off);

	/* Interval timer which (0..2): set ISR.TIME<which> after delay_ns of
	 * virtual time; 0 cancels.  The LANai's IT0/IT1/IT2. */
	void (*timer_arm)(void *chip, unsigned int which, uint64_t delay_ns);

	/* The virtual time in ns that timer_arm counts in (it stops while
	 * the VM is stopped and is carried across save/restore). */
	uint64_t (*now_ns)(void *chip);

	/* Link state (NVM_LINK_*). */
	uint32_t (*link_state)(void *chip);

	/* A firmware trace point (fw_trace_events.h): event @id (enum
	 * fw_trace_id) with its fields in order, each as an integer (a
	 * string field as its address).  The device makes it the typed
	 * trace event; may be a no-op. */
	void (*trace)(void *chip, unsigned int id, uint64_t a, uint64_t b,
		      uint64_t c);
};

struct fw_chip {
	uint8_t *sram;
	uint32_t sram_size;
	uint16_t node_id;
	const struct fw_chip_ops *ops;
	void *opaque;		/* passed back as the chip argument */
};

/* SRAM access helpers: little-endian, bounds-checked by the caller. */
static inline uint32_t fw_sram_rd32(const struct fw_chip *c, uint32_t off)
{
	const uint8_t *p = c->sram + off;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline void fw_sram_wr32(struct fw_chip *c, uint32_t off, uint32_t v)
{
	uint8_t *p = c->sram + off;

	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static inline bool fw_sram_range_ok(const struct fw_chip *c, uint32_t off,
				    uint32_t len)
{
	return off <= c->sram_size && len <= c->sram_size - off;
}

#endif /* NETVM_FW_CHIP_H */
