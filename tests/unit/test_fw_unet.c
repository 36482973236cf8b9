// SPDX-License-Identifier: GPL-2.0-only
/*
 * U-Net firmware unit tests: two firmware instances back to back, each
 * with one U-Net endpoint whose receive queue and segment live in the
 * simulated host memory.  Every delivered byte is checked.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "unet_fixture.h"

#define PORT_A	2
#define PORT_B	3
#define TAG	0x77
#define AREA	(SIM_HOST_BASE + (14u << 20))	/* rxq, then the segment */
#define SEG	UF_SEG(AREA)
#define DIV	(SIM_HOST_BASE + (12u << 20))	/* B's divert ring */

static struct sim_chip ca, cb;
static struct sim_host ha, hb;
static uint32_t sent_a;		/* send descriptors issued on A */

/* Post send descriptor @d on A and ring; returns its status byte. */
static uint8_t send_desc(struct nvm_unet_send_desc *d)
{
	return uf_send(&ca, PORT_A, &sent_a, d);
}

static uint8_t send(uint16_t ch, uint8_t flags, uint32_t off, uint32_t len,
		    const void *data)
{
	struct nvm_unet_send_desc d = {
		.channel = ch, .flags = flags, .len = len, .offset = off,
	};

	if (data)
		memcpy(d.data, data, len);
	return send_desc(&d);
}

static struct nvm_unet_rx_desc *rxd(uint32_t n)
{
	return uf_rxd(&cb, AREA, n);
}

static void fill(uint8_t *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 13 + (i >> 8));
}

static void setup(void)
{
	uf_setup(&ca, &cb, &ha, &hb);
	sent_a = 0;
	ck_assert_uint_eq(uf_open(&ha, PORT_A, AREA), NVM_ST_OK);
	ck_assert_uint_eq(uf_open(&hb, PORT_B, AREA), NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&ha, PORT_A, 0, 1, PORT_B, TAG, 1),
			  NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&hb, PORT_B, 5, 0, PORT_A, TAG, 1),
			  NVM_ST_OK);
	for (uint32_t i = 0; i < 8; i++)
		uf_push_free(&cb, PORT_B, UF_SEG_SZ - (i + 1) * UF_BUF);
}

static struct nvm_unet_div_rec *drec(uint32_t n)
{
	return (struct nvm_unet_div_rec *)sim_host(&cb, DIV + (n % 8) *
						   NVM_UNET_DIV_SLOT);
}

/* Every test: no DMA outside what a process or the kernel granted, and
 * whatever it did, its state would load (fw_load.c). */
static void teardown(void)
{
	uf_teardown(&ha, &hb);
}

START_TEST(small_and_large)
{
	uint8_t msg[NVM_UNET_MSG_MAX];
	uint32_t lens[] = { 1, 96, 97, 1024, 1025, 4096 };

	for (uint32_t i = 0; i < 6; i++) {
		uint32_t len = lens[i];
		struct nvm_unet_rx_desc *d = rxd(i);
		uint8_t st;

		fill(msg, len, i);
		if (len <= NVM_UNET_INLINE_MAX) {
			st = send(0, NVM_UNET_F_INLINE, 0, len, msg);
		} else {
			memcpy(sim_host(&ca, SEG + 100), msg, len);
			st = send(0, 0, 100, len, NULL);
		}
		ck_assert_uint_eq(st, NVM_UNET_ST_SENT);
		ck_assert_uint_eq(d->seq, i + 1);
		ck_assert_uint_eq(d->len, len);
		ck_assert_uint_eq(d->channel, 5);	/* B's id for it */
		if (len <= NVM_UNET_INLINE_MAX) {
			ck_assert_uint_eq(d->flags, NVM_UNET_F_INLINE);
			ck_assert_mem_eq(d->data, msg, len);
		} else {
			ck_assert_uint_eq(d->nbuf, (len + UF_BUF - 1) / UF_BUF);
			for (uint32_t b = 0; b < d->nbuf; b++) {
				uint32_t n = len - b * UF_BUF;

				ck_assert_mem_eq(sim_host(&cb, SEG + d->buf[b]),
						 msg + b * UF_BUF,
						 n < UF_BUF ? n : UF_BUF);
				uf_push_free(&cb, PORT_B, d->buf[b]);
			}
		}
		uf_ctl(&cb, PORT_B)->rx_cons = i + 1;
	}
	ck_assert_uint_eq(uf_status(&ca, PORT_A).send_consumed, 6);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, 6);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_RX], 6);
}
END_TEST

/*
 * A frame to a node the mapper lost (its route set to none) leaves
 * without route bytes, and nothing in front of its tx buffer changes.
 * Before, the no-route mark (0xff) was taken as a route length: 255 bytes
 * were copied in front of the tx buffer, over the end of the buffer
 * before it (another frame) or what lies before them all.  A message is
 * refused now (unreachable_refused); a control frame from a virtual port
 * (KCTL) still goes, and is what builds a frame here.
 */
START_TEST(route_none_no_overwrite)
{
	static const uint32_t tail = 256;
	uint32_t first = ca.fw.layout.txbuf - tail;
	uint32_t area = FW_NV_TXBUFS * FW_NV_TXBUF_SIZE + tail;
	uint8_t *sram = ca.chip.sram, *saved = malloc(area), msg[64];

	ck_assert_ptr_nonnull(saved);
	ck_assert_uint_eq(uf_kop_args(&ha, NVM_KOP_ROUTE,
				      1, 0, 0, NVM_ROUTE_F_NONE), NVM_ST_OK);
	ck_assert_uint_eq(ca.fw.nv.route_len[1], FW_NV_NO_ROUTE);
	fill(sram + first, area, 77);
	memcpy(saved, sram + first, area);
	fill(msg, sizeof(msg), 3);
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, sizeof(msg), msg),
			  NVM_UNET_ST_UNREACHABLE);
	{
		struct nvm_k_unet_kctl k = {
			.node = 1, .dst_port = PORT_B, .src_port = 20,
			.flags = NVM_UNET_HF_HOLD, .tag = TAG,
		};
		uint32_t f0 = ca.frames_sent;

		ck_assert_uint_eq(uf_kop(&ha, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
				  NVM_ST_OK);
		ck_assert_uint_eq(ca.frames_sent, f0 + 1);
	}
	/* before the first buffer, and the end of every buffer: the message
	 * (headers and 64 bytes) is at the start of the one it used */
	ck_assert_mem_eq(sram + first, saved, tail);
	for (uint32_t b = 1; b <= FW_NV_TXBUFS; b++) {
		uint32_t end = b * FW_NV_TXBUF_SIZE;

		ck_assert_mem_eq(sram + first + end, saved + end, tail);
	}
	free(saved);
}
END_TEST

/*
 * A message to a node nothing can reach (the mapper marked it gone, or
 * NetVM gave it up) completes UNREACHABLE, not SENT, and puts nothing on
 * the wire; the endpoint goes on sending to the nodes it can reach.  The
 * same for a kernel-emulated endpoint's KSEND (NVM_ST_UNREACHABLE, where
 * a NI without room says NVM_ST_BUSY).
 */
START_TEST(unreachable_refused)
{
	uint8_t msg[2000];
	uint32_t f0 = ca.frames_sent, errs;
	struct nvm_k_unet_ksend k = {
		.addr = SEG + 100, .len = 40, .tag = 0x99, .node = 7,
		.dst_port = PORT_B, .src_port = 20,
	};

	fill(msg, sizeof(msg), 9);
	memcpy(sim_host(&ca, SEG + 100), msg, sizeof(msg));
	/* node 7 gone: channel 1 to it; node 1 stays good */
	ck_assert_uint_eq(uf_kop_args(&ha, NVM_KOP_ROUTE,
				      7, 0, 0, NVM_ROUTE_F_NONE), NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&ha, PORT_A, 1, 7, PORT_B, TAG, 1),
			  NVM_ST_OK);
	ck_assert_uint_eq(send(1, NVM_UNET_F_INLINE, 0, 40, msg),
			  NVM_UNET_ST_UNREACHABLE);
	ck_assert_uint_eq(send(1, 0, 100, sizeof(msg), NULL),
			  NVM_UNET_ST_UNREACHABLE);
	ck_assert_uint_eq(ca.frames_sent, f0);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).send_consumed, 2);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).send_errors, 2);
	errs = sh_shadow(&ha, NVM_EP_KERNEL).errors;
	ck_assert_uint_ne(uf_kop(&ha, NVM_KOP_UNET_KSEND, &k, sizeof(k)),
			  NVM_ST_OK);
	ck_assert_uint_eq(sh_err(&ha, NVM_EP_KERNEL, errs).status,
			  NVM_ST_UNREACHABLE);
	ck_assert_uint_eq(ca.frames_sent, f0);
	/* the next one, to the good node, goes: large and small */
	ck_assert_uint_eq(send(0, 0, 100, sizeof(msg), NULL), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(rxd(0)->len, sizeof(msg));
	ck_assert_uint_eq(rxd(0)->nbuf, 2);
	ck_assert_mem_eq(sim_host(&cb, SEG + rxd(0)->buf[0]), msg, UF_BUF);
	ck_assert_mem_eq(sim_host(&cb, SEG + rxd(0)->buf[1]), msg + UF_BUF,
			 sizeof(msg) - UF_BUF);
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 40, msg),
			  NVM_UNET_ST_SENT);
	ck_assert_mem_eq(rxd(1)->data, msg, 40);
	/* a peer NetVM gave up is unreachable too, until it comes back */
	ca.fw.nv.peer[1].dead = 1;
	f0 = ca.frames_sent;
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 40, msg),
			  NVM_UNET_ST_UNREACHABLE);
	ck_assert_uint_eq(ca.frames_sent, f0);
	ca.fw.nv.peer[1].dead = 0;
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 41, msg),
			  NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, 3);
	ck_assert_uint_eq(rxd(2)->len, 41);
	ck_assert_mem_eq(rxd(2)->data, msg, 41);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).send_errors, 3);
}
END_TEST

