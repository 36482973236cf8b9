/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * NetVM on the LANai: endpoints, command descriptors, the shadow page table
 * and PMAP, notifications, and the kernel's control commands.  Shared by
 * the firmware, the driver and the library.  docs/firmware.md explains the
 * protocol; this file is the layout.
 *
 * Little-endian throughout (see abi_types.h).
 */
#ifndef NETVM_NETVM_FW_H
#define NETVM_NETVM_FW_H

#include "abi_types.h"
#include "packet.h"		/* NVM_NODES */

#define NVM_PAGE_SIZE		4096u
#define NVM_PAGE_SHIFT		12

/* ---- endpoints ----------------------------------------------------------
 *
 * Endpoint (port) p owns an SRAM region at layout.ep_base + p * ep_stride
 * and doorbell page p.  Port 0 is the kernel's.  The driver maps a
 * process's own region and doorbell page, and nothing else.
 */
#define NVM_EP_KERNEL		0
#define NVM_EP_COUNT		16	/* endpoints (ports 0..15, 0 = the kernel's);
					 * the firmware publishes it as layout.ep_count */
#define NVM_NOTF_COUNTING	1024	/* 1..1023 count events; >= 1024 one-shot */
#define NVM_EP_STRIDE		0x8000u		/* 32 KiB per endpoint */
#define NVM_CMDQ_LEN		64		/* commands per queue */
#define NVM_CMD_SIZE		256		/* bytes per command */
#define NVM_SHADOW_EVERY	32		/* completions between shadow updates */

#define NVM_EP_CMDQ		0x0000u		/* struct nvm_cmd[NVM_CMDQ_LEN] */
#define NVM_EP_ACK		0x4000u		/* uint32_t ack[NVM_NOTF_COUNTING]: app writes */
#define NVM_EP_SIG		0x5000u		/* uint32_t sig[NVM_NOTF_COUNTING]: NI writes */
#define NVM_EP_ARM		0x6000u		/* uint8_t arm[NVM_NOTF_COUNTING]: app writes */
#define NVM_EP_STATUS		0x7000u		/* struct nvm_ep_status: NI writes */

/*
 * Doorbell: after writing commands, the process writes its producer count
 * (commands issued so far, free-running) to any offset of its doorbell page.
 */

/* ---- commands ----------------------------------------------------------- */

enum nvm_op {
	NVM_OP_NOP = 0,
	NVM_OP_WRITE = 1,	/* local src[] -> remote dst */
	NVM_OP_READ = 2,	/* remote dst -> local src[0] */
	NVM_OP_ATOMIC = 3,	/* on the remote word(s) at dst */
	NVM_OP_FENCE = 4,	/* later commands wait for all earlier ones */
	NVM_OP_COUNT
};

/* command flags */
#define NVM_CF_NOTIFY		0x01	/* N: signal notification `notify` at the receiver */
#define NVM_CF_SHADOW		0x02	/* write the shadow counters when this completes */
#define NVM_CF_INLINE		0x04	/* WRITE: payload is inline_data (len <= 96) */
#define NVM_CF_PHYS		0x08	/* addresses are physical (kernel endpoint only) */
#define NVM_CF_NOINTR		0x10	/* the receiver must not interrupt for this notification */
#define NVM_CF_ACK_NOW		0x20	/* WRITE: the receiver acknowledges it at once (the
					 * writer waits for it); else a later packet or the
					 * delayed ACK does, and completes it */

#define NVM_INLINE_MAX		96
#define NVM_FRAG_MAX		4	/* gather: source fragments per write */

struct nvm_frag {
	uint64_t va;		/* local virtual (or physical) address */
	uint64_t key;		/* protection key of the local page */
	uint32_t hash;		/* host-computed page-table row of the page */
	uint32_t len;		/* bytes; the fragment stays within one page */
};

struct nvm_cmd {
	uint8_t op;		/* enum nvm_op */
	uint8_t flags;		/* NVM_CF_* */
	uint16_t dst_node;
	uint16_t dst_port;
	uint16_t nfrag;		/* WRITE: src[] entries used (1..4); READ: 1 */
	uint32_t len;		/* total bytes, <= 4096, within one remote page */
	uint32_t notify;	/* notification number with NVM_CF_NOTIFY */
	uint64_t dst_va;	/* remote address (page offset included) */
	uint64_t dst_key;	/* protection key of the remote page */
	uint32_t dst_hash;	/* remote page-table row (computed by the library) */
	uint32_t atomic_op;	/* enum nvm_atomic_op */
	uint32_t arg[3];	/* atomic arguments */
	uint32_t tag;		/* caller's, returned in error records */
	struct nvm_frag src[NVM_FRAG_MAX];
	uint8_t inline_data[NVM_INLINE_MAX];
	uint32_t reserved;
	uint32_t seq;		/* written last: the command's number + 1 */
};
NVM_ABI_ASSERT(sizeof(struct nvm_cmd) == NVM_CMD_SIZE, "command size");

