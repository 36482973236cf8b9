// SPDX-License-Identifier: GPL-2.0-only
/*
 * Firmware unit tests: the Ethernet program (fw_eth.c) on two simulated
 * chips.  The "host" posts descriptors as netvm_eth.c does; every frame
 * delivered is checked byte for byte, and nothing may be written past a
 * posted buffer.
 */
#include <check.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim_chip.h"
#include "netvm/eth_abi.h"
#include "netvm/packet.h"

#define TX_BUF(i)	(SIM_HOST_BASE + 0x10000 + (uint64_t)(i) * 0x2000)
#define RX_BUF(i)	(SIM_HOST_BASE + 0x400000 + (uint64_t)(i) * 0x2000)
#define GUARD		0xee

static struct sim_chip a, b;

static struct nvm_eth_desc *desc(struct sim_chip *s, bool tx, uint32_t i)
{
	const struct nvm_sram_layout *l = sim_layout(s);
	uint32_t ring = tx ? l->eth_tx_ring : l->eth_rx_ring;
	uint32_t len = tx ? l->eth_tx_len : l->eth_rx_len;

	return (struct nvm_eth_desc *)(s->chip.sram + ring +
				       (i % len) * sizeof(struct nvm_eth_desc));
}

static struct nvm_eth_ctl *ctl(struct sim_chip *s)
{
	return (struct nvm_eth_ctl *)(s->chip.sram + sim_layout(s)->eth_ctl);
}

static void post_rx(struct sim_chip *s, uint32_t i, uint32_t size)
{
	struct nvm_eth_desc *d = desc(s, false, i);

	memset(sim_host(s, RX_BUF(i % FW_ETH_RX_LEN)), GUARD, 0x2000);
	memset(d, 0, sizeof(*d));
	d->host_addr = RX_BUF(i % FW_ETH_RX_LEN);
	d->len = size;
	d->flags = NVM_ETH_OWN;
}

static void post_tx(struct sim_chip *s, uint32_t i, uint64_t buf, uint32_t n,
		    uint16_t node, const uint8_t *route, uint8_t route_len)
{
	struct nvm_eth_desc *d = desc(s, true, i);

	memset(d, 0, sizeof(*d));
	d->host_addr = buf;
	d->len = n;
	d->node = node;
	d->route_len = route_len;
	if (route_len)
		memcpy(d->route, route, route_len);
	d->flags = NVM_ETH_OWN;
}

static uint8_t pattern(uint32_t frame, uint32_t i)
{
	return (uint8_t)(frame * 131 + i * 7 + (i >> 8));
}

static void fill(struct sim_chip *s, uint64_t buf, uint32_t frame, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		sim_host(s, buf)[i] = pattern(frame, i);
}

/* The frame in rx buffer @i, then only guard bytes; returns true if so. */
static bool rx_is(struct sim_chip *s, uint32_t i, uint32_t frame, uint32_t n)
{
	const uint8_t *got = sim_host(s, RX_BUF(i % FW_ETH_RX_LEN));
	uint32_t k = 0;

	while (k < n && got[k] == pattern(frame, k))
		k++;
	if (k != n)
		return false;
	while (k < 0x2000 && got[k] == GUARD)
		k++;
	return k == 0x2000;
}

static void setup(void)
{
	sim_init(&a, 1, LANAI_SRAM_MIN);
	sim_init(&b, 2, LANAI_SRAM_DEFAULT);
	sim_connect(&a, &b);
	sim_boot(&a);
	sim_boot(&b);
	sim_settle(&a, &b);
	ctl(&a)->rx_enable = 1;
	ctl(&b)->rx_enable = 1;
}

static void teardown(void)
{
	sim_free(&a);
	sim_free(&b);
}

START_TEST(test_layout)
{
	const struct nvm_sram_layout *l = sim_layout(&a);

	ck_assert_uint_eq(l->eth_tx_len, FW_ETH_TX_LEN);
	ck_assert_uint_eq(l->eth_rx_len, FW_ETH_RX_LEN);
	ck_assert_uint_eq(l->eth_max_frame, NVM_ETH_MAX_FRAME);
	ck_assert_uint_ge(NVM_ETH_MAX_MTU, 4000);
	/* the rings and control block lie after the counters and inside
	 * the smallest SRAM, clear of each other */
	ck_assert_uint_le(l->counters + l->counters_len * 4, l->raw_tx_ring);
	ck_assert_uint_le(l->eth_tx_ring + l->eth_tx_len * 32, l->eth_rx_ring);
	ck_assert_uint_le(l->eth_rx_ring + l->eth_rx_len * 32, l->eth_ctl);
	ck_assert_uint_le(FW_ETH_SRAM_END, LANAI_SRAM_MIN);
	ck_assert_uint_eq(ctl(&a)->irq_arm, 0);
}
END_TEST

