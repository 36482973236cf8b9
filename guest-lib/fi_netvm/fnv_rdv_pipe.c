// SPDX-License-Identifier: MIT
/*
 * A rendezvous read, pipelined (fnv_rdv_pipe.h).  libnetvm has one
 * completion counter per endpoint: a flush waits for every read queued,
 * not for one of them.  So the reads go a chunk at a time, alternating
 * between the area's two halves: chunk k+1 is queued, then chunk k
 * (complete since the last flush) is copied out while the NIC fetches
 * k+1, then the flush waits for k+1.  One synchronous 64 KiB read after
 * another left the NIC idle during every copy and paid a round trip per
 * 64 KiB; the area is long-lived, so its pages keep their translations
 * in the NIC (a fresh export per message faults each page first).
 */
#include <stdbool.h>
#include <stdint.h>

#include "fnv_rdv_pipe.h"

struct chunk {
	size_t pos;		/* in the message */
	size_t len;		/* 0: none */
	const uint8_t *at;	/* in the area */
};

int fnv_rdv_pipe(const struct fnv_rdv_nic *nic, const struct fnv_rdv_req *q,
		 const struct iovec *iov, size_t count, size_t from, size_t n,
		 uint8_t *area, size_t chunk)
{
	struct chunk prev = { 0 };
	uint32_t piece = 0;
	uint64_t off = from;	/* in the piece */
	size_t pos = from;	/* in the message */
	bool queued = false;	/* reads not flushed */
	int half = 0, seg = -1, err = 0;

	n += from;		/* where to stop */
	while (piece < q->count && off >= q->piece[piece].len)
		off -= q->piece[piece++].len;

	while (!err) {
		struct chunk cur = { 0 };

		if (pos < n && piece < q->count) {
			size_t k = n - pos < chunk ? n - pos : chunk;

			if (seg < 0)
				seg = nic->seg(nic->ctx, &q->piece[piece]);
			if (seg < 0) {
				err = seg;
				break;
			}
			if (k > q->piece[piece].len - off)
				k = (size_t)(q->piece[piece].len - off);
			cur.pos = pos;
			cur.len = k;
			cur.at = area + (size_t)half * chunk;
			queued = true;
			err = nic->read(nic->ctx, seg, off, (void *)cur.at, k);
			if (err)
				break;
			half ^= 1;	/* prev's half stays untouched */
			off += k;
			pos += k;
			if (off == q->piece[piece].len) {
				piece++;
				off = 0;
				seg = -1;
			}
		}
		/* the copy of the chunk before, while the NIC reads this one */
		if (prev.len)
			fnv_iov_scatter(iov, count, prev.pos, prev.at, prev.len);
		if (!cur.len)
			break;
		err = nic->flush(nic->ctx);
		queued = false;
		prev = cur;
	}
	/* a later flush (an RMA's) must not see this one's reads or errors */
	if (queued)
		(void)nic->flush(nic->ctx);
	return err;
}
