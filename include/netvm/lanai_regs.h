/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * LANai PCI device: identity, BARs and the register map (BAR0).
 *
 * The single source of truth for the device model (qemu-device/), the
 * driver (guest-driver/) and the library (guest-lib/).  docs/hardware.md
 * describes each register in prose.
 *
 * BAR0 offsets 0x000-0x1ff are an image of the LANai 9 special registers
 * (Myricom's LANai 9 offsets, relative to 0xfffffe00 on the chip); offsets
 * from 0x200 are netvm's host interface registers.  All registers are
 * 32 bits wide and little-endian; 8- and 16-bit accesses are refused.
 */
#ifndef NETVM_LANAI_REGS_H
#define NETVM_LANAI_REGS_H

#include "abi_types.h"

/* PCI identity: a vendor/device pair that no in-tree Linux driver binds. */
#define LANAI_PCI_VENDOR_ID	0x14c1	/* Myricom */
#define LANAI_PCI_DEVICE_ID	0x4e56	/* "NV": netvm's emulated LANai */
#define LANAI_PCI_REVISION	0x01

/* BARs */
#define LANAI_BAR_REGS		0	/* registers, LANAI_REGS_SIZE */
#define LANAI_BAR_MSIX		1	/* MSI-X table and PBA */
#define LANAI_BAR_SRAM		2	/* LANai SRAM, RAM-backed */
#define LANAI_BAR_DOORBELL	4	/* one page per endpoint */

#define LANAI_REGS_SIZE		0x1000
#define LANAI_DOORBELL_PAGE	4096
#define LANAI_MAX_ENDPOINTS	64
#define LANAI_DOORBELL_SIZE	(LANAI_MAX_ENDPOINTS * LANAI_DOORBELL_PAGE)
/*
 * A 4-byte read at this offset of an endpoint's doorbell page (any other
 * read is a guest error) says "the program behind this endpoint is only
 * waiting": the device gives the host CPU to whatever else wants it
 * (sched_yield of the vCPU's thread; with the device property
 * yield-wait-us, a wait of at most that long for its next write to guest
 * memory), returns 0 and counts it in NVM_REG_DB_YIELDS.  Where the vCPU
 * has its CPU to itself a sched_yield costs one exit.  A guest that polls memory cannot otherwise tell the host it is
 * waiting (under TCG there is no pause-loop exit).
 */
#define LANAI_DB_YIELD		0xffc
/* the device property yield-wait-us: at most this (10 ms) */
#define LANAI_YIELD_WAIT_MAX_US	10000

#define LANAI_SRAM_MIN		(512u * 1024)
#define LANAI_SRAM_DEFAULT	(2u * 1024 * 1024)
#define LANAI_SRAM_MAX		(8u * 1024 * 1024)

/* MSI-X vectors */
#define LANAI_MSIX_EVENTS	0	/* event queue (ISR & EIMR != 0) */
#define LANAI_MSIX_SELFTEST	1	/* self-test interrupt */
#define LANAI_MSIX_COUNT	2

/* ---- LANai 9 special register image (BAR0 0x000-0x1ff) ---- */
#define LANAI_REG_ISR		0x050	/* interrupt status; host: W1C */
#define LANAI_REG_EIMR		0x058	/* ISR bits that interrupt the host */
#define LANAI_REG_IT0		0x060	/* interval timer 0 (firmware's) */
#define LANAI_REG_RTC		0x068	/* real-time clock, 1 tick = 500 ns */
#define LANAI_REG_CPUC		0x078	/* CPU control: run / halt / reset */
#define LANAI_REG_IT1		0x0c0
#define LANAI_REG_IT2		0x0c8
#define LANAI_REG_MYRINET	0x130	/* link control */
#define LANAI_REG_LED		0x140

/* ISR bits (LANai 9 positions; netvm causes in the bits LANai left free) */
#define LANAI_ISR_HEAD		NVM_BIT(0)
#define LANAI_ISR_RECV		NVM_BIT(1)	/* receive-wire DMA done */
#define LANAI_ISR_BUFF		NVM_BIT(2)	/* receive ring full */
#define LANAI_ISR_SEND		NVM_BIT(3)	/* send-wire DMA done */
#define LANAI_ISR_TIME0		NVM_BIT(6)
#define LANAI_ISR_TIME1		NVM_BIT(7)
#define LANAI_ISR_WAKE0		NVM_BIT(12)	/* host DMA chain done */
#define LANAI_ISR_TIME2		NVM_BIT(13)
#define LANAI_ISR_LINK_DOWN	NVM_BIT(16)	/* link state changed */
/* netvm event causes: set when an event of that cause is queued */
#define LANAI_ISR_EV_PAGE_MISS	NVM_BIT(17)
#define LANAI_ISR_EV_BOUNCE	NVM_BIT(18)
#define LANAI_ISR_EV_NOTIFY	NVM_BIT(19)
#define LANAI_ISR_EV_ERROR	NVM_BIT(20)
#define LANAI_ISR_EV_DB_OVERFLOW NVM_BIT(21)
#define LANAI_ISR_EV_RAW	NVM_BIT(22)	/* raw frame sent/received */
#define LANAI_ISR_EV_FW		NVM_BIT(23)	/* firmware state change */
#define LANAI_ISR_LANAI_SIG	NVM_BIT(29)
#define LANAI_ISR_HOST_SIG	NVM_BIT(30)
#define LANAI_ISR_DEBUG		NVM_BIT(31)
/* ISR bits the host may clear (the rest belong to the firmware) */
#define LANAI_ISR_HOST_W1C	(LANAI_ISR_LINK_DOWN | LANAI_ISR_EV_PAGE_MISS | \
				 LANAI_ISR_EV_BOUNCE | LANAI_ISR_EV_NOTIFY | \
				 LANAI_ISR_EV_ERROR | LANAI_ISR_EV_DB_OVERFLOW | \
				 LANAI_ISR_EV_RAW | LANAI_ISR_EV_FW | \
				 LANAI_ISR_LANAI_SIG)

