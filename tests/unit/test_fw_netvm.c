// SPDX-License-Identifier: GPL-2.0-only
/*
 * NetVM firmware unit tests: two firmware instances back to back over an
 * in-memory wire, each with a simulated host (memory, page tables, OS).
 * Every byte delivered is checked; faults on the wire are seeded.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_host.h"
#include "fw_load.h"
#include "sim_peer.h"
#include "netvm/tripwire.h"

#define PA	1		/* process (port) on each node */
#define PB	2
#define KEY_A	0x1111222233334444ull
#define KEY_B	0xaaaabbbbccccddddull
#define SRC	0x10000000ull	/* process A's buffer */
#define DST	0x20000000ull	/* process B's exported buffer */
#define BUFLEN	(1u << 20)

static struct sim_chip ca, cb;
static struct sim_host ha, hb;

static void settle(void)
{
	sim_settle(&ca, &cb);
}

static void setup_with(unsigned drop, unsigned dup, unsigned reorder)
{
	sim_init(&ca, 0, LANAI_SRAM_DEFAULT);
	sim_init(&cb, 1, LANAI_SRAM_DEFAULT);
	sim_connect(&ca, &cb);
	ca.drop_pct = cb.drop_pct = drop;
	ca.dup_pct = cb.dup_pct = dup;
	ca.reorder_pct = cb.reorder_pct = reorder;
	sim_boot(&ca);
	sim_boot(&cb);
	sh_pair(&ha, &hb);
	sh_init(&ha, &ca, 0xa0a0a0a0);
	sh_init(&hb, &cb, 0xb0b0b0b0);
	settle();
	ck_assert_uint_eq(ca.fw.nv.configured, 1);
	ck_assert_uint_eq(cb.fw.nv.configured, 1);
	sh_open(&ha, PA);
	sh_open(&hb, PB);
	sh_alloc(&ha, PA, SRC, BUFLEN, KEY_A, true);
	sh_alloc(&hb, PB, DST, BUFLEN, KEY_B, true);
	settle();
}

static void setup(void)
{
	setup_with(0, 0, 0);
}

/* Every test, whatever it did: no DMA touched memory no one granted. */
static void teardown(void)
{
	uint32_t va = sh_dma_violations(&ha), vb = sh_dma_violations(&hb);
	struct sim_host *h = va ? &ha : &hb;
	const char *what = NULL;

	ck_assert_msg(!va && !vb, "node %d: %u DMA(s) outside every grant, "
		      "the first %s %#llx + %u", va ? 0 : 1, va ? va : vb,
		      h->dma_bad_write ? "writing" : "reading",
		      (unsigned long long)h->dma_bad_addr, h->dma_bad_len);
	/* whatever the test did, its state would load (fw_load.c) */
	ck_assert_msg(fw_state_ok(&ca.fw, &what), "node 0: %s", what);
	ck_assert_msg(fw_state_ok(&cb.fw, &what), "node 1: %s", what);
	sim_free(&ca);
	sim_free(&cb);
}

/* Issue, then settle until port's completions reach the issued count. */
static struct nvm_shadow finish(struct sim_host *h, uint32_t port)
{
	struct nvm_shadow s;

	for (int i = 0; i < 50; i++) {
		settle();
		s = sh_shadow(h, port);
		if (s.done == h->issued[port])
			return s;
	}
	{
		struct fw_nv_ep *e = &h->c->fw.nv.ep[port];

		for (int i = 0; i < NVM_CMDQ_LEN; i++)
			if (e->ops[i].state != FW_OP_FREE)
				fprintf(stderr, "op %d: %s seq %u txbuf %u\n", i,
					fw_op_state_names[e->ops[i].state],
					e->ops[i].cmd.seq, e->ops[i].txbuf);
		for (int n = 0; n < 2; n++) {
			struct fw_nv_peer *p = &h->c->fw.nv.peer[n];

			fprintf(stderr, "peer %d: next %u una %u wq %u lsn %u "
				"seen %llx complete %llx\n", n, p->next_seq,
				p->una, p->wq_count, p->lsn,
				(unsigned long long)p->seen,
				(unsigned long long)p->complete);
		}
		fprintf(stderr, "consumed %u produced %u inflight %u fence %u "
			"missing %u rx_held %u hdma %u/%u sendq %u\n",
			e->consumed, e->produced, e->inflight, e->fence,
			e->missing, h->c->fw.rx_held, h->c->fw.q.hdma_count,
			h->c->fw.q.hdma_running, h->c->fw.q.send_count);
	}
	ck_abort_msg("port %u: %u of %u commands done", port,
		     sh_shadow(h, port).done, h->issued[port]);
	return s;
}

START_TEST(test_config)
{
	struct nvm_shadow k = sh_shadow(&ha, NVM_EP_KERNEL);

	ck_assert_uint_eq(k.errors, 0);
	ck_assert_uint_eq(ca.fw.layout.max_ppn,
			  (SIM_HOST_BASE + SIM_HOST_SIZE) / NVM_PAGE_SIZE);
	ck_assert_uint_gt(ca.fw.layout.pt, ca.fw.layout.ep_base);
	ck_assert_uint_le(ca.fw.layout.tables_end, LANAI_SRAM_DEFAULT);
	ck_assert_uint_eq(ca.fw.nv.ep[PA].open, 1);
}
END_TEST

/* Writes of every size up to a page at unaligned offsets, then large
 * multi-page transfers, both directions: every byte checked. */
START_TEST(test_write_sizes)
{
	uint32_t seed = 1;
	uint32_t sizes[] = { 1, 2, 3, 7, 8, 63, 64, 95, 96, 97, 100, 255, 256,
			     511, 1000, 2047, 2048, 4095, 4096, 4097, 8191,
			     12288, 65536, 300001, BUFLEN - 8 };

	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t n = sizes[i];
		uint32_t so = (i * 37) % 4096, doff = (i * 1013) % 4096;

		if (so + n > BUFLEN)
			so = 0;
		if (doff + n > BUFLEN)
			doff = 0;
		sh_fill(&ha, PA, SRC + so, n, seed);
		sh_write(&ha, PA, 1, PB, SRC + so, DST + doff, n, KEY_B, 0, 0);
		finish(&ha, PA);
		ck_assert_msg(sh_check(&hb, PB, DST + doff, n, seed),
			      "size %u at %u -> %u", n, so, doff);
		ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
		seed++;
	}
	/* and back the other way */
	sh_alloc(&hb, PB, SRC, BUFLEN, KEY_B, true);
	sh_alloc(&ha, PA, DST, BUFLEN, KEY_A, true);
	sh_fill(&hb, PB, SRC + 5, 200000, 99);
	sh_write(&hb, PB, 0, PA, SRC + 5, DST + 4001, 200000, KEY_A, 0, 0);
	finish(&hb, PB);
	ck_assert(sh_check(&ha, PA, DST + 4001, 200000, 99));
}
END_TEST

/* Every size from 1 byte to a page and a bit, at offsets that move so
 * every alignment on both sides comes up. */
START_TEST(test_every_size)
{
	for (uint32_t n = 1; n <= 4200; n++) {
		uint32_t so = (n * 13) % 4096, doff = (n * 29 + 7) % 4096;

		sh_fill(&ha, PA, SRC + so, n, n);
		sh_write(&ha, PA, 1, PB, SRC + so, DST + doff, n, KEY_B, 0, 0);
		if (n % 64 == 0 || n == 4200)
			finish(&ha, PA);
		if (n % 64 == 0 || n == 4200)
			ck_assert_msg(sh_check(&hb, PB, DST + doff, n, n), "size %u", n);
	}
	for (uint32_t n = 1; n <= 4200; n += 1 + n / 64) {
		uint32_t lo = (n * 17) % 4096, ro = (n * 31 + 3) % 4096;

		sh_fill(&hb, PB, DST + ro, n, n + 7);
		sh_read(&ha, PA, 1, PB, SRC + lo, DST + ro, n, KEY_B);
		finish(&ha, PA);
		ck_assert_msg(sh_check(&ha, PA, SRC + lo, n, n + 7), "read %u", n);
	}
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
}
END_TEST

/* FENCE: commands after it start only once everything before it is done. */
START_TEST(test_fence)
{
	struct nvm_cmd f = { .op = NVM_OP_FENCE };
	uint32_t *w = (uint32_t *)sh_byte(&hb, PB, DST + 3 * 4096 + 512);
	struct nvm_ep_status st;

	sh_fill(&hb, PB, DST, 4096, 31);
	*w = 0;
	/* the peer stops taking frames: the read stays outstanding */
	cb.rx_enabled = false;
	sh_read(&ha, PA, 1, PB, SRC, DST, 4096, KEY_B);
	sh_cmd(&ha, PA, &f);
	sh_atomic(&ha, PA, 1, PB, DST + 3 * 4096 + 512, KEY_B, NVM_AT_INC, 0, 0);
	sim_run(&ca, &cb, 3000);
	memcpy(&st, ca.chip.sram + ca.fw.layout.ep_base + PA * NVM_EP_STRIDE +
	       NVM_EP_STATUS, sizeof(st));
	/* the read and the fence were taken; the atomic after the fence was not */
	ck_assert_uint_eq(st.consumed, ha.issued[PA] - 1);
	ck_assert_uint_eq(st.done, ha.issued[PA] - 3);
	cb.rx_enabled = true;
	finish(&ha, PA);
	ck_assert(sh_check(&ha, PA, SRC, 4096, 31));
	ck_assert_uint_eq(*w, 1);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_CMD_FENCE], 1);
}
END_TEST

/* Gather: three source fragments into one destination page. */
START_TEST(test_gather)
{
	struct nvm_cmd c = {
		.op = NVM_OP_WRITE, .dst_node = 1, .dst_port = PB, .nfrag = 3,
		.len = 100 + 2000 + 7, .dst_va = DST + 1000, .dst_key = KEY_B,
		.dst_hash = nvm_pt_hash(PB, DST >> 12, SH_PT_ROWS),
	};
	uint64_t f[3] = { SRC + 10, SRC + 8192 + 500, SRC + 3 * 4096 + 4000 };
	uint32_t l[3] = { 100, 2000, 7 };
	uint32_t off = 0;

	for (int i = 0; i < 3; i++) {
		sh_fill(&ha, PA, f[i], l[i], 40 + i);
		c.src[i].va = f[i];
		c.src[i].len = l[i];
		c.src[i].key = KEY_A;
		c.src[i].hash = nvm_pt_hash(PA, f[i] >> 12, SH_PT_ROWS);
	}
	sh_cmd(&ha, PA, &c);
	finish(&ha, PA);
	for (int i = 0; i < 3; i++) {
		ck_assert(sh_check(&hb, PB, DST + 1000 + off, l[i], 40 + i));
		off += l[i];
	}
	/* a gather whose lengths do not add up is refused */
	c.len = 5;
	sh_cmd(&ha, PA, &c);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 1);
	ck_assert_uint_eq(sh_err(&ha, PA, 0).status, NVM_ST_BAD_CMD);
	/* more fragments than a command holds, even with no data (found by
	 * the fuzzer: it used to index past the lock array) */
	c.len = 0;
	c.nfrag = 200;
	sh_cmd(&ha, PA, &c);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_err(&ha, PA, 1).status, NVM_ST_BAD_CMD);
}
END_TEST

START_TEST(test_read_sizes)
{
	uint32_t sizes[] = { 1, 4, 96, 97, 4095, 4096, 5000, 65536, BUFLEN / 2 };

	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t n = sizes[i], ro = (i * 301) % 4096, lo = (i * 77) % 4096;

		sh_fill(&hb, PB, DST + ro, n, 500 + i);
		memset(sh_byte(&ha, PA, SRC + lo), 0, 1);
		sh_read(&ha, PA, 1, PB, SRC + lo, DST + ro, n, KEY_B);
		finish(&ha, PA);
		ck_assert_msg(sh_check(&ha, PA, SRC + lo, n, 500 + i), "read %u", n);
	}
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
	ck_assert_uint_gt(ca.fw.counters[FW_CNT_CMD_READ], 0);
}
END_TEST

