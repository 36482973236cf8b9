// SPDX-License-Identifier: GPL-2.0-only
/*
 * Firmware unit tests: the raw-frame program on two simulated chips linked
 * by an in-memory wire.  Every byte delivered is checked.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sim_chip.h"
#include "netvm/crc32.h"
#include "netvm/packet.h"

#define TX_BUF	(SIM_HOST_BASE + 0x10000)
#define RX_BUF	(SIM_HOST_BASE + 0x80000)

static struct sim_chip a, b;

static void setup(void)
{
	sim_init(&a, 1, LANAI_SRAM_MIN);
	sim_init(&b, 2, LANAI_SRAM_DEFAULT);
	sim_connect(&a, &b);
	sim_boot(&a);
	sim_boot(&b);
	sim_settle(&a, &b);
}

static void teardown(void)
{
	sim_free(&a);
	sim_free(&b);
}

static struct nvm_raw_desc *desc(struct sim_chip *s, bool tx, uint32_t i)
{
	const struct nvm_sram_layout *l = sim_layout(s);
	uint32_t ring = tx ? l->raw_tx_ring : l->raw_rx_ring;
	uint32_t len = tx ? l->raw_tx_len : l->raw_rx_len;

	return (struct nvm_raw_desc *)(s->chip.sram + ring +
				       (i % len) * sizeof(struct nvm_raw_desc));
}

static void post_rx(struct sim_chip *s, uint32_t i, uint64_t buf, uint32_t n)
{
	struct nvm_raw_desc *d = desc(s, false, i);

	memset(d, 0, sizeof(*d));
	d->host_addr = buf;
	d->len = n;
	d->flags = NVM_RAW_OWN;
	sim_doorbell(s, 0, NVM_DB_RAW_RX);
}

static void send(struct sim_chip *s, uint32_t i, uint64_t buf, uint32_t n,
		 const uint8_t *route, uint8_t route_len)
{
	struct nvm_raw_desc *d = desc(s, true, i);

	memset(d, 0, sizeof(*d));
	d->host_addr = buf;
	d->len = n;
	d->route_len = route_len;
	if (route_len)
		memcpy(d->route, route, route_len);
	d->flags = NVM_RAW_OWN;
	sim_doorbell(s, 0, NVM_DB_RAW_TX);
}

static uint8_t pattern(uint32_t frame, uint32_t i)
{
	return (uint8_t)(frame * 131 + i * 7 + (i >> 8));
}

START_TEST(test_boot_layout)
{
	const struct nvm_sram_layout *l = sim_layout(&a);
	struct nvm_sram_layout in_sram;

	memcpy(&in_sram, a.chip.sram, sizeof(in_sram));
	ck_assert_uint_eq(in_sram.magic, NVM_LAYOUT_MAGIC);
	ck_assert_mem_eq(&in_sram, l, sizeof(in_sram));
	ck_assert_uint_eq(l->sram_size, LANAI_SRAM_MIN);
	ck_assert_uint_eq(l->fw_version, FW_VERSION);
	ck_assert_uint_eq(l->raw_max_payload, NVM_RAW_MAX_PAYLOAD);
	ck_assert_uint_eq(a.state, NVM_FW_READY);
	ck_assert_int_eq(sim_count_events(&a, NVM_EV_FW_STATE, NVM_FW_READY), 1);
	/* regions do not overlap and fit the chip */
	ck_assert_uint_le(l->raw_tx_ring + l->raw_tx_len * 32, l->raw_rx_ring);
	ck_assert_uint_le(l->wire_rx_ring + l->wire_rx_slots *
			  l->wire_rx_slot_size, l->sram_size);
}
END_TEST

