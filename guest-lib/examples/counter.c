// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * A distributed counter protected by an MCS lock: the counter is a plain
 * word in rank 0's memory; every rank, ITERS times, takes the lock, reads
 * the counter, writes it back plus one and releases the lock.  Without
 * the lock, increments would be lost.
 *
 *   netvm-counter RANK ITERS NODE0 NODE1 ...     (one process per node)
 *
 * Each process takes port 1 on its node.  Exit 0 when the counter ends
 * at ITERS * number of nodes.
 */
#include <stdio.h>
#include <stdlib.h>

#include <netvm.h>
#include <netvm_sync.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "netvm-counter: %s: %s\n", what, netvm_strerror(err));
	return 1;
}

int main(int argc, char **argv)
{
	static uint32_t page[1024] __attribute__((aligned(4096)));
	struct netvm_sync_member m[NETVM_SYNC_MAX_MEMBERS];
	struct netvm_sync_obj lock;
	struct netvm_sync *s;
	struct netvm *nv;
	unsigned int n = argc - 3, rank, i, iters;
	uint32_t v;
	int seg = -1, err;

	if (argc < 4 || n > NETVM_SYNC_MAX_MEMBERS)
		return fprintf(stderr, "usage: netvm-counter RANK ITERS NODE...\n"), 2;
	rank = atoi(argv[1]);
	iters = atoi(argv[2]);
	for (i = 0; i < n; i++)
		m[i] = (struct netvm_sync_member){ .node = atoi(argv[3 + i]), .port = 1 };

	if ((err = netvm_open(0, &nv)) || (err = netvm_register(nv, NETVM_PORT_ANY, 0)) < 0)
		return fail("open/register", err);
	/* page[0] is the counter (rank 0's is the one); page[1] a read target */
	if ((err = netvm_export(nv, "ctr", page, sizeof(page), 0, NULL)) < 0)
		return fail("export", err);
	if ((err = netvm_sync_open(nv, "nvsync", m, n, rank, 60000, &s)))
		return fail("sync_open", err);
	/* the NI cannot reach its own node: rank 0 uses its memory directly */
	if (rank && (seg = netvm_import(nv, m[0].node, m[0].port, "ctr")) < 0)
		return fail("import", seg);
	netvm_mcs_init(s, &lock, 0, 0);		/* home rank 0, object 0 */

	for (i = 0; i < iters; i++) {
		if ((err = netvm_mcs_acquire(&lock)))
			return fail("acquire", err);
		if (rank == 0) {
			page[0]++;
		} else {
			err = netvm_readF(nv, seg, 0, &page[1], 4);
			v = page[1] + 1;
			if (!err)
				err = netvm_writeF(nv, seg, 0, &v, 4);
		}
		if (err)
			return fail("read/write", err);
		if ((err = netvm_mcs_release(&lock)))
			return fail("release", err);
	}
	/* everyone done: read the result; then let rank 0 leave last */
	if ((err = netvm_sync_barrier(s)) ||
	    (err = rank ? netvm_readF(nv, seg, 0, &page[1], 4) : (page[1] = page[0], 0)) ||
	    (err = netvm_sync_barrier(s)))
		return fail("barrier/read", err);
	printf("rank %u: counter %u, expected %u\n", rank, page[1], iters * n);
	netvm_sync_close(s);
	netvm_close(nv);
	return page[1] == iters * n ? 0 : 1;
}
