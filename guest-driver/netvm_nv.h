/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netvm.ko: NetVM's kernel endpoint (port 0) and the in-kernel
 * physical-address API (NetVM's writeP/readP and atomics).
 *
 * Locking: struct netvm_nv.lock (a mutex) serialises every user of the
 * kernel endpoint: it protects @issued, @err_seen, the command queue in
 * SRAM and the host areas (shadow, error ring, reply) while a caller
 * issues commands and waits for their completion.  The callers sleep
 * (usleep_range) while they poll, so none of it may run in atomic
 * context.  The event counters are atomic64_t (updated by the event IRQ).
 * The buffers themselves are set up in probe before any ioctl can run and
 * freed in remove after the ioctls have drained (netvm_dev.lifetime).
 */
#ifndef NETVM_NV_DRV_H
#define NETVM_NV_DRV_H

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/types.h>

#include <netvm/lanai_event.h>
#include <netvm/kop.h>		/* and netvm/netvm_fw.h */
#include <netvm/packet.h>

struct netvm_dev;

#define NETVM_NV_MAX_NODES	8	/* bounce buffer partitions */
#define NETVM_NV_NOTF_LEN	256	/* notification ring entries */
#define NETVM_NV_INFLIGHT	32	/* most commands in flight per caller */
#define NETVM_NV_ROUTE_NODES	NVM_NODES	/* node ids with a route */
#define NETVM_NV_GRACE_MS	4000	/* a kernel call waits giveup_ms + this */

struct netvm_nv {
	bool enabled;		/* CONFIG and EP_OPEN succeeded */
	struct mutex lock;	/* the kernel endpoint, see above */
	u32 issued;		/* commands written (free-running); lock */
	u32 err_seen;		/* error records consumed; lock */
	u32 epoch;
	u32 giveup_ms;		/* the firmware's give-up (nv_giveup_ms) */
	/* source routes given to the firmware (netvm_route.c); lock */
	u8 route[NETVM_NV_ROUTE_NODES][NVM_ROUTE_MAX];
	u8 route_len[NETVM_NV_ROUTE_NODES];
	u32 max_ppn;
	u32 pt_rows;

	void __iomem *ep;	/* SRAM region of endpoint 0 */
	void __iomem *doorbell;	/* doorbell page 0 */

	/* host areas of endpoint 0: one coherent block */
	void *host;
	dma_addr_t host_dma;
	struct nvm_shadow *shadow;
	struct nvm_err_rec *err_ring;
	struct nvm_atomic_reply *reply;
	struct nvm_notf_entry *notf;

	void *bounce;		/* nvm_bounce_bytes(NETVM_NV_MAX_NODES) */
	dma_addr_t bounce_dma;
	size_t bounce_size;

	void *ktest;		/* the 1 MiB kernel test window */
	dma_addr_t ktest_dma;

	atomic64_t ev_page_miss;
	atomic64_t ev_bounce;
	atomic64_t ev_notify;
};

int netvm_nv_init(struct netvm_dev *nd);
void netvm_nv_free(struct netvm_dev *nd);
void netvm_nv_event(struct netvm_dev *nd, const struct nvm_event *ev);
long netvm_nv_ioc_ktest(struct netvm_dev *nd, void __user *uarg);
long netvm_nv_ioc_kbench(struct netvm_dev *nd, void __user *uarg);

/*
 * Physical-address transfers to and from node @node's kernel.  Addresses
 * are bus (DMA) addresses; any length, fragmented at page boundaries on
 * both sides.  Sleep; return 0, -EHOSTUNREACH, -EPERM, -EIO, -EINVAL,
 * -ECONNRESET, -ETIMEDOUT or -ENODEV (NetVM off or device gone).
 */
int nv_write_phys(struct netvm_dev *nd, u16 node, u64 local_pa, u64 remote_pa,
		  u32 len);
int nv_read_phys(struct netvm_dev *nd, u16 node, u64 local_pa, u64 remote_pa,
		 u32 len);
int nv_atomic_phys(struct netvm_dev *nd, u16 node, u64 remote_pa, u32 op,
		   u32 a0, u32 a1, u32 r[3]);
/*
 * The general form: @op NVM_OP_WRITE or NVM_OP_READ; @local_va, if not
 * NULL, maps local_pa (writes of at most NVM_INLINE_MAX bytes per command
 * then go inline); at most @inflight (1..NETVM_NV_INFLIGHT) in flight.
 */
int nv_xfer_phys(struct netvm_dev *nd, u8 op, u16 node, u64 local_pa,
		 const void *local_va, u64 remote_pa, u32 len, u32 inflight);

/* A kernel control command on the open endpoint; caller holds nv->lock. */
int nv_kcmd_locked(struct netvm_dev *nd, struct nvm_cmd *c);
int nv_kcmd(struct netvm_dev *nd, u8 op, u16 node, u16 port, u32 a0, u32 a1,
	    const void *data, size_t len);

/* netvm_route.c: the "routes" sysfs attribute (NVM_KOP_ROUTE). */
extern struct device_attribute dev_attr_routes;

#endif /* NETVM_NV_DRV_H */
