/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/* libnetvm internal: the handle. */
#ifndef NETVM_PRIV_H
#define NETVM_PRIV_H

#include <stdint.h>

#include <netvm/netvm_fw.h>
#include <netvm/netvm_uapi.h>

#include "netvm.h"

#define NETVM_PUBLIC __attribute__((visibility("default")))

#define NVL_MAX_EXPORTS		64
#define NVL_MAX_IMPORTS		64
#define NVL_STASH		1024	/* notification entries drained */

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
	struct nvl_export exp[NVL_MAX_EXPORTS];
	struct nvl_import imp[NVL_MAX_IMPORTS];
};

void nvl_ep_close(struct netvm *nv);

#endif /* NETVM_PRIV_H */
