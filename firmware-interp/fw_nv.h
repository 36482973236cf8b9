/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * NetVM firmware state.  One struct fw_nv per NIC, inside struct fw.
 * docs/firmware.md describes the protocol these structures implement.
 */
#ifndef NETVM_FW_NV_H
#define NETVM_FW_NV_H

#include <stdbool.h>
#include <stdint.h>

#include "netvm/kop.h"		/* and netvm/netvm_fw.h */
#include "netvm/packet.h"
#include "fw_queue.h"		/* FW_HDMA_SLOTS */

struct fw;

#define FW_NV_EPS		NVM_EP_COUNT	/* endpoints (port 0 = kernel) */
#define FW_NV_NODES		NVM_NODES	/* node ids that take part in NetVM */
#define FW_NV_NO_ROUTE		0xff	/* route_len of a node the map lost */
#define FW_NV_WIN		NVM_WIN	/* sequence window per peer (= bounce credits) */
#define FW_NV_TXBUFS		128	/* retransmission buffers in SRAM */
#define FW_NV_TXBUF_SIZE	4352
#define FW_NV_PENDING		64	/* remote requests and owed responses */
/* Tx buffers one peer may hold (its operations' requests and read data,
 * its unacknowledged packets, our responses to it): a peer that stops
 * acknowledging or answering stalls only its own traffic while fewer
 * than FW_NV_TXBUFS / FW_NV_TX_PEER peers do so. */
#define FW_NV_TX_PEER		(FW_NV_TXBUFS / 4)
/* Of a peer's share, what our operations' requests may hold: the rest is
 * kept for our responses to its requests.  Without it, two nodes reading
 * from each other with a share's worth of reads each in flight held every
 * buffer for their own reads' data, neither could answer the other, and
 * both gave up (NVM_ST_UNREACHABLE) after the give-up time. */
#define FW_NV_TX_REQ_PEER	(FW_NV_TX_PEER - FW_NV_TX_PEER / 4)

/* In a FW_JOB_NV_DELIVER job's argument: it serves pending entry
 * (arg & 0xffff), an incoming write, not one of our own reads. */
#define FW_NV_JOB_PEND		0x80000000u

/* Owners of a tx buffer: it is free when none is left. */
#define FW_TB_OP		0x1	/* an operation still needs it */
#define FW_TB_WIRE		0x2	/* queued or unacknowledged on the wire */
#define FW_NV_ACKBUF		128	/* bytes of SRAM per peer for ACK frames */
#define FW_NV_SCRATCH		64	/* bytes of SRAM per host-write job */
#define FW_NV_WAITQ		FW_NV_TXBUFS	/* packets waiting for a credit */
#define FW_NV_HWQ		512	/* small host writes waiting for the engine */
#define FW_NV_HW_MAX		32	/* bytes in one small host write */

/* A NOTIFY event raised once a host write has landed (irq_ep = ep + 1). */
struct fw_nv_hw_irq {
	uint32_t irq_ep;	/* 0: none */
	uint32_t notify;
	uint32_t src;		/* src_node << 16 | src_port */
	uint32_t arm;		/* the arm byte that decides, once landed */
};

struct fw_nv_hostwrite {
	uint64_t addr;
	uint32_t len;
	uint8_t data[FW_NV_HW_MAX];
	struct fw_nv_hw_irq irq;
};

/* Retransmission: one tick of IT0, the ticks before a resend (doubling up
 * to the cap), and the ticks without progress before giving up. */
#define FW_NV_TICK_NS		2000000ull	/* 2 ms */
#define FW_NV_RTO_TICKS		8	/* 16 ms: TCG guests under load are slow */
#define FW_NV_RTO_MAX_TICKS	64
#define FW_NV_GIVEUP_TICKS	FW_NV_MS_TICKS(NVM_GIVEUP_MS_DEFAULT)
#define FW_NV_GIVEUP_MIN_TICKS	FW_NV_MS_TICKS(NVM_GIVEUP_MS_MIN)
#define FW_NV_GIVEUP_MAX_TICKS	FW_NV_MS_TICKS(NVM_GIVEUP_MS_MAX)
#define FW_NV_MS_TICKS(ms)	((uint32_t)((ms) * 1000000ull / FW_NV_TICK_NS))
#define FW_NV_PEND_PEER		(FW_NV_PENDING / 4)	/* entries one peer may hold */
#define FW_NV_ACK_DELAY_NS	200000ull	/* 200 us: delayed ACK (IT1) */
#define FW_NV_ACK_EVERY		(FW_NV_WIN / 4)	/* entries: an ACK at once */