/*
 * A KSEND accepted while its node was reachable, whose route the mapper
 * removes before the NI has fetched the bytes, is not sent: the kernel's
 * done word gets its cookie marked NVM_UNET_KS_UNREACHABLE.  Before, it
 * left without route bytes (the switch dropped it) and the kernel was
 * told it went.  A cookie that carries the mark is refused.
 */
START_TEST(ksend_route_lost)
{
	struct nvm_k_unet_ksend k = {
		.addr = SIM_HOST_BASE + (13u << 20), .len = 2000, .tag = 0x99,
		.node = 1, .dst_port = PORT_B, .src_port = 20,
		.done_addr = SIM_HOST_BASE + (13u << 20) + 8192, .cookie = 5,
	};
	struct nvm_cmd send_cmd = { .op = NVM_KOP_UNET_KSEND };
	struct nvm_cmd route_cmd = { .op = NVM_KOP_ROUTE, .dst_node = 1 };
	uint32_t *done = (uint32_t *)sim_host(&ca, k.done_addr);
	uint8_t *msg = sim_host(&ca, k.addr);
	uint32_t f0, errs, bad;

	ck_assert_uint_eq(uf_chan(&hb, PORT_B, 6, 0, 20, 0x99, 1), NVM_ST_OK);
	fill(msg, 2000, 31);
	/* reachable: sent, the cookie as given */
	ck_assert_uint_eq(uf_kop(&ha, NVM_KOP_UNET_KSEND, &k, sizeof(k)),
			  NVM_ST_OK);
	ck_assert_uint_eq(*done, 5);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, 1);
	ck_assert_mem_eq(sim_host(&cb, SEG + rxd(0)->buf[0]), msg, 1024);
	ck_assert_mem_eq(sim_host(&cb, SEG + rxd(0)->buf[1]), msg + 1024, 976);
	/* accepted, then the route goes before the fetch is over */
	k.cookie = 6;
	memcpy(send_cmd.inline_data, &k, sizeof(k));
	route_cmd.arg[1] = NVM_ROUTE_F_NONE;
	errs = sh_shadow(&ha, NVM_EP_KERNEL).errors;
	bad = ca.fw.counters[FW_CNT_UNET_TX_BAD];
	f0 = ca.frames_sent;
	sh_cmd(&ha, NVM_EP_KERNEL, &send_cmd);
	sh_cmd(&ha, NVM_EP_KERNEL, &route_cmd);
	ck_assert_uint_eq(*done, 5);		/* not fetched yet */
	sh_settle();
	ck_assert_uint_eq(sh_shadow(&ha, NVM_EP_KERNEL).errors, errs);	/* both accepted */
	ck_assert_uint_eq(ca.fw.nv.route_len[1], FW_NV_NO_ROUTE);
	ck_assert_uint_eq(*done, 6 | NVM_UNET_KS_UNREACHABLE);
	ck_assert_uint_eq(ca.frames_sent, f0);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_UNET_TX_BAD], bad + 1);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, 1);
	/* the mark is the NI's to set */
	k.cookie = 7 | NVM_UNET_KS_UNREACHABLE;
	ck_assert_uint_eq(uf_kop_args(&ha, NVM_KOP_ROUTE, 1, 0, 0, 0),
			  NVM_ST_OK);
	ck_assert_uint_ne(uf_kop(&ha, NVM_KOP_UNET_KSEND, &k, sizeof(k)),
			  NVM_ST_OK);
	ck_assert_uint_eq(sh_err(&ha, NVM_EP_KERNEL, errs).status, NVM_ST_BAD_CMD);
	ck_assert_uint_eq(ca.frames_sent, f0);
}
END_TEST

/*
 * U-Net's tx buffers count in the peer's share (FW_NV_TX_PEER), as
 * NetVM's do: with node 1's NIC taking no frame (its link stalled), A's
 * endpoint posts messages to it until they wait; they hold exactly the
 * share, and a KSEND to node 2 still gets a buffer.  Without the share
 * they held every buffer the send queue had room for and that KSEND was
 * refused BUSY.  Node 1 taking frames again, every message goes.
 */
START_TEST(tx_share)
{
	struct nvm_k_unet_ksend k = {
		.addr = SIM_HOST_BASE + (13u << 20), .len = 40, .tag = 0x99,
		.node = 2, .dst_port = PORT_B, .src_port = 20,
		.done_addr = SIM_HOST_BASE + (13u << 20) + 8192, .cookie = 9,
	};
	uint8_t msg[200][40];
	uint32_t posted = 0, consumed = 0;

	cb.rx_enabled = false;
	for (; posted < 200; posted++) {
		if (posted - uf_status(&ca, PORT_A).send_consumed >= NVM_UNET_SENDQ_LEN)
			break;
		fill(msg[posted], 40, posted);
		send(0, NVM_UNET_F_INLINE, 0, 40, msg[posted]);
	}
	consumed = uf_status(&ca, PORT_A).send_consumed;
	ck_assert_uint_lt(consumed, posted);	/* the rest wait */
	ck_assert_uint_eq(uf_status(&ca, PORT_A).send_errors, 0);
	/* traffic to another node still gets a buffer */
	fill(sim_host(&ca, k.addr), 40, 99);
	ck_assert_uint_eq(uf_kop(&ha, NVM_KOP_UNET_KSEND, &k, sizeof(k)),
			  NVM_ST_OK);
	ck_assert_uint_eq(sim_tx_held(&ca, 2), 1);
	ck_assert_uint_eq(sim_tx_held(&ca, 1), FW_NV_TX_PEER);
	/* node 1 takes frames again: the waiting messages go, none refused;
	 * the first UF_RXQ_LEN arrive byte for byte (then B's queue is full) */
	cb.rx_enabled = true;
	sh_settle();
	ck_assert_uint_eq(uf_status(&ca, PORT_A).send_consumed, posted);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).send_errors, 0);
	ck_assert_uint_eq(sim_tx_held(&ca, 1), 0);
	ck_assert_uint_eq(*(uint32_t *)sim_host(&ca, k.done_addr), 9);
	for (uint32_t i = 0; i < UF_RXQ_LEN; i++) {
		ck_assert_uint_eq(rxd(i)->seq, i + 1);
		ck_assert_uint_eq(rxd(i)->len, 40);
		ck_assert_mem_eq(rxd(i)->data, msg[i], 40);
	}
}
END_TEST

START_TEST(bounds_checked)
{
	uint32_t rx = cb.fw.counters[FW_CNT_UNET_RX];

	ck_assert_uint_eq(send(0, 0, UF_SEG_SZ - 10, 11, NULL), NVM_UNET_ST_BAD_RANGE);
	ck_assert_uint_eq(send(0, 0, 0xfffffff0u, 64, NULL), NVM_UNET_ST_BAD_RANGE);
	ck_assert_uint_eq(send(0, 0, UF_SEG_SZ, 1, NULL), NVM_UNET_ST_BAD_RANGE);
	ck_assert_uint_eq(send(0, 0, 0, 0, NULL), NVM_UNET_ST_BAD_LEN);
	ck_assert_uint_eq(send(0, 0, 0, NVM_UNET_MSG_MAX + 1, NULL), NVM_UNET_ST_BAD_LEN);
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 97, NULL), NVM_UNET_ST_BAD_LEN);
	ck_assert_uint_eq(send(1, 0, 0, 8, NULL), NVM_UNET_ST_BAD_CHANNEL);
	ck_assert_uint_eq(send(200, 0, 0, 8, NULL), NVM_UNET_ST_BAD_CHANNEL);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).send_errors, 8);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_RX], rx);
	/* the exact end of the segment is fine */
	ck_assert_uint_eq(send(0, 0, UF_SEG_SZ - 10, 10, NULL), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_RX], rx + 1);
}
END_TEST

START_TEST(demultiplexed_on_tag)
{
	uint8_t m[8] = "intruder";

	/* A's channel 1 carries a tag B has no channel for */
	ck_assert_uint_eq(uf_chan(&ha, PORT_A, 1, 1, PORT_B, TAG + 1, 1),
			  NVM_ST_OK);
	ck_assert_uint_eq(send(1, NVM_UNET_F_INLINE, 0, 8, m), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_NO_CHANNEL], 1);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, 0);
	/* the same tag from another port of A is not B's channel either */
	ck_assert_uint_eq(uf_open(&ha, PORT_A + 5, AREA), NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&ha, PORT_A + 5, 0, 1, PORT_B, TAG, 1),
			  NVM_ST_OK);
	{
		struct nvm_unet_send_desc d = { .channel = 0, .len = 8,
						.flags = NVM_UNET_F_INLINE };
		uint32_t posted = 0;

		memcpy(d.data, m, 8);
		ck_assert_uint_eq(uf_send(&ca, PORT_A + 5, &posted, &d),
				  NVM_UNET_ST_SENT);
	}
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_NO_CHANNEL], 2);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, 0);
	/* channels are per endpoint (test_fw_unet_ports.c): not twice on one */
	ck_assert_uint_ne(uf_chan(&ha, PORT_A + 5, 1, 1, PORT_B, TAG, 1),
			  NVM_ST_OK);
	/* a port is one model's: NetVM cannot open a U-Net port, nor U-Net
	 * an open one or the kernel's */
	{
		uint32_t e0 = sh_shadow(&ha, NVM_EP_KERNEL).errors;

		sh_open(&ha, PORT_A);
		sh_settle();
		ck_assert_uint_eq(sh_shadow(&ha, NVM_EP_KERNEL).errors, e0 + 1);
	}
	ck_assert_uint_ne(uf_open(&ha, PORT_A, AREA), NVM_ST_OK);
	ck_assert_uint_ne(uf_open(&ha, NVM_EP_KERNEL, AREA), NVM_ST_OK);
	sh_open(&ha, 9);
	sh_settle();
	ck_assert_uint_ne(uf_open(&ha, 9, AREA), NVM_ST_OK);
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 8, m), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, 1);
	ck_assert_mem_eq(rxd(0)->data, m, 8);
}
END_TEST

