// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: the Ethernet interface nvmN (docs/ethernet.md).
 *
 * One net_device per NIC, over the firmware's ETH program
 * (firmware-interp/fw_eth.c, include/netvm/eth_abi.h): two rings of
 * descriptors in SRAM that point straight at socket-buffer data.
 *
 * Transmit: the skb's head and page fragments are DMA-mapped, and one
 * chain of descriptors (a piece each, NVM_ETH_MORE on all but the last)
 * per destination node is posted: one for unicast, one per routed node for
 * broadcast and multicast, all pointing at the same mappings.  The last
 * descriptor of the group owns the skb, the last chain the mappings.
 * Offloads: scatter-gather (so the stack's GSO hands us 64 KiB and splits
 * it itself, with no copy) and checksums (CHECKSUM_PARTIAL is filled in by
 * the firmware; every received frame comes with its sum, CHECKSUM_COMPLETE,
 * which the stack checks: a corrupt frame still fails).  When the ring has less room than
 * the largest group the queue stops, and the poll that frees room wakes
 * it: the NIC's back-pressure stops the queue, nothing is dropped.
 *
 * Receive: every rx descriptor holds a pre-allocated skb of the largest
 * frame, mapped for the device; the firmware DMAs a frame into it and the
 * poll hands it up and posts a fresh skb in its place (or, when none can
 * be allocated, drops the frame and posts the old one again).
 *
 * Both rings are reaped by NAPI, and the tx ring by xmit as well: a frame
 * is usually on the link before the doorbell write returns (the NIC runs
 * its firmware in that write), so xmit reaps it at once and the NIC is
 * told not to interrupt for tx completions (ctl.tx_irq OFF); only while
 * some stay outstanding does xmit or the poll ask for one (ONCE).  The
 * doorbell is rung once per batch the stack hands down (xmit_more: the
 * segments of a GSO skb), not per frame.
 * Interrupt mitigation: the firmware raises NVM_EV_ETH only when
 * ctl.irq_arm is set, and clears it; the poll sets it when it is done and
 * then looks at the rings once more.  Receive buffers go back without a
 * doorbell unless the firmware says a frame waits for one (ctl.rx_wait).
 *
 * Destinations: a node's MAC is 02:4e:56:4d:<node id>.  Until a route has
 * been set (back to back) every frame goes without a route, broadcast as
 * one frame to NVM_ETH_NODE_ALL.  Once routes are set (sysfs routes or
 * the mapper), frames go along them and a node without one is
 * unreachable; carrier is on while the link is up and, once mapped, some
 * node has a route.
 *
 * Locking: xmit runs under the queue's lock, and the tx ring is reaped
 * under it too (xmit, the poll, stop); the poll is the only reaper of the
 * rx ring.  tx_post is published with release after the descriptors.
 * route_lock (IRQ-safe) guards the route copy, @mapped and @registered.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/io.h>
#include <linux/log2.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>

#include "netvm_drv.h"
#include <netvm/eth_abi.h>
#include <netvm/fw_counters.h>

#define NETVM_ETH_MAX_RING	1024
#define NETVM_ETH_NODES		NETVM_NV_ROUTE_NODES
/*
 * The most descriptors one skb takes: a broadcast to every other node (one
 * piece: multicast is linearized), or a unicast of NVM_ETH_MAX_FRAGS pieces.
 */
#define NETVM_ETH_MAX_DESCS	NETVM_ETH_NODES
static_assert(NVM_ETH_MAX_FRAGS <= NETVM_ETH_MAX_DESCS);

#define D_ADDR_LO	offsetof(struct nvm_eth_desc, host_addr)
#define D_ADDR_HI	(offsetof(struct nvm_eth_desc, host_addr) + 4)
#define D_LEN		offsetof(struct nvm_eth_desc, len)
#define D_CTRL		offsetof(struct nvm_eth_desc, flags) /* flags|rlen|st */
#define D_ROUTE_LO	offsetof(struct nvm_eth_desc, route)
#define D_ROUTE_HI	(offsetof(struct nvm_eth_desc, route) + 4)
#define D_NODE		offsetof(struct nvm_eth_desc, node)	/* node|csum */
#define D_CSUM		offsetof(struct nvm_eth_desc, csum_start) /* start|off */
#define CTRL_WORD(flags, rlen)	((u32)(flags) | ((u32)(rlen) << 16))
#define CTRL_STATUS(w)		((u8)((w) >> 24))

enum netvm_eth_map { ETH_MAP_NONE, ETH_MAP_SINGLE, ETH_MAP_PAGE };

/* One piece of a frame: a DMA mapping of the skb's head or of a fragment. */
struct netvm_eth_piece {
	dma_addr_t dma;
	u32 len;
	u8 map;			/* enum netvm_eth_map */
};

struct netvm_eth_tx {
	struct sk_buff *skb;	/* on the last descriptor of its group */
	struct netvm_eth_piece piece;	/* unmapped when reaped, if map */
	bool first;		/* first descriptor of its group */
};

struct netvm_eth_rx {
	struct sk_buff *skb;
	dma_addr_t dma;
};