/* Every size from 1 B to the maximum, both directions, byte for byte. */
START_TEST(test_every_size)
{
	struct sim_chip *src = _i ? &b : &a, *dst = _i ? &a : &b;
	uint32_t frame = 0;

	for (uint32_t n = 1; n <= NVM_RAW_MAX_PAYLOAD; n += (n < 300 ? 1 : 97)) {
		for (uint32_t i = 0; i < n; i++)
			sim_host(src, TX_BUF)[i] = pattern(frame, i);
		memset(sim_host(dst, RX_BUF), 0xee, NVM_RAW_MAX_PAYLOAD + 16);
		post_rx(dst, frame, RX_BUF, NVM_RAW_MAX_PAYLOAD);
		send(src, frame, TX_BUF, n, NULL, 0);
		sim_settle(&a, &b);

		const struct nvm_event *tx = sim_last_event(src, NVM_EV_RAW_TX);
		const struct nvm_event *rx = sim_last_event(dst, NVM_EV_RAW_RX);

		ck_assert_ptr_nonnull(tx);
		ck_assert_ptr_nonnull(rx);
		ck_assert_uint_eq(tx->arg, NVM_RAW_OK);
		ck_assert_uint_eq(rx->arg & 0xffffffff, n);
		ck_assert_uint_eq(rx->arg >> 32, src->chip.node_id);
		ck_assert_uint_eq(desc(dst, false, frame)->len, n);
		ck_assert_uint_eq(desc(dst, false, frame)->src_node,
				  src->chip.node_id);
		ck_assert_uint_eq(desc(dst, false, frame)->flags & NVM_RAW_OWN, 0);
		ck_assert_uint_eq(desc(src, true, frame)->flags & NVM_RAW_OWN, 0);
		/* the frame, then nothing written past it up to the end of
		 * the buffer and beyond (one assertion each: the index of the
		 * first wrong byte) */
		const uint8_t *got = sim_host(dst, RX_BUF);
		uint32_t i = 0;

		while (i < n && got[i] == pattern(frame, i))
			i++;
		ck_assert_uint_eq(i, n);
		while (i < NVM_RAW_MAX_PAYLOAD + 16 && got[i] == 0xee)
			i++;
		ck_assert_uint_eq(i, NVM_RAW_MAX_PAYLOAD + 16);
		frame++;
	}
	ck_assert_uint_eq(src->fw.counters[FW_CNT_RAW_TX], frame);
	ck_assert_uint_eq(dst->fw.counters[FW_CNT_RAW_RX], frame);
	ck_assert_int_eq(sim_count_events(dst, NVM_EV_RAW_RX, -1), (int)frame);
}
END_TEST

/* No receive buffers: frames wait in SRAM and on the wire, none lost. */
START_TEST(test_backpressure)
{
	const uint32_t n = 40;	/* more than wire slots + rings */
	uint32_t sent = 0, got = 0;

	while (got < n) {
		/* the sender fills its ring as it frees up */
		while (sent < n && !(desc(&a, true, sent)->flags & NVM_RAW_OWN) &&
		       sent - sim_count_events(&a, NVM_EV_RAW_TX, -1) <
		       sim_layout(&a)->raw_tx_len) {
			sim_host(&a, TX_BUF + sent * 64)[0] = (uint8_t)sent;
			send(&a, sent, TX_BUF + sent * 64, 64, NULL, 0);
			sent++;
		}
		sim_settle(&a, &b);
		if (got == 0 && sent == sim_layout(&a)->raw_tx_len) {
			/* nothing posted yet: nothing delivered, nothing dropped */
			ck_assert_int_eq(sim_count_events(&b, NVM_EV_RAW_RX, -1), 0);
		}
		/* the receiver posts one buffer at a time, slowly */
		post_rx(&b, got, RX_BUF + got * 64, 64);
		sim_settle(&a, &b);
		ck_assert_int_eq(sim_count_events(&b, NVM_EV_RAW_RX, -1),
				 (int)got + 1);
		ck_assert_uint_eq(sim_host(&b, RX_BUF + got * 64)[0], (uint8_t)got);
		got++;
	}
	ck_assert_uint_eq(b.fw.counters[FW_CNT_RX_BAD_FRAME], 0);
}
END_TEST

