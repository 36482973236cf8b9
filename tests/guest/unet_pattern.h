/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Message contents for the U-Net guest tests: every 4-byte word of message
 * k is a bijective mix of (k, word index), so within the largest message
 * (4096 B, 1024 words) no word repeats, and no word of message k appears at
 * the same place in another message (k < 2^22).  Swapped or duplicated
 * halves, a buffer of another message or a wrong source page all fail to
 * verify; a pattern that repeated every 256 bytes let them through.
 */
#ifndef NETVM_UNET_PATTERN_H
#define NETVM_UNET_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* murmur3's finalizer: a bijection on 32-bit words */
static inline uint32_t unet_mix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static inline void unet_pattern(uint8_t *p, size_t n, uint32_t k)
{
	for (size_t i = 0; i < n; i += 4) {
		uint32_t w = unet_mix32(k << 10 | (uint32_t)(i / 4));

		memcpy(p + i, &w, n - i < 4 ? n - i : 4);
	}
}

/* 1 if p holds exactly message k of n bytes */
static inline int unet_pattern_ok(const uint8_t *p, size_t n, uint32_t k)
{
	uint8_t want[4096];

	if (n > sizeof(want))
		return 0;
	unet_pattern(want, n, k);
	return !memcmp(p, want, n);
}

#endif
