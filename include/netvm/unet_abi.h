/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note OR MIT) */
/*
 * U-Net message endpoints beside NetVM on the same NIC (docs/unet.md).
 * Shared by the firmware (fw_unet.c), the driver (netvm_unet.c) and the
 * library (libnetvm_unet.c).  Little-endian in SRAM and host memory,
 * big-endian on the wire (see abi_types.h, packet.h).
 *
 * A U-Net endpoint takes one port (1..ep_count-1) out of the same table as
 * NetVM endpoints and owns that port's 32 KiB SRAM region and doorbell
 * page, laid out as below instead of NetVM's.  Its host block (pinned,
 * contiguous, allocated by the driver and mapped into the process) holds
 * the receive queue followed by the communication segment.  Descriptors
 * carry offsets into the segment, never addresses; the firmware checks
 * every offset and length against the segment's size.
 *
 * A pageable endpoint (NETVM_UNET_PAGEABLE) keeps only the receive queue
 * in the host block: its segment is the process's own memory, unpinned,
 * reached through the shadow page table under the endpoint's port (as a
 * NetVM export).  A message whose buffer page has no translation is
 * diverted (FUGU: "pages not resident") and the kernel maps the page; a
 * send whose data page has none waits for the kernel (NVM_EV_PAGE_MISS,
 * NVM_KOP_RESTART), and fails with NVM_UNET_ST_FAULT if it misses again.
 */
#ifndef NETVM_UNET_ABI_H
#define NETVM_UNET_ABI_H

#include "abi_types.h"
#include "netvm_uapi.h"
#include "packet.h"		/* NVM_NODES */

#define NVM_UNET_MSG_MAX	4096	/* largest message, bytes */
#define NVM_UNET_INLINE_MAX	96	/* carried whole in the descriptor */
#define NVM_UNET_CHANNELS	16	/* channels per endpoint */
#define NVM_UNET_SENDQ_LEN	64	/* send descriptors (SRAM) */
#define NVM_UNET_FREEQ_LEN	512	/* free buffer offsets (SRAM) */
#define NVM_UNET_RXQ_MIN	16	/* receive descriptors (host), power of two */
#define NVM_UNET_RXQ_MAX	1024
#define NVM_UNET_BUF_MIN	1024	/* receive buffer size: power of two, */
#define NVM_UNET_BUF_MAX	4096	/*  so a message needs at most 4 */
#define NVM_UNET_RX_BUFS	(NVM_UNET_MSG_MAX / NVM_UNET_BUF_MIN)
#define NVM_UNET_SEG_MAX	(1u << 20)	/* segment: pages, up to 1 MiB */
#define NVM_UNET_NODES		NVM_NODES	/* node ids, as NetVM */

/* ---- the endpoint's SRAM region -------------------------------------- */
#define NVM_UNET_SENDQ		0x0000u	/* struct nvm_unet_send_desc[64]: process */
#define NVM_UNET_FREEQ		0x2000u	/* uint32_t offset[512]: process */
#define NVM_UNET_CTL		0x3000u	/* struct nvm_unet_ctl: process */
#define NVM_UNET_REPLYTAB	0x4000u	/* struct nvm_unet_reply_ent[256]: process arms, NI disarms */
#define NVM_UNET_STATUS		0x7000u	/* struct nvm_unet_status: NI */

/*
 * Send descriptor.  The process fills slot (count % 64), sets status to
 * NVM_UNET_ST_PENDING, writes seq = count + 1 last (after a write barrier)
 * and then the new count (free-running) to its doorbell page.  The NI
 * takes descriptors in order, checks them, sends the message and writes
 * status: SENT (the segment bytes may be reused) or an error.
 */
