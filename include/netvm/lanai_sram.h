/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * LANai SRAM: the layout descriptor the firmware publishes, and the
 * structures the host and the firmware share inside SRAM.
 *
 * The firmware owns the SRAM layout.  When it boots it writes a
 * struct nvm_sram_layout at SRAM offset NVM_REG_LAYOUT_OFF (read that
 * register; do not assume 0) and then moves NVM_REG_FW_STATE to
 * NVM_FW_READY.  The host finds every region through the descriptor and
 * never hard-codes an SRAM offset.
 */
#ifndef NETVM_LANAI_SRAM_H
#define NETVM_LANAI_SRAM_H

#include "abi_types.h"

#define NVM_LAYOUT_MAGIC	0x4f59414cu	/* "LAYO" */
#define NVM_LAYOUT_VERSION	2	/* 2: the Ethernet fields (160 bytes) */

struct nvm_sram_layout {
	uint32_t magic;		/* NVM_LAYOUT_MAGIC, written last */
	uint32_t version;	/* NVM_LAYOUT_VERSION */
	uint32_t sram_size;	/* bytes */
	uint32_t fw_version;	/* same as NVM_REG_FW_VERSION */
	/* raw frames (link bring-up, tests): host-owned descriptor rings */
	uint32_t raw_tx_ring;	/* offset of struct nvm_raw_desc[raw_tx_len] */
	uint32_t raw_tx_len;	/* entries, power of two */
	uint32_t raw_rx_ring;	/* offset of struct nvm_raw_desc[raw_rx_len] */
	uint32_t raw_rx_len;
	uint32_t raw_max_payload; /* largest raw frame payload, bytes */
	/* firmware-private regions, published for debugging */
	uint32_t wire_rx_ring;	/* receive-wire DMA slots */
	uint32_t wire_rx_slots;
	uint32_t wire_rx_slot_size;
	uint32_t staging;	/* host DMA / send staging buffers */
	uint32_t staging_size;
	uint32_t counters;	/* offset of uint32_t counters[counters_len] */
	uint32_t counters_len;
	/* NetVM: endpoints (struct layout in netvm/netvm_fw.h) */
	uint32_t ep_base;
	uint32_t ep_count;
	uint32_t ep_stride;
	/* NetVM: retransmission buffers (firmware-private) */
	uint32_t txbuf;
	uint32_t txbuf_count;
	uint32_t txbuf_size;
	/* NetVM: shadow page table and PMAP, sized by NVM_KOP_CONFIG; 0 until */
	uint32_t pt;		/* uint32_t[pt_rows][NVM_PT_WAYS] */
	uint32_t pt_rows;
	uint32_t pmap;		/* struct nvm_pmap_entry[max_ppn] */
	uint32_t pmap_lock;	/* uint8_t[max_ppn]: NI sets and clears */
	uint32_t pmap_hdirty;	/* uint8_t[max_ppn]: host writes */
	uint32_t pmap_ndirty;	/* uint8_t[max_ppn]: NI writes */
	uint32_t pmap_flags;	/* uint8_t[max_ppn]: host writes (NVM_PMAP_RO) */
	uint32_t max_ppn;
	uint32_t tables_end;	/* first byte after the tables */
	uint32_t dma_descs;	/* firmware-private host DMA descriptors */
	/* Ethernet (netvm/eth_abi.h): host-owned rings and control; 0 = none */
	uint32_t eth_tx_ring;	/* struct nvm_eth_desc[eth_tx_len] */
	uint32_t eth_tx_len;	/* entries, power of two */
	uint32_t eth_rx_ring;	/* struct nvm_eth_desc[eth_rx_len] */
	uint32_t eth_rx_len;
	uint32_t eth_ctl;	/* struct nvm_eth_ctl */
	uint32_t eth_max_frame;	/* largest frame, bytes (NVM_ETH_MAX_FRAME) */
	uint32_t reserved[2];
};
NVM_ABI_ASSERT(sizeof(struct nvm_sram_layout) == 160, "layout size");