START_TEST(test_atomics)
{
	uint32_t *w = (uint32_t *)sh_byte(&hb, PB, DST + 64);
	struct nvm_atomic_reply r;

	w[0] = 5;
	sh_atomic(&ha, PA, 1, PB, DST + 64, KEY_B, NVM_AT_INC, 0, 0);
	finish(&ha, PA);
	r = sh_reply(&ha, PA);
	ck_assert_uint_eq(r.r[0], 5);
	ck_assert_uint_eq(w[0], 6);
	sh_atomic(&ha, PA, 1, PB, DST + 64, KEY_B, NVM_AT_DEC, 0, 0);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_reply(&ha, PA).r[0], 6);
	ck_assert_uint_eq(w[0], 5);
	sh_atomic(&ha, PA, 1, PB, DST + 64, KEY_B, NVM_AT_SWAP, 77, 0);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_reply(&ha, PA).r[0], 5);
	ck_assert_uint_eq(w[0], 77);
	sh_atomic(&ha, PA, 1, PB, DST + 64, KEY_B, NVM_AT_CSWAP, 1, 2);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_reply(&ha, PA).r[0], 77);
	ck_assert_uint_eq(w[0], 77);		/* no match, no swap */
	sh_atomic(&ha, PA, 1, PB, DST + 64, KEY_B, NVM_AT_CSWAP, 77, 9);
	finish(&ha, PA);
	ck_assert_uint_eq(w[0], 9);
	w[1] = 0;
	sh_atomic(&ha, PA, 1, PB, DST + 68, KEY_B, NVM_AT_TAS, 0, 0);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_reply(&ha, PA).r[0], 0);
	ck_assert_uint_eq(w[1], 1);
	sh_atomic(&ha, PA, 1, PB, DST + 68, KEY_B, NVM_AT_TAS, 0, 0);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_reply(&ha, PA).r[0], 1);
	/* unaligned operand and unknown op are refused */
	sh_atomic(&ha, PA, 1, PB, DST + 66, KEY_B, NVM_AT_INC, 0, 0);
	sh_atomic(&ha, PA, 1, PB, DST + 64, KEY_B, 99, 0, 0);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 2);
}
END_TEST

/* Several endpoints increment one word at once: none lost. */
START_TEST(test_atomic_contention)
{
	uint32_t *w = (uint32_t *)sh_byte(&hb, PB, DST + 128);
	const uint32_t ports[] = { 3, 4, 5, 6 };

	*w = 0;
	for (int p = 0; p < 4; p++) {
		sh_open(&ha, ports[p]);
		sh_alloc(&ha, ports[p], SRC, 4096, KEY_A, true);
	}
	settle();
	for (int i = 0; i < 50; i++)
		for (int p = 0; p < 4; p++)
			sh_atomic(&ha, ports[p], 1, PB, DST + 128, KEY_B,
				  NVM_AT_INC, 0, 0);
	for (int p = 0; p < 4; p++)
		finish(&ha, ports[p]);
	ck_assert_uint_eq(*w, 200);
}
END_TEST

/* Four endpoints enqueue at once: every id lands in the queue once, and
 * the old tails handed back chain all of them (as the MCS-style wait
 * queue needs).  Then semaphore P from all four against a count of 3. */
START_TEST(test_extended_contention)
{
	uint32_t *q = (uint32_t *)sh_byte(&hb, PB, DST + 1024);
	const uint32_t ports[] = { 3, 4, 5, 6 };
	uint8_t seen_tail[4 * 30 + 1] = { 0 };
	uint32_t empties = 0;

	q[0] = q[1] = NVM_WQ_EMPTY;
	q[2] = q[3] = q[4] = 0;
	for (int p = 0; p < 4; p++)
		sh_open(&ha, ports[p]);
	settle();
	for (int i = 0; i < 30; i++) {
		for (int p = 0; p < 4; p++)
			sh_atomic(&ha, ports[p], 1, PB, DST + 1024, KEY_B,
				  NVM_AT_ENQUEUE, 1 + p * 30 + i, 0);
		for (int p = 0; p < 4; p++) {
			struct nvm_atomic_reply r;

			finish(&ha, ports[p]);
			r = sh_reply(&ha, ports[p]);
			if (r.r[0] == NVM_WQ_EMPTY) {
				empties++;
			} else {
				ck_assert_uint_le(r.r[0], 4 * 30);
				ck_assert_uint_eq(seen_tail[r.r[0]], 0);
				seen_tail[r.r[0]] = 1;
			}
		}
	}
	ck_assert_uint_eq(q[2], 120);		/* count */
	ck_assert_uint_eq(empties, 1);		/* only the first saw EMPTY */
	/* every id but the final tail was handed back exactly once */
	for (uint32_t id = 1; id <= 120; id++)
		ck_assert_uint_eq(seen_tail[id], id != q[1]);

	/* semaphore with S = 3: exactly three P's pass, the rest queue */
	q[0] = q[1] = NVM_WQ_EMPTY;
	q[2] = q[3] = 0;
	q[4] = 3;
	for (int p = 0; p < 4; p++)
		sh_atomic(&ha, ports[p], 1, PB, DST + 1024, KEY_B, NVM_AT_SEMP,
			  100 + p, 0);
	for (int p = 0; p < 4; p++)
		finish(&ha, ports[p]);
	ck_assert_uint_eq(q[4], 0);
	ck_assert_uint_eq(q[2], 1);		/* one waiter */
}
END_TEST

/* Wait queue and semaphore primitives, checked against NetVM's tables. */
START_TEST(test_waitqueue)
{
	uint32_t *q = (uint32_t *)sh_byte(&hb, PB, DST + 256);
	struct nvm_atomic_reply r;

	q[0] = q[1] = NVM_WQ_EMPTY;
	q[2] = q[3] = q[4] = 0;
#define AT(op, a) do { sh_atomic(&ha, PA, 1, PB, DST + 256, KEY_B, op, a, 0); \
		       finish(&ha, PA); r = sh_reply(&ha, PA); } while (0)
	AT(NVM_AT_DEQUEUE, 0);
	ck_assert_uint_eq(r.r[0], NVM_WQ_EMPTY);
	ck_assert_uint_eq(r.r[1], (uint32_t)-1);
	AT(NVM_AT_ENQUEUE, 10);
	ck_assert_uint_eq(r.r[0], NVM_WQ_EMPTY);
	AT(NVM_AT_ENQUEUE, 11);
	ck_assert_uint_eq(r.r[0], 10);		/* old tail */
	ck_assert_uint_eq(q[2], 2);
	AT(NVM_AT_DEQUEUE, 0);
	ck_assert_uint_eq(r.r[0], 10);
	ck_assert_uint_eq(r.r[1], 1);
	AT(NVM_AT_DEQUEUE, 0);			/* head not yet renamed */
	ck_assert_uint_eq(r.r[0], NVM_WQ_EMPTY);
	ck_assert_uint_eq(q[3], 1);		/* a pending wakeup */
	AT(NVM_AT_NEWHEAD, 11);
	ck_assert_uint_eq(r.r[0], 1);		/* wake your successor at once */
	ck_assert_uint_eq(q[2], 0);
	/* semaphore: S = 1 */
	q[0] = q[1] = NVM_WQ_EMPTY;
	q[2] = q[3] = 0;
	q[4] = 1;
	AT(NVM_AT_SEMP, 20);
	ck_assert_uint_eq(r.r[1], 1);
	ck_assert_uint_eq(q[4], 0);
	AT(NVM_AT_SEMP, 21);			/* S = 0: queued */
	ck_assert_uint_eq(r.r[0], NVM_WQ_EMPTY);
	ck_assert_uint_eq(q[2], 1);
	AT(NVM_AT_SEMV, 0);			/* wakes 21 */
	ck_assert_uint_eq(r.r[0], 21);
	AT(NVM_AT_SEMV, 0);			/* nobody waits: S = 1 */
	ck_assert_uint_eq(r.r[2], 1);
#undef AT
}
END_TEST

/* Counting notifications coalesce; one-shots do not; order is kept. */
START_TEST(test_notifications)
{
	struct nvm_notf_entry e;

	sh_arm(&hb, PB, 7, true);
	for (int i = 0; i < 5; i++)
		sh_write(&ha, PA, 1, PB, SRC, DST, 8, KEY_B, NVM_CF_NOTIFY, 7);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_sig(&hb, PB, 7), 5);
	ck_assert(sh_notf_next(&hb, PB, &e));		/* one entry: coalesced */
	ck_assert_uint_eq(e.notify, 7);
	ck_assert_uint_eq(e.src_node, 0);
	ck_assert_uint_eq(e.src_port, PA);
	ck_assert(!sh_notf_next(&hb, PB, &e));
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, 7), 1);
	/* acknowledged up to the signal: the next one queues again */
	sh_ack(&hb, PB, 7, 5);
	sh_write(&ha, PA, 1, PB, SRC, DST, 8, KEY_B, NVM_CF_NOTIFY, 7);
	finish(&ha, PA);
	ck_assert(sh_notf_next(&hb, PB, &e));
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, 7), 2);
	/* not armed: queued, no interrupt; NOINTR likewise */
	sh_write(&ha, PA, 1, PB, SRC, DST, 8, KEY_B, NVM_CF_NOTIFY, 9);
	sh_arm(&hb, PB, 10, true);
	sh_write(&ha, PA, 1, PB, SRC, DST, 8, KEY_B,
		 NVM_CF_NOTIFY | NVM_CF_NOINTR, 10);
	finish(&ha, PA);
	ck_assert(sh_notf_next(&hb, PB, &e) && e.notify == 9);
	ck_assert(sh_notf_next(&hb, PB, &e) && e.notify == 10);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, 9), 0);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, 10), 0);
	/* one-shots: every one queued, in the order sent */
	for (uint32_t n = 0; n < 20; n++)
		sh_write(&ha, PA, 1, PB, SRC, DST + n * 100, 100 + n * 300, KEY_B,
			 NVM_CF_NOTIFY, 5000 + n);
	finish(&ha, PA);
	for (uint32_t n = 0; n < 20; n++) {
		ck_assert(sh_notf_next(&hb, PB, &e));
		ck_assert_uint_eq(e.notify, 5000 + n);
	}
	ck_assert(!sh_notf_next(&hb, PB, &e));
}
END_TEST

/*
 * The arm byte is read when the queue entry has landed, not when the
 * event arrives: a sleeper that arms, then finds the queue empty, is
 * interrupted for the entry landing after; a disarmed one is not.
 */
START_TEST(test_arm_at_landing)
{
	struct nvm_notf_entry e;

	sh_arm(&hb, PB, 7, false);
	fw_nv_notify_deliver(&cb.fw, PB, 7, 0, PA, 0);
	ck_assert(cb.hdma_pending);	/* the entry is on its way */
	ck_assert(!sh_notf_next(&hb, PB, &e));
	sh_arm(&hb, PB, 7, true);
	settle();
	ck_assert(sh_notf_next(&hb, PB, &e) && e.notify == 7);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, 7), 1);
	/* armed when it arrived, disarmed before it landed: no interrupt */
	sh_ack(&hb, PB, 7, 1);
	fw_nv_notify_deliver(&cb.fw, PB, 7, 0, PA, 0);
	ck_assert(cb.hdma_pending);
	sh_arm(&hb, PB, 7, false);
	settle();
	ck_assert(sh_notf_next(&hb, PB, &e) && e.notify == 7);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, 7), 1);
	/* one-shots and the queue's arm byte the same way */
	fw_nv_notify_deliver(&cb.fw, PB, 5000, 0, PA, 0);
	sh_arm(&hb, PB, 0, true);
	settle();
	ck_assert(sh_notf_next(&hb, PB, &e) && e.notify == 5000);
	ck_assert_int_eq(sim_count_events(&cb, NVM_EV_NOTIFY, 5000), 1);
}
END_TEST

/*
 * A write that succeeded is answered by the ACK alone (the receiver sends
 * no sequenced packet); one that failed by a WRITE_RESP with the error,
 * and the receiver's window passes it once that response is acknowledged.
 */
START_TEST(test_write_answered_by_ack)
{
	uint32_t acks = cb.fw.counters[FW_CNT_ACKS_SENT];

	sh_fill(&ha, PA, SRC, 64, 31);
	sh_write(&ha, PA, 1, PB, SRC, DST, 64, KEY_B, NVM_CF_ACK_NOW, 0);
	finish(&ha, PA);
	ck_assert(sh_check(&hb, PB, DST, 64, 31));
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
	ck_assert_uint_eq(cb.fw.nv.peer[0].next_seq, 1);
	ck_assert_uint_gt(cb.fw.counters[FW_CNT_ACKS_SENT], acks);
	/* without ACK_NOW, a notification alone: the delayed ACK */
	sh_write(&ha, PA, 1, PB, SRC, DST, 0, KEY_B, NVM_CF_NOTIFY, 3);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_sig(&hb, PB, 3), 1);
	ck_assert_uint_eq(cb.fw.nv.peer[0].next_seq, 1);
	/* a failed write: one response, with the error */
	sh_write(&ha, PA, 1, PB, SRC, DST, 64, KEY_B ^ 1, NVM_CF_ACK_NOW, 0);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 1);
	ck_assert_uint_eq(sh_err(&ha, PA, 0).status, NVM_ST_BAD_KEY);
	ck_assert_uint_eq(cb.fw.nv.peer[0].next_seq, 2);
	settle();
	ck_assert_uint_eq(cb.fw.nv.peer[0].lsn, ca.fw.nv.peer[1].next_seq);
	ck_assert_uint_eq(ca.fw.nv.peer[1].una, ca.fw.nv.peer[1].next_seq);
}
END_TEST

