// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: kernel-emulated U-Net endpoints (docs/unet.md).
 *
 * When the NIC's ports run out, an endpoint gets a virtual port and this
 * file plays its NI: the process sees the same layout in the same
 * mappings, but its "SRAM region" is kernel memory, so after posting send
 * descriptors it calls NETVM_IOC_UNET_KICK.  Messages go out through the
 * kernel endpoint (NVM_KOP_UNET_KSEND, stamped with the virtual port) and
 * come in through the divert ring, which the NIC uses for every virtual
 * port; they are checked and queued here exactly as the firmware does for
 * its own endpoints (fw_unet.c), FUGU's buffered path included.
 *
 * The DSM extensions work here too (docs/dsm.md): KSEND carries the wire
 * flags and reply number, a gather list is copied piece by piece into the
 * kernel's send buffer, and a reply is looked up in the process's reply
 * table (its "SRAM region") as the firmware does.
 *
 * Sleepers are woken at every interrupting delivery (no interrupt is
 * involved, so arm is not needed); a NOINTR one wakes nobody.
 *
 * Overflow control as the NI's (fw_unet_flow.c): a HOLD, RELEASE or
 * DROPPED frame for the virtual port reaches the driver as an event
 * (NVM_UNET_EV_CTL) and holds the channel's sends for NVM_UNET_HOLD_MS
 * unless refreshed; when the endpoint's FIFO passes the high-water mark
 * the driver has the NI send HOLD frames from the virtual port
 * (NVM_KOP_UNET_KCTL), every NVM_UNET_REFRESH_MS, and RELEASE once it is
 * back to direct delivery or closes.
 *
 * Locking: netvm_unet.elock guards est, edge_owed, e_state and e_ctl_due;
 * the divert worker calls netvm_unet_emu_deliver() with netvm_unet_dev.div_lock
 * held.  netvm_unet.hlock (IRQ-safe, inside elock) guards the holds the
 * event handler sets.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/vmalloc.h>

#include "netvm_drv.h"

/* ks: one inline message, then the word the NI writes the cookie to */
#define EMU_KS_DONE	NVM_UNET_MSG_MAX
#define EMU_KS_SIZE	(NVM_UNET_MSG_MAX + 64)
#define EMU_KS_TRIES	20000	/* ~1 s of 50 us waits */
#define EMU_KS_BUSY_MS	10000	/* the NI busy this long: the send fails */

static struct nvm_unet_ctl *emu_ctl(struct netvm_unet *u)
{
	return u->vsram + NVM_UNET_CTL;
}

static const char *const emu_state_names[NETVM_UNET_EMU_STATES] = {
	[NETVM_UNET_EMU_DIRECT] = "direct",
	[NETVM_UNET_EMU_DIVERT] = "divert",
	[NETVM_UNET_EMU_HELD] = "held",
};

/* The transitions each state has (as the NI's, fw_state.c). */
static const u8 emu_state_next[NETVM_UNET_EMU_STATES] = {
	[NETVM_UNET_EMU_DIRECT] = BIT(NETVM_UNET_EMU_DIVERT),
	[NETVM_UNET_EMU_DIVERT] = BIT(NETVM_UNET_EMU_HELD) |
				  BIT(NETVM_UNET_EMU_DIRECT),
	[NETVM_UNET_EMU_HELD] = BIT(NETVM_UNET_EMU_DIVERT),
};

/* Every change of e_state (elock): checked, one debug line each. */
static void emu_set_state(struct netvm_unet *u, enum netvm_unet_emu_state to)
{
	enum netvm_unet_emu_state from = u->e_state;

	if (!(emu_state_next[from] & BIT(to)))
		pr_warn_ratelimited("netvm: U-Net port %u: %s -> %s is not a transition\n",
				    u->port, emu_state_names[from],
				    emu_state_names[to]);
	else
		pr_debug("netvm: U-Net port %u: %s -> %s\n", u->port,
			 emu_state_names[from], emu_state_names[to]);
	u->e_state = to;
}

static void emu_publish(struct netvm_unet *u)
{
	u->est.divert_mode = u->e_state != NETVM_UNET_EMU_DIRECT;
	memcpy(u->vsram + NVM_UNET_STATUS, &u->est, sizeof(u->est));
}

