// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: U-Net message endpoints (docs/unet.md).
 *
 * NETVM_IOC_UNET_OPEN gives the open file a port from the table NetVM's
 * endpoints use, one pinned contiguous coherent block (the receive queue,
 * then the communication segment) and NVM_KOP_UNET_OPEN.  The segment is
 * pinned, as in U-Net: the firmware then needs only its bus address and
 * size to bounds-check and reach every descriptor's offset, and a message
 * can never meet a missing page.
 *
 * With NETVM_UNET_PAGEABLE the segment is the process's own memory
 * instead, tracked like a NetVM export (an unnamed one on the port's
 * placeholder endpoint): nothing pinned, translations in the shadow page
 * table, removed when the pages go (swap, fork, munmap).  A message whose
 * buffer has no translation is diverted (FUGU: "pages not resident") and
 * the page-miss event has netvm_ep.c map it; a send waits for the same.
 *
 * Channels are set up here, by the kernel, never by the process: the
 * firmware stamps each outgoing message with the channel's tag and its
 * own node and port, and delivers an incoming one only to the endpoint
 * whose channel matches all of them.
 *
 * Locking: see netvm_unet.h.
 */
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "netvm_drv.h"
#include "netvm_compat.h"

/* The divert ring (struct netvm_unet_div), bytes. */
#define UNET_DIV_RING	(NVM_UNET_DIV_SLOTS * NVM_UNET_DIV_SLOT)
/*
 * Overflow control: the high-water mark of an endpoint's buffered FIFO.
 * Past it the driver asks the NI to hold the endpoint's senders
 * (NVM_KOP_UNET_HOLD); the NI releases them when the endpoint is back to
 * direct delivery.  Read when an endpoint's FIFO is made, so changing it
 * affects later ones only.
 */
static unsigned int unet_divert_kib = 8192;
module_param(unet_divert_kib, uint, 0644);
MODULE_PARM_DESC(unet_divert_kib,
		 "U-Net: high-water mark of an endpoint's buffered messages, KiB (64..1048576, default 8192)");

/*
 * What may still arrive once the hold is asked: the divert ring, frames
 * on the wire and the senders' frames already built, a few hundred KiB.
 * The FIFO's hard bound leaves the high-water mark that much and more;
 * only a sender that ignores holds reaches it (its excess is dropped and
 * counted, as before throttling).  The file is allocated on demand, so
 * the headroom costs nothing until used.
 */
#define UNET_FIFO_HEADROOM	(4u << 20)

/*
 * Ask the NI again this often (records) while above the mark: the NI
 * ignores a HOLD it already has, and one that crossed a DIRECT is fixed.
 */
#define UNET_HOLD_NUDGE		32

/* Record header in the FIFO, then the data rounded up to 16 bytes. */
struct unet_frec {
	u32 msgno;
	u16 channel;
	u16 reserved;
	u32 len;
	u32 dsm;	/* the DSM flags and reply number (docs/dsm.md) */
	u32 src;	/* the sender: node | port << 16 */
	u32 reserved2[3];
};

static struct netvm_unet *unet_lookup(struct netvm_dev *nd, u32 port);

static int fifo_io(struct netvm_unet *u, void *buf, u32 n, u64 at, bool wr)
{
	while (n) {
		loff_t pos = at % u->dcap;
		u32 k = min_t(u64, n, u->dcap - pos);
		ssize_t r = wr ? kernel_write(u->dfile, buf, k, &pos) :
				 kernel_read(u->dfile, buf, k, &pos);

		if (r != k)
			return r < 0 ? (int)r : -EIO;
		buf += k;
		at += k;
		n -= k;
	}
	return 0;
}

/*
 * Appends one message to @u's FIFO.  Past the high-water mark a NIC
 * endpoint's NI is asked to hold the senders here; for a kernel-emulated
 * endpoint the return value asks its caller (its NI) to.
 */
