/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Test-frame pattern shared by netvm-raw, the guest test programs and the
 * unit tests (not part of libnetvm's ABI).
 *
 * Byte i of frame k is a hash of k and i (so the pattern never repeats
 * within a frame, and a byte at the wrong offset or from another frame does
 * not pass for the right one), except that a frame of at least 4 bytes
 * carries k, little-endian, in its first 4 bytes.
 */
#ifndef NETVM_PATTERN_H
#define NETVM_PATTERN_H

#include <stddef.h>
#include <stdint.h>

static inline uint8_t netvm_pattern_byte(uint32_t k, size_t i)
{
	uint64_t x = ((uint64_t)i + 1) * 0x9e3779b97f4a7c15ull ^
		     ((uint64_t)k + 1) * 0xbf58476d1ce4e5b9ull;

	x ^= x >> 31;
	x *= 0x94d049bb133111ebull;
	return (uint8_t)(x >> 56);
}

/* Fill buf[0 .. size) with frame k. */
void netvm_pattern_fill(void *buf, size_t size, uint32_t k);

/*
 * Check buf[0 .. size) against frame k.  Returns -1 if it matches, else the
 * offset of the first wrong byte.
 */
long netvm_pattern_check(const void *buf, size_t size, uint32_t k);

/* The frame number k carried by a frame of at least 4 bytes. */
uint32_t netvm_pattern_seq(const void *buf);

/* Parse "0x80,0x81" or "80:81" (hex bytes, MSB set) into route[]. */
int netvm_parse_route(const char *s, uint8_t *route, unsigned int *route_len);

/* Parse a non-negative decimal number that fits max; -EINVAL otherwise. */
int netvm_parse_uint(const char *s, unsigned long max, unsigned long *out);

/* Median of n doubles (sorts v in place); 0 if n == 0. */
double netvm_median(double *v, size_t n);

#endif /* NETVM_PATTERN_H */