START_TEST(ring_full_and_no_buffer)
{
	uint8_t m[4] = "full";
	struct nvm_event *ev;

	for (uint32_t i = 0; i < UF_RXQ_LEN + 2; i++)
		ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 4, m),
				  NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, UF_RXQ_LEN);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_ring_full, 2);
	uf_ctl(&cb, PORT_B)->rx_cons = UF_RXQ_LEN;
	/* 8 buffers: two 4 KiB messages fit, the third finds none */
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_uint_eq(send(0, 0, 0, 4096, NULL), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, UF_RXQ_LEN + 2);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_no_buf, 1);
	/* armed for the next message: one event, none for the one after */
	uf_ctl(&cb, PORT_B)->arm = UF_RXQ_LEN + 3;
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 4, m), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 4, m), NVM_UNET_ST_SENT);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, -1), 1);
	ev = (struct nvm_event *)sim_last_event(&cb, NVM_EV_NOTIFY);
	ck_assert_uint_eq(ev->endpoint, PORT_B);
	ck_assert_uint_eq(ev->data, NVM_UNET_EV_WAKE);
	/* armed for a message not yet there: nothing until it is */
	uf_ctl(&cb, PORT_B)->arm = UF_RXQ_LEN + 6;
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 4, m), NVM_UNET_ST_SENT);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, -1), 1);
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 4, m), NVM_UNET_ST_SENT);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, -1), 2);
}
END_TEST

START_TEST(upcall_edges)
{
	uint8_t m[4] = "upc!";
	struct nvm_unet_ctl *k = uf_ctl(&cb, PORT_B);

	/* off: nothing, however many arrive */
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 4, m), NVM_UNET_ST_SENT);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, -1), 0);
	k->rx_cons = 1;
	/* on: one upcall when the queue becomes non-empty, one at 3 queued */
	k->upcall = 1;
	k->upcall_full = 3;
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 4, m),
				  NVM_UNET_ST_SENT);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY,
					  NVM_UNET_EV_NONEMPTY), 1);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY,
					  NVM_UNET_EV_ALMOST_FULL), 1);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, -1), 2);
	/* drained: the next message is an edge again */
	k->rx_cons = 5;
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 4, m), NVM_UNET_ST_SENT);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY,
					  NVM_UNET_EV_NONEMPTY), 2);
}
END_TEST

START_TEST(close_drops)
{
	uint8_t m[4] = "gone";
	struct nvm_cmd c = { .op = NVM_KOP_UNET_CLOSE, .dst_port = PORT_B };

	sh_cmd(&hb, NVM_EP_KERNEL, &c);
	sh_settle();
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 4, m), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_NO_CHANNEL], 1);
	/* the port is free again, for either model */
	ck_assert_uint_eq(uf_open(&hb, PORT_B, AREA), NVM_ST_OK);
}
END_TEST

START_TEST(divert_in_order)
{
	uint8_t m[64];
	uint32_t n = 0;

	ck_assert_uint_eq(uf_divert_ring(&hb, DIV, 8), NVM_ST_OK);
	/* 16 direct, then the queue is full: one diverted for that, and the
	 * ones after it for the order, although the process has made room */
	for (; n < UF_RXQ_LEN + 2; n++) {
		fill(m, 40, n);
		ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 40, m),
				  NVM_UNET_ST_SENT);
	}
	uf_ctl(&cb, PORT_B)->rx_cons = UF_RXQ_LEN;
	fill(m, 40, n++);
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 40, m), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, UF_RXQ_LEN);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_ring_full, 1);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).div_order, 2);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).diverted, 3);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).divert_mode, 1);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY,
					  NVM_UNET_EV_DIVERT), 3);
	for (uint32_t i = 0; i < 3; i++) {
		struct nvm_unet_div_rec *r = drec(i);

		fill(m, 40, UF_RXQ_LEN + i);
		ck_assert_uint_eq(r->seq, i + 1);
		ck_assert_uint_eq(r->msgno, UF_RXQ_LEN + i);
		ck_assert_uint_eq(r->port, PORT_B);
		ck_assert_uint_eq(r->channel, 5);
		ck_assert_uint_eq(r->len, 40);
		ck_assert_mem_eq(r->data, m, 40);
	}
	/* back to direct only once every record is handed on */
	ck_assert_uint_ne(uf_kop_args(&hb, NVM_KOP_UNET_DIRECT,
				      0, PORT_B, 0, 0), NVM_ST_OK);
	ck_assert_uint_ne(uf_kop_args(&hb, NVM_KOP_UNET_DIVERT_DONE,
				      0, 0, 4, 0), NVM_ST_OK);
	ck_assert_uint_eq(uf_kop_args(&hb, NVM_KOP_UNET_DIVERT_DONE,
				      0, 0, 3, 0), NVM_ST_OK);
	ck_assert_uint_eq(uf_kop_args(&hb, NVM_KOP_UNET_DIRECT,
				      0, PORT_B, 0, 0), NVM_ST_OK);
	fill(m, 40, n);
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 40, m), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, UF_RXQ_LEN + 1);
	ck_assert_uint_eq(rxd(UF_RXQ_LEN)->msgno, n);
	ck_assert_mem_eq(rxd(UF_RXQ_LEN)->data, m, 40);
	/* no buffer for a large one: diverted with that cause, data whole */
	uf_ctl(&cb, PORT_B)->free_prod = uf_status(&cb, PORT_B).free_cons;
	memset(sim_host(&ca, SEG), 0x5a, 3000);
	ck_assert_uint_eq(send(0, 0, 0, 3000, NULL), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_no_buf, 1);
	ck_assert_uint_eq(drec(3)->msgno, n + 1);
	ck_assert_uint_eq(drec(3)->len, 3000);
	ck_assert_mem_eq(drec(3)->data, sim_host(&ca, SEG), 3000);
	/* a full divert ring holds the link, losing nothing */
	for (uint32_t i = 0; i < 8; i++)
		ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 40, m),
				  NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).diverted, 3 + 1 + 7);
	ck_assert_uint_eq(uf_kop_args(&hb, NVM_KOP_UNET_DIVERT_DONE,
				      0, 0, 8, 0), NVM_ST_OK);
	sh_settle();
	ck_assert_uint_eq(uf_status(&cb, PORT_B).diverted, 3 + 1 + 8);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).dropped, 0);
	ck_assert_uint_eq(drec(11)->msgno, n + 9);
}
END_TEST

/* Many frames in flight at once: each diverted record holds its own data. */
START_TEST(divert_burst)
{
	uint32_t total = 40, i;

	ck_assert_uint_eq(uf_divert_ring(&hb, DIV, 64), NVM_ST_OK);
	for (i = 0; i < total; i++) {
		struct nvm_unet_send_desc d = {
			.channel = 0, .flags = NVM_UNET_F_INLINE, .len = 8,
			.seq = sent_a + 1,
		};

		memcpy(d.data, &i, 4);
		memcpy(uf_region(&ca, PORT_A) + NVM_UNET_SENDQ +
		       (sent_a % NVM_UNET_SENDQ_LEN) * sizeof(d), &d,
		       sizeof(d));
		sent_a++;
	}
	sim_doorbell(&ca, PORT_A * LANAI_DOORBELL_PAGE, sent_a);
	sh_settle();
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, UF_RXQ_LEN);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).diverted, total - UF_RXQ_LEN);
	for (i = 0; i < UF_RXQ_LEN; i++) {
		ck_assert_uint_eq(rxd(i)->msgno, i);
		ck_assert_mem_eq(rxd(i)->data, &i, 4);
	}
	for (i = UF_RXQ_LEN; i < total; i++) {
		struct nvm_unet_div_rec *r = (struct nvm_unet_div_rec *)
			sim_host(&cb, DIV +
				 (i - UF_RXQ_LEN) * NVM_UNET_DIV_SLOT);

		ck_assert_uint_eq(r->msgno, i);
		ck_assert_mem_eq(r->data, &i, 4);
	}
}
END_TEST

