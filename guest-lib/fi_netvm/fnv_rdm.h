/* SPDX-License-Identifier: MIT */
/*
 * Reliable datagram endpoints (FI_EP_RDM) of the netvm provider: what the
 * three RDM files share.  fnv_rdm_link.c makes U-Net reliable (sequence
 * numbers, cumulative acknowledgements, go-back-N resends: the fabric
 * drops frames at a full output, and U-Net does not resend);
 * fnv_rdm_match.c matches messages to posted receives (FI_MSG in order,
 * FI_TAGGED by tag, FI_DIRECTED_RECV by sender) and keeps the unexpected
 * ones; fnv_rdm_rdv.c carries messages larger than one U-Net message
 * (rendezvous: the sender writes them into the receiver's NetVM export,
 * or the receiver reads them from the sender's);
 * fnv_rdm_ops.c is the API (fi_ops_msg, fi_ops_tagged).
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
#define FNV_RDV_TX		32	/* rendezvous sends waiting, per endpoint */
#define FNV_RDV_DONE_Q		256	/* "done" answers waiting for a window */
#define FNV_RDV_RX		32	/* receives waiting for their writer */
/* A sender pulls its peer's ack table when its oldest message waited this
 * long (the clock counts whole milliseconds: 2 means 1 to 2 ms), then
 * after twice as long each time nothing new came, up to 32 times this. */
#define FNV_RDM_PULL_MS		2
/* An ack deferred for a pulling peer goes on its own at the latest in
 * the second progress pass after the one that took the message. */
#define FNV_RDM_ACK_PASSES	2

enum fnv_rdm_type {
	FNV_RDM_MSG = 1,	/* fi_send and friends */
	FNV_RDM_TAGGED = 2,	/* fi_tsend and friends */
	FNV_RDM_ACK = 3,	/* acknowledgement only, no sequence number */
	FNV_RDM_DONE = 4,	/* a rendezvous read is over: struct fnv_rdv_done */
	FNV_RDM_CTS = 5,	/* write there: struct fnv_rdv_cts */
	FNV_RDM_FIN = 6,	/* the writes are over: struct fnv_rdv_done */
};

#define FNV_RDM_HAS_DATA	0x1	/* MSG, TAGGED: 8 bytes of remote CQ
					 * data between header and payload */
#define FNV_RDM_RDV		0x2	/* MSG, TAGGED: the payload is a struct
					 * fnv_rdv_req, the bytes wait in the
					 * sender's NetVM exports */
#define FNV_RDM_PULLS		0x4	/* any: the sender reads the receiver's
					 * ack table (it may defer its acks) */
#define FNV_RDM_TABLE		0x8	/* ACK: the payload is a struct
					 * fnv_rdm_table */

/* Leads every frame of an RDM endpoint; the payload follows (after the
 * remote CQ data, FNV_RDM_HAS_DATA).  32 bytes: a 64-byte message is one
 * U-Net message of 96, which U-Net sends inline. */
struct fnv_rdm_hdr {
	uint8_t type;		/* enum fnv_rdm_type */
	uint8_t flags;		/* FNV_RDM_* */
	uint16_t reserved;
	uint32_t epoch;		/* the sender endpoint's incarnation */
	uint32_t seq;		/* MSG, TAGGED: its sequence number */
	uint32_t ack;		/* every message before this one arrived ... */
	uint32_t ack_epoch;	/* ... of this incarnation of the receiver */
	uint32_t pad;
	uint64_t tag;
};

/* Where the sender of an ACK keeps its acks for the receiver of the ACK
 * (the one-sided pull, fnv_rdm_link.c): its ack table's key (a NetVM
 * export of the sender's node, as a rendezvous piece's) and the slot. */
struct fnv_rdm_table {
	uint64_t key;
	uint32_t slot;		/* < FNV_RDM_PEERS */
	uint32_t pad;
};

/* One slot of an ack table: the peer's incarnation as known here in the
 * high half, the next sequence number expected from it in the low. */
static inline uint64_t fnv_rdm_slot(uint32_t epoch, uint32_t next)
{
	return (uint64_t)epoch << 32 | next;
}

/* the largest eager payload, with remote CQ data or without */
#define FNV_RDM_MSG_MAX		(FNV_MSG_MAX - sizeof(struct fnv_rdm_hdr) - \
				 sizeof(uint64_t))
/* Every piece of a rendezvous message is one export: at most this long. */
#define FNV_RDV_MAX		NETVM_EXPORT_MAX

/* Where a piece of a rendezvous message waits: an export of the sender
 * (its key names port and export, fnv_nvm.c) at this address of the
 * sender's process (what the loop-back reads, process_vm_readv).  The
 * rest is what the receiver's import needs (netvm_import_segment), so
 * that it asks nothing of the sender's kernel. */