/* ---- atomics ------------------------------------------------------------
 * On 32-bit words.  The wait-queue block is 5 words: H, T, C, P, S
 * (head, tail, count, pending wakeups, semaphore count); it must not
 * cross a page.  Results land in the endpoint's reply buffer.
 */
enum nvm_atomic_op {
	NVM_AT_TAS = 1,		/* r0 = (old != 0); word = 1 */
	NVM_AT_INC = 2,		/* r0 = old; word = old + 1 */
	NVM_AT_DEC = 3,		/* r0 = old; word = old - 1 */
	NVM_AT_SWAP = 4,	/* r0 = old; word = arg0 */
	NVM_AT_CSWAP = 5,	/* r0 = old; if old == arg0: word = arg1 */
	NVM_AT_ENQUEUE = 6,	/* arg0 = id; r0 = old tail or EMPTY */
	NVM_AT_DEQUEUE = 7,	/* r0 = head, r1 = count (EMPTY, -1 if empty) */
	NVM_AT_NEWHEAD = 8,	/* arg0 = new head; r0 = pending?, r1 = count */
	NVM_AT_SEMP = 9,	/* arg0 = id; r0 = old tail, r1 = old S */
	NVM_AT_SEMV = 10,	/* r0 = head, r1 = count, r2 = S */
	NVM_AT_COUNT
};
#define NVM_WQ_EMPTY		0xffffffffu
#define NVM_WQ_WORDS		5

/* ---- host-side endpoint memory (pinned, set up by the kernel) ---------- */

/* Shadow counters, DMA'd every NVM_SHADOW_EVERY completions and on request. */
struct nvm_shadow {
	uint32_t consumed;	/* commands the NI has taken (slots reusable) */
	uint32_t done;		/* commands completed (successfully or not) */
	uint32_t errors;	/* commands completed with an error */
	uint32_t reserved;
};

/* Error record: one per failed command, in the endpoint's error ring. */
struct nvm_err_rec {
	uint32_t seq;		/* command number + 1 (as in nvm_cmd.seq) */
	uint32_t tag;
	uint8_t op;
	uint8_t status;		/* enum nvm_status */
	uint8_t phase;		/* 1 on the first pass round the ring, then flips */
	uint8_t reserved;
	uint32_t detail;
};
#define NVM_ERR_RING_LEN	64

/* Atomic reply: written when the reply arrives; seq last. */
struct nvm_atomic_reply {
	uint32_t r[3];
	uint32_t seq;		/* the command's seq */
};

/* Notification queue entry (host memory ring). */
struct nvm_notf_entry {
	uint32_t notify;	/* notification number */
	uint16_t src_node;
	uint16_t src_port;
	uint32_t phase;		/* 1 on the first pass, then flips */
	uint16_t kind;		/* NVM_NOTF_KIND_* (netvm/tripwire.h) */
	uint16_t info;		/* for a tripwire: the access */
};

/* NI-written status in the endpoint's SRAM region (NVM_EP_STATUS). */
struct nvm_ep_status {
	uint32_t consumed;
	uint32_t done;
	uint32_t errors;
	uint32_t notf_queued;	/* entries written to the notification queue */
	uint32_t credit_stalls;	/* commands that waited for a tx buffer or a
				 * sequence-window credit */
};

enum nvm_status {
	NVM_ST_OK = 0,
	NVM_ST_BAD_CMD = 1,	/* malformed command (op, lengths, fragments) */
	NVM_ST_BAD_KEY = 2,	/* a protection key did not match */
	NVM_ST_NO_PORT = 3,	/* no such endpoint at the destination */
	NVM_ST_READ_ONLY = 4,	/* write to a read-only page */
	NVM_ST_PEER_RESET = 5,	/* the peer restarted: operation abandoned */
	NVM_ST_UNREACHABLE = 6,	/* no route, or retransmissions exhausted */
	NVM_ST_BAD_ADDR = 7,	/* host DMA failed */
	NVM_ST_PERM = 8,	/* physical addressing from a user endpoint, or
				 * outside the receiver's registered windows */
	NVM_ST_ABORTED = 9,	/* endpoint closed with the command in flight */
	NVM_ST_COUNT,		/* statuses a peer may report are below this */
	/*
	 * Local only, never from a peer: a kernel command the NI has no room
	 * for now (U-Net's KSEND and KCTL: no transmit buffer or send-queue
	 * slot); the kernel tries again.  Unlike UNREACHABLE, which says the
	 * destination cannot be reached at all.
	 */
	NVM_ST_BUSY = 16,
};

/* ---- shadow page table and PMAP (SRAM; the host writes, NI reads) ------
 *
 * pt:    rows of NVM_PT_WAYS uint32_t PPNs; 0 ends a row.  Row = hash
 *        computed by the host (nvm_pt_hash).  PPN is written last.
 * pmap:  indexed by PPN: tag (port << 48 | VPN), key, and byte arrays:
 *        lock (NI), hdirty (host), ndirty (NI), flags (host: read-only).
 */