struct nvm_unet_send_desc {
	uint16_t channel;	/* channel id from NETVM_IOC_UNET_CHANNEL */
	uint8_t flags;		/* NVM_UNET_F_* */
	uint8_t status;		/* enum nvm_unet_st: NI writes */
	uint32_t len;		/* 1 .. NVM_UNET_MSG_MAX (GATHER: the sum) */
	uint32_t offset;	/* segment offset of the data (not INLINE/GATHER) */
	uint16_t reply;		/* F_REPLY: the requester's reply number */
	uint16_t reserved;
	uint8_t data[NVM_UNET_INLINE_MAX];	/* INLINE: the message;
						 * GATHER: struct nvm_unet_gather */
	uint32_t reserved2[3];
	uint32_t seq;		/* written last: the descriptor's number + 1 */
};
NVM_ABI_ASSERT(sizeof(struct nvm_unet_send_desc) == 128, "unet send desc");

#define NVM_UNET_F_INLINE	0x01	/* send: data[] holds it; receive: same */
/*
 * DSM extensions (docs/dsm.md).  Send and receive descriptors:
 * NOINTR: the message raises no wakeup and no upcall at the receiver (a
 * barrier arrival); it is only queued.  REPLY: the message answers the
 * request that named reply number `reply`; the receiving NI looks the
 * number up in the endpoint's reply table.  Send only: GATHER, the bytes
 * are the pieces listed in data[].  Receive only: HIT, the reply landed in
 * the buffer the table named (buf[0] is its offset; no free buffer used).
 */
#define NVM_UNET_F_NOINTR	0x02
#define NVM_UNET_F_GATHER	0x04
#define NVM_UNET_F_REPLY	0x08
#define NVM_UNET_F_HIT		0x10	/* receive descriptors only */
#define NVM_UNET_F_SEND_ALL	(NVM_UNET_F_INLINE | NVM_UNET_F_NOINTR | \
				 NVM_UNET_F_GATHER | NVM_UNET_F_REPLY)

/* Gather: up to 4 (offset, len) pieces of the segment, sent as one. */
#define NVM_UNET_GATHER_MAX	4
struct nvm_unet_piece {
	uint32_t offset;
	uint32_t len;
};
struct nvm_unet_gather {
	uint32_t count;		/* 1 .. NVM_UNET_GATHER_MAX */
	uint32_t reserved;
	struct nvm_unet_piece piece[NVM_UNET_GATHER_MAX];
};
NVM_ABI_ASSERT(sizeof(struct nvm_unet_gather) <= NVM_UNET_INLINE_MAX,
	       "a gather list fits the descriptor's data");

/*
 * Reply table (ModPM's reply TLB): entry n names where the reply carrying
 * reply number n goes.  The process writes offset, len and channel, then
 * (after a write barrier) armed = 1, and only then sends the request.
 * The NI uses an armed entry for the first reply with that number arriving
 * on that channel: a reply that fits (len <= entry len) is written
 * straight into the buffer (a hit); a larger one goes the free-buffer way
 * (a miss); either way the NI writes armed = 0 (one reply per arming).
 * An entry not armed, on another channel, or outside the segment is a miss
 * and is left as it is.
 */
#define NVM_UNET_REPLY_SLOTS	256
struct nvm_unet_reply_ent {
	uint32_t offset;	/* segment offset of the buffer */
	uint32_t len;		/* its size */
	uint16_t channel;	/* the reply must arrive on this channel */
	uint16_t armed;		/* 1: armed (process), 0: used (NI) */
	uint32_t reserved;
};
NVM_ABI_ASSERT(sizeof(struct nvm_unet_reply_ent) == 16, "reply entry");

enum nvm_unet_st {
	NVM_UNET_ST_PENDING = 0,
	NVM_UNET_ST_SENT = 1,		/* on its way; the bytes are reusable */
	NVM_UNET_ST_BAD_CHANNEL = 2,	/* no such channel open */
	NVM_UNET_ST_BAD_RANGE = 3,	/* offset + len outside the segment */
	NVM_UNET_ST_BAD_LEN = 4,	/* 0, > MSG_MAX, or INLINE > INLINE_MAX */
	NVM_UNET_ST_DMA = 5,		/* host DMA failed */
	NVM_UNET_ST_BAD_FLAGS = 6,	/* unknown flags, INLINE with GATHER,
					 * reply number >= REPLY_SLOTS */
	NVM_UNET_ST_FAULT = 7,		/* pageable segment: the kernel could
					 * not map the data's page */
	NVM_UNET_ST_UNREACHABLE = 8,	/* the channel's node has no route
					 * (the mapper found it gone) or NetVM
					 * gave it up: nothing was sent */
};