/* A source page not resident: page-miss event, the OS maps it and
 * restarts the command. */
START_TEST(test_source_page_miss)
{
	sh_fill(&ha, PA, SRC + 3 * 4096, 3 * 4096, 7);
	sh_page_out(&ha, PA, SRC + 4 * 4096);
	sh_page_out(&ha, PA, SRC + 5 * 4096);
	sh_write(&ha, PA, 1, PB, SRC + 3 * 4096, DST, 3 * 4096, KEY_B, 0, 0);
	finish(&ha, PA);
	ck_assert(sh_check(&hb, PB, DST, 3 * 4096, 7));
	ck_assert_uint_eq(ha.misses, 2);
	ck_assert_uint_ge(ca.fw.counters[FW_CNT_RESTARTS], 2);
}
END_TEST

/* The kernel cannot map a page a local operation missed (a source, a
 * read's target): NVM_KOP_MISS_FAIL fails what waits for that page with
 * BAD_ADDR, and the endpoint goes on. */
static void miss_fail_on(uint16_t port, uint64_t page)
{
	struct nvm_cmd c = { .op = NVM_KOP_MISS_FAIL, .dst_port = port };

	c.arg[0] = (uint32_t)page;
	c.arg[1] = (uint32_t)(page >> 32);
	sh_cmd(&ha, NVM_EP_KERNEL, &c);
	settle();
}

static void miss_fail(uint64_t page)
{
	miss_fail_on(PA, page);
}

START_TEST(test_local_miss_fails)
{
	uint32_t kerr = sh_shadow(&ha, NVM_EP_KERNEL).errors;

	/* a port out of range or not open: refused, nothing else happens */
	miss_fail_on(FW_NV_EPS, SRC);
	miss_fail_on(0xffff, SRC);
	miss_fail_on(PA + 1, SRC);
	ck_assert_uint_eq(sh_shadow(&ha, NVM_EP_KERNEL).errors, kerr + 3);
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_uint_eq(sh_err(&ha, NVM_EP_KERNEL, kerr + i).status,
				  NVM_ST_BAD_CMD);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
	ha.auto_fault = 0;
	/* a write whose second source page is out and stays out */
	sh_fill(&ha, PA, SRC, 2 * 4096, 31);
	sh_page_out(&ha, PA, SRC + 4096);
	sh_write(&ha, PA, 1, PB, SRC, DST, 2 * 4096, KEY_B, 0, 0);
	settle();
	ck_assert_uint_eq(ha.misses, 1);
	ck_assert_uint_eq(ca.fw.nv.ep[PA].missing, 1);
	/* another page's failure is not this one's */
	miss_fail(SRC + 2 * 4096);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
	ck_assert_uint_eq(ca.fw.nv.ep[PA].missing, 1);
	miss_fail(SRC + 4096);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 1);
	ck_assert_uint_eq(sh_err(&ha, PA, 0).status, NVM_ST_BAD_ADDR);
	ck_assert_uint_eq(ca.fw.nv.ep[PA].missing, 0);
	ck_assert(sh_check(&hb, PB, DST, 4096, 31));	/* the first page went */
	/* a read whose target page is out and stays out */
	sh_fill(&hb, PB, DST + 65536, 4096, 32);
	sh_page_out(&ha, PA, SRC + 8 * 4096);
	sh_read(&ha, PA, 1, PB, SRC + 8 * 4096, DST + 65536, 4096, KEY_B);
	settle();
	ck_assert_uint_eq(ha.misses, 2);
	miss_fail(SRC + 8 * 4096);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 2);
	ck_assert_uint_eq(sh_err(&ha, PA, 1).status, NVM_ST_BAD_ADDR);
	/* the endpoint goes on: a write and a read, every byte */
	ha.auto_fault = 1;
	sh_fill(&ha, PA, SRC + 16 * 4096, 3 * 4096, 33);
	sh_write(&ha, PA, 1, PB, SRC + 16 * 4096, DST + 32 * 4096, 3 * 4096,
		 KEY_B, 0, 0);
	sh_read(&ha, PA, 1, PB, SRC + 24 * 4096, DST + 65536, 4096, KEY_B);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 2);
	ck_assert(sh_check(&hb, PB, DST + 32 * 4096, 3 * 4096, 33));
	ck_assert(sh_check(&ha, PA, SRC + 24 * 4096, 4096, 32));
}
END_TEST

/* A write that misses a page in a command slot last used by a read
 * (found by the guest library test: the slot's stale read length made the
 * restart "deliver" instead of send, corrupting the source). */
START_TEST(test_miss_after_read_slot)
{
	/* fill every command slot with a completed read */
	for (int i = 0; i < NVM_CMDQ_LEN; i++)
		sh_read(&ha, PA, 1, PB, SRC + 64 * i, DST + 64 * i, 64, KEY_B);
	finish(&ha, PA);
	/* now writes whose source pages are out */
	sh_fill(&ha, PA, SRC + 8 * 4096, 4 * 4096, 77);
	for (int p = 8; p < 12; p++)
		sh_page_out(&ha, PA, SRC + p * 4096);
	sh_write(&ha, PA, 1, PB, SRC + 8 * 4096, DST + 65536, 4 * 4096, KEY_B,
		 0, 0);
	finish(&ha, PA);
	ck_assert(sh_check(&hb, PB, DST + 65536, 4 * 4096, 77));
	ck_assert(sh_check(&ha, PA, SRC + 8 * 4096, 4 * 4096, 77));
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
	ck_assert_uint_ge(ha.misses, 4);
}
END_TEST

/* A destination page not resident: the message goes to the bounce buffer,
 * the OS copies it in; the notification still comes after the data. */
START_TEST(test_dest_bounce)
{
	struct nvm_notf_entry e;

	sh_fill(&ha, PA, SRC, 3 * 4096, 8);
	sh_page_out(&hb, PB, DST + 4096);
	sh_write(&ha, PA, 1, PB, SRC, DST, 3 * 4096, KEY_B, NVM_CF_NOTIFY, 1500);
	finish(&ha, PA);
	ck_assert(sh_check(&hb, PB, DST, 3 * 4096, 8));
	ck_assert_uint_eq(hb.bounces_copied, 1);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_BOUNCES], 1);
	ck_assert(sh_notf_next(&hb, PB, &e) && e.notify == 1500);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
}
END_TEST

/* A remote read of a page that is not resident restarts at the remote. */
START_TEST(test_read_remote_miss)
{
	sh_fill(&hb, PB, DST + 8192, 4096, 9);
	sh_page_out(&hb, PB, DST + 8192);
	sh_read(&ha, PA, 1, PB, SRC, DST + 8192, 4096, KEY_B);
	finish(&ha, PA);
	ck_assert(sh_check(&ha, PA, SRC, 4096, 9));
	ck_assert_uint_eq(hb.misses, 1);
}
END_TEST

/*
 * Keys checked at both ends; read-only pages; no such port.  B's first
 * 4 KiB hold pattern 50 throughout: every refused write must leave all of
 * it (not just one byte) as it was.
 */
START_TEST(test_protection)
{
	struct nvm_cmd c;

	sh_fill(&ha, PA, SRC, 4096, 3);
	sh_fill(&hb, PB, DST, 4096, 50);
	sh_write(&ha, PA, 1, PB, SRC, DST + 10, 200, KEY_B ^ 1, 0, 0);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_err(&ha, PA, 0).status, NVM_ST_BAD_KEY);
	ck_assert(sh_check(&hb, PB, DST, 4096, 50));
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_KEY_FAILURES], 1);
	/* a wrong key for the local page */
	memset(&c, 0, sizeof(c));
	c.op = NVM_OP_WRITE;
	c.dst_node = 1;
	c.dst_port = PB;
	c.len = 200;
	c.nfrag = 1;
	c.dst_va = DST;
	c.dst_key = KEY_B;
	c.dst_hash = nvm_pt_hash(PB, DST >> 12, SH_PT_ROWS);
	c.src[0].va = SRC;
	c.src[0].len = 200;
	c.src[0].key = 12345;
	c.src[0].hash = nvm_pt_hash(PA, SRC >> 12, SH_PT_ROWS);
	sh_cmd(&ha, PA, &c);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_err(&ha, PA, 1).status, NVM_ST_BAD_KEY);
	ck_assert(sh_check(&hb, PB, DST, 4096, 50));
	/* read-only export */
	sh_set_ro(&hb, PB, DST, true);
	sh_write(&ha, PA, 1, PB, SRC, DST, 200, KEY_B, 0, 0);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_err(&ha, PA, 2).status, NVM_ST_READ_ONLY);
	ck_assert(sh_check(&hb, PB, DST, 4096, 50));
	/* reads of a read-only page are fine */
	sh_read(&ha, PA, 1, PB, SRC, DST, 100, KEY_B);
	/* no such port, unreachable node, physical from a user endpoint */
	sh_write(&ha, PA, 1, 9, SRC, DST, 200, KEY_B, 0, 0);
	sh_write(&ha, PA, 40, PB, SRC, DST, 200, KEY_B, 0, 0);
	sh_write(&ha, PA, 1, PB, SRC, DST, 200, KEY_B, NVM_CF_PHYS, 0);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 6);
	{
		/* records come in completion order: local refusals first */
		uint32_t seen = 0;

		for (int i = 3; i < 6; i++)
			seen |= 1u << sh_err(&ha, PA, i).status;
		ck_assert_uint_eq(seen, 1u << NVM_ST_NO_PORT |
				  1u << NVM_ST_UNREACHABLE | 1u << NVM_ST_PERM);
	}
	ck_assert(sh_check(&hb, PB, DST, 4096, 50));
	/* a key wrong in its high half only: all 64 bits are compared */
	sh_write(&ha, PA, 1, PB, SRC, DST + 10, 200, KEY_B ^ (1ull << 40), 0, 0);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 7);
	ck_assert_uint_eq(sh_err(&ha, PA, 6).status, NVM_ST_BAD_KEY);
	ck_assert(sh_check(&hb, PB, DST, 4096, 50));
}
END_TEST

/* The kernel's physical-address writeP / readP, into a window the
 * receiving kernel opened to the writer. */
START_TEST(test_physical)
{
	uint64_t src = sh_kalloc(&ha, 2) + 100;	/* kernel pages */
	uint64_t win = sh_kalloc(&hb, 2);
	uint64_t dst = win + 7;
	struct nvm_cmd c = {
		.op = NVM_OP_WRITE, .flags = NVM_CF_PHYS, .dst_node = 1,
		.dst_port = 0, .len = 3000, .nfrag = 1, .dst_va = dst,
	};

	sh_phys_win(&hb, 0, win, 2 * 4096, 1u << 0, NVM_PW_READ | NVM_PW_WRITE);
	for (int i = 0; i < 3000; i++)
		sim_host(&ca, src)[i] = (uint8_t)(i * 3);
	c.src[0].va = src;
	c.src[0].len = 3000;
	sh_cmd(&ha, 0, &c);
	finish(&ha, 0);
	ck_assert_mem_eq(sim_host(&cb, dst), sim_host(&ca, src), 3000);
	memset(&c, 0, sizeof(c));
	c.op = NVM_OP_READ;
	c.flags = NVM_CF_PHYS;
	c.dst_node = 1;
	c.len = 1000;
	c.nfrag = 1;
	c.dst_va = dst + 100;
	c.src[0].va = src + 2000;
	c.src[0].len = 1000;
	memset(sim_host(&ca, src + 2000), 0, 1000);
	sh_cmd(&ha, 0, &c);
	finish(&ha, 0);
	ck_assert_mem_eq(sim_host(&ca, src + 2000), sim_host(&cb, dst + 100), 1000);
	ck_assert_uint_eq(sh_shadow(&ha, 0).errors, 0);
	ck_assert_uint_eq(sh_shadow(&hb, 0).errors, 0);
}
END_TEST

/* One physical command from A's kernel; returns its completion status. */
static uint32_t phys_cmd(uint8_t op, uint64_t local, uint64_t remote,
			 uint32_t len, uint32_t atomic_op)
{
	uint32_t errors = sh_shadow(&ha, 0).errors;
	struct nvm_cmd c = {
		.op = op, .flags = NVM_CF_PHYS, .dst_node = 1, .len = len,
		.dst_va = remote, .atomic_op = atomic_op,
	};

	if (op != NVM_OP_ATOMIC) {
		c.nfrag = 1;
		c.src[0].va = local;
		c.src[0].len = len;
	}
	sh_cmd(&ha, 0, &c);
	finish(&ha, 0);
	if (sh_shadow(&ha, 0).errors == errors)
		return NVM_ST_OK;
	return sh_err(&ha, 0, errors).status;
}