/* Driver counters shown by ethtool -S (besides the firmware's). */
struct netvm_eth_stats {
	u64 tx_queue_stops;	/* the ring was full: the queue stopped */
	u64 tx_no_route;	/* unicast to a node without a route */
	u64 tx_not_node;	/* unicast to a MAC that is no node's */
	u64 tx_copy_errors;	/* a descriptor the NIC refused (link down) */
	u64 rx_no_skb;		/* no skb to replace a full one: dropped */
	u64 rx_bad_desc;	/* a returned descriptor failed its checks */
	u64 irqs;		/* NVM_EV_ETH events */
};

struct netvm_eth {
	struct net_device *ndev;
	struct netvm_dev *nd;
	struct napi_struct napi;
	u32 tx_ring, tx_len, rx_ring, rx_len, ctl, buf_size;
	struct netvm_eth_tx *tx;
	struct netvm_eth_rx *rx;
	u32 tx_post;		/* free-running; xmit writes */
	u32 tx_clean;		/* free-running; the poll writes */
	u32 rx_clean;		/* free-running; the poll */
	bool grp_ok;		/* some copy of the current group went out */
	bool tx_unrung;		/* posted, doorbell not yet rung (xmit_more) */

	spinlock_t route_lock;		/* the fields below, IRQ-safe */
	bool registered;
	bool mapped;		/* a route has been set: frames follow routes */
	DECLARE_BITMAP(routed, NETVM_ETH_NODES);
	u8 route[NETVM_ETH_NODES][NVM_ROUTE_MAX];
	u8 route_len[NETVM_ETH_NODES];

	struct netvm_eth_stats stats;
};

static const u8 netvm_eth_prefix[NVM_ETH_MAC_PREFIX_LEN] = NVM_ETH_MAC_PREFIX;

static void __iomem *eth_desc(struct netvm_eth *eth, u32 ring, u32 idx)
{
	return eth->nd->sram + ring + (size_t)idx * sizeof(struct nvm_eth_desc);
}

static void __iomem *eth_ctl(struct netvm_eth *eth, size_t field)
{
	return eth->nd->sram + eth->ctl + field;
}

static void eth_doorbell(struct netvm_eth *eth)
{
	wmb();		/* descriptors before the doorbell */
	writel(NVM_DB_ETH, eth->nd->db);
}

static u32 eth_tx_free(struct netvm_eth *eth)
{
	return eth->tx_len - (eth->tx_post - READ_ONCE(eth->tx_clean));
}

/* ---- carrier and routes ------------------------------------------- */

/* route_lock held */
static void eth_carrier_locked(struct netvm_eth *eth)
{
	bool up = (READ_ONCE(eth->nd->link) & NVM_LINK_UP) &&
		  (!eth->mapped || !bitmap_empty(eth->routed, NETVM_ETH_NODES));

	if (!eth->registered)
		return;
	if (up)
		netif_carrier_on(eth->ndev);
	else
		netif_carrier_off(eth->ndev);
}

void netvm_eth_link(struct netvm_dev *nd)
{
	struct netvm_eth *eth = nd->eth;
	unsigned long flags;

	if (!eth)
		return;
	spin_lock_irqsave(&eth->route_lock, flags);
	eth_carrier_locked(eth);
	spin_unlock_irqrestore(&eth->route_lock, flags);
}

void netvm_eth_route(struct netvm_dev *nd, u32 node, const u8 *route, u32 len)
{
	struct netvm_eth *eth = nd->eth;
	unsigned long flags;

	if (!eth || node >= NETVM_ETH_NODES || len > NVM_ROUTE_MAX)
		return;
	spin_lock_irqsave(&eth->route_lock, flags);
	eth->mapped = true;
	if (route) {
		memcpy(eth->route[node], route, len);
		eth->route_len[node] = len;
		__set_bit(node, eth->routed);
	} else {
		__clear_bit(node, eth->routed);
	}
	eth_carrier_locked(eth);
	spin_unlock_irqrestore(&eth->route_lock, flags);
}

/* ---- transmit ------------------------------------------------------ */

/* What the first descriptor of every copy of a frame carries. */
struct netvm_eth_frame {
	struct sk_buff *skb;
	struct netvm_eth_piece piece[NVM_ETH_MAX_FRAGS];
	u32 npieces;
	u16 flags;		/* NVM_ETH_CSUM or 0 */
	u16 csum_start, csum_off;
};

static void eth_desc_write(struct netvm_eth *eth, u32 slot, u64 dma, u32 len,
			   const u32 *route, u32 node_word, u32 csum_word)
{
	void __iomem *d = eth_desc(eth, eth->tx_ring, slot);

	writel(lower_32_bits(dma), d + D_ADDR_LO);
	writel(upper_32_bits(dma), d + D_ADDR_HI);
	writel(len, d + D_LEN);
	writel(route[0], d + D_ROUTE_LO);
	writel(route[1], d + D_ROUTE_HI);
	writel(node_word, d + D_NODE);
	writel(csum_word, d + D_CSUM);
}