START_TEST(test_tx_errors)
{
	const uint8_t bad_route[] = { 0x81, 0x05 };
	const uint8_t route[] = { 0x81 };

	send(&a, 0, 0x10, 64, NULL, 0);				/* unmapped */
	sim_settle(&a, &b);
	ck_assert_uint_eq(sim_last_event(&a, NVM_EV_RAW_TX)->arg, NVM_RAW_ERR_DMA);
	ck_assert_uint_eq(sim_last_event(&a, NVM_EV_ERROR)->data,
			  NVM_ERR_HOST_DMA);
	send(&a, 1, TX_BUF, 0, NULL, 0);
	sim_settle(&a, &b);
	ck_assert_uint_eq(sim_last_event(&a, NVM_EV_RAW_TX)->arg, NVM_RAW_ERR_LEN);
	send(&a, 2, TX_BUF, NVM_RAW_MAX_PAYLOAD + 1, NULL, 0);
	sim_settle(&a, &b);
	ck_assert_uint_eq(sim_last_event(&a, NVM_EV_RAW_TX)->arg, NVM_RAW_ERR_LEN);
	send(&a, 3, TX_BUF, 8, bad_route, 2);
	sim_settle(&a, &b);
	ck_assert_uint_eq(sim_last_event(&a, NVM_EV_RAW_TX)->arg,
			  NVM_RAW_ERR_ROUTE);
	desc(&a, true, 4)->route_len = 9;
	send(&a, 4, TX_BUF, 8, route, 1);
	desc(&a, true, 4)->route_len = 9;
	sim_settle(&a, &b);
	ck_assert_uint_eq(sim_last_event(&a, NVM_EV_RAW_TX)->arg,
			  NVM_RAW_ERR_ROUTE);
	a.link = 0;
	send(&a, 5, TX_BUF, 8, NULL, 0);
	sim_settle(&a, &b);
	ck_assert_uint_eq(sim_last_event(&a, NVM_EV_RAW_TX)->arg,
			  NVM_RAW_ERR_LINK);
	ck_assert_uint_eq(a.fw.counters[FW_CNT_RAW_TX_ERR], 6);
	ck_assert_int_eq(sim_count_events(&b, NVM_EV_RAW_RX, -1), 0);

	/* the ring still works afterwards */
	a.link = NVM_LINK_UP;
	post_rx(&b, 0, RX_BUF, 4096);
	sim_host(&a, TX_BUF)[0] = 0x42;
	send(&a, 6, TX_BUF, 1, NULL, 0);
	sim_settle(&a, &b);
	ck_assert_uint_eq(sim_last_event(&b, NVM_EV_RAW_RX)->arg & 0xffff, 1);
	ck_assert_uint_eq(sim_host(&b, RX_BUF)[0], 0x42);
}
END_TEST

/* Malformed and misrouted packets are dropped and counted, not delivered. */
START_TEST(test_rx_bad_frames)
{
	const uint8_t route[] = { 0x83 };

	post_rx(&b, 0, RX_BUF, 4096);
	/* a route byte nobody consumed: misrouted */
	send(&a, 0, TX_BUF, 16, route, 1);
	sim_settle(&a, &b);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_RX_MISROUTED], 1);
	/* header corrupted (type) with a valid CRC: malformed */
	a.corrupt_next = 1;
	send(&a, 1, TX_BUF, 16, NULL, 0);
	sim_settle(&a, &b);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_RX_BAD_FRAME], 1);
	/* version byte corrupted */
	a.corrupt_next = 2;
	send(&a, 2, TX_BUF, 16, NULL, 0);
	sim_settle(&a, &b);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_RX_BAD_FRAME], 2);
	ck_assert_int_eq(sim_count_events(&b, NVM_EV_RAW_RX, -1), 0);
	/* the posted buffer is still there for a good frame */
	send(&a, 3, TX_BUF, 16, NULL, 0);
	sim_settle(&a, &b);
	ck_assert_int_eq(sim_count_events(&b, NVM_EV_RAW_RX, -1), 1);
}
END_TEST

/*
 * A frame longer than the buffer posted for it: refused with ERR_LEN, the
 * buffer and what follows it untouched, the length received reported.
 */