START_TEST(virtual_ports)
{
	struct nvm_k_unet_ksend k = {
		.addr = SIM_HOST_BASE + (13u << 20), .len = 2000, .tag = 0x99,
		.node = 1, .dst_port = PORT_B, .src_port = 20,
		.done_addr = SIM_HOST_BASE + (13u << 20) + 8192, .cookie = 77,
	};
	struct nvm_unet_div_rec *r;
	uint8_t *msg = sim_host(&ca, k.addr);

	/* the kernel of A sends for its virtual port 20 to B's port */
	ck_assert_uint_eq(uf_chan(&hb, PORT_B, 6, 0, 20, 0x99, 1), NVM_ST_OK);
	fill(msg, 2000, 3);
	ck_assert_uint_eq(uf_kop(&ha, NVM_KOP_UNET_KSEND, &k, sizeof(k)),
			  NVM_ST_OK);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, 1);
	ck_assert_uint_eq(rxd(0)->channel, 6);
	ck_assert_uint_eq(rxd(0)->len, 2000);
	ck_assert_mem_eq(sim_host(&cb, SEG + rxd(0)->buf[0]), msg, 1024);
	ck_assert_mem_eq(sim_host(&cb, SEG + rxd(0)->buf[1]), msg + 1024, 976);
	ck_assert_uint_eq(*(uint32_t *)sim_host(&ca, k.done_addr), 77);
	ck_assert_uint_eq(rxd(0)->flags, 0);
	/* the DSM flags travel too (an emulated endpoint's sendx) */
	k.hflags = NVM_UNET_HF_NOINTR | NVM_UNET_HF_REPLY;
	k.reply = 200;
	k.len = 40;
	ck_assert_uint_eq(uf_kop(&ha, NVM_KOP_UNET_KSEND, &k, sizeof(k)),
			  NVM_ST_OK);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, 2);
	ck_assert_uint_eq(rxd(1)->flags, NVM_UNET_F_INLINE | NVM_UNET_F_NOINTR |
			  NVM_UNET_F_REPLY);
	ck_assert_uint_eq(rxd(1)->reply, 200);
	ck_assert_mem_eq(rxd(1)->data, msg, 40);
	/* ... and only they, with a reply number in range */
	k.hflags = 0x80;
	ck_assert_uint_ne(uf_kop(&ha, NVM_KOP_UNET_KSEND, &k, sizeof(k)),
			  NVM_ST_OK);
	k.hflags = NVM_UNET_HF_REPLY;
	k.reply = NVM_UNET_REPLY_SLOTS;
	ck_assert_uint_ne(uf_kop(&ha, NVM_KOP_UNET_KSEND, &k, sizeof(k)),
			  NVM_ST_OK);
	k.hflags = 0;
	k.reply = 0;
	/* real ports are not the kernel's to send from */
	k.src_port = PORT_A;
	ck_assert_uint_ne(uf_kop(&ha, NVM_KOP_UNET_KSEND, &k, sizeof(k)),
			  NVM_ST_OK);
	/* B's endpoint sends to A's virtual port 21: A's kernel gets it */
	ck_assert_uint_eq(uf_divert_ring(&ha, DIV, 8), NVM_ST_OK);
	{
		struct nvm_unet_send_desc d = {
			.channel = 7, .flags = NVM_UNET_F_INLINE | NVM_UNET_F_NOINTR |
			NVM_UNET_F_REPLY, .len = 5, .reply = 9,
			.data = "hello",
		};
		uint32_t posted = 0;

		ck_assert_uint_eq(uf_chan(&hb, PORT_B, 7, 0, 21, 0x98, 1),
				  NVM_ST_OK);
		uf_send(&cb, PORT_B, &posted, &d);
	}
	r = (struct nvm_unet_div_rec *)sim_host(&ca, DIV);
	ck_assert_uint_eq(r->seq, 1);
	ck_assert_uint_eq(r->port, 21);
	ck_assert_uint_eq(r->src_node, 1);
	ck_assert_uint_eq(r->src_port, PORT_B);
	ck_assert_uint_eq(r->tag, 0x98);
	ck_assert_uint_eq(r->len, 5);
	ck_assert_mem_eq(r->data, "hello", 5);
	/* the DSM flags, for the driver playing that endpoint's NI */
	ck_assert_uint_eq(r->dsm, NVM_UNET_F_NOINTR | NVM_UNET_F_REPLY | 9u << 16);
	ck_assert_int_eq(sim_count_events(&ca, NVM_EV_NOTIFY, NVM_UNET_EV_DIVERT), 1);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_UNET_NO_CHANNEL], 0);
}
END_TEST
/* ---- DSM extensions (docs/dsm.md) ---- */

/*
 * NOINTR messages are only queued: no wakeup and no upcall however they
 * fill the queue, even with the receiver armed; the next interrupting
 * message raises the wakeup and the non-empty edge the quiet ones took.
 */
START_TEST(quiet_raises_nothing)
{
	uint8_t m[40];
	struct nvm_unet_ctl *k = uf_ctl(&cb, PORT_B);
	struct nvm_event *ev;

	k->upcall = 1;
	k->upcall_full = 2;
	k->arm = 1;
	for (uint32_t i = 0; i < 3; i++) {
		fill(m, sizeof(m), 50 + i);
		ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE | NVM_UNET_F_NOINTR,
				       0, sizeof(m), m), NVM_UNET_ST_SENT);
		ck_assert_uint_eq(rxd(i)->seq, i + 1);
		ck_assert_uint_eq(rxd(i)->flags,
				  NVM_UNET_F_INLINE | NVM_UNET_F_NOINTR);
		ck_assert_mem_eq(rxd(i)->data, m, sizeof(m));
	}
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, -1), 0);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).quiet, 3);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).events, 0);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_QUIET], 3);
	/* a large quiet one (free buffers) is quiet too */
	fill(sim_host(&ca, SEG + 300), 2000, 9);
	ck_assert_uint_eq(send(0, NVM_UNET_F_NOINTR, 300, 2000, NULL),
			  NVM_UNET_ST_SENT);
	ck_assert_uint_eq(rxd(3)->flags, NVM_UNET_F_NOINTR);
	ck_assert_mem_eq(sim_host(&cb, SEG + rxd(3)->buf[0]),
			 sim_host(&ca, SEG + 300), UF_BUF);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, -1), 0);
	/* a request: it wakes the armed sleeper and raises the owed edge */
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 4, m),
			  NVM_UNET_ST_SENT);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, -1), 1);
	ev = (struct nvm_event *)sim_last_event(&cb, NVM_EV_NOTIFY);
	ck_assert_uint_eq(ev->data, NVM_UNET_EV_WAKE | NVM_UNET_EV_NONEMPTY);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).events, 1);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).quiet, 4);
	/* drained: a quiet message alone is still nothing */
	k->rx_cons = 5;
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE | NVM_UNET_F_NOINTR, 0, 4,
			       m), NVM_UNET_ST_SENT);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, -1), 1);
}
END_TEST

static uint8_t send_gather(uint32_t n, const uint32_t *off,
			   const uint32_t *len, uint32_t total, uint8_t flags)
{
	struct nvm_unet_send_desc d = {
		.channel = 0, .flags = NVM_UNET_F_GATHER | flags, .len = total,
	};
	struct nvm_unet_gather g = { .count = n };

	for (uint32_t i = 0; i < n && i < NVM_UNET_GATHER_MAX; i++) {
		g.piece[i].offset = off[i];
		g.piece[i].len = len[i];
	}
	memcpy(d.data, &g, sizeof(g));
	return send_desc(&d);
}

/* Pieces of A's segment arrive as one contiguous message, byte for byte. */
START_TEST(gather_pieces)
{
	uint32_t off[4] = { 100, 5003, 9000, 30000 };
	uint32_t len[4] = { 500, 701, 299, 2596 };
	uint8_t want[NVM_UNET_MSG_MAX], got[NVM_UNET_MSG_MAX];
	uint32_t at = 0;

	for (uint32_t i = 0; i < 4; i++) {
		fill(sim_host(&ca, SEG + off[i]), len[i], 7 * i + 1);
		memcpy(want + at, sim_host(&ca, SEG + off[i]), len[i]);
		at += len[i];
	}
	/* three pieces (a diff reply), then all four (4096 bytes) */
	ck_assert_uint_eq(send_gather(3, off, len, 1500, 0), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(send_gather(4, off, len, 4096, 0), NVM_UNET_ST_SENT);
	for (uint32_t m = 0; m < 2; m++) {
		struct nvm_unet_rx_desc *d = rxd(m);
		uint32_t n = m ? 4096 : 1500;

		ck_assert_uint_eq(d->seq, m + 1);
		ck_assert_uint_eq(d->len, n);
		for (uint32_t b = 0; b < d->nbuf; b++) {
			uint32_t k = n - b * UF_BUF;

			memcpy(got + b * UF_BUF, sim_host(&cb, SEG + d->buf[b]),
			       k < UF_BUF ? k : UF_BUF);
		}
		ck_assert_mem_eq(got, want, n);
	}
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_UNET_GATHER], 2);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).send_errors, 0);
}
END_TEST

/* Every piece is checked; nothing of a refused gather leaves. */
START_TEST(gather_refused)
{
	uint32_t ok_off[2] = { 0, 4096 }, ok_len[2] = { 100, 100 };
	uint32_t end_off[2] = { 0, UF_SEG_SZ - 10 }, end_len[2] = { 100, 11 };
	uint32_t wrap_off[2] = { 0, 0xffffff00u }, wrap_len[2] = { 100, 0x200 };
	uint32_t zero_len[2] = { 100, 0 }, big_len[2] = { 100, 8192 };
	uint32_t five_off[5] = { 0 }, five_len[5] = { 1, 1, 1, 1, 1 };
	uint32_t rx = cb.fw.counters[FW_CNT_UNET_RX];

	ck_assert_uint_eq(send_gather(0, ok_off, ok_len, 0, 0),
			  NVM_UNET_ST_BAD_LEN);
	ck_assert_uint_eq(send_gather(0, ok_off, ok_len, 200, 0),
			  NVM_UNET_ST_BAD_LEN);
	ck_assert_uint_eq(send_gather(5, five_off, five_len, 5, 0),
			  NVM_UNET_ST_BAD_LEN);
	ck_assert_uint_eq(send_gather(2, end_off, end_len, 111, 0),
			  NVM_UNET_ST_BAD_RANGE);
	ck_assert_uint_eq(send_gather(2, wrap_off, wrap_len, 0x264, 0),
			  NVM_UNET_ST_BAD_RANGE);
	ck_assert_uint_eq(send_gather(2, ok_off, zero_len, 100, 0),
			  NVM_UNET_ST_BAD_LEN);
	ck_assert_uint_eq(send_gather(2, ok_off, big_len, 4096, 0),
			  NVM_UNET_ST_BAD_LEN);
	ck_assert_uint_eq(send_gather(2, ok_off, ok_len, 199, 0),
			  NVM_UNET_ST_BAD_LEN);	/* the sum is not len */
	ck_assert_uint_eq(send_gather(2, ok_off, ok_len, 200,
				      NVM_UNET_F_INLINE),
			  NVM_UNET_ST_BAD_FLAGS);
	ck_assert_uint_eq(send(0, 0x80, 0, 8, NULL), NVM_UNET_ST_BAD_FLAGS);
	ck_assert_uint_eq(send(0, NVM_UNET_F_HIT, 0, 8, NULL),
			  NVM_UNET_ST_BAD_FLAGS);	/* receive-only */
	ck_assert_uint_eq(uf_status(&ca, PORT_A).send_errors, 11);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_UNET_GATHER], 0);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_RX], rx);
	/* the exact end of the segment is fine */
	end_len[1] = 10;
	ck_assert_uint_eq(send_gather(2, end_off, end_len, 110, 0),
			  NVM_UNET_ST_SENT);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_RX], rx + 1);
}
END_TEST

