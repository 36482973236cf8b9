// SPDX-License-Identifier: GPL-2.0-only
/*
 * Ethernet frames (docs/ethernet.md): the host's net device puts whole
 * Ethernet frames on the link as NVM_PKT_ETH packets, beside NetVM and
 * U-Net.  Modelled on the raw program, with socket buffers for host
 * buffers and several frames in flight.
 *
 * Transmit: each owned descriptor of the tx ring is fetched by host DMA
 * into one of FW_ETH_TXBUFS SRAM buffers behind its route and packet
 * header, then queued for the send engine; the descriptor goes back when
 * the frame is on the link.  Descriptors are taken in ring order and may
 * complete out of order (a refused one at once); the driver reclaims in
 * ring order.  Receive: an ETH packet is DMAed into the next posted rx
 * buffer; while none is posted it waits in its wire slot (the driver
 * re-posts at once, so this is brief), and while the interface is down
 * (ctl.rx_enable 0) it is dropped, so a closed interface never holds the
 * link.  Every descriptor field is copied out of SRAM once and checked
 * there: the host can write all of SRAM at any time.
 *
 * Offloads (eth_abi.h): a frame may be gathered from up to
 * NVM_ETH_MAX_FRAGS descriptors (one host DMA job with a piece per
 * descriptor), and gets its checksum filled in here once it is in SRAM;
 * every received frame's sum goes back with it for the host's stack to
 * verify.
 */
#include <stddef.h>
#include <string.h>

#include "fw.h"
#include "fw_eth_csum.h"
#include "fw_load.h"
#include "netvm/packet.h"

_Static_assert(NVM_ETH_MAX_FRAGS <= FW_HDMA_DESCS,
	       "a frame's pieces fit one host DMA job");

void fw_eth_layout(struct fw *fw)
{
	struct nvm_sram_layout *l = &fw->layout;

	l->eth_tx_ring = FW_ETH_TX_RING;
	l->eth_tx_len = FW_ETH_TX_LEN;
	l->eth_rx_ring = FW_ETH_RX_RING;
	l->eth_rx_len = FW_ETH_RX_LEN;
	l->eth_ctl = FW_ETH_CTL;
	l->eth_max_frame = NVM_ETH_MAX_FRAME;
}

static bool eth_on(struct fw *fw)
{
	return fw->layout.eth_tx_len == FW_ETH_TX_LEN &&
	       fw->layout.eth_rx_len == FW_ETH_RX_LEN;
}

static uint32_t desc_off(uint32_t ring, uint32_t idx)
{
	return ring + idx * sizeof(struct nvm_eth_desc);
}

static uint32_t txbuf_off(uint32_t tb)
{
	return FW_ETH_TXBUF + tb * FW_ETH_TXBUF_SIZE;
}

static uint32_t ctl_rd(struct fw *fw, uint32_t field)
{
	return fw_sram_rd32(fw->chip, fw->layout.eth_ctl + field);
}

/*
 * A completion happened: interrupt the host if it armed us (it arms when
 * its poll is done, then looks at the rings again; the fences on both
 * sides make one of the two see the other's write).  A TX completion
 * (@tx) interrupts only as ctl.tx_irq says (eth_abi.h): a host that reaps
 * its own completions asks for none, since an interrupt per frame sent,
 * taken while the frame is already on its way, was half of all the
 * interrupts of a TCP round trip.  ONCE goes back to OFF before the
 * event, so that the poll the event starts may ask again.
 */
static void eth_notify(struct fw *fw, bool tx)
{
	uint32_t arm = fw->layout.eth_ctl + offsetof(struct nvm_eth_ctl, irq_arm);
	uint32_t txi = fw->layout.eth_ctl + offsetof(struct nvm_eth_ctl, tx_irq);
	uint32_t mode = NVM_ETH_TXIRQ_EVERY;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (tx) {
		mode = fw_sram_rd32(fw->chip, txi);
		if (mode == NVM_ETH_TXIRQ_OFF)
			return;
	}
	if (!fw_sram_rd32(fw->chip, arm))
		return;
	fw_sram_wr32(fw->chip, arm, 0);
	if (mode == NVM_ETH_TXIRQ_ONCE)
		fw_sram_wr32(fw->chip, txi, NVM_ETH_TXIRQ_OFF);
	fw_post(fw, NVM_EV_ETH, 0, 0, 0);
}