/* The state of one in-flight command (source side); names and
 * transitions in fw_state.c. */
enum fw_op_state {
	FW_OP_FREE,
	FW_OP_NEW,		/* taken from the queue, not started */
	FW_OP_MISS,		/* a local page is missing: waits for RESTART */
	FW_OP_FETCH,		/* host DMA: source fragments -> tx buffer */
	FW_OP_READY,		/* packet built: waits for a window credit */
	FW_OP_SENT,		/* on the wire: waits for the response */
	FW_OP_DELIVER,		/* read: response data in the tx buffer, to deliver */
	FW_OP_DELIVERING,	/* read: host DMA tx buffer -> local page */
	FW_OP_STATE_COUNT
};
extern const char *const fw_op_state_names[FW_OP_STATE_COUNT];

struct fw_nv_op {
	uint32_t state;		/* enum fw_op_state */
	uint32_t status;	/* enum nvm_status so far */
	uint32_t txbuf;		/* tx buffer index + 1, 0 = none */
	uint32_t age;		/* ticks in SENT: a peer that never answers */
	uint32_t locked[NVM_FRAG_MAX];	/* locked PPN + 1 per fragment */
	uint32_t resp_len;	/* read: bytes held in the tx buffer */
	uint32_t miss_va_lo, miss_va_hi;
	uint32_t stalled;	/* 1 while it waits for a tx buffer */
	struct nvm_cmd cmd;	/* a copy, validated when taken */
};

struct fw_nv_ep {
	uint32_t open;
	uint32_t flags;			/* NVM_EPF_* */
	uint64_t shadow, err_ring, reply, notf_ring;
	uint32_t notf_len, notf_prod;
	uint32_t err_prod;
	uint32_t produced;		/* producer count from the doorbell */
	uint32_t consumed;		/* commands taken */
	uint32_t done, errors;
	uint32_t shadow_done;		/* done at the last shadow write */
	uint32_t inflight;
	uint32_t fence;			/* 1: a FENCE waits for inflight == 0 */
	uint32_t missing;		/* 1: an op waits for RESTART: take no more */
	uint32_t credit_stalls;		/* ops that waited for a tx buffer or credit */
	struct fw_nv_op ops[NVM_CMDQ_LEN];
};

struct fw_nv_peer {
	uint32_t epoch;			/* the peer's boot epoch, 0 = not seen */
	/* sending */
	uint32_t next_seq;		/* next sequence number to use */
	uint32_t una;			/* oldest unacknowledged */
	uint32_t txbuf[FW_NV_WIN];	/* per seq % WIN: tx buffer + 1 */
	uint32_t idle_ticks;		/* ticks without ACK progress */
	uint32_t rto;			/* ticks before the next resend */
	uint32_t since_send;		/* ticks since the last (re)send */
	/* receiving */
	uint32_t lsn;			/* lowest sequence number not complete */
	uint64_t seen;			/* bit i: lsn + i arrived */
	uint64_t complete;		/* bit i: lsn + i delivered */
	uint32_t notf[FW_NV_WIN];	/* pending notification per entry */
	uint16_t notf_port[FW_NV_WIN];
	uint16_t notf_flags[FW_NV_WIN];	/* src_port << 8 | a write's flags */
	uint32_t acked;			/* lsn we last told the peer */
	uint32_t ack_due;		/* 1: an ACK should go out */
	uint32_t dead;			/* 1: gave up; new operations fail */
	/* packets built, waiting for a window credit (tx buffer indices) */
	uint32_t waitq[FW_NV_WAITQ];
	uint32_t wq_head, wq_count;
};

/*
 * Work owed to a peer: a remote read or atomic to serve, or a response to
 * send.  Requests are copied here so their wire slot is freed at once.
 */
enum fw_pend_state {
	FW_PEND_FREE,
	FW_PEND_NEW,		/* to start (or retry after a RESTART) */
	FW_PEND_MISS,		/* its page is missing: waits for RESTART */
	FW_PEND_BUSY,		/* host DMA in progress */
	FW_PEND_RESPOND,	/* only a response (status) is owed */
	FW_PEND_BOUNCED,	/* write data in the bounce buffer: waits for CREDIT */
	FW_PEND_STATE_COUNT
};
extern const char *const fw_pend_state_names[FW_PEND_STATE_COUNT];

