// SPDX-License-Identifier: GPL-2.0-only
/*
 * U-Net overflow control (FUGU): throttle the sender instead of dropping.
 *
 * Receiving side: when an endpoint's buffered FIFO in the driver passes
 * its high-water mark, the driver says NVM_KOP_UNET_HOLD; the NI then
 * sends a HOLD control frame on every open channel of the endpoint and
 * repeats it every FW_UNET_REFRESH_TICKS while the hold lasts.  When the
 * endpoint is back to direct delivery (NVM_KOP_UNET_DIRECT accepted: the
 * FIFO is empty and nothing is on its way), or it closes, the NI sends
 * RELEASE.  Releasing only then is what brings a steady sender's
 * endpoint back to direct delivery: released any earlier, the sender
 * refills the FIFO faster than the buffered path drains it.
 *
 * Sending side: a control frame names the sender's endpoint and the
 * channel's tag, and is matched like a message (source node, source port,
 * tag), so a peer can only hold the channels whose far end it is, i.e.
 * traffic to itself.  A HOLD makes the channel's next send wait in the
 * send queue (later ones wait behind it: the queue is in order) for at
 * most FW_UNET_HOLD_TICKS unless refreshed; RELEASE ends it at once.  A
 * lost RELEASE therefore costs at most that long, a lost HOLD is repeated
 * by the refresh, and holds are one word per channel: nothing a peer
 * sends makes the NI allocate.
 *
 * Control frames are taken at once on arrival (no buffer, no DMA) and go
 * out ahead of data, so they never wait behind messages.
 */
#include <string.h>

#include "fw.h"

static uint32_t open_channels(const struct fw_unet_ep *e)
{
	uint32_t m = 0;

	for (uint32_t c = 0; c < NVM_UNET_CHANNELS; c++)
		if (e->ch[c].open &&
		    !nvm_unet_is_any(e->ch[c].node, e->ch[c].rport))
			m |= 1u << c;	/* any-source: no one sender to tell */
	return m;
}

/*
 * One control frame on channel @c of @port (@n: DROPPED's count, in the
 * header's reply field); false: no room now.
 */
static bool ctl_send(struct fw *fw, uint32_t port, uint32_t c, uint8_t flags,
		     uint16_t n)
{
	const struct fw_unet_chan *ch = &fw->unet.ep[port].ch[c];

	if (!ch->open)
		return true;	/* nobody to tell */
	return fw_unet_ctl_frame(fw, port, ch, flags, n);
}

/*
 * One control frame from @port (a NIC endpoint's, or a virtual one's for
 * the kernel) on channel @ch; false: no room now.
 */
bool fw_unet_ctl_frame(struct fw *fw, uint32_t port,
		       const struct fw_unet_chan *ch, uint8_t flags, uint16_t n)
{
	uint32_t tb, off, flen;

	if (fw_sendq_room(fw) < 2)
		return false;	/* keep one for NetVM's ACKs */
	tb = fw_nv_txbuf_alloc(fw, FW_TB_WIRE);
	if (!tb)
		return false;
	flen = fw_unet_frame_build(fw, port, tb, ch, 0, flags, n, &off);
	if (!fw_send_submit(fw, FW_PROG_UNET, tb, off, flen)) {
		fw_nv_txbuf_put(fw, tb, FW_TB_WIRE);
		return false;
	}
	if (flags == NVM_UNET_HF_HOLD)
		fw_count(fw, FW_CNT_UNET_HOLD_TX);
	else if (flags == NVM_UNET_HF_RELEASE)
		fw_count(fw, FW_CNT_UNET_RELEASE_TX);
	return true;
}

/* The control frames @port owes, DROPPED notices first; true if one went. */
bool fw_unet_ctl_step(struct fw *fw, uint32_t port)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];
	uint32_t c, bit;
	bool held;

	if (!fw_unet_open_port(fw, port) || !(e->ctl_due | e->drop_due))
		return false;
	if (e->drop_due) {
		c = (uint32_t)__builtin_ctz(e->drop_due);
		bit = 1u << c;
		if (!ctl_send(fw, port, c, NVM_UNET_HF_DROPPED,
			      e->drop_owed[c]))
			return false;
		e->drop_due &= ~bit;
		e->drop_owed[c] = 0;
		return true;
	}
	c = (uint32_t)__builtin_ctz(e->ctl_due);
	bit = 1u << c;
	held = e->state == FW_UNET_EP_HELD;
	if (!ctl_send(fw, port, c, held ? NVM_UNET_HF_HOLD :
		      NVM_UNET_HF_RELEASE, 0))
		return false;
	e->ctl_due &= ~bit;
	return true;
}

