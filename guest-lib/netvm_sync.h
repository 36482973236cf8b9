/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * libnetvm synchronisation library: NetVM's (thesis chapter 8) MCS locks,
 * wait queues, Mesa monitors with condition variables and counting
 * semaphores over remote atomics and notifying writes, a barrier, and
 * channels (chapter 7: a credit-based ring with sent/replenish
 * notifications).  docs/api.md has the reference and the rules.
 *
 * A group is n processes ("members", ranks 0..n-1), one endpoint each,
 * usually on n nodes.  Each member exports a sync area (three pages)
 * holding, per object, the object's central block when it is the
 * object's home, and its own queue node (next, count, grant words).
 * Objects are numbered 0..NETVM_SYNC_OBJS-1 by the application, the same
 * number on every member; object k wakes its waiters with notification
 * NETVM_SYNC_NOTF_BASE + k, the barrier uses NETVM_SYNC_NOTF_BARRIER and
 * proxied atomics NETVM_SYNC_NOTF_REPLY, so applications keep
 * notifications 1..NETVM_SYNC_NOTF_FIRST-1 for themselves (and must not
 * arm the library's).
 *
 * Members must be on distinct nodes: the NI has no loopback, so nothing
 * can reach its own node through it.  A member's atomics on central
 * blocks it is home to are therefore proxied: member (h + 1) % n runs a
 * second endpoint, served by the library's handler thread, that performs
 * them on h's behalf, so every access to a central block goes through
 * h's NI, which serialises them (docs/api.md).
 *
 * Every call returns 0 (or a count >= 0) or a negative errno: the errors
 * of the underlying NetVM calls, -ETIMEDOUT when a wait exceeds the
 * group's timeout (the object is then unusable: a lock chain or queue
 * may be left waiting for this member), -EPERM (release of a lock not
 * held), -EDEADLK (acquire of a lock held), -EALREADY (queued already),
 * -EINVAL.  Thread safety: a group is used by one thread at a time, like
 * its handle; use one handle and group per thread otherwise.
 */
#ifndef NETVM_SYNC_H
#define NETVM_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "netvm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NETVM_SYNC_MAX_MEMBERS	64
#define NETVM_SYNC_OBJS		64
#define NETVM_SYNC_NOTF_BASE	(NETVM_NOTF_MAX + 1 - NETVM_SYNC_OBJS)	/* 960 */
#define NETVM_SYNC_NOTF_BARRIER	(NETVM_SYNC_NOTF_BASE - 1)		/* 959 */
#define NETVM_SYNC_NOTF_REPLY	(NETVM_SYNC_NOTF_BASE - 2)		/* 958 */
#define NETVM_SYNC_NOTF_FIRST	NETVM_SYNC_NOTF_REPLY	/* the library's from here */

struct netvm_sync;

struct netvm_sync_member {
	uint32_t node;
	uint32_t port;
};

/*
 * Join the group members[0..n-1] (2..64 of them, on distinct nodes) as
 * member me: export this member's sync area under name (the same on
 * every member; 1..29 characters), open the proxy endpoint (a second
 * endpoint on nv's device, exporting name + ".p"), import every member's
 * area (retrying while a member has not exported yet, up to timeout_ms),
 * then wait in a barrier for all of them.  timeout_ms (> 0) also bounds
 * every later wait.  nv must have an endpoint registered.
 * Errors: -EINVAL, -ENAMETOOLONG, -ENXIO (no endpoint), -ETIMEDOUT,
 * register/export/import errors.
 */
int netvm_sync_open(struct netvm *nv, const char *name,
		    const struct netvm_sync_member *members, unsigned int n,
		    unsigned int me, int timeout_ms, struct netvm_sync **out);
/* Leave: close the proxy endpoint, unexport and free (NULL accepted).
 * Others must be done with this member's objects (a barrier first). */
int netvm_sync_close(struct netvm_sync *s);
unsigned int netvm_sync_rank(const struct netvm_sync *s);
unsigned int netvm_sync_size(const struct netvm_sync *s);
/* Wait until every member has called it as often as this one. */
int netvm_sync_barrier(struct netvm_sync *s);

/* An object: its home member (holding its central block) and number. */
struct netvm_sync_obj {
	struct netvm_sync *s;
	uint32_t home;
	uint32_t id;
	uint32_t state;		/* this member's: held / queued (library's) */
};

/* MCS lock (NetVM's acquire/release).  FIFO; a waiter spins briefly on
 * its notification, then sleeps; the holder hands the lock over with a
 * notifying write. */