/*
 * Outcome fields first, then (after a release fence) @flags, which has no
 * OWN; the caller notifies the host.
 */
static void desc_complete(struct fw *fw, uint32_t off, uint8_t status,
			  uint32_t len, uint16_t node, uint16_t flags,
			  uint16_t csum)
{
	uint8_t *p = fw->chip->sram + off;

	memcpy(p + offsetof(struct nvm_eth_desc, len), &len, sizeof(len));
	p[offsetof(struct nvm_eth_desc, status)] = status;
	memcpy(p + offsetof(struct nvm_eth_desc, node), &node, sizeof(node));
	memcpy(p + offsetof(struct nvm_eth_desc, csum), &csum, sizeof(csum));
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(p + offsetof(struct nvm_eth_desc, flags), &flags, sizeof(flags));
}

/*
 * The frame of the @n descriptors from @idx is done: its last descriptor
 * goes back first and its first last, so that a host reaping in ring order
 * finds the whole frame done once it sees the first.
 */
static void tx_complete(struct fw *fw, uint32_t idx, uint32_t n,
			uint8_t status)
{
	fw_count(fw, status == NVM_ETH_OK ? FW_CNT_ETH_TX : FW_CNT_ETH_TX_ERR);
	while (n--) {
		uint32_t off = desc_off(fw->layout.eth_tx_ring,
					(idx + n) % FW_ETH_TX_LEN);
		struct nvm_eth_desc d;

		memcpy(&d, fw->chip->sram + off, sizeof(d));
		desc_complete(fw, off, status, d.len, d.node, 0, 0);
	}
	eth_notify(fw, true);
}

/*
 * Copy the descriptors of the frame that starts at @idx into @d: returns
 * their count, or 0 while one of them is not yet the NIC's (the host sets
 * the first's OWN last; a host that never does stalls only its own ring).
 * *@total is the frame's bytes; *@st NVM_ETH_ERR_LEN for an empty piece,
 * a frame over NVM_ETH_MAX_FRAME or more than NVM_ETH_MAX_FRAGS pieces.
 */
static uint32_t tx_gather(struct fw *fw, uint32_t idx, struct nvm_eth_desc *d,
			  uint32_t *total, uint8_t *st)
{
	uint32_t n = 0;

	*total = 0;
	*st = NVM_ETH_OK;
	do {
		memcpy(&d[n], fw->chip->sram +
		       desc_off(fw->layout.eth_tx_ring, (idx + n) % FW_ETH_TX_LEN),
		       sizeof(d[n]));
		if (!(d[n].flags & NVM_ETH_OWN))
			return 0;
		if (!d[n].len || d[n].len > NVM_ETH_MAX_FRAME - *total)
			*st = NVM_ETH_ERR_LEN;
		else
			*total += d[n].len;
		n++;
	} while ((d[n - 1].flags & NVM_ETH_MORE) && n < NVM_ETH_MAX_FRAGS);
	if (d[n - 1].flags & NVM_ETH_MORE)
		*st = NVM_ETH_ERR_LEN;	/* the frame goes on past the most */
	return n;
}