/* NVM_KOP_UNET_HOLD: only while diverting (DIRECT releases it). */
void fw_unet_hold(struct fw *fw, uint32_t port)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];

	if (e->state != FW_UNET_EP_DIVERT)
		return;
	fw_unet_ep_set_state(fw, port, FW_UNET_EP_HELD);
	e->hold_on++;
	e->hold_since = 0;
	e->ctl_due = open_channels(e);
	fw_unet_publish(fw, port);
}

/*
 * Before going back to direct delivery, or closing: the senders may go
 * on.  The endpoint still diverts (its caller changes that).
 */
void fw_unet_release(struct fw *fw, uint32_t port, bool closing)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];

	if (e->state != FW_UNET_EP_HELD)
		return;
	fw_unet_ep_set_state(fw, port, FW_UNET_EP_DIVERT);
	e->hold_off++;
	e->ctl_due = open_channels(e);
	fw_unet_publish(fw, port);
	if (!closing)
		return;
	/* the channels go with the endpoint: now or never (the holds at
	 * the senders expire if a frame cannot go) */
	for (uint32_t c = 0; c < NVM_UNET_CHANNELS; c++)
		if (e->ctl_due & 1u << c)
			ctl_send(fw, port, c, NVM_UNET_HF_RELEASE, 0);
	e->ctl_due = 0;
}

/* A message of channel @ch was dropped (no divert ring): tell its sender. */
void fw_unet_note_drop(struct fw *fw, uint32_t port, uint32_t ch)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];

	if (ch >= NVM_UNET_CHANNELS)
		return;
	e->drop_due |= 1u << ch;
	if (e->drop_owed[ch] < UINT16_MAX)
		e->drop_owed[ch]++;
}

/*
 * NVM_KOP_UNET_KCTL: a control frame of a kernel-emulated endpoint (the
 * kernel plays its NI): from a virtual port only, one control flag, a
 * count only with DROPPED.
 */
uint32_t fw_unet_kctl(struct fw *fw, const struct nvm_k_unet_kctl *k)
{
	struct fw_unet_chan ch = {
		.open = 1, .node = k->node, .rport = k->dst_port, .tag = k->tag,
	};
	uint8_t f = k->flags;

	if (k->node >= FW_NV_NODES || k->src_port < NVM_UNET_VPORT_MIN ||
	    k->src_port >= NVM_UNET_VPORT_MAX || k->dst_port == NVM_EP_KERNEL ||
	    k->dst_port >= NVM_UNET_VPORT_MAX || !f || (f & ~NVM_UNET_HF_CTL) ||
	    (f & (f - 1)) || (k->count && f != NVM_UNET_HF_DROPPED) ||
	    k->reserved || k->reserved2)
		return NVM_ST_BAD_CMD;
	if (!fw_unet_ctl_frame(fw, k->src_port, &ch, f, k->count))
		return NVM_ST_BUSY;	/* the kernel tries again */
	return NVM_ST_OK;
}

/* Is the U-Net frame at @data (@len bytes) a control frame? */
bool fw_unet_is_ctl(struct fw *fw, uint32_t data, uint32_t len)
{
	struct nvm_unet_hdr h;

	if (len < sizeof(h))
		return false;
	memcpy(&h, fw->chip->sram + data, sizeof(h));
	return h.flags & NVM_UNET_HF_CTL;
}

/*
 * A control frame (the header is checked: one flag, no data) for the
 * channel it matches; anything else is dropped as a message would be.
 */