/* Every size from a bare header to the largest frame, both ways. */
START_TEST(test_every_size)
{
	struct sim_chip *src = _i ? &b : &a, *dst = _i ? &a : &b;
	uint32_t frame = 0;

	for (uint32_t n = NVM_ETH_HLEN; n <= NVM_ETH_MAX_FRAME;
	     n += (n < 300 ? 1 : 97)) {
		fill(src, TX_BUF(0), frame, n);
		post_rx(dst, frame, NVM_ETH_MAX_FRAME);
		post_tx(src, frame, TX_BUF(0), n, dst->chip.node_id, NULL, 0);
		sim_doorbell(dst, 0, NVM_DB_ETH);
		sim_doorbell(src, 0, NVM_DB_ETH);
		sim_settle(&a, &b);

		ck_assert_uint_eq(desc(src, true, frame)->flags & NVM_ETH_OWN, 0);
		ck_assert_uint_eq(desc(src, true, frame)->status, NVM_ETH_OK);
		ck_assert_uint_eq(desc(dst, false, frame)->flags & NVM_ETH_OWN, 0);
		ck_assert_uint_eq(desc(dst, false, frame)->status, NVM_ETH_OK);
		ck_assert_uint_eq(desc(dst, false, frame)->len, n);
		ck_assert_uint_eq(desc(dst, false, frame)->node,
				  src->chip.node_id);
		ck_assert(rx_is(dst, frame, frame, n));
		frame++;
	}
	ck_assert_uint_eq(src->fw.counters[FW_CNT_ETH_TX], frame);
	ck_assert_uint_eq(dst->fw.counters[FW_CNT_ETH_RX], frame);
	/* never armed: no interrupt */
	ck_assert_int_eq(sim_count_events(dst, NVM_EV_ETH, -1), 0);
	ck_assert_int_eq(sim_count_events(src, NVM_EV_ETH, -1), 0);
}
END_TEST

/*
 * A burst of a whole tx ring with a host that re-posts rx buffers as they
 * fill (as the driver's poll does): every frame arrives once, in order.
 */
START_TEST(test_burst_in_order)
{
	const uint32_t frames = 3 * FW_ETH_TX_LEN;
	uint32_t sent = 0, posted = 0, got = 0, reaped = 0;

	for (uint32_t i = 0; i < FW_ETH_RX_LEN; i++)
		post_rx(&b, posted++, NVM_ETH_MAX_FRAME);
	while (got < frames) {
		while (sent < frames && sent - reaped < FW_ETH_TX_LEN) {
			uint32_t n = 60 + (sent * 37) % 4000;

			fill(&a, TX_BUF(sent % FW_ETH_TX_LEN), sent, n);
			post_tx(&a, sent, TX_BUF(sent % FW_ETH_TX_LEN), n, 2, NULL,
				0);
			sent++;
		}
		sim_doorbell(&a, 0, NVM_DB_ETH);
		sim_run(&a, &b, 4);
		while (reaped < sent && !(desc(&a, true, reaped)->flags & NVM_ETH_OWN)) {
			ck_assert_uint_eq(desc(&a, true, reaped)->status, NVM_ETH_OK);
			reaped++;
		}
		while (got < frames && !(desc(&b, false, got)->flags & NVM_ETH_OWN)) {
			uint32_t n = 60 + (got * 37) % 4000;

			ck_assert_uint_eq(desc(&b, false, got)->len, n);
			ck_assert(rx_is(&b, got, got, n));
			got++;
			post_rx(&b, posted++, NVM_ETH_MAX_FRAME);
			sim_doorbell(&b, 0, NVM_DB_ETH);
		}
	}
	ck_assert_uint_eq(b.fw.counters[FW_CNT_ETH_RX], frames);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_ETH_RX_ERR], 0);
}
END_TEST

