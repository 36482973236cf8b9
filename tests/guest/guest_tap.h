/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Helpers for guest test programs: TAP-style "ok - " / "not ok - " lines
 * that run-guest-tests.py turns into its own, and the small files through
 * which the runner passes ports between nodes (netvm_unet_test.c and
 * netvm_dsm_test.c; netvm_trip_test.c still carries its own copy).
 */
#ifndef NETVM_GUEST_TAP_H
#define NETVM_GUEST_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static int failures;

static void __attribute__((format(printf, 2, 3)))
check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf(cond ? "ok - " : "not ok - ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failures += !cond;
}

/* Wait up to secs for a non-empty file and read it. */
static int wait_file(const char *path, char *buf, size_t cap, int secs)
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
static void write_file(const char *path, const char *text)
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