bool netvm_unet_fifo_put(struct netvm_unet *u, u32 msgno, u32 channel,
			 u32 dsm, u32 src, const void *data, u32 len)
{
	struct unet_frec h = {
		.msgno = msgno, .channel = (u16)channel, .len = len,
		.dsm = dsm, .src = src,
	};
	u32 need = sizeof(h) + ALIGN(len, 16);
	bool hold = false;

	mutex_lock(&u->dlock);
	if (!u->dfile) {
		u32 hi = clamp(READ_ONCE(unet_divert_kib), 64u, 1u << 20) *
			 1024u;
		u32 cap = hi + max(hi, UNET_FIFO_HEADROOM);
		struct file *f = shmem_file_setup("netvm-unet", cap,
						  VM_NORESERVE);

		if (IS_ERR(f))
			goto drop;
		u->dfile = f;
		u->dcap = cap;
		u->dhiwat = hi;
	}
	if (u->dtail - u->dhead + need > u->dcap)
		goto drop;	/* a sender that ignores holds */
	if (fifo_io(u, &h, sizeof(h), u->dtail, true) ||
	    fifo_io(u, (void *)data, len, u->dtail + sizeof(h), true))
		goto drop;
	u->dtail += need;
	WRITE_ONCE(u->dcount, u->dcount + 1);
	if (u->dtail - u->dhead >= u->dhiwat &&
	    (!u->holding || ++u->hold_nudge >= UNET_HOLD_NUDGE)) {
		u->holding = true;
		u->hold_nudge = 0;
		hold = true;
	}
	mutex_unlock(&u->dlock);
	if (u->emulated)
		return hold;
	/* overflow control: the NI tells the senders to hold */
	if (hold && !READ_ONCE(u->nd->dead))
		nv_kcmd(u->nd, NVM_KOP_UNET_HOLD, 0, (u16)u->port, 0, 0, NULL,
			0);
	return false;
drop:
	u->overflow++;
	mutex_unlock(&u->dlock);
	return false;
}

/*
 * A NIC endpoint whose FIFO emptied asks the NI for direct delivery; on
 * success the NI has released the senders it held.  Refused (records
 * still on their way), direct_owed stays set and the divert worker asks
 * again after it hands the slots back.
 */
static void unet_ask_direct(struct netvm_unet *u)
{
	if (READ_ONCE(u->nd->dead) ||
	    nv_kcmd(u->nd, NVM_KOP_UNET_DIRECT, 0, (u16)u->port, 0, 0, NULL, 0))
		return;
	mutex_lock(&u->dlock);
	u->holding = false;
	if (!u->dcount)
		u->direct_owed = false;
	mutex_unlock(&u->dlock);
}

/* After DIVERT_DONE: the endpoints whose DIRECT was refused meanwhile. */
static void unet_direct_owed(struct netvm_dev *nd, const unsigned long *ports)
{
	unsigned int p;

	for_each_set_bit(p, ports, NVM_UNET_VPORT_MAX) {
		struct netvm_unet *u = unet_lookup(nd, p);
		bool ask;

		if (!u || u->emulated)
			continue;
		mutex_lock(&u->dlock);
		ask = u->direct_owed && !u->dcount;
		mutex_unlock(&u->dlock);
		if (ask)
			unet_ask_direct(u);
	}
}

static void unet_div_work(struct work_struct *w)
{
	struct netvm_unet_div *ud = container_of(w, struct netvm_unet_div,
						 work);
	struct netvm_dev *nd = container_of(ud, struct netvm_dev, unet.div);
	DECLARE_BITMAP(ports, NVM_UNET_VPORT_MAX);
	bool moved = false;
	u32 prod;

	bitmap_zero(ports, NVM_UNET_VPORT_MAX);

	mutex_lock(&nd->unet.div_lock);
	if (!ud->ring)
		goto out;
	prod = atomic_read(&ud->prod);
	while (ud->cons != prod) {
		const struct nvm_unet_div_rec *r = ud->ring +
			(ud->cons % NVM_UNET_DIV_SLOTS) * NVM_UNET_DIV_SLOT;
		struct netvm_unet *u;

		if (READ_ONCE(r->seq) != ud->cons + 1)
			break;
		dma_rmb();	/* the seq before the rest */
		u = r->port < NVM_UNET_VPORT_MAX ? unet_lookup(nd, r->port) :
		    NULL;
		if (u && r->len <= NVM_UNET_MSG_MAX) {
			if (u->emulated) {
				netvm_unet_emu_deliver(u, r);
			} else {
				netvm_unet_fifo_put(u, r->msgno, r->channel,
						    r->dsm, r->src_node |
						    (u32)r->src_port << 16,
						    r->data, r->len);
				__set_bit(r->port, ports);
				wake_up_interruptible(&nd->eps.wq[r->port]);
			}
		}
		ud->cons++;
		moved = true;
	}
	if (moved && !READ_ONCE(nd->dead)) {
		nv_kcmd(nd, NVM_KOP_UNET_DIVERT_DONE, 0, 0, ud->cons, 0, NULL,
			0);
		unet_direct_owed(nd, ports);
	}
out:
	mutex_unlock(&nd->unet.div_lock);
}

