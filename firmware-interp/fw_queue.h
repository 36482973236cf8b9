/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The engine services shared by the programs (fw_queue.c): the host DMA
 * job queue and the send queue.  (The receive dispatcher is fw_rx.c.)
 * A job carries its kind (enum fw_job), whose row in fw_job_kinds[] names
 * the program it belongs to; a send entry carries the program id (enum
 * fw_prog_id).  Completions go to that program's job_done or sent hook,
 * so firmware state holds no function pointers and can be saved and
 * restored.
 */
#ifndef NETVM_FW_QUEUE_H
#define NETVM_FW_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

struct fw;

#define FW_HDMA_SLOTS		64	/* host DMA jobs queued at once */
#define FW_HDMA_DESCS		8	/* descriptors per job */
#define FW_SENDQ_LEN		128	/* frames waiting for the send engine */

/* Kinds of host DMA job; each belongs to one program (fw_job_kinds[]).
 * Saved in the job queue: append only. */
enum fw_job {
	FW_JOB_NONE,
	FW_JOB_RAW_TX,		/* raw payload host -> staging */
	FW_JOB_RAW_RX,		/* raw payload slot -> host */
	FW_JOB_NV_FETCH,	/* NetVM: write source pages -> tx buffer */
	FW_JOB_NV_DELIVER,	/* NetVM: incoming data slot -> host page */
	FW_JOB_NV_READ_FETCH,	/* NetVM: remote read: host page -> tx buffer */
	FW_JOB_NV_ATOMIC_IN,	/* NetVM: operand host -> SRAM */
	FW_JOB_NV_ATOMIC_OUT,	/* NetVM: operand SRAM -> host */
	FW_JOB_NV_HOSTWRITE,	/* NetVM: small SRAM -> host writes (queues, counters) */
	FW_JOB_NV_BOUNCE,	/* NetVM: packet slot -> bounce buffer */
	FW_JOB_UNET_FETCH,	/* U-Net: segment -> tx buffer */
	FW_JOB_UNET_RX,		/* U-Net: slot -> buffers, receive descriptor */
	FW_JOB_UNET_DIVERT,	/* U-Net: slot -> the kernel's divert ring */
	FW_JOB_UNET_KFETCH,	/* U-Net: a kernel-emulated endpoint's message */
	FW_JOB_COUNT
};

struct fw_job_kind {
	const char *name;
	uint32_t prog;		/* enum fw_prog_id: whose job_done hook */
};
extern const struct fw_job_kind fw_job_kinds[FW_JOB_COUNT];

struct fw_hdma_job {
	uint32_t kind;		/* enum fw_job; FW_JOB_NONE = slot free */
	uint32_t arg;
	uint32_t ndesc;		/* descriptors filled */
	uint32_t reserved;
};

struct fw_send_entry {
	uint32_t kind;		/* enum fw_prog_id: whose sent hook */
	uint32_t arg;
	uint32_t off;
	uint32_t len;
};

struct fw_queues {
	struct fw_hdma_job hdma[FW_HDMA_SLOTS];
	uint32_t hdma_order[FW_HDMA_SLOTS];	/* FIFO of queued slots */
	uint32_t hdma_head, hdma_count;
	uint32_t hdma_running;			/* slot + 1, 0 = engine idle */
	struct fw_send_entry sendq[FW_SENDQ_LEN];
	uint32_t send_head, send_count;
	uint32_t send_running;			/* 1 while the engine sends */
};

/* Host DMA: take a job slot, fill up to FW_HDMA_DESCS descriptors, submit. */
int fw_hdma_alloc(struct fw *fw, uint32_t kind, uint32_t arg);
void fw_hdma_add(struct fw *fw, int slot, uint32_t flags, uint32_t len,
		 uint32_t sram, uint64_t host);
void fw_hdma_submit(struct fw *fw, int slot);
void fw_hdma_cancel(struct fw *fw, int slot);	/* give back an unsubmitted slot */
uint32_t fw_hdma_free_slots(struct fw *fw);

/* Send: queue a frame already built in SRAM for program @prog (told by
 * its sent hook with @arg); false if the queue is full. */
bool fw_send_submit(struct fw *fw, uint32_t prog, uint32_t arg, uint32_t off,
		    uint32_t len);
uint32_t fw_sendq_room(struct fw *fw);

/* Engine completions, called by fw_run on ISR bits. */
void fw_queues_hdma_done(struct fw *fw);
void fw_queues_send_done(struct fw *fw);
void fw_queues_reset(struct fw *fw);

#endif