/* [off, off + len) inside a segment of seg_size bytes (no wrap). */
static inline int nvm_unet_in_seg(uint32_t off, uint32_t len, uint32_t seg_size)
{
	return off <= seg_size && seg_size - off >= len;
}

/*
 * The NI's checks of a send descriptor, one rule set for the firmware and
 * for the driver playing a kernel-emulated endpoint's NI: 0, or the status
 * to complete it with.  chan_open: d->channel names an open channel.  A
 * gather list has 1..4 non-empty pieces inside the segment adding up to
 * len (each at most MSG_MAX, so the sum cannot wrap).
 */
static inline uint32_t nvm_unet_send_check(const struct nvm_unet_send_desc *d,
					   uint32_t seg_size, int chan_open)
{
	struct nvm_unet_gather g;
	uint32_t sum = 0, i;

	if (d->flags & ~NVM_UNET_F_SEND_ALL ||
	    (d->flags & NVM_UNET_F_INLINE && d->flags & NVM_UNET_F_GATHER) ||
	    (d->flags & NVM_UNET_F_REPLY && d->reply >= NVM_UNET_REPLY_SLOTS))
		return NVM_UNET_ST_BAD_FLAGS;
	if (d->channel >= NVM_UNET_CHANNELS || !chan_open)
		return NVM_UNET_ST_BAD_CHANNEL;
	if (!d->len || d->len > NVM_UNET_MSG_MAX)
		return NVM_UNET_ST_BAD_LEN;
	if (d->flags & NVM_UNET_F_INLINE)
		return d->len > NVM_UNET_INLINE_MAX ? NVM_UNET_ST_BAD_LEN : 0;
	if (!(d->flags & NVM_UNET_F_GATHER))
		return nvm_unet_in_seg(d->offset, d->len, seg_size) ?
		       0 : NVM_UNET_ST_BAD_RANGE;
	__builtin_memcpy(&g, d->data, sizeof(g));
	if (!g.count || g.count > NVM_UNET_GATHER_MAX)
		return NVM_UNET_ST_BAD_LEN;
	for (i = 0; i < g.count; i++) {
		if (!g.piece[i].len || g.piece[i].len > NVM_UNET_MSG_MAX)
			return NVM_UNET_ST_BAD_LEN;
		if (!nvm_unet_in_seg(g.piece[i].offset, g.piece[i].len,
				     seg_size))
			return NVM_UNET_ST_BAD_RANGE;
		sum += g.piece[i].len;
	}
	return sum == d->len ? 0 : NVM_UNET_ST_BAD_LEN;
}

/*
 * What a reply does with its reply-table entry @r (read armed first, then
 * the rest), one rule set for the firmware and the driver's emulation:
 * HIT (whole into the named buffer), OVERSIZE (the buffer is too small:
 * the arming is used up all the same) or MISS (not armed, another
 * channel's, or outside the segment).  The caller decides NONE (the
 * message is no reply) and MISS for a number past the table.
 */
enum nvm_unet_reply_fate {
	NVM_UNET_REPLY_NONE,
	NVM_UNET_REPLY_HIT,
	NVM_UNET_REPLY_OVERSIZE,
	NVM_UNET_REPLY_MISS,
};

static inline enum nvm_unet_reply_fate
nvm_unet_reply_fate(const struct nvm_unet_reply_ent *r, uint32_t ch,
		    uint32_t len, uint32_t seg_size)
{
	if (r->armed != 1 || r->channel != ch ||
	    !nvm_unet_in_seg(r->offset, r->len, seg_size))
		return NVM_UNET_REPLY_MISS;
	return len > r->len ? NVM_UNET_REPLY_OVERSIZE : NVM_UNET_REPLY_HIT;
}

