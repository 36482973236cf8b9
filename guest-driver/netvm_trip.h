/* SPDX-License-Identifier: GPL-2.0-only */
/* netvm.ko: tripwires (netvm_trip.c). */
#ifndef NETVM_TRIP_H
#define NETVM_TRIP_H

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/types.h>

struct netvm_dev;
struct netvm_ep;
struct netvm_file;

/*
 * The NIC's tripwire ids and who owns each.  Locking: lock (mutex) guards
 * owner[] and count, and is held across the kernel command that sets or
 * clears the firmware's entry so the two never disagree; it nests inside
 * netvm_ep.lock (the export check) and outside netvm_nv.lock.
 */
struct netvm_trips {
	struct mutex lock;		/* owner[], count */
	struct netvm_ep **owner;	/* NVM_TW_MAX; NULL = free */
	u32 count;
	atomic64_t set;
	atomic64_t cleared;
	atomic64_t refused;
};

int netvm_trip_init(struct netvm_dev *nd);
void netvm_trip_free(struct netvm_dev *nd);
long netvm_trip_ioctl(struct netvm_file *nf, unsigned int cmd,
		      void __user *u);
void netvm_trip_release(struct netvm_dev *nd, struct netvm_ep *ep);
extern struct device_attribute dev_attr_tripwires;

#endif
