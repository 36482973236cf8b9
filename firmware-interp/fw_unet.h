/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * U-Net message endpoints (fw_unet*.c): state inside struct fw.
 * docs/unet.md describes the protocol; include/netvm/unet_abi.h the layout.
 */
#ifndef NETVM_FW_UNET_H
#define NETVM_FW_UNET_H

#include <stdbool.h>
#include <stdint.h>

#include "netvm/netvm_fw.h"	/* NVM_EP_COUNT */
#include "netvm/unet_abi.h"

struct fw;
struct nvm_cmd;

#define FW_UNET_EPS		NVM_EP_COUNT	/* one port table for both */

/* Pages one message can touch in a segment: 4 pieces, each over 2 pages. */
#define FW_UNET_LOCKS		8

/* Shadow-page-table pages a DMA chain holds (pageable segments). */
struct fw_unet_lk {
	uint32_t n;
	uint32_t ppn[FW_UNET_LOCKS];
};

/*
 * Overflow control's clock: IT2 ticks while a hold is asserted or held.
 * A receiver refreshes its hold every REFRESH ticks; a sender drops a
 * hold not refreshed for HOLD ticks, so a lost RELEASE (or a receiver
 * that died) holds a channel for at most that long.
 */
#define FW_UNET_TICK_NS		5000000ull	/* 5 ms */
#define FW_UNET_REFRESH_TICKS	((uint32_t)(NVM_UNET_REFRESH_MS * 1000000ull / \
					    FW_UNET_TICK_NS))	/* 10 */
#define FW_UNET_HOLD_TICKS	((uint32_t)(NVM_UNET_HOLD_MS * 1000000ull / \
					    FW_UNET_TICK_NS))	/* 100 */

struct fw_unet_chan {
	uint32_t open;
	uint32_t node;
	uint32_t rport;
	uint32_t tag;
	uint32_t hold_left;	/* ticks until the receiver's hold runs out */
};

/*
 * An endpoint's life and its receive path, one machine (transitions in
 * fw_state.c, made by fw_unet_ep_set_state): open, it delivers straight
 * into the process's ring (DIRECT) until one message has to go to the
 * kernel's divert ring; from then on every message does, to keep them in
 * order (DIVERT), until the kernel has handed them all on and says
 * NVM_KOP_UNET_DIRECT.  While diverting, the kernel may also ask the
 * senders to hold (HELD, overflow control: fw_unet_flow.c); DIRECT or
 * closing releases them first.
 */
enum fw_unet_ep_state {
	FW_UNET_EP_CLOSED,
	FW_UNET_EP_DIRECT,
	FW_UNET_EP_DIVERT,
	FW_UNET_EP_HELD,
	FW_UNET_EP_STATE_COUNT
};
extern const char *const fw_unet_ep_state_names[FW_UNET_EP_STATE_COUNT];

/*
 * The send path's machine, orthogonal to the one above: a send from a
 * pageable segment that misses a page waits for the kernel's RESTART
 * (PAGE_WAIT), then tries once more (RETRY); a second miss fails it.
 * A send being fetched is marked by tx_tb, not by this state: its DMA
 * may outlive the endpoint.
 */
enum fw_unet_tx_state {
	FW_UNET_TX_READY,
	FW_UNET_TX_PAGE_WAIT,
	FW_UNET_TX_RETRY,
	FW_UNET_TX_STATE_COUNT
};
extern const char *const fw_unet_tx_state_names[FW_UNET_TX_STATE_COUNT];

struct fw_unet_ep {
	uint32_t state;			/* enum fw_unet_ep_state */
	uint32_t gen;			/* bumped at open: stale jobs are ignored */
	uint64_t seg, rxq;		/* bus addresses (pinned by the driver);
					 * pageable: seg is the user address */
	uint32_t pageable;		/* NVM_UNET_KO_PAGEABLE */
	uint32_t tx_state;		/* enum fw_unet_tx_state */
	uint64_t tx_miss;		/* PAGE_WAIT: the address it waits for */
	struct fw_unet_lk tx_lk;	/* pages the fetch holds */
	uint32_t rx_not_resident, rx_not_running, tx_misses;
	uint32_t seg_size, buf_size, rxq_len;
	uint32_t produced;		/* send count from the doorbell */
	uint32_t consumed;		/* send descriptors taken */
	uint32_t tx_tb;			/* tx buffer of the send being fetched */
	struct nvm_unet_send_desc tx_desc;	/* its descriptor, as checked */
	uint32_t send_errors;
	uint32_t free_cons;		/* free-queue entries popped */
	uint32_t rx_prod;		/* receive descriptors written */
	uint32_t rx_ring_full, rx_no_buf, div_order;	/* not direct, by cause */
	uint32_t armed_done;		/* the arm value last woken for */
	uint32_t msgs;			/* messages accepted: next msgno */
	uint32_t div_out;		/* its records not yet handed on */
	uint32_t diverted, dropped;
	/* DSM extensions (docs/dsm.md) */
	uint32_t quiet;			/* NOINTR messages delivered */
	uint32_t reply_hits, reply_misses;
	uint32_t events;		/* receive events raised */
	uint32_t edge_owed;		/* a NOINTR message took the non-empty
					 * edge: the next interrupting one raises it */
	/* overflow control, receiving side (the senders hold while HELD) */
	uint32_t hold_since;		/* ticks since the last refresh */
	uint32_t ctl_due;		/* channels owed a HOLD/RELEASE frame */
	uint32_t drop_due;		/* channels owed a DROPPED frame */
	uint16_t drop_owed[NVM_UNET_CHANNELS];	/* ... for how many */
	uint32_t hold_on, hold_off;
	/* ... sending side */
	uint32_t tx_held, tx_held_now, hold_expired, peer_dropped;
	struct fw_unet_chan ch[NVM_UNET_CHANNELS];
};