/* Written by the process; read by the NI when it needs them. */
struct nvm_unet_ctl {
	uint32_t free_prod;	/* free buffer offsets pushed (free-running) */
	uint32_t rx_cons;	/* receive descriptors consumed (free-running) */
	uint32_t arm;		/* n + 1: post one event once message n is queued
				 * (a sleeper writes rx_cons + 1); 0 = none */
	uint32_t upcall;	/* 1: upcalls on (a store turns them off) */
	uint32_t upcall_full;	/* upcall when this many are queued, 0 = never */
	/*
	 * Written by the kernel (NETVM_IOC_UNET_SCHED): 1 while the owner is
	 * not running (preempted or stopped), when messages are diverted
	 * (FUGU's "process not running").  The process can write it too, but
	 * only ever changes its own messages' path, never their order.
	 */
	uint32_t desched;
	uint32_t reserved[2];
};

/*
 * Receive events: NVM_EV_NOTIFY with endpoint = the U-Net port, data =
 * these bits, arg = messages delivered so far.  WAKE once per value of arm
 * when the message it names is queued (the NI never writes arm, so a
 * sleeper's new arming cannot be lost to the NI clearing an old one); the
 * upcall reasons when upcalls are on: the
 * queue became non-empty, or reached upcall_full entries.  The driver turns
 * the latter into SIGIO (or the fcntl F_SETSIG signal) for the owner.
 */
#define NVM_UNET_EV_WAKE	0x1
#define NVM_UNET_EV_NONEMPTY	0x2
#define NVM_UNET_EV_ALMOST_FULL	0x4
#define NVM_UNET_EV_DIVERT	0x8	/* a record in the divert ring; arg = records written */
/*
 * A control frame (HOLD, RELEASE, DROPPED) for a virtual port: the kernel
 * plays that endpoint's NI, so the NI hands it on as this event, taken at
 * once like any control frame (no buffer, no DMA; a lost one is as a frame
 * lost on the wire).  endpoint = the virtual port; data = this bit | the
 * frame's flag << 8 | DROPPED's count << 16; arg = the frame's tag |
 * source node << 32 | source port << 48.  The kernel matches it against
 * the endpoint's channels as the NI matches a control frame.
 */
#define NVM_UNET_EV_CTL		0x10

/*
 * Divert ring (kernel memory, NVM_KOP_UNET_DIVERT_CFG): record n in slot
 * n % slots, seq = n + 1 written last.  The kernel hands the records on
 * and returns the slots with NVM_KOP_UNET_DIVERT_DONE.  When the ring is
 * full the NI keeps the frame in its wire slot (back-pressure).
 */
#define NVM_UNET_DIV_SLOTS	64
#define NVM_UNET_DIV_SLOT	4352
struct nvm_unet_div_rec {
	uint16_t port;		/* a NIC endpoint, or a virtual one (>= 16) */
	uint16_t channel;	/* NIC endpoints: the channel; else 0xffff */
	uint32_t len;
	uint32_t msgno;		/* NIC endpoints; virtual ones: 0 */
	uint32_t seq;		/* written last */
	uint16_t src_node;	/* as the packet header says */
	uint16_t src_port;	/* stamped by the sending NI */
	uint32_t tag;
	uint32_t dsm;		/* receive flags (NVM_UNET_F_NOINTR,
				 * _REPLY) | reply number << 16 */
	uint32_t reserved;
	uint8_t data[NVM_UNET_MSG_MAX];
};
NVM_ABI_ASSERT(sizeof(struct nvm_unet_div_rec) <= NVM_UNET_DIV_SLOT,
	       "a divert record fits its slot");