enum fw_rx_verdict fw_unet_ctl_rx(struct fw *fw, uint32_t src,
				  const struct nvm_unet_hdr *h, uint32_t len)
{
	uint8_t f = h->flags;
	struct fw_unet_ep *e;
	struct fw_unet_chan *ch;
	uint32_t port;
	int c;

	if (len != sizeof(*h) || h->len || (f & ~NVM_UNET_HF_CTL) ||
	    (f & (f - 1))) {
		fw_count(fw, FW_CNT_RX_BAD_FRAME);
		return FW_RX_RELEASE;
	}
	c = fw_unet_find_channel(fw, src, h, &port);
	port = fw_be16(h->dst_port);
	if (c < 0 && port >= NVM_UNET_VPORT_MIN && port < NVM_UNET_VPORT_MAX &&
	    fw->unet.div_slots) {
		/*
		 * For a kernel-emulated endpoint (there are none without a
		 * divert ring): the kernel is its NI and matches the channel.
		 * An event, not a record: taken at once, as here.
		 */
		fw_post(fw, NVM_EV_NOTIFY, (uint16_t)port,
			NVM_UNET_EV_CTL | (uint32_t)f << 8 |
			(f == NVM_UNET_HF_DROPPED ?
			 (uint32_t)fw_be16(h->reply) << 16 : 0),
			fw_be32(h->tag) | (uint64_t)src << 32 |
			(uint64_t)fw_be16(h->src_port) << 48);
		fw_count(fw, FW_CNT_UNET_CTL_KERNEL);
		return FW_RX_RELEASE;
	}
	if (c < 0) {
		fw_count(fw, FW_CNT_UNET_NO_CHANNEL);
		return FW_RX_RELEASE;
	}
	e = &fw->unet.ep[port];
	ch = &e->ch[c];
	if (f == NVM_UNET_HF_HOLD)
		ch->hold_left = FW_UNET_HOLD_TICKS;
	else if (f == NVM_UNET_HF_RELEASE)
		ch->hold_left = 0;
	else
		e->peer_dropped += fw_be16(h->reply);	/* how many */
	fw_unet_publish(fw, port);
	return FW_RX_RELEASE;
}

/*
 * Whether the send on channel @c of @port must wait for its receiver.
 * Counted once per wait, so tx_held is the number of times a sender was
 * actually stopped.
 */
bool fw_unet_tx_held(struct fw *fw, uint32_t port, uint32_t c)
{
	struct fw_unet_ep *e = &fw->unet.ep[port];
	bool held = c < NVM_UNET_CHANNELS && e->ch[c].hold_left;

	if (held && !e->tx_held_now) {
		e->tx_held_now = 1;
		e->tx_held++;
		fw_count(fw, FW_CNT_UNET_HELD);
		fw_unet_publish(fw, port);
	} else if (!held && e->tx_held_now) {
		e->tx_held_now = 0;
		fw_unet_publish(fw, port);
	}
	return held;
}

void fw_unet_tick(struct fw *fw)
{
	fw->unet.tick_armed = 0;
	for (uint32_t p = 0; p < FW_UNET_EPS; p++) {
		struct fw_unet_ep *e = &fw->unet.ep[p];
		bool changed = false;

		if (!fw_unet_open_port(fw, p))
			continue;
		for (uint32_t c = 0; c < NVM_UNET_CHANNELS; c++) {
			if (!e->ch[c].hold_left || --e->ch[c].hold_left)
				continue;
			e->hold_expired++;
			fw_count(fw, FW_CNT_UNET_HOLD_EXPIRED);
			changed = true;
		}
		if (e->state == FW_UNET_EP_HELD &&
		    ++e->hold_since >= FW_UNET_REFRESH_TICKS) {
			e->hold_since = 0;
			e->ctl_due = open_channels(e);
		}
		if (changed)
			fw_unet_publish(fw, p);
	}
}

/* IT2 runs only while some endpoint holds or is held. */
void fw_unet_arm_timer(struct fw *fw)
{
	bool need = false;

	for (uint32_t p = 0; p < FW_UNET_EPS && !need; p++) {
		const struct fw_unet_ep *e = &fw->unet.ep[p];

		if (!fw_unet_open_port(fw, p))
			continue;
		need = e->state == FW_UNET_EP_HELD;
		for (uint32_t c = 0; c < NVM_UNET_CHANNELS && !need; c++)
			need = e->ch[c].hold_left;
	}
	if (need && !fw->unet.tick_armed) {
		fw->unet.tick_armed = 1;
		fw->chip->ops->timer_arm(fw->chip->opaque, 2, FW_UNET_TICK_NS);
	}
}