/* The first descriptor @d of a frame of @len bytes. */
static uint8_t tx_check(struct fw *fw, const struct nvm_eth_desc *d,
			uint32_t len)
{
	uint32_t i;

	if (len < NVM_ETH_HLEN || len > NVM_ETH_MAX_FRAME)
		return NVM_ETH_ERR_LEN;
	/* the checksum never covers the Ethernet header, and its field
	 * lies inside the frame */
	if ((d->flags & NVM_ETH_CSUM) &&
	    (d->csum_start < NVM_ETH_HLEN || d->csum_start >= len ||
	     d->csum_off > len - d->csum_start ||
	     len - d->csum_start - d->csum_off < 2))
		return NVM_ETH_ERR_LEN;
	if (d->route_len > NVM_ROUTE_MAX)
		return NVM_ETH_ERR_ROUTE;
	for (i = 0; i < d->route_len; i++)
		if (!(d->route[i] & NVM_ROUTE_BYTE))
			return NVM_ETH_ERR_ROUTE;
	if (!(fw->chip->ops->link_state(fw->chip->opaque) & NVM_LINK_UP))
		return NVM_ETH_ERR_LINK;
	return NVM_ETH_OK;
}

static int tb_find(struct fw *fw, uint32_t state)
{
	for (int tb = 0; tb < FW_ETH_TXBUFS; tb++)
		if (fw->eth.tb_state[tb] == state)
			return tb;
	return -1;
}

/* Fetched frames whose send-queue entry was refused (queue full). */
static bool tx_send_ready(struct fw *fw)
{
	struct fw_eth *e = &fw->eth;
	bool progress = false;
	int tb;

	while ((tb = tb_find(fw, FW_ETH_TB_READY)) >= 0) {
		if (!fw_send_submit(fw, FW_PROG_ETH, (uint32_t)tb, txbuf_off(tb),
				    e->tb_len[tb]))
			break;
		e->tb_state[tb] = FW_ETH_TB_SEND;
		progress = true;
	}
	return progress;
}

bool fw_eth_tx_step(struct fw *fw)
{
	struct fw_chip *c = fw->chip;
	struct fw_eth *e = &fw->eth;
	struct nvm_eth_desc d[NVM_ETH_MAX_FRAGS];
	struct nvm_pkt_hdr h;
	uint32_t idx, buf, n, len, at;
	bool progress;
	int tb, job;
	uint8_t st;

	if (!eth_on(fw))
		return false;
	progress = tx_send_ready(fw);
	idx = e->tx_next;
	n = tx_gather(fw, idx, d, &len, &st);
	if (!n)
		return progress;
	if (st == NVM_ETH_OK)
		st = tx_check(fw, &d[0], len);
	if (st != NVM_ETH_OK) {
		e->tx_next = (idx + n) % FW_ETH_TX_LEN;
		fw_tr_fw_eth_tx_refused(fw, idx, st);
		tx_complete(fw, idx, n, st);
		return true;
	}
	tb = tb_find(fw, FW_ETH_TB_FREE);
	if (tb < 0)
		return progress;
	job = fw_hdma_alloc(fw, FW_JOB_ETH_TX, (uint32_t)tb);
	if (job < 0)
		return progress;
	e->tx_next = (idx + n) % FW_ETH_TX_LEN;

	buf = txbuf_off(tb);
	memcpy(c->sram + buf, d[0].route, d[0].route_len);
	h.type = NVM_PKT_ETH;
	h.version = NVM_PKT_VERSION;
	h.src_node = fw_be16(c->node_id);
	h.dst_node = fw_be16(d[0].node);
	h.len = fw_be16((uint16_t)len);
	memcpy(c->sram + buf + d[0].route_len, &h, sizeof(h));
	e->tb_state[tb] = FW_ETH_TB_FETCH;
	e->tb_desc[tb] = idx;
	e->tb_ndesc[tb] = n;
	e->tb_frame[tb] = d[0].route_len + sizeof(h);
	e->tb_len[tb] = e->tb_frame[tb] + len;
	e->tb_csum[tb] = (d[0].flags & NVM_ETH_CSUM) ?
			 d[0].csum_start | (uint32_t)d[0].csum_off << 16 : 0;
	at = buf + e->tb_frame[tb];
	for (uint32_t k = 0; k < n; k++) {
		fw_hdma_add(fw, job, LANAI_DMA_E2L, d[k].len, at, d[k].host_addr);
		at += d[k].len;
	}
	fw_hdma_submit(fw, job);
	return true;
}