static void emu_timer(struct timer_list *t);
static void emu_tx_work(struct work_struct *w);
static void emu_hold_work(struct work_struct *w);

int netvm_unet_emu_setup(struct netvm_unet *u)
{
	u->vsram = vmalloc_user(NVM_EP_STRIDE);
	u->vdb = vmalloc_user(PAGE_SIZE);
	u->ks = dma_alloc_coherent(&u->nd->pdev->dev, EMU_KS_SIZE,
				   &u->ks_dma, GFP_KERNEL);
	if (!u->vsram || !u->vdb || !u->ks) {
		netvm_unet_emu_free(u);
		return -ENOMEM;
	}
	init_waitqueue_head(&u->ewq);
	mutex_init(&u->elock);
	spin_lock_init(&u->hlock);
	timer_setup(&u->e_timer, emu_timer, 0);
	INIT_WORK(&u->etx, emu_tx_work);
	INIT_DELAYED_WORK(&u->ehold, emu_hold_work);
	return 0;
}

void netvm_unet_emu_free(struct netvm_unet *u)
{
	vfree(u->vsram);
	vfree(u->vdb);
	if (u->ks)
		dma_free_coherent(&u->nd->pdev->dev, EMU_KS_SIZE, u->ks,
				  u->ks_dma);
	u->vsram = NULL;
	u->vdb = NULL;
	u->ks = NULL;
}

/* The firmware's checks (send_check), from the one rule set. */
static u32 emu_check(struct netvm_unet *u, const struct nvm_unet_send_desc *d)
{
	return nvm_unet_send_check(d, u->seg_size,
				   d->channel < NVM_UNET_CHANNELS &&
				   READ_ONCE(u->ch[d->channel].open));
}

/* The pieces of a checked gather list, one after the other, into ks. */
static void emu_gather(struct netvm_unet *u, const struct nvm_unet_send_desc *d)
{
	struct nvm_unet_gather g;
	u32 at = 0, i;

	memcpy(&g, d->data, sizeof(g));
	for (i = 0; i < g.count; i++) {
		memcpy(u->ks + at, u->host + u->seg_off + g.piece[i].offset,
		       g.piece[i].len);
		at += g.piece[i].len;
	}
}

/*
 * Send through the kernel endpoint and wait until the NI has fetched the
 * bytes (its cookie lands in ks), so SENT means reusable, as for a NIC
 * endpoint.  A node with no route or given up is refused by the NI
 * (NVM_ST_UNREACHABLE), or after the fetch (the cookie comes back marked
 * NVM_UNET_KS_UNREACHABLE), and the send fails UNREACHABLE, as a NIC
 * endpoint's does.
 */
static u32 emu_ksend(struct netvm_unet *u, const struct nvm_k_unet_ksend *k)
{
	unsigned long end = jiffies + msecs_to_jiffies(EMU_KS_BUSY_MS);
	u32 *done = u->ks + EMU_KS_DONE;
	int i, ret;

	/*
	 * The NI is busy (its send queue or transmit buffers are full, a
	 * full-speed sender outruns the wire): wait as a NIC endpoint's send
	 * waits in its queue, rather than fail the message.
	 */
	while ((ret = nv_kcmd(u->nd, NVM_KOP_UNET_KSEND, 0, 0, 0, 0, k,
			      sizeof(*k))) == -EBUSY &&
	       time_before(jiffies, end) && !READ_ONCE(u->nd->dead))
		usleep_range(50, 200);
	if (ret == -EHOSTUNREACH)
		return NVM_UNET_ST_UNREACHABLE;
	if (ret)
		return NVM_UNET_ST_DMA;
	for (i = 0; i < EMU_KS_TRIES; i++) {
		u32 got = READ_ONCE(*done);

		if (got == k->cookie)
			return NVM_UNET_ST_SENT;
		/* fetched, but its node became unreachable meanwhile */
		if (got == (k->cookie | NVM_UNET_KS_UNREACHABLE))
			return NVM_UNET_ST_UNREACHABLE;
		usleep_range(20, 50);
	}
	return NVM_UNET_ST_DMA;
}