/*
 * Post one copy of @f towards @node, a descriptor per piece; the pieces
 * after the first are handed over first and the first last, so the NIC
 * sees a whole chain or none of it.  The last copy (@last) owns the
 * mappings and the skb.  route_lock held.
 */
static void eth_tx_post(struct netvm_eth *eth, const struct netvm_eth_frame *f,
			u32 node, bool first, bool last)
{
	u32 base = eth->tx_post, k, i;
	u32 r[2] = { 0, 0 }, none[2] = { 0, 0 };
	u8 rlen = 0;

	if (node != NVM_ETH_NODE_ALL && eth->mapped) {
		rlen = eth->route_len[node];
		memcpy(r, eth->route[node], rlen);
	}
	for (k = 0; k < f->npieces; k++) {
		struct netvm_eth_tx *t = &eth->tx[(base + k) & (eth->tx_len - 1)];

		t->skb = last && k + 1 == f->npieces ? f->skb : NULL;
		t->piece = f->piece[k];
		if (!last)
			t->piece.map = ETH_MAP_NONE;
		t->first = first && !k;
	}
	for (k = f->npieces - 1; k > 0; k--) {
		i = (base + k) & (eth->tx_len - 1);
		eth_desc_write(eth, i, f->piece[k].dma, f->piece[k].len, none,
			       0, 0);
		wmb();		/* the descriptor before its OWN bit */
		writel(CTRL_WORD(NVM_ETH_OWN |
				 (k + 1 < f->npieces ? NVM_ETH_MORE : 0), 0),
		       eth_desc(eth, eth->tx_ring, i) + D_CTRL);
	}
	i = base & (eth->tx_len - 1);
	eth_desc_write(eth, i, f->piece[0].dma, f->piece[0].len, r, node,
		       f->csum_start | (u32)f->csum_off << 16);
	wmb();		/* the rest of the chain before the first's OWN bit */
	writel(CTRL_WORD(NVM_ETH_OWN | f->flags |
			 (f->npieces > 1 ? NVM_ETH_MORE : 0), rlen),
	       eth_desc(eth, eth->tx_ring, i) + D_CTRL);
	/* the slots before the poll can see them counted */
	smp_store_release(&eth->tx_post, base + f->npieces);
}

/* The node that owns @mac, or -1 if @mac is no node's. */
static int eth_mac_node(const u8 *mac)
{
	u32 node;

	if (memcmp(mac, netvm_eth_prefix, NVM_ETH_MAC_PREFIX_LEN))
		return -1;
	node = (u32)mac[4] << 8 | mac[5];
	return node < NETVM_ETH_NODES ? (int)node : -1;
}

/*
 * Post @skb to its destinations (route_lock held); false (counted) when
 * it has none.
 */
static bool eth_tx_route(struct netvm_eth *eth, const struct netvm_eth_frame *f)
{
	const u8 *dst = f->skb->data;
	u32 n, node, last;
	int owner;

	if (is_multicast_ether_addr(dst)) {
		if (!eth->mapped) {
			eth_tx_post(eth, f, NVM_ETH_NODE_ALL, true, true);
			return true;
		}
		n = bitmap_weight(eth->routed, NETVM_ETH_NODES);
		if (!n)
			return false;
		last = find_last_bit(eth->routed, NETVM_ETH_NODES);
		for_each_set_bit(node, eth->routed, NETVM_ETH_NODES)
			eth_tx_post(eth, f, node,
				    node == find_first_bit(eth->routed,
							   NETVM_ETH_NODES),
				    node == last);
		return true;
	}
	owner = eth_mac_node(dst);
	if (owner < 0) {
		eth->stats.tx_not_node++;
		return false;
	}
	if (eth->mapped && !test_bit(owner, eth->routed)) {
		eth->stats.tx_no_route++;
		return false;
	}
	eth_tx_post(eth, f, owner, true, true);
	return true;
}

static void eth_unmap(struct device *dev, const struct netvm_eth_piece *p)
{
	if (p->map == ETH_MAP_SINGLE)
		dma_unmap_single(dev, p->dma, p->len, DMA_TO_DEVICE);
	else if (p->map == ETH_MAP_PAGE)
		dma_unmap_page(dev, p->dma, p->len, DMA_TO_DEVICE);
}

/* Map @f->skb's head and fragments, a piece each; false if one fails. */
static bool eth_tx_map(struct device *dev, struct netvm_eth_frame *f)
{
	struct sk_buff *skb = f->skb;
	struct netvm_eth_piece *p = f->piece;
	u32 k;

	f->npieces = 0;
	if (skb_headlen(skb)) {
		p->len = skb_headlen(skb);
		p->dma = dma_map_single(dev, skb->data, p->len, DMA_TO_DEVICE);
		p->map = ETH_MAP_SINGLE;
		if (dma_mapping_error(dev, p->dma))
			return false;
		p++;
	}
	for (k = 0; k < skb_shinfo(skb)->nr_frags; k++, p++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[k];

		p->len = skb_frag_size(frag);
		p->dma = skb_frag_dma_map(dev, frag, 0, p->len, DMA_TO_DEVICE);
		p->map = ETH_MAP_PAGE;
		if (dma_mapping_error(dev, p->dma)) {
			while (p-- > f->piece)
				eth_unmap(dev, p);
			return false;
		}
	}
	f->npieces = p - f->piece;
	return f->npieces > 0;
}

