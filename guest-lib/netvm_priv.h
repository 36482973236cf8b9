/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/* libnetvm internal: the handle. */
#ifndef NETVM_PRIV_H
#define NETVM_PRIV_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <netvm/netvm_fw.h>
#include <netvm/netvm_uapi.h>
#include <netvm/tripwire.h>

#include "netvm.h"

#define NETVM_PUBLIC __attribute__((visibility("default")))

#define NVL_MAX_EXPORTS		64
#define NVL_MAX_IMPORTS		64
#define NVL_STASH		1024	/* notification entries drained */
#define NVL_TRIPQ		1024	/* tripwire hits drained */

struct nvl_export {
	int used;
	uint64_t addr;
	uint64_t len;
	uint64_t key;
	uint32_t flags;
	char name[NETVM_NAME_MAX];
};

struct nvl_import {
	int used;
	uint32_t node;
	uint32_t port;
	uint64_t addr;
	uint64_t len;
	uint64_t key;
	uint32_t pt_rows;
	uint32_t flags;
	char name[NETVM_NAME_MAX];
};

/*
 * Handlers of armed notifications (netvm_notf_arm), run by one
 * library-owned thread per handle.  Protected by netvm.notf_mu.
 */
struct nvl_handlers {
	netvm_notf_handler fn[NVM_NOTF_COUNTING];
	void *arg[NVM_NOTF_COUNTING];
	uint16_t armed[NVM_NOTF_COUNTING];	/* the armed numbers, unordered */
	uint32_t n_armed;
	uint32_t running;	/* the number whose handler runs now, or 0 */
	int started;		/* the thread exists */
	int stop;		/* asks it to exit */
	int wake_fd;		/* eventfd: wakes its poll(2) */
	pthread_t thread;
	pthread_cond_t done;	/* signalled after each handler call */
};

/*
 * Locking: the fields up to the endpoint are set by open/register and
 * then read-only.  The notification state (notf_cons, stash*, hd, and the
 * ack counters of armed numbers) is shared with the handler thread and
 * protected by notf_mu.  Everything else (command queue, error ring,
 * export and import tables) belongs to the one thread that makes NetVM
 * calls on the handle at a time (docs/api.md, Thread safety).
 */
struct netvm {
	int fd;
	struct netvm_info info;		/* as read at open */
	char path[128];

	/* the endpoint (netvm_register); efd < 0 without one */
	int efd;
	struct netvm_ep_info ep;
	volatile uint8_t *sram;
	volatile uint32_t *db;
	volatile uint8_t *host;
	uint32_t issued;		/* commands issued, free-running */
	uint32_t errs_seen;		/* error records consumed */
	uint32_t notf_cons;		/* ring entries consumed */
	struct netvm_notf stash[NVL_STASH];
	uint32_t stash_head;
	uint32_t stash_count;
	pthread_mutex_t notf_mu;
	struct nvl_handlers hd;
	struct netvm_trip_event tripq[NVL_TRIPQ];	/* notf_mu */
	uint32_t tripq_head;
	uint32_t tripq_count;
	int sleepers;			/* threads in nvl_notf_sleep, arm_mu */
	int arm_holders;		/* sleepers, the handler thread while
					 * it has a number armed; arm_mu */
	int arm_forever;		/* netvm_ep_fd() was called; arm_mu */
	pthread_mutex_t arm_mu;
	uint32_t hide_lo;		/* numbers kept out of the queue */
	uint32_t hide_hi;		/* (the sync library's); 0: none */
	struct nvl_export exp[NVL_MAX_EXPORTS];
	struct nvl_import imp[NVL_MAX_IMPORTS];
};

void nvl_ep_close(struct netvm *nv);
/* netvm_notf.c: per-handle setup, and stopping the handler thread (before
 * the endpoint's mappings go away).  nvl_notf_stop returns -EDEADLK when
 * called from a handler. */
void nvl_notf_init(struct netvm *nv);
int nvl_notf_stop(struct netvm *nv);
void nvl_notf_fini(struct netvm *nv);
/* netvm_sync.c: wait for one event of notf (spin briefly, then sleep)
 * and acknowledge it. */
int nvl_notf_take(struct netvm *nv, uint32_t notf, int timeout_ms);
/* netvm_notf.c: keep the queue entries of lo..hi out of netvm_notfq_*. */
void nvl_notf_hide(struct netvm *nv, uint32_t lo, uint32_t hi);
/* netvm_notf.c, for netvm_trip.c: take the ring's new entries (notf_mu
 * held); sleep in poll(2) until it may have more (0, -ETIMEDOUT, -EINTR);
 * a deadline timeout_ms from now. */
void nvl_notf_drain(struct netvm *nv);
int nvl_notf_sleep(struct netvm *nv, uint64_t deadline, int forever);
void nvl_arm_hold(struct netvm *nv, int one_shots);
void nvl_arm_release(struct netvm *nv, int one_shots);
void nvl_arm_forever(struct netvm *nv);
uint64_t nvl_deadline(int timeout_ms);

static inline uint64_t nvl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint32_t nvl_ld32(const volatile void *p)
{
	return __atomic_load_n((const volatile uint32_t *)p, __ATOMIC_ACQUIRE);
}

static inline volatile uint32_t *nvl_sram32(struct netvm *nv, uint32_t off)
{
	return (volatile uint32_t *)(nv->sram + off);
}

#endif /* NETVM_PRIV_H */
