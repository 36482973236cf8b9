/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The frame CRC (NVM_PKT_CRC_LEN bytes after every packet, netvm/packet.h):
 * CRC-32 of IEEE 802.3, reflected, as zlib's crc32(); crc32("123456789")
 * is 0xcbf43926.  This is the definition of what a valid frame is; the
 * switch's probe answers (fabric/probe.c) compute it here, and the NIC's
 * CRC unit (firmware-interp/fw_crc32.c) with zlib's crc32(), much faster
 * on full frames; the unit test firmware-raw holds the two equal.
 *
 * Nibble-driven: 16 table entries, two lookups per byte.
 */
#ifndef NETVM_CRC32_H
#define NETVM_CRC32_H

#include "abi_types.h"

static inline uint32_t nvm_crc32(uint32_t crc, const uint8_t *buf,
				 uint32_t len)
{
	/* entry n: n run through the reflected polynomial 0xedb88320 four
	 * times, as a bitwise CRC would */
	static const uint32_t nib[16] = {
		0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
		0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
		0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
		0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
	};

	crc = ~crc;
	while (len--) {
		crc ^= *buf++;
		crc = (crc >> 4) ^ nib[crc & 0xf];
		crc = (crc >> 4) ^ nib[crc & 0xf];
	}
	return ~crc;
}

#endif /* NETVM_CRC32_H */