struct fnv_rdv_piece {
	uint64_t key;
	uint64_t addr;
	uint64_t len;
	uint64_t nvm_key;	/* the export's NetVM protection key */
	uint32_t pt_rows;	/* the sender's node's (netvm_export_info) */
	uint32_t pad;
};

/* A rendezvous message's payload; its header carries kind, tag, data. */
struct fnv_rdv_req {
	uint64_t id;		/* the sender's, for the "done" */
	uint64_t len;		/* the message's bytes: the pieces' sum */
	uint32_t pid;		/* the sender's process (the loop-back) */
	uint32_t count;		/* pieces, 1 .. FNV_IOV_MAX */
	struct fnv_rdv_piece piece[FNV_IOV_MAX];
};

/* The receiver's "clear to send": write the message's bytes [off, +len)
 * into its export described in piece (the whole pages of its receive
 * buffer); it reads the rest itself.  The sender answers FNV_RDM_FIN. */
struct fnv_rdv_cts {
	uint64_t id;		/* the request's */
	uint64_t off;		/* in the message */
	struct fnv_rdv_piece piece;	/* len: the bytes to write */
};

/* The receiver's answer once it read (or discarded) a rendezvous message
 * (FNV_RDM_DONE); the sender's once it wrote one (FNV_RDM_FIN). */
struct fnv_rdv_done {
	uint64_t id;
	uint32_t status;	/* 0, or the reader's FI_E* */
	uint32_t pad;
};

/* A rendezvous send waiting for its "done". */
struct fnv_rdv_tx {
	bool used;
	uint64_t id;
	void *ctx;
	uint64_t cflags;
	bool complete;
	uint16_t node, port;
	int exports[FNV_IOV_MAX];	/* NetVM export handles */
	size_t nexports;
	void *copy;		/* the bytes copied, when the buffers could
				 * not be exported as they are; or NULL */
	struct fnv_rdv_req q;	/* what the exports hold (the writes' source) */
};

/* A rendezvous receive waiting for its sender's writes (FNV_RDM_FIN). */
struct fnv_rdv_rx {
	bool used;
	uint64_t id;		/* the sender's request */
	uint16_t node, port;
	struct fnv_cqe e;	/* the completion, err: the reads' or FI_ETRUNC */
	bool selected;		/* a success writes a completion too */
	int export;		/* the receive buffer's whole pages */
};

/* A message sent and not yet acknowledged (or acknowledged, not completed). */
struct fnv_pkt {
	void *ctx;
	uint64_t cflags;	/* the completion's flags */
	bool complete;		/* write a completion when acknowledged */
	bool quiet;		/* none at all, not even an error's */
	size_t len;		/* the frame's, header included */
	uint8_t frame[];
};

struct fnv_peer {
	bool used;
	uint16_t node, port;
	uint32_t slot;		/* its place in peers[] and in the ack table */
	/* sending: [tx_done, tx_acked) acknowledged, to complete;
	 * [tx_acked, tx_next) in flight */
	uint32_t tx_next, tx_acked, tx_done;
	struct fnv_pkt *win[FNV_RDM_WIN];
	int64_t tx_sent_ms;	/* when the oldest in flight was (re)sent */
	unsigned int retries;
	bool dead;		/* given up: sends fail */
	/* pulling its acks from its ack table (another node's peer) */
	uint64_t pull_key;	/* 0: not known, or reads failed */
	uint32_t pull_slot;
	uint64_t pull_bad_key;	/* reads of it failed: not taken again */
	int64_t pull_due_ms;	/* the next read, while sends are in flight */
	unsigned int pulls;	/* reads in a row that found nothing new */
	/* receiving */
	bool rx_known;
	uint32_t rx_epoch, rx_next;
	uint32_t rx_acked;	/* the last ack value sent */
	bool ack_now;		/* a frame out of order came: ack this pass */
	bool peer_pulls;	/* its frames say it reads our ack table */
	bool ack_owed;		/* deferred (it pulls): since pass owed_pass */
	uint64_t owed_pass;
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
	size_t len;		/* the message's (rendezvous: not buf's) */
	bool rdv;		/* buf holds a struct fnv_rdv_req */
	uint8_t *buf;
};

