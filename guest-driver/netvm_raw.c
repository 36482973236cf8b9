// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: raw frames (link bring-up and tests).
 *
 * The firmware publishes two rings of struct nvm_raw_desc in SRAM.  The
 * host owns them: it fills a descriptor, sets NVM_RAW_OWN last and rings
 * doorbell page 0.  The firmware consumes each ring in order and reports
 * every descriptor it finishes with an NVM_EV_RAW_TX / NVM_EV_RAW_RX event.
 *
 * Every descriptor has its own coherent buffer of raw_max_payload bytes.
 * Received frames are copied into a bounded kernel queue (NETVM_RXQ_LEN
 * frames) and the descriptor is posted again at once.  When the queue is
 * full the descriptor is held back until a reader makes room, so a slow
 * reader slows the sender (through the NIC and the link) and no frame is
 * dropped -- while the reader moves: a held descriptor holds up the whole
 * link, so once the reader has taken nothing for raw_hold_ms the held
 * frames and every later frame that finds the queue full are dropped and
 * counted until it makes room again.
 */
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "netvm_drv.h"

/*
 * How long a reader that is not keeping up may hold the link (module
 * parameter, read when a hold starts).  Long enough for a reader that is
 * merely slow, short against NetVM's give-up time: frames from every peer
 * wait behind a held one.
 */
static unsigned int raw_hold_ms = 1000;
module_param(raw_hold_ms, uint, 0644);
MODULE_PARM_DESC(raw_hold_ms,
		 "ms a full raw receive queue may hold the link before frames are dropped (0: drop at once; default 1000)");

static void netvm_raw_hold_expired(struct work_struct *work);

#define DESC_ADDR_LO	offsetof(struct nvm_raw_desc, host_addr)
#define DESC_ADDR_HI	(offsetof(struct nvm_raw_desc, host_addr) + 4)
#define DESC_LEN	offsetof(struct nvm_raw_desc, len)
#define DESC_CTRL	offsetof(struct nvm_raw_desc, flags) /* flags|rlen|st */
#define DESC_ROUTE_LO	offsetof(struct nvm_raw_desc, route)
#define DESC_ROUTE_HI	(offsetof(struct nvm_raw_desc, route) + 4)
#define DESC_SRC	offsetof(struct nvm_raw_desc, src_node)
#define DESC_RSVD	offsetof(struct nvm_raw_desc, reserved1)

/* The 32-bit word at DESC_CTRL: flags, route_len and status. */
#define CTRL_WORD(flags, rlen)	((u32)(flags) | ((u32)(rlen) << 16))
#define CTRL_STATUS(w)		((u8)((w) >> 24))

static void __iomem *netvm_desc(struct netvm_dev *nd, u32 ring, u32 idx)
{
	return nd->sram + ring + (size_t)idx * sizeof(struct nvm_raw_desc);
}

static bool netvm_ring_ok(struct netvm_dev *nd, u32 off, u32 len)
{
	u64 end = (u64)off + (u64)len * sizeof(struct nvm_raw_desc);

	return len && len <= NETVM_RAW_MAX_RING && is_power_of_2(len) &&
	       !(off & 3) && end <= nd->sram_len;
}

/* Hand rx descriptor @idx (back) to the NIC; the caller rings the doorbell. */
static void netvm_rx_post(struct netvm_dev *nd, u32 idx)
{
	struct netvm_raw *raw = &nd->raw;
	void __iomem *d = netvm_desc(nd, raw->rx_ring, idx);
	dma_addr_t dma = raw->rx_bufs[idx].dma;

	writel(lower_32_bits(dma), d + DESC_ADDR_LO);
	writel(upper_32_bits(dma), d + DESC_ADDR_HI);
	writel(raw->max_payload, d + DESC_LEN);
	writel(0, d + DESC_ROUTE_LO);
	writel(0, d + DESC_ROUTE_HI);
	writel(0, d + DESC_SRC);
	writel(0, d + DESC_RSVD);
	wmb();		/* the descriptor before its OWN bit */
	writel(CTRL_WORD(NVM_RAW_OWN, 0), d + DESC_CTRL);
}

static void netvm_ring_doorbell(struct netvm_dev *nd, u32 word)
{
	wmb();		/* descriptors before the doorbell */
	writel(word, nd->db);
}

