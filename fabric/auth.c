// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm-switch: sender authentication.  The switch knows which node is on
 * each node port (the topology's "node" lines), so the source that a frame
 * claims (nvm_pkt_hdr.src_node, include/netvm/packet.h) can be checked
 * where the frame enters the fabric: a guest that owns its NIC can put any
 * bytes on its link, but not pass them off as another node's.  Nodes
 * stamp src_node in their firmware; no honest frame fails this.
 *
 * Only src_node names a node on the wire.  The other sender fields (NetVM
 * src_port and src_epoch, U-Net src_port) name things inside the sending
 * node, which its root owns anyway.  Ports between switches, and "port
 * ... listen" ports (ad hoc peers, no node id), are not checked.
 *
 * The mapper's SCOUT and ROUTES messages make a node answer and replace
 * its whole route table; with --mapper (or the control command "mapper
 * N") only that node may send them.
 */
#include <stddef.h>
#include <string.h>

#include "switch.h"
#include "netvm/mapper.h"
#include "netvm/packet.h"

/* Route bytes at the head of @d (a switch strips them one by one). */
static uint32_t route_len(const uint8_t *d, uint32_t len)
{
	uint32_t rl = 0;

	while (rl < len && (d[rl] & NVM_ROUTE_BYTE))
		rl++;
	return rl;
}

gboolean fab_src_ok(const Port *in, const uint8_t *d, uint32_t len)
{
	const size_t at = offsetof(struct nvm_pkt_hdr, src_node);
	uint32_t rl;

	if (in->node < 0)
		return TRUE;
	rl = route_len(d, len);
	/* a frame too short to name its source cannot be from this node */
	if (len - rl < at + 2)
		return FALSE;
	return (d[rl + at] << 8 | d[rl + at + 1]) == in->node;
}

gboolean fab_mapper_ok(const Port *in, const uint8_t *d, uint32_t len)
{
	const size_t hl = sizeof(struct nvm_pkt_hdr);
	const size_t kind = offsetof(struct nvm_map_msg, kind);
	uint32_t rl;
	const uint8_t *m;

	if (in->node < 0 || fab_cfg.mapper_node < 0 ||
	    in->node == fab_cfg.mapper_node)
		return TRUE;
	rl = route_len(d, len);
	/* what a node's driver would take for a mapper message: a raw
	 * payload (hdr.len bytes, the CRC after them) of at least a message */
	if (len - rl < hl + sizeof(struct nvm_map_msg) || d[rl] != NVM_PKT_RAW ||
	    (size_t)(d[rl + hl - 2] << 8 | d[rl + hl - 1]) <
	    sizeof(struct nvm_map_msg))
		return TRUE;
	m = d + rl + hl;
	if (memcmp(m, NVM_MAP_MAGIC, NVM_MAP_MAGIC_LEN))
		return TRUE;
	return m[kind] != NVM_MAP_SCOUT && m[kind] != NVM_MAP_ROUTES;
}