int netvm_mcs_init(struct netvm_sync *s, struct netvm_sync_obj *lock,
		   unsigned int home, unsigned int id);
int netvm_mcs_acquire(struct netvm_sync_obj *lock);
int netvm_mcs_release(struct netvm_sync_obj *lock);

/* Wait queue (insertQ / waitQ / removeQ).  netvm_wq_remove wakes the
 * front waiter and returns 1, or returns 0 and the signal is lost (queue
 * empty, or its front not yet known: then it is woken as soon as it is). */
int netvm_wq_init(struct netvm_sync *s, struct netvm_sync_obj *wq,
		  unsigned int home, unsigned int id);
int netvm_wq_insert(struct netvm_sync_obj *wq);
int netvm_wq_wait(struct netvm_sync_obj *wq);
int netvm_wq_remove(struct netvm_sync_obj *wq);

/* Mesa monitor: a lock; condition variables are wait queues.  cond_wait
 * queues, leaves the monitor, sleeps, re-enters: re-check the condition.
 * cond_signal wakes one waiter (or none) and keeps the monitor. */
int netvm_mon_enter(struct netvm_sync_obj *mon);
int netvm_mon_exit(struct netvm_sync_obj *mon);
int netvm_cond_wait(struct netvm_sync_obj *mon, struct netvm_sync_obj *cv);
int netvm_cond_signal(struct netvm_sync_obj *mon, struct netvm_sync_obj *cv);

/* Counting semaphore (Swait / Ssignal) on semP / semV.  The home sets the
 * initial count in netvm_sem_init (others pass any value); everyone must
 * have returned from netvm_sem_init before anyone waits or signals (a
 * barrier).  netvm_sem_wait returns the count before it took one (> 0),
 * or 0 when it had to wait; netvm_sem_signal returns the count after it
 * (0 when it woke a waiter). */
int netvm_sem_init(struct netvm_sync *s, struct netvm_sync_obj *sem,
		   unsigned int home, unsigned int id, uint32_t value);
int netvm_sem_wait(struct netvm_sync_obj *sem);
int netvm_sem_signal(struct netvm_sync_obj *sem);

/* ---- channels -------------------------------------------------------- */

struct netvm_chan;

struct netvm_chan_cfg {
	const char *name;	/* 1..28 characters; the same on both sides */
	uint32_t nbuf;		/* ring entries, >= 2 */
	uint32_t msg_max;	/* largest message, bytes (>= 1) */
	uint32_t refill;	/* replenish every refill messages, 1..nbuf-1 */
	uint32_t sent_notf;	/* at the receiver, 1..NETVM_SYNC_NOTF_FIRST-1 */
	uint32_t repl_notf;	/* at the sender, likewise */
	int timeout_ms;		/* > 0: opening, and each wait */
};

/*
 * One-way channel from a sender to a receiver (each names the other's
 * node and port).  The receiver exports the ring under cfg->name, the
 * sender a staging ring and its replenish word under cfg->name + ".s";
 * opening does not wait for the peer: each imports the other's at its
 * first send/receive, retrying until cfg->timeout_ms.
 * Errors: -EINVAL, -ENAMETOOLONG, -ENXIO, -ENOMEM, -EEXIST (name in use),
 * and at first use -ETIMEDOUT and the import's.
 */
int netvm_chan_open_send(struct netvm *nv, unsigned int node,
			 unsigned int port, const struct netvm_chan_cfg *cfg,
			 struct netvm_chan **out);
int netvm_chan_open_recv(struct netvm *nv, unsigned int node,
			 unsigned int port, const struct netvm_chan_cfg *cfg,
			 struct netvm_chan **out);
/* Send len bytes (1..msg_max, else -EMSGSIZE; -EINVAL on a receiver):
 * waits for a credit when the ring is full (-ETIMEDOUT), copies msg,
 * queues the notifying write; msg is reusable on return. */
int netvm_chan_send(struct netvm_chan *ch, const void *msg, size_t len);
/* Receive the next message (-ETIMEDOUT after cfg.timeout_ms): *msg points
 * into the ring and stays valid until the next receive; *len its size.
 * Messages already in the ring are still received after the sender has
 * closed (replenishing it then stops quietly). */
int netvm_chan_recv(struct netvm_chan *ch, const void **msg, size_t *len);
/* Flush (a sender's writes complete or report their error), unexport,
 * free.  NULL accepted. */
int netvm_chan_close(struct netvm_chan *ch);

#ifdef __cplusplus
}
#endif

#endif /* NETVM_SYNC_H */
