// SPDX-License-Identifier: GPL-2.0-only
/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32()), table-driven. */
#include "fw.h"

static uint32_t crc_table[256];
static bool crc_table_ready;

static void crc_table_init(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[n] = c;
	}
	crc_table_ready = true;
}

uint32_t fw_crc32(uint32_t crc, const uint8_t *buf, uint32_t len)
{
	if (!crc_table_ready)
		crc_table_init();
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *buf++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