/*
 * The first endpoint of a NIC sets its divert ring up; without one (no
 * contiguous memory) messages that cannot go direct are dropped.
 */
static void unet_div_get(struct netvm_dev *nd)
{
	struct netvm_unet_div *ud = &nd->unet.div;

	mutex_lock(&nd->unet.div_lock);
	if (ud->users++) {
		mutex_unlock(&nd->unet.div_lock);
		return;
	}
	ud->cons = 0;
	atomic_set(&ud->prod, 0);
	ud->ring = dma_alloc_coherent(&nd->pdev->dev, UNET_DIV_RING, &ud->dma,
				      GFP_KERNEL);
	if (ud->ring && nv_kcmd(nd, NVM_KOP_UNET_DIVERT_CFG,
				NVM_UNET_DIV_SLOTS, 0, lower_32_bits(ud->dma),
				upper_32_bits(ud->dma), NULL, 0)) {
		dma_free_coherent(&nd->pdev->dev, UNET_DIV_RING, ud->ring,
				  ud->dma);
		ud->ring = NULL;
	}
	if (!ud->ring)
		dev_warn(&nd->pdev->dev, "U-Net: no divert ring; undeliverable messages are dropped\n");
	WRITE_ONCE(ud->ready, !!ud->ring);
	mutex_unlock(&nd->unet.div_lock);
}

static void unet_div_put(struct netvm_dev *nd)
{
	struct netvm_unet_div *ud = &nd->unet.div;
	void *ring;

	mutex_lock(&nd->unet.div_lock);
	if (--ud->users) {
		mutex_unlock(&nd->unet.div_lock);
		return;
	}
	ring = ud->ring;
	ud->ring = NULL;
	WRITE_ONCE(ud->ready, false);
	if (ring && !READ_ONCE(nd->dead))
		nv_kcmd(nd, NVM_KOP_UNET_DIVERT_CFG, 0, 0, 0, 0, NULL, 0);
	mutex_unlock(&nd->unet.div_lock);
	cancel_work_sync(&ud->work);
	if (ring)
		dma_free_coherent(&nd->pdev->dev, UNET_DIV_RING, ring, ud->dma);
}

static void unet_irq_set(struct netvm_dev *nd, u32 port, struct netvm_unet *u)
{
	unsigned long flags;

	spin_lock_irqsave(&nd->unet.irq_lock, flags);
	nd->unet.irq[port] = u;
	spin_unlock_irqrestore(&nd->unet.irq_lock, flags);
	netvm_port_own(nd, port, u ? NETVM_PORT_UNET : NETVM_PORT_FREE);
}

static struct netvm_unet *unet_lookup(struct netvm_dev *nd, u32 port)
{
	struct netvm_unet *u;
	unsigned long flags;

	spin_lock_irqsave(&nd->unet.irq_lock, flags);
	u = nd->unet.irq[port];
	spin_unlock_irqrestore(&nd->unet.irq_lock, flags);
	return u;
}

void netvm_unet_dev_init(struct netvm_dev *nd)
{
	spin_lock_init(&nd->unet.irq_lock);
	mutex_init(&nd->unet.div_lock);
	INIT_WORK(&nd->unet.div.work, unet_div_work);
}

void __iomem *netvm_unet_region(struct netvm_unet *u)
{
	return u->nd->sram + u->nd->layout.ep_base + u->port * NVM_EP_STRIDE;
}

static int unet_check_open(const struct netvm_unet_open *req)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(req->reserved); i++)
		if (req->reserved[i])
			return -EINVAL;
	if (req->port || req->node_id || req->seg_off || req->host_size ||
	    (req->flags & ~(NETVM_UNET_EMULATE | NETVM_UNET_PAGEABLE)))
		return -EINVAL;
	if (req->flags & NETVM_UNET_PAGEABLE) {
		/* the NI reaches a pageable segment only through its tables */
		if ((req->flags & NETVM_UNET_EMULATE) || !req->seg_va ||
		    !PAGE_ALIGNED(req->seg_va) ||
		    req->seg_va + req->seg_size < req->seg_va ||
		    req->seg_va + req->seg_size > TASK_SIZE)
			return -EINVAL;
	} else if (req->seg_va) {
		return -EINVAL;
	}
	if (req->seg_size < PAGE_SIZE || req->seg_size > NVM_UNET_SEG_MAX ||
	    !PAGE_ALIGNED(req->seg_size))
		return -EINVAL;
	if (!is_power_of_2(req->buf_size) || req->buf_size < NVM_UNET_BUF_MIN ||
	    req->buf_size > NVM_UNET_BUF_MAX)
		return -EINVAL;
	if (!is_power_of_2(req->rxq_len) || req->rxq_len < NVM_UNET_RXQ_MIN ||
	    req->rxq_len > NVM_UNET_RXQ_MAX)
		return -EINVAL;
	return 0;
}

