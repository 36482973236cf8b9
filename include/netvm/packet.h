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
};

/* Largest payload of any packet; sizes the receive-wire slots. */
#define NVM_PKT_MAX_PAYLOAD	4096
#define NVM_FRAME_MAX		(NVM_ROUTE_MAX + sizeof(struct nvm_pkt_hdr) + \
				 NVM_PKT_MAX_PAYLOAD + NVM_PKT_CRC_LEN)

#endif /* NETVM_PACKET_H */
