/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The event queue: why the device interrupted the host.
 *
 * A ring of struct nvm_event in host memory, set up with NVM_REG_EVQ_BASE_*
 * (16-byte aligned) and NVM_REG_EVQ_LEN (a power of two, at most 65536;
 * writing it restarts both counts at 0).  NVM_REG_EVQ_PROD and
 * NVM_REG_EVQ_CONS are free-running 32-bit counts of entries written and
 * consumed; entry n lives in slot n & (len - 1).  The host writes its count
 * to EVQ_CONS after consuming.  Each entry carries a phase bit, 1 when
 * (n / len) is even and 0 when odd, so the host can tell new entries from
 * old without reading a register: expect phase 1 on the first pass round
 * the ring, and flip the expectation at every wrap.  Every event also sets its cause bit in ISR; the host is
 * interrupted (MSI-X vector LANAI_MSIX_EVENTS) when ISR & EIMR goes from
 * zero to non-zero.  The host clears the bits it handled (W1C) and then
 * drains the ring, so an event that arrives in between interrupts again.
 *
 * When the ring is full the device holds further events in order and
 * writes them as the host frees entries: no event is lost.
 */
#ifndef NETVM_LANAI_EVENT_H
#define NETVM_LANAI_EVENT_H

#include "abi_types.h"

struct nvm_event {
	uint8_t type;		/* enum nvm_event_type */
	uint8_t flags;		/* NVM_EV_F_* */
	uint16_t endpoint;	/* endpoint (port) concerned, 0 = kernel */
	uint32_t data;		/* per type, see below */
	uint64_t arg;		/* per type, see below */
};
NVM_ABI_ASSERT(sizeof(struct nvm_event) == 16, "event size");

#define NVM_EV_F_PHASE		0x01

enum nvm_event_type {
	NVM_EV_NONE = 0,
	NVM_EV_LINK = 1,	/* data: NVM_LINK_* now */
	NVM_EV_RAW_TX = 2,	/* data: raw tx index; arg: enum nvm_raw_status */
	NVM_EV_RAW_RX = 3,	/* data: raw rx index; arg: bytes | src node << 32 */
	NVM_EV_ERROR = 4,	/* data: enum nvm_error; arg: detail (address) */
	NVM_EV_DB_OVERFLOW = 5,	/* data: doorbell writes refused so far */
	NVM_EV_PAGE_MISS = 6,	/* reserved for the NetVM firmware */
	NVM_EV_BOUNCE = 7,
	NVM_EV_NOTIFY = 8,
	NVM_EV_FW_STATE = 9,	/* data: enum nvm_fw_state */
	NVM_EV_SELFTEST = 10,	/* data: NVM_ST_STATUS_* */
	NVM_EV_ETH = 11,	/* Ethernet rings moved (netvm/eth_abi.h, irq_arm) */
	NVM_EV_TYPE_COUNT
};

enum nvm_error {
	NVM_ERR_NONE = 0,
	NVM_ERR_HOST_DMA = 1,	/* host DMA refused; arg = host address */
	NVM_ERR_SRAM_RANGE = 2,	/* SRAM range outside the chip; arg = offset */
	NVM_ERR_DMA_CHAIN = 3,	/* descriptor chain looped or too long */
	NVM_ERR_BAD_DOORBELL = 4, /* unknown doorbell word; arg = offset<<32|data */
	NVM_ERR_BAD_PACKET = 5,	/* malformed packet from the link; arg = length */
	NVM_ERR_EVQ = 6,	/* event queue write failed; arg = address */
};

#endif /* NETVM_LANAI_EVENT_H */
