/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A simulated LANai chip for firmware unit tests: SRAM, a flat "host
 * memory", the three DMA engines (completing when the test steps the
 * simulation, never inside the firmware's call), a doorbell FIFO, an event
 * log, and a wire to a peer chip with back-pressure.  It implements the
 * same struct fw_chip_ops as the QEMU device.
 */
#ifndef NETVM_SIM_CHIP_H
#define NETVM_SIM_CHIP_H

#include <stdbool.h>
#include <stdint.h>

#include "fw.h"
#include "netvm/packet.h"

#define SIM_HOST_BASE	0x100000ull	/* host "physical" addresses start here */
#define SIM_HOST_SIZE	(16u << 20)
#define SIM_EVENTS_MAX	4096
#define SIM_WIRE_MAX	64		/* frames in flight on one wire */

struct sim_frame {
	uint32_t len;
	uint8_t data[NVM_FRAME_MAX + NVM_PKT_CRC_LEN];
};

/* Told of every host DMA before it happens (the simulated host's grant
 * check, sim_host.c): @to_host is true for a write into host memory. */
typedef void (*sim_dma_fn)(void *ctx, uint64_t addr, uint32_t len,
			   bool to_host);

struct sim_chip {
	struct fw_chip chip;
	struct fw fw;
	uint8_t *host;			/* SIM_HOST_SIZE bytes */
	uint32_t isr;
	uint32_t link;
	/* each timer of this chip fires this late (a loaded host) */
	uint64_t timer_late_ns;
	/* engines */
	bool hdma_pending;
	uint32_t hdma_desc;
	bool send_pending;
	uint32_t send_off, send_len;
	uint32_t rx_ring, rx_slots, rx_slot_size, rx_next;
	bool rx_enabled;
	/* doorbells */
	uint32_t db_off[256], db_data[256], db_head, db_count;
	/* events seen by the "host" */
	struct nvm_event events[SIM_EVENTS_MAX];
	uint32_t nevents;
	/* outgoing wire: frames the peer has not taken yet */
	struct sim_frame *wire[SIM_WIRE_MAX];
	uint32_t wire_head, wire_count;
	struct sim_chip *peer;
	/* frames put on our receive side by a test (sim_inject): any
	 * bytes, as if a hostile node had sent them */
	struct sim_frame *inq[SIM_WIRE_MAX];
	uint32_t inq_head, inq_count;
	sim_dma_fn dma_hook;
	void *dma_ctx;
	/* fault injection on frames this chip sends */
	int corrupt_next;		/* flip a byte of the next frame (after CRC) */
	unsigned drop_pct, dup_pct, reorder_pct;	/* per frame, seeded */
	uint64_t rng;
	uint64_t now_ns;		/* simulated time */
	uint64_t timer_at[3];		/* absolute deadlines, 0 = off */
	uint32_t frames_sent, frames_dropped, frames_duped, frames_reordered;
	uint32_t frames_misaddressed;	/* NetVM frames for another node */
	uint32_t state;
	uint32_t traces[FW_TR_COUNT];	/* firmware trace points hit, per event */
};

void sim_init(struct sim_chip *s, uint16_t node, uint32_t sram_size);
void sim_free(struct sim_chip *s);
void sim_connect(struct sim_chip *a, struct sim_chip *b);
void sim_boot(struct sim_chip *s);
void sim_doorbell(struct sim_chip *s, uint32_t off, uint32_t data);
/* Run engines, wire and firmware until nothing moves; returns steps. */
int sim_settle(struct sim_chip *a, struct sim_chip *b);
/* sim_settle, but no timer due more than @ns of simulated time from now
 * fires (a peer that keeps retransmitting never settles). */
int sim_settle_for(struct sim_chip *a, struct sim_chip *b, uint64_t ns);
/* Run n passes: engines, wire, firmware; no OS hook, no time passing. */
void sim_run(struct sim_chip *a, struct sim_chip *b, int n);
uint8_t *sim_host(struct sim_chip *s, uint64_t addr);
/* A hostile peer: @len bytes (packet header onwards, any contents) arrive
 * at @to with a good CRC, after what the wire already holds for it. */
void sim_inject(struct sim_chip *to, const void *frame, uint32_t len);
const struct nvm_sram_layout *sim_layout(struct sim_chip *s);
/* Count events of a type (and, if idx >= 0, with that data field). */
int sim_count_events(struct sim_chip *s, uint8_t type, int64_t data);
/* Hook run when a pass makes no progress (the simulated OS); true if it
 * did something. */
typedef bool (*sim_idle_fn)(void *ctx);
void sim_set_idle(sim_idle_fn fn, void *ctx);
uint32_t sim_rand(struct sim_chip *s, uint32_t n);
const struct nvm_event *sim_last_event(struct sim_chip *s, uint8_t type);
/* Tx buffers @s holds for traffic with @node (fw_nv_txbuf_alloc_for). */
uint32_t sim_tx_held(struct sim_chip *s, uint32_t node);

#endif