/* No buffer posted: the frame waits in its slot, and arrives when one is. */
START_TEST(test_backpressure)
{
	fill(&a, TX_BUF(0), 7, 1500);
	post_tx(&a, 0, TX_BUF(0), 1500, 2, NULL, 0);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_uint_eq(desc(&a, true, 0)->status, NVM_ETH_OK);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_ETH_RX], 0);
	/* the frame waits for a buffer: the host is asked to ring */
	ck_assert_uint_eq(ctl(&b)->rx_wait, 1);
	post_rx(&b, 0, NVM_ETH_MAX_FRAME);
	ctl(&b)->rx_wait = 0;
	sim_doorbell(&b, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_ETH_RX], 1);
	ck_assert(rx_is(&b, 0, 7, 1500));
	ck_assert_uint_eq(ctl(&b)->rx_wait, 0);
}
END_TEST

/* With a buffer posted nothing waits: rx_wait stays 0, no doorbell needed
 * for buffers posted after the first ones. */
START_TEST(test_rx_no_wait)
{
	post_rx(&b, 0, NVM_ETH_MAX_FRAME);
	sim_doorbell(&b, 0, NVM_DB_ETH);
	fill(&a, TX_BUF(0), 5, 100);
	post_tx(&a, 0, TX_BUF(0), 100, 2, NULL, 0);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert(rx_is(&b, 0, 5, 100));
	post_rx(&b, 1, NVM_ETH_MAX_FRAME);	/* no doorbell on b */
	post_tx(&a, 1, TX_BUF(0), 100, 2, NULL, 0);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_ETH_RX], 2);
	ck_assert(rx_is(&b, 1, 5, 100));
	ck_assert_uint_eq(ctl(&b)->rx_wait, 0);
}
END_TEST

/*
 * ctl.tx_irq: OFF, no event for a TX completion (irq_arm stays set);
 * ONCE, one event and back to OFF; EVERY (0, the default) as before;
 * any other value the host writes counts as EVERY and is left alone.
 */
START_TEST(test_tx_irq)
{
	for (uint32_t i = 0; i < 4; i++)
		post_rx(&b, i, NVM_ETH_MAX_FRAME);
	sim_doorbell(&b, 0, NVM_DB_ETH);
	fill(&a, TX_BUF(0), 1, 60);
	ctl(&a)->irq_arm = 1;
	ctl(&a)->tx_irq = NVM_ETH_TXIRQ_OFF;
	post_tx(&a, 0, TX_BUF(0), 60, 2, NULL, 0);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_uint_eq(desc(&a, true, 0)->flags & NVM_ETH_OWN, 0);
	ck_assert_uint_eq(desc(&a, true, 0)->status, NVM_ETH_OK);
	ck_assert_int_eq(sim_count_events(&a, NVM_EV_ETH, -1), 0);
	ck_assert_uint_eq(ctl(&a)->irq_arm, 1);

	ctl(&a)->tx_irq = NVM_ETH_TXIRQ_ONCE;
	post_tx(&a, 1, TX_BUF(0), 60, 2, NULL, 0);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_int_eq(sim_count_events(&a, NVM_EV_ETH, -1), 1);
	ck_assert_uint_eq(ctl(&a)->irq_arm, 0);
	ck_assert_uint_eq(ctl(&a)->tx_irq, NVM_ETH_TXIRQ_OFF);

	ctl(&a)->irq_arm = 1;
	ctl(&a)->tx_irq = NVM_ETH_TXIRQ_EVERY;
	post_tx(&a, 2, TX_BUF(0), 60, 2, NULL, 0);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_int_eq(sim_count_events(&a, NVM_EV_ETH, -1), 2);
	ck_assert_uint_eq(ctl(&a)->tx_irq, NVM_ETH_TXIRQ_EVERY);

	ctl(&a)->irq_arm = 1;
	ctl(&a)->tx_irq = 0xdeadbeef;
	post_tx(&a, 3, TX_BUF(0), 60, 2, NULL, 0);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_int_eq(sim_count_events(&a, NVM_EV_ETH, -1), 3);
	ck_assert_uint_eq(ctl(&a)->tx_irq, 0xdeadbeef);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_ETH_RX], 4);
	ck_assert(rx_is(&b, 3, 1, 60));
}
END_TEST

