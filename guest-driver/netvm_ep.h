/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netvm.ko: NetVM user endpoints, exports and the shadow page table
 * (netvm_ep*.c; what only they share is in netvm_ep_priv.h).
 * docs/driver.md explains the design.
 *
 * Locking, outermost first:
 *   netvm_eps.lock (mutex)    the endpoint table ep[]; an event worker
 *                             holds it while it handles an event, so an
 *                             endpoint is not closed under it;
 *   netvm_ep.lock (mutex)     the endpoint's export list;
 *   mmap_lock of the process  (taken by the fault paths; held by the mm
 *                             when it calls our invalidate callback);
 *   netvm_eps.pt_lock (mutex) the PT and PMAP in SRAM, owner[] and
 *                             owner_idx[], every export's ppn[] and the
 *                             notifier sequence (mmu_interval_set_seq).
 *                             Nothing is allocated while it is held, so
 *                             reclaim may invalidate under it safely.
 *   netvm_nv.lock (mutex)     the kernel endpoint (control commands); held
 *                             on its own, never while waiting for the above.
 * evlock (IRQ spinlock) guards the event fifo between the IRQ handler
 * and the worker.  The counters are atomic64_t.
 */
#ifndef NETVM_EP_DRV_H
#define NETVM_EP_DRV_H

#include <linux/kfifo.h>
#include <linux/list.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <netvm/lanai_event.h>
#include <netvm/netvm_fw.h>
#include <netvm/netvm_uapi.h>

struct netvm_dev;
struct netvm_ep;
struct fasync_struct;

#define NETVM_EP_MAX		NVM_EP_COUNT	/* ports; 0 = kernel */
#define NETVM_EP_NOTF_LEN	256
#define NETVM_EP_HOST_SIZE	(2 * 4096)
#define NETVM_EP_EVQ		512	/* events waiting for the worker */

/*
 * Paging counters, kept per device (netvm_eps.cnt) and per endpoint
 * (netvm_ep.cnt); names in netvm_ep_counter_names[].  EPC_EVQ_OVERFLOW
 * and later are per device only.
 */
enum netvm_ep_counter {
	EPC_INSTALLS,
	EPC_REMOVALS,
	EPC_INVALIDATIONS,
	EPC_UNMAP_WAITS,
	EPC_UNMAP_TIMEOUTS,
	EPC_PAGE_MISSES,
	EPC_RESTARTS,
	EPC_MISS_ERRORS,
	EPC_BOUNCES,
	EPC_BOUNCE_REFUSED,
	EPC_DIRTY,
	EPC_REKEY_WAITS,
	EPC_REKEY_TIMEOUTS,
	EPC_EVQ_OVERFLOW,	/* per device from here */
	EPC_SIGNALS,
	EPC_MAX
};

#define EPC_PER_EP	EPC_EVQ_OVERFLOW

/* One exported range; on netvm_ep.exports. */
struct netvm_export {
	struct list_head node;		/* netvm_ep.lock */
	struct netvm_ep *ep;
	struct mmu_interval_notifier mni;
	unsigned long start;		/* page aligned */
	unsigned long end;
	u64 addr;			/* as asked for (import replies) */
	u64 len;
	unsigned long npages;
	u64 key;
	bool ro;
	char name[32];
	u32 *ppn;			/* per page, 0 = none; pt_lock */
};

/* One user endpoint, owned by the open file that made it. */
struct netvm_ep {
	struct netvm_dev *nd;
	u32 port;
	struct mm_struct *mm;		/* mmgrab()ed at EP_OPEN */
	void *host;			/* NETVM_EP_HOST_SIZE, coherent */
	dma_addr_t host_dma;
	struct mutex lock;		/* exports */
	struct list_head exports;
	pid_t pid;			/* tgid of the opener */
	bool unet;			/* a U-Net endpoint's placeholder */
	struct kobject *kobj;		/* endpoints/<port>/ (netvm_obs.c) */
	atomic64_t cnt[EPC_PER_EP];
};

struct netvm_eps {
	bool ready;			/* NetVM on and the tables known */
	struct mutex lock;		/* ep[] */
	struct netvm_ep *ep[NETVM_EP_MAX];
	wait_queue_head_t wq[NETVM_EP_MAX];	/* notifications, per port */

