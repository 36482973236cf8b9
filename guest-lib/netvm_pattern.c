// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/* Test-frame pattern and small parsing helpers for the netvm tools. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "netvm_pattern.h"

#define ROUTE_MAX 8

void netvm_pattern_fill(void *buf, size_t size, uint32_t k)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < size; i++)
		p[i] = netvm_pattern_byte(k, i);
	if (size >= 4) {
		p[0] = (uint8_t)k;
		p[1] = (uint8_t)(k >> 8);
		p[2] = (uint8_t)(k >> 16);
		p[3] = (uint8_t)(k >> 24);
	}
}

uint32_t netvm_pattern_seq(const void *buf)
{
	const uint8_t *p = buf;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

long netvm_pattern_check(const void *buf, size_t size, uint32_t k)
{
	const uint8_t *p = buf;
	size_t i = 0;

	if (size >= 4) {
		for (; i < 4; i++)
			if (p[i] != (uint8_t)(k >> (8 * i)))
				return (long)i;
	}
	for (; i < size; i++)
		if (p[i] != netvm_pattern_byte(k, i))
			return (long)i;
	return -1;
}

int netvm_parse_route(const char *s, uint8_t *route, unsigned int *route_len)
{
	unsigned int n = 0;
	unsigned long v;
	char *end;

	if (!s || !route || !route_len)
		return -EINVAL;
	*route_len = 0;
	if (!*s)
		return 0;
	for (;;) {
		if (!isxdigit((unsigned char)*s))
			return -EINVAL;
		errno = 0;
		v = strtoul(s, &end, 16);
		if (errno || end == s || v > 0xff || !(v & 0x80))
			return -EINVAL;
		if (n == ROUTE_MAX)
			return -E2BIG;
		route[n++] = (uint8_t)v;
		s = end;
		if (!*s)
			break;
		if (*s != ',' && *s != ':')
			return -EINVAL;
		s++;
	}
	*route_len = n;
	return 0;
}

int netvm_parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!s || !out || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double netvm_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	if (n % 2)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2;
}
