/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Packets on the link.  A link frame (one QEMU netdev packet) is:
 *
 *   route[0..n)   source route, each byte with its MSB set; every switch
 *                 consumes the leading byte (low 7 bits = output port)
 *   nvm_pkt_hdr   first byte has its MSB clear: that is how the receiver
 *                 tells the end of the route
 *   payload       hdr.len bytes
 *   crc32         IEEE CRC-32 of header and payload, big-endian
 *
 * Every multi-byte field on the wire is big-endian, as on Myrinet.  A NIC
 * that receives a frame still starting with a route byte, too short, with
 * a bad length or a bad CRC drops it and counts it.
 */
#ifndef NETVM_PACKET_H
#define NETVM_PACKET_H

#include "abi_types.h"

#define NVM_ROUTE_MAX		8
#define NVM_NODES		64	/* node ids 0..63: NetVM peers, routes, the
					 * mapper's tables */
#define NVM_ROUTE_BYTE		0x80	/* MSB marks a route byte */

struct nvm_pkt_hdr {
	uint8_t type;		/* enum nvm_pkt_type, MSB clear */
	uint8_t version;	/* NVM_PKT_VERSION */
	uint16_t src_node;	/* stamped by the sending firmware */
	uint16_t dst_node;
	uint16_t len;		/* payload bytes */
};
NVM_ABI_ASSERT(sizeof(struct nvm_pkt_hdr) == 8, "packet header size");

#define NVM_PKT_VERSION		1
#define NVM_PKT_CRC_LEN		4

enum nvm_pkt_type {
	NVM_PKT_RAW = 0x01,	/* raw frame for the host's raw rings */
	NVM_PKT_NETVM = 0x02,	/* NetVM: struct nvm_net_hdr, then data */
	NVM_PKT_UNET = 0x03,	/* U-Net: struct nvm_unet_hdr (unet_abi.h), then data */
};

/*
 * NetVM packet header, after struct nvm_pkt_hdr when type is NVM_PKT_NETVM.
 * Big-endian.  src_port, epochs, seq and ack are stamped by the sending
 * firmware, never taken from a user's command.
 */
struct nvm_net_hdr {
	uint8_t op;		/* enum nvm_net_op */
	uint8_t flags;		/* NVM_CF_NOTIFY, _NOINTR, _PHYS, _ACK_NOW */
	uint16_t src_port;
	uint16_t dst_port;
	uint16_t status;	/* responses: enum nvm_status */
	uint32_t src_epoch;	/* the sender's boot epoch */
	uint32_t dst_epoch;	/* the receiver's epoch as the sender knows it, 0 if not */
	uint32_t seq;		/* per node pair, from 1; 0 on unsequenced packets */
	uint32_t ack;		/* cumulative: every seq below it is complete */
	uint32_t req;		/* requester's operation id, echoed in the response */
	uint32_t notify;
	uint64_t va;		/* target address */
	uint64_t key;
	uint32_t hash;
	uint32_t atomic_op;
	uint32_t arg[3];	/* atomic arguments, or results in the response;
				 * WRITE_RESP: arg[0] = the write's seq */
	uint32_t len;		/* READ_REQ: bytes wanted; others: payload bytes */
};
NVM_ABI_ASSERT(sizeof(struct nvm_net_hdr) == 72, "net header size");

enum nvm_net_op {
	NVM_NET_WRITE = 1,	/* data for dst page; done when acknowledged, or
				 * answered by WRITE_RESP with the error */
	NVM_NET_WRITE_RESP = 2,
	NVM_NET_READ_REQ = 3,	/* answered by READ_RESP carrying the data */
	NVM_NET_READ_RESP = 4,
	NVM_NET_ATOMIC_REQ = 5,	/* answered by ATOMIC_RESP */
	NVM_NET_ATOMIC_RESP = 6,
	NVM_NET_ACK = 7,	/* unsequenced: carries only ack */
	NVM_NET_OP_COUNT
};

/* Largest payload of any packet (a page plus headers); sizes the slots. */
#define NVM_PKT_MAX_PAYLOAD	(4096 + 128)
/* Largest raw frame the raw rings carry. */
#define NVM_RAW_MAX_PAYLOAD	4096
#define NVM_FRAME_MAX		(NVM_ROUTE_MAX + sizeof(struct nvm_pkt_hdr) + \
				 NVM_PKT_MAX_PAYLOAD + NVM_PKT_CRC_LEN)

#endif /* NETVM_PACKET_H */
