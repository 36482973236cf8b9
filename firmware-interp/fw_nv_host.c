// SPDX-License-Identifier: GPL-2.0-only
/*
 * Small writes into host memory (shadow counters, error records, atomic
 * replies, notification queue entries), and notification delivery.
 *
 * Notifications 1..1023 count events: the NI increments sig[n] in the
 * endpoint's SRAM; the process acknowledges in ack[n].  When sig becomes
 * ack + 1 (the first unacknowledged event) the NI also queues n in the
 * endpoint's notification queue, and interrupts if n is armed and the
 * sender did not ask for no interrupt: later events coalesce into it.
 * Numbers from 1024 are one-shot: each queues an entry, none is stored in
 * the NI; they interrupt when arm[0] (the endpoint's one-shot arm) is set.
 *
 * The arm byte is read once the queue entry has landed, not when the
 * event arrives: a process arms only while it may sleep (the library),
 * and one that arms and then finds the queue empty is sure to be
 * interrupted for whatever lands after.
 */
#include <string.h>

#include "fw.h"

/*
 * Queue a small write into host memory.  Writes leave in the order queued
 * (a notification entry never overtakes the data it announces), each as a
 * host DMA job once a job slot is free; a few slots stay for the data path.
 */
bool fw_nv_host_write(struct fw *fw, uint64_t addr, const void *data,
		      uint32_t len)
{
	return fw_nv_host_write_irq(fw, addr, data, len, NULL);
}

/* Is @irq's arm byte set now (after its queue entry, if any, landed)? */
static bool armed(struct fw *fw, const struct fw_nv_hw_irq *irq)
{
	uint32_t port = irq->irq_ep - 1;

	if (port >= FW_NV_EPS || irq->arm >= NVM_NOTF_COUNTING)
		return false;
	/* the entry's DMA before the read: pairs with the process's
	 * store of arm before it looks at the queue */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return fw->chip->sram[fw->layout.ep_base + port * NVM_EP_STRIDE +
			      NVM_EP_ARM + irq->arm] != 0;
}

static void post_irq(struct fw *fw, const struct fw_nv_hw_irq *irq)
{
	fw_post(fw, NVM_EV_NOTIFY, (uint16_t)(irq->irq_ep - 1), irq->notify,
		irq->src);
}

/*
 * The same, and raise @irq's NOTIFY event once the write has landed: an
 * interrupt that overtook the queue entry it announces would wake a
 * sleeper that finds the queue still empty and sleeps on (a lost wakeup).
 */
bool fw_nv_host_write_irq(struct fw *fw, uint64_t addr, const void *data,
			  uint32_t len, const struct fw_nv_hw_irq *irq)
{
	struct fw_nv *nv = &fw->nv;
	struct fw_nv_hostwrite *w;

	if (len > FW_NV_HW_MAX || nv->hwq_count == FW_NV_HWQ) {
		nv->hwq_lost++;
		fw_tr_fw_host_write_lost(fw, (uint32_t)addr, len);
		if (irq && irq->irq_ep && armed(fw, irq))
			post_irq(fw, irq);	/* the sleeper looks, at least */
		return false;
	}
	w = &nv->hwq[(nv->hwq_head + nv->hwq_count) % FW_NV_HWQ];
	w->addr = addr;
	w->len = len;
	memcpy(w->data, data, len);
	memset(&w->irq, 0, sizeof(w->irq));
	if (irq)
		w->irq = *irq;
	nv->hwq_count++;
	fw_nv_host_write_pump(fw);
	return true;
}

/* A host write's job finished (in order: the engine runs jobs FIFO). */
void fw_nv_host_write_done(struct fw *fw, uint32_t arg)
{
	struct fw_nv_hw_irq *irq;

	if (!arg || arg > FW_HDMA_SLOTS)
		return;
	irq = &fw->nv.hw_irq[arg - 1];
	if (irq->irq_ep && armed(fw, irq))
		post_irq(fw, irq);
	irq->irq_ep = 0;
}