static struct nvm_unet_reply_ent *rent(uint32_t num)
{
	return (struct nvm_unet_reply_ent *)(uf_region(&cb, PORT_B) +
		NVM_UNET_REPLYTAB + num * sizeof(struct nvm_unet_reply_ent));
}

static void arm_reply(uint32_t num, uint32_t off, uint32_t len, uint16_t ch)
{
	struct nvm_unet_reply_ent *r = rent(num);

	r->offset = off;
	r->len = len;
	r->channel = ch;
	r->armed = 1;
}

/* A's reply with number @num: @len bytes from A's segment at 8192. */
static uint8_t send_reply(uint32_t num, uint32_t len, uint32_t seed)
{
	struct nvm_unet_send_desc d = {
		.channel = 0, .flags = NVM_UNET_F_REPLY, .len = len,
		.offset = 8192, .reply = (uint16_t)num,
	};

	fill(sim_host(&ca, SEG + 8192), len, seed);
	return send_desc(&d);
}

/* A fitting reply lands in the named buffer: no free buffer, entry used. */
START_TEST(reply_hit)
{
	struct nvm_unet_status st0 = uf_status(&cb, PORT_B), st;
	struct nvm_unet_rx_desc *d = rxd(0);

	arm_reply(7, 20000, 4096, 5);
	ck_assert_uint_eq(send_reply(7, 4096, 3), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(d->seq, 1);
	ck_assert_uint_eq(d->flags, NVM_UNET_F_REPLY | NVM_UNET_F_HIT);
	ck_assert_uint_eq(d->reply, 7);
	ck_assert_uint_eq(d->len, 4096);
	ck_assert_uint_eq(d->nbuf, 0);
	ck_assert_uint_eq(d->buf[0], 20000);
	ck_assert_mem_eq(sim_host(&cb, SEG + 20000), sim_host(&ca, SEG + 8192),
			 4096);
	st = uf_status(&cb, PORT_B);
	ck_assert_uint_eq(st.free_cons, st0.free_cons);
	ck_assert_uint_eq(st.reply_hits, 1);
	ck_assert_uint_eq(st.reply_misses, 0);
	ck_assert_uint_eq(rent(7)->armed, 0);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_REPLY_HIT], 1);
	/* a small reply lands in its buffer too (not in the descriptor) */
	arm_reply(8, 30000, 64, 5);
	ck_assert_uint_eq(send_reply(8, 40, 4), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(rxd(1)->flags, NVM_UNET_F_REPLY | NVM_UNET_F_HIT);
	ck_assert_uint_eq(rxd(1)->len, 40);
	ck_assert_mem_eq(sim_host(&cb, SEG + 30000), sim_host(&ca, SEG + 8192),
			 40);
	/* a quiet reply is quiet and a hit */
	arm_reply(255, 40000, 4096, 5);
	{
		struct nvm_unet_send_desc q = {
			.channel = 0, .len = 3000, .offset = 8192, .reply = 255,
			.flags = NVM_UNET_F_REPLY | NVM_UNET_F_NOINTR,
		};

		ck_assert_uint_eq(send_desc(&q), NVM_UNET_ST_SENT);
	}
	ck_assert_uint_eq(rxd(2)->flags, NVM_UNET_F_REPLY | NVM_UNET_F_HIT |
			  NVM_UNET_F_NOINTR);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).reply_hits, 3);
	/* a reply number past the table is refused at the sender */
	ck_assert_uint_eq(send_reply(NVM_UNET_REPLY_SLOTS, 8, 1),
			  NVM_UNET_ST_BAD_FLAGS);
}
END_TEST

/* Check message @n went the free-buffer way as a reply numbered @num. */
static void check_miss(uint32_t n, uint32_t num, uint32_t len)
{
	struct nvm_unet_rx_desc *d = rxd(n);

	ck_assert_uint_eq(d->seq, n + 1);
	ck_assert_uint_eq(d->flags, len <= NVM_UNET_INLINE_MAX ?
			  NVM_UNET_F_REPLY | NVM_UNET_F_INLINE :
			  NVM_UNET_F_REPLY);
	ck_assert_uint_eq(d->reply, num);
	ck_assert_uint_eq(d->len, len);
	if (len <= NVM_UNET_INLINE_MAX) {
		ck_assert_mem_eq(d->data, sim_host(&ca, SEG + 8192), len);
		return;
	}
	for (uint32_t b = 0; b < d->nbuf; b++) {
		uint32_t k = len - b * UF_BUF;

		ck_assert_mem_eq(sim_host(&cb, SEG + d->buf[b]),
				 sim_host(&ca, SEG + 8192 + b * UF_BUF),
				 k < UF_BUF ? k : UF_BUF);
		uf_push_free(&cb, PORT_B, d->buf[b]);
	}
}

START_TEST(reply_miss_stale_oversize)
{
	uint8_t before[64];

	memcpy(before, sim_host(&cb, SEG + 20000), sizeof(before));
	/* no entry armed */
	ck_assert_uint_eq(send_reply(9, 2000, 1), NVM_UNET_ST_SENT);
	check_miss(0, 9, 2000);
	/* stale: a second reply for an entry already used */
	arm_reply(7, 20000, 4096, 5);
	ck_assert_uint_eq(send_reply(7, 1000, 2), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(rxd(1)->flags, NVM_UNET_F_REPLY | NVM_UNET_F_HIT);
	memcpy(before, sim_host(&cb, SEG + 20000), sizeof(before));
	ck_assert_uint_eq(send_reply(7, 1000, 3), NVM_UNET_ST_SENT);
	check_miss(2, 7, 1000);
	ck_assert_mem_eq(sim_host(&cb, SEG + 20000), before, sizeof(before));
	/* oversize: the free-buffer way, and the entry is used up */
	arm_reply(3, 20000, 1024, 5);
	ck_assert_uint_eq(send_reply(3, 1025, 4), NVM_UNET_ST_SENT);
	check_miss(3, 3, 1025);
	ck_assert_uint_eq(rent(3)->armed, 0);
	ck_assert_mem_eq(sim_host(&cb, SEG + 20000), before, sizeof(before));
	/* another channel's entry: a miss, and it stays armed */
	arm_reply(4, 20000, 4096, 6);
	ck_assert_uint_eq(send_reply(4, 50, 5), NVM_UNET_ST_SENT);
	check_miss(4, 4, 50);
	ck_assert_uint_eq(rent(4)->armed, 1);
	/* an entry outside the segment (or wrapping): a miss */
	arm_reply(5, UF_SEG_SZ - 100, 4096, 5);
	ck_assert_uint_eq(send_reply(5, 50, 6), NVM_UNET_ST_SENT);
	check_miss(5, 5, 50);
	arm_reply(6, 0xfffff000u, 0x2000, 5);
	ck_assert_uint_eq(send_reply(6, 50, 7), NVM_UNET_ST_SENT);
	check_miss(6, 6, 50);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).reply_hits, 1);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).reply_misses, 6);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_REPLY_MISS], 6);
	ck_assert_mem_eq(sim_host(&cb, SEG + 20000), before, sizeof(before));
}
END_TEST

/* A diverted reply keeps its flags and number and leaves the table alone. */
START_TEST(reply_diverted)
{
	uint8_t m[8] = "filler!";
	struct nvm_unet_send_desc q = {
		.channel = 0, .len = 2000, .offset = 8192, .reply = 9,
		.flags = NVM_UNET_F_REPLY | NVM_UNET_F_NOINTR,
	};

	ck_assert_uint_eq(uf_divert_ring(&hb, DIV, 8), NVM_ST_OK);
	for (uint32_t i = 0; i < UF_RXQ_LEN; i++)
		ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 8, m),
				  NVM_UNET_ST_SENT);
	arm_reply(9, 20000, 4096, 5);
	fill(sim_host(&ca, SEG + 8192), 2000, 77);
	ck_assert_uint_eq(send_desc(&q), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).diverted, 1);
	ck_assert_uint_eq(drec(0)->seq, 1);
	ck_assert_uint_eq(drec(0)->len, 2000);
	ck_assert_uint_eq(drec(0)->dsm, NVM_UNET_F_REPLY | NVM_UNET_F_NOINTR |
			  9u << 16);
	ck_assert_mem_eq(drec(0)->data, sim_host(&ca, SEG + 8192), 2000);
	ck_assert_uint_eq(rent(9)->armed, 1);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).reply_hits, 0);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).reply_misses, 0);
}
END_TEST

/* ---- pageable segments (FUGU's "pages not resident") ---- */

#define PORT_P	4
#define TAG_P	0x88
#define PVA	0x7f1200000000ull	/* B's pageable segment: a user address */
#define PRXQ	(SIM_HOST_BASE + (10u << 20))	/* ... its receive queue */

static uint32_t open_pageable(uint64_t seg)
{
	struct nvm_k_unet_open k = {
		.seg = seg, .rxq = PRXQ, .seg_size = UF_SEG_SZ,
		.buf_size = UF_BUF, .rxq_len = UF_RXQ_LEN, .port = PORT_P,
		.flags = NVM_UNET_KO_PAGEABLE,
	};

	memset(sim_host(&cb, PRXQ), 0,
	       UF_RXQ_LEN * sizeof(struct nvm_unet_rx_desc));
	return uf_kop(&hb, NVM_KOP_UNET_OPEN, &k, sizeof(k));
}

/* Whether B's process memory at @va holds @data. */
static bool seg_eq(uint64_t va, const uint8_t *data, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (*sh_byte(&hb, PORT_P, va + i) != data[i])
			return false;
	return true;
}

/* Post a send of [off, off + len) of P's segment on B; its status. */
static uint8_t send_p(uint32_t *count, uint32_t off, uint32_t len)
{
	struct nvm_unet_send_desc d = { .channel = 0, .len = len, .offset = off };

	return uf_send(&cb, PORT_P, count, &d);
}