/*
 * The skb in a shape the NIC takes: at most NVM_ETH_MAX_FRAGS pieces
 * (multicast as one: it goes as one copy per node), and a checksum to
 * fill in whose field the firmware accepts; false if it cannot be had.
 */
static bool eth_tx_shape(struct sk_buff *skb, struct netvm_eth_frame *f)
{
	int start;

	if ((skb_shinfo(skb)->nr_frags + 1 > NVM_ETH_MAX_FRAGS ||
	     (skb_shinfo(skb)->nr_frags && is_multicast_ether_addr(skb->data))) &&
	    skb_linearize(skb))
		return false;
	f->skb = skb;
	f->flags = 0;
	f->csum_start = 0;
	f->csum_off = 0;
	if (skb->ip_summed != CHECKSUM_PARTIAL)
		return true;
	start = skb_checksum_start_offset(skb);
	if (start >= ETH_HLEN && start < skb->len &&
	    skb->csum_offset <= skb->len - start - 2) {
		f->flags = NVM_ETH_CSUM;
		f->csum_start = start;
		f->csum_off = skb->csum_offset;
		return true;
	}
	/* TCP and UDP over IP never get here: their sums start past it */
	return !skb_checksum_help(skb);
}

/* Reap finished tx descriptors in ring order; under the queue's lock. */
static void eth_tx_clean(struct netvm_eth *eth, int budget)
{
	struct net_device *ndev = eth->ndev;
	struct device *dev = &eth->nd->pdev->dev;
	/* pairs with eth_tx_post's release: the slots before the count */
	u32 post = smp_load_acquire(&eth->tx_post);
	u32 clean = eth->tx_clean;

	while (clean != post) {
		u32 i = clean & (eth->tx_len - 1);
		struct netvm_eth_tx *t = &eth->tx[i];
		u32 ctrl = readl(eth_desc(eth, eth->tx_ring, i) + D_CTRL);

		if (ctrl & NVM_ETH_OWN)
			break;
		dma_rmb();	/* the outcome after the flags */
		if (t->first)
			eth->grp_ok = false;
		if (CTRL_STATUS(ctrl) == NVM_ETH_OK)
			eth->grp_ok = true;
		else
			eth->stats.tx_copy_errors++;
		eth_unmap(dev, &t->piece);
		t->piece.map = ETH_MAP_NONE;
		if (t->skb) {
			if (eth->grp_ok) {
				ndev->stats.tx_packets++;
				ndev->stats.tx_bytes += t->skb->len;
			} else {
				ndev->stats.tx_errors++;
				ndev->stats.tx_carrier_errors++;
			}
			napi_consume_skb(t->skb, budget);
			t->skb = NULL;
		}
		clean++;
	}
	/* eth_pending reads it without the lock */
	smp_store_release(&eth->tx_clean, clean);
	if (netif_queue_stopped(ndev) && netif_running(ndev) &&
	    eth_tx_free(eth) >= NETVM_ETH_MAX_DESCS)
		netif_wake_queue(ndev);
}

/*
 * Reap, and if some descriptors are still the NIC's (the link was busy),
 * ask for an interrupt at the next completion and look once more: the
 * firmware fences between its completion and its read of tx_irq, we
 * between our write and our look, so one of the two sees the other.
 * Under the queue's lock.
 */
static void eth_tx_settle(struct netvm_eth *eth, int budget)
{
	eth_tx_clean(eth, budget);
	if (eth->tx_clean == eth->tx_post)
		return;
	writel(NVM_ETH_TXIRQ_ONCE, eth_ctl(eth, offsetof(struct nvm_eth_ctl, tx_irq)));
	mb();	/* asked before we look again */
	eth_tx_clean(eth, budget);
}

/* The poll's reap: under the queue's lock, which xmit holds. */
static void eth_tx_poll(struct netvm_eth *eth, int budget)
{
	struct netdev_queue *txq = netdev_get_tx_queue(eth->ndev, 0);

	__netif_tx_lock(txq, smp_processor_id());
	eth_tx_settle(eth, budget);
	__netif_tx_unlock(txq);
}

/*
 * Ring for what xmit posted, and reap what the NIC finished in that write.
 * Under the queue's lock.
 */
static void eth_tx_flush(struct netvm_eth *eth)
{
	if (!eth->tx_unrung)
		return;
	eth->tx_unrung = false;
	eth_doorbell(eth);
	eth_tx_settle(eth, 0);
}