/*
 * Physical accesses reach only the windows the receiving kernel opened,
 * to that peer, with that access: before them, after them, across their
 * end, into kernel memory no one granted, an atomic on a read-only
 * window, and anything once the window is closed are refused with PERM
 * and counted; the memory is untouched (and the teardown's grant check
 * sees no DMA outside the window).
 */
START_TEST(test_phys_windows)
{
	uint64_t src = sh_kalloc(&ha, 2);
	uint64_t win = sh_kalloc(&hb, 2), ro = sh_kalloc(&hb, 1);
	uint8_t before[64];

	for (int i = 0; i < 8192; i++)
		sim_host(&ca, src)[i] = (uint8_t)(i * 7 + 1);
	sh_phys_win(&hb, 0, win, 4096 + 2048, 1u << 0,
		    NVM_PW_READ | NVM_PW_WRITE);
	sh_phys_win(&hb, 3, ro, 4096, 1u << 0, NVM_PW_READ);
	finish(&hb, 0);
	ck_assert_uint_eq(sh_shadow(&hb, 0).errors, 0);

	/* inside: served, to the last byte of the window */
	ck_assert_uint_eq(phys_cmd(NVM_OP_WRITE, src, win + 4096 + 2048 - 64,
				   64, 0), NVM_ST_OK);
	ck_assert_mem_eq(sim_host(&cb, win + 4096 + 2048 - 64), sim_host(&ca, src),
			 64);
	/* one byte past the end, across the end, before, far away */
	memcpy(before, sim_host(&cb, win + 4096 + 2048 - 32), 64);
	ck_assert_uint_eq(phys_cmd(NVM_OP_WRITE, src, win + 4096 + 2048, 1, 0),
			  NVM_ST_PERM);
	ck_assert_uint_eq(phys_cmd(NVM_OP_WRITE, src + 64,
				   win + 4096 + 2048 - 32, 64, 0), NVM_ST_PERM);
	ck_assert_mem_eq(sim_host(&cb, win + 4096 + 2048 - 32), before, 64);
	ck_assert_uint_eq(phys_cmd(NVM_OP_WRITE, src, win - 16, 16, 0),
			  NVM_ST_PERM);
	ck_assert_uint_eq(phys_cmd(NVM_OP_WRITE, src, hb.secret + 100, 200, 0),
			  NVM_ST_PERM);
	ck_assert_uint_eq(phys_cmd(NVM_OP_READ, src, hb.secret, 4096, 0),
			  NVM_ST_PERM);
	ck_assert_uint_eq(phys_cmd(NVM_OP_ATOMIC, 0, hb.secret + 8, 0,
				   NVM_AT_SWAP), NVM_ST_PERM);
	/* the bounce buffer is the NIC's, not the peers' */
	ck_assert_uint_eq(phys_cmd(NVM_OP_WRITE, src, hb.bounce, 64, 0),
			  NVM_ST_PERM);
	/* a read-only window: reads yes, writes and atomics no */
	ck_assert_uint_eq(phys_cmd(NVM_OP_READ, src + 4096, ro, 128, 0),
			  NVM_ST_OK);
	ck_assert_uint_eq(phys_cmd(NVM_OP_WRITE, src, ro, 8, 0), NVM_ST_PERM);
	ck_assert_uint_eq(phys_cmd(NVM_OP_ATOMIC, 0, ro, 0, NVM_AT_INC),
			  NVM_ST_PERM);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_PHYS_REFUSED], 9);
	ck_assert_uint_eq(cb.traces[FW_TR_fw_phys_refused], 9);
	/* closed: refused too */
	sh_phys_win(&hb, 0, 0, 0, 0, 0);
	finish(&hb, 0);
	ck_assert_uint_eq(phys_cmd(NVM_OP_WRITE, src, win, 64, 0), NVM_ST_PERM);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_PHYS_REFUSED], 10);
	/* bad registrations: slot, access bits, reserved, wrap-around */
	sh_phys_win(&hb, NVM_PHYS_WINS, win, 4096, 1, NVM_PW_READ);
	sh_phys_win(&hb, 1, win, 4096, 1, 4);
	sh_phys_win(&hb, 1, ~0ull - 100, 4096, 1, NVM_PW_READ);
	finish(&hb, 0);
	ck_assert_uint_eq(sh_shadow(&hb, 0).errors, 3);
	ck_assert_uint_eq(sh_err(&hb, 0, 2).status, NVM_ST_BAD_CMD);
}
END_TEST

/* A forged request: node 2 claims the kernel's ports on both ends. */
static void forge(struct sim_chip *to, uint16_t src, uint8_t op, uint32_t seq,
		  uint64_t va, uint32_t len, const void *data, uint32_t dlen)
{
	struct nvm_net_hdr h = {
		.op = op, .flags = NVM_CF_PHYS, .src_port = 0, .dst_port = 0,
		.src_epoch = 0x66666666, .seq = seq, .req = 0x1234,
		.va = va, .len = len, .atomic_op = NVM_AT_SWAP,
	};

	sim_nv_inject(to, src, &h, data, dlen);
}

/*
 * Hostile frames from a node that is no one's peer: physical writes,
 * reads and atomics on B's kernel memory, with the kernel's ports forged,
 * and on a window B opened only to node 0.  Nothing is served; every one
 * is counted; B's memory is as it was.
 */
START_TEST(test_phys_forged)
{
	uint64_t win = sh_kalloc(&hb, 1);
	uint8_t junk[512];

	memset(junk, 0xa5, sizeof(junk));
	sh_phys_win(&hb, 0, win, 4096, 1u << 0, NVM_PW_READ | NVM_PW_WRITE);
	finish(&hb, 0);
	forge(&cb, 2, NVM_NET_WRITE, 1, hb.secret + 8, 512, junk, 512);
	forge(&cb, 2, NVM_NET_READ_REQ, 2, hb.secret, 4096, NULL, 0);
	forge(&cb, 2, NVM_NET_ATOMIC_REQ, 3, hb.secret + 4, 0, NULL, 0);
	forge(&cb, 2, NVM_NET_WRITE, 4, win, 512, junk, 512);
	forge(&cb, 2, NVM_NET_WRITE, 5, hb.bounce + 4096, 512, junk, 512);
	settle();
	ck_assert_uint_eq(sh_dma_violations(&hb), 0);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_PHYS_REFUSED], 5);
	for (int i = 0; i < 512; i++)
		ck_assert_uint_eq(sim_host(&cb, win)[i], 0);
	/* and B still serves its real peer */
	sh_fill(&ha, PA, SRC, 300, 5);
	sh_write(&ha, PA, 1, PB, SRC, DST + 9, 300, KEY_B, 0, 0);
	finish(&ha, PA);
	ck_assert(sh_check(&hb, PB, DST + 9, 300, 5));
}
END_TEST

/* A request to B's process PB, forged as from node @src. */
static void req_forged(uint16_t src, uint8_t op, uint16_t dport, uint32_t seq,
		       uint64_t va, uint64_t key, uint32_t len, const void *data,
		       uint32_t dlen)
{
	struct nvm_net_hdr h = {
		.op = op, .src_port = 1, .dst_port = dport,
		.src_epoch = 0x66666666, .dst_epoch = 0xb0b0b0b0, .seq = seq,
		.req = 0x77, .va = va, .key = key, .len = len,
		.hash = nvm_pt_hash(dport, va >> NVM_PAGE_SHIFT, SH_PT_ROWS),
		.atomic_op = NVM_AT_SWAP,
	};

	sim_nv_inject(&cb, src, &h, data, dlen);
}

/*
 * Forged fields in requests from a hostile node: a wrong key, a range
 * that leaves the page, a length that is not the payload's, a port that
 * does not exist or is out of range, an unaligned atomic, a read longer
 * than a page, sequence numbers out of the window, already seen or 0, a
 * source node that is B itself or beyond the node ids, an unknown op.
 * None reaches B's memory (the bytes are as they were, and the teardown
 * sees no DMA outside the grants); B keeps serving A.
 */
START_TEST(test_forged_requests)
{
	static uint8_t junk[4096];
	uint32_t bad = cb.fw.counters[FW_CNT_RX_BAD_FRAME];
	uint32_t seq = 1;

	memset(junk, 0x5a, sizeof(junk));
	sh_fill(&hb, PB, DST, 3 * 4096, 71);
	/* refused by the checks of a request */
	req_forged(2, NVM_NET_WRITE, PB, seq++, DST + 100, KEY_B ^ 1, 64, junk, 64);
	req_forged(2, NVM_NET_WRITE, PB, seq++, DST + 4000, KEY_B, 200, junk, 200);
	req_forged(2, NVM_NET_WRITE, PB, seq++, DST + 100, KEY_B, 4000, junk, 64);
	req_forged(2, NVM_NET_WRITE, 9, seq++, DST + 100, KEY_B, 64, junk, 64);
	req_forged(2, NVM_NET_WRITE, 0xffff, seq++, DST, KEY_B, 64, junk, 64);
	req_forged(2, NVM_NET_ATOMIC_REQ, PB, seq++, DST + 2, KEY_B, 0, NULL, 0);
	req_forged(2, NVM_NET_ATOMIC_REQ, PB, seq++, DST + 8, KEY_B ^ 1, 0, NULL, 0);
	req_forged(2, NVM_NET_READ_REQ, PB, seq++, DST, KEY_B, 8192, NULL, 0);
	req_forged(2, NVM_NET_READ_REQ, PB, seq++, DST + 4095, KEY_B, 2, NULL, 0);
	settle();
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_KEY_FAILURES], 2);
	/* dropped before any handler */
	req_forged(2, NVM_NET_WRITE, PB, 1, DST, KEY_B, 64, junk, 64);	/* seen */
	req_forged(2, NVM_NET_WRITE, PB, seq + 64, DST, KEY_B, 64, junk, 64);
	req_forged(2, NVM_NET_WRITE, PB, 0, DST, KEY_B, 64, junk, 64);
	req_forged(1, NVM_NET_WRITE, PB, 1, DST, KEY_B, 64, junk, 64);	/* B */
	req_forged(64, NVM_NET_WRITE, PB, 1, DST, KEY_B, 64, junk, 64);
	req_forged(0xffff, NVM_NET_WRITE, PB, 1, DST, KEY_B, 64, junk, 64);
	req_forged(2, 0x7f, PB, seq++, DST, KEY_B, 64, junk, 64);
	settle();
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_RX_BAD_FRAME] - bad, 4);
	ck_assert(sh_check(&hb, PB, DST, 3 * 4096, 71));
	/* and B still serves its real peer */
	sh_fill(&ha, PA, SRC, 5000, 72);
	sh_write(&ha, PA, 1, PB, SRC, DST + 10, 5000, KEY_B, 0, 0);
	finish(&ha, PA);
	ck_assert(sh_check(&hb, PB, DST + 10, 5000, 72));
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
}
END_TEST

/* The request id of the command @port issued last. */
static uint32_t last_req(struct sim_host *h, uint32_t port)
{
	uint32_t n = h->issued[port];

	return fw_nv_req_id(port, (n - 1) % NVM_CMDQ_LEN, n);
}

/* A response to A's process PA, forged as from @src's port @sport. */
static void resp_forged(uint16_t src, uint16_t sport, uint8_t op,
			uint32_t seq, uint32_t req, uint16_t status,
			const void *data, uint32_t len)
{
	struct nvm_net_hdr h = {
		.op = op, .src_port = sport, .dst_port = PA, .status = status,
		.src_epoch = src == 1 ? 0xb0b0b0b0 : 0x77777777,
		.dst_epoch = 0xa0a0a0a0, .seq = seq, .req = req, .len = len,
	};

	sim_nv_inject(&ca, src, &h, data, len);
}

static uint32_t op_state(struct sim_host *h, uint32_t port)
{
	return h->c->fw.nv.ep[port].ops[(h->issued[port] - 1) %
					NVM_CMDQ_LEN].state;
}

/*
 * Responses that do not match the operation they name are dropped and
 * counted: a READ_RESP for a write (it would land on the writer's source
 * buffer), a read's data of the wrong length, a response from the wrong
 * port or of the wrong kind fail the operation with BAD_CMD; one from a
 * node the operation did not go to, or for no operation, does not touch
 * it.  The writer's and reader's memory stay as they were.
 */
