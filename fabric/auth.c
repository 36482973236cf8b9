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
 */
#include <stddef.h>

#include "switch.h"
#include "netvm/packet.h"

gboolean fab_src_ok(const Port *in, const uint8_t *d, uint32_t len)
{
	const size_t at = offsetof(struct nvm_pkt_hdr, src_node);
	uint32_t rl = 0;

	if (in->node < 0)
		return TRUE;
	while (rl < len && (d[rl] & NVM_ROUTE_BYTE))
		rl++;
	/* a frame too short to name its source cannot be from this node */
	if (len - rl < at + 2)
		return FALSE;
	return (d[rl + at] << 8 | d[rl + at + 1]) == in->node;
}
