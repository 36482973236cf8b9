// SPDX-License-Identifier: MIT
/*
 * The RDM layer's clock (resend timeouts), in a file of its own so that
 * the unit test of fnv_rdm_link.c can run it on a clock it advances.
 */
#include <time.h>

#include "fnv_rdm.h"

int64_t fnv_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}