static void restart(uint64_t page)
{
	ck_assert_uint_eq(uf_kop_args(&hb, NVM_KOP_RESTART, 0, PORT_P,
				      (uint32_t)page, (uint32_t)(page >> 32)),
			  NVM_ST_OK);
}

START_TEST(pageable_segment)
{
	static uint8_t m[3000];
	const uint64_t buf_page = PVA + UF_SEG_SZ - NVM_PAGE_SIZE;
	const struct nvm_event *ev;
	struct nvm_unet_rx_desc *d;
	uint32_t sent_p = 0;

	ck_assert_uint_eq(uf_divert_ring(&hb, DIV, 8), NVM_ST_OK);
	/* the segment must start on a page */
	ck_assert_uint_ne(open_pageable(PVA + 8), NVM_ST_OK);
	ck_assert_uint_eq(open_pageable(PVA), NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&ha, PORT_A, 1, 1, PORT_P, TAG_P, 1),
			  NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&hb, PORT_P, 0, 0, PORT_A, TAG_P, 1),
			  NVM_ST_OK);
	sh_alloc(&hb, PORT_P, PVA, UF_SEG_SZ, 0, true);
	for (uint32_t i = 0; i < 8; i++)
		uf_push_free(&cb, PORT_P, UF_SEG_SZ - (i + 1) * UF_BUF);

	/* its buffers' page swapped out: diverted whole, the page asked for */
	ck_assert(sh_page_out(&hb, PORT_P, buf_page));
	fill(m, 3000, 41);
	memcpy(sim_host(&ca, SEG), m, 3000);
	ck_assert_uint_eq(send(1, 0, 0, 3000, NULL), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&cb, PORT_P).rx_not_resident, 1);
	ck_assert_uint_eq(uf_status(&cb, PORT_P).diverted, 1);
	ck_assert_uint_eq(uf_status(&cb, PORT_P).rx_prod, 0);
	ck_assert_uint_eq(uf_status(&cb, PORT_P).free_cons, 0);
	ck_assert_uint_eq(drec(0)->msgno, 0);
	ck_assert_uint_eq(drec(0)->len, 3000);
	ck_assert_mem_eq(drec(0)->data, m, 3000);
	ev = sim_last_event(&cb, NVM_EV_PAGE_MISS);
	ck_assert_ptr_nonnull(ev);
	ck_assert_uint_eq(ev->endpoint, PORT_P);
	ck_assert_uint_eq(ev->arg & ~(uint64_t)4095, buf_page);
	ck_assert_uint_ge(hb.misses, 1);	/* and the "kernel" mapped it */

	/* handed over: direct again, through the new translation */
	ck_assert_uint_eq(uf_kop_args(&hb, NVM_KOP_UNET_DIVERT_DONE,
				      0, 0, 1, 0), NVM_ST_OK);
	ck_assert_uint_eq(uf_kop_args(&hb, NVM_KOP_UNET_DIRECT,
				      0, PORT_P, 0, 0), NVM_ST_OK);
	fill(m, 3000, 42);
	memcpy(sim_host(&ca, SEG), m, 3000);
	ck_assert_uint_eq(send(1, 0, 0, 3000, NULL), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&cb, PORT_P).rx_prod, 1);
	d = (struct nvm_unet_rx_desc *)sim_host(&cb, PRXQ);
	ck_assert_uint_eq(d->msgno, 1);
	ck_assert_uint_eq(d->nbuf, 3);
	for (uint32_t b = 0; b < 3; b++)
		ck_assert(seg_eq(PVA + d->buf[b], m + b * UF_BUF,
				 b < 2 ? UF_BUF : 3000 - 2 * UF_BUF));
	/* the delivery let its page go: the kernel can take it again */
	ck_assert(sh_page_out(&hb, PORT_P, buf_page));
	ck_assert(sh_page_in(&hb, PORT_P, buf_page));

	/* a send from a swapped-out page waits for the kernel ... */
	uf_push_free(&ca, PORT_A, 0);
	uf_push_free(&ca, PORT_A, UF_BUF);
	fill(m, 2000, 43);
	memcpy(sh_byte(&hb, PORT_P, PVA), m, 2000);
	ck_assert(sh_page_out(&hb, PORT_P, PVA));
	hb.auto_fault = 0;
	ck_assert_uint_eq(send_p(&sent_p, 0, 2000), NVM_UNET_ST_PENDING);
	ck_assert_uint_eq(uf_status(&cb, PORT_P).tx_misses, 1);
	ck_assert_uint_eq(cb.fw.unet.ep[PORT_P].tx_state, FW_UNET_TX_PAGE_WAIT);
	ev = sim_last_event(&cb, NVM_EV_PAGE_MISS);
	ck_assert_uint_eq(ev->arg, PVA);
	/* ... not for another page's restart ... */
	restart(PVA + NVM_PAGE_SIZE);
	ck_assert_uint_eq(uf_status(&cb, PORT_P).send_consumed, 0);
	ck_assert_uint_eq(cb.fw.unet.ep[PORT_P].tx_state, FW_UNET_TX_PAGE_WAIT);
	/* ... and goes once its own page is mapped */
	ck_assert(sh_page_in(&hb, PORT_P, PVA));
	restart(PVA);
	ck_assert_uint_eq(uf_status(&cb, PORT_P).send_consumed, 1);
	ck_assert_uint_eq(uf_status(&cb, PORT_P).send_errors, 0);
	/* page_wait -> retry -> ready */
	ck_assert_uint_eq(cb.fw.unet.ep[PORT_P].tx_state, FW_UNET_TX_READY);
	ck_assert_uint_eq(cb.traces[FW_TR_fw_unet_tx_state], 3);
	d = (struct nvm_unet_rx_desc *)sim_host(&ca, AREA);
	ck_assert_uint_eq(d->channel, 1);
	ck_assert_uint_eq(d->len, 2000);
	ck_assert_mem_eq(sim_host(&ca, SEG + d->buf[0]), m, UF_BUF);
	ck_assert_mem_eq(sim_host(&ca, SEG + d->buf[1]), m + UF_BUF,
			 2000 - UF_BUF);

	/* the kernel could not map it: the retry fails the send, FAULT */
	ck_assert(sh_page_out(&hb, PORT_P, PVA));
	ck_assert_uint_eq(send_p(&sent_p, 0, 100), NVM_UNET_ST_PENDING);
	restart(PVA);
	ck_assert_uint_eq(uf_status(&cb, PORT_P).send_consumed, 2);
	ck_assert_uint_eq(uf_status(&cb, PORT_P).send_errors, 1);
	ck_assert_uint_eq(uf_region(&cb, PORT_P)[NVM_UNET_SENDQ +
		sizeof(struct nvm_unet_send_desc) +
		offsetof(struct nvm_unet_send_desc, status)],
		NVM_UNET_ST_FAULT);
	ck_assert_uint_eq(uf_status(&cb, PORT_P).tx_misses, 2);
	ck_assert_uint_eq(cb.fw.unet.ep[PORT_P].tx_state, FW_UNET_TX_READY);
	ck_assert_uint_eq(cb.traces[FW_TR_fw_unet_tx_state], 6);
}
END_TEST

/* FUGU's "process not running": the kernel's desched word diverts. */
START_TEST(desched_diverts)
{
	uint8_t m[40];

	ck_assert_uint_eq(uf_divert_ring(&hb, DIV, 8), NVM_ST_OK);
	uf_ctl(&cb, PORT_B)->desched = 1;
	for (uint32_t i = 0; i < 3; i++) {
		fill(m, 40, i);
		ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 40, m),
				  NVM_UNET_ST_SENT);
		ck_assert_mem_eq(drec(i)->data, m, 40);
		ck_assert_uint_eq(drec(i)->msgno, i);
	}
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_not_running, 1);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).div_order, 2);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, 0);
	/* running again and handed over: direct */
	uf_ctl(&cb, PORT_B)->desched = 0;
	ck_assert_uint_eq(uf_kop_args(&hb, NVM_KOP_UNET_DIVERT_DONE,
				      0, 0, 3, 0), NVM_ST_OK);
	ck_assert_uint_eq(uf_kop_args(&hb, NVM_KOP_UNET_DIRECT,
				      0, PORT_B, 0, 0), NVM_ST_OK);
	fill(m, 40, 9);
	ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 40, m), NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, 1);
	ck_assert_uint_eq(rxd(0)->msgno, 3);
	ck_assert_mem_eq(rxd(0)->data, m, 40);
}
END_TEST

/* ---- overflow control: HOLD, RELEASE, expiry (fw_unet_flow.c) ---- */

/*
 * While B holds, its refresh timer runs for ever, so sim_settle() (which
 * lets time pass whenever the chips are quiet) would not return: these
 * run the chips a bounded number of passes, and ticks() passes IT2 ticks
 * by hand.
 */
static uint32_t kcmd_run(struct sim_host *h, struct nvm_cmd *c)
{
	uint32_t before = sh_shadow(h, NVM_EP_KERNEL).errors;

	sh_cmd(h, NVM_EP_KERNEL, c);
	sim_run(&ca, &cb, 400);
	return uf_kstatus(h, before);
}

static uint32_t kop_run(struct sim_host *h, uint8_t op, uint16_t port)
{
	struct nvm_cmd c = { .op = op, .dst_port = port };

	return kcmd_run(h, &c);
}

static uint8_t *post_a(uint16_t ch, const void *data, uint32_t len)
{
	struct nvm_unet_send_desc d = {
		.channel = ch, .flags = NVM_UNET_F_INLINE, .len = len,
	};
	uint8_t *st;

	memcpy(d.data, data, len);
	st = uf_post(&ca, PORT_A, &sent_a, &d);
	sim_run(&ca, &cb, 400);
	return st;
}

static void ticks(int n)
{
	for (int i = 0; i < n; i++) {
		ca.isr |= LANAI_ISR_TIME2;
		cb.isr |= LANAI_ISR_TIME2;
		sim_run(&ca, &cb, 50);
	}
}