/* Interface down (rx_enable 0): dropped and counted, the link not held. */
START_TEST(test_rx_off)
{
	ctl(&b)->rx_enable = 0;
	post_rx(&b, 0, NVM_ETH_MAX_FRAME);
	fill(&a, TX_BUF(0), 1, 100);
	post_tx(&a, 0, TX_BUF(0), 100, 2, NULL, 0);
	post_tx(&a, 1, TX_BUF(0), 100, 2, NULL, 0);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_ETH_RX_OFF], 2);
	ck_assert_uint_eq(desc(&b, false, 0)->flags & NVM_ETH_OWN, NVM_ETH_OWN);
	ck_assert(rx_is(&b, 0, 0, 0));
	ctl(&b)->rx_enable = 1;
	post_tx(&a, 2, TX_BUF(0), 100, 2, NULL, 0);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_ETH_RX], 1);
	ck_assert(rx_is(&b, 0, 1, 100));
}
END_TEST

/* A frame longer than the posted buffer: refused, nothing written. */
START_TEST(test_rx_short_buffer)
{
	post_rx(&b, 0, 100);
	post_rx(&b, 1, NVM_ETH_MAX_FRAME);
	fill(&a, TX_BUF(0), 3, 101);
	post_tx(&a, 0, TX_BUF(0), 101, 2, NULL, 0);
	post_tx(&a, 1, TX_BUF(0), 100, 2, NULL, 0);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_uint_eq(desc(&b, false, 0)->status, NVM_ETH_ERR_LEN);
	ck_assert_uint_eq(desc(&b, false, 0)->flags & NVM_ETH_OWN, 0);
	ck_assert(rx_is(&b, 0, 0, 0));		/* only guard bytes */
	ck_assert_uint_eq(desc(&b, false, 1)->status, NVM_ETH_OK);
	ck_assert(rx_is(&b, 1, 3, 100));
	ck_assert_uint_eq(b.fw.counters[FW_CNT_ETH_RX_ERR], 1);
}
END_TEST

START_TEST(test_tx_errors)
{
	const uint8_t bad_route[] = { 0x81, 0x05 };

	post_tx(&a, 0, 0x10, 64, 2, NULL, 0);			/* unmapped */
	post_tx(&a, 1, TX_BUF(0), NVM_ETH_HLEN - 1, 2, NULL, 0);
	post_tx(&a, 2, TX_BUF(0), NVM_ETH_MAX_FRAME + 1, 2, NULL, 0);
	post_tx(&a, 3, TX_BUF(0), 64, 2, bad_route, 2);
	post_tx(&a, 4, TX_BUF(0), 64, 2, NULL, 0);
	desc(&a, true, 4)->route_len = 9;
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_uint_eq(desc(&a, true, 0)->status, NVM_ETH_ERR_DMA);
	ck_assert_uint_eq(desc(&a, true, 1)->status, NVM_ETH_ERR_LEN);
	ck_assert_uint_eq(desc(&a, true, 2)->status, NVM_ETH_ERR_LEN);
	ck_assert_uint_eq(desc(&a, true, 3)->status, NVM_ETH_ERR_ROUTE);
	ck_assert_uint_eq(desc(&a, true, 4)->status, NVM_ETH_ERR_ROUTE);
	a.link = 0;
	post_tx(&a, 5, TX_BUF(0), 64, 2, NULL, 0);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_uint_eq(desc(&a, true, 5)->status, NVM_ETH_ERR_LINK);
	for (uint32_t i = 0; i < 6; i++)
		ck_assert_uint_eq(desc(&a, true, i)->flags & NVM_ETH_OWN, 0);
	ck_assert_uint_eq(a.fw.counters[FW_CNT_ETH_TX_ERR], 6);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_ETH_RX], 0);

	/* the ring still works afterwards */
	a.link = NVM_LINK_UP;
	post_rx(&b, 0, NVM_ETH_MAX_FRAME);
	fill(&a, TX_BUF(0), 9, 60);
	post_tx(&a, 6, TX_BUF(0), 60, 2, NULL, 0);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert(rx_is(&b, 0, 9, 60));
}
END_TEST