bool fw_nv_host_write_pump(struct fw *fw)
{
	struct fw_nv *nv = &fw->nv;
	bool moved = false;

	while (nv->hwq_count) {
		struct fw_nv_hostwrite *w = &nv->hwq[nv->hwq_head];
		int job = fw_hdma_alloc(fw, FW_JOB_NV_HOSTWRITE, 0);

		if (job < 0)
			break;
		if (w->irq.irq_ep) {
			nv->hw_irq[job] = w->irq;
			fw->q.hdma[job].arg = (uint32_t)job + 1;
		}
		memcpy(fw->chip->sram + fw_scratch_off(fw, job), w->data, w->len);
		fw_hdma_add(fw, job, LANAI_DMA_L2E, w->len,
			    fw_scratch_off(fw, job), w->addr);
		fw_hdma_submit(fw, job);
		nv->hwq_head = (nv->hwq_head + 1) % FW_NV_HWQ;
		nv->hwq_count--;
		moved = true;
	}
	return moved;
}

/* One entry on the endpoint's notification queue (when it has one). */
static void notf_write(struct fw *fw, struct fw_nv_ep *e, uint16_t kind,
		       uint32_t notify, uint32_t src_node, uint32_t src_port,
		       uint16_t info, const struct fw_nv_hw_irq *irq)
{
	struct nvm_notf_entry n = {
		.notify = notify,
		.src_node = (uint16_t)src_node,
		.src_port = (uint16_t)src_port,
		.phase = ((e->notf_prod / e->notf_len) & 1) ? 0 : 1,
		.kind = kind,
		.info = info,
	};

	fw_nv_host_write_irq(fw, e->notf_ring +
			     (uint64_t)(e->notf_prod % e->notf_len) * sizeof(n),
			     &n, sizeof(n), irq);
	e->notf_prod++;
}

/* An event of another kind (a tripwire) on port's queue: interrupts when
 * the queue is armed (its owner sleeps), as queued notifications do. */
void fw_nv_notf_queue(struct fw *fw, uint32_t port, uint16_t kind,
		      uint32_t notify, uint32_t src_node, uint32_t src_port,
		      uint16_t info, uint32_t flags)
{
	struct fw_nv_hw_irq irq = { 0 };
	struct fw_nv_ep *e;

	if (port >= FW_NV_EPS || !fw->nv.ep[port].open)
		return;
	e = &fw->nv.ep[port];
	if (!(flags & NVM_CF_NOINTR))	/* if arm[0] is set (armed()) */
		irq = (struct fw_nv_hw_irq){ port + 1, notify,
					     src_node << 16 | src_port, 0 };
	if (e->notf_ring && e->notf_len)
		notf_write(fw, e, kind, notify, src_node, src_port, info, &irq);
	else if (irq.irq_ep && armed(fw, &irq))
		post_irq(fw, &irq);
}

void fw_nv_notify_deliver(struct fw *fw, uint32_t port, uint32_t notify,
			  uint32_t src_node, uint32_t src_port,
			  uint32_t flags)
{
	struct fw_nv_hw_irq ev;
	struct fw_nv_ep *e;
	uint32_t base, sig, ack;
	bool queue, irq;

	if (port >= FW_NV_EPS || !fw->nv.ep[port].open || !notify)
		return;
	e = &fw->nv.ep[port];
	base = fw->layout.ep_base + port * NVM_EP_STRIDE;
	fw_count(fw, FW_CNT_NOTIFICATIONS);
	if (notify < NVM_NOTF_COUNTING) {
		sig = fw_sram_rd32(fw->chip, base + NVM_EP_SIG + notify * 4) + 1;
		fw_sram_wr32(fw->chip, base + NVM_EP_SIG + notify * 4, sig);
		ack = fw_sram_rd32(fw->chip, base + NVM_EP_ACK + notify * 4);
		queue = sig == ack + 1;
		irq = queue;
	} else {
		queue = true;
		irq = true;
	}
	if (flags & NVM_CF_NOINTR)
		irq = false;
	/* irq: if the arm byte is set (armed()), once the entry landed */
	ev = (struct fw_nv_hw_irq){ irq ? port + 1 : 0, notify,
				    src_node << 16 | src_port,
				    notify < NVM_NOTF_COUNTING ? notify : 0 };
	if (queue && e->notf_ring && e->notf_len)
		notf_write(fw, e, NVM_NOTF_KIND_NOTIFY, notify, src_node,
			   src_port, 0, &ev);
	else if (irq && armed(fw, &ev))
		post_irq(fw, &ev);
}