START_TEST(test_forged_response)
{
	static uint8_t junk[4096];
	uint32_t req;

	memset(junk, 0xee, sizeof(junk));
	sh_fill(&ha, PA, SRC, 8192, 41);
	cb.rx_enabled = false;		/* B never answers */
	sh_write(&ha, PA, 1, PB, SRC + 100, DST, 200, KEY_B, 0, 0);
	sim_run(&ca, &cb, 200);
	ck_assert_uint_eq(op_state(&ha, PA), FW_OP_SENT);
	req = last_req(&ha, PA);
	/* from a node the write did not go to: not even looked at */
	resp_forged(2, PB, NVM_NET_READ_RESP, 1, req, 0, junk, 200);
	sim_run(&ca, &cb, 200);
	ck_assert_uint_eq(op_state(&ha, PA), FW_OP_SENT);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_STALE_RESPONSE], 1);
	ck_assert_uint_eq(ca.traces[FW_TR_fw_stale_response], 1);
	/* a READ_RESP for the write: its data would overwrite the source */
	resp_forged(1, PB, NVM_NET_READ_RESP, 1, req, 0, junk, 200);
	sim_run(&ca, &cb, 200);
	ck_assert(sh_check(&ha, PA, SRC, 8192, 41));
	ck_assert_uint_eq(op_state(&ha, PA), FW_OP_FREE);
	ck_assert_uint_eq(sh_err(&ha, PA, 0).status, NVM_ST_BAD_CMD);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_BAD_RESPONSE], 1);

	/* a read of 100 bytes answered with a page */
	sh_read(&ha, PA, 1, PB, SRC + 4000, DST, 96, KEY_B);
	sim_run(&ca, &cb, 200);
	ck_assert_uint_eq(op_state(&ha, PA), FW_OP_SENT);
	resp_forged(1, PB, NVM_NET_READ_RESP, 2, last_req(&ha, PA), 0, junk,
		    4096);
	/* an atomic's result, and a read's from the wrong port */
	sh_read(&ha, PA, 1, PB, SRC + 4096, DST, 64, KEY_B);
	sim_run(&ca, &cb, 200);
	resp_forged(1, PB, NVM_NET_ATOMIC_RESP, 3, last_req(&ha, PA), 0, NULL,
		    0);
	sh_read(&ha, PA, 1, PB, SRC + 4096 + 64, DST, 64, KEY_B);
	sim_run(&ca, &cb, 200);
	resp_forged(1, PB + 1, NVM_NET_READ_RESP, 4, last_req(&ha, PA), 0,
		    junk, 64);
	/* a status no firmware sends */
	sh_read(&ha, PA, 1, PB, SRC + 4096 + 128, DST, 64, KEY_B);
	sim_run(&ca, &cb, 200);
	resp_forged(1, PB, NVM_NET_READ_RESP, 5, last_req(&ha, PA), 200, NULL,
		    0);
	sim_run(&ca, &cb, 400);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_BAD_RESPONSE], 5);
	ck_assert_uint_eq(sh_shadow(&ha, PA).done, ha.issued[PA]);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 5);
	for (int i = 1; i < 5; i++)
		ck_assert_uint_eq(sh_err(&ha, PA, i).status, NVM_ST_BAD_CMD);
	ck_assert(sh_check(&ha, PA, SRC, 8192, 41));
	/* a response for no operation at all */
	resp_forged(1, PB, NVM_NET_READ_RESP, 6, 0x0fff0000, 0, junk, 64);
	sim_run(&ca, &cb, 200);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_STALE_RESPONSE], 2);
	ck_assert(sh_check(&ha, PA, SRC, 8192, 41));
}
END_TEST

/* Simulated ms since boot. */
static uint64_t now_ms(void)
{
	return ca.now_ns / 1000000;
}

/* Settle in 10 ms steps until @port's commands are all done (at most 60
 * simulated seconds); returns the simulated ms it took. */
static uint64_t done_after(struct sim_host *h, uint32_t port)
{
	uint64_t t0 = now_ms();

	while (sh_shadow(h, port).done != h->issued[port] &&
	       now_ms() - t0 < 60000)
		sim_settle_for(&ca, &cb, 10000000);
	ck_assert_uint_eq(sh_shadow(h, port).done, h->issued[port]);
	return now_ms() - t0;
}

/*
 * NetVM's tick bookkeeping is saved state, bounded where it is used: a
 * remainder of a whole tick or more (tick_rem_ns, as a hostile stream may
 * give it) counts as none.  Here it claims a whole give-up's worth while
 * a write waits for a peer that takes nothing: the peer is still given up
 * after the give-up time, not at the next tick.  (Counted as it stood, it
 * made the next tick stand for the give-up: the write failed at once.)
 */
START_TEST(test_tick_state_clamped)
{
	uint64_t t;

	sh_fill(&ha, PA, SRC, 4096, 13);
	cb.rx_enabled = false;
	sh_write(&ha, PA, 1, PB, SRC, DST, 4096, KEY_B, 0, 0);
	sim_run(&ca, &cb, 100);
	ck_assert_uint_eq(ca.fw.nv.timer_armed, 1);
	ca.fw.nv.tick_rem_ns = (uint64_t)ca.fw.nv.giveup_ticks * FW_NV_TICK_NS;
	sim_settle_for(&ca, &cb, FW_NV_TICK_NS);
	ck_assert_uint_eq(ca.fw.nv.peer[1].dead, 0);
	ck_assert_uint_lt(ca.fw.nv.tick_rem_ns, FW_NV_TICK_NS);
	t = done_after(&ha, PA);
	ck_assert_msg(t >= 5900 && t <= 6500, "gave up after %llu ms",
		      (unsigned long long)t);
	ck_assert_uint_eq(sh_err(&ha, PA, 0).status, NVM_ST_UNREACHABLE);
	ck_assert_uint_eq(ca.fw.nv.peer[1].dead, 1);
}
END_TEST

/*
 * A peer that never acknowledges (B takes no frame): every operation
 * towards it fails with UNREACHABLE once it has been silent for the
 * give-up time (6 s), later ones at once without going on the wire; when
 * B listens again, the retransmissions reach it, its ACK brings it back,
 * and transfers work again.
 */
START_TEST(test_peer_silent)
{
	uint64_t t0, t;
	uint32_t sent;

	sh_fill(&ha, PA, SRC, 65536, 12);
	cb.rx_enabled = false;
	sh_write(&ha, PA, 1, PB, SRC, DST, 40000, KEY_B, 0, 0);
	sh_read(&ha, PA, 1, PB, SRC + 40960, DST, 8192, KEY_B);
	sh_atomic(&ha, PA, 1, PB, DST + 64, KEY_B, NVM_AT_INC, 0, 0);
	t = done_after(&ha, PA);
	ck_assert_msg(t >= 5900 && t <= 6500, "gave up after %llu ms",
		      (unsigned long long)t);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, ha.issued[PA]);
	for (uint32_t i = 0; i < ha.issued[PA]; i++)
		ck_assert_uint_eq(sh_err(&ha, PA, i).status, NVM_ST_UNREACHABLE);
	ck_assert_uint_eq(ca.fw.nv.peer[1].dead, 1);
	ck_assert(sh_check(&ha, PA, SRC, 65536, 12));	/* the read wrote nothing */
	/* at once, and nothing new goes out */
	sent = ca.frames_sent;
	t0 = now_ms();
	sh_write(&ha, PA, 1, PB, SRC, DST, 100, KEY_B, 0, 0);
	sim_run(&ca, &cb, 50);
	ck_assert_uint_eq(sh_shadow(&ha, PA).done, ha.issued[PA]);
	ck_assert_uint_eq(sh_err(&ha, PA, ha.issued[PA] - 1).status,
			  NVM_ST_UNREACHABLE);
	ck_assert_uint_eq(now_ms(), t0);
	ck_assert_uint_eq(ca.frames_sent, sent);
	/* B listens again: the resent packets reach it, its ACK revives it */
	cb.rx_enabled = true;
	settle();
	ck_assert_uint_eq(ca.fw.nv.peer[1].dead, 0);
	sent = sh_shadow(&ha, PA).errors;
	sh_write(&ha, PA, 1, PB, SRC + 5, DST + 4000, 9000, KEY_B, 0, 0);
	finish(&ha, PA);
	for (uint32_t i = 0; i < 9000; i++)
		ck_assert_uint_eq(*sh_byte(&hb, PB, DST + 4000 + i),
				  *sh_byte(&ha, PA, SRC + 5 + i));
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, sent);
}
END_TEST

/* The give-up time is the kernel's to set (NVM_KOP_CONFIG giveup_ms). */
static void short_giveup_setup(void)
{
	sh_giveup_ms = 1000;
	setup();
	sh_giveup_ms = 0;
}

START_TEST(test_giveup_settable)
{
	uint64_t t;

	ck_assert_uint_eq(ca.fw.nv.giveup_ticks, 500);
	cb.rx_enabled = false;
	sh_write(&ha, PA, 1, PB, SRC, DST, 4096, KEY_B, 0, 0);
	t = done_after(&ha, PA);
	ck_assert_msg(t >= 990 && t <= 1200, "gave up after %llu ms",
		      (unsigned long long)t);
	ck_assert_uint_eq(sh_err(&ha, PA, 0).status, NVM_ST_UNREACHABLE);
}
END_TEST

/*
 * On a loaded host every timer callback comes late (here each 2 ms tick
 * 3 ms late): the give-up still comes after the give-up time, not after
 * that many callbacks (which took 15 s here, and 10 s and more in guests
 * on a busy host, past the driver's own deadline).
 */
START_TEST(test_giveup_late_timers)
{
	uint64_t t;

	ca.timer_late_ns = 3000000;
	cb.rx_enabled = false;
	sh_write(&ha, PA, 1, PB, SRC, DST, 4096, KEY_B, 0, 0);
	sh_read(&ha, PA, 1, PB, SRC + 8192, DST, 4096, KEY_B);
	t = done_after(&ha, PA);
	ck_assert_msg(t >= 5900 && t <= 6500, "gave up after %llu ms",
		      (unsigned long long)t);
	for (uint32_t i = 0; i < ha.issued[PA]; i++)
		ck_assert_uint_eq(sh_err(&ha, PA, i).status, NVM_ST_UNREACHABLE);
}
END_TEST

/*
 * A hostile peer acknowledges A's requests but never answers them: the
 * window is clear, so nothing would ever time out.  Each operation gives
 * up after the give-up time waiting for its answer.
 */
START_TEST(test_peer_never_answers)
{
	struct nvm_net_hdr ack = {
		.op = NVM_NET_ACK, .src_epoch = 0x66666666,
		.dst_epoch = 0xa0a0a0a0,
	};
	uint64_t t;

	sh_read(&ha, PA, 2, PB, SRC, DST, 512, KEY_B);
	sh_atomic(&ha, PA, 2, PB, DST + 64, KEY_B, NVM_AT_INC, 0, 0);
	sim_run(&ca, &cb, 100);
	/* node 2 took both requests (it says) */
	ack.ack = 3;
	sim_nv_inject(&ca, 2, &ack, NULL, 0);
	sim_run(&ca, &cb, 100);
	ck_assert_uint_eq(ca.fw.nv.peer[2].una, 3);
	t = done_after(&ha, PA);
	ck_assert_msg(t >= 5900 && t <= 6500, "gave up after %llu ms",
		      (unsigned long long)t);
	ck_assert_uint_eq(sh_err(&ha, PA, 0).status, NVM_ST_UNREACHABLE);
	ck_assert_uint_eq(sh_err(&ha, PA, 1).status, NVM_ST_UNREACHABLE);
}
END_TEST

/*
 * A flood of requests from a hostile node that never complete (reads of
 * a page that is not resident, and B's kernel does not fault it in):
 * node 2 holds at most its share of B's pending table, the rest is
 * dropped and counted, and A's transfers with B still finish.
 */
