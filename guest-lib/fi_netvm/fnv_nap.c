// SPDX-License-Identifier: MIT
/*
 * Spin, then sleep.  A process that calls fi_cq_read in a tight loop on
 * an empty queue (every MPI library waiting for a message) keeps its
 * vCPU busy, and on a host with fewer cores than vCPUs that vCPU's
 * time is taken from the very peer whose answer it waits for: hpcc's
 * ring latency on 4 nodes of a 2-core host was 4.4 ms, about one host
 * time slice.  So a reader that has found the queue empty, call after
 * call, for spin_ns sleeps in the NIC's interrupt (fnv_cq.c, "naps")
 * and gives the CPU back; a wait shorter than spin_ns is never slowed.
 *
 * A run is calls close together: a pause longer than spin_ns between two
 * empty reads means the caller did other work between them (it is not
 * waiting only for this queue), and a new run starts, so a program that
 * computes and polls now and then is never put to sleep.
 *
 * It is off unless FI_NETVM_SPIN_US asks for it: a program that polls
 * between short pieces of work looks exactly like one that only waits.
 * hpcc on 4 nodes of a 2-core host with a spin of 200 us: its latency
 * and bandwidth tests 102 s -> 78 s, but MPIRandomAccess (MPI_Test
 * between updates) 3 s -> 66 s (docs/libfabric.md, "Spinning or
 * sleeping").
 */
#include "fnv_nap.h"

bool fnv_nap_empty(struct fnv_nap *n, int64_t now, int64_t spin_ns)
{
	if (spin_ns < 0)
		return false;
	if (!n->idle_since || now - n->last > spin_ns)
		n->idle_since = now;
	n->last = now;
	return now - n->idle_since >= spin_ns;
}

void fnv_nap_slept(struct fnv_nap *n, int64_t now)
{
	n->last = now;
}

void fnv_nap_busy(struct fnv_nap *n)
{
	n->idle_since = 0;
}
