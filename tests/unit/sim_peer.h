/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A hostile peer for the firmware tests: NetVM frames with any header and
 * any payload, as if node @src had sent them (sim_inject puts them on the
 * receiver's wire).  Nothing is checked: forging is the point.
 */
#ifndef NETVM_SIM_PEER_H
#define NETVM_SIM_PEER_H

#include "sim_chip.h"

/* Build packet header + big-endian net header (@h in host order) + @len
 * bytes of @data into @buf (NVM_FRAME_MAX); returns the frame's length. */
uint32_t sim_nv_frame(uint8_t *buf, uint16_t src, uint16_t dst,
		      const struct nvm_net_hdr *h, const void *data,
		      uint32_t len);
/* sim_nv_frame, then sim_inject into @to. */
void sim_nv_inject(struct sim_chip *to, uint16_t src,
		   const struct nvm_net_hdr *h, const void *data, uint32_t len);

#endif