/*
 * No NIC port (or the caller asked): a virtual port whose NI is this
 * driver.  Messages for it come through the divert ring, so it needs one.
 */
static int unet_open_emulated(struct netvm_file *nf, struct netvm_unet *u,
			      struct netvm_unet_open *req)
{
	struct netvm_dev *nd = nf->nd;
	u32 vp;
	int ret;

	mutex_lock(&nd->unet.div_lock);
	if (!nd->unet.div.ring) {
		mutex_unlock(&nd->unet.div_lock);
		return -EBUSY;
	}
	for (vp = NVM_UNET_VPORT_MIN; vp < NVM_UNET_VPORT_MAX &&
	     unet_lookup(nd, vp); vp++)
		;
	if (vp == NVM_UNET_VPORT_MAX) {
		mutex_unlock(&nd->unet.div_lock);
		return -EBUSY;
	}
	u->port = vp;
	u->emulated = true;
	ret = netvm_unet_emu_setup(u);
	if (ret) {
		mutex_unlock(&nd->unet.div_lock);
		return ret;
	}
	u->mm = current->mm;
	mmgrab(u->mm);
	nf->unet = u;
	unet_irq_set(nd, vp, u);
	mutex_unlock(&nd->unet.div_lock);
	req->port = vp;
	req->flags = NETVM_UNET_EMULATED;
	return 0;
}

/* Frees what unet_alloc() made. */
static void unet_free(struct netvm_unet *u)
{
	dma_free_coherent(&u->nd->pdev->dev, u->host_size, u->host,
			  u->host_dma);
	kfree(u);
}

/*
 * The endpoint and its coherent host block: the receive queue, then (not
 * pageable) the segment.  NULL when memory is short.
 */
static struct netvm_unet *unet_alloc(struct netvm_dev *nd,
				     const struct netvm_unet_open *req)
{
	bool pageable = req->flags & NETVM_UNET_PAGEABLE;
	u32 rxq_bytes;
	struct netvm_unet *u;

	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return NULL;
	rxq_bytes = PAGE_ALIGN(req->rxq_len * sizeof(struct nvm_unet_rx_desc));
	u->nd = nd;
	mutex_init(&u->lock);
	mutex_init(&u->dlock);
	u->seg_off = pageable ? 0 : rxq_bytes;
	u->seg_size = req->seg_size;
	u->buf_size = req->buf_size;
	u->rxq_len = req->rxq_len;
	u->host_size = rxq_bytes + (pageable ? 0 : req->seg_size);
	u->host = dma_alloc_coherent(&nd->pdev->dev, u->host_size,
				     &u->host_dma, GFP_KERNEL);
	if (!u->host) {
		kfree(u);
		return NULL;
	}
	return u;
}

/* The placeholder that makes NetVM's code see a NIC port as taken. */
static struct netvm_ep *unet_slot_alloc(struct netvm_dev *nd)
{
	struct netvm_ep *slot = kzalloc(sizeof(*slot), GFP_KERNEL);

	if (!slot)
		return NULL;
	slot->nd = nd;
	mutex_init(&slot->lock);
	INIT_LIST_HEAD(&slot->exports);
	slot->mm = current->mm;
	slot->unet = true;
	return slot;
}

/* The first free NIC port, or @count if none is; eps.lock held. */
static u32 unet_free_port(struct netvm_eps *eps, u32 count)
{
	u32 port;

	for (port = 1; port < count && eps->ep[port]; port++)
		;
	return port;
}

/*
 * Opens NIC port @port for @u in the firmware (NVM_KOP_UNET_OPEN); a
 * pageable segment is exported through @slot first (faulted in and
 * mapped now, followed from then on).  eps.lock held.
 */
