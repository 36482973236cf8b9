/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Firmware programs: what runs above the shared services (counters,
 * events, trace, engines) and below the scheduler (fw_sched.c).  Each
 * program is one const struct fw_program; the scheduler knows programs
 * only through fw_programs[], indexed by enum fw_prog_id.  Firmware state
 * names a program by that id (a send entry's kind, a job kind's row in
 * fw_job_kinds[]), never by pointer, so struct fw stays saveable as one
 * block.  docs/firmware.md, "Adding a firmware program", says how to add one.
 */
#ifndef NETVM_FW_PROGRAM_H
#define NETVM_FW_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

struct fw;
struct nvm_cmd;

/* What a receive handler did with the frame in the current slot. */
enum fw_rx_verdict {
	FW_RX_RELEASE,		/* done: free the slot */
	FW_RX_WAIT,		/* cannot take it yet: keep it, retry later */
	FW_RX_HOLD,		/* a job still reads the slot; fw_rx_release later */
};

/* Program ids.  Saved in send entries: append only. */
enum fw_prog_id {
	FW_PROG_RAW,		/* raw frames (fw_raw.c) */
	FW_PROG_NV,		/* NetVM (fw_nv_*.c) */
	FW_PROG_UNET,		/* U-Net (fw_unet*.c) */
	FW_PROG_TRIPWIRE,	/* tripwires on NetVM accesses (fw_tripwire.c) */
	FW_PROG_ETH,		/* Ethernet frames (fw_eth.c) */
	FW_PROG_COUNT
};

/* A kernel command no program claims is answered NVM_ST_BAD_CMD. */
#define FW_KOP_UNCLAIMED	0xffffffffu

/* Not a packet type: the program receives no frames. */
#define FW_PKT_NONE		0

/*
 * One program.  Every hook may be NULL.  The scheduler calls them in
 * fw_programs[] order (doorbells in fw_doorbell_order[]).
 */
struct fw_program {
	const char *name;
	uint8_t pkt_type;	/* NVM_PKT_* it receives, or FW_PKT_NONE */
	/* firmware boot, after the services and the layout are up */
	void (*boot)(struct fw *fw);
	/* firmware halt, after the engines stopped and the timers disarmed */
	void (*halt)(struct fw *fw);
	/* a doorbell write to page @ep: true if it is this program's */
	bool (*doorbell)(struct fw *fw, uint32_t ep, uint32_t off,
			 uint32_t data);
	/* one step of work that needs no event; true if it made progress */
	bool (*step)(struct fw *fw);
	/* a frame of pkt_type: payload at SRAM @data, @len bytes, from @src */
	enum fw_rx_verdict (*receive)(struct fw *fw, uint32_t data,
				      uint32_t len, uint32_t src);
	/* a frame of pkt_type that must not wait behind data (taken out of
	 * ring order while the head waits) */
	bool (*urgent)(struct fw *fw, uint32_t data, uint32_t len);
	/* a host DMA job of one of this program's kinds finished */
	void (*job_done)(struct fw *fw, uint32_t kind, uint32_t arg,
			 uint32_t status);
	/* a frame this program queued left on the wire */
	void (*sent)(struct fw *fw, uint32_t arg);
	/* interval timer bits (LANAI_ISR_TIME*) that fired */
	void (*tick)(struct fw *fw, uint32_t isr);
	/* the end of a pass: arm the timers the program's state needs */
	void (*arm_timers)(struct fw *fw);
	/* a kernel command (op >= NVM_KOP_CONFIG on the kernel's endpoint):
	 * its status, or FW_KOP_UNCLAIMED if it is not this program's */
	uint32_t (*kernel_cmd)(struct fw *fw, const struct nvm_cmd *c);
};

extern const struct fw_program *const fw_programs[FW_PROG_COUNT];
/* every program once, in the order doorbell writes are offered to them */
extern const enum fw_prog_id fw_doorbell_order[FW_PROG_COUNT];

/* Each program's row, defined beside its code. */
extern const struct fw_program fw_prog_raw;
extern const struct fw_program fw_prog_nv;
extern const struct fw_program fw_prog_unet;
extern const struct fw_program fw_prog_tripwire;
extern const struct fw_program fw_prog_eth;

/* The scheduler's dispatch through the table (fw_program.c). */
uint32_t fw_kernel_cmd(struct fw *fw, const struct nvm_cmd *c);

#endif /* NETVM_FW_PROGRAM_H */
