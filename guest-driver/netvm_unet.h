/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netvm.ko: U-Net message endpoints (netvm_unet.c, docs/unet.md).
 *
 * Locking: netvm_eps.lock (mutex) guards the port table, which U-Net
 * endpoints share with NetVM's (a placeholder struct netvm_ep holds the
 * port); netvm_unet.lock (mutex) guards the endpoint's channel table and
 * is taken inside netvm_file.lock, never with netvm_eps.lock held.  The
 * rest of struct netvm_unet is set once at open and read-only after.
 * Per NIC (struct netvm_unet_dev, netvm_dev.unet):
 * Upcalls: a table port -> endpoint (@irq), guarded by an IRQ-safe
 * spinlock (@irq_lock), lets the event IRQ handler reach the endpoint's
 * fasync list; entries are set after open and cleared before release
 * frees the endpoint.
 * Diverted messages: a mutex (@div_lock) guards the NIC's divert ring and
 * its count of users; the worker that hands records to endpoints holds
 * it, and release takes it once after unlisting the endpoint, so the
 * worker never sees a freed one.  Order: netvm_unet_dev.div_lock, then
 * netvm_unet.dlock, then netvm_nv.lock (control commands).
 */
#ifndef NETVM_UNET_DRV_H
#define NETVM_UNET_DRV_H

#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include <netvm/lanai_event.h>
#include <netvm/unet_abi.h>

struct netvm_dev;
struct netvm_ep;
struct netvm_export;
struct netvm_file;

/*
 * FUGU's buffered path: a divert ring the firmware writes undeliverable
 * messages to, and a worker that appends each to its endpoint's pageable
 * FIFO.  Set up with the NIC's first U-Net endpoint.
 */
struct netvm_unet_div {
	u32 users;			/* U-Net endpoints open */
	void *ring;
	dma_addr_t dma;
	u32 cons;			/* records handed on */
	atomic_t prod;			/* records written (events) */
	bool ready;			/* the IRQ handler may queue work */
	struct work_struct work;
};

/* U-Net's state of one NIC; locking above. */
struct netvm_unet_dev {
	spinlock_t irq_lock;		/* irq[] */
	struct netvm_unet *irq[NVM_UNET_VPORT_MAX];	/* upcall targets */
	struct mutex div_lock;		/* div, and endpoints' lifetimes */
	struct netvm_unet_div div;
};

/*
 * A kernel-emulated endpoint's receive path, as the NI's (fw_unet.h's
 * enum fw_unet_ep_state, open states): direct into the receive queue;
 * diverting into the FIFO, in order, until it empties; diverting with
 * its senders held (the FIFO passed the mark).  A hold ends (HELD ->
 * DIVERT) before direct delivery or closing.
 */
enum netvm_unet_emu_state {
	NETVM_UNET_EMU_DIRECT,
	NETVM_UNET_EMU_DIVERT,
	NETVM_UNET_EMU_HELD,
	NETVM_UNET_EMU_STATES
};

struct netvm_unet_chan_rec {
	bool open;
	u32 node;
	u32 port;
	u32 tag;
};

