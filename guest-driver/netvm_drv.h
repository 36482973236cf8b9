/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * netvm.ko: driver for netvm's emulated Myrinet/LANai NIC.
 *
 * Internal structures shared by the driver's files.  The hardware ABI
 * (registers, SRAM layout, events, ioctls) lives in include/netvm/ and is
 * not duplicated here.
 *
 * Contexts: probe/remove run in process context under the device lock.
 * The event queue is drained by the hard IRQ handler of MSI-X vector
 * LANAI_MSIX_EVENTS (never concurrent with itself); the ioctls run in
 * process context.  Each structure below says which lock protects what.
 */
#ifndef NETVM_DRV_H
#define NETVM_DRV_H

#include <linux/atomic.h>
#include <linux/cdev.h>
#include <linux/completion.h>
#include <linux/device.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

#include <netvm/lanai_event.h>
#include <netvm/lanai_regs.h>
#include <netvm/lanai_sram.h>
#include <netvm/netvm_uapi.h>

#include "netvm_nv.h"
#include "netvm_ep.h"
#include "netvm_map.h"
#include "netvm_trip.h"
#include "netvm_unet.h"

#define NETVM_DRV_NAME		"netvm"
#define NETVM_MAX_DEVS		16
#define NETVM_EVQ_LEN		256	/* event queue entries, power of two */
#define NETVM_RXQ_LEN		64	/* raw frames queued for readers */
#define NETVM_TX_TIMEOUT_MS	5000
#define NETVM_FW_TIMEOUT_MS	2000
#define NETVM_RAW_MAX_RING	1024	/* sanity bound on the layout's rings */
#define NETVM_RAW_MAX_PAYLOAD	65536	/* sanity bound on raw_max_payload */

/* State of one raw transmit slot, netvm_raw.tx_slots[i].state. */
enum netvm_tx_state {
	NETVM_TX_FREE = 0,	/* not in use; buffer may be filled */
	NETVM_TX_INFLIGHT,	/* owned by the NIC, a sender waits */
	NETVM_TX_DONE,		/* NIC finished; status valid; sender collects */
	NETVM_TX_ABANDONED,	/* sender gave up; freed by the completion */
};

/*
 * One raw transmit slot: a coherent buffer paired with descriptor i of
 * the firmware's raw tx ring.  @state and @status are protected by
 * netvm_raw.tx_lock; @buf is written only by the sender that moved the
 * slot out of NETVM_TX_FREE (under netvm_raw.tx_mutex).
 */
struct netvm_tx_slot {
	void *buf;
	dma_addr_t dma;
	enum netvm_tx_state state;
	u8 status;		/* enum nvm_raw_status from the event */
};

/* One raw receive buffer, paired with descriptor i of the rx ring. */
struct netvm_rx_buf {
	void *buf;
	dma_addr_t dma;
};

/* One received frame waiting in the kernel queue. */
struct netvm_rx_frame {
	u32 len;
	u32 src_node;
	u8 *data;		/* raw_max_payload bytes, in rxq_data */
};

/*
 * Raw frames.
 *
 * Transmit: tx_mutex serialises senders while they claim slot tx_next,
 * copy the payload and post the descriptor (so descriptors are posted in
 * ring order).  tx_lock (IRQ-safe spinlock) protects every slot's state
 * and status against the event handler.  Senders sleep on tx_wq.
 *
 * Receive: the event handler is the only producer of rxq; it appends at
 * (rxq_head + rxq_count) under rxq_lock.  Readers are serialised by
 * rx_read_mutex; the reader copies the head frame to user space without
 * holding rxq_lock (the producer never touches a counted slot) and then
 * advances rxq_head under rxq_lock.  Readers sleep on rx_wq.
 *
 * A slow reader slows the sender, for a while: when rxq is full the
 * handler keeps the descriptor back (rx_def, in arrival order, under
 * rxq_lock) instead of re-posting it, so the NIC holds later frames in
 * SRAM and the link slows the sender; the reader that frees a queue entry
 * moves the oldest held-back frame into rxq and re-posts its descriptor.
 * A held frame blocks every frame behind it on the link (NetVM, U-Net,
 * the mapper), so the hold is bounded: once the reader has taken nothing
 * for raw_hold_ms while descriptors are held, rx_hold_work drops the held
 * frames (raw_rx_dropped) and re-posts their descriptors, and until the
 * reader makes room again (rx_dropping) every frame that finds rxq full is
 * dropped at once.  A reader that is slow but moving loses nothing; a peer
 * flooding a node whose reader is stalled, or that has none, costs that
 * node's link raw_hold_ms once.
 */
struct netvm_raw {
	u32 tx_ring;		/* SRAM offsets and sizes, from the layout */
	u32 tx_len;
	u32 rx_ring;
	u32 rx_len;
	u32 max_payload;

	struct mutex tx_mutex;	/* serialises tx submission */
	spinlock_t tx_lock;	/* tx_slots[].state/status */
	u32 tx_next;		/* next slot to post; tx_mutex */
	struct netvm_tx_slot *tx_slots;
	wait_queue_head_t tx_wq;

	struct netvm_rx_buf *rx_bufs;
	bool rx_kick;		/* rx descriptors re-posted; IRQ handler only */

	spinlock_t rxq_lock;	/* rxq_head, rxq_count */
	struct mutex rx_read_mutex;
	struct netvm_rx_frame rxq[NETVM_RXQ_LEN];
	u8 *rxq_data;
	u32 rxq_head;
	u32 rxq_count;
	wait_queue_head_t rx_wq;
	/* descriptors held back while rxq is full: rxq_lock */
	struct {
		u32 index;
		u32 len;
		u32 src_node;
	} rx_def[NETVM_RAW_MAX_RING];
	u32 rx_def_head;
	u32 rx_def_count;
	bool rx_dropping;	/* the hold expired; rxq_lock */
	struct delayed_work rx_hold_work;
};