/* An armed host gets one event, and the arm is spent; unarmed, none. */
START_TEST(test_irq_arm)
{
	post_rx(&b, 0, NVM_ETH_MAX_FRAME);
	post_rx(&b, 1, NVM_ETH_MAX_FRAME);
	ctl(&b)->irq_arm = 1;
	ctl(&a)->irq_arm = 1;
	post_tx(&a, 0, TX_BUF(0), 60, 2, NULL, 0);
	post_tx(&a, 1, TX_BUF(0), 60, 2, NULL, 0);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_ETH_RX], 2);
	ck_assert_int_eq(sim_count_events(&b, NVM_EV_ETH, -1), 1);
	ck_assert_int_eq(sim_count_events(&a, NVM_EV_ETH, -1), 1);
	ck_assert_uint_eq(ctl(&b)->irq_arm, 0);
	ck_assert_uint_eq(ctl(&a)->irq_arm, 0);
}
END_TEST

/* The test's own internet checksum (RFC 1071): big-endian words, folded. */
static uint16_t ref_sum(const uint8_t *p, uint32_t n)
{
	uint32_t sum = 0;

	for (uint32_t i = 0; i < n; i++)
		sum += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	while (sum > 0xffff)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Ones' complement addition. */
static uint16_t ones_add(uint16_t x, uint16_t y)
{
	uint32_t sum = (uint32_t)x + y;

	return (uint16_t)((sum & 0xffff) + (sum >> 16));
}

/* Post a frame of @npieces pieces of @len[] bytes, pieces back to back in
 * TX_BUF(0); the first descriptor's OWN last, as the driver does. */
static void post_chain(struct sim_chip *s, uint32_t i, const uint32_t *len,
		       uint32_t npieces, uint16_t flags, uint16_t start,
		       uint16_t off)
{
	for (uint32_t k = npieces; k-- > 0;) {
		uint64_t p = TX_BUF(0);

		for (uint32_t j = 0; j < k; j++)
			p += len[j];
		post_tx(s, i + k, p, len[k], 2, NULL, 0);
		if (k + 1 < npieces)
			desc(s, true, i + k)->flags |= NVM_ETH_MORE;
	}
	desc(s, true, i)->flags |= flags;
	desc(s, true, i)->csum_start = start;
	desc(s, true, i)->csum_off = off;
}

/*
 * Scatter-gather and checksum offload: a frame of three pieces with a
 * checksum to fill in arrives whole; its checksum field holds the
 * checksum of the bytes it covers (seeded with a pseudo-header sum), every
 * other byte is the sender's; the receiver's descriptor carries the sum of
 * the frame past its Ethernet header.
 */
START_TEST(test_sg_csum)
{
	const uint32_t len[] = { 54, 1000, 2999 };
	const uint32_t n = 54 + 1000 + 2999, start = 34, off = 16;
	uint8_t want[4096];
	const uint8_t *got = sim_host(&b, RX_BUF(0));
	uint16_t c, seed;

	fill(&a, TX_BUF(0), 5, n);
	memcpy(want, sim_host(&a, TX_BUF(0)), n);
	post_rx(&b, 0, NVM_ETH_MAX_FRAME);
	post_chain(&a, 0, len, 3, NVM_ETH_CSUM, start, off);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);

	for (uint32_t k = 0; k < 3; k++) {
		ck_assert_uint_eq(desc(&a, true, k)->flags & NVM_ETH_OWN, 0);
		ck_assert_uint_eq(desc(&a, true, k)->status, NVM_ETH_OK);
	}
	ck_assert_uint_eq(a.fw.counters[FW_CNT_ETH_TX], 1);
	ck_assert_uint_eq(desc(&b, false, 0)->status, NVM_ETH_OK);
	ck_assert_uint_eq(desc(&b, false, 0)->len, n);
	/* the checksum: what ref_sum says the seeded field must become */
	c = (uint16_t)~ref_sum(want + start, n - start);
	want[start + off] = (uint8_t)(c >> 8);
	want[start + off + 1] = (uint8_t)c;
	ck_assert_mem_eq(got, want, n);
	/* as a receiver checks: the bytes with the pseudo-header's sum (the
	 * seed the field held) add up to 0xffff */
	seed = (uint16_t)(sim_host(&a, TX_BUF(0))[start + off] << 8 |
			  sim_host(&a, TX_BUF(0))[start + off + 1]);
	ck_assert_uint_eq(ones_add(ref_sum(got + start, n - start), seed), 0xffff);
	for (uint32_t k = n; k < 0x2000; k++)
		ck_assert_uint_eq(got[k], GUARD);
	ck_assert_uint_eq(desc(&b, false, 0)->flags & NVM_ETH_CSUM, NVM_ETH_CSUM);
	ck_assert_uint_eq(desc(&b, false, 0)->csum,
			  ref_sum(got + NVM_ETH_HLEN, n - NVM_ETH_HLEN));
}
END_TEST

