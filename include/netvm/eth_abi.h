/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Ethernet over the NIC (docs/ethernet.md): the ETH packet type's host
 * interface.  The firmware publishes two rings of struct nvm_eth_desc and
 * one struct nvm_eth_ctl in SRAM (layout.eth_*); the driver (netvm_eth.c)
 * points the descriptors straight at socket-buffer data.
 *
 * Transmit: the host fills a descriptor (the whole Ethernet frame at
 * host_addr, len bytes; the destination node and its source route), sets
 * NVM_ETH_OWN last and rings doorbell page 0 with NVM_DB_ETH.  The
 * firmware fetches the frame by host DMA, sends it as one NVM_PKT_ETH
 * packet and clears OWN with the outcome in status.  Receive: the host
 * posts empty buffers the same way (len = the buffer's size); the firmware
 * DMAs each ETH packet into the next one and returns it with len = the
 * frame's bytes and node = the sender.
 *
 * Offloads.  Scatter-gather: a frame may span up to NVM_ETH_MAX_FRAGS
 * descriptors, each but the last flagged NVM_ETH_MORE; the first carries
 * the route, node and checksum request, the others only their piece
 * (host_addr, len).  The host sets OWN on the first descriptor last; the
 * firmware gathers the pieces into one packet and returns every
 * descriptor of the frame with the same status.  Checksum: a TX frame with
 * NVM_ETH_CSUM gets the ones' complement checksum of its bytes from
 * csum_start to its end stored (big-endian, 0 sent as 0xffff) at
 * csum_start + csum_off, as Linux's CHECKSUM_PARTIAL asks.  On RX the
 * firmware returns NVM_ETH_CSUM with csum = the ones' complement sum
 * (network order, folded, not complemented) of the frame's bytes past its
 * Ethernet header, for the stack to verify (CHECKSUM_COMPLETE).
 *
 * Interrupt mitigation: the firmware raises NVM_EV_ETH only when
 * ctl.irq_arm is non-zero, and clears it when it does; the driver arms it
 * when its NAPI poll is done, then looks at the rings once more.  A TX
 * completion interrupts only as ctl.tx_irq says: a host that reaps its
 * own completions (most are done before its doorbell write returns) sets
 * NVM_ETH_TXIRQ_OFF, and NVM_ETH_TXIRQ_ONCE while it waits for one.
 *
 * Receive buffers go back without a doorbell: the firmware sets
 * ctl.rx_wait while a frame waits for a buffer, and only then does the
 * host ring after posting (clearing rx_wait first).
 */
#ifndef NETVM_ETH_ABI_H
#define NETVM_ETH_ABI_H

#include "abi_types.h"
#include "packet.h"

#define NVM_ETH_HLEN		14	/* destination, source, EtherType */
/* A frame (Ethernet header and payload, no FCS: the link has its CRC)
 * fills at most one packet's payload. */
#define NVM_ETH_MAX_FRAME	NVM_PKT_MAX_PAYLOAD
#define NVM_ETH_MAX_MTU		(NVM_ETH_MAX_FRAME - NVM_ETH_HLEN)
/* dst_node of a frame for every node the sender has a route to */
#define NVM_ETH_NODE_ALL	0xffff

/* Locally administered unicast MAC: 02:4e:56:4d:<node id, big-endian>. */
#define NVM_ETH_MAC_PREFIX	{ 0x02, 0x4e, 0x56, 0x4d }
#define NVM_ETH_MAC_PREFIX_LEN	4

struct nvm_eth_desc {
	uint64_t host_addr;	/* bus address of the frame or the buffer */
	uint32_t len;		/* TX: frame bytes; RX: buffer size, then frame bytes */
	uint16_t flags;		/* NVM_ETH_OWN */
	uint8_t route_len;	/* TX: bytes in route[] (0 = back to back) */
	uint8_t status;		/* enum nvm_eth_status, written by the firmware */
	uint8_t route[8];	/* TX: source route, each byte has MSB set */
	uint16_t node;		/* TX: destination node (NVM_ETH_NODE_ALL);
				 * RX: the sender */
	uint16_t csum;		/* RX with NVM_ETH_CSUM: sum past the header */
	uint16_t csum_start;	/* TX with NVM_ETH_CSUM: first byte summed */
	uint16_t csum_off;	/* TX: the checksum's offset from csum_start */
};
NVM_ABI_ASSERT(sizeof(struct nvm_eth_desc) == 32, "eth desc size");

#define NVM_ETH_OWN		0x0001	/* the NIC owns this descriptor */
#define NVM_ETH_MORE		0x0002	/* TX: the frame goes on in the next one */
#define NVM_ETH_CSUM		0x0004	/* TX: fill in the checksum;
					 * RX: csum holds the frame's sum */
/* Descriptors one frame may span (pieces gathered into one packet). */
#define NVM_ETH_MAX_FRAGS	8

enum nvm_eth_status {
	NVM_ETH_OK = 0,
	NVM_ETH_ERR_DMA = 1,	/* host DMA failed: bad host address */
	NVM_ETH_ERR_LEN = 2,	/* TX: below a header or above NVM_ETH_MAX_FRAME,
				 * an empty piece, more than NVM_ETH_MAX_FRAGS
				 * pieces or a checksum outside the frame;
				 * RX: the frame was larger than the buffer */
	NVM_ETH_ERR_ROUTE = 3,	/* route_len > 8 or route byte without MSB */
	NVM_ETH_ERR_LINK = 4,	/* link down */
};

/* Written by the host; irq_arm is cleared by the firmware when it fires. */
struct nvm_eth_ctl {
	uint32_t irq_arm;	/* 1: raise NVM_EV_ETH at the next completion */
	uint32_t rx_enable;	/* 0: ETH packets are dropped (interface down) */
	uint32_t tx_irq;	/* enum nvm_eth_tx_irq: which TX completions
				 * may raise NVM_EV_ETH (irq_arm permitting) */
	uint32_t rx_wait;	/* set by the firmware while a frame waits for
				 * an RX buffer: ring the doorbell after posting */
	uint32_t reserved[4];
};
NVM_ABI_ASSERT(sizeof(struct nvm_eth_ctl) == 32, "eth ctl size");

enum nvm_eth_tx_irq {
	NVM_ETH_TXIRQ_EVERY = 0,	/* every completion (any unknown value too) */
	NVM_ETH_TXIRQ_OFF = 1,		/* none: the host reaps on its own */
	NVM_ETH_TXIRQ_ONCE = 2,		/* the next one that raises the event;
					 * the firmware then sets OFF */
};

/* Doorbell data word on page 0: descriptors posted on either ring. */
#define NVM_DB_ETH		0x48544545u	/* "EETH" */

#endif /* NETVM_ETH_ABI_H */