/* ---- overflow control, sending side ---- */

/*
 * Holds that ran out unrefreshed end, as the NI's do (elock and hlock
 * held), and DROPPED notices are counted.
 */
static void emu_expire(struct netvm_unet *u)
{
	u32 c;

	for (c = 0; c < NVM_UNET_CHANNELS; c++) {
		if (!(u->e_held & BIT(c)) ||
		    time_before(jiffies, u->e_until[c]))
			continue;
		u->e_held &= ~BIT(c);
		u->est.hold_expired++;
	}
	u->est.peer_dropped += u->e_dropped;
	u->e_dropped = 0;
}

/*
 * Whether channel @c's receiver holds it (elock held): counted once per
 * wait, as the NI's tx_held.
 */
static bool emu_tx_held(struct netvm_unet *u, u32 c)
{
	unsigned long flags;
	bool held;

	spin_lock_irqsave(&u->hlock, flags);
	emu_expire(u);
	held = u->e_held & BIT(c);
	spin_unlock_irqrestore(&u->hlock, flags);
	if (held && !u->est.tx_held_now) {
		u->est.tx_held_now = 1;
		u->est.tx_held++;
	} else if (!held && u->est.tx_held_now) {
		u->est.tx_held_now = 0;
	}
	return held;
}

/* The earliest hold's end, while any lasts and the endpoint is open. */
static void emu_rearm(struct netvm_unet *u)
{
	unsigned long flags, end = 0;
	bool any = false;
	u32 c;

	spin_lock_irqsave(&u->hlock, flags);
	for (c = 0; c < NVM_UNET_CHANNELS; c++) {
		if (!(u->e_held & BIT(c)))
			continue;
		if (!any || time_before(u->e_until[c], end))
			end = u->e_until[c];
		any = true;
	}
	if (any && !u->e_dead)
		timer_reduce(&u->e_timer, end);
	spin_unlock_irqrestore(&u->hlock, flags);
}

static void emu_timer(struct timer_list *t)
{
	struct netvm_unet *u = from_timer(u, t, e_timer);

	queue_work(system_wq, &u->etx);
}

static void emu_kick_locked(struct netvm_unet *u);

/* A RELEASE, a DROPPED or a hold's end: send what waited, publish. */
static void emu_tx_work(struct work_struct *w)
{
	struct netvm_unet *u = container_of(w, struct netvm_unet, etx);
	unsigned long flags;

	mutex_lock(&u->elock);
	spin_lock_irqsave(&u->hlock, flags);
	emu_expire(u);
	spin_unlock_irqrestore(&u->hlock, flags);
	emu_kick_locked(u);
	emu_publish(u);
	mutex_unlock(&u->elock);
	emu_rearm(u);
}

/*
 * From the event IRQ handler: a control frame for this endpoint.  It is
 * matched as the NI matches one (source node, source port, tag), so a
 * peer can hold only the channels whose far end it is; a hold costs one
 * word per channel and lapses NVM_UNET_HOLD_MS after the last HOLD.
 */
void netvm_unet_emu_ctl(struct netvm_unet *u, u32 data, u64 arg)
{
	u32 flag = (data >> 8) & 0xff, count = data >> 16;
	u32 tag = lower_32_bits(arg), node = (arg >> 32) & 0xffff;
	u32 port = arg >> 48;
	unsigned long flags, end;
	u32 c;

	for (c = 0; c < NVM_UNET_CHANNELS; c++)
		if (READ_ONCE(u->ch[c].open) && u->ch[c].node == node &&
		    u->ch[c].port == port && u->ch[c].tag == tag)
			break;
	if (c == NVM_UNET_CHANNELS)
		return;		/* not one of ours: as the NI, nothing */
	spin_lock_irqsave(&u->hlock, flags);
	if (flag == NVM_UNET_HF_HOLD) {
		end = jiffies + msecs_to_jiffies(NVM_UNET_HOLD_MS);
		u->e_held |= BIT(c);
		u->e_until[c] = end;
		if (!u->e_dead)
			timer_reduce(&u->e_timer, end);
	} else if (flag == NVM_UNET_HF_RELEASE) {
		u->e_held &= ~BIT(c);
	} else if (flag == NVM_UNET_HF_DROPPED) {
		u->e_dropped += count;
	}
	spin_unlock_irqrestore(&u->hlock, flags);
	if (flag != NVM_UNET_HF_HOLD)
		queue_work(system_wq, &u->etx);	/* the held sends go */
}

