// SPDX-License-Identifier: GPL-2.0-only
/*
 * Ones' complement sums for the Ethernet program's checksum offload
 * (fw_eth.c, include/netvm/eth_abi.h): the internet checksum of RFC 1071,
 * over bytes taken as big-endian 16-bit words.  The firmware fills in the
 * checksum of a frame the host marked NVM_ETH_CSUM, and hands the sum of
 * every received frame to the host, whose stack verifies it: the guest
 * then does no per-byte checksum work of its own.
 */
#include "fw_eth_csum.h"

uint16_t fw_csum_sum(const uint8_t *p, uint32_t n)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

bool fw_csum_fill(uint8_t *frame, uint32_t len, uint32_t start, uint32_t off)
{
	uint16_t c;

	if (start >= len || off > len - start || len - start - off < 2)
		return false;
	c = (uint16_t)~fw_csum_sum(frame + start, len - start);
	if (!c)
		c = 0xffff;	/* 0 means "no checksum" to UDP; the same sum */
	frame[start + off] = (uint8_t)(c >> 8);
	frame[start + off + 1] = (uint8_t)c;
	return true;
}