struct fnv_rdm {
	uint32_t epoch;
	struct fnv_peer *peers[FNV_RDM_PEERS];	/* hashed on (node, port) */
	/* the same peers, packed in the order they came: what every pass
	 * goes through (under TCG, a look at all FNV_RDM_PEERS slots costs
	 * microseconds a pass) */
	struct fnv_peer *live[FNV_RDM_PEERS];
	int nlive;
	struct fnv_rdm_rx msg_rx[FNV_RDM_POSTED], tag_rx[FNV_RDM_POSTED];
	size_t msg_n, tag_n;
	struct fnv_unexp unexp[FNV_RDM_UNEXP];
	size_t unexp_n;
	/* rendezvous (fnv_rdm_rdv.c): sends waiting for their "done", and
	 * "done"s waiting for room in their peer's window */
	struct fnv_rdv_tx rdv_tx[FNV_RDV_TX];
	uint64_t rdv_next_id;
	struct fnv_rdv_todo {
		uint16_t node, port;
		uint8_t type;		/* FNV_RDM_DONE or FNV_RDM_FIN */
		struct fnv_rdv_done d;
	} done_q[FNV_RDV_DONE_Q];
	size_t done_n;
	/* receives whose senders write (fnv_rdm_rdv.c) */
	struct fnv_rdv_rx rdv_rx[FNV_RDV_RX];
	uint64_t rdv_written, rdv_read, rdv_in_place;	/* for FI_LOG */
	/* FI_NETVM_RDV_READ_MAX (fnv_ep.c; 0 until set): messages up to
	 * this long are read into place, not offered for writing */
	size_t rdv_read_max;
	/* the ack table (one slot per peer, a page of its own), exported
	 * read-only at the first ack to another node's peer */
	uint64_t *acks;
	int acks_export;	/* the export's handle; -1: none */
	uint64_t acks_key;	/* 0: not exported (or it failed) */
	bool acks_failed;	/* the export failed: acks go as frames */
	uint64_t pass;		/* progress passes so far */
	uint64_t resent, dropped_order, dropped_full;	/* for FI_LOG */
	uint64_t pulled, acks_deferred;
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
 * 0, -FI_EAGAIN (the window is full), or an error.  Larger than one
 * U-Net message: by rendezvous (fnv_rdm_rdv.c). */
ssize_t fnv_rdm_send_locked(struct fnv_ep *ep, uint8_t type,
			    const struct iovec *iov, size_t count,
			    fi_addr_t dest, uint64_t tag, uint64_t data,
			    bool has_data, void *ctx, bool complete);
/* One frame to (node, port) as it is: flags FNV_RDM_*, no completion at
 * all (quiet: the rendezvous's own, which complete otherwise). */
ssize_t fnv_rdm_send_frame_locked(struct fnv_ep *ep, uint16_t node,
				  uint16_t port, uint8_t type, uint8_t flags,
				  const struct iovec *iov, size_t count,
				  uint64_t tag, uint64_t data);
void fnv_rdm_progress_locked(struct fnv_ep *ep);
/* Before a caller sleeps or closes: the acks deferred, sent now; of one
 * endpoint, or of every RDM endpoint bound to a queue or counter. */
void fnv_rdm_flush_acks_locked(struct fnv_ep *ep);
void fnv_rdm_flush_bound_locked(struct fnv_ep *const eps[FNV_CQ_EPS]);
/* Milliseconds until progress has a resend or a pull to make; -1: none. */
int fnv_rdm_timer_ms(struct fnv_ep *ep);
size_t fnv_rdm_tx_left(const struct fnv_ep *ep);

/* fnv_rdm_match.c */
/* A message in order from (node, port): true if taken (matched or kept
 * as unexpected), false if it must be dropped (no room: resent later). */
bool fnv_rdm_arrive_locked(struct fnv_ep *ep, const struct fnv_rdm_hdr *h,
			   uint64_t data, const uint8_t *payload, size_t len,
			   uint16_t node, uint16_t port);
ssize_t fnv_rdm_post_locked(struct fnv_ep *ep, bool tagged,
			    const struct iovec *iov, size_t count,
			    fi_addr_t src, uint64_t tag, uint64_t ignore,
			    void *ctx, uint64_t flags);
ssize_t fnv_rdm_cancel_locked(struct fnv_ep *ep, void *ctx);
void fnv_rdm_match_fini(struct fnv_ep *ep);

/* fnv_rdm_rdv.c: rendezvous */
ssize_t fnv_rdv_send_locked(struct fnv_ep *ep, uint8_t type,
			    const struct iovec *iov, size_t count, size_t len,
			    const struct fnv_addr *to, uint64_t tag,
			    uint64_t data, bool has_data, void *ctx,
			    bool complete);
/* A rendezvous request's payload is sound (len bytes of it). */
bool fnv_rdv_req_ok(const uint8_t *payload, size_t len);
/* Whether a "done" can be promised now (room to queue one). */
bool fnv_rdv_can_answer(const struct fnv_ep *ep);
/* Read a matched rendezvous message into iov (at most cap bytes of it):
 * 0 or the completion's FI_E*; the "done" goes to the sender. */
int fnv_rdv_pull_locked(struct fnv_ep *ep, const struct fnv_rdv_req *q,
			const struct iovec *iov, size_t count, size_t cap,
			uint16_t node, uint16_t port);
/* Before both: read it straight into iov[0] (true, *fi_err the outcome,
 * the "done" sent), if it is from another node, at most rdv_read_max
 * bytes, iov[0] takes it all and can be written and exported. */
bool fnv_rdv_in_place_locked(struct fnv_ep *ep, const struct fnv_rdv_req *q,
			     const struct iovec *iov, size_t count, size_t cap,
			     uint16_t node, uint16_t port, int *fi_err);
/* Or ask its sender to write it (true): e, its completion (FI_ETRUNC
 * set if cut), waits for the sender's FNV_RDM_FIN; selected: a success
 * writes one too.  false: read it (fnv_rdv_pull_locked). */
bool fnv_rdv_offer_locked(struct fnv_ep *ep, const struct fnv_rdv_req *q,
			  const struct iovec *iov, size_t count, size_t cap,
			  uint16_t node, uint16_t port,
			  const struct fnv_cqe *e, bool selected);
/* A "clear to send" or a "finished" from (node, port): false if it
 * finds no room (dropped, sent again). */
bool fnv_rdv_cts_locked(struct fnv_ep *ep, const uint8_t *payload,
			size_t len, uint16_t node, uint16_t port);
bool fnv_rdv_fin_locked(struct fnv_ep *ep, const uint8_t *payload,
			size_t len, uint16_t node, uint16_t port);
/* The sender need not wait any more (discarded): its "done". */
void fnv_rdv_answer_locked(struct fnv_ep *ep, uint16_t node, uint16_t port,
			   uint64_t id, uint32_t status);
/* A "done" from (node, port): false if its completion finds no room
 * (dropped, sent again). */
bool fnv_rdv_done_locked(struct fnv_ep *ep, const uint8_t *payload,
			 size_t len, uint16_t node, uint16_t port);
/* Each progress pass: queued "done"s, and sends to peers given up. */
void fnv_rdv_progress_locked(struct fnv_ep *ep);
void fnv_rdv_fini(struct fnv_ep *ep);

/* fnv_nvm.c (the unit test replaces these): export [buf, +len) under a
 * fresh key, read-only unless writable, described in *out (a handle, or
 * a negative errno: -EEXIST the range overlaps another export);
 * unexport; read bytes [from, +n) of q's pieces on node into the same
 * places of iov (0 or the completion's FI_E*; on the own node from q's
 * process); write bytes [c->off, +c->piece.len) of q's pieces (this
 * process's exports) into c's export on node (0 or FI_E*). */
int fnv_rdv_export_locked(struct fnv_domain *d, const void *buf, size_t len,
			  bool writable, struct fnv_rdv_piece *out);
void fnv_rdv_unexport_locked(struct fnv_domain *d, int handle);
int fnv_rdv_read_locked(struct fnv_domain *d, uint16_t node,
			const struct fnv_rdv_req *q, const struct iovec *iov,
			size_t count, size_t from, size_t n);
int fnv_rdv_write_locked(struct fnv_domain *d, uint16_t node,
			 const struct fnv_rdv_req *q,
			 const struct fnv_rdv_cts *c);
/* Bytes [0, n) of q's pieces on node straight into dst, which lies in
 * one of this process's exports (0 or FI_E*). */
int fnv_rdv_read_into_locked(struct fnv_domain *d, uint16_t node,
			     const struct fnv_rdv_req *q, void *dst, size_t n);
/* fnv_rdv_cache.c: the two above keep a rendezvous's exports for the next
 * message on the same buffer (rekeyed at its end, idle); these make and
 * remove one outright (fnv_nvm.c; the ack table's too), give one a fresh
 * key and name (0 or a negative errno; piece's key and nvm_key follow),
 * remove the idle ones kept on pages of [buf, +len) (how many), and
 * forget them all once the domain's endpoint is gone. */
int fnv_nvm_export_locked(struct fnv_domain *d, const void *buf, size_t len,
			  bool writable, struct fnv_rdv_piece *out);
void fnv_nvm_unexport_locked(struct fnv_domain *d, int handle);
int fnv_nvm_rekey_locked(struct fnv_domain *d, int handle,
			 struct fnv_rdv_piece *piece);
int fnv_rdv_cache_evict_locked(struct fnv_domain *d, const void *buf,
			       size_t len);
void fnv_rdv_cache_fini(struct fnv_domain *d);
/* fnv_nvm.c too: read slot's 8 bytes of the ack table key names on
 * another node (imported once, kept): 0 or a negative errno.  The table
 * itself is exported with fnv_nvm_export_locked. */
int fnv_rdm_table_read_locked(struct fnv_domain *d, uint16_t node,
			      uint64_t key, uint32_t slot, uint64_t *val);

/* fnv_rdm_ops.c */
extern struct fi_ops_msg fnv_rdm_msg_ops;
extern struct fi_ops_tagged fnv_rdm_tagged_ops;

#endif