/*
 * Kernel-emulated endpoints: when the NIC's ports run out, the driver
 * gives out virtual ports NVM_UNET_VPORT_MIN..NVM_UNET_VPORT_MAX-1 and
 * plays the NI for them.  The NI hands every message for a virtual port
 * to the kernel through the divert ring and sends the kernel's messages
 * with NVM_KOP_UNET_KSEND (src_port a virtual port).
 */
#define NVM_UNET_VPORT_MIN	16
#define NVM_UNET_VPORT_MAX	64

/*
 * NVM_KOP_UNET_KCTL: a control frame from a kernel-emulated endpoint (its
 * virtual port is the source, as for KSEND) to the sender of one of its
 * channels: flags exactly one of NVM_UNET_HF_HOLD, _RELEASE, _DROPPED;
 * count only with DROPPED.  Busy (no transmit buffer): refused with
 * NVM_ST_BUSY, and the kernel tries again.
 */
struct nvm_k_unet_kctl {
	uint16_t node;		/* the channel's remote node */
	uint16_t dst_port;	/* ... and port */
	uint16_t src_port;	/* a virtual port */
	uint8_t flags;		/* one NVM_UNET_HF_CTL flag */
	uint8_t reserved;
	uint32_t tag;		/* the channel's tag */
	uint16_t count;		/* DROPPED: how many */
	uint16_t reserved2;
};

/*
 * NVM_KOP_UNET_KSEND: a message of a kernel-emulated endpoint.  Refused
 * with NVM_ST_BUSY while the NI has no room (the kernel tries again) and
 * with NVM_ST_UNREACHABLE when the node has no route or NetVM gave it up
 * (the kernel completes the send NVM_UNET_ST_UNREACHABLE).  Once the NI
 * has fetched the bytes it writes cookie to done_addr, or cookie |
 * NVM_UNET_KS_UNREACHABLE when the node became unreachable meanwhile and
 * nothing was sent (also NVM_UNET_ST_UNREACHABLE); a cookie with that bit
 * set is refused (NVM_ST_BAD_CMD).
 */
#define NVM_UNET_KS_UNREACHABLE	0x80000000u

struct nvm_k_unet_ksend {
	uint64_t addr;		/* bus address of the message (kept until done) */
	uint32_t len;
	uint32_t tag;
	uint16_t node;
	uint16_t dst_port;
	uint16_t src_port;	/* a virtual port */
	uint8_t hflags;		/* NVM_UNET_HF_NOINTR, _REPLY (DSM) */
	uint8_t reserved;
	uint64_t done_addr;	/* the NI writes cookie here once it has the bytes */
	uint32_t cookie;
	uint16_t reply;		/* HF_REPLY: the reply number */
	uint16_t reserved2;
};

/*
 * Written by the NI after each change.  A message that cannot go into the
 * receive queue is diverted to the driver (FUGU's buffered path) when the
 * kernel has given the NI a divert ring, else dropped; the causes count
 * both.  Once one is diverted, later ones follow it until the driver has
 * handed every diverted message over (so the order holds cheaply).
 */