struct fw_nv_pending {
	uint32_t state;			/* enum fw_pend_state */
	uint32_t src_node;
	uint32_t txbuf;			/* +1: the response being built */
	uint32_t ppn;			/* +1: the locked page */
	uint32_t status;		/* of the response */
	uint32_t r[3];			/* atomic results */
	uint64_t addr;			/* host address being served */
	struct nvm_net_hdr h;		/* the request, host byte order */
};

/* A window of host memory that peers' kernels may reach by physical
 * address (NVM_KOP_PHYS_WIN); len 0 = closed. */
struct fw_nv_phys_win {
	uint64_t base, len;
	uint64_t peers;			/* bit n: node n */
	uint32_t access;		/* NVM_PW_* */
	uint32_t reserved;
};

struct fw_nv {
	uint32_t configured;
	uint32_t epoch;
	uint32_t bounce_slots, max_nodes;
	uint64_t bounce_base;
	uint32_t txbuf_ref[FW_NV_TXBUFS];	/* FW_TB_* owners; 0 = free */
	uint32_t txbuf_len[FW_NV_TXBUFS];	/* payload after the net header */
	uint8_t txbuf_peer[FW_NV_TXBUFS];	/* node + 1 it is held for; 0: none */
	uint8_t route[FW_NV_NODES][NVM_ROUTE_MAX];	/* source routes */
	uint8_t route_len[FW_NV_NODES];	/* FW_NV_NO_ROUTE: none */
	uint32_t timer_armed, ack_timer_armed;
	/* when IT0 was last armed, and time past the last whole tick: a
	 * tick counts the time that passed, not one per timer callback */
	uint64_t tick_armed_ns;
	uint64_t tick_rem_ns;
	uint32_t giveup_ticks;			/* a peer silent this long is dead */
	uint32_t rr_ep;				/* round-robin over endpoints */
	struct fw_nv_ep ep[FW_NV_EPS];
	struct fw_nv_peer peer[FW_NV_NODES];
	struct fw_nv_pending pending[FW_NV_PENDING];
	/* small host writes, in order (shadow counters, error records,
	 * notification entries, atomic replies): never dropped */
	struct fw_nv_hostwrite hwq[FW_NV_HWQ];
	uint32_t hwq_head, hwq_count, hwq_lost;
	struct fw_nv_hw_irq hw_irq[FW_HDMA_SLOTS];	/* per running job */
	/* 1 while a remote atomic runs: one at a time keeps them atomic */
	uint32_t atomic_busy;
	struct fw_nv_phys_win phys_win[NVM_PHYS_WINS];
};

/* fw_state.c: every state change, checked and traced */
void fw_nv_op_set_state(struct fw *fw, struct fw_nv_op *op,
			enum fw_op_state to);
void fw_nv_pend_set_state(struct fw *fw, struct fw_nv_pending *pd,
			  enum fw_pend_state to);

/* fw_nv_ep.c: endpoints and command intake */
void fw_nv_boot(struct fw *fw);
void fw_nv_doorbell(struct fw *fw, uint32_t off, uint32_t data);
bool fw_nv_cmd_step(struct fw *fw);
void fw_nv_complete(struct fw *fw, uint32_t ep, uint32_t idx, uint32_t status);
void fw_nv_shadow(struct fw *fw, uint32_t ep);
struct fw_nv_op *fw_nv_op_by_req(struct fw *fw, uint32_t req, uint32_t *ep,
				 uint32_t *idx);
uint32_t fw_nv_req_id(uint32_t ep, uint32_t idx, uint32_t seq);
void fw_nv_fetched(struct fw *fw, uint32_t req, uint32_t status);
void fw_nv_delivered(struct fw *fw, uint32_t req, uint32_t status);

/* fw_nv_kernel.c: kernel control commands */
uint32_t fw_nv_kernel_cmd(struct fw *fw, const struct nvm_cmd *c);

/* fw_nv_pt.c: shadow page table */
int64_t fw_nv_pt_lock(struct fw *fw, uint32_t port, uint64_t va,
		      uint32_t hash);
void fw_nv_pt_unlock(struct fw *fw, uint32_t ppn, bool dirty);
bool fw_nv_pt_key_ok(struct fw *fw, uint32_t ppn, uint64_t key);
bool fw_nv_pt_read_only(struct fw *fw, uint32_t ppn);
uint32_t fw_nv_pt_hold(struct fw *fw, uint32_t port, uint32_t on);

