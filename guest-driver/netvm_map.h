/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netvm.ko: the node's side of the mapper protocol (include/netvm/mapper.h),
 * netvm_map.c.
 */
#ifndef NETVM_MAP_H
#define NETVM_MAP_H

#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct netvm_dev;
struct netvm_map_req;

#define NETVM_MAP_REQQ		4

/*
 * Scouts and route tables from a mapper.  The raw receive IRQ handler
 * queues them (at most NETVM_MAP_REQQ); the work item answers, since
 * installing routes and sending sleep.
 *
 * Locking: lock (IRQ-safe spinlock) guards reqq, req_head and req_count;
 * generation and the counters are written by the work item only.
 */
struct netvm_map {
	spinlock_t lock;			/* reqq, req_head, req_count */
	struct netvm_map_req *reqq;	/* NETVM_MAP_REQQ entries, lock */
	u32 req_head;
	u32 req_count;
	struct work_struct work;
	u32 generation;			/* of the last table installed */
	u32 mapper_node;		/* who sent it */
	atomic64_t scouts;
	atomic64_t tables;
	atomic64_t dropped;
};

int netvm_map_init(struct netvm_dev *nd);
void netvm_map_free(struct netvm_dev *nd);
bool netvm_map_rx(struct netvm_dev *nd, const void *buf, u32 len, u32 src);
extern struct device_attribute dev_attr_mapper;

/*
 * netvm_route.c: set one NetVM route (NVM_KOP_ROUTE) and the sysfs copy,
 * or take a node's route away entirely
 */
int netvm_route_set(struct netvm_dev *nd, u32 node, const u8 *route, u32 len);
int netvm_route_clear(struct netvm_dev *nd, u32 node);

#endif