struct nvm_unet_status {
	uint32_t send_consumed;	/* send descriptors taken */
	uint32_t send_errors;	/* ... of which refused */
	uint32_t free_cons;	/* free buffer offsets popped */
	uint32_t rx_prod;	/* receive descriptors written (direct) */
	uint32_t rx_ring_full;	/* not direct: receive queue full */
	uint32_t rx_no_buf;	/* ... no free buffer (or a bad one) */
	uint32_t div_order;	/* ... earlier ones were diverted */
	uint32_t msgs;		/* messages accepted: the next msgno */
	uint32_t diverted;	/* messages diverted (all causes) */
	uint32_t dropped;	/* messages dropped (no divert ring) */
	uint32_t divert_mode;	/* 1 while messages are diverted */
	uint32_t quiet;		/* received with NOINTR (direct) */
	uint32_t reply_hits;	/* replies written into a reply buffer */
	uint32_t reply_misses;	/* replies that took the free-buffer way */
	uint32_t events;	/* receive events raised (wake, upcalls) */
	uint32_t rx_not_resident;	/* not direct: a buffer page not mapped */
	uint32_t rx_not_running;	/* ... the owner not running (desched) */
	uint32_t tx_misses;	/* sends that waited for a segment page */
	/*
	 * Overflow control (FUGU): the receiving side asks the senders of
	 * its channels to hold while its buffered FIFO is past the
	 * high-water mark, and releases them when it is back to direct
	 * delivery (docs/unet.md).
	 */
	uint32_t hold_on;	/* receiver: holds asserted (high-water) */
	uint32_t hold_off;	/* ... released (back to direct delivery) */
	uint32_t tx_held;	/* sender: times a send waited for a hold */
	uint32_t tx_held_now;	/* ... 1 while the next send waits for one */
	uint32_t hold_expired;	/* ... holds that ran out unrefreshed */
	uint32_t peer_dropped;	/* ... DROPPED notices: a receiver without
				 * a divert ring dropped one of ours */
	uint32_t reserved[3];
};

/*
 * Receive descriptor in the host's receive queue: entry (n % len) holds
 * message n; seq = n + 1 is written last, so an entry is complete when
 * its seq is the expected one.  Small messages (<= 96 bytes) are in
 * data[]; larger ones in nbuf buffers popped from the free queue, each
 * filled up to the endpoint's buffer size (the last with the rest).
 */
struct nvm_unet_rx_desc {
	uint16_t channel;	/* the channel it arrived on */
	uint16_t flags;		/* NVM_UNET_F_INLINE, _NOINTR, _REPLY, _HIT */
	uint32_t len;
	uint32_t nbuf;		/* free-queue buffers used (0 for a HIT) */
	uint32_t msgno;		/* per endpoint from 0, diverted ones included */
	union {
		uint8_t data[NVM_UNET_INLINE_MAX];
		uint32_t buf[NVM_UNET_RX_BUFS];	/* segment offsets */
	};
	uint32_t reply;		/* F_REPLY: the reply number */
	uint16_t src_node;	/* the sender: its node, as the link vouched */
	uint16_t src_port;	/* ... and port, stamped by its NI */
	uint32_t reserved2;
	uint32_t seq;
};
NVM_ABI_ASSERT(sizeof(struct nvm_unet_rx_desc) == 128, "unet rx desc");
NVM_ABI_ASSERT(offsetof(struct nvm_unet_rx_desc, src_node) ==
	       offsetof(struct nvm_unet_rx_desc, reply) + 4,
	       "reply and the sender are written as one 8-byte piece");

/* ---- on the wire: struct nvm_pkt_hdr (type NVM_PKT_UNET), this, data -- */
struct nvm_unet_hdr {
	uint16_t dst_port;
	uint16_t src_port;	/* stamped by the sending NI */
	uint32_t tag;		/* the channel's tag, stamped by the sending NI */
	uint32_t len;		/* message bytes that follow */
	uint8_t flags;		/* NVM_UNET_HF_* */
	uint8_t reserved;
	uint16_t reply;		/* HF_REPLY: the reply number */
};
NVM_ABI_ASSERT(sizeof(struct nvm_unet_hdr) == 16, "unet header");
#define NVM_UNET_HF_NOINTR	0x01	/* = the send descriptor's NOINTR */
#define NVM_UNET_HF_REPLY	0x02	/* reply carries a reply number */
/*
 * Control frames (len 0, exactly one of these): the receiving NI of a
 * channel tells the sending NI of the same channel (it names the sender's
 * endpoint as dst_port and its own as src_port, with the channel's tag)
 * to hold its sends on that channel (HOLD, for a bounded time unless
 * refreshed), to send again (RELEASE), or that it dropped messages of
 * it (DROPPED: no divert ring; the reply field says how many).  A NI takes a control frame at once
 * (no buffer, no DMA), so one never waits behind data.
 */