/* ---- overflow control, receiving side ---- */

static u16 emu_open_channels(struct netvm_unet *u)
{
	u16 m = 0;
	u32 c;

	for (c = 0; c < NVM_UNET_CHANNELS; c++)
		if (READ_ONCE(u->ch[c].open))
			m |= BIT(c);
	return m;
}

/*
 * The HOLD or RELEASE frames owed (elock held), sent by the NI from the
 * virtual port; true if some could not go now.
 */
static bool emu_ctl_flush(struct netvm_unet *u)
{
	struct nvm_k_unet_kctl k;
	u32 c;

	for (c = 0; c < NVM_UNET_CHANNELS; c++) {
		if (!(u->e_ctl_due & BIT(c)))
			continue;
		if (READ_ONCE(u->ch[c].open)) {
			memset(&k, 0, sizeof(k));
			k.node = (u16)u->ch[c].node;
			k.dst_port = (u16)u->ch[c].port;
			k.src_port = (u16)u->port;
			k.tag = u->ch[c].tag;
			k.flags = u->e_state == NETVM_UNET_EMU_HELD ?
				  NVM_UNET_HF_HOLD :
				  NVM_UNET_HF_RELEASE;
			if (READ_ONCE(u->nd->dead) ||
			    nv_kcmd(u->nd, NVM_KOP_UNET_KCTL, 0, 0, 0, 0, &k,
				    sizeof(k)))
				continue;	/* busy: later */
		}
		u->e_ctl_due &= ~BIT(c);
	}
	return u->e_ctl_due;
}

/* The FIFO passed the mark: hold the senders while it diverts (elock). */
static void emu_hold(struct netvm_unet *u)
{
	if (u->e_state != NETVM_UNET_EMU_DIVERT)
		return;
	emu_set_state(u, NETVM_UNET_EMU_HELD);
	u->est.hold_on++;
	u->e_ctl_due = emu_open_channels(u);
	emu_ctl_flush(u);
	mod_delayed_work(system_wq, &u->ehold,
			 msecs_to_jiffies(NVM_UNET_REFRESH_MS));
}

/* Before going direct again (elock): the senders may go on. */
static void emu_release(struct netvm_unet *u)
{
	if (u->e_state != NETVM_UNET_EMU_HELD)
		return;
	emu_set_state(u, NETVM_UNET_EMU_DIVERT);
	u->est.hold_off++;
	u->e_ctl_due = emu_open_channels(u);
	if (emu_ctl_flush(u))
		mod_delayed_work(system_wq, &u->ehold, 1);
}

/* The refresh every NVM_UNET_REFRESH_MS, and frames that could not go. */
static void emu_hold_work(struct work_struct *w)
{
	struct netvm_unet *u = container_of(to_delayed_work(w),
					    struct netvm_unet, ehold);
	unsigned long next = 0;

	mutex_lock(&u->elock);
	if (u->e_state == NETVM_UNET_EMU_HELD) {
		u->e_ctl_due = emu_open_channels(u);
		emu_ctl_flush(u);
		next = msecs_to_jiffies(NVM_UNET_REFRESH_MS);
	} else if (emu_ctl_flush(u)) {
		next = 1;	/* a RELEASE owed */
	}
	mutex_unlock(&u->elock);
	if (next)
		queue_delayed_work(system_wq, &u->ehold, next);
}

/*
 * Closing (nobody can reach the endpoint any more): its senders are
 * released at once (a frame that cannot go lapses at the sender), and
 * nothing runs for it afterwards.
 */
