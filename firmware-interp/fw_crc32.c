// SPDX-License-Identifier: GPL-2.0-only
/* The chip's CRC-32 unit: the frame CRC of netvm/crc32.h. */
#include "fw.h"
#include "netvm/crc32.h"

uint32_t fw_crc32(uint32_t crc, const uint8_t *buf, uint32_t len)
{
	return nvm_crc32(crc, buf, len);
}