START_TEST(test_flood_one_peer)
{
	uint32_t held = 0;

	hb.auto_fault = 0;
	sh_alloc(&hb, PB, DST + BUFLEN, 4096, KEY_B, false);
	for (uint32_t s = 1; s <= 64; s++) {
		struct nvm_net_hdr h = {
			.op = NVM_NET_READ_REQ, .src_port = 3, .dst_port = PB,
			.src_epoch = 0x66666666, .seq = s, .req = s,
			.va = DST + BUFLEN, .key = KEY_B, .len = 4096,
			.hash = nvm_pt_hash(PB, (DST + BUFLEN) >> 12, SH_PT_ROWS),
		};

		sim_nv_inject(&cb, 2, &h, NULL, 0);
		if (s % 16 == 0)
			sim_run(&ca, &cb, 100);
	}
	sim_run(&ca, &cb, 200);
	for (int i = 0; i < FW_NV_PENDING; i++)
		held += cb.fw.nv.pending[i].state != FW_PEND_FREE &&
			cb.fw.nv.pending[i].src_node == 2;
	ck_assert_uint_eq(held, FW_NV_PEND_PEER);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_PEER_QUOTA], 64 - FW_NV_PEND_PEER);
	ck_assert_uint_eq(cb.traces[FW_TR_fw_peer_quota], 64 - FW_NV_PEND_PEER);
	/* A writes and reads B while node 2's requests sit there */
	sh_fill(&ha, PA, SRC, 65536, 61);
	sh_write(&ha, PA, 1, PB, SRC, DST + 3, 65536, KEY_B, 0, 0);
	finish(&ha, PA);
	ck_assert(sh_check(&hb, PB, DST + 3, 65536, 61));
	sh_fill(&hb, PB, DST + 70000, 20000, 62);
	sh_read(&ha, PA, 1, PB, SRC + 100000, DST + 70000, 20000, KEY_B);
	finish(&ha, PA);
	ck_assert(sh_check(&ha, PA, SRC + 100000, 20000, 62));
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
}
END_TEST

/*
 * Node 2 is unreachable (nothing acknowledges what A sends it) and two of
 * A's processes flood it with 128 page writes, as many as A has tx
 * buffers.  They hold what requests may of its share, no more (the
 * rest is kept for responses, FW_NV_TX_REQ_PEER): A's transfers with B
 * on a third endpoint finish and verify while node 2 is still alive to
 * A, and node 2's writes all fail with UNREACHABLE at the give-up.
 * (Without the share node 2 held all 128 and B's transfer waited for
 * that give-up.)
 */
START_TEST(test_tx_share)
{
	const uint32_t flood[] = { 3, 4 };

	for (int p = 0; p < 2; p++) {
		sh_open(&ha, flood[p]);
		sh_alloc(&ha, flood[p], SRC, 64 * 4096, KEY_A, true);
	}
	settle();
	for (int p = 0; p < 2; p++)
		for (int i = 0; i < 64; i++)
			sh_write(&ha, flood[p], 2, PB, SRC + i * 4096,
				 DST + i * 4096, 4096, KEY_B, 0, 0);
	sim_run(&ca, &cb, 2000);
	ck_assert_uint_eq(sim_tx_held(&ca, 2), FW_NV_TX_REQ_PEER);
	ck_assert_uint_eq(ca.fw.nv.peer[2].next_seq - ca.fw.nv.peer[2].una,
			  FW_NV_TX_REQ_PEER);
	ck_assert_uint_eq(sh_shadow(&ha, 3).done + sh_shadow(&ha, 4).done, 0);
	/* B's traffic goes on: a write and a read, byte for byte */
	sh_fill(&ha, PA, SRC, 65536, 71);
	sh_write(&ha, PA, 1, PB, SRC, DST + 7, 65536, KEY_B, 0, 0);
	sh_fill(&hb, PB, DST + 100000, 30000, 72);
	sh_read(&ha, PA, 1, PB, SRC + 70000, DST + 100000, 30000, KEY_B);
	/* in 10 ms steps, not settle(): that would run node 2's timers on
	 * to the give-up */
	while (sh_shadow(&ha, PA).done != ha.issued[PA] &&
	       !ca.fw.nv.peer[2].dead)
		sim_settle_for(&ca, &cb, 10000000);
	ck_assert_uint_eq(sh_shadow(&ha, PA).done, ha.issued[PA]);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
	ck_assert(sh_check(&hb, PB, DST + 7, 65536, 71));
	ck_assert(sh_check(&ha, PA, SRC + 70000, 30000, 72));
	ck_assert_uint_eq(ca.fw.nv.peer[2].dead, 0);
	ck_assert_uint_le(sim_tx_held(&ca, 2), FW_NV_TX_PEER);
	/* node 2's writes end with the give-up, each with UNREACHABLE */
	for (int p = 0; p < 2; p++) {
		done_after(&ha, flood[p]);
		ck_assert_uint_eq(sh_shadow(&ha, flood[p]).errors, 64);
		for (uint32_t i = 0; i < 64; i++)
			ck_assert_uint_eq(sh_err(&ha, flood[p], i).status,
					  NVM_ST_UNREACHABLE);
	}
	ck_assert_uint_eq(ca.fw.nv.peer[2].dead, 1);
}
END_TEST

/* A node the mapper found gone (NVM_ROUTE_F_NONE): operations towards it
 * fail at once with UNREACHABLE and nothing is sent; a route brings it
 * back.  Bad flag combinations are refused. */
START_TEST(test_route_none)
{
	uint8_t before = *sh_byte(&hb, PB, DST + 5);
	struct nvm_cmd k = { .op = NVM_KOP_ROUTE, .dst_node = 1 };
	uint64_t sent;

	k.arg[1] = NVM_ROUTE_F_NONE;
	sh_cmd(&ha, NVM_EP_KERNEL, &k);
	finish(&ha, NVM_EP_KERNEL);
	ck_assert_uint_eq(sh_shadow(&ha, NVM_EP_KERNEL).errors, 0);
	sent = ca.fw.counters[FW_CNT_TX_BYTES];
	sh_fill(&ha, PA, SRC, 64, 9);
	sh_write(&ha, PA, 1, PB, SRC, DST + 5, 64, KEY_B, 0, 0);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_err(&ha, PA, 0).status, NVM_ST_UNREACHABLE);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_TX_BYTES], sent);
	ck_assert_uint_eq(*sh_byte(&hb, PB, DST + 5), before);

	/* refused: unknown flag, a route together with "none" */
	k.arg[1] = 2;
	sh_cmd(&ha, NVM_EP_KERNEL, &k);
	k.arg[1] = NVM_ROUTE_F_NONE;
	k.arg[0] = 1;
	k.inline_data[0] = 0x81;
	sh_cmd(&ha, NVM_EP_KERNEL, &k);
	finish(&ha, NVM_EP_KERNEL);
	ck_assert_uint_eq(sh_shadow(&ha, NVM_EP_KERNEL).errors, 2);

	/* an empty route again (back to back): the write goes through */
	memset(&k, 0, sizeof(k));
	k.op = NVM_KOP_ROUTE;
	k.dst_node = 1;
	sh_cmd(&ha, NVM_EP_KERNEL, &k);
	finish(&ha, NVM_EP_KERNEL);
	sh_write(&ha, PA, 1, PB, SRC, DST + 5, 64, KEY_B, 0, 0);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 1);
	ck_assert(sh_check(&hb, PB, DST + 5, 64, 9));
}
END_TEST

/* NVM_KOP_LOCK_HOLD, the test hook: the next page the NI locks for the
 * armed endpoint stays locked after the access until released, so the
 * host's unmapPPN sees the lock; one hold at a time; bad arguments refused. */
static uint32_t lock_hold(uint32_t port, uint32_t on)
{
	struct nvm_cmd k = { .op = NVM_KOP_LOCK_HOLD, .dst_port = port };
	uint32_t errors = sh_shadow(&ha, NVM_EP_KERNEL).errors;

	k.arg[0] = on;
	sh_cmd(&ha, NVM_EP_KERNEL, &k);
	finish(&ha, NVM_EP_KERNEL);
	return sh_shadow(&ha, NVM_EP_KERNEL).errors - errors;
}

START_TEST(test_lock_hold)
{
	uint8_t *pmap_lock = ca.chip.sram + ca.fw.layout.pmap_lock;

	ck_assert_uint_eq(lock_hold(PA, 1), 0);
	sh_fill(&ha, PA, SRC, 4096, 5);
	sh_write(&ha, PA, 1, PB, SRC, DST, 4096, KEY_B, 0, 0);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
	ck_assert(sh_check(&hb, PB, DST, 4096, 5));
	ck_assert_uint_ne(ca.fw.hold_ppn, 0);
	ck_assert_uint_eq(pmap_lock[ca.fw.hold_ppn - 1], 1);
	ck_assert(!sh_page_out(&ha, PA, SRC));	/* unmapPPN must wait */
	ck_assert_uint_eq(lock_hold(PA, 1), 1);	/* one hold at a time */
	ck_assert_uint_eq(lock_hold(PA, 0), 0);
	ck_assert_uint_eq(ca.fw.hold_ppn, 0);
	ck_assert(sh_page_out(&ha, PA, SRC));	/* let go: unmapped */
	/* another write is not held (the hold was used up) */
	sh_page_in(&ha, PA, SRC);
	sh_write(&ha, PA, 1, PB, SRC, DST + 4096, 4096, KEY_B, 0, 0);
	finish(&ha, PA);
	ck_assert(sh_check(&hb, PB, DST + 4096, 4096, 5));
	ck_assert(sh_page_out(&ha, PA, SRC));
	/* refused: not 0 or 1, a port past the endpoints */
	ck_assert_uint_eq(lock_hold(PA, 2), 1);
	ck_assert_uint_eq(lock_hold(FW_NV_EPS, 1), 1);
	ck_assert_uint_eq(ca.fw.hold_port, 0);
}
END_TEST

/* Tripwires (netvm/tripwire.h): set by the kernel, fired on exact ranges. */
static void tw_set(struct sim_host *h, uint32_t id, uint32_t flags,
		   uint16_t node, uint16_t port, uint64_t va, uint32_t len,
		   uint32_t owner)
{
	struct nvm_cmd k = {
		.op = NVM_KOP_TRIP_SET, .dst_node = node, .dst_port = port,
		.dst_va = va, .len = len,
	};

	k.arg[0] = id;
	k.arg[1] = flags;
	k.arg[2] = owner;
	sh_cmd(h, NVM_EP_KERNEL, &k);
	finish(h, NVM_EP_KERNEL);
}

static void tw_clear(struct sim_host *h, uint32_t id)
{
	struct nvm_cmd k = { .op = NVM_KOP_TRIP_CLEAR };

	k.arg[0] = id;
	sh_cmd(h, NVM_EP_KERNEL, &k);
	finish(h, NVM_EP_KERNEL);
}

static void tw_expect(struct sim_host *h, uint32_t port, uint32_t id,
		      uint32_t info, uint16_t by_node, uint16_t by_port)
{
	struct nvm_notf_entry e;

	ck_assert_msg(sh_notf_next(h, port, &e), "tripwire %u did not fire", id);
	ck_assert_uint_eq(e.kind, NVM_NOTF_KIND_TRIP);
	ck_assert_uint_eq(e.notify, id + 1);
	ck_assert_uint_eq(e.info, info);
	ck_assert_uint_eq(e.src_node, by_node);
	ck_assert_uint_eq(e.src_port, by_port);
}