static int unet_open_nic(struct netvm_unet *u, struct netvm_ep *slot,
			 u32 port, const struct netvm_unet_open *req)
{
	struct nvm_k_unet_open ko;
	int ret;

	memset(&ko, 0, sizeof(ko));
	ko.seg = u->host_dma + u->seg_off;
	ko.rxq = u->host_dma;
	ko.seg_size = u->seg_size;
	ko.buf_size = u->buf_size;
	ko.rxq_len = u->rxq_len;
	ko.port = port;
	if (req->flags & NETVM_UNET_PAGEABLE) {
		struct netvm_export *exp;

		slot->port = port;
		exp = netvm_export_add(slot, req->seg_va, req->seg_size, false,
				       "", true);
		if (IS_ERR(exp))
			return PTR_ERR(exp);
		u->seg_exp = exp;
		ko.seg = req->seg_va;
		ko.flags = NVM_UNET_KO_PAGEABLE;
	}
	ret = nv_kcmd(u->nd, NVM_KOP_UNET_OPEN, 0, 0, 0, 0, &ko, sizeof(ko));
	if (ret == -EINVAL)
		ret = -EBUSY;	/* the port's last owner still has records out */
	if (ret && u->seg_exp) {
		netvm_export_del(slot, u->seg_exp);
		u->seg_exp = NULL;
	}
	return ret;
}

/* The opened NIC port becomes @u's: the port table; eps.lock held. */
static void unet_take_port(struct netvm_unet *u, struct netvm_ep *slot,
			   u32 port)
{
	u->port = port;
	slot->port = port;
	u->slot = slot;
	u->mm = current->mm;
	mmgrab(u->mm);
	mmgrab(slot->mm);
	u->nd->eps.ep[port] = slot;
}

/* NETVM_IOC_UNET_OPEN's answer: where the process finds its endpoint. */
static int unet_open_reply(struct netvm_unet *u, struct netvm_unet_open *req,
			   void __user *uarg)
{
	req->node_id = u->nd->node_id;
	req->seg_off = u->seg_off;
	req->host_size = u->host_size;
	if (copy_to_user(uarg, req, sizeof(*req)))
		return -EFAULT;		/* the endpoint stays; close frees it */
	return 0;
}

/*
 * NETVM_IOC_UNET_OPEN: a NIC port if one is free (and the caller did not
 * ask for emulation), else a kernel-emulated one.
 */
static int unet_open(struct netvm_file *nf, void __user *uarg)
{
	struct netvm_dev *nd = nf->nd;
	struct netvm_eps *eps = &nd->eps;
	u32 count = min_t(u32, nd->layout.ep_count, NETVM_EP_MAX);
	struct netvm_unet_open req;
	struct netvm_unet *u;
	struct netvm_ep *slot;
	u32 port;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	ret = unet_check_open(&req);
	if (ret)
		return ret;
	if (!eps->ready)
		return -ENODEV;
	if (nf->ep || nf->unet)
		return -EBUSY;
	u = unet_alloc(nd, &req);
	slot = unet_slot_alloc(nd);
	if (!u || !slot) {
		ret = -ENOMEM;
		goto err_free;
	}

	unet_div_get(nd);
	mutex_lock(&eps->lock);
	port = unet_free_port(eps, count);
	if (port >= count && (req.flags & NETVM_UNET_PAGEABLE)) {
		ret = -EBUSY;		/* a kernel-emulated one needs it pinned */
		goto err_unlock;
	}
	if (port >= count || (req.flags & NETVM_UNET_EMULATE)) {
		mutex_unlock(&eps->lock);
		kfree(slot);
		slot = NULL;
		ret = unet_open_emulated(nf, u, &req);
		if (ret)
			goto err_div;
		return unet_open_reply(u, &req, uarg);
	}
	ret = unet_open_nic(u, slot, port, &req);
	if (ret)
		goto err_unlock;
	unet_take_port(u, slot, port);
	mutex_unlock(&eps->lock);
	nf->unet = u;
	unet_irq_set(nd, port, u);
	req.port = port;
	return unet_open_reply(u, &req, uarg);

err_unlock:
	mutex_unlock(&eps->lock);
err_div:
	unet_div_put(nd);
err_free:
	kfree(slot);
	if (u)
		unet_free(u);
	return ret;
}

/*
 * Whether @u already has an open channel that would take the frames of
 * (node, port, tag) (nvm_unet_chan_clash): the rule is per endpoint, as
 * every frame names its endpoint.  Called with u->lock, which every
 * change of u->ch[] holds.
 */
static bool unet_chan_taken(struct netvm_unet *u,
			    const struct netvm_unet_chan *req)
{
	u32 c;

	for (c = 0; c < NVM_UNET_CHANNELS; c++)
		if (u->ch[c].open &&
		    nvm_unet_chan_clash(req->node, req->port, req->tag,
					u->ch[c].node, u->ch[c].port,
					u->ch[c].tag))
			return true;
	return false;
}

