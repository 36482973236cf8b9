/* SPDX-License-Identifier: GPL-2.0-only */
/* Ones' complement sums for the Ethernet program (fw_eth_csum.c). */
#ifndef NETVM_FW_ETH_CSUM_H
#define NETVM_FW_ETH_CSUM_H

#include <stdbool.h>
#include <stdint.h>

/* The folded ones' complement sum of @n bytes (big-endian words; an odd
 * last byte is the high half of a word), not complemented. */
uint16_t fw_csum_sum(const uint8_t *p, uint32_t n);

/*
 * Store the checksum of @frame[@start, @len) at @start + @off (big-endian),
 * the field holding the pseudo-header's sum as the host seeded it; false,
 * nothing written, when the field is not inside the frame.
 */
bool fw_csum_fill(uint8_t *frame, uint32_t len, uint32_t start, uint32_t off);

#endif