/* A checksum that sums to zero goes as 0xffff (UDP's "no checksum" is 0). */
START_TEST(test_csum_zero)
{
	const uint32_t len[] = { 64 };
	uint8_t *f = sim_host(&a, TX_BUF(0));

	memset(f, 0, 64);
	post_rx(&b, 0, NVM_ETH_MAX_FRAME);
	post_chain(&a, 0, len, 1, NVM_ETH_CSUM, 20, 6);	/* sum 0: ~0 = 0xffff */
	f[40] = 0xff;			/* a sum of 0xff00 + 0x00ff = 0xffff */
	f[41] = 0x00;
	f[43] = 0xff;
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_uint_eq(desc(&b, false, 0)->status, NVM_ETH_OK);
	ck_assert_uint_eq(sim_host(&b, RX_BUF(0))[26], 0xff);
	ck_assert_uint_eq(sim_host(&b, RX_BUF(0))[27], 0xff);
}
END_TEST

/*
 * Refused gathers: an empty piece, more than NVM_ETH_MAX_FRAGS pieces, a
 * checksum field outside the frame or over the Ethernet header; every
 * descriptor of the frame comes back NVM_ETH_ERR_LEN and nothing is sent.
 * A frame whose later piece is not yet the NIC's waits for it.
 */
START_TEST(test_sg_refused)
{
	uint32_t len[NVM_ETH_MAX_FRAGS], i = 0;
	uint16_t seed;

	for (uint32_t k = 0; k < NVM_ETH_MAX_FRAGS; k++)
		len[k] = 20;
	fill(&a, TX_BUF(0), 6, 4096);
	post_rx(&b, 0, NVM_ETH_MAX_FRAME);
	len[1] = 0;
	post_chain(&a, i, len, 3, 0, 0, 0);		/* an empty piece */
	i += 3;
	len[1] = 20;
	post_chain(&a, i, len, NVM_ETH_MAX_FRAGS, 0, 0, 0);
	desc(&a, true, i + NVM_ETH_MAX_FRAGS - 1)->flags |= NVM_ETH_MORE;
	i += NVM_ETH_MAX_FRAGS;				/* goes on past the most */
	post_chain(&a, i, len, 2, NVM_ETH_CSUM, 20, 19);	/* field at 39..40 of 40 */
	i += 2;
	post_chain(&a, i, len, 2, NVM_ETH_CSUM, 12, 0);	/* over the header */
	i += 2;
	post_chain(&a, i, len, 2, NVM_ETH_CSUM, 40, 0);	/* starts past the end */
	i += 2;
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	for (uint32_t k = 0; k < i; k++) {
		ck_assert_uint_eq(desc(&a, true, k)->flags & NVM_ETH_OWN, 0);
		ck_assert_uint_eq(desc(&a, true, k)->status, NVM_ETH_ERR_LEN);
	}
	ck_assert_uint_eq(a.fw.counters[FW_CNT_ETH_TX_ERR], 5);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_ETH_RX], 0);

	/* the second piece not yet owned: the frame waits, nothing sent */
	post_chain(&a, i, len, 2, NVM_ETH_CSUM, 20, 18);	/* the last 2 bytes */
	desc(&a, true, i + 1)->flags &= (uint16_t)~NVM_ETH_OWN;
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_uint_eq(desc(&a, true, i)->flags & NVM_ETH_OWN, NVM_ETH_OWN);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_ETH_RX], 0);
	desc(&a, true, i + 1)->flags |= NVM_ETH_OWN;
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert_uint_eq(desc(&a, true, i)->status, NVM_ETH_OK);
	ck_assert_uint_eq(desc(&b, false, 0)->len, 40);
	seed = (uint16_t)(sim_host(&a, TX_BUF(0))[38] << 8 | sim_host(&a, TX_BUF(0))[39]);
	ck_assert_uint_eq(ones_add(ref_sum(sim_host(&b, RX_BUF(0)) + 20, 20), seed),
			  0xffff);
}
END_TEST