/*
 * Only the kernel names the tag.  A duplicate of one of the endpoint's
 * own channels is refused here for both kinds of endpoint; the firmware
 * refuses it again for a NIC endpoint (it is that endpoint's NI).
 */
static int unet_channel(struct netvm_unet *u, void __user *uarg, bool open)
{
	struct netvm_unet_chan req;
	struct nvm_k_unet_chan kc;
	struct netvm_unet_chan_rec *rec;
	bool any;
	u32 i, c;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	for (i = 0; i < ARRAY_SIZE(req.reserved); i++)
		if (req.reserved[i])
			return -EINVAL;
	memset(&kc, 0, sizeof(kc));
	kc.port = u->port;
	mutex_lock(&u->lock);
	if (!open) {
		c = req.channel;
		if (c >= NVM_UNET_CHANNELS || !u->ch[c].open) {
			ret = -ENOENT;
			goto out;
		}
		kc.channel = c;
		ret = u->emulated ? 0 : nv_kcmd(u->nd, NVM_KOP_UNET_CHAN, 0, 0,
						0, 0, &kc, sizeof(kc));
		if (!ret)
			WRITE_ONCE(u->ch[c].open, false);
		goto out;
	}
	any = nvm_unet_is_any(req.node, req.port);
	if (any && u->emulated) {
		/* the driver's NI matches named channels only */
		ret = -EOPNOTSUPP;
		goto out;
	}
	if (!any && (req.node >= NVM_UNET_NODES || !req.port ||
		     req.port >= NVM_UNET_VPORT_MAX || req.channel)) {
		ret = -EINVAL;
		goto out;
	}
	if (any && req.channel) {
		ret = -EINVAL;
		goto out;
	}
	if (unet_chan_taken(u, &req)) {
		ret = -EADDRINUSE;
		goto out;
	}
	for (c = 0; c < NVM_UNET_CHANNELS && u->ch[c].open; c++)
		;
	if (c == NVM_UNET_CHANNELS) {
		ret = -ENOSPC;
		goto out;
	}
	kc.channel = c;
	kc.open = 1;
	kc.node = req.node;
	kc.rport = req.port;
	kc.tag = req.tag;
	/* the driver is an emulated endpoint's NI: checked above */
	ret = u->emulated ? 0 : nv_kcmd(u->nd, NVM_KOP_UNET_CHAN, 0, 0, 0, 0,
					&kc, sizeof(kc));
	if (ret == -EINVAL) {
		/* every other reason was checked above: the tag is taken */
		ret = -EADDRINUSE;
		goto out;
	}
	if (ret)
		goto out;
	rec = &u->ch[c];
	rec->node = req.node;
	rec->port = req.port;
	rec->tag = req.tag;
	smp_wmb();	/* the emulated NI reads open first */
	WRITE_ONCE(rec->open, true);
	req.channel = c;
	if (copy_to_user(uarg, &req, sizeof(req)))
		ret = -EFAULT;
out:
	mutex_unlock(&u->lock);
	return ret;
}

/*
 * The oldest diverted message, if it is the one the process expects.
 * When the buffer empties, the endpoint goes back to direct delivery.  The
 * firmware refuses while records are still on their way (the worker has
 * appended them but not yet handed their slots back): the worker asks
 * again once it has (direct_owed), or the endpoint would stay diverted
 * until the next message.
 */
static int unet_drecv(struct netvm_unet *u, void __user *uarg)
{
	struct netvm_unet_drecv req;
	struct unet_frec h;
	bool empty = false;
	void *buf = NULL;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags & ~NETVM_UNET_PEEK)
		return -EINVAL;
	mutex_lock(&u->dlock);
	req.buffered = u->dcount;
	req.overflow = u->overflow;
	req.len = 0;
	ret = -EAGAIN;
	if (!u->dcount)
		goto out;
	ret = fifo_io(u, &h, sizeof(h), u->dhead, false);
	if (ret)
		goto out;
	req.msgno = h.msgno;
	req.len = h.len;
	req.channel = h.channel;
	req.dsm = h.dsm;
	req.src = h.src;
	ret = -EAGAIN;
	if ((req.flags & NETVM_UNET_PEEK) || h.msgno != req.want)
		goto out;
	ret = -EMSGSIZE;
	if (h.len > req.cap || h.len > NVM_UNET_MSG_MAX)
		goto out;
	ret = -ENOMEM;
	buf = kmalloc(NVM_UNET_MSG_MAX, GFP_KERNEL);
	if (!buf)
		goto out;
	ret = fifo_io(u, buf, h.len, u->dhead + sizeof(h), false);
	if (!ret && copy_to_user(u64_to_user_ptr(req.buf), buf, h.len))
		ret = -EFAULT;
	if (ret)
		goto out;
	u->dhead += sizeof(h) + ALIGN(h.len, 16);
	WRITE_ONCE(u->dcount, u->dcount - 1);
	req.buffered = u->dcount;
	empty = !u->dcount;
	if (empty && !u->emulated)
		u->direct_owed = true;