void netvm_unet_emu_close(struct netvm_unet *u)
{
	unsigned long flags;

	spin_lock_irqsave(&u->hlock, flags);
	u->e_dead = true;
	spin_unlock_irqrestore(&u->hlock, flags);
	del_timer_sync(&u->e_timer);
	cancel_work_sync(&u->etx);
	del_timer_sync(&u->e_timer);
	cancel_delayed_work_sync(&u->ehold);
	mutex_lock(&u->elock);
	if (u->e_state == NETVM_UNET_EMU_HELD) {
		emu_set_state(u, NETVM_UNET_EMU_DIVERT);
		u->e_ctl_due = emu_open_channels(u);
		emu_ctl_flush(u);
	}
	mutex_unlock(&u->elock);
}

/* Take every complete send descriptor, in order, as the NI would. */
int netvm_unet_emu_kick(struct netvm_unet *u)
{
	mutex_lock(&u->elock);
	emu_kick_locked(u);
	mutex_unlock(&u->elock);
	emu_rearm(u);
	return 0;
}

static void emu_kick_locked(struct netvm_unet *u)
{
	struct nvm_unet_send_desc d;
	struct nvm_k_unet_ksend k;
	void *slot;
	u32 st;

	for (;;) {
		slot = u->vsram + NVM_UNET_SENDQ +
		       (u->est.send_consumed % NVM_UNET_SENDQ_LEN) * sizeof(d);
		memcpy(&d, slot, sizeof(d));
		if (d.seq != u->est.send_consumed + 1)
			break;
		smp_rmb();	/* the seq before the rest */
		memcpy(&d, slot, sizeof(d));
		st = emu_check(u, &d);
		if (!st && emu_tx_held(u, d.channel)) {
			emu_publish(u);
			break;	/* its receiver holds it (overflow control) */
		}
		if (!st) {
			memset(&k, 0, sizeof(k));
			k.len = d.len;
			if (d.flags & NVM_UNET_F_INLINE) {
				memcpy(u->ks, d.data, d.len);
				k.addr = u->ks_dma;
			} else if (d.flags & NVM_UNET_F_GATHER) {
				emu_gather(u, &d);
				k.addr = u->ks_dma;
			} else {
				k.addr = u->host_dma + u->seg_off + d.offset;
			}
			k.tag = u->ch[d.channel].tag;
			k.node = (u16)u->ch[d.channel].node;
			k.dst_port = (u16)u->ch[d.channel].port;
			k.src_port = (u16)u->port;
			k.done_addr = u->ks_dma + EMU_KS_DONE;
			k.cookie = (u->est.send_consumed + 1) &
				   ~NVM_UNET_KS_UNREACHABLE;
			k.hflags = (d.flags & NVM_UNET_F_NOINTR ?
				    NVM_UNET_HF_NOINTR : 0) |
				   (d.flags & NVM_UNET_F_REPLY ?
				    NVM_UNET_HF_REPLY : 0);
			k.reply = d.reply;
			st = emu_ksend(u, &k);
		}
		((struct nvm_unet_send_desc *)slot)->status = (u8)st;
		u->est.send_consumed++;
		if (st != NVM_UNET_ST_SENT)
			u->est.send_errors++;
		emu_publish(u);
	}
}

/*
 * As the firmware's reply_lookup(): the fate of a reply (the ABI's rule),
 * with where it goes on a hit.  Only a look: emu_reply_commit() acts.
 */
static enum nvm_unet_reply_fate emu_reply_lookup(struct netvm_unet *u, int ch,
						 u32 dsm, u32 len, u32 *off)
{
	const struct nvm_unet_reply_ent *e = u->vsram + NVM_UNET_REPLYTAB;
	struct nvm_unet_reply_ent r;
	u32 num = dsm >> 16;
	enum nvm_unet_reply_fate fate;

	if (!(dsm & NVM_UNET_F_REPLY))
		return NVM_UNET_REPLY_NONE;
	if (num >= NVM_UNET_REPLY_SLOTS)
		return NVM_UNET_REPLY_MISS;
	e += num;
	r.armed = READ_ONCE(e->armed);
	smp_rmb();	/* armed, then the rest (the process wrote them first) */
	r.channel = READ_ONCE(e->channel);
	r.offset = READ_ONCE(e->offset);
	r.len = READ_ONCE(e->len);
	fate = nvm_unet_reply_fate(&r, ch, len, u->seg_size);
	if (fate == NVM_UNET_REPLY_HIT)
		*off = r.offset;
	return fate;
}