/* A hostile node's ETH packets: too short or too long for a frame. */
START_TEST(test_hostile_lengths)
{
	uint8_t f[sizeof(struct nvm_pkt_hdr) + NVM_ETH_MAX_FRAME + 64];
	struct nvm_pkt_hdr *h = (struct nvm_pkt_hdr *)f;
	uint32_t bad[] = { 0, NVM_ETH_HLEN - 1, NVM_ETH_MAX_FRAME + 1,
			   NVM_FRAME_MAX - sizeof(struct nvm_pkt_hdr) };

	post_rx(&b, 0, NVM_ETH_MAX_FRAME);
	memset(f, 0x5a, sizeof(f));
	for (uint32_t i = 0; i < 4; i++) {
		h->type = NVM_PKT_ETH;
		h->version = NVM_PKT_VERSION;
		h->src_node = fw_be16(9);
		h->dst_node = fw_be16(2);
		h->len = fw_be16((uint16_t)bad[i]);
		sim_inject(&b, f, sizeof(*h) + bad[i]);
	}
	sim_settle(&a, &b);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_ETH_BAD_FRAME], 4);
	ck_assert_uint_eq(desc(&b, false, 0)->flags & NVM_ETH_OWN, NVM_ETH_OWN);
	ck_assert(rx_is(&b, 0, 0, 0));
	/* then a good one from the same node is delivered */
	h->len = fw_be16(64);
	for (uint32_t k = 0; k < 64; k++)
		f[sizeof(*h) + k] = pattern(4, k);
	sim_inject(&b, f, sizeof(*h) + 64);
	sim_settle(&a, &b);
	ck_assert(rx_is(&b, 0, 4, 64));
	ck_assert_uint_eq(desc(&b, false, 0)->node, 9);
}
END_TEST

/*
 * The Ethernet doorbell is the Ethernet program's, although page 0 is also
 * the kernel endpoint's, whose NetVM doorbell reads any word as a command
 * count: it used to take NVM_DB_ETH as a bogus count and raise an error
 * event (and an interrupt) at every doorbell.
 */
START_TEST(test_doorbell_is_eth)
{
	uint32_t asked = 0;

	/* every program is offered doorbells, once */
	for (uint32_t k = 0; k < FW_PROG_COUNT; k++)
		asked |= 1u << fw_doorbell_order[k];
	ck_assert_uint_eq(asked, (1u << FW_PROG_COUNT) - 1);
	/* b's SRAM holds NetVM, so its kernel endpoint is open */
	ck_assert_uint_gt(sim_layout(&b)->ep_count, 0);
	post_rx(&a, 0, NVM_ETH_MAX_FRAME);
	fill(&b, TX_BUF(0), 3, 60);
	post_tx(&b, 0, TX_BUF(0), 60, 1, NULL, 0);
	sim_doorbell(&a, 0, NVM_DB_ETH);
	sim_doorbell(&b, 0, NVM_DB_ETH);
	sim_settle(&a, &b);
	ck_assert(rx_is(&a, 0, 3, 60));
	ck_assert_int_eq(sim_count_events(&a, NVM_EV_ERROR, -1), 0);
	ck_assert_int_eq(sim_count_events(&b, NVM_EV_ERROR, -1), 0);
	ck_assert_uint_eq(a.fw.counters[FW_CNT_BAD_DOORBELLS], 0);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_BAD_DOORBELLS], 0);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_DOORBELLS], 1);
}
END_TEST

static Suite *fw_eth_suite(void)
{
	Suite *s = suite_create("firmware-eth");
	TCase *tc = tcase_create("eth");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_layout);
	tcase_add_loop_test(tc, test_every_size, 0, 2);
	tcase_add_test(tc, test_burst_in_order);
	tcase_add_test(tc, test_backpressure);
	tcase_add_test(tc, test_rx_no_wait);
	tcase_add_test(tc, test_tx_irq);
	tcase_add_test(tc, test_rx_off);
	tcase_add_test(tc, test_rx_short_buffer);
	tcase_add_test(tc, test_tx_errors);
	tcase_add_test(tc, test_irq_arm);
	tcase_add_test(tc, test_doorbell_is_eth);
	tcase_add_test(tc, test_hostile_lengths);
	tcase_add_test(tc, test_sg_csum);
	tcase_add_test(tc, test_csum_zero);
	tcase_add_test(tc, test_sg_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(fw_eth_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