static netdev_tx_t netvm_eth_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct netvm_eth *eth = netdev_priv(ndev);
	struct device *dev = &eth->nd->pdev->dev;
	struct netvm_eth_frame f;
	unsigned long flags;
	bool sent;
	u32 k;

	if (skb->len < ETH_HLEN || skb->len > eth->buf_size ||
	    !eth_tx_shape(skb, &f))
		goto drop;
	if (eth_tx_free(eth) < NETVM_ETH_MAX_DESCS) {
		/* cannot happen while the stop below works; be safe */
		netif_stop_queue(ndev);
		eth_tx_flush(eth);
		return NETDEV_TX_BUSY;
	}
	if (!eth_tx_map(dev, &f))
		goto drop;
	spin_lock_irqsave(&eth->route_lock, flags);
	sent = eth_tx_route(eth, &f);
	spin_unlock_irqrestore(&eth->route_lock, flags);
	if (!sent) {
		for (k = 0; k < f.npieces; k++)
			eth_unmap(dev, &f.piece[k]);
		goto drop;
	}
	skb_tx_timestamp(skb);
	eth->tx_unrung = true;
	if (eth_tx_free(eth) < NETVM_ETH_MAX_DESCS) {
		/* the flush asks for an interrupt: the poll wakes us */
		netif_stop_queue(ndev);
		eth->stats.tx_queue_stops++;
	}
	/*
	 * More frames follow at once (a GSO skb's segments): one doorbell,
	 * one run of the firmware, for all of them.
	 */
	if (!netdev_xmit_more() || netif_queue_stopped(ndev))
		eth_tx_flush(eth);
	return NETDEV_TX_OK;
drop:
	ndev->stats.tx_dropped++;
	dev_kfree_skb_any(skb);
	if (!netdev_xmit_more())
		eth_tx_flush(eth);
	return NETDEV_TX_OK;
}

/* ---- receive ------------------------------------------------------- */

static void eth_rx_post(struct netvm_eth *eth, u32 i)
{
	void __iomem *d = eth_desc(eth, eth->rx_ring, i);
	dma_addr_t dma = eth->rx[i].dma;

	writel(lower_32_bits(dma), d + D_ADDR_LO);
	writel(upper_32_bits(dma), d + D_ADDR_HI);
	writel(eth->buf_size, d + D_LEN);
	writel(0, d + D_ROUTE_LO);
	writel(0, d + D_ROUTE_HI);
	writel(0, d + D_NODE);
	writel(0, d + D_CSUM);
	wmb();		/* the descriptor before its OWN bit */
	writel(CTRL_WORD(NVM_ETH_OWN, 0), d + D_CTRL);
}

/* A fresh mapped skb for rx slot @i; false if none could be had. */
static bool eth_rx_fill(struct netvm_eth *eth, u32 i, gfp_t gfp)
{
	struct device *dev = &eth->nd->pdev->dev;
	struct sk_buff *skb;
	dma_addr_t dma;

	skb = __netdev_alloc_skb_ip_align(eth->ndev, eth->buf_size, gfp);
	if (!skb)
		return false;
	dma = dma_map_single(dev, skb->data, eth->buf_size, DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, dma)) {
		dev_kfree_skb_any(skb);
		return false;
	}
	eth->rx[i].skb = skb;
	eth->rx[i].dma = dma;
	return true;
}

/*
 * Buffers were posted: ring only if the firmware said a frame waits for
 * one (it sets rx_wait, then looks at the ring again; we fence between
 * our posts and our read).  Otherwise it finds them when it needs them,
 * and the doorbell (a run of the firmware in our write) is saved.
 */
static void eth_rx_kick(struct netvm_eth *eth)
{
	mb();	/* the posts before the read of rx_wait */
	if (!readl(eth_ctl(eth, offsetof(struct nvm_eth_ctl, rx_wait))))
		return;
	writel(0, eth_ctl(eth, offsetof(struct nvm_eth_ctl, rx_wait)));
	eth_doorbell(eth);
}

static int eth_rx(struct netvm_eth *eth, int budget)
{
	struct net_device *ndev = eth->ndev;
	struct device *dev = &eth->nd->pdev->dev;
	int done = 0;
	bool posted = false;

	while (done < budget) {
		u32 i = eth->rx_clean & (eth->rx_len - 1);
		void __iomem *d = eth_desc(eth, eth->rx_ring, i);
		struct netvm_eth_rx old = eth->rx[i];
		u32 ctrl = readl(d + D_CTRL), len, sum;

		if (ctrl & NVM_ETH_OWN)
			break;
		dma_rmb();	/* the outcome after the flags */
		len = readl(d + D_LEN);		/* read once, then checked */
		sum = readl(d + D_NODE) >> 16;
		eth->rx_clean++;
		done++;
		posted = true;
		if (CTRL_STATUS(ctrl) != NVM_ETH_OK || len < ETH_HLEN ||
		    len > eth->buf_size) {
			ndev->stats.rx_errors++;
			if (CTRL_STATUS(ctrl) == NVM_ETH_ERR_LEN ||
			    len > eth->buf_size)
				ndev->stats.rx_length_errors++;
			else if (CTRL_STATUS(ctrl) == NVM_ETH_OK)
				eth->stats.rx_bad_desc++;
			eth_rx_post(eth, i);
			continue;
		}
		if (!eth_rx_fill(eth, i, GFP_ATOMIC)) {
			eth->stats.rx_no_skb++;
			ndev->stats.rx_dropped++;
			eth->rx[i] = old;
			eth_rx_post(eth, i);
			continue;
		}
		eth_rx_post(eth, i);
		dma_unmap_single(dev, old.dma, eth->buf_size, DMA_FROM_DEVICE);
		skb_put(old.skb, len);
		old.skb->protocol = eth_type_trans(old.skb, ndev);
		/* the NIC's sum past the header: the stack checks with it */
		if ((ctrl & NVM_ETH_CSUM) && (ndev->features & NETIF_F_RXCSUM)) {
			old.skb->ip_summed = CHECKSUM_COMPLETE;
			old.skb->csum = csum_unfold((__force __sum16)htons(sum));
		}
		ndev->stats.rx_packets++;
		ndev->stats.rx_bytes += len;
		napi_gro_receive(&eth->napi, old.skb);
	}
	if (posted)
		eth_rx_kick(eth);
	return done;
}

