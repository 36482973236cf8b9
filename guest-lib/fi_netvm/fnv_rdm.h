/* SPDX-License-Identifier: MIT */
/*
 * Reliable datagram endpoints (FI_EP_RDM) of the netvm provider: what the
 * three RDM files share.  fnv_rdm_link.c makes U-Net reliable (sequence
 * numbers, cumulative acknowledgements, go-back-N resends: the fabric
 * drops frames at a full output, and U-Net does not resend);
 * fnv_rdm_match.c matches messages to posted receives (FI_MSG in order,
 * FI_TAGGED by tag, FI_DIRECTED_RECV by sender) and keeps the unexpected
 * ones; fnv_rdm_ops.c is the API (fi_ops_msg, fi_ops_tagged).
 */
#ifndef FNV_RDM_H
#define FNV_RDM_H

#include "fnv.h"

#define FNV_RDM_WIN		64	/* unacknowledged messages per peer */
#define FNV_RDM_PEERS		256	/* peers an endpoint talks with */
#define FNV_RDM_UNEXP		256	/* unexpected messages kept */
#define FNV_RDM_POSTED		256	/* posted receives, each kind */
#define FNV_RDM_RTO_MS		100	/* first resend, doubling to 3.2 s */
#define FNV_RDM_RETRIES		12	/* then the peer is given up */

enum fnv_rdm_type {
	FNV_RDM_MSG = 1,	/* fi_send and friends */
	FNV_RDM_TAGGED = 2,	/* fi_tsend and friends */
	FNV_RDM_ACK = 3,	/* acknowledgement only, no sequence number */
};

#define FNV_RDM_HAS_DATA	0x1	/* remote CQ data in the header */

/* Leads every frame of an RDM endpoint; the payload follows. */
struct fnv_rdm_hdr {
	uint8_t type;		/* enum fnv_rdm_type */
	uint8_t flags;		/* FNV_RDM_HAS_DATA */
	uint16_t reserved;
	uint32_t epoch;		/* the sender endpoint's incarnation */
	uint32_t seq;		/* MSG, TAGGED: its sequence number */
	uint32_t ack;		/* every message before this one arrived ... */
	uint32_t ack_epoch;	/* ... of this incarnation of the receiver */
	uint32_t pad;
	uint64_t tag;
	uint64_t data;
};

#define FNV_RDM_MSG_MAX		(FNV_MSG_MAX - sizeof(struct fnv_rdm_hdr))

/* A message sent and not yet acknowledged (or acknowledged, not completed). */
struct fnv_pkt {
	void *ctx;
	uint64_t cflags;	/* the completion's flags */
	bool complete;		/* write a completion when acknowledged */
	size_t len;		/* the frame's, header included */
	uint8_t frame[];
};

struct fnv_peer {
	bool used;
	uint16_t node, port;
	/* sending: [tx_done, tx_acked) acknowledged, to complete;
	 * [tx_acked, tx_next) in flight */
	uint32_t tx_next, tx_acked, tx_done;
	struct fnv_pkt *win[FNV_RDM_WIN];
	int64_t tx_sent_ms;	/* when the oldest in flight was (re)sent */
	unsigned int retries;
	bool dead;		/* given up: sends fail */
	/* receiving */
	bool rx_known;
	uint32_t rx_epoch, rx_next;
	uint32_t rx_acked;	/* the last ack value sent */
	bool ack_now;		/* a frame out of order came: ack this pass */
};

/* A receive posted and not yet matched. */
struct fnv_rdm_rx {
	void *ctx;
	struct iovec iov[FNV_IOV_MAX];
	size_t iov_count;
	uint64_t flags;		/* FI_COMPLETION, FI_PEEK, FI_CLAIM, ... */
	uint64_t tag, ignore;
	bool any_src;
	uint16_t node, port;	/* FI_DIRECTED_RECV */
};

/* A message that came before its receive. */
struct fnv_unexp {
	uint8_t type;
	bool has_data;
	uint64_t tag, data;
	uint16_t node, port;
	void *claimed;		/* FI_CLAIM: the context that claimed it */
	size_t len;
	uint8_t *buf;
};

struct fnv_rdm {
	uint32_t epoch;
	struct fnv_peer *peers[FNV_RDM_PEERS];
	struct fnv_rdm_rx msg_rx[FNV_RDM_POSTED], tag_rx[FNV_RDM_POSTED];
	size_t msg_n, tag_n;
	struct fnv_unexp unexp[FNV_RDM_UNEXP];
	size_t unexp_n;
	uint64_t resent, dropped_order, dropped_full;	/* for FI_LOG */
	uint8_t frame[FNV_MSG_MAX];
};

/* fnv_clock.c: milliseconds of CLOCK_MONOTONIC (a unit test's own clock
 * replaces it) */
int64_t fnv_now_ms(void);

/* fnv_rdm_link.c */
int fnv_rdm_init(struct fnv_ep *ep);
void fnv_rdm_fini(struct fnv_ep *ep);
struct fnv_peer *fnv_rdm_peer(struct fnv_rdm *r, uint16_t node,
			      uint16_t port, bool create);
/* Send one message (header built here from type, tag, data, flags):
 * 0, -FI_EAGAIN (the window is full), or an error. */
ssize_t fnv_rdm_send_locked(struct fnv_ep *ep, uint8_t type,
			    const struct iovec *iov, size_t count,
			    fi_addr_t dest, uint64_t tag, uint64_t data,
			    bool has_data, void *ctx, bool complete);
void fnv_rdm_progress_locked(struct fnv_ep *ep);
/* Milliseconds until progress has a resend to make; -1: none. */
int fnv_rdm_timer_ms(struct fnv_ep *ep);
size_t fnv_rdm_tx_left(const struct fnv_ep *ep);

/* fnv_rdm_match.c */
/* A message in order from (node, port): true if taken (matched or kept
 * as unexpected), false if it must be dropped (no room: resent later). */
bool fnv_rdm_arrive_locked(struct fnv_ep *ep, const struct fnv_rdm_hdr *h,
			   const uint8_t *payload, size_t len, uint16_t node,
			   uint16_t port);
ssize_t fnv_rdm_post_locked(struct fnv_ep *ep, bool tagged,
			    const struct iovec *iov, size_t count,
			    fi_addr_t src, uint64_t tag, uint64_t ignore,
			    void *ctx, uint64_t flags);
ssize_t fnv_rdm_cancel_locked(struct fnv_ep *ep, void *ctx);
void fnv_rdm_match_fini(struct fnv_ep *ep);

/* fnv_rdm_ops.c */
extern struct fi_ops_msg fnv_rdm_msg_ops;
extern struct fi_ops_tagged fnv_rdm_tagged_ops;

#endif