/*
 * Who holds a port, for routing its events (netvm_events.c): NIC ports
 * 0 .. NETVM_EP_MAX - 1 and U-Net's virtual ports above.  Written by the
 * subsystem that takes or gives up the port (netvm_port_own()), read by
 * the event IRQ handler (READ_ONCE); the handler then finds the port's
 * state through its owner's own locking.
 */
enum netvm_port_owner {
	NETVM_PORT_FREE = 0,	/* nobody (or an endpoint that closed) */
	NETVM_PORT_KERNEL,	/* port 0: the kernel endpoint, netvm_nv.c */
	NETVM_PORT_EP,		/* a NetVM user endpoint, netvm_ep.c */
	NETVM_PORT_UNET,	/* a U-Net endpoint, netvm_unet.c */
	NETVM_PORT_OWNERS
};

#define NETVM_PORTS		NVM_UNET_VPORT_MAX

/* Counters, exported through sysfs.  Atomic: updated from IRQ context. */
struct netvm_stats {
	atomic64_t raw_tx;
	atomic64_t raw_tx_errors;
	atomic64_t raw_rx;
	atomic64_t raw_rx_dropped;
	atomic64_t raw_rx_errors;
	atomic64_t events;
	atomic64_t errors;
	atomic64_t other_events;
};

/*
 * One NIC.  Allocated in probe; freed by the release of @dev once the
 * last reference (open files hold one) is gone.
 *
 * @lifetime: ioctls hold it for reading while they use the hardware;
 * remove sets @dead (waking every sleeper) and then takes it for writing,
 * so no ioctl touches the device after remove has returned.
 *
 * The event queue fields (evq_cons, evq_phase) belong to the event IRQ
 * handler; probe sets them before the interrupt can fire.  link and
 * fw_state are written by the handler and read locklessly (READ_ONCE).
 */
struct netvm_dev {
	struct pci_dev *pdev;
	struct device dev;	/* /sys/class/netvm/netvmN, refcount */
	struct cdev cdev;
	int index;

	void __iomem *regs;	/* BAR0 */
	void __iomem *sram;	/* BAR2 */
	void __iomem *db;	/* BAR4 */
	resource_size_t sram_len;

	struct rw_semaphore lifetime;
	bool dead;

	char irq_names[LANAI_MSIX_COUNT][24];
	bool irq_requested[LANAI_MSIX_COUNT];
	struct completion st_irq_done;
	bool selftest_passed;

	struct nvm_event *evq;
	dma_addr_t evq_dma;
	u32 evq_len;
	u32 evq_cons;		/* free-running; entry = cons & (len - 1) */
	u8 evq_phase;

	u32 node_id;
	u32 fw_version;
	u32 abi_version;
	u32 sram_size;
	u32 link;
	u32 fw_state;
	struct nvm_sram_layout layout;

	struct netvm_raw raw;
	struct netvm_nv nv;	/* NetVM kernel endpoint, netvm_nv.c */
	struct netvm_eps eps;	/* NetVM user endpoints, netvm_ep.c */
	struct netvm_imp imp;	/* import over the network, netvm_import.c */
	struct netvm_map map;	/* answering the mapper, netvm_map.c */
	struct netvm_trips trips;	/* tripwire ids, netvm_trip.c */
	struct netvm_unet_dev unet;	/* U-Net, netvm_unet.c */
	u8 port_owner[NETVM_PORTS];	/* enum netvm_port_owner */
	struct netvm_stats stats;
};

static inline u32 netvm_rd(struct netvm_dev *nd, u32 reg)
{
	return readl(nd->regs + reg);
}

static inline void netvm_wr(struct netvm_dev *nd, u32 reg, u32 val)
{
	writel(val, nd->regs + reg);
}

/* netvm_selftest.c */
int netvm_selftest(struct netvm_dev *nd);
irqreturn_t netvm_selftest_irq(int irq, void *data);

/* netvm_events.c */
void netvm_port_own(struct netvm_dev *nd, u32 port, enum netvm_port_owner o);
int netvm_evq_init(struct netvm_dev *nd);
void netvm_evq_stop(struct netvm_dev *nd);
void netvm_evq_free(struct netvm_dev *nd);
irqreturn_t netvm_evq_irq(int irq, void *data);

/* netvm_raw.c */
int netvm_raw_init(struct netvm_dev *nd);
void netvm_raw_free(struct netvm_dev *nd);
void netvm_raw_wake_all(struct netvm_dev *nd);
void netvm_raw_tx_event(struct netvm_dev *nd, u32 index, u64 arg);
void netvm_raw_rx_event(struct netvm_dev *nd, u32 index, u64 arg);
void netvm_raw_rx_kick(struct netvm_dev *nd);
int netvm_raw_send(struct netvm_dev *nd, const void __user *ubuf, u32 len,
		   u8 route_len, const u8 *route);
int netvm_raw_send_kernel(struct netvm_dev *nd, const void *buf, u32 len,
			  u8 route_len, const u8 *route);
int netvm_raw_recv(struct netvm_dev *nd, void __user *ubuf, u32 *len,
		   u32 *src_node, u32 timeout_ms);

/* netvm_chardev.c */
int netvm_chardev_init(void);
void netvm_chardev_exit(void);
int netvm_chardev_add(struct netvm_dev *nd);
void netvm_chardev_del(struct netvm_dev *nd);

/* netvm_sysfs.c */
extern const struct attribute_group *netvm_attr_groups[];
ssize_t netvm_fw_counters_fmt(struct netvm_dev *nd, char *buf);

#endif /* NETVM_DRV_H */