/* B diverting: the queue full, two messages in its divert ring. */
static void fill_and_divert(void)
{
	uint8_t m[40];

	ck_assert_uint_eq(uf_divert_ring(&hb, DIV, 8), NVM_ST_OK);
	for (uint32_t n = 0; n < UF_RXQ_LEN + 2; n++) {
		fill(m, 40, n);
		ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 40, m),
				  NVM_UNET_ST_SENT);
	}
	ck_assert_uint_eq(uf_status(&cb, PORT_B).diverted, 2);
}

START_TEST(hold_then_release)
{
	uint8_t m[40], *st;

	/* not diverting: a HOLD means nothing (only DIRECT releases one) */
	ck_assert_uint_eq(kop_run(&hb, NVM_KOP_UNET_HOLD, PORT_B), NVM_ST_OK);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).hold_on, 0);
	ck_assert_uint_ne(kop_run(&hb, NVM_KOP_UNET_HOLD, 9), NVM_ST_OK);
	ck_assert_uint_eq(cb.fw.unet.ep[PORT_B].state, FW_UNET_EP_DIRECT);
	fill_and_divert();
	ck_assert_uint_eq(cb.fw.unet.ep[PORT_B].state, FW_UNET_EP_DIVERT);
	ck_assert_uint_eq(kop_run(&hb, NVM_KOP_UNET_HOLD, PORT_B), NVM_ST_OK);
	ck_assert_uint_eq(cb.fw.unet.ep[PORT_B].state, FW_UNET_EP_HELD);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).hold_on, 1);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_HOLD_TX], 1);
	ck_assert_uint_eq(ca.fw.unet.ep[PORT_A].ch[0].hold_left,
			  FW_UNET_HOLD_TICKS);
	/* A's next send waits in its queue, counted once */
	fill(m, 40, 100);
	st = post_a(0, m, 40);
	ck_assert_uint_eq(*st, NVM_UNET_ST_PENDING);
	st = post_a(0, m, 40);
	ck_assert_uint_eq(*st, NVM_UNET_ST_PENDING);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).tx_held_now, 1);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).tx_held, 1);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_UNET_HELD], 1);
	/* refreshed: held far longer than a hold lasts unrefreshed */
	ticks(3 * FW_UNET_HOLD_TICKS);
	ck_assert_uint_eq(*st, NVM_UNET_ST_PENDING);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).hold_expired, 0);
	ck_assert_uint_ge(cb.fw.counters[FW_CNT_UNET_HOLD_TX], 1 + 10);
	/* the process drains, the kernel hands the records on: DIRECT
	 * releases A, whose two sends go direct with the next msgnos */
	uf_ctl(&cb, PORT_B)->rx_cons = UF_RXQ_LEN;
	{
		struct nvm_cmd c = { .op = NVM_KOP_UNET_DIVERT_DONE };

		c.arg[0] = 2;
		sh_cmd(&hb, NVM_EP_KERNEL, &c);
		sim_run(&ca, &cb, 400);
	}
	ck_assert_uint_eq(kop_run(&hb, NVM_KOP_UNET_DIRECT, PORT_B), NVM_ST_OK);
	sh_settle();	/* nothing holds: time may pass again */
	ck_assert_uint_eq(cb.fw.unet.ep[PORT_B].state, FW_UNET_EP_DIRECT);
	/* traced: direct, divert, held, divert (the hold ends), direct */
	ck_assert_uint_eq(cb.traces[FW_TR_fw_unet_ep_state], 5);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).hold_off, 1);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_RELEASE_TX], 1);
	ck_assert_uint_eq(*st, NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).tx_held_now, 0);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).hold_expired, 0);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, UF_RXQ_LEN + 2);
	ck_assert_uint_eq(rxd(UF_RXQ_LEN + 1)->msgno, UF_RXQ_LEN + 3);
	ck_assert_mem_eq(rxd(UF_RXQ_LEN + 1)->data, m, 40);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).diverted, 2);
}
END_TEST

/* The RELEASE (and every refresh) lost: the hold runs out on its own. */
START_TEST(hold_expires)
{
	uint8_t m[40], *st;

	fill_and_divert();
	ck_assert_uint_eq(kop_run(&hb, NVM_KOP_UNET_HOLD, PORT_B), NVM_ST_OK);
	fill(m, 40, 200);
	st = post_a(0, m, 40);
	ck_assert_uint_eq(*st, NVM_UNET_ST_PENDING);
	cb.drop_pct = 100;	/* every frame B sends from now on is lost */
	ticks(FW_UNET_HOLD_TICKS - 1);
	ck_assert_uint_eq(*st, NVM_UNET_ST_PENDING);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).hold_expired, 0);
	ticks(1);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).hold_expired, 1);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_UNET_HOLD_EXPIRED], 1);
	ck_assert_uint_eq(*st, NVM_UNET_ST_SENT);
	/* B still holds and refreshes: once its frames get through again,
	 * A is held again (a lost HOLD is repeated too) */
	cb.drop_pct = 0;
	ticks(FW_UNET_REFRESH_TICKS);
	ck_assert_uint_ne(ca.fw.unet.ep[PORT_A].ch[0].hold_left, 0);
	/* B closes: RELEASE at once */
	ck_assert_uint_eq(kop_run(&hb, NVM_KOP_UNET_CLOSE, PORT_B), NVM_ST_OK);
	ck_assert_uint_eq(ca.fw.unet.ep[PORT_A].ch[0].hold_left, 0);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).hold_expired, 1);
}
END_TEST

/*
 * A hold only reaches the channels whose far end sent it: A's endpoint C
 * talks to B's port 9, so B's port 3 cannot hold it, whatever it sends.
 */
#define PORT_C	4
#define TAG2	0x99
START_TEST(hostile_hold)
{
	uint8_t m[40];
	uint32_t nc;

	ck_assert_uint_eq(uf_open(&ha, PORT_C, AREA), NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&ha, PORT_C, 0, 1, 9, TAG2, 1), NVM_ST_OK);
	/* B's port 3 claims a channel to C with C's tag */
	ck_assert_uint_eq(uf_chan(&hb, PORT_B, 6, 0, PORT_C, TAG2, 1),
			  NVM_ST_OK);
	fill_and_divert();
	nc = ca.fw.counters[FW_CNT_UNET_NO_CHANNEL];
	ck_assert_uint_eq(kop_run(&hb, NVM_KOP_UNET_HOLD, PORT_B), NVM_ST_OK);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_HOLD_TX], 2);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_UNET_NO_CHANNEL], nc + 1);
	ck_assert_uint_eq(ca.fw.unet.ep[PORT_C].ch[0].hold_left, 0);
	ck_assert_uint_ne(ca.fw.unet.ep[PORT_A].ch[0].hold_left, 0);
	/* a hold costs the sender one word per channel, however many come */
	ticks(5 * FW_UNET_REFRESH_TICKS);
	ck_assert_uint_eq(ca.fw.unet.ep[PORT_C].ch[0].hold_left, 0);
	ck_assert_uint_le(ca.fw.unet.ep[PORT_A].ch[0].hold_left,
			  FW_UNET_HOLD_TICKS);
	fill(m, 40, 300);
	ck_assert_uint_eq(*post_a(0, m, 40), NVM_UNET_ST_PENDING);
}
END_TEST

/*
 * A HOLD must not wait behind data: B sends A a raw frame, which waits at
 * the head of A's wire ring (A's host posted no raw buffer); the HOLD
 * behind it is taken all the same, and the raw frame still arrives whole
 * once A posts a buffer.
 */
START_TEST(hold_passes_a_waiting_frame)
{
	const struct nvm_sram_layout *la = sim_layout(&ca), *lb = sim_layout(&cb);
	uint64_t src = SIM_HOST_BASE + (13u << 20), dst = src;
	struct nvm_raw_desc *d;
	uint8_t want[64];

	fill(want, sizeof(want), 77);
	memcpy(sim_host(&cb, src), want, sizeof(want));
	d = (struct nvm_raw_desc *)(cb.chip.sram + lb->raw_tx_ring);
	memset(d, 0, sizeof(*d));
	d->host_addr = src;
	d->len = sizeof(want);
	d->flags = NVM_RAW_OWN;
	sim_doorbell(&cb, 0, NVM_DB_RAW_TX);
	sim_run(&ca, &cb, 400);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_RAW_TX], 1);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_RAW_RX], 0);

	fill_and_divert();
	ck_assert_uint_eq(kop_run(&hb, NVM_KOP_UNET_HOLD, PORT_B), NVM_ST_OK);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_HOLD_TX], 1);
	ck_assert_uint_eq(ca.fw.unet.ep[PORT_A].ch[0].hold_left,
			  FW_UNET_HOLD_TICKS);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_RAW_RX], 0);

	d = (struct nvm_raw_desc *)(ca.chip.sram + la->raw_rx_ring);
	memset(d, 0, sizeof(*d));
	d->host_addr = dst;
	d->len = la->raw_max_payload;
	d->flags = NVM_RAW_OWN;
	sim_doorbell(&ca, 0, NVM_DB_RAW_RX);
	sim_run(&ca, &cb, 400);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_RAW_RX], 1);
	ck_assert_mem_eq(sim_host(&ca, dst), want, sizeof(want));
	/* the slot taken out of order was emptied when the head passed it */
	for (uint32_t i = 0; i < la->wire_rx_slots; i++)
		ck_assert_uint_ne(fw_sram_rd32(&ca.chip, la->wire_rx_ring +
					       i * la->wire_rx_slot_size),
				  FW_RX_SLOT_TAKEN);
}
END_TEST

/* Without a divert ring U-Net drops; the sender hears of it. */
START_TEST(drop_told_to_sender)
{
	uint8_t m[4] = "drop";

	for (uint32_t i = 0; i < UF_RXQ_LEN + 3; i++)
		ck_assert_uint_eq(send(0, NVM_UNET_F_INLINE, 0, 4, m),
				  NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).dropped, 3);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).peer_dropped, 3);
}
END_TEST