out:
	mutex_unlock(&u->dlock);
	kfree(buf);
	if (empty && u->emulated) {
		/* direct again: the emulation released the senders it held */
		if (netvm_unet_emu_direct(u)) {
			mutex_lock(&u->dlock);
			u->holding = false;
			mutex_unlock(&u->dlock);
		}
	} else if (empty) {
		unet_ask_direct(u);
	}
	if (ret != -EFAULT && copy_to_user(uarg, &req, sizeof(req)))
		ret = -EFAULT;
	return ret;
}

/* Called with nd->lifetime held for reading. */
long netvm_unet_ioctl(struct netvm_file *nf, unsigned int cmd,
		      void __user *u)
{
	struct netvm_unet *un;
	long ret;

	mutex_lock(&nf->lock);
	if (cmd == NETVM_IOC_UNET_OPEN) {
		ret = unet_open(nf, u);
		mutex_unlock(&nf->lock);
		return ret;
	}
	un = nf->unet;
	if (!un)
		ret = -ENXIO;
	else if (un->mm != current->mm)
		ret = -EACCES;		/* only the process that opened it */
	else if (cmd == NETVM_IOC_UNET_CHANNEL)
		ret = unet_channel(un, u, true);
	else if (cmd == NETVM_IOC_UNET_UNCHANNEL)
		ret = unet_channel(un, u, false);
	else if (cmd == NETVM_IOC_UNET_DRECV)
		ret = unet_drecv(un, u);
	else if (cmd == NETVM_IOC_UNET_KICK)
		ret = un->emulated ? netvm_unet_emu_kick(un) : 0;
	else if (cmd == NETVM_IOC_UNET_SCHED)
		ret = netvm_unet_sched(un, u);
	else
		ret = -ENOTTY;
	mutex_unlock(&nf->lock);
	return ret;
}

/* The SRAM region, the doorbell page and the host block, from their start. */
int netvm_unet_mmap(struct netvm_file *nf, struct vm_area_struct *vma)
{
	struct netvm_dev *nd = nf->nd;
	unsigned long off = vma->vm_pgoff << PAGE_SHIFT;
	struct netvm_unet *u;
	int ret;

	mutex_lock(&nf->lock);
	u = nf->unet;
	if (u->mm != current->mm || READ_ONCE(nd->dead)) {
		ret = -EACCES;
		goto out;
	}
	if (u->emulated && off != NETVM_EP_MMAP_HOST) {
		netvm_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND |
				   VM_DONTDUMP);
		ret = netvm_unet_emu_mmap(u, vma, off);
		goto out;
	}
	ret = netvm_mmap_port(nd, vma, u->port, u->host, u->host_dma,
			      u->host_size);
out:
	mutex_unlock(&nf->lock);
	return ret;
}

/*
 * Readable when the receive descriptor after the last one the process
 * consumed (its rx_cons, in SRAM) is complete.  The firmware wakes the
 * port's wait queue with NVM_EV_NOTIFY (data 0) when the process armed it.
 */
__poll_t netvm_unet_poll(struct netvm_file *nf, struct file *file,
			 struct poll_table_struct *wait)
{
	struct netvm_unet *u = READ_ONCE(nf->unet);
	const struct nvm_unet_rx_desc *d;
	u32 cons;