void netvm_raw_free(struct netvm_dev *nd)
{
	struct netvm_raw *raw = &nd->raw;
	struct device *dev = &nd->pdev->dev;
	u32 i;

	cancel_delayed_work_sync(&raw->rx_hold_work);
	if (raw->tx_slots) {
		for (i = 0; i < raw->tx_len; i++)
			if (raw->tx_slots[i].buf)
				dma_free_coherent(dev, raw->max_payload,
						  raw->tx_slots[i].buf,
						  raw->tx_slots[i].dma);
		kfree(raw->tx_slots);
		raw->tx_slots = NULL;
	}
	if (raw->rx_bufs) {
		for (i = 0; i < raw->rx_len; i++)
			if (raw->rx_bufs[i].buf)
				dma_free_coherent(dev, raw->max_payload,
						  raw->rx_bufs[i].buf,
						  raw->rx_bufs[i].dma);
		kfree(raw->rx_bufs);
		raw->rx_bufs = NULL;
	}
	kvfree(raw->rxq_data);
	raw->rxq_data = NULL;
}

int netvm_raw_init(struct netvm_dev *nd)
{
	struct netvm_raw *raw = &nd->raw;
	const struct nvm_sram_layout *l = &nd->layout;
	struct device *dev = &nd->pdev->dev;
	u32 i;

	mutex_init(&raw->tx_mutex);
	spin_lock_init(&raw->tx_lock);
	init_waitqueue_head(&raw->tx_wq);
	spin_lock_init(&raw->rxq_lock);
	mutex_init(&raw->rx_read_mutex);
	init_waitqueue_head(&raw->rx_wq);
	INIT_DELAYED_WORK(&raw->rx_hold_work, netvm_raw_hold_expired);

	if (!netvm_ring_ok(nd, l->raw_tx_ring, l->raw_tx_len) ||
	    !netvm_ring_ok(nd, l->raw_rx_ring, l->raw_rx_len) ||
	    !l->raw_max_payload || l->raw_max_payload > NETVM_RAW_MAX_PAYLOAD) {
		dev_err(dev, "bad raw rings in SRAM layout (tx %#x/%u, rx %#x/%u, payload %u)\n",
			l->raw_tx_ring, l->raw_tx_len, l->raw_rx_ring,
			l->raw_rx_len, l->raw_max_payload);
		return -EIO;
	}
	raw->tx_ring = l->raw_tx_ring;
	raw->tx_len = l->raw_tx_len;
	raw->rx_ring = l->raw_rx_ring;
	raw->rx_len = l->raw_rx_len;
	raw->max_payload = l->raw_max_payload;

	raw->tx_slots = kcalloc(raw->tx_len, sizeof(*raw->tx_slots),
				GFP_KERNEL);
	raw->rx_bufs = kcalloc(raw->rx_len, sizeof(*raw->rx_bufs), GFP_KERNEL);
	raw->rxq_data = kvcalloc(NETVM_RXQ_LEN, raw->max_payload, GFP_KERNEL);
	if (!raw->tx_slots || !raw->rx_bufs || !raw->rxq_data)
		goto nomem;

	for (i = 0; i < raw->tx_len; i++) {
		raw->tx_slots[i].buf = dma_alloc_coherent(dev, raw->max_payload,
							  &raw->tx_slots[i].dma,
							  GFP_KERNEL);
		if (!raw->tx_slots[i].buf)
			goto nomem;
	}
	for (i = 0; i < raw->rx_len; i++) {
		raw->rx_bufs[i].buf = dma_alloc_coherent(dev, raw->max_payload,
							 &raw->rx_bufs[i].dma,
							 GFP_KERNEL);
		if (!raw->rx_bufs[i].buf)
			goto nomem;
	}
	for (i = 0; i < NETVM_RXQ_LEN; i++)
		raw->rxq[i].data = raw->rxq_data + (size_t)i * raw->max_payload;

	/* The NIC owns no tx descriptor yet; every rx buffer goes to it. */
	for (i = 0; i < raw->tx_len; i++)
		writel(0, netvm_desc(nd, raw->tx_ring, i) + DESC_CTRL);
	for (i = 0; i < raw->rx_len; i++)
		netvm_rx_post(nd, i);
	netvm_ring_doorbell(nd, NVM_DB_RAW_RX);
	return 0;

nomem:
	netvm_raw_free(nd);
	return -ENOMEM;
}

/* Wake every sleeper so it notices nd->dead. */
void netvm_raw_wake_all(struct netvm_dev *nd)
{
	wake_up_all(&nd->raw.tx_wq);
	wake_up_all(&nd->raw.rx_wq);
}