/* fw_nv_tx.c: building and sending packets, the window */
void fw_nv_sent(struct fw *fw, uint32_t arg);
/* a buffer in no peer's share: U-Net's control frames and divert path */
uint32_t fw_nv_txbuf_alloc(struct fw *fw, uint32_t owners);
uint32_t fw_nv_txbuf_alloc_for(struct fw *fw, uint32_t owners, uint32_t node);
uint32_t fw_nv_txbuf_alloc_req(struct fw *fw, uint32_t node);
uint32_t fw_nv_txbuf_off(struct fw *fw, uint32_t tb);
uint8_t fw_nv_route_len(const struct fw *fw, uint32_t node);
struct nvm_net_hdr *fw_nv_txbuf_hdr(struct fw *fw, uint32_t tb);
void fw_nv_hdr_init(struct fw *fw, struct nvm_net_hdr *h, uint8_t op,
		    uint32_t src_port, uint32_t dst_port);
bool fw_nv_send_seq(struct fw *fw, uint32_t node, uint32_t tb,
		    uint32_t data_len);
void fw_nv_txbuf_put(struct fw *fw, uint32_t tb, uint32_t owner);
void fw_nv_fail_peer_ops(struct fw *fw, uint32_t node, uint32_t status);
void fw_nv_send_ack(struct fw *fw, uint32_t node);
void fw_nv_acked(struct fw *fw, uint32_t node, uint32_t ack);
void fw_nv_tick(struct fw *fw);
void fw_nv_arm_timer(struct fw *fw);
void fw_nv_ack_timer(struct fw *fw);
void fw_nv_peer_reset(struct fw *fw, uint32_t node, uint32_t epoch);
bool fw_nv_peer_dead(struct fw *fw, uint32_t node);
bool fw_nv_unreachable(struct fw *fw, uint32_t node);

/* fw_nv_pt.c: the windows peers may reach by physical address */
uint32_t fw_nv_phys_win_set(struct fw *fw, const struct nvm_k_phys_win *k);
bool fw_nv_phys_ok(struct fw *fw, uint32_t node, uint64_t addr, uint32_t len,
		   uint32_t access);

/* fw_nv_rx.c: incoming NetVM packets */
void fw_nv_hdr_swap(struct nvm_net_hdr *h);
enum fw_rx_verdict fw_nv_rx(struct fw *fw, uint32_t data, uint32_t len,
			    uint32_t src);
void fw_nv_entry_complete(struct fw *fw, uint32_t node, uint32_t seq);
int fw_nv_pend_alloc(struct fw *fw);
bool fw_nv_req_port_ok(struct fw *fw, const struct nvm_net_hdr *h);
uint32_t fw_nv_req_page_check(const struct nvm_net_hdr *h, uint32_t len);
int64_t fw_nv_req_target(struct fw *fw, uint32_t src,
			 const struct nvm_net_hdr *h, uint32_t len,
			 uint32_t access, uint32_t *ppn, uint32_t *status);

/* fw_nv_serve.c: the pending table served, NetVM's job completions */
bool fw_nv_pend_step(struct fw *fw);
void fw_nv_job_done(struct fw *fw, uint32_t kind, uint32_t arg,
		    uint32_t status);
void fw_nv_retry_pending(struct fw *fw, uint32_t port, uint64_t page);
bool fw_nv_bounce_done(struct fw *fw, uint32_t node, uint32_t seq,
		       uint32_t status);

/* fw_nv_host.c: small writes to host memory */
bool fw_nv_host_write(struct fw *fw, uint64_t addr, const void *data,
		      uint32_t len);
bool fw_nv_host_write_irq(struct fw *fw, uint64_t addr, const void *data,
			  uint32_t len, const struct fw_nv_hw_irq *irq);
void fw_nv_host_write_done(struct fw *fw, uint32_t arg);
bool fw_nv_host_write_pump(struct fw *fw);
void fw_nv_notf_queue(struct fw *fw, uint32_t port, uint16_t kind,
		      uint32_t notify, uint32_t src_node, uint32_t src_port,
		      uint16_t info, uint32_t flags);
void fw_nv_notify_deliver(struct fw *fw, uint32_t port, uint32_t notify,
			  uint32_t src_node, uint32_t src_port,
			  uint32_t flags);

/* fw_nv_atomic.c */
void fw_nv_atomic_apply(uint32_t op, uint32_t *w, const uint32_t *arg,
			uint32_t *r);
uint32_t fw_nv_atomic_words(uint32_t op);

#endif
