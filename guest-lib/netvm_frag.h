/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * libnetvm internal: how a transfer is cut into NetVM commands.  Each
 * fragment stays within one page on the local side and on the remote side
 * (so it is at most NVM_PAGE_SIZE bytes); a write fragment of at most
 * NVM_INLINE_MAX bytes travels inline in the command; only the last
 * fragment carries the notification.  Pure functions, unit-tested.
 */
#ifndef NETVM_FRAG_H
#define NETVM_FRAG_H

#include <stdint.h>

struct nvl_frag {
	uint64_t local;		/* local address of this fragment */
	uint64_t remote;	/* remote address */
	uint32_t len;
	uint8_t inl;		/* write: payload inline in the command */
	uint8_t last;		/* the transfer's last fragment (notify here) */
};

struct nvl_frag_iter {
	uint64_t local;
	uint64_t remote;
	uint64_t left;
	int is_write;
};

void nvl_frag_begin(struct nvl_frag_iter *it, uint64_t local, uint64_t remote,
		    uint64_t size, int is_write);
/* The next fragment: 1 if *f was filled, 0 when the transfer is done. */
int nvl_frag_next(struct nvl_frag_iter *it, struct nvl_frag *f);
/* Bytes of the fragment starting at (local, remote) with @left to go. */
uint32_t nvl_frag_len(uint64_t local, uint64_t remote, uint64_t left);
/* Number of fragments of a whole transfer. */
uint64_t nvl_frag_count(uint64_t local, uint64_t remote, uint64_t size);

#endif /* NETVM_FRAG_H */
