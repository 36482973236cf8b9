/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Helpers for guest test programs: TAP-style "ok - " / "not ok - " lines
 * that run-guest-tests.py turns into its own (after tap_prefix, e.g. a
 * rank), and the small files through which the runner passes ports between
 * nodes.  Static inline: a program takes what it uses.
 */
#ifndef NETVM_GUEST_TAP_H
#define NETVM_GUEST_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <netvm/netvm_uapi.h>

static int failures;
static const char *tap_prefix = "";

static inline void __attribute__((format(printf, 2, 3)))
check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - %s", cond ? "ok" : "not ok", tap_prefix);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failures += !cond;
}

/*
 * Byte i of test data seeded by seed: netvm_ktest_pattern, the bytes the
 * driver's test ioctl fills and checks (a hash of both, never repeating).
 */
static inline uint8_t tap_pattern(unsigned int seed, size_t i)
{
	return netvm_ktest_pattern(seed, i);
}

static inline void tap_fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = tap_pattern(seed, i);
}

static inline bool tap_filled(const uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != tap_pattern(seed, i))
			return false;
	return true;
}

/* The offset of the first byte of p[0, n) that is not seed's, or -1. */
static inline long tap_first_bad(const uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != tap_pattern(seed, i))
			return (long)i;
	return -1;
}

/* Wait up to secs for a non-empty file and read it. */
static inline int wait_file(const char *path, char *buf, size_t cap, int secs)
{
	for (int i = 0; i < secs * 10; i++) {
		FILE *f = fopen(path, "r");

		if (f) {
			size_t n = fread(buf, 1, cap - 1, f);

			fclose(f);
			buf[n] = 0;
			if (n)
				return 0;
		}
		usleep(100000);
	}
	return -ETIMEDOUT;
}

/* Write atomically: the reader sees all of it or nothing. */
static inline void write_file(const char *path, const char *text)
{
	char tmp[128];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	rename(tmp, path);
}

#endif
