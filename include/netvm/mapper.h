/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The mapper protocol: route discovery and route distribution, as
 * Myrinet's mapper does it.  Used by netvm-switch (answers switch probes),
 * netvm.ko (answers scouts, installs route tables) and netvm-mapper (the
 * program that explores the fabric).  docs/fabric.md, "The mapper".
 *
 * Every message is a raw frame (NVM_PKT_RAW) whose payload is one
 * struct nvm_map_msg, big-endian like everything on the wire:
 *
 *  SWITCH_PROBE  route = to-switch bytes, NVM_MAP_SWITCH_BYTE, return
 *                route.  The switch that meets NVM_MAP_SWITCH_BYTE
 *                consumes it and answers SWITCH_REPLY out of the port the
 *                probe came in on, behind the return route that followed
 *                the byte.  The reply names the switch (id, name, ports)
 *                and that input port, which is how the mapper learns the
 *                way back.
 *  SCOUT         sent to a host port; ret_route leads from the last
 *                switch back to the mapper.  The host's driver answers
 *                SCOUT_REPLY with its node id.
 *  ROUTES        a node's whole route table (entries[0..count)); nodes
 *                absent from it lose their route.  Answered by ROUTES_ACK
 *                through ret_route.
 *
 * Replies go to the mapper's raw receive queue; SCOUT and ROUTES are taken
 * by the driver and never reach raw readers.  The fabric is trusted, as on
 * Myrinet: any node that can send raw frames can rewrite routes (only root
 * can open /dev/netvmN by default).
 */
#ifndef NETVM_MAPPER_H
#define NETVM_MAPPER_H

#include "abi_types.h"
#include "packet.h"

/* A route byte no switch has as a port (ports are < 128 and a switch has
 * at most 32): "the switch itself". */
#define NVM_MAP_SWITCH_PORT	0x7f
#define NVM_MAP_SWITCH_BYTE	(NVM_ROUTE_BYTE | NVM_MAP_SWITCH_PORT)

/* src_node of a frame a switch originates */
#define NVM_MAP_SWITCH_NODE	0xfffe

#define NVM_MAP_MAGIC		"NVMMAP\0\1"	/* 8 bytes, no NUL after */
#define NVM_MAP_MAGIC_LEN	8
#define NVM_MAP_NAME_LEN	16
#define NVM_MAP_MAX_ENTRIES	NVM_NODES	/* one per node id */

enum nvm_map_kind {
	NVM_MAP_SWITCH_PROBE = 1,
	NVM_MAP_SWITCH_REPLY = 2,
	NVM_MAP_SCOUT = 3,
	NVM_MAP_SCOUT_REPLY = 4,
	NVM_MAP_ROUTES = 5,
	NVM_MAP_ROUTES_ACK = 6,
};

struct nvm_map_route {
	uint16_t node;
	uint8_t len;		/* 0: no route to node */
	uint8_t reserved;
	uint8_t route[NVM_ROUTE_MAX];
};
NVM_ABI_ASSERT(sizeof(struct nvm_map_route) == 12, "map route entry size");

struct nvm_map_msg {
	uint8_t magic[NVM_MAP_MAGIC_LEN];
	uint8_t kind;		/* enum nvm_map_kind */
	uint8_t ret_len;	/* SCOUT, ROUTES: bytes of ret_route */
	uint16_t nports;	/* SWITCH_REPLY: the switch's port count */
	uint32_t cookie;	/* chosen by the mapper, echoed in replies */
	uint32_t generation;	/* ROUTES: map number; echoed in ROUTES_ACK */
	uint16_t node;		/* SCOUT_REPLY, ROUTES_ACK: the answering node */
	uint16_t in_port;	/* SWITCH_REPLY: port the probe arrived on */
	uint64_t id;		/* SWITCH_REPLY: the switch's 64-bit id */
	char name[NVM_MAP_NAME_LEN];	/* SWITCH_REPLY: its name, NUL padded */
	uint8_t ret_route[NVM_ROUTE_MAX];
	uint16_t count;		/* ROUTES: entries; ROUTES_ACK: installed */
	uint16_t status;	/* ROUTES_ACK: 0 or a positive errno */
	uint32_t reserved;
	struct nvm_map_route entries[];	/* ROUTES only */
};
NVM_ABI_ASSERT(sizeof(struct nvm_map_msg) == 64, "map message size");

#endif /* NETVM_MAPPER_H */