/* IRQ context: the NIC finished tx descriptor @index. */
void netvm_raw_tx_event(struct netvm_dev *nd, u32 index, u64 arg)
{
	struct netvm_raw *raw = &nd->raw;
	struct netvm_tx_slot *s;
	u8 status = (u8)arg;

	if (!raw->tx_slots || index >= raw->tx_len) {
		atomic64_inc(&nd->stats.raw_tx_errors);
		return;
	}
	if (status == NVM_RAW_OK)
		atomic64_inc(&nd->stats.raw_tx);
	else
		atomic64_inc(&nd->stats.raw_tx_errors);

	s = &raw->tx_slots[index];
	spin_lock(&raw->tx_lock);
	if (s->state == NETVM_TX_INFLIGHT) {
		s->status = status;
		s->state = NETVM_TX_DONE;
	} else if (s->state == NETVM_TX_ABANDONED) {
		s->state = NETVM_TX_FREE;
	}
	spin_unlock(&raw->tx_lock);
	wake_up_all(&raw->tx_wq);
}

/*
 * The reader took nothing for raw_hold_ms while frames were held: drop the frames
 * held back (the newest), give their descriptors back to the NIC, and
 * drop every frame that finds the queue full until the reader makes room.
 */
static void netvm_raw_hold_expired(struct work_struct *work)
{
	struct netvm_raw *raw = container_of(to_delayed_work(work),
					     struct netvm_raw, rx_hold_work);
	struct netvm_dev *nd = container_of(raw, struct netvm_dev, raw);
	bool posted = false;

	spin_lock_irq(&raw->rxq_lock);
	if (raw->rx_def_count)
		raw->rx_dropping = true;
	while (raw->rx_def_count) {
		netvm_rx_post(nd, raw->rx_def[raw->rx_def_head].index);
		raw->rx_def_head = (raw->rx_def_head + 1) % NETVM_RAW_MAX_RING;
		raw->rx_def_count--;
		atomic64_inc(&nd->stats.raw_rx_dropped);
		posted = true;
	}
	spin_unlock_irq(&raw->rxq_lock);
	if (posted)
		netvm_ring_doorbell(nd, NVM_DB_RAW_RX);
}

/*
 * Process context, after a reader made room: move held-back frames into
 * the queue, oldest first, and give their descriptors back to the NIC.
 */
static void netvm_raw_rx_undefer(struct netvm_dev *nd)
{
	struct netvm_raw *raw = &nd->raw;
	struct netvm_rx_frame *f;
	bool posted = false;
	u32 idx;

	spin_lock_irq(&raw->rxq_lock);
	while (raw->rx_def_count && raw->rxq_count < NETVM_RXQ_LEN) {
		idx = raw->rx_def[raw->rx_def_head].index;
		f = &raw->rxq[(raw->rxq_head + raw->rxq_count) % NETVM_RXQ_LEN];
		memcpy(f->data, raw->rx_bufs[idx].buf,
		       raw->rx_def[raw->rx_def_head].len);
		f->len = raw->rx_def[raw->rx_def_head].len;
		f->src_node = raw->rx_def[raw->rx_def_head].src_node;
		raw->rxq_count++;
		raw->rx_def_head = (raw->rx_def_head + 1) % NETVM_RAW_MAX_RING;
		raw->rx_def_count--;
		atomic64_inc(&nd->stats.raw_rx);
		netvm_rx_post(nd, idx);
		posted = true;
	}
	if (!raw->rx_def_count)
		cancel_delayed_work(&raw->rx_hold_work);	/* hold over */
	else	/* the reader moves: the hold may last raw_hold_ms more */
		mod_delayed_work(system_wq, &raw->rx_hold_work,
				 msecs_to_jiffies(READ_ONCE(raw_hold_ms)));
	spin_unlock_irq(&raw->rxq_lock);
	if (posted)
		netvm_ring_doorbell(nd, NVM_DB_RAW_RX);
}

