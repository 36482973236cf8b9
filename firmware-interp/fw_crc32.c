// SPDX-License-Identifier: GPL-2.0-only
/*
 * The chip's CRC-32 unit: the frame CRC of netvm/crc32.h, which is
 * zlib's crc32(), computed by zlib.  Every frame is summed twice, by the
 * sender and by the receiver; netvm/crc32.h's nibble loop (two dependent
 * table lookups per byte) was 30 % of both QEMUs' CPU time under bulk TCP
 * on nvm0 (perf, 2026-11-26).  The unit test firmware-raw holds the two
 * equal.
 */
#include <zlib.h>

#include "fw.h"

uint32_t fw_crc32(uint32_t crc, const uint8_t *buf, uint32_t len)
{
	return (uint32_t)crc32(crc, buf, len);
}