/* CPUC */
#define LANAI_CPUC_RUN		NVM_BIT(0)	/* 1: firmware runs; 0: halted */
#define LANAI_CPUC_RESET	NVM_BIT(1)	/* write 1: reset firmware+engines */

/* MYRINET (link control), LANai 9 bit positions */
#define LANAI_MYRINET_NRES_EN	NVM_BIT(0)	/* link enabled */
#define LANAI_MYRINET_CRC32_EN	NVM_BIT(1)	/* CRC-32 on the wire */

/* ---- netvm host interface registers ---- */
#define NVM_REG_ID		0x200	/* RO: NVM_ID_MAGIC */
#define NVM_REG_VERSION		0x204	/* RO: NVM_ABI_VERSION */
#define NVM_REG_FW_VERSION	0x208	/* RO: firmware version, 0 if halted */
#define NVM_REG_NODE_ID		0x20c	/* RO: this NIC's node id */
#define NVM_REG_SRAM_SIZE	0x210	/* RO: bytes */
#define NVM_REG_LAYOUT_OFF	0x214	/* RO: SRAM offset of the layout */
#define NVM_REG_LINK		0x218	/* RO: NVM_LINK_* */
#define NVM_REG_FW_STATE	0x21c	/* RO: enum nvm_fw_state */
#define NVM_REG_EVQ_BASE_LO	0x220	/* event queue in host memory */
#define NVM_REG_EVQ_BASE_HI	0x224
#define NVM_REG_EVQ_LEN		0x228	/* entries, power of two, 0 = off */
#define NVM_REG_EVQ_CONS	0x22c	/* RW: host's consumer index */
#define NVM_REG_EVQ_PROD	0x230	/* RO: device's producer index */
#define NVM_REG_DB_STATUS	0x234	/* RO: doorbell FIFO depth | flags */
#define NVM_REG_DB_OVERFLOWS	0x238	/* RO: doorbell writes refused */
#define NVM_REG_ST_ADDR_LO	0x240	/* self-test DMA buffer */
#define NVM_REG_ST_ADDR_HI	0x244
#define NVM_REG_ST_LEN		0x248	/* bytes, <= NVM_ST_MAX_LEN */
#define NVM_REG_ST_SEED		0x24c	/* pattern seed */
#define NVM_REG_ST_CMD		0x250	/* write: NVM_ST_CMD_* starts a test */
#define NVM_REG_ST_STATUS	0x254	/* RO: NVM_ST_STATUS_* */
#define NVM_REG_ST_IRQ		0x258	/* write N: raise MSI-X vector N */
#define NVM_REG_SCRATCH		0x25c	/* RW: reads back the value written */
#define NVM_REG_EVQ_LOST	0x260	/* RO: events dropped (must stay 0) */
#define NVM_REG_ERRORS		0x264	/* RO: guest errors logged */
#define NVM_REG_DB_YIELDS	0x268	/* RO: LANAI_DB_YIELD reads */