/*
 * Raw frame descriptor.  The host fills one in SRAM, sets NVM_RAW_OWN last,
 * and rings doorbell page 0 with NVM_DB_RAW_TX (transmit ring) or
 * NVM_DB_RAW_RX (receive buffers posted).  The firmware consumes each ring
 * in order, clears NVM_RAW_OWN when done, stores the outcome in status
 * (and, on receive, the frame's length and source node), and queues an
 * NVM_EV_RAW_TX / NVM_EV_RAW_RX event naming the index.
 */
struct nvm_raw_desc {
	uint64_t host_addr;	/* host buffer (bus address) */
	uint32_t len;		/* TX: payload bytes; RX: buffer size, then bytes received */
	uint16_t flags;		/* NVM_RAW_* */
	uint8_t route_len;	/* TX: route bytes in route[] (0 = back to back) */
	uint8_t status;		/* enum nvm_raw_status, written by the firmware */
	uint8_t route[8];	/* TX: source route, each byte has MSB set */
	uint16_t src_node;	/* RX: sender's node id */
	uint16_t reserved0;
	uint32_t reserved1;
};
NVM_ABI_ASSERT(sizeof(struct nvm_raw_desc) == 32, "raw desc size");

#define NVM_RAW_OWN		0x0001	/* the NIC owns this descriptor */

enum nvm_raw_status {
	NVM_RAW_OK = 0,
	NVM_RAW_ERR_DMA = 1,	/* host DMA failed: bad host address */
	NVM_RAW_ERR_LEN = 2,	/* length 0 or above raw_max_payload / buffer */
	NVM_RAW_ERR_ROUTE = 3,	/* route_len > 8 or route byte without MSB */
	NVM_RAW_ERR_LINK = 4,	/* link down */
};

/* Doorbell data words understood on page 0 (the kernel's page). */
#define NVM_DB_RAW_TX		0x52415754u	/* "TWAR" */
#define NVM_DB_RAW_RX		0x52415752u	/* "RWAR" */

/*
 * Host DMA descriptor (LANai 9 style), built by the firmware in SRAM and
 * chained through next.  Flags live in the low bits of next; descriptors
 * are 8-byte aligned.  status is a netvm extension: the engine writes
 * NVM_DMA_ST_* there when it finishes the descriptor.
 */
struct lanai_dma_desc {
	uint32_t next;		/* SRAM offset of next descriptor | LANAI_DMA_* */
	uint16_t csum[2];	/* ones' complement sum of the data (E2L) */
	uint32_t len;		/* bytes */
	uint32_t lar;		/* SRAM address */
	uint32_t eah;		/* host address, high 32 bits */
	uint32_t eal;		/* host address, low 32 bits */
	uint32_t status;	/* NVM_DMA_ST_* */
	uint32_t reserved;
};
NVM_ABI_ASSERT(sizeof(struct lanai_dma_desc) == 32, "dma desc size");

#define LANAI_DMA_L2E		0x0	/* LANai (SRAM) -> host ("external") */
#define LANAI_DMA_E2L		0x1	/* host -> LANai */
#define LANAI_DMA_TERMINAL	0x2	/* last descriptor in the chain */
#define LANAI_DMA_WAKE		0x4	/* set ISR.WAKE0 when this one is done */
#define LANAI_DMA_FLAGS		0x7

#define NVM_DMA_ST_PENDING	0
#define NVM_DMA_ST_DONE		1
#define NVM_DMA_ST_ERR_HOST	2	/* host address refused by the bus */
#define NVM_DMA_ST_ERR_SRAM	3	/* SRAM range outside the chip */
#define NVM_DMA_ST_ERR_CHAIN	4	/* chain too long or looping */

#endif /* NETVM_LANAI_SRAM_H */
