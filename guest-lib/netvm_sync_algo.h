/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * libnetvm internal: the synchronisation algorithms' view of a group --
 * the sync area layout and three transport operations.  netvm_sync.c
 * binds them to NetVM (remote atomics, notifying writes, notification
 * waits); the unit test binds them to a simulated group in one process.
 */
#ifndef NETVM_SYNC_ALGO_H
#define NETVM_SYNC_ALGO_H

#include <stdint.h>

#include "netvm_sync.h"

#ifndef NETVM_PUBLIC
#define NETVM_PUBLIC __attribute__((visibility("default")))
#endif

/* Sync area: three pages per member. */
#define NVS_AREA_SIZE		(3 * 4096u)
#define NVS_HDR_MAGIC		0	/* word: "NVSY" */
#define NVS_BAR_COUNT		8	/* word at rank 0: arrivals, ever */
#define NVS_BAR_RELEASE		12	/* word: last barrier released */
#define NVS_SVC_PORT		16	/* word: this member's proxy endpoint */
#define NVS_SCRATCH		20	/* word: a local read target */
#define NVS_REPLY		32	/* seq, err, r[3]: a proxied atomic's */
#define NVS_CENTRAL(id)		(4096u + 32u * (id))	/* H T C P S; MCS tail = H */
#define NVS_QNODE(id)		(8192u + 16u * (id))
#define NVS_Q_NEXT		0	/* successor's rank, NETVM_WQ_EMPTY */
#define NVS_Q_CNT		4	/* waiters left behind me (wake-up value) */
#define NVS_Q_GRANT		8	/* lock hand-off word */
#define NVS_MAGIC		0x5953564eu

#define NVS_HELD		0x1	/* netvm_sync_obj.state */
#define NVS_QUEUED		0x2

struct nvs_ops {
	/* NVM_AT_* on member m's area at off; r as enum nvm_atomic_op */
	int (*atomic)(void *ctx, uint32_t m, uint32_t off, uint32_t op,
		      uint32_t a0, uint32_t a1, uint32_t r[3]);
	/* store val at off of member m's area and, if notf, signal notf
	 * there after it; returns once done */
	int (*put)(void *ctx, uint32_t m, uint32_t off, uint32_t val,
		   uint32_t notf);
	/* wait up to timeout_ms for one event of notf here; acknowledge it */
	int (*wait)(void *ctx, uint32_t notf, int timeout_ms);
};

/* Groups are used by one thread at a time (netvm_sync.h). */
struct netvm_sync {
	const struct nvs_ops *ops;
	void *ctx;
	uint32_t me;
	uint32_t n;
	volatile uint32_t *area;	/* this member's sync area */
	int timeout_ms;
	uint32_t bar_gen;		/* barriers passed */
};

/* Initial contents of a sync area (before it is exported). */
void nvs_area_init(volatile uint32_t *area, uint32_t n);

#endif /* NETVM_SYNC_ALGO_H */