/* Anything for the poll?  (After arming, to close the race with the NIC.) */
static bool eth_pending(struct netvm_eth *eth)
{
	u32 i = eth->rx_clean & (eth->rx_len - 1);

	if (!(readl(eth_desc(eth, eth->rx_ring, i) + D_CTRL) & NVM_ETH_OWN))
		return true;
	/* pairs with eth_tx_post's release */
	if (eth->tx_clean == smp_load_acquire(&eth->tx_post))
		return false;
	i = eth->tx_clean & (eth->tx_len - 1);
	return !(readl(eth_desc(eth, eth->tx_ring, i) + D_CTRL) & NVM_ETH_OWN);
}

static int netvm_eth_poll(struct napi_struct *napi, int budget)
{
	struct netvm_eth *eth = container_of(napi, struct netvm_eth, napi);
	int done;

	eth_tx_poll(eth, budget);
	done = eth_rx(eth, budget);
	if (done < budget && napi_complete_done(napi, done)) {
		writel(1, eth_ctl(eth, offsetof(struct nvm_eth_ctl, irq_arm)));
		mb();	/* armed before we look: the NIC fences likewise */
		if (eth_pending(eth))
			napi_schedule(napi);
	}
	return done;
}

void netvm_eth_event(struct netvm_dev *nd)
{
	struct netvm_eth *eth = nd->eth;

	if (!eth)
		return;
	eth->stats.irqs++;
	napi_schedule(&eth->napi);	/* a no-op while NAPI is disabled */
}

/* ---- net_device ---------------------------------------------------- */

static int netvm_eth_open(struct net_device *ndev)
{
	struct netvm_eth *eth = netdev_priv(ndev);

	napi_enable(&eth->napi);
	writel(NVM_ETH_TXIRQ_OFF, eth_ctl(eth, offsetof(struct nvm_eth_ctl, tx_irq)));
	writel(1, eth_ctl(eth, offsetof(struct nvm_eth_ctl, rx_enable)));
	writel(1, eth_ctl(eth, offsetof(struct nvm_eth_ctl, irq_arm)));
	netif_start_queue(ndev);
	eth_doorbell(eth);
	napi_schedule(&eth->napi);	/* whatever finished while closed */
	return 0;
}

static int netvm_eth_stop(struct net_device *ndev)
{
	struct netvm_eth *eth = netdev_priv(ndev);
	int i;

	netif_tx_disable(ndev);
	writel(0, eth_ctl(eth, offsetof(struct nvm_eth_ctl, rx_enable)));
	napi_disable(&eth->napi);
	/*
	 * Frames posted before the stop are fetched and sent (or refused)
	 * within microseconds; wait a bounded time and reap them, so that
	 * their skbs are not held while the interface is down.  Any left
	 * (a halted NIC) are reaped at the next open or freed at teardown.
	 */
	for (i = 0; i < 100 && eth->tx_clean != eth->tx_post; i++) {
		netif_tx_lock_bh(ndev);
		eth_tx_clean(eth, 0);
		netif_tx_unlock_bh(ndev);
		if (eth->tx_clean != eth->tx_post)
			usleep_range(1000, 2000);
	}
	return 0;
}

static const struct net_device_ops netvm_eth_ops = {
	.ndo_open = netvm_eth_open,
	.ndo_stop = netvm_eth_stop,
	.ndo_start_xmit = netvm_eth_xmit,
	.ndo_validate_addr = eth_validate_addr,
};

/* ---- ethtool ------------------------------------------------------- */

#define NETVM_ETH_FWC_ENUM(e, n)	NETVM_ETH_FWC_##e,
enum { NVM_FW_COUNTERS(NETVM_ETH_FWC_ENUM) };
#undef NETVM_ETH_FWC_ENUM

static const struct {
	const char *name;
	size_t off;
} netvm_eth_drv_stats[] = {
#define S(f) { #f, offsetof(struct netvm_eth_stats, f) }
	S(tx_queue_stops), S(tx_no_route), S(tx_not_node), S(tx_copy_errors),
	S(rx_no_skb), S(rx_bad_desc), S(irqs),
#undef S
};

