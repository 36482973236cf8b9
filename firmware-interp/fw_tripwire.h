/* SPDX-License-Identifier: GPL-2.0-only */
/* Tripwires: the firmware's table and matcher (fw_tripwire.c). */
#ifndef FW_TRIPWIRE_H
#define FW_TRIPWIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "netvm/tripwire.h"

#define FW_TW_BUCKETS		1024	/* hash of (node, port, page) */

struct fw_tw_entry {
	uint64_t va;
	uint16_t len;		/* 1..4096 (0: entry unused) */
	uint16_t flags;		/* NVM_TW_* */
	uint16_t node, port;	/* whose memory */
	uint16_t owner;		/* endpoint told of hits */
	uint16_t next;		/* bucket chain: next id + 1, 0 at the end */
	uint32_t hits;
};

/* Saved with the rest of struct fw.  A hit costs one hash and a walk of
 * the bucket's chain, so matching does not slow the stream. */
struct fw_tw {
	struct fw_tw_entry e[NVM_TW_MAX];
	uint16_t head[FW_TW_BUCKETS];	/* first id + 1, 0: empty */
	uint32_t count;
};

struct fw;
struct nvm_cmd;

void fw_tw_clear_owner(struct fw *fw, uint32_t owner);
/*
 * An access of kind @access (NVM_TW_READ / NVM_TW_WRITE, | NVM_TW_OUTGOING
 * for our own) to [va, va + len) of node:port by (by_node, by_port) — for
 * an outgoing access, by_* is the target.  Fires every matching tripwire.
 */
void fw_tw_access(struct fw *fw, uint32_t access, uint32_t node,
		  uint32_t port, uint64_t va, uint32_t len, uint32_t by_node,
		  uint32_t by_port);

#endif