START_TEST(test_tripwires)
{
	struct nvm_notf_entry e;

	/* on B's memory: writes to [DST+100, DST+164); reads at DST+4000 */
	tw_set(&hb, 7, NVM_TW_WRITE, 1, PB, DST + 100, 64, PB);
	tw_set(&hb, 8, NVM_TW_READ | NVM_TW_ONCE, 1, PB, DST + 4000, 96, PB);
	ck_assert_uint_eq(sh_shadow(&hb, NVM_EP_KERNEL).errors, 0);
	/* just outside on both sides, and a read of the write-only range */
	sh_write(&ha, PA, 1, PB, SRC, DST, 100, KEY_B, 0, 0);
	sh_write(&ha, PA, 1, PB, SRC, DST + 164, 100, KEY_B, 0, 0);
	sh_read(&ha, PA, 1, PB, SRC, DST + 100, 64, KEY_B);
	finish(&ha, PA);
	ck_assert(!sh_notf_next(&hb, PB, &e));
	/* the last byte of the range: fires, naming the writer */
	sh_fill(&ha, PA, SRC, 8000, 4);
	sh_write(&ha, PA, 1, PB, SRC, DST + 163, 1, KEY_B, 0, 0);
	finish(&ha, PA);
	tw_expect(&hb, PB, 7, NVM_TW_WRITE, 0, PA);
	ck_assert(!sh_notf_next(&hb, PB, &e));
	/* a two-page write covers both tripwires; only 7 watches writes */
	sh_write(&ha, PA, 1, PB, SRC, DST + 50, 8000, KEY_B, 0, 0);
	finish(&ha, PA);
	tw_expect(&hb, PB, 7, NVM_TW_WRITE, 0, PA);
	ck_assert(!sh_notf_next(&hb, PB, &e));
	ck_assert(sh_check(&hb, PB, DST + 50, 8000, 4));
	/* reads: the once-only tripwire fires for the first only */
	sh_read(&ha, PA, 1, PB, SRC, DST + 4090, 10, KEY_B);
	sh_read(&ha, PA, 1, PB, SRC, DST + 4000, 1, KEY_B);
	finish(&ha, PA);
	tw_expect(&hb, PB, 8, NVM_TW_READ, 0, PA);
	ck_assert(!sh_notf_next(&hb, PB, &e));
	/* an atomic is a read and a write */
	tw_set(&hb, 9, NVM_TW_READ, 1, PB, DST + 200, 4, PB);
	sh_atomic(&ha, PA, 1, PB, DST + 200, KEY_B, NVM_AT_INC, 0, 0);
	finish(&ha, PA);
	tw_expect(&hb, PB, 9, NVM_TW_READ | NVM_TW_WRITE, 0, PA);
	/* cleared: silent */
	tw_clear(&hb, 7);
	sh_write(&ha, PA, 1, PB, SRC, DST + 100, 64, KEY_B, 0, 0);
	finish(&ha, PA);
	ck_assert(!sh_notf_next(&hb, PB, &e));
	ck_assert_uint_eq(sh_shadow(&hb, NVM_EP_KERNEL).errors, 0);

	/* outgoing: A watches its own writes to B's page */
	tw_set(&ha, 100, NVM_TW_WRITE | NVM_TW_OUTGOING, 1, PB, DST + 8192,
	       4096, PA);
	sh_write(&ha, PA, 1, PB, SRC, DST + 8192 + 4000, 10, KEY_B, 0, 0);
	finish(&ha, PA);
	tw_expect(&ha, PA, 100, NVM_TW_WRITE | NVM_TW_OUTGOING, 1, PB);
	ck_assert_uint_eq(ca.fw.counters[FW_CNT_TRIPWIRES], 1);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_TRIPWIRES], 4);

	/* refused, each counted as an error on the kernel endpoint */
	tw_set(&hb, NVM_TW_MAX, NVM_TW_WRITE, 1, PB, DST, 8, PB);
	tw_set(&hb, 9, NVM_TW_WRITE, 1, PB, DST, 8, PB);	/* id in use */
	tw_set(&hb, 10, NVM_TW_WRITE, 1, PB, DST, 0, PB);	/* empty */
	tw_set(&hb, 10, NVM_TW_WRITE, 1, PB, DST + 4000, 97, PB); /* 2 pages */
	tw_set(&hb, 10, NVM_TW_WRITE, 0, PB, DST, 8, PB);	/* not ours */
	tw_set(&hb, 10, NVM_TW_WRITE | NVM_TW_OUTGOING, 1, PB, DST, 8, PB);
	tw_set(&hb, 10, 0, 1, PB, DST, 8, PB);			/* no access */
	tw_set(&hb, 10, 0x40 | NVM_TW_WRITE, 1, PB, DST, 8, PB);
	tw_set(&hb, 10, NVM_TW_WRITE, 1, PB, DST, 8, 5);	/* owner closed */
	tw_clear(&hb, 7);					/* not set */
	ck_assert_uint_eq(sh_shadow(&hb, NVM_EP_KERNEL).errors, 10);
}
END_TEST

/* All NVM_TW_MAX at once, on one page each of many; each fires alone. */
START_TEST(test_tripwire_table_full)
{
	struct nvm_notf_entry e;

	for (uint32_t id = 0; id < NVM_TW_MAX; id++)
		tw_set(&hb, id, NVM_TW_WRITE, 1, PB,
		       DST + (id % 200) * 4096 + (id / 200) * 16, 16, PB);
	ck_assert_uint_eq(sh_shadow(&hb, NVM_EP_KERNEL).errors, 0);
	ck_assert_uint_eq(cb.fw.tw.count, NVM_TW_MAX);
	for (uint32_t id = 5; id < NVM_TW_MAX; id += 997) {
		sh_write(&ha, PA, 1, PB, SRC,
			 DST + (id % 200) * 4096 + (id / 200) * 16 + 3, 4,
			 KEY_B, 0, 0);
		finish(&ha, PA);
		tw_expect(&hb, PB, id, NVM_TW_WRITE, 0, PA);
		ck_assert(!sh_notf_next(&hb, PB, &e));
	}
}
END_TEST

/* More operations than a peer's share of the tx buffers (and its window):
 * credit stalls, nothing lost. */
START_TEST(test_window_exhaustion)
{
	const uint32_t ports[] = { PA, 3, 4, 5 };

	for (int p = 1; p < 4; p++) {
		sh_open(&ha, ports[p]);
		sh_alloc(&ha, ports[p], SRC, 64 * 4096, KEY_A, true);
	}
	settle();
	for (int p = 0; p < 4; p++)
		sh_fill(&ha, ports[p], SRC, 64 * 4096, 60 + p);
	/* the receiver stops taking frames: what requests may hold of the
	 * peer's share of the tx buffers fills (before its window of
	 * FW_NV_WIN) and stays full */
	cb.rx_enabled = false;
	for (int i = 0; i < 60; i++)
		for (int p = 0; p < 4; p++)
			sh_write(&ha, ports[p], 1, PB, SRC + i * 4096,
				 DST + (p * 60 + i) * 4096 % BUFLEN, 4096, KEY_B,
				 0, 0);
	sim_run(&ca, &cb, 5000);
	ck_assert_uint_eq(ca.fw.nv.peer[1].next_seq - ca.fw.nv.peer[1].una,
			  FW_NV_TX_REQ_PEER);
	ck_assert_uint_eq(sim_tx_held(&ca, 1), FW_NV_TX_REQ_PEER);
	ck_assert_uint_gt(ca.fw.counters[FW_CNT_CREDIT_STALLS], 0);
	{
		/* per endpoint too: at most once per command */
		uint32_t sum = 0;

		for (int p = 0; p < 4; p++) {
			uint32_t n = ca.fw.nv.ep[ports[p]].credit_stalls;

			ck_assert_uint_le(n, 60);
			sum += n;
		}
		ck_assert_uint_gt(sum, 0);
	}
	cb.rx_enabled = true;
	for (int p = 0; p < 4; p++)
		finish(&ha, ports[p]);
	for (int p = 0; p < 4; p++) {
		ck_assert_uint_eq(sh_shadow(&ha, ports[p]).errors, 0);
		for (int i = 0; i < 60; i++) {
			uint32_t d = (p * 60 + i) * 4096 % BUFLEN;

			ck_assert(!memcmp(sh_byte(&hb, PB, DST + d),
					  sh_byte(&ha, ports[p], SRC + i * 4096),
					  4096));
		}
	}
}
END_TEST

/* A wire that drops, duplicates and reorders: every byte verified,
 * notifications exactly once and in order. */
static void lossy_setup(void)
{
	setup_with(5, 5, 10);
}

START_TEST(test_lossy_wire)
{
	struct nvm_notf_entry e;
	uint32_t seed = 200;

	for (int round = 0; round < 30; round++) {
		uint32_t n = 1 + (round * 7919) % 20000;

		sh_fill(&ha, PA, SRC, n, seed + round);
		sh_write(&ha, PA, 1, PB, SRC, DST + round * 100, n, KEY_B,
			 NVM_CF_NOTIFY, 2000 + round);
		finish(&ha, PA);
		ck_assert_msg(sh_check(&hb, PB, DST + round * 100, n,
				       seed + round), "round %d", round);
		sh_fill(&hb, PB, DST + 200000, n, seed + 1000 + round);
		sh_read(&ha, PA, 1, PB, SRC + 300000, DST + 200000, n, KEY_B);
		finish(&ha, PA);
		ck_assert(sh_check(&ha, PA, SRC + 300000, n, seed + 1000 + round));
	}
	for (int round = 0; round < 30; round++) {
		ck_assert(sh_notf_next(&hb, PB, &e));
		ck_assert_uint_eq(e.notify, 2000 + round);
	}
	ck_assert(!sh_notf_next(&hb, PB, &e));
	/*
	 * Increments are not idempotent: one applied twice (a duplicate of
	 * a request taken again) shows in the count.  One at a time, and in
	 * bursts of 16 so that duplicates arrive while earlier requests are
	 * still missing (inside the window, where only the seen bits guard).
	 */
	{
		uint32_t *w = (uint32_t *)sh_byte(&hb, PB, DST + 400000);

		w[0] = 0;
		for (uint32_t i = 0; i < 50; i++) {
			sh_atomic(&ha, PA, 1, PB, DST + 400000, KEY_B,
				  NVM_AT_INC, 0, 0);
			finish(&ha, PA);
			ck_assert_uint_eq(sh_reply(&ha, PA).r[0], i);
		}
		for (uint32_t i = 0; i < 20; i++) {
			for (int k = 0; k < 16; k++)
				sh_atomic(&ha, PA, 1, PB, DST + 400000, KEY_B,
					  NVM_AT_INC, 0, 0);
			finish(&ha, PA);
		}
		ck_assert_uint_eq(w[0], 50 + 20 * 16);
	}
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
	ck_assert_uint_gt(ca.frames_dropped + cb.frames_dropped, 0);
	ck_assert_uint_gt(ca.fw.counters[FW_CNT_RETRANSMITS] +
			  cb.fw.counters[FW_CNT_RETRANSMITS], 0);
	ck_assert_uint_gt(ca.fw.counters[FW_CNT_DUPLICATES] +
			  cb.fw.counters[FW_CNT_DUPLICATES], 0);
}
END_TEST

/*
 * Failed and good writes mixed on a lossy wire: each failure is reported
 * as such (never as the success an ACK would mean), each good write lands
 * and notifies in order.
 */
START_TEST(test_lossy_errors)
{
	struct nvm_notf_entry e;
	uint32_t bad = 0;

	for (int round = 0; round < 40; round++) {
		bool fail = round % 3 == 1;
		/* a failure in one command (one page), so one error record */
		uint32_t n = fail ? 1 + round : 1 + (round * 1237) % 6000;

		sh_fill(&ha, PA, SRC, n, 700 + round);
		sh_write(&ha, PA, 1, PB, SRC, DST + round * 64, n,
			 fail ? KEY_B ^ 2 : KEY_B,
			 NVM_CF_NOTIFY | (round & 1 ? NVM_CF_ACK_NOW : 0),
			 3000 + round);
		finish(&ha, PA);
		ck_assert_uint_eq(sh_shadow(&ha, PA).errors, bad + fail);
		if (fail) {
			ck_assert_uint_eq(sh_err(&ha, PA, bad).status,
					  NVM_ST_BAD_KEY);
			bad++;
		} else {
			ck_assert_msg(sh_check(&hb, PB, DST + round * 64, n,
					       700 + round), "round %d", round);
		}
	}
	for (int round = 0; round < 40; round++) {
		if (round % 3 == 1)
			continue;
		ck_assert(sh_notf_next(&hb, PB, &e));
		ck_assert_uint_eq(e.notify, 3000 + round);
	}
	ck_assert(!sh_notf_next(&hb, PB, &e));
	ck_assert_uint_gt(ca.frames_dropped + cb.frames_dropped, 0);
}
END_TEST

/*
 * The mapper finds node 1 gone while A's writes to it are in flight:
 * they fail at once (not at the give-up), and no frame goes to it any
 * more, retransmissions and ACKs included.
 */
START_TEST(test_route_gone_inflight)
{
	struct nvm_cmd k = { .op = NVM_KOP_ROUTE, .dst_node = 1 };
	uint64_t t0;
	uint32_t sent;

	cb.rx_enabled = false;
	sh_write(&ha, PA, 1, PB, SRC, DST, 8192, KEY_B, 0, 0);
	sim_run(&ca, &cb, 200);
	ck_assert_uint_eq(sh_shadow(&ha, PA).done, 0);
	k.arg[1] = NVM_ROUTE_F_NONE;
	t0 = now_ms();
	sh_cmd(&ha, NVM_EP_KERNEL, &k);
	sim_run(&ca, &cb, 200);
	ck_assert_uint_eq(now_ms(), t0);
	ck_assert_uint_eq(sh_shadow(&ha, PA).done, ha.issued[PA]);
	for (uint32_t i = 0; i < ha.issued[PA]; i++)
		ck_assert_uint_eq(sh_err(&ha, PA, i).status, NVM_ST_UNREACHABLE);
	ck_assert_uint_eq(sh_shadow(&ha, NVM_EP_KERNEL).errors, 0);
	sent = ca.frames_sent;
	sim_settle_for(&ca, &cb, 2000000000ull);
	ck_assert_uint_eq(ca.frames_sent, sent);
}
END_TEST

