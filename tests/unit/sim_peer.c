// SPDX-License-Identifier: GPL-2.0-only
/* A hostile peer: forged NetVM frames (see sim_peer.h). */
#include <stdlib.h>
#include <string.h>

#include "sim_peer.h"

uint32_t sim_nv_frame(uint8_t *buf, uint16_t src, uint16_t dst,
		      const struct nvm_net_hdr *h, const void *data,
		      uint32_t len)
{
	struct nvm_pkt_hdr ph = {
		.type = NVM_PKT_NETVM, .version = NVM_PKT_VERSION,
		.src_node = fw_be16(src), .dst_node = fw_be16(dst),
		.len = fw_be16((uint16_t)(sizeof(*h) + len)),
	};
	struct nvm_net_hdr n = *h;

	if (sizeof(ph) + sizeof(n) + len > NVM_FRAME_MAX)
		abort();
	fw_nv_hdr_swap(&n);	/* the firmware's own byte order */
	memcpy(buf, &ph, sizeof(ph));
	memcpy(buf + sizeof(ph), &n, sizeof(n));
	if (len)
		memcpy(buf + sizeof(ph) + sizeof(n), data, len);
	return sizeof(ph) + sizeof(n) + len;
}

void sim_nv_inject(struct sim_chip *to, uint16_t src,
		   const struct nvm_net_hdr *h, const void *data, uint32_t len)
{
	uint8_t buf[NVM_FRAME_MAX];

	sim_inject(to, buf, sim_nv_frame(buf, src, to->chip.node_id, h, data,
					 len));
}