/* ---- overflow control for kernel-emulated endpoints (virtual ports) ---- */

/* A kernel command with a struct argument, run without letting time pass. */
static uint32_t kop_norun(struct sim_host *h, uint8_t op, const void *arg,
			  size_t len)
{
	struct nvm_cmd c = { .op = op };

	memcpy(c.inline_data, arg, len);
	return kcmd_run(h, &c);
}

#define EV_CTL(f)	(NVM_UNET_EV_CTL | (uint32_t)(f) << 8)

/*
 * A's kernel emulates virtual port 20; B's kernel emulates 30, and B's
 * endpoint talks to 20 on channel 6 (tag 0x99).  Control frames for 20
 * reach A's kernel as events, taken at once, with the source node, port
 * and tag the kernel matches its channel with; without a divert ring A
 * has no emulated endpoint, and they match nothing.
 */
START_TEST(ctl_to_virtual_port)
{
	struct nvm_k_unet_kctl k = {
		.node = 0, .dst_port = 20, .src_port = 30,
		.flags = NVM_UNET_HF_HOLD, .tag = 0x99,
	};
	const struct nvm_event *ev;
	uint32_t nc = ca.fw.counters[FW_CNT_UNET_NO_CHANNEL];

	ck_assert_uint_eq(uf_kop(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_HOLD_TX], 1);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_UNET_NO_CHANNEL], nc + 1);
	ck_assert_int_eq(sim_count_events(&ca, NVM_EV_NOTIFY,
					  EV_CTL(NVM_UNET_HF_HOLD)), 0);
	ck_assert_uint_eq(uf_divert_ring(&ha, DIV, 8), NVM_ST_OK);
	ck_assert_uint_eq(uf_kop(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	ck_assert_int_eq(sim_count_events(&ca, NVM_EV_NOTIFY,
					  EV_CTL(NVM_UNET_HF_HOLD)), 1);
	ev = sim_last_event(&ca, NVM_EV_NOTIFY);
	ck_assert_uint_eq(ev->endpoint, 20);
	ck_assert_uint_eq(ev->arg, 0x99 | 1ull << 32 | 30ull << 48);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_UNET_CTL_KERNEL], 1);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_UNET_NO_CHANNEL], nc + 1);
	/* DROPPED carries its count, RELEASE none */
	k.flags = NVM_UNET_HF_DROPPED;
	k.count = 7;
	ck_assert_uint_eq(uf_kop(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	ck_assert_uint_eq(sim_last_event(&ca, NVM_EV_NOTIFY)->data,
			  EV_CTL(NVM_UNET_HF_DROPPED) | 7u << 16);
	k.flags = NVM_UNET_HF_RELEASE;
	k.count = 0;
	ck_assert_uint_eq(uf_kop(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	ck_assert_uint_eq(sim_last_event(&ca, NVM_EV_NOTIFY)->data,
			  EV_CTL(NVM_UNET_HF_RELEASE));
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_RELEASE_TX], 1);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_UNET_CTL_KERNEL], 3);
	/* a NIC endpoint's hold reaches a virtual port the same way, and
	 * its refresh too */
	ck_assert_uint_eq(uf_chan(&hb, PORT_B, 6, 0, 20, 0x99, 1), NVM_ST_OK);
	fill_and_divert();
	ck_assert_uint_eq(kop_run(&hb, NVM_KOP_UNET_HOLD, PORT_B), NVM_ST_OK);
	ck_assert_int_eq(sim_count_events(&ca, NVM_EV_NOTIFY,
					  EV_CTL(NVM_UNET_HF_HOLD)), 2);
	ev = sim_last_event(&ca, NVM_EV_NOTIFY);
	ck_assert_uint_eq(ev->endpoint, 20);
	ck_assert_uint_eq(ev->arg, 0x99 | 1ull << 32 | (uint64_t)PORT_B << 48);
	ck_assert_uint_ne(ca.fw.unet.ep[PORT_A].ch[0].hold_left, 0);
	ticks(FW_UNET_REFRESH_TICKS);
	ck_assert_int_eq(sim_count_events(&ca, NVM_EV_NOTIFY,
					  EV_CTL(NVM_UNET_HF_HOLD)), 3);
}
END_TEST

/*
 * B's kernel emulates virtual port 30, which receives from A's endpoint
 * on A's channel 1 (tag 0x55): its HOLD (NVM_KOP_UNET_KCTL) holds that
 * channel exactly as a NIC endpoint's would, RELEASE lets the send go,
 * and an unrefreshed hold lapses after FW_UNET_HOLD_TICKS.  Only virtual
 * ports may be the source, with one control flag.
 */
START_TEST(kctl_holds_a_sender)
{
	struct nvm_k_unet_kctl k = {
		.node = 0, .dst_port = PORT_A, .src_port = 30,
		.flags = NVM_UNET_HF_HOLD, .tag = 0x55,
	};
	uint8_t m[40], *st;
	uint32_t nc = ca.fw.counters[FW_CNT_UNET_NO_CHANNEL];

	ck_assert_uint_eq(uf_chan(&ha, PORT_A, 1, 1, 30, 0x55, 1), NVM_ST_OK);
	ck_assert_uint_eq(kop_norun(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_HOLD_TX], 1);
	ck_assert_uint_eq(ca.fw.unet.ep[PORT_A].ch[1].hold_left,
			  FW_UNET_HOLD_TICKS);
	ck_assert_uint_eq(ca.fw.unet.ep[PORT_A].ch[0].hold_left, 0);
	fill(m, 40, 500);
	st = post_a(1, m, 40);
	ck_assert_uint_eq(*st, NVM_UNET_ST_PENDING);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).tx_held_now, 1);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).tx_held, 1);
	k.flags = NVM_UNET_HF_RELEASE;
	ck_assert_uint_eq(kop_norun(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	ck_assert_uint_eq(ca.fw.unet.ep[PORT_A].ch[1].hold_left, 0);
	ck_assert_uint_eq(*st, NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).tx_held_now, 0);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).hold_expired, 0);
	/* not refreshed: it lapses */
	k.flags = NVM_UNET_HF_HOLD;
	ck_assert_uint_eq(kop_norun(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	st = post_a(1, m, 40);
	ck_assert_uint_eq(*st, NVM_UNET_ST_PENDING);
	ticks(FW_UNET_HOLD_TICKS - 1);
	ck_assert_uint_eq(*st, NVM_UNET_ST_PENDING);
	ticks(1);
	ck_assert_uint_eq(*st, NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).hold_expired, 1);
	ck_assert_uint_eq(uf_status(&ca, PORT_A).tx_held, 2);
	/* another tag, or another source port: not A's channel to 30 */
	k.tag = 0x56;
	ck_assert_uint_eq(kop_norun(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	k.tag = 0x55;
	k.src_port = 31;
	ck_assert_uint_eq(kop_norun(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	ck_assert_uint_eq(ca.fw.unet.ep[PORT_A].ch[1].hold_left, 0);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_UNET_NO_CHANNEL], nc + 2);
	/* refused: a real port as the source, no flag or two, a count
	 * without DROPPED, port 0 or a node out of range, reserved bits */
	k.src_port = PORT_B;
	ck_assert_uint_ne(kop_norun(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	k.src_port = NVM_UNET_VPORT_MAX;
	ck_assert_uint_ne(kop_norun(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	k.src_port = 30;
	k.flags = 0;
	ck_assert_uint_ne(kop_norun(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	k.flags = NVM_UNET_HF_HOLD | NVM_UNET_HF_RELEASE;
	ck_assert_uint_ne(kop_norun(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	k.flags = NVM_UNET_HF_NOINTR;
	ck_assert_uint_ne(kop_norun(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	k.flags = NVM_UNET_HF_HOLD;
	k.count = 1;
	ck_assert_uint_ne(kop_norun(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	k.count = 0;
	k.dst_port = 0;
	ck_assert_uint_ne(kop_norun(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	k.dst_port = PORT_A;
	k.node = FW_NV_NODES;
	ck_assert_uint_ne(kop_norun(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	k.node = 0;
	k.reserved = 1;
	ck_assert_uint_ne(kop_norun(&hb, NVM_KOP_UNET_KCTL, &k, sizeof(k)),
			  NVM_ST_OK);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_HOLD_TX], 4);
	ck_assert_uint_eq(ca.fw.unet.ep[PORT_A].ch[1].hold_left, 0);
}
END_TEST


static Suite *suite(void)
{
	Suite *s = suite_create("firmware-unet");
	TCase *t = tcase_create("unet");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, small_and_large);
	tcase_add_test(t, route_none_no_overwrite);
	tcase_add_test(t, unreachable_refused);
	tcase_add_test(t, ksend_route_lost);
	tcase_add_test(t, tx_share);
	tcase_add_test(t, bounds_checked);
	tcase_add_test(t, demultiplexed_on_tag);
	tcase_add_test(t, ring_full_and_no_buffer);
	tcase_add_test(t, close_drops);
	tcase_add_test(t, upcall_edges);
	tcase_add_test(t, divert_in_order);
	tcase_add_test(t, virtual_ports);
	tcase_add_test(t, divert_burst);
	tcase_add_test(t, quiet_raises_nothing);
	tcase_add_test(t, gather_pieces);
	tcase_add_test(t, gather_refused);
	tcase_add_test(t, reply_hit);
	tcase_add_test(t, reply_miss_stale_oversize);
	tcase_add_test(t, reply_diverted);
	tcase_add_test(t, pageable_segment);
	tcase_add_test(t, desched_diverts);
	tcase_add_test(t, hold_then_release);
	tcase_add_test(t, hold_expires);
	tcase_add_test(t, hostile_hold);
	tcase_add_test(t, hold_passes_a_waiting_frame);
	tcase_add_test(t, drop_told_to_sender);
	tcase_add_test(t, ctl_to_virtual_port);
	tcase_add_test(t, kctl_holds_a_sender);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