START_TEST(test_rx_short_buffer)
{
	const uint8_t *got = sim_host(&b, RX_BUF);
	uint32_t i = 0;

	for (uint32_t j = 0; j < 150; j++)
		sim_host(&a, TX_BUF)[j] = pattern(7, j);
	memset(sim_host(&b, RX_BUF), 0xee, 4096);
	post_rx(&b, 0, RX_BUF, 100);
	send(&a, 0, TX_BUF, 150, NULL, 0);
	sim_settle(&a, &b);
	ck_assert_uint_eq(desc(&b, false, 0)->status, NVM_RAW_ERR_LEN);
	ck_assert_uint_eq(desc(&b, false, 0)->len, 150);
	ck_assert_uint_eq(desc(&b, false, 0)->flags & NVM_RAW_OWN, 0);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_RAW_RX_ERR], 1);
	ck_assert_uint_eq(b.fw.counters[FW_CNT_RAW_RX], 0);
	while (i < 4096 && got[i] == 0xee)
		i++;
	ck_assert_uint_eq(i, 4096);
	/* one byte longer than the buffer is refused too; exactly its size fits */
	post_rx(&b, 1, RX_BUF, 149);
	send(&a, 1, TX_BUF, 150, NULL, 0);
	sim_settle(&a, &b);
	ck_assert_uint_eq(desc(&b, false, 1)->status, NVM_RAW_ERR_LEN);
	post_rx(&b, 2, RX_BUF, 150);
	send(&a, 2, TX_BUF, 150, NULL, 0);
	sim_settle(&a, &b);
	ck_assert_uint_eq(desc(&b, false, 2)->status, NVM_RAW_OK);
	ck_assert_mem_eq(sim_host(&b, RX_BUF), sim_host(&a, TX_BUF), 150);
}
END_TEST

START_TEST(test_bad_doorbell)
{
	sim_doorbell(&a, 3 * LANAI_DOORBELL_PAGE + 4, 0x1234);
	sim_doorbell(&a, 0, 0x5678);
	sim_settle(&a, &b);
	ck_assert_int_eq(sim_count_events(&a, NVM_EV_ERROR, NVM_ERR_BAD_DOORBELL),
			 2);
	ck_assert_uint_eq(a.events[a.nevents - 2].endpoint, 3);
	ck_assert_uint_eq(a.events[a.nevents - 2].arg,
			  ((uint64_t)(3 * LANAI_DOORBELL_PAGE + 4) << 32) | 0x1234);
	ck_assert_uint_eq(a.fw.counters[FW_CNT_BAD_DOORBELLS], 2);
}
END_TEST

/* The chip's CRC unit (zlib) is netvm/crc32.h's CRC: every length up to
 * a frame and beyond, from every alignment, chained or not. */
START_TEST(test_crc32_unit_is_nvm_crc32)
{
	static uint8_t buf[NVM_FRAME_MAX + 64];

	for (uint32_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 13);
	for (uint32_t len = 0; len <= NVM_FRAME_MAX + 8; len += len < 64 ? 1 : 61)
		for (uint32_t at = 0; at < 8; at++) {
			uint32_t seed = len * 7 + at;

			ck_assert_uint_eq(fw_crc32(0, buf + at, len),
					  nvm_crc32(0, buf + at, len));
			ck_assert_uint_eq(fw_crc32(seed, buf + at, len),
					  nvm_crc32(seed, buf + at, len));
		}
}
END_TEST

START_TEST(test_crc32)
{
	/* the IEEE check value */
	ck_assert_uint_eq(fw_crc32(0, (const uint8_t *)"123456789", 9),
			  0xcbf43926);
}
END_TEST

START_TEST(test_name_tables)
{
	for (int i = 0; i < FW_CNT_MAX; i++)
		ck_assert_ptr_nonnull(fw_counter_names[i]);
	for (int i = 0; i < FW_TX_STATE_COUNT; i++)
		ck_assert_ptr_nonnull(fw_tx_state_names[i]);
	for (int i = 0; i < FW_OP_STATE_COUNT; i++)
		ck_assert_ptr_nonnull(fw_op_state_names[i]);
	for (int i = 0; i < FW_PEND_STATE_COUNT; i++)
		ck_assert_ptr_nonnull(fw_pend_state_names[i]);
	for (int i = 1; i < FW_JOB_COUNT; i++)
		ck_assert_ptr_nonnull(fw_job_kinds[i].name);
}
END_TEST

static Suite *fw_raw_suite(void)
{
	Suite *s = suite_create("firmware-raw");
	TCase *tc = tcase_create("raw");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_boot_layout);
	tcase_add_loop_test(tc, test_every_size, 0, 2);
	tcase_add_test(tc, test_backpressure);
	tcase_add_test(tc, test_tx_errors);
	tcase_add_test(tc, test_rx_bad_frames);
	tcase_add_test(tc, test_rx_short_buffer);
	tcase_add_test(tc, test_bad_doorbell);
	tcase_add_test(tc, test_crc32_unit_is_nvm_crc32);
	tcase_add_test(tc, test_crc32);
	tcase_add_test(tc, test_name_tables);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(fw_raw_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