/* A hit or an oversize uses the arming up (one reply per arming). */
static void emu_reply_commit(struct netvm_unet *u, u32 dsm, enum nvm_unet_reply_fate f)
{
	struct nvm_unet_reply_ent *e = u->vsram + NVM_UNET_REPLYTAB;

	if (f == NVM_UNET_REPLY_NONE)
		return;
	if (f == NVM_UNET_REPLY_HIT || f == NVM_UNET_REPLY_OVERSIZE)
		WRITE_ONCE(e[dsm >> 16].armed, 0);
	if (f == NVM_UNET_REPLY_HIT)
		u->est.reply_hits++;
	else
		u->est.reply_misses++;
}

/* Into the receive queue if there is room, else the pageable FIFO. */
static bool emu_direct(struct netvm_unet *u, int ch,
		       const struct nvm_unet_div_rec *r)
{
	struct nvm_unet_ctl *ctl = emu_ctl(u);
	u32 rx_cons = READ_ONCE(ctl->rx_cons), bs = u->buf_size, nbuf = 0, i;
	u32 *freeq = u->vsram + NVM_UNET_FREEQ;
	struct nvm_unet_rx_desc *d;
	u32 offs[NVM_UNET_RX_BUFS];
	u32 hit_off = 0;
	enum nvm_unet_reply_fate fate;

	if (u->e_state != NETVM_UNET_EMU_DIRECT) {
		u->est.div_order++;
		return false;
	}
	if (u->est.rx_prod - rx_cons >= u->rxq_len) {
		u->est.rx_ring_full++;
		return false;
	}
	/* a hit needs no free buffer; a miss for want of one leaves it armed */
	fate = emu_reply_lookup(u, ch, r->dsm, r->len, &hit_off);
	if (fate != NVM_UNET_REPLY_HIT && r->len > NVM_UNET_INLINE_MAX) {
		u32 avail = READ_ONCE(ctl->free_prod) - u->est.free_cons;

		nbuf = DIV_ROUND_UP(r->len, bs);
		if (avail < nbuf || avail > NVM_UNET_FREEQ_LEN) {
			u->est.rx_no_buf++;
			return false;
		}
		for (i = 0; i < nbuf; i++) {
			offs[i] = READ_ONCE(freeq[(u->est.free_cons + i) %
					    NVM_UNET_FREEQ_LEN]);
			if (offs[i] > u->seg_size || u->seg_size - offs[i] < bs) {
				u->est.free_cons += i + 1;
				u->est.rx_no_buf++;
				return false;
			}
		}
		u->est.free_cons += nbuf;
	}
	emu_reply_commit(u, r->dsm, fate);
	d = u->host + (u->est.rx_prod % u->rxq_len) * sizeof(*d);
	d->channel = (u16)ch;
	d->len = r->len;
	d->msgno = u->est.msgs++;
	d->nbuf = nbuf;
	d->flags = r->dsm & (NVM_UNET_F_NOINTR | NVM_UNET_F_REPLY);
	d->reply = r->dsm & NVM_UNET_F_REPLY ? r->dsm >> 16 : 0;
	d->src_node = r->src_node;
	d->src_port = r->src_port;
	if (fate == NVM_UNET_REPLY_HIT) {
		d->flags |= NVM_UNET_F_HIT;
		d->buf[0] = hit_off;
		memcpy(u->host + u->seg_off + hit_off, r->data, r->len);
	} else if (!nbuf) {
		d->flags |= NVM_UNET_F_INLINE;
		memcpy(d->data, r->data, r->len);
	} else {
		for (i = 0; i < nbuf; i++) {
			memcpy(u->host + u->seg_off + offs[i], r->data + i * bs,
			       min(bs, r->len - i * bs));
			d->buf[i] = offs[i];
		}
	}
	if (r->dsm & NVM_UNET_F_NOINTR)
		u->est.quiet++;
	smp_wmb();	/* the descriptor before its seq */
	WRITE_ONCE(d->seq, u->est.rx_prod + 1);
	u->est.rx_prod++;
	return true;
}