static const struct {
	const char *name;
	u32 index;
} netvm_eth_fw_stats[] = {
	{ "fw_eth_tx", NETVM_ETH_FWC_ETH_TX },
	{ "fw_eth_tx_err", NETVM_ETH_FWC_ETH_TX_ERR },
	{ "fw_eth_rx", NETVM_ETH_FWC_ETH_RX },
	{ "fw_eth_rx_err", NETVM_ETH_FWC_ETH_RX_ERR },
	{ "fw_eth_rx_off", NETVM_ETH_FWC_ETH_RX_OFF },
	{ "fw_eth_bad_frame", NETVM_ETH_FWC_ETH_BAD_FRAME },
	{ "fw_rx_bad_frame", NETVM_ETH_FWC_RX_BAD_FRAME },
	{ "fw_host_dma_err", NETVM_ETH_FWC_HOST_DMA_ERR },
};

static void netvm_eth_drvinfo(struct net_device *ndev,
			      struct ethtool_drvinfo *info)
{
	struct netvm_eth *eth = netdev_priv(ndev);
	u32 v = eth->nd->fw_version;

	strscpy(info->driver, NETVM_DRV_NAME, sizeof(info->driver));
	snprintf(info->fw_version, sizeof(info->fw_version), "%u.%u.%u",
		 v >> 16, (v >> 8) & 0xff, v & 0xff);
	strscpy(info->bus_info, pci_name(eth->nd->pdev), sizeof(info->bus_info));
}

static int netvm_eth_sset_count(struct net_device *ndev, int sset)
{
	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return ARRAY_SIZE(netvm_eth_drv_stats) + ARRAY_SIZE(netvm_eth_fw_stats);
}

static void netvm_eth_strings(struct net_device *ndev, u32 sset, u8 *data)
{
	size_t i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < ARRAY_SIZE(netvm_eth_drv_stats); i++, data += ETH_GSTRING_LEN)
		strscpy(data, netvm_eth_drv_stats[i].name, ETH_GSTRING_LEN);
	for (i = 0; i < ARRAY_SIZE(netvm_eth_fw_stats); i++, data += ETH_GSTRING_LEN)
		strscpy(data, netvm_eth_fw_stats[i].name, ETH_GSTRING_LEN);
}

static void netvm_eth_get_stats(struct net_device *ndev,
				struct ethtool_stats *st, u64 *data)
{
	struct netvm_eth *eth = netdev_priv(ndev);
	struct netvm_dev *nd = eth->nd;
	u32 off = nd->layout.counters, n = nd->layout.counters_len;
	bool fw_ok = n && off <= nd->sram_len && (nd->sram_len - off) / 4 >= n;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(netvm_eth_drv_stats); i++)
		*data++ = *(u64 *)((u8 *)&eth->stats + netvm_eth_drv_stats[i].off);
	for (i = 0; i < ARRAY_SIZE(netvm_eth_fw_stats); i++) {
		u32 idx = netvm_eth_fw_stats[i].index;

		*data++ = fw_ok && idx < n ? readl(nd->sram + off + idx * 4) : 0;
	}
}

static const struct ethtool_ops netvm_eth_ethtool_ops = {
	.get_drvinfo = netvm_eth_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_sset_count = netvm_eth_sset_count,
	.get_strings = netvm_eth_strings,
	.get_ethtool_stats = netvm_eth_get_stats,
};

/* ---- probe and remove ---------------------------------------------- */

static bool eth_ring_ok(struct netvm_dev *nd, u32 off, u32 len)
{
	u64 end = (u64)off + (u64)len * sizeof(struct nvm_eth_desc);

	return len && len <= NETVM_ETH_MAX_RING && is_power_of_2(len) &&
	       !(off & 3) && end <= nd->sram_len;
}

static bool eth_layout_ok(struct netvm_dev *nd)
{
	const struct nvm_sram_layout *l = &nd->layout;

	return eth_ring_ok(nd, l->eth_tx_ring, l->eth_tx_len) &&
	       l->eth_tx_len >= 2 * NETVM_ETH_MAX_DESCS &&
	       eth_ring_ok(nd, l->eth_rx_ring, l->eth_rx_len) &&
	       !(l->eth_ctl & 3) &&
	       (u64)l->eth_ctl + sizeof(struct nvm_eth_ctl) <= nd->sram_len &&
	       l->eth_max_frame >= ETH_HLEN + ETH_MIN_MTU &&
	       l->eth_max_frame <= NVM_ETH_MAX_FRAME;
}