	if (!u || READ_ONCE(nf->nd->dead))
		return 0;
	if (u->emulated)
		return netvm_unet_emu_poll(u, file, wait);
	poll_wait(file, &nf->nd->eps.wq[u->port], wait);
	cons = readl(netvm_unet_region(u) + NVM_UNET_CTL +
		     offsetof(struct nvm_unet_ctl, rx_cons));
	d = u->host + (cons & (u->rxq_len - 1)) * sizeof(*d);
	if (READ_ONCE(d->seq) == cons + 1 || READ_ONCE(u->dcount))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

void netvm_unet_release(struct netvm_file *nf)
{
	struct netvm_unet *u = nf->unet;
	struct netvm_dev *nd = nf->nd;

	if (!u)
		return;
	nf->unet = NULL;
	unet_irq_set(nd, u->port, NULL);
	netvm_unet_sched_release(u);
	/*
	 * Close in the firmware first: its completion is written after every
	 * DMA job queued before it, so nothing reaches the block once it
	 * returns.  Only then is the port free for someone else.
	 */
	if (!u->emulated && !READ_ONCE(nd->dead) && nd->eps.ready)
		nv_kcmd(nd, NVM_KOP_UNET_CLOSE, 0, (u16)u->port, 0, 0, NULL, 0);
	if (!u->emulated) {
		mutex_lock(&nd->eps.lock);
		nd->eps.ep[u->port] = NULL;
		mutex_unlock(&nd->eps.lock);
		/* the NI is done with it: its translations can go */
		if (u->seg_exp)
			netvm_export_del(u->slot, u->seg_exp);
	}
	/* the divert worker looks endpoints up under unet.div_lock */
	mutex_lock(&nd->unet.div_lock);
	mutex_unlock(&nd->unet.div_lock);
	if (u->emulated)
		netvm_unet_emu_close(u);	/* its senders released */
	unet_div_put(nd);
	if (u->dfile)
		fput(u->dfile);	/* buffered messages go with the endpoint */
	if (u->emulated) {
		netvm_unet_emu_free(u);
	} else {
		mmdrop(u->slot->mm);
		kfree(u->slot);
	}
	mmdrop(u->mm);
	dma_free_coherent(&nd->pdev->dev, u->host_size, u->host, u->host_dma);
	kfree(u);
}

/* fcntl(F_SETFL, O_ASYNC): the upcall signal goes to the file's owner. */
int netvm_unet_fasync(struct netvm_file *nf, int fd, struct file *file,
		      int on)
{
	struct netvm_unet *u = READ_ONCE(nf->unet);

	if (!u)
		return on ? -ENXIO : 0;
	return fasync_helper(fd, file, on, &u->fasync);
}

/*
 * From the event IRQ handler: a U-Net port's NVM_EV_NOTIFY (the router
 * in netvm_events.c sends a port's events to its owner only).  Wakes the
 * port's sleepers (its wait queue in eps.wq[]); the upcall reasons become
 * a signal: POLL_IN when the queue became non-empty, POLL_PRI when it
 * reached the process's threshold (si_band tells which).
 */
void netvm_unet_divert_event(struct netvm_dev *nd, const struct nvm_event *ev)
{
	struct netvm_unet_div *ud = &nd->unet.div;

	if ((le32_to_cpu((__force __le32)ev->data) & NVM_UNET_EV_DIVERT) &&
	    READ_ONCE(ud->ready)) {
		atomic_set(&ud->prod, (u32)le64_to_cpu((__force __le64)ev->arg));
		queue_work(system_unbound_wq, &ud->work);
	}
}

void netvm_unet_event(struct netvm_dev *nd, const struct nvm_event *ev)
{
	u32 port = le16_to_cpu((__force __le16)ev->endpoint);
	u32 data = le32_to_cpu((__force __le32)ev->data);
	struct netvm_unet *u;

	netvm_unet_divert_event(nd, ev);
	if (port < NETVM_EP_MAX && nd->eps.ready)
		wake_up_interruptible(&nd->eps.wq[port]);	/* its sleepers */
	if (data & NVM_UNET_EV_CTL) {
		/* a control frame for a kernel-emulated endpoint */
		if (port < NVM_UNET_VPORT_MIN || port >= NVM_UNET_VPORT_MAX)
			return;
		spin_lock(&nd->unet.irq_lock);
		u = nd->unet.irq[port];
		if (u && u->emulated)
			netvm_unet_emu_ctl(u, data,
					   le64_to_cpu((__force __le64)ev->arg));
		spin_unlock(&nd->unet.irq_lock);
		return;
	}
	if (!(data & (NVM_UNET_EV_NONEMPTY | NVM_UNET_EV_ALMOST_FULL)) ||
	    port >= NETVM_EP_MAX)
		return;
	spin_lock(&nd->unet.irq_lock);
	u = nd->unet.irq[port];
	if (u && (data & NVM_UNET_EV_NONEMPTY))
		kill_fasync(&u->fasync, SIGIO, POLL_IN);
	if (u && (data & NVM_UNET_EV_ALMOST_FULL))
		kill_fasync(&u->fasync, SIGIO, POLL_PRI);
	spin_unlock(&nd->unet.irq_lock);
}