#define NVM_UNET_HF_HOLD	0x04
#define NVM_UNET_HF_RELEASE	0x08
#define NVM_UNET_HF_DROPPED	0x10
#define NVM_UNET_HF_CTL		(NVM_UNET_HF_HOLD | NVM_UNET_HF_RELEASE | \
				 NVM_UNET_HF_DROPPED)
/*
 * Overflow control's times, for the NI and for the driver playing a
 * kernel-emulated endpoint's NI alike: a hold not refreshed for HOLD_MS
 * lapses at the sender; a receiver that holds repeats HOLD every
 * REFRESH_MS.
 */
#define NVM_UNET_HOLD_MS	500	/* TCG nodes can stall for a few hundred ms */
#define NVM_UNET_REFRESH_MS	50

/* ---- kernel control commands' arguments (registry: netvm/kop.h) ------- */

struct nvm_k_unet_open {
	uint64_t seg;		/* bus address of the segment */
	uint64_t rxq;		/* bus address of the receive queue */
	uint32_t seg_size;	/* bytes */
	uint32_t buf_size;	/* receive buffer size */
	uint32_t rxq_len;	/* power of two */
	uint32_t port;
	uint32_t flags;		/* NVM_UNET_KO_* */
	uint32_t reserved;
};
/* seg is the segment's user address, translated through the shadow page
 * table under the port (see the top of this file) */
#define NVM_UNET_KO_PAGEABLE	0x1

struct nvm_k_unet_chan {
	uint32_t port;		/* local endpoint */
	uint32_t channel;	/* 0 .. NVM_UNET_CHANNELS - 1 */
	uint32_t open;		/* 1 = set up, 0 = tear down */
	uint32_t node;		/* remote node, or NVM_UNET_ANY */
	uint32_t rport;		/* remote endpoint, or NVM_UNET_ANY */
	uint32_t tag;		/* see nvm_unet_chan_clash() */
	uint32_t reserved[2];
};

/*
 * An any-source channel: node and port both NVM_UNET_ANY.  It takes every
 * message to its endpoint carrying its tag that no channel of the
 * endpoint with a named source takes, whoever sent it; the receive
 * descriptor (src_node, src_port) and the divert record say who did, so a
 * server learns its peers' addresses from the fabric.  It only receives:
 * a send on it is refused NVM_UNET_ST_BAD_CHANNEL, and it has no
 * overflow control (there is no one sender to hold).  The tag is unique
 * per endpoint among its any-source channels.  NIC endpoints only.
 */
#define NVM_UNET_ANY		0xffffu

static inline int nvm_unet_is_any(uint32_t node, uint32_t rport)
{
	return node == NVM_UNET_ANY && rport == NVM_UNET_ANY;
}

/*
 * Whether a new channel (node, rport, tag) clashes with an open channel
 * (onode, orport, otag) of the same endpoint: one rule for the firmware
 * and for the driver playing a kernel-emulated endpoint's NI.  A frame
 * names the endpoint it is for (dst_port), and the endpoint's channels
 * are told apart by (source node, source port, tag), so only two channels
 * of one endpoint with the same triple could take the same frames; any
 * other endpoint of the NIC may hold the same triple.  Two any-source
 * channels (node = port = NVM_UNET_ANY) clash on the tag alone.
 */
static inline int nvm_unet_chan_clash(uint32_t node, uint32_t rport,
				      uint32_t tag, uint32_t onode,
				      uint32_t orport, uint32_t otag)
{
	return node == onode && rport == orport && tag == otag;
}

/* ---- ioctls on /dev/netvmN ------------------------------------------- */

/*
 * Make this open file a U-Net endpoint.  mmap then gives, each from its
 * start: NETVM_EP_MMAP_SRAM (the 32 KiB region), NETVM_EP_MMAP_DB (the
 * doorbell page) and NETVM_EP_MMAP_HOST (host_size bytes: the receive
 * queue at 0, the segment at seg_off).
 */
