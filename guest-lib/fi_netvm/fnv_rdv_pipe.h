/* SPDX-License-Identifier: MIT */
/*
 * The receiver's side of a rendezvous read (fnv_rdv_pipe.c): the
 * message's pieces read in chunks into two halves of a long-lived bounce
 * area, the next chunk's reads queued before the last one is copied out,
 * so that the NIC reads while the CPU copies.  The NIC is reached through
 * struct fnv_rdv_nic (fnv_nvm.c: libnetvm; the unit tests: a fake).
 */
#ifndef FNV_RDV_PIPE_H
#define FNV_RDV_PIPE_H

#include "fnv_rdm.h"

/* Bytes a rendezvous read queues at once: one half of the area. */
#define FNV_RDV_CHUNK	(256 * 1024)
/* The domain's bounce area (fnv_nvm.c): two chunks (RMA uses the first
 * FNV_BOUNCE bytes). */
#define FNV_NVM_AREA	(2 * FNV_RDV_CHUNK)

struct fnv_rdv_nic {
	void *ctx;
	/* The segment of a piece (imported once a read, from the piece's
	 * own description): >= 0 or a negative errno. */
	int (*seg)(void *ctx, const struct fnv_rdv_piece *piece);
	/* Queue [off, +len) of seg into to: 0 or a negative errno (then
	 * some of it may be queued all the same). */
	int (*read)(void *ctx, int seg, uint64_t off, void *to, size_t len);
	/* Wait until everything queued has arrived: 0 or its first error. */
	int (*flush)(void *ctx);
};

/* Read bytes [from, +n) of q's pieces into the same places of iov
 * through area (2 * chunk bytes, in the NIC's reach): 0 or a negative
 * errno.  Nothing stays queued when it returns. */
int fnv_rdv_pipe(const struct fnv_rdv_nic *nic, const struct fnv_rdv_req *q,
		 const struct iovec *iov, size_t count, size_t from, size_t n,
		 uint8_t *area, size_t chunk);

#endif