void netvm_unet_emu_deliver(struct netvm_unet *u,
			    const struct nvm_unet_div_rec *r)
{
	struct nvm_unet_ctl *ctl = emu_ctl(u);
	bool direct;
	u32 depth;
	int ch;

	mutex_lock(&u->elock);
	for (ch = 0; ch < NVM_UNET_CHANNELS; ch++)
		if (READ_ONCE(u->ch[ch].open) && u->ch[ch].node == r->src_node &&
		    u->ch[ch].port == r->src_port && u->ch[ch].tag == r->tag)
			break;
	if (ch == NVM_UNET_CHANNELS) {
		/* the firmware's counter has no say here: the endpoint's own */
		u->est.dropped++;
		emu_publish(u);
		mutex_unlock(&u->elock);
		return;
	}
	direct = emu_direct(u, ch, r);
	if (!direct) {
		/* FUGU's second case, as for a NIC endpoint (flags kept) */
		u->est.diverted++;
		if (u->e_state == NETVM_UNET_EMU_DIRECT)
			emu_set_state(u, NETVM_UNET_EMU_DIVERT);
		if (netvm_unet_fifo_put(u, u->est.msgs++, ch,
					r->dsm & ~NVM_UNET_F_HIT,
					r->src_node | (u32)r->src_port << 16,
					r->data, r->len))
			emu_hold(u);	/* past the high-water mark */
	}
	emu_publish(u);
	smp_mb();	/* the descriptor before rx_cons (fw_unet.c) */
	depth = u->est.rx_prod - READ_ONCE(ctl->rx_cons) + u->dcount;
	if (direct && (r->dsm & NVM_UNET_F_NOINTR)) {
		/*
		 * Queued only (a barrier arrival): no wakeup, no upcall, as
		 * the NI; a non-empty edge it took is owed to the next
		 * interrupting message.
		 */
		if (depth == 1)
			u->edge_owed = true;
		mutex_unlock(&u->elock);
		return;
	}
	if (READ_ONCE(ctl->upcall) && (depth == 1 || (u->edge_owed && depth))) {
		u->est.events++;
		kill_fasync(&u->fasync, SIGIO, POLL_IN);
	}
	u->edge_owed = false;
	if (READ_ONCE(ctl->upcall) && ctl->upcall_full &&
	    depth == READ_ONCE(ctl->upcall_full)) {
		u->est.events++;
		kill_fasync(&u->fasync, SIGIO, POLL_PRI);
	}
	emu_publish(u);
	mutex_unlock(&u->elock);
	wake_up_interruptible(&u->ewq);
}

/*
 * The process has taken every buffered message: direct again, unless one
 * came meanwhile (the next emptying asks again), and the senders are
 * released.  True if direct.
 */
bool netvm_unet_emu_direct(struct netvm_unet *u)
{
	bool direct;

	mutex_lock(&u->elock);
	direct = !READ_ONCE(u->dcount);	/* only deliver() adds, under elock */
	if (direct) {
		emu_release(u);
		if (u->e_state != NETVM_UNET_EMU_DIRECT)
			emu_set_state(u, NETVM_UNET_EMU_DIRECT);
		emu_publish(u);
	}
	mutex_unlock(&u->elock);
	return direct;
}

int netvm_unet_emu_mmap(struct netvm_unet *u, struct vm_area_struct *vma,
			unsigned long off)
{
	unsigned long size = vma->vm_end - vma->vm_start;

	if (off == NETVM_EP_MMAP_SRAM && size <= NVM_EP_STRIDE)
		return remap_vmalloc_range(vma, u->vsram, 0);
	if (off == NETVM_EP_MMAP_DB && size <= PAGE_SIZE)
		return remap_vmalloc_range(vma, u->vdb, 0);
	return -EINVAL;
}

__poll_t netvm_unet_emu_poll(struct netvm_unet *u, struct file *file,
			     struct poll_table_struct *wait)
{
	const struct nvm_unet_rx_desc *d;
	u32 cons;

	poll_wait(file, &u->ewq, wait);
	cons = READ_ONCE(emu_ctl(u)->rx_cons);
	d = u->host + (cons & (u->rxq_len - 1)) * sizeof(*d);
	if (READ_ONCE(d->seq) == cons + 1 || READ_ONCE(u->dcount))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}