	struct mutex pt_lock;		/* see above */
	u32 max_ppn;
	u32 pt_rows;
	struct netvm_export **owner;	/* per PPN: whose translation */
	u32 *owner_idx;			/* per PPN: page index in it */

	spinlock_t evlock;		/* evq: IRQ handler vs worker */
	DECLARE_KFIFO(evq, struct nvm_event, NETVM_EP_EVQ);
	struct work_struct work;
	struct workqueue_struct *wq_ev;

	atomic64_t cnt[EPC_MAX];
	bool events_lost;	/* evq overflowed: set by the IRQ, taken (xchg) by the worker */
	/* O_ASYNC owners per port; fasync_helper's own locking, RCU readers */
	struct fasync_struct *fasync[NETVM_EP_MAX];
	struct kobject *ep_dir;		/* endpoints/ (netvm_obs.c) */
	struct dentry *debugfs;		/* netvm/netvmN/ (netvm_obs.c) */
};

/*
 * Import over the network (netvm_import.c).  lock (IRQ-safe spinlock)
 * guards the pending list and the request fifo between the raw receive
 * IRQ handler and process context; work serves requests from peers.
 */
struct nvm_imp_msg;

struct netvm_imp {
	spinlock_t lock;			/* pending, next_id, reqq */
	struct list_head pending;	/* struct netvm_imp_wait, lock */
	wait_queue_head_t wq;
	u32 next_id;			/* lock */
	struct nvm_imp_msg *reqq;	/* NETVM_IMP_REQQ requests, lock */
	u32 req_head;
	u32 req_count;
	struct work_struct work;
	atomic64_t sent;
	atomic64_t served;
	atomic64_t replies;
	atomic64_t timeouts;
	atomic64_t dropped;
};

/* Per open file of /dev/netvmN. */
struct netvm_file {
	struct netvm_dev *nd;
	struct mutex lock;		/* ep, unet */
	struct netvm_ep *ep;
	struct netvm_unet *unet;	/* U-Net instead (netvm_unet.c) */
};

int netvm_ep_init(struct netvm_dev *nd);
void netvm_ep_free(struct netvm_dev *nd);
void netvm_ep_event(struct netvm_dev *nd, const struct nvm_event *ev);
long netvm_ep_ioctl(struct netvm_file *nf, unsigned int cmd, void __user *u);
int netvm_ep_mmap(struct netvm_file *nf, struct vm_area_struct *vma);
int netvm_mmap_port(struct netvm_dev *nd, struct vm_area_struct *vma,
		    u32 port, void *host, dma_addr_t host_dma, size_t host_size);
void netvm_ep_release(struct netvm_file *nf);
struct netvm_export *netvm_export_add(struct netvm_ep *ep, u64 addr, u64 len,
				      bool ro, const char *name, bool fault);
void netvm_export_del(struct netvm_ep *ep, struct netvm_export *exp);
u64 netvm_export_rekey(struct netvm_export *exp, const char *name);
__poll_t netvm_ep_poll(struct netvm_file *nf, struct file *file,
		       struct poll_table_struct *wait);

/* netvm_import.c */
int netvm_import_init(struct netvm_dev *nd);
void netvm_import_free(struct netvm_dev *nd);
bool netvm_import_rx(struct netvm_dev *nd, const void *buf, u32 len, u32 src);
long netvm_import_ioctl(struct netvm_dev *nd, void __user *u);

extern struct device_attribute dev_attr_ep_counters;
extern const char * const netvm_ep_counter_names[EPC_MAX];
int netvm_ep_fasync(struct netvm_file *nf, int fd, struct file *file, int on);

/* netvm_obs.c: per-endpoint sysfs directories and debugfs */
void netvm_obs_module_init(void);
void netvm_obs_module_exit(void);
void netvm_obs_add(struct netvm_dev *nd);
void netvm_obs_del(struct netvm_dev *nd);
void netvm_obs_ep_add(struct netvm_ep *ep);
void netvm_obs_ep_del(struct netvm_ep *ep);

#endif /* NETVM_EP_DRV_H */