/* The peer restarts: outstanding operations fail, later ones work. */
START_TEST(test_peer_reset)
{
	/* A knows B (and its epoch) from a first exchange */
	sh_write(&ha, PA, 1, PB, SRC, DST, 64, KEY_B, 0, 0);
	finish(&ha, PA);
	/* B goes silent with A's writes in flight */
	cb.drop_pct = 100;
	ca.drop_pct = 100;
	sh_fill(&ha, PA, SRC, 4096, 77);
	sh_write(&ha, PA, 1, PB, SRC, DST, 4096, KEY_B, 0, 0);
	sim_run(&ca, &cb, 2000);
	ck_assert_uint_eq(sh_shadow(&ha, PA).done, ha.issued[PA] - 1);
	/* B reboots with a new epoch */
	fw_halt(&cb.fw);
	sim_boot(&cb);
	sh_init(&hb, &cb, 0xb1b1b1b1);
	ca.drop_pct = cb.drop_pct = 0;
	settle();
	sh_open(&hb, PB);
	sh_alloc(&hb, PB, DST, 8192, KEY_B, true);
	settle();
	/* A learns of the reset from B's next packet: B writes to A */
	sh_write(&hb, PB, 0, PA, DST, SRC + 8192, 16, KEY_A, 0, 0);
	finish(&hb, PB);
	finish(&ha, PA);
	ck_assert_uint_eq(sh_err(&ha, PA, 0).status, NVM_ST_PEER_RESET);
	ck_assert_uint_ge(ca.fw.counters[FW_CNT_PEER_RESETS], 1);
	/* and the pair works again */
	sh_write(&ha, PA, 1, PB, SRC, DST, 4096, KEY_B, 0, 0);
	finish(&ha, PA);
	ck_assert(sh_check(&hb, PB, DST, 4096, 77));
}
END_TEST

/* Migration, firmware side: the saved block of struct fw plus SRAM is all
 * the state there is.  Copy chip B into a fresh chip mid-transfer, the
 * way QEMU restores it, and the transfer completes. */
START_TEST(test_state_copy)
{
	static struct sim_chip nb;

	sh_fill(&ha, PA, SRC, 65536, 91);
	sh_write(&ha, PA, 1, PB, SRC, DST, 65536, KEY_B, NVM_CF_NOTIFY, 3000);
	sim_run(&ca, &cb, 12);		/* some of it is on its way */
	ck_assert_uint_lt(sh_shadow(&ha, PA).done, ha.issued[PA]);

	sim_init(&nb, 1, LANAI_SRAM_DEFAULT);
	memcpy(nb.chip.sram, cb.chip.sram, LANAI_SRAM_DEFAULT);
	memcpy(nb.host, cb.host, SIM_HOST_SIZE);
	memcpy((uint8_t *)&nb.fw + FW_SAVED_OFFSET,
	       (uint8_t *)&cb.fw + FW_SAVED_OFFSET, FW_SAVED_SIZE);
	/* the chip's own registers and engines, as the device's VMState has */
	nb.isr = cb.isr;
	nb.hdma_pending = cb.hdma_pending;
	nb.hdma_desc = cb.hdma_desc;
	nb.send_pending = cb.send_pending;
	nb.send_off = cb.send_off;
	nb.send_len = cb.send_len;
	nb.rx_ring = cb.rx_ring;
	nb.rx_slots = cb.rx_slots;
	nb.rx_slot_size = cb.rx_slot_size;
	nb.rx_next = cb.rx_next;
	nb.rx_enabled = cb.rx_enabled;
	memcpy(nb.timer_at, cb.timer_at, sizeof(nb.timer_at));
	nb.now_ns = cb.now_ns;
	nb.nevents = cb.nevents;
	memcpy(nb.events, cb.events, sizeof(cb.events));
	while (cb.wire_count) {		/* frames on the wire stay there */
		nb.wire[(nb.wire_head + nb.wire_count) % SIM_WIRE_MAX] =
			cb.wire[cb.wire_head];
		cb.wire_head = (cb.wire_head + 1) % SIM_WIRE_MAX;
		cb.wire_count--;
		nb.wire_count++;
	}
	/* the old chip goes away; the new one takes its place (and its
	 * buffers): rebind the pointers, as the device's post_load does */
	sim_free(&cb);
	memcpy(&cb, &nb, sizeof(cb));
	cb.chip.opaque = &cb;
	cb.fw.chip = &cb.chip;
	sim_connect(&ca, &cb);
	finish(&ha, PA);
	ck_assert(sh_check(&hb, PB, DST, 65536, 91));
	ck_assert_uint_eq(sh_shadow(&ha, PA).errors, 0);
	{
		struct nvm_notf_entry e;

		ck_assert(sh_notf_next(&hb, PB, &e) && e.notify == 3000);
	}
}
END_TEST

/*
 * The guest's stress under faults (tests/guest/test_fabric.py), on the
 * firmware alone: both kernels at once writeP 128 KiB into the other's
 * window, read it back and compare, page commands with at most 32 in
 * flight as the driver issues them (SHADOW every 32nd and on the last,
 * ACK_NOW on a transfer's last write), on a wire that drops 1 %,
 * duplicates 2 % and reorders 5 % of the frames, for 40 seeds.  Every
 * command completes without an error and every byte comes back.
 * (When both read at once, each node's 32 reads held its whole tx share
 * for their data; the peer's reads it had taken (16, its pending quota)
 * found no buffer for their answers, the rest were dropped over the
 * quota unacknowledged, and at the give-up each node marked the other
 * dead: NVM_ST_UNREACHABLE on both sides, in 35 seeds of 40; on a
 * clean wire in all 40, the two scripts running in step here.)
 */
#define XFER_PAGES	32
#define XFER_LEN	(XFER_PAGES * NVM_PAGE_SIZE)

struct xfer_node {
	struct sim_host *h;
	uint16_t peer;
	uint64_t win;		/* src | peer's target | read-back, each XFER_LEN */
	uint64_t peer_win;
	int phase;		/* 0 write, 1 read back */
	int round;
	uint32_t posted;
};

static void xfer_post(struct xfer_node *x)
{
	uint8_t op = x->phase == 0 ? NVM_OP_WRITE : NVM_OP_READ;
	uint32_t i = x->posted;
	struct nvm_cmd c = {
		.op = op, .flags = NVM_CF_PHYS, .dst_node = x->peer,
		.dst_port = NVM_EP_KERNEL, .len = NVM_PAGE_SIZE, .nfrag = 1,
		.dst_va = x->peer_win + XFER_LEN + i * NVM_PAGE_SIZE,
	};

	c.src[0].va = x->win + (op == NVM_OP_WRITE ? 0 : 2 * XFER_LEN) +
		      i * NVM_PAGE_SIZE;
	c.src[0].len = NVM_PAGE_SIZE;
	if (i + 1 == XFER_PAGES || (x->h->issued[0] + 1) % 32 == 0)
		c.flags |= NVM_CF_SHADOW;
	if (i + 1 == XFER_PAGES && op == NVM_OP_WRITE)
		c.flags |= NVM_CF_ACK_NOW;
	sh_cmd(x->h, 0, &c);
	x->posted++;
}

/* Move one node's script on as far as its completions allow. */
static void xfer_step(struct xfer_node *x, uint32_t seed)
{
	struct nvm_shadow sh = sh_shadow(x->h, 0);
	uint8_t *src = sim_host(x->h->c, x->win);
	uint8_t *back = sim_host(x->h->c, x->win + 2 * XFER_LEN);
	uint32_t node = x->h->c->fw.chip->node_id;

	while (x->round < 3) {
		if (x->posted == 0) {
			/* each node's own pattern, each round's own */
			if (x->phase == 0)
				for (uint32_t i = 0; i < XFER_LEN; i++)
					src[i] = (uint8_t)(i * 7 + seed +
							   x->round * 3 + node * 101);
			else
				memset(back, 0, XFER_LEN);
		}
		while (x->posted < XFER_PAGES &&
		       x->h->issued[0] - sh.done < 32)
			xfer_post(x);
		if (x->posted < XFER_PAGES || sh.done != x->h->issued[0])
			return;
		ck_assert_msg(sh.errors == 0, "node %u round %d %s: %u errors, "
			      "the first status %u (seed %u)", node, x->round,
			      x->phase ? "read" : "write", sh.errors,
			      sh_err(x->h, 0, 0).status, seed);
		if (x->phase == 1)
			ck_assert_msg(!memcmp(src, back, XFER_LEN), "node %u "
				      "round %d: read back differs (seed %u)",
				      node, x->round, seed);
		x->posted = 0;
		x->phase ^= 1;
		if (!x->phase)
			x->round++;
	}
}

static void crossed_setup(void)
{
	setup_with(1, 2, 5);
}

START_TEST(test_lossy_crossed_phys)
{
	uint64_t wa = sh_kalloc(&ha, 3 * XFER_PAGES);
	uint64_t wb = sh_kalloc(&hb, 3 * XFER_PAGES);
	uint32_t seed = 1000 + (uint32_t)_i;
	struct xfer_node x[2] = {
		{ .h = &ha, .peer = 1, .win = wa, .peer_win = wb },
		{ .h = &hb, .peer = 0, .win = wb, .peer_win = wa },
	};
	uint64_t t0;

	sh_phys_win(&ha, 0, wa, 3 * XFER_LEN, 1u << 1,
		    NVM_PW_READ | NVM_PW_WRITE);
	sh_phys_win(&hb, 0, wb, 3 * XFER_LEN, 1u << 0,
		    NVM_PW_READ | NVM_PW_WRITE);
	settle();
	ca.rng = 0x9e3779b97f4a7c15ull * (seed * 2 + 1);
	cb.rng = 0x9e3779b97f4a7c15ull * (seed * 2 + 2);
	t0 = now_ms();
	while (x[0].round < 3 || x[1].round < 3) {
		xfer_step(&x[0], seed);
		xfer_step(&x[1], seed);
		ck_assert_msg(now_ms() - t0 < 60000, "seed %u: stuck, node 0 "
			      "round %d phase %d, node 1 round %d phase %d",
			      seed, x[0].round, x[0].phase, x[1].round,
			      x[1].phase);
		sim_settle_for(&ca, &cb, 10000000);
	}
}
END_TEST

static Suite *netvm_suite(void)
{
	Suite *s = suite_create("firmware-netvm");
	TCase *tc;

#define CASE(fn, fix, secs) do { tc = tcase_create(#fn + 5); \
	tcase_set_timeout(tc, secs); \
	tcase_add_checked_fixture(tc, fix, teardown); \
	tcase_add_test(tc, fn); suite_add_tcase(s, tc); } while (0)
	CASE(test_config, setup, 120);
	CASE(test_write_sizes, setup, 120);
	CASE(test_every_size, setup, 300);
	CASE(test_fence, setup, 120);
	CASE(test_gather, setup, 120);
	CASE(test_read_sizes, setup, 120);
	CASE(test_atomics, setup, 120);
	CASE(test_atomic_contention, setup, 120);
	CASE(test_waitqueue, setup, 120);
	CASE(test_extended_contention, setup, 120);
	CASE(test_notifications, setup, 120);
	CASE(test_arm_at_landing, setup, 120);
	CASE(test_write_answered_by_ack, setup, 120);
	CASE(test_source_page_miss, setup, 120);
	CASE(test_local_miss_fails, setup, 120);
	CASE(test_dest_bounce, setup, 120);
	CASE(test_miss_after_read_slot, setup, 120);
	CASE(test_read_remote_miss, setup, 120);
	CASE(test_protection, setup, 120);
	CASE(test_physical, setup, 120);
	CASE(test_phys_windows, setup, 120);
	CASE(test_phys_forged, setup, 120);
	CASE(test_forged_response, setup, 120);
	CASE(test_forged_requests, setup, 120);
	CASE(test_peer_silent, setup, 120);
	CASE(test_giveup_settable, short_giveup_setup, 120);
	CASE(test_giveup_late_timers, setup, 120);
	CASE(test_peer_never_answers, setup, 120);
	CASE(test_flood_one_peer, setup, 120);
	CASE(test_tx_share, setup, 120);
	CASE(test_tick_state_clamped, setup, 120);
	CASE(test_route_none, setup, 120);
	CASE(test_route_gone_inflight, setup, 120);
	CASE(test_lock_hold, setup, 120);
	CASE(test_tripwires, setup, 120);
	CASE(test_tripwire_table_full, setup, 300);
	CASE(test_window_exhaustion, setup, 120);
	CASE(test_peer_reset, setup, 120);
	CASE(test_state_copy, setup, 120);
	CASE(test_lossy_wire, lossy_setup, 300);
	CASE(test_lossy_errors, lossy_setup, 300);
	tc = tcase_create("lossy_crossed_phys");
	tcase_set_timeout(tc, 600);
	tcase_add_checked_fixture(tc, crossed_setup, teardown);
	tcase_add_loop_test(tc, test_lossy_crossed_phys, 0, 40);
	suite_add_tcase(s, tc);
#undef CASE
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(netvm_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