static void tx_fetched(struct fw *fw, uint32_t tb, uint32_t status)
{
	struct fw_eth *e = &fw->eth;

	if (tb >= FW_ETH_TXBUFS || e->tb_state[tb] != FW_ETH_TB_FETCH)
		return;
	if (status != NVM_DMA_ST_DONE) {
		e->tb_state[tb] = FW_ETH_TB_FREE;
		tx_complete(fw, e->tb_desc[tb], e->tb_ndesc[tb], NVM_ETH_ERR_DMA);
		return;
	}
	/* checked when taken (tx_check) and on load; fw_csum_fill checks
	 * again that the field is inside the frame */
	if (e->tb_csum[tb] &&
	    (e->tb_frame[tb] > e->tb_len[tb] ||
	     !fw_csum_fill(fw->chip->sram + txbuf_off(tb) + e->tb_frame[tb],
			   e->tb_len[tb] - e->tb_frame[tb],
			   e->tb_csum[tb] & 0xffff, e->tb_csum[tb] >> 16))) {
		e->tb_state[tb] = FW_ETH_TB_FREE;
		tx_complete(fw, e->tb_desc[tb], e->tb_ndesc[tb], NVM_ETH_ERR_LEN);
		return;
	}
	e->tb_state[tb] = FW_ETH_TB_READY;
	tx_send_ready(fw);
}

void fw_eth_sent(struct fw *fw, uint32_t tb)
{
	struct fw_eth *e = &fw->eth;

	if (tb >= FW_ETH_TXBUFS || e->tb_state[tb] != FW_ETH_TB_SEND)
		return;
	e->tb_state[tb] = FW_ETH_TB_FREE;
	tx_complete(fw, e->tb_desc[tb], e->tb_ndesc[tb], NVM_ETH_OK);
}

static void rx_complete(struct fw *fw, uint8_t status)
{
	struct fw_eth *e = &fw->eth;

	fw_count(fw, status == NVM_ETH_OK ? FW_CNT_ETH_RX : FW_CNT_ETH_RX_ERR);
	desc_complete(fw, desc_off(fw->layout.eth_rx_ring, e->rx_idx), status,
		      e->rx_len, (uint16_t)e->rx_src,
		      status == NVM_ETH_OK ? NVM_ETH_CSUM : 0,
		      (uint16_t)e->rx_csum);
	eth_notify(fw, false);
}

/*
 * Copy the next RX descriptor into @d; false while the host has not posted
 * it.  Then ctl.rx_wait tells the host to ring the doorbell when it posts
 * (it posts without one otherwise); the look again after setting it, with
 * the host's fence between its post and its read of rx_wait, makes one of
 * the two see the other.
 */
static bool rx_desc(struct fw *fw, struct nvm_eth_desc *d)
{
	uint32_t off = desc_off(fw->layout.eth_rx_ring, fw->eth.rx_next);

	memcpy(d, fw->chip->sram + off, sizeof(*d));
	if (d->flags & NVM_ETH_OWN)
		return true;
	fw_sram_wr32(fw->chip,
		     fw->layout.eth_ctl + offsetof(struct nvm_eth_ctl, rx_wait), 1);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(d, fw->chip->sram + off, sizeof(*d));
	return d->flags & NVM_ETH_OWN;
}

