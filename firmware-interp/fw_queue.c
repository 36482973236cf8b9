// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host DMA job queue and send queue: one engine each, many users.
 * Jobs run in submission order; each job owns FW_HDMA_DESCS descriptors in
 * the SRAM descriptor area, chained and started as one host DMA chain.
 */
#include <string.h>

#include "fw.h"
#include "fw_load.h"

const struct fw_job_kind fw_job_kinds[FW_JOB_COUNT] = {
	[FW_JOB_NONE] = { "none", FW_PROG_COUNT },
	[FW_JOB_RAW_TX] = { "raw_tx", FW_PROG_RAW },
	[FW_JOB_RAW_RX] = { "raw_rx", FW_PROG_RAW },
	[FW_JOB_NV_FETCH] = { "nv_fetch", FW_PROG_NV },
	[FW_JOB_NV_DELIVER] = { "nv_deliver", FW_PROG_NV },
	[FW_JOB_NV_READ_FETCH] = { "nv_read_fetch", FW_PROG_NV },
	[FW_JOB_NV_ATOMIC_IN] = { "nv_atomic_in", FW_PROG_NV },
	[FW_JOB_NV_ATOMIC_OUT] = { "nv_atomic_out", FW_PROG_NV },
	[FW_JOB_NV_HOSTWRITE] = { "nv_hostwrite", FW_PROG_NV },
	[FW_JOB_NV_BOUNCE] = { "nv_bounce", FW_PROG_NV },
	[FW_JOB_UNET_FETCH] = { "unet_fetch", FW_PROG_UNET },
	[FW_JOB_UNET_RX] = { "unet_rx", FW_PROG_UNET },
	[FW_JOB_UNET_DIVERT] = { "unet_divert", FW_PROG_UNET },
	[FW_JOB_UNET_KFETCH] = { "unet_kfetch", FW_PROG_UNET },
};

static uint32_t desc_off(struct fw *fw, int slot, uint32_t i)
{
	return fw->layout.dma_descs +
	       ((uint32_t)slot * FW_HDMA_DESCS + i) * sizeof(struct lanai_dma_desc);
}

int fw_hdma_alloc(struct fw *fw, uint32_t kind, uint32_t arg)
{
	for (int i = 0; i < FW_HDMA_SLOTS; i++) {
		struct fw_hdma_job *j = &fw->q.hdma[i];

		if (j->kind == FW_JOB_NONE) {
			j->kind = kind;
			j->arg = arg;
			j->ndesc = 0;
			return i;
		}
	}
	return -1;
}

void fw_hdma_cancel(struct fw *fw, int slot)
{
	fw->q.hdma[slot].kind = FW_JOB_NONE;
}

uint32_t fw_hdma_free_slots(struct fw *fw)
{
	uint32_t n = 0;

	for (int i = 0; i < FW_HDMA_SLOTS; i++)
		n += fw->q.hdma[i].kind == FW_JOB_NONE;
	return n;
}

void fw_hdma_add(struct fw *fw, int slot, uint32_t flags, uint32_t len,
		 uint32_t sram, uint64_t host)
{
	struct fw_hdma_job *j = &fw->q.hdma[slot];
	uint32_t n = j->ndesc;
	struct lanai_dma_desc d = {
		.next = flags & LANAI_DMA_E2L,
		.len = len,
		.lar = sram,
		.eah = (uint32_t)(host >> 32),
		.eal = (uint32_t)host,
		.status = NVM_DMA_ST_PENDING,
	};

	if (n >= FW_HDMA_DESCS)
		return;		/* callers never exceed it; stay safe */
	if (n > 0) {
		/* chain the previous descriptor to this one */
		uint32_t prev = desc_off(fw, slot, n - 1);
		uint32_t pnext = fw_sram_rd32(fw->chip, prev);

		fw_sram_wr32(fw->chip, prev, (pnext & LANAI_DMA_E2L) |
			     desc_off(fw, slot, n));
	}
	memcpy(fw->chip->sram + desc_off(fw, slot, n), &d, sizeof(d));
	j->ndesc = n + 1;
}

static void fw_hdma_start_next(struct fw *fw)
{
	struct fw_queues *q = &fw->q;
	uint32_t slot, n, last;

	if (q->hdma_running || !q->hdma_count)
		return;
	slot = q->hdma_order[q->hdma_head];
	q->hdma_head = (q->hdma_head + 1) % FW_HDMA_SLOTS;
	q->hdma_count--;
	n = q->hdma[slot].ndesc;
	q->hdma_running = slot + 1;
	if (n == 0) {
		/* an empty job completes at once */
		fw_queues_hdma_done(fw);
		return;
	}
	last = desc_off(fw, (int)slot, n - 1);
	fw_sram_wr32(fw->chip, last, (fw_sram_rd32(fw->chip, last) &
				       LANAI_DMA_E2L) | LANAI_DMA_TERMINAL |
		     LANAI_DMA_WAKE);
	fw->chip->ops->host_dma_start(fw->chip->opaque,
				      desc_off(fw, (int)slot, 0));
}