int netvm_eth_init(struct netvm_dev *nd)
{
	const struct nvm_sram_layout *l = &nd->layout;
	struct device *dev = &nd->pdev->dev;
	struct net_device *ndev;
	struct netvm_eth *eth;
	u8 mac[ETH_ALEN];
	u32 i;
	int ret;

	if (!l->eth_tx_len) {
		dev_info(dev, "firmware without Ethernet: no nvm interface\n");
		return 0;
	}
	if (!eth_layout_ok(nd)) {
		dev_err(dev, "bad Ethernet rings in SRAM layout (tx %#x/%u, rx %#x/%u, ctl %#x, frame %u)\n",
			l->eth_tx_ring, l->eth_tx_len, l->eth_rx_ring,
			l->eth_rx_len, l->eth_ctl, l->eth_max_frame);
		return -EIO;
	}
	ndev = alloc_etherdev(sizeof(*eth));
	if (!ndev)
		return -ENOMEM;
	SET_NETDEV_DEV(ndev, dev);
	strscpy(ndev->name, "nvm%d", sizeof(ndev->name));
	eth = netdev_priv(ndev);
	eth->ndev = ndev;
	eth->nd = nd;
	eth->tx_ring = l->eth_tx_ring;
	eth->tx_len = l->eth_tx_len;
	eth->rx_ring = l->eth_rx_ring;
	eth->rx_len = l->eth_rx_len;
	eth->ctl = l->eth_ctl;
	eth->buf_size = l->eth_max_frame;
	spin_lock_init(&eth->route_lock);
	netif_napi_add(ndev, &eth->napi, netvm_eth_poll);
	nd->eth = eth;

	memcpy(mac, netvm_eth_prefix, NVM_ETH_MAC_PREFIX_LEN);
	mac[4] = nd->node_id >> 8;
	mac[5] = nd->node_id & 0xff;
	eth_hw_addr_set(ndev, mac);
	ndev->min_mtu = ETH_MIN_MTU;
	ndev->max_mtu = eth->buf_size - ETH_HLEN;
	ndev->mtu = ndev->max_mtu;
	ndev->netdev_ops = &netvm_eth_ops;
	/* the firmware gathers pieces and fills and sums checksums */
	ndev->hw_features = NETIF_F_SG | NETIF_F_HW_CSUM | NETIF_F_RXCSUM;
	ndev->features = ndev->hw_features;
	ndev->ethtool_ops = &netvm_eth_ethtool_ops;

	eth->tx = kcalloc(eth->tx_len, sizeof(*eth->tx), GFP_KERNEL);
	eth->rx = kcalloc(eth->rx_len, sizeof(*eth->rx), GFP_KERNEL);
	if (!eth->tx || !eth->rx)
		return -ENOMEM;		/* netvm_eth_free() undoes it all */
	writel(0, eth_ctl(eth, offsetof(struct nvm_eth_ctl, rx_enable)));
	writel(0, eth_ctl(eth, offsetof(struct nvm_eth_ctl, irq_arm)));
	writel(NVM_ETH_TXIRQ_OFF, eth_ctl(eth, offsetof(struct nvm_eth_ctl, tx_irq)));
	writel(0, eth_ctl(eth, offsetof(struct nvm_eth_ctl, rx_wait)));
	for (i = 0; i < eth->tx_len; i++)
		writel(0, eth_desc(eth, eth->tx_ring, i) + D_CTRL);
	for (i = 0; i < eth->rx_len; i++) {
		if (!eth_rx_fill(eth, i, GFP_KERNEL))
			return -ENOMEM;
		eth_rx_post(eth, i);
	}
	eth_doorbell(eth);

	netif_carrier_off(ndev);
	ret = register_netdev(ndev);
	if (ret) {
		dev_err(dev, "cannot register the Ethernet interface: %d\n", ret);
		return ret;
	}
	spin_lock_irq(&eth->route_lock);
	eth->registered = true;
	eth_carrier_locked(eth);
	spin_unlock_irq(&eth->route_lock);
	dev_info(dev, "%s: MAC %pM, MTU %u\n", ndev->name, ndev->dev_addr,
		 ndev->mtu);
	return 0;
}

/* Remove, while the NIC still runs: close and unregister the interface. */
void netvm_eth_del(struct netvm_dev *nd)
{
	struct netvm_eth *eth = nd->eth;

	if (!eth || !eth->registered)
		return;
	spin_lock_irq(&eth->route_lock);
	eth->registered = false;
	spin_unlock_irq(&eth->route_lock);
	unregister_netdev(eth->ndev);
}

/* Teardown, the NIC halted and its IRQs gone: free every buffer. */
void netvm_eth_free(struct netvm_dev *nd)
{
	struct netvm_eth *eth = nd->eth;
	struct device *dev = &nd->pdev->dev;
	u32 i;

	if (!eth)
		return;
	netvm_eth_del(nd);
	if (eth->tx) {
		for (i = 0; i < eth->tx_len; i++) {
			eth_unmap(dev, &eth->tx[i].piece);
			if (eth->tx[i].skb)
				dev_kfree_skb_any(eth->tx[i].skb);
		}
	}
	if (eth->rx) {
		for (i = 0; i < eth->rx_len; i++) {
			if (!eth->rx[i].skb)
				continue;
			dma_unmap_single(dev, eth->rx[i].dma, eth->buf_size,
					 DMA_FROM_DEVICE);
			dev_kfree_skb_any(eth->rx[i].skb);
		}
	}
	kfree(eth->tx);
	kfree(eth->rx);
	netif_napi_del(&eth->napi);
	nd->eth = NULL;
	free_netdev(eth->ndev);
}