#define NVM_PT_WAYS		4
#define NVM_PMAP_RO		0x01	/* page exported read-only */

struct nvm_pmap_entry {
	uint64_t tag;		/* port << 48 | VPN; 0 = unmapped */
	uint64_t key;
};

static inline uint64_t nvm_pt_tag(uint32_t port, uint64_t vpn)
{
	return (uint64_t)port << 48 | (vpn & 0xffffffffffffull);
}

/* The hash both sides agree on: row of (port, VPN) in a table of rows. */
static inline uint32_t nvm_pt_hash(uint32_t port, uint64_t vpn, uint32_t rows)
{
	uint64_t x = nvm_pt_tag(port, vpn) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)((x >> 32) % rows);
}

/* ---- arguments of the kernel control commands (registry: netvm/kop.h) - */

/* NVM_KOP_ROUTE arg1: dst_node has no route at all (a mapper found it
 * gone): operations towards it fail at once with NVM_ST_UNREACHABLE
 * instead of being retransmitted until the peer is given up. */
#define NVM_ROUTE_F_NONE	NVM_BIT(0)


struct nvm_k_config {
	uint32_t max_ppn;	/* host pages: PMAP size */
	uint32_t pt_rows;	/* page-table rows */
	uint64_t bounce_base;	/* bounce buffer (pinned, contiguous) */
	uint32_t bounce_slots;	/* entries of NVM_BOUNCE_SLOT bytes, at least
				 * max_nodes * NVM_WIN */
	uint32_t max_nodes;	/* partitions of the bounce buffer (<= NVM_NODES) */
	uint32_t epoch;		/* boot epoch (random, non-zero) */
	uint32_t giveup_ms;	/* a peer that acknowledges nothing and answers
				 * nothing this long is dead: its operations fail
				 * (NVM_ST_UNREACHABLE); 0 = NVM_GIVEUP_MS_DEFAULT,
				 * else clamped to NVM_GIVEUP_MS_MIN .. _MAX */
	uint32_t reserved[8];
};

struct nvm_k_ep_open {
	uint64_t shadow;	/* struct nvm_shadow */
	uint64_t err_ring;	/* struct nvm_err_rec[NVM_ERR_RING_LEN] */
	uint64_t reply;		/* struct nvm_atomic_reply */
	uint64_t notf_ring;	/* struct nvm_notf_entry[notf_len] */
	uint32_t notf_len;	/* power of two */
	uint32_t port;
	uint32_t flags;		/* NVM_EPF_* */
	uint32_t reserved[3];
};
#define NVM_EPF_KERNEL		0x01	/* may use NVM_CF_PHYS */

/*
 * NVM_KOP_PHYS_WIN: the host memory that peers' kernels may reach by
 * physical address (NVM_CF_PHYS).  Nothing else is: a physical write,
 * read or atomic from a peer is served only when its whole range lies in
 * one window open to that peer with that access; any other is refused
 * with NVM_ST_PERM and counted (phys_refused).  len = 0 closes the slot.
 */
#define NVM_PHYS_WINS		8	/* slots */
#define NVM_PW_READ		NVM_BIT(0)	/* reads (and atomics, with WRITE) */
#define NVM_PW_WRITE		NVM_BIT(1)	/* writes (and atomics, with READ) */

struct nvm_k_phys_win {
	uint64_t base;		/* host (bus) address of the window */
	uint64_t len;		/* bytes; 0 closes the slot */
	uint64_t peers;		/* bit n: node n may reach it */
	uint32_t slot;		/* 0 .. NVM_PHYS_WINS - 1 */
	uint32_t access;	/* NVM_PW_* */
	uint32_t reserved[2];	/* 0 */
};

/* ---- limits both sides size their tables by ---------------------------- */

#define NVM_WIN			64	/* sequence window per peer: entries in flight,
					 * and the bounce slots a peer may fill */

/* NVM_KOP_CONFIG giveup_ms: 0 means the default; others are clamped. */
#define NVM_GIVEUP_MS_DEFAULT	6000
#define NVM_GIVEUP_MS_MIN	100
#define NVM_GIVEUP_MS_MAX	60000

/*
 * The bounce buffer (NVM_KOP_CONFIG bounce_base): max_nodes partitions of
 * NVM_WIN slots of NVM_BOUNCE_SLOT bytes.  A write from node n with
 * sequence number s whose page is not resident lands, header first, in
 * slot nvm_bounce_slot(n, s); the kernel copies it out and returns the
 * slot with NVM_KOP_CREDIT.
 */
#define NVM_BOUNCE_SLOT		4352	/* one packet: header + a page */

static inline uint64_t nvm_bounce_slot(uint32_t node, uint32_t seq)
{
	return (uint64_t)node * NVM_WIN + seq % NVM_WIN;
}

static inline uint64_t nvm_bounce_bytes(uint32_t max_nodes)
{
	return (uint64_t)max_nodes * NVM_WIN * NVM_BOUNCE_SLOT;
}

#endif /* NETVM_NETVM_FW_H */