/* IRQ context: the NIC filled rx descriptor @index. */
void netvm_raw_rx_event(struct netvm_dev *nd, u32 index, u64 arg)
{
	struct netvm_raw *raw = &nd->raw;
	u32 bytes = lower_32_bits(arg);
	u32 src = upper_32_bits(arg);
	struct netvm_rx_frame *f;
	u8 status;

	if (!raw->rx_bufs || index >= raw->rx_len) {
		atomic64_inc(&nd->stats.raw_rx_errors);
		return;
	}
	status = CTRL_STATUS(readl(netvm_desc(nd, raw->rx_ring, index) +
				   DESC_CTRL));
	if (status != NVM_RAW_OK || !bytes || bytes > raw->max_payload) {
		atomic64_inc(&nd->stats.raw_rx_errors);
		goto repost;
	}
	/* kernel-control frames (import, mapper) never reach raw readers */
	if (netvm_import_rx(nd, raw->rx_bufs[index].buf, bytes, src) ||
	    netvm_map_rx(nd, raw->rx_bufs[index].buf, bytes, src))
		goto repost;

	spin_lock(&raw->rxq_lock);
	if ((raw->rxq_count == NETVM_RXQ_LEN || raw->rx_def_count) &&
	    (raw->rx_dropping || !READ_ONCE(raw_hold_ms))) {
		/* the hold expired (or none is allowed): drop, re-post */
		spin_unlock(&raw->rxq_lock);
		atomic64_inc(&nd->stats.raw_rx_dropped);
		goto repost;
	}
	if (raw->rxq_count == NETVM_RXQ_LEN || raw->rx_def_count) {
		/* hold the descriptor back; a reader re-posts it */
		u32 t = (raw->rx_def_head + raw->rx_def_count) % NETVM_RAW_MAX_RING;

		if (!raw->rx_def_count)
			schedule_delayed_work(&raw->rx_hold_work,
					      msecs_to_jiffies(READ_ONCE(raw_hold_ms)));
		raw->rx_def[t].index = index;
		raw->rx_def[t].len = bytes;
		raw->rx_def[t].src_node = src;
		raw->rx_def_count++;
		spin_unlock(&raw->rxq_lock);
		return;
	}
	f = &raw->rxq[(raw->rxq_head + raw->rxq_count) % NETVM_RXQ_LEN];
	memcpy(f->data, raw->rx_bufs[index].buf, bytes);
	f->len = bytes;
	f->src_node = src;
	raw->rxq_count++;
	spin_unlock(&raw->rxq_lock);
	atomic64_inc(&nd->stats.raw_rx);
	wake_up_interruptible(&raw->rx_wq);

repost:
	netvm_rx_post(nd, index);
	raw->rx_kick = true;
}

/* IRQ context, after draining the event queue: one doorbell per batch. */
void netvm_raw_rx_kick(struct netvm_dev *nd)
{
	if (!nd->raw.rx_kick)
		return;
	nd->raw.rx_kick = false;
	netvm_ring_doorbell(nd, NVM_DB_RAW_RX);
}

static int netvm_raw_status_errno(u8 status)
{
	switch (status) {
	case NVM_RAW_OK:
		return 0;
	case NVM_RAW_ERR_LEN:
	case NVM_RAW_ERR_ROUTE:
		return -EINVAL;
	case NVM_RAW_ERR_LINK:
		return -ENOLINK;
	case NVM_RAW_ERR_DMA:
	default:
		return -EIO;
	}
}

static bool netvm_tx_slot_is(struct netvm_dev *nd, struct netvm_tx_slot *s,
			     enum netvm_tx_state state)
{
	unsigned long flags;
	bool ret;

	if (READ_ONCE(nd->dead))
		return true;
	spin_lock_irqsave(&nd->raw.tx_lock, flags);
	ret = s->state == state;
	spin_unlock_irqrestore(&nd->raw.tx_lock, flags);
	return ret;
}