struct netvm_unet {
	struct netvm_dev *nd;
	struct netvm_ep *slot;		/* holds the port in eps.ep[] */
	u32 port;
	struct mm_struct *mm;		/* mmgrab()ed: the owner */
	void *host;			/* receive queue, then the segment */
	dma_addr_t host_dma;
	size_t host_size;
	u32 seg_off;
	u32 seg_size;
	struct netvm_export *seg_exp;	/* pageable: the segment's tracking */
	u32 buf_size;
	u32 rxq_len;
	struct mutex lock;		/* ch[] */
	struct netvm_unet_chan_rec ch[NVM_UNET_CHANNELS];
	struct fasync_struct *fasync;	/* upcall targets (fcntl O_ASYNC) */
	/* diverted messages (FUGU), in pageable shmem: a byte FIFO */
	struct mutex dlock;		/* dfile, dhead, dtail, dcount, overflow */
	struct file *dfile;		/* made at the first divert */
	u32 dcap;			/* its hard bound, bytes (see fifo_put) */
	u32 dhiwat;			/* the high-water mark (unet_divert_kib) */
	u64 dhead, dtail;		/* free-running byte offsets */
	u32 dcount;			/* records buffered (read locklessly by poll) */
	u32 overflow;			/* dropped: the buffer was at its bound */
	bool holding;			/* dlock: HOLD asked, no DIRECT since */
	bool direct_owed;		/* dlock: emptied; DIRECT not yet taken */
	u32 hold_nudge;			/* dlock: records since the last HOLD */
	/* a kernel-emulated endpoint (netvm_unet_emu.c): the driver is its NI */
	bool emulated;
	void *vsram;			/* NVM_EP_STRIDE bytes for the "SRAM region" */
	void *vdb;			/* a page standing in for the doorbell */
	void *ks;			/* the message being sent (coherent) */
	dma_addr_t ks_dma;
	wait_queue_head_t ewq;		/* its sleepers */
	struct mutex elock;		/* est, e_* */
	struct nvm_unet_status est;	/* what an NI would publish */
	bool edge_owed;			/* elock: as fw_unet_ep.edge_owed */
	/*
	 * Its overflow control (docs/unet.md).  Sending side: the holds its
	 * receivers asserted (control frames reach the driver as events, in
	 * IRQ context), per channel until a time; etx sends what waited at a
	 * RELEASE or when a hold lapses (e_timer).  Receiving side: HELD
	 * while its FIFO is past the mark; ehold refreshes the HOLD frames
	 * (NVM_KOP_UNET_KCTL) and retries the ones that could not go.
	 */
	spinlock_t hlock;		/* e_held, e_until, e_dropped, e_dead */
	u16 e_held;			/* channels held by their receivers */
	unsigned long e_until[NVM_UNET_CHANNELS];	/* ... until (jiffies) */
	u32 e_dropped;			/* DROPPED notices not yet published */
	bool e_dead;			/* closing: the timer is not armed again */
	struct timer_list e_timer;	/* the earliest hold's end */
	struct work_struct etx;
	enum netvm_unet_emu_state e_state;	/* elock */
	u16 e_ctl_due;			/* elock: channels owed HOLD/RELEASE */
	struct delayed_work ehold;
};

long netvm_unet_ioctl(struct netvm_file *nf, unsigned int cmd,
		      void __user *u);
int netvm_unet_mmap(struct netvm_file *nf, struct vm_area_struct *vma);
__poll_t netvm_unet_poll(struct netvm_file *nf, struct file *file,
			 struct poll_table_struct *wait);
void netvm_unet_release(struct netvm_file *nf);
int netvm_unet_fasync(struct netvm_file *nf, int fd, struct file *file,
		      int on);
void netvm_unet_event(struct netvm_dev *nd, const struct nvm_event *ev);
void netvm_unet_divert_event(struct netvm_dev *nd, const struct nvm_event *ev);
void netvm_unet_dev_init(struct netvm_dev *nd);

/* netvm_unet.c, for netvm_unet_emu.c and netvm_unet_sched.c */
void __iomem *netvm_unet_region(struct netvm_unet *u);	/* its SRAM region */
bool netvm_unet_fifo_put(struct netvm_unet *u, u32 msgno, u32 channel,
			 u32 dsm, u32 src, const void *data, u32 len);

/* netvm_unet_sched.c: FUGU's "process not running" */
int netvm_unet_sched(struct netvm_unet *u, u32 __user *uarg);
void netvm_unet_sched_release(struct netvm_unet *u);
void netvm_unet_sched_exit(void);

/* netvm_unet_emu.c: kernel-emulated endpoints */
int netvm_unet_emu_setup(struct netvm_unet *u);
void netvm_unet_emu_free(struct netvm_unet *u);
int netvm_unet_emu_kick(struct netvm_unet *u);
void netvm_unet_emu_deliver(struct netvm_unet *u,
			    const struct nvm_unet_div_rec *r);
int netvm_unet_emu_mmap(struct netvm_unet *u, struct vm_area_struct *vma,
			unsigned long off);
__poll_t netvm_unet_emu_poll(struct netvm_unet *u, struct file *file,
			     struct poll_table_struct *wait);
bool netvm_unet_emu_direct(struct netvm_unet *u);
void netvm_unet_emu_ctl(struct netvm_unet *u, u32 data, u64 arg);
void netvm_unet_emu_close(struct netvm_unet *u);

#endif /* NETVM_UNET_DRV_H */