struct netvm_unet_open {
	uint32_t seg_size;	/* in: page multiple, 4 KiB .. 1 MiB */
	uint32_t buf_size;	/* in: 1024, 2048 or 4096 */
	uint32_t rxq_len;	/* in: power of two, 16 .. 1024 */
	uint32_t port;		/* out */
	uint32_t node_id;	/* out */
	uint32_t seg_off;	/* out: segment offset in the host mapping */
	uint32_t host_size;	/* out */
	uint32_t flags;		/* in: NETVM_UNET_EMULATE, _PAGEABLE; out: _EMULATED */
	uint64_t seg_va;	/* in, with NETVM_UNET_PAGEABLE: the segment */
	uint32_t reserved[2];
};
/*
 * A kernel-emulated endpoint (no NIC port was free, or asked for): same
 * mappings and layout, but the "SRAM region" and doorbell page are kernel
 * memory and the driver plays the NI, so after posting send descriptors
 * the process calls NETVM_IOC_UNET_KICK.  Its port is virtual (>= 16).
 */
#define NETVM_UNET_EMULATE	0x1
#define NETVM_UNET_EMULATED	0x2
/*
 * The segment is seg_size bytes of the caller's own memory at seg_va (page
 * aligned, private anonymous or shared, writable), not pinned: it follows
 * the address space (swap, fork, munmap) as a NetVM export does, and
 * seg_off/host_size then describe the receive queue alone.  Needs a NIC
 * port (-EBUSY when none is free; never kernel-emulated).
 */
#define NETVM_UNET_PAGEABLE	0x4

/* Set up a channel to (node, port) carrying tag; returns its id. */
struct netvm_unet_chan {
	uint32_t node;
	uint32_t port;
	uint32_t tag;		/* agreed by both ends; one endpoint's channels
				 * differ in (node, port, tag) */
	uint32_t channel;	/* out (UNET_CHANNEL), in (UNET_UNCHANNEL) */
	uint32_t reserved[4];
};

/*
 * Take the oldest diverted message if its msgno is want (or, with
 * NETVM_UNET_PEEK, only report it): -EAGAIN if none is buffered or the
 * oldest is another, -EMSGSIZE if cap is too small (len says how much).
 */
#define NETVM_UNET_PEEK		0x1
struct netvm_unet_drecv {
	uint64_t buf;
	uint32_t cap;
	uint32_t want;		/* the msgno the caller expects */
	uint32_t flags;		/* NETVM_UNET_PEEK */
	uint32_t len;		/* out */
	uint32_t channel;	/* out */
	uint32_t msgno;		/* out: the oldest buffered */
	uint32_t buffered;	/* out: messages buffered in the driver */
	uint32_t overflow;	/* out: dropped by overflow control so far */
	uint32_t dsm;		/* out: as nvm_unet_div_rec.dsm (DSM flags) */
	uint32_t src;		/* out: the sender, node | port << 16 */
};

#define NETVM_IOC_UNET_OPEN	_IOWR(NETVM_IOC_MAGIC, 0x30, struct netvm_unet_open)
#define NETVM_IOC_UNET_DRECV	_IOWR(NETVM_IOC_MAGIC, 0x33, struct netvm_unet_drecv)
#define NETVM_IOC_UNET_KICK	_IO(NETVM_IOC_MAGIC, 0x34)
/*
 * FUGU's "process not running": 1 = divert messages while the calling
 * thread is preempted or stopped (it becomes the endpoint's watched
 * thread), 0 = off.  NIC endpoints only (-EOPNOTSUPP otherwise).
 */
#define NETVM_IOC_UNET_SCHED	_IOW(NETVM_IOC_MAGIC, 0x35, uint32_t)
#define NETVM_IOC_UNET_CHANNEL	_IOWR(NETVM_IOC_MAGIC, 0x31, struct netvm_unet_chan)
#define NETVM_IOC_UNET_UNCHANNEL _IOW(NETVM_IOC_MAGIC, 0x32, struct netvm_unet_chan)

#endif /* NETVM_UNET_ABI_H */