static int __netvm_raw_send(struct netvm_dev *nd, const void *kbuf,
			    const void __user *ubuf, u32 len, u8 route_len,
			    const u8 *route)
{
	struct netvm_raw *raw = &nd->raw;
	struct netvm_tx_slot *s;
	u32 idx, r[2] = { 0, 0 };
	void __iomem *d;
	long left;
	int i, ret;

	if (!raw->tx_slots)
		return -ENODEV;
	if (!len || len > raw->max_payload || route_len > 8)
		return -EINVAL;
	for (i = 0; i < route_len; i++) {
		if (!(route[i] & 0x80))
			return -EINVAL;
		r[i / 4] |= (u32)route[i] << (8 * (i % 4));
	}

	if (mutex_lock_killable(&raw->tx_mutex))
		return -EINTR;
	idx = raw->tx_next & (raw->tx_len - 1);
	s = &raw->tx_slots[idx];
	/* The ring is full (or a sender gave up on this slot): wait. */
	left = wait_event_killable_timeout(raw->tx_wq,
					   netvm_tx_slot_is(nd, s, NETVM_TX_FREE),
					   msecs_to_jiffies(NETVM_TX_TIMEOUT_MS));
	if (left <= 0 || READ_ONCE(nd->dead)) {
		mutex_unlock(&raw->tx_mutex);
		if (left < 0)
			return -EINTR;
		return READ_ONCE(nd->dead) ? -ENODEV : -EBUSY;
	}
	if (kbuf) {
		memcpy(s->buf, kbuf, len);
	} else if (copy_from_user(s->buf, ubuf, len)) {
		mutex_unlock(&raw->tx_mutex);
		return -EFAULT;
	}

	spin_lock_irq(&raw->tx_lock);
	s->state = NETVM_TX_INFLIGHT;
	s->status = NVM_RAW_OK;
	spin_unlock_irq(&raw->tx_lock);

	d = netvm_desc(nd, raw->tx_ring, idx);
	writel(lower_32_bits(s->dma), d + DESC_ADDR_LO);
	writel(upper_32_bits(s->dma), d + DESC_ADDR_HI);
	writel(len, d + DESC_LEN);
	writel(r[0], d + DESC_ROUTE_LO);
	writel(r[1], d + DESC_ROUTE_HI);
	writel(0, d + DESC_SRC);
	writel(0, d + DESC_RSVD);
	wmb();		/* the descriptor before its OWN bit */
	writel(CTRL_WORD(NVM_RAW_OWN, route_len), d + DESC_CTRL);
	netvm_ring_doorbell(nd, NVM_DB_RAW_TX);
	raw->tx_next++;
	mutex_unlock(&raw->tx_mutex);

	left = wait_event_killable_timeout(raw->tx_wq,
					   netvm_tx_slot_is(nd, s, NETVM_TX_DONE),
					   msecs_to_jiffies(NETVM_TX_TIMEOUT_MS));

	spin_lock_irq(&raw->tx_lock);
	if (s->state == NETVM_TX_DONE) {
		ret = netvm_raw_status_errno(s->status);
		s->state = NETVM_TX_FREE;
	} else {
		/* The completion, if it ever comes, frees the slot. */
		s->state = NETVM_TX_ABANDONED;
		if (READ_ONCE(nd->dead))
			ret = -ENODEV;
		else
			ret = left < 0 ? -EINTR : -ETIMEDOUT;
	}
	spin_unlock_irq(&raw->tx_lock);
	wake_up_all(&raw->tx_wq);
	return ret;
}

int netvm_raw_send(struct netvm_dev *nd, const void __user *ubuf, u32 len,
		   u8 route_len, const u8 *route)
{
	return __netvm_raw_send(nd, NULL, ubuf, len, route_len, route);
}

/* For the driver's own control frames (netvm_import.c). */
int netvm_raw_send_kernel(struct netvm_dev *nd, const void *buf, u32 len,
			  u8 route_len, const u8 *route)
{
	return __netvm_raw_send(nd, buf, NULL, len, route_len, route);
}

static bool netvm_rxq_ready(struct netvm_dev *nd)
{
	return READ_ONCE(nd->raw.rxq_count) || READ_ONCE(nd->dead);
}

int netvm_raw_recv(struct netvm_dev *nd, void __user *ubuf, u32 *len,
		   u32 *src_node, u32 timeout_ms)
{
	struct netvm_raw *raw = &nd->raw;
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	struct netvm_rx_frame *f;
	long left;
	int ret;

	if (!raw->rx_bufs)
		return -ENODEV;

	for (;;) {
		if (mutex_lock_interruptible(&raw->rx_read_mutex))
			return -EINTR;
		if (READ_ONCE(nd->dead)) {
			mutex_unlock(&raw->rx_read_mutex);
			return -ENODEV;
		}
		spin_lock_irq(&raw->rxq_lock);
		f = raw->rxq_count ? &raw->rxq[raw->rxq_head] : NULL;
		spin_unlock_irq(&raw->rxq_lock);
		if (f)
			break;
		mutex_unlock(&raw->rx_read_mutex);

		if (!timeout_ms)
			return -EAGAIN;
		left = (long)(deadline - jiffies);
		if (left <= 0)
			return -ETIMEDOUT;
		left = wait_event_interruptible_timeout(raw->rx_wq,
							netvm_rxq_ready(nd),
							left);
		if (left < 0)
			return -EINTR;
		if (!left && !netvm_rxq_ready(nd))
			return -ETIMEDOUT;
	}

	/* The head frame is ours until rxq_head moves: the IRQ skips it. */
	*src_node = f->src_node;
	if (f->len > *len) {
		*len = f->len;	/* frame stays queued for a bigger buffer */
		ret = -EMSGSIZE;
	} else if (copy_to_user(ubuf, f->data, f->len)) {
		ret = -EFAULT;	/* frame stays queued */
	} else {
		*len = f->len;
		spin_lock_irq(&raw->rxq_lock);
		raw->rxq_head = (raw->rxq_head + 1) % NETVM_RXQ_LEN;
		raw->rxq_count--;
		raw->rx_dropping = false;	/* the reader makes room again */
		spin_unlock_irq(&raw->rxq_lock);
		netvm_raw_rx_undefer(nd);
		ret = 0;
	}
	mutex_unlock(&raw->rx_read_mutex);
	return ret;
}