struct fw_unet {
	struct fw_unet_ep ep[FW_UNET_EPS];
	uint32_t rr;			/* round robin over senders */
	uint32_t tick_armed;		/* IT2 runs (overflow control) */
	struct fw_unet_lk rx_lk;	/* pages the delivery holds (one at a time) */
	/* the kernel's divert ring (FUGU's buffered path) */
	uint64_t div_base;
	uint32_t div_slots;		/* 0: none, messages are dropped */
	uint32_t div_prod, div_cons;	/* records written / handed on */
	uint32_t div_busy;		/* 1 while a record is being written */
	uint8_t div_port[NVM_UNET_DIV_SLOTS];	/* whose record; EPS = nobody's */
	/* kernel sends being fetched, per tx buffer: where to say done */
	uint64_t ks_done[128];
	uint32_t ks_cookie[128];
};

bool fw_unet_open_port(struct fw *fw, uint32_t port);
void fw_unet_ep_set_state(struct fw *fw, uint32_t port,
			  enum fw_unet_ep_state to);
void fw_unet_tx_set_state(struct fw *fw, uint32_t port,
			  enum fw_unet_tx_state to);
bool fw_unet_diverting(const struct fw_unet_ep *e);
void fw_unet_doorbell(struct fw *fw, uint32_t port, uint32_t off,
		      uint32_t data);
bool fw_unet_tx_step(struct fw *fw);
uint32_t fw_unet_kernel_cmd(struct fw *fw, const struct nvm_cmd *c);
void fw_unet_restart(struct fw *fw, uint32_t port, uint64_t page);
enum fw_rx_verdict fw_unet_rx(struct fw *fw, uint32_t data, uint32_t len,
			      uint32_t src);
void fw_unet_job_done(struct fw *fw, uint32_t kind, uint32_t arg,
		      uint32_t status);
void fw_unet_sent(struct fw *fw, uint32_t arg);

/* shared by the U-Net files (fw_unet*.c) */
uint32_t fw_unet_region(struct fw *fw, uint32_t port);
struct nvm_unet_ctl fw_unet_read_ctl(struct fw *fw, uint32_t port);
void fw_unet_seg_unlock(struct fw *fw, struct fw_unet_lk *lk, bool dirty);
bool fw_unet_seg_lock(struct fw *fw, uint32_t port, uint32_t off, uint32_t len,
		      struct fw_unet_lk *lk, uint64_t *miss);
void fw_unet_seg_dma(struct fw *fw, uint32_t port, int slot, uint32_t dir,
		     uint32_t len, uint32_t sram, uint32_t off,
		     const struct fw_unet_lk *lk, uint32_t *k);
void fw_unet_publish(struct fw *fw, uint32_t port);
uint32_t fw_unet_frame_build(struct fw *fw, uint32_t port, uint32_t tb,
			     const struct fw_unet_chan *ch, uint32_t len,
			     uint8_t hflags, uint16_t reply,
			     uint32_t *frame_off);
int fw_unet_find_channel(struct fw *fw, uint32_t src,
			 const struct nvm_unet_hdr *h, uint32_t *port);

/* fw_unet_tx.c: send */
void fw_unet_send_done(struct fw *fw, uint32_t port, uint32_t st);
uint32_t fw_unet_data_off(struct fw *fw, uint32_t tb);
void fw_unet_transmit(struct fw *fw, uint32_t port, uint32_t tb,
		      const struct nvm_unet_send_desc *d);
void fw_unet_fetched(struct fw *fw, uint32_t port, uint32_t gen, uint32_t tb,
		     uint32_t status);

/* fw_unet_rx.c: receive */
void fw_unet_delivered(struct fw *fw, uint32_t port, uint32_t gen,
		       bool quiet, uint32_t status);

/* fw_unet_divert.c: to the kernel's divert ring */
void fw_unet_count_cause(struct fw *fw, struct fw_unet_ep *e, uint32_t cause);
enum fw_rx_verdict fw_unet_divert(struct fw *fw, uint32_t port, int ch,
				  uint32_t data, uint32_t mlen, uint32_t cause,
				  uint32_t dsm, uint32_t from);
/* ^ from: the sender, node | port << 16 */
enum fw_rx_verdict fw_unet_to_kernel(struct fw *fw, uint32_t src,
				     const struct nvm_unet_hdr *h,
				     uint32_t data, uint32_t mlen);
void fw_unet_diverted(struct fw *fw, uint32_t arg, uint32_t status);

/* fw_unet_kernel.c: kernel commands */
void fw_unet_kfetched(struct fw *fw, uint32_t tb, uint32_t status);

/* fw_unet_flow.c: overflow control */
bool fw_unet_ctl_step(struct fw *fw, uint32_t port);
bool fw_unet_ctl_frame(struct fw *fw, uint32_t port,
		       const struct fw_unet_chan *ch, uint8_t flags, uint16_t n);
uint32_t fw_unet_kctl(struct fw *fw, const struct nvm_k_unet_kctl *k);
void fw_unet_hold(struct fw *fw, uint32_t port);
void fw_unet_release(struct fw *fw, uint32_t port, bool closing);
void fw_unet_note_drop(struct fw *fw, uint32_t port, uint32_t ch);
bool fw_unet_is_ctl(struct fw *fw, uint32_t data, uint32_t len);
enum fw_rx_verdict fw_unet_ctl_rx(struct fw *fw, uint32_t src,
				  const struct nvm_unet_hdr *h, uint32_t len);
bool fw_unet_tx_held(struct fw *fw, uint32_t port, uint32_t c);
void fw_unet_tick(struct fw *fw);
void fw_unet_arm_timer(struct fw *fw);

#endif
