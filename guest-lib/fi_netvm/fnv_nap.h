/* SPDX-License-Identifier: MIT */
/*
 * When a reader that polls an empty completion queue should sleep
 * instead (fnv_nap.c).  Kept apart from the CQ so that the unit test
 * (guest-lib/tests/test_fnv_nap.c) can drive it with a clock of its own.
 */
#ifndef FNV_NAP_H
#define FNV_NAP_H

#include <stdbool.h>
#include <stdint.h>

struct fnv_nap {
	int64_t idle_since;	/* ns: first empty read of this run; 0: none */
	int64_t last;		/* ns: the run's latest empty read */
};

/* An empty read at now (ns): true if the caller has polled an empty
 * queue without pause for spin_ns or more and should sleep.  spin_ns < 0:
 * never; 0: at once. */
bool fnv_nap_empty(struct fnv_nap *n, int64_t now, int64_t spin_ns);

/* The caller slept until now (ns) and the queue is still empty: the run
 * goes on, the next empty read sleeps at once. */
void fnv_nap_slept(struct fnv_nap *n, int64_t now);

/* A read that returned something: the next empty read starts a run. */
void fnv_nap_busy(struct fnv_nap *n);

#endif