/*
 * Engine registers (debug port).  Reads always show the engine's state.
 * Writes that start an engine are accepted only while the firmware is
 * halted (CPUC.RUN clear): the firmware owns the engines while it runs.
 * This lets tests and driver developers drive each engine on its own.
 */
#define NVM_REG_HDMA_DESC	0x300	/* RW: SRAM offset of the chain; write starts it */
#define NVM_REG_HDMA_STATUS	0x304	/* RO: bit 0 busy, bits 16-31 chains run */
#define NVM_REG_SEND_OFF	0x310	/* RW: SRAM offset of the frame */
#define NVM_REG_SEND_LEN	0x314	/* RW: frame bytes (CRC appended) */
#define NVM_REG_SEND_CTRL	0x318	/* W 1: send; R: bit 0 busy */
#define NVM_REG_SEND_COUNT	0x31c	/* RO: frames sent */
#define NVM_REG_RECV_RING	0x320	/* RW: SRAM offset of the slot ring */
#define NVM_REG_RECV_SLOTS	0x324	/* RW: slots */
#define NVM_REG_RECV_SLOT_SIZE	0x328	/* RW: bytes per slot, header included */
#define NVM_REG_RECV_CTRL	0x32c	/* W 1: (re)start at slot 0, 2: retry, 0: stop;
					 * R: bit 0 on, bits 16-31 next slot */
#define NVM_REG_RECV_COUNT	0x330	/* RO: frames received into slots */
#define NVM_REG_RECV_DROPS	0x334	/* RO: frames dropped (CRC, oversize) */

#define NVM_ENG_BUSY		NVM_BIT(0)
#define NVM_RECV_CTRL_STOP	0
#define NVM_RECV_CTRL_START	1
#define NVM_RECV_CTRL_RETRY	2

#define NVM_ID_MAGIC		0x4e564d4cu	/* "LMVN" little-endian: 'L','M','V','N' */
#define NVM_ABI_VERSION		0x00010000u	/* major.minor, 16 bits each */

#define NVM_LINK_UP		NVM_BIT(0)	/* the link's far end is attached */

#define NVM_DB_DEPTH_MASK	0xffffu
#define NVM_DB_OVERFLOW		NVM_BIT(31)	/* sticky until FIFO drains */

enum nvm_fw_state {
	NVM_FW_HALTED = 0,	/* CPUC.RUN clear */
	NVM_FW_BOOTING = 1,	/* running, layout not yet published */
	NVM_FW_READY = 2,	/* layout published, accepting doorbells */
	NVM_FW_FAULT = 3,	/* firmware stopped on an internal error */
};

/* Self-test: DMA a pattern to / from a host buffer (after rocker's). */
#define NVM_ST_MAX_LEN		4096
#define NVM_ST_CMD_FILL		1	/* device writes pattern(seed) */
#define NVM_ST_CMD_INVERT	2	/* device reads, inverts, writes back */
#define NVM_ST_STATUS_IDLE	0
#define NVM_ST_STATUS_BUSY	1
#define NVM_ST_STATUS_DONE	2
#define NVM_ST_STATUS_ERROR	3	/* DMA failed or bad arguments */

/* The self-test fill pattern, shared so both sides compute it alike. */
static inline uint8_t nvm_st_pattern(uint32_t seed, uint32_t i)
{
	uint32_t x = seed ^ (i * 2654435761u);

	return (uint8_t)(x ^ (x >> 8) ^ (x >> 16) ^ (x >> 24));
}

#endif /* NETVM_LANAI_REGS_H */