void fw_hdma_submit(struct fw *fw, int slot)
{
	struct fw_queues *q = &fw->q;

	q->hdma_order[(q->hdma_head + q->hdma_count) % FW_HDMA_SLOTS] = slot;
	q->hdma_count++;
	fw_hdma_start_next(fw);
}

void fw_queues_hdma_done(struct fw *fw)
{
	struct fw_queues *q = &fw->q;
	struct fw_hdma_job *j;
	uint32_t slot, status = NVM_DMA_ST_DONE, kind, arg;

	if (!q->hdma_running)
		return;
	slot = q->hdma_running - 1;
	j = &q->hdma[slot];
	{
		/* the first descriptor that did not complete decides */
		for (uint32_t i = 0; i < j->ndesc && i < FW_HDMA_DESCS; i++) {
			uint32_t st = fw_sram_rd32(fw->chip, desc_off(fw, (int)slot, i) +
						   offsetof(struct lanai_dma_desc, status));
			if (st != NVM_DMA_ST_DONE) {
				status = st ? st : NVM_DMA_ST_ERR_CHAIN;
				break;
			}
		}
	}
	kind = j->kind;
	arg = j->arg;
	j->kind = FW_JOB_NONE;
	q->hdma_running = 0;
	if (status != NVM_DMA_ST_DONE)
		fw_count(fw, FW_CNT_HOST_DMA_ERR);
	if (kind != FW_JOB_NONE && kind < FW_JOB_COUNT) {
		const struct fw_program *prog =
			fw_programs[fw_job_kinds[kind].prog];

		if (prog->job_done)
			prog->job_done(fw, kind, arg, status);
	}
	fw_hdma_start_next(fw);
}

static void fw_send_start_next(struct fw *fw)
{
	struct fw_queues *q = &fw->q;
	struct fw_send_entry *e;

	if (q->send_running || !q->send_count)
		return;
	e = &q->sendq[q->send_head];
	q->send_running = 1;
	fw->chip->ops->send_start(fw->chip->opaque, e->off, e->len);
}

bool fw_send_submit(struct fw *fw, uint32_t prog, uint32_t arg, uint32_t off,
		    uint32_t len)
{
	struct fw_queues *q = &fw->q;
	struct fw_send_entry *e;

	if (q->send_count == FW_SENDQ_LEN)
		return false;
	e = &q->sendq[(q->send_head + q->send_count) % FW_SENDQ_LEN];
	e->kind = prog;
	e->arg = arg;
	e->off = off;
	e->len = len;
	q->send_count++;
	fw_send_start_next(fw);
	return true;
}

uint32_t fw_sendq_room(struct fw *fw)
{
	return FW_SENDQ_LEN - fw->q.send_count;
}

void fw_queues_send_done(struct fw *fw)
{
	struct fw_queues *q = &fw->q;
	struct fw_send_entry e;

	if (!q->send_running)
		return;
	e = q->sendq[q->send_head];
	q->send_head = (q->send_head + 1) % FW_SENDQ_LEN;
	q->send_count--;
	q->send_running = 0;
	if (e.kind < FW_PROG_COUNT && fw_programs[e.kind]->sent)
		fw_programs[e.kind]->sent(fw, e.arg);
	fw_send_start_next(fw);
}

void fw_queues_reset(struct fw *fw)
{
	memset(&fw->q, 0, sizeof(fw->q));
}

/* The engine queues (fw_queue.c): FIFO positions, job slots, kinds. */
static bool hdma_ok(const struct fw_queues *q, const char **what)
{
	FW_LOAD_CHECK(q->hdma_head < FW_HDMA_SLOTS);
	FW_LOAD_CHECK(q->hdma_count <= FW_HDMA_SLOTS);
	FW_LOAD_CHECK(q->hdma_running <= FW_HDMA_SLOTS);
	for (uint32_t i = 0; i < FW_HDMA_SLOTS; i++) {
		FW_LOAD_CHECK(q->hdma[i].kind < FW_JOB_COUNT);
		FW_LOAD_CHECK(q->hdma[i].ndesc <= FW_HDMA_DESCS);
		FW_LOAD_CHECK(q->hdma_order[i] < FW_HDMA_SLOTS);
	}
	return true;
}

static bool sendq_ok(const struct fw *fw, const char **what)
{
	const struct fw_queues *q = &fw->q;

	FW_LOAD_CHECK(q->send_head < FW_SENDQ_LEN);
	FW_LOAD_CHECK(q->send_count <= FW_SENDQ_LEN);
	for (uint32_t n = 0; n < q->send_count; n++) {
		const struct fw_send_entry *e =
			&q->sendq[(q->send_head + n) % FW_SENDQ_LEN];

		FW_LOAD_CHECK(e->kind < FW_PROG_COUNT);
		/* a program that sends frames: the only ones that queue any */
		FW_LOAD_CHECK(fw_programs[e->kind]->sent != NULL);
		/* handed to the send engine as an SRAM range */
		FW_LOAD_CHECK(fw_sram_range_ok(fw->chip, e->off, e->len));
	}
	return true;
}

bool fw_queues_state_ok(const struct fw *fw, const char **what)
{
	return hdma_ok(&fw->q, what) && sendq_ok(fw, what);
}