enum fw_rx_verdict fw_eth_rx(struct fw *fw, uint32_t data, uint32_t len,
			     uint32_t src)
{
	struct fw_eth *e = &fw->eth;
	struct nvm_eth_desc d;
	int job;

	if (!eth_on(fw) ||
	    !ctl_rd(fw, offsetof(struct nvm_eth_ctl, rx_enable))) {
		fw_count(fw, FW_CNT_ETH_RX_OFF);
		return FW_RX_RELEASE;
	}
	if (len < NVM_ETH_HLEN || len > NVM_ETH_MAX_FRAME) {
		fw_count(fw, FW_CNT_ETH_BAD_FRAME);
		fw_tr_fw_eth_bad_frame(fw, src, len);
		return FW_RX_RELEASE;
	}
	if (!rx_desc(fw, &d))
		return FW_RX_WAIT;	/* the host rings when it posts */

	e->rx_idx = e->rx_next;
	e->rx_src = src;
	e->rx_len = len;
	if (len > d.len) {
		e->rx_next = (e->rx_idx + 1) % FW_ETH_RX_LEN;
		rx_complete(fw, NVM_ETH_ERR_LEN);
		return FW_RX_RELEASE;
	}
	job = fw_hdma_alloc(fw, FW_JOB_ETH_RX, e->rx_idx);
	if (job < 0)
		return FW_RX_WAIT;
	/* the sum of what is delivered, for the host's stack to check */
	e->rx_csum = fw_csum_sum(fw->chip->sram + data + NVM_ETH_HLEN,
				 len - NVM_ETH_HLEN);
	e->rx_next = (e->rx_idx + 1) % FW_ETH_RX_LEN;
	fw_hdma_add(fw, job, LANAI_DMA_L2E, len, data, d.host_addr);
	fw_hdma_submit(fw, job);
	return FW_RX_HOLD;
}

static void rx_delivered(struct fw *fw, uint32_t status)
{
	rx_complete(fw, status == NVM_DMA_ST_DONE ? NVM_ETH_OK : NVM_ETH_ERR_DMA);
	fw_rx_release(fw);
}

void fw_eth_job_done(struct fw *fw, uint32_t kind, uint32_t arg,
		     uint32_t status)
{
	if (kind == FW_JOB_ETH_TX)
		tx_fetched(fw, arg, status);
	else
		rx_delivered(fw, status);
}

bool fw_eth_state_ok(const struct fw *fw, const char **what)
{
	const struct fw_eth *e = &fw->eth;
	const struct nvm_sram_layout *l = &fw->layout;

	/* the rings are where this firmware puts them, or absent */
	FW_LOAD_CHECK(l->eth_tx_len == 0 ||
		      (l->eth_tx_ring == FW_ETH_TX_RING &&
		       l->eth_tx_len == FW_ETH_TX_LEN &&
		       l->eth_rx_ring == FW_ETH_RX_RING &&
		       l->eth_rx_len == FW_ETH_RX_LEN &&
		       l->eth_ctl == FW_ETH_CTL));
	FW_LOAD_CHECK(e->tx_next < FW_ETH_TX_LEN);
	FW_LOAD_CHECK(e->rx_next < FW_ETH_RX_LEN);
	FW_LOAD_CHECK(e->rx_idx < FW_ETH_RX_LEN);
	for (uint32_t tb = 0; tb < FW_ETH_TXBUFS; tb++) {
		FW_LOAD_CHECK(e->tb_state[tb] < FW_ETH_TB_COUNT);
		FW_LOAD_CHECK(e->tb_desc[tb] < FW_ETH_TX_LEN);
		FW_LOAD_CHECK(e->tb_len[tb] <= FW_ETH_TXBUF_SIZE);
		FW_LOAD_CHECK(e->tb_ndesc[tb] <= NVM_ETH_MAX_FRAGS);
		FW_LOAD_CHECK(e->tb_frame[tb] <= e->tb_len[tb]);
	}
	FW_LOAD_CHECK(e->rx_csum <= 0xffff);
	return true;
}

/* The Ethernet rings are scanned on every pass: the doorbell only wakes us. */
static bool eth_doorbell(struct fw *fw, uint32_t ep, uint32_t off,
			 uint32_t data)
{
	(void)fw;
	(void)off;
	return ep == 0 && data == NVM_DB_ETH;
}

const struct fw_program fw_prog_eth = {
	.name = "ethernet",
	.pkt_type = NVM_PKT_ETH,
	.doorbell = eth_doorbell,
	.step = fw_eth_tx_step,
	.receive = fw_eth_rx,
	.job_done = fw_eth_job_done,
	.sent = fw_eth_sent,
};
