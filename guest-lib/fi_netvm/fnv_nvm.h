/* SPDX-License-Identifier: MIT */
/*
 * A domain's NetVM side (fnv_nvm.c), which memory regions (fnv_mr.c), RMA
 * (fnv_rma.c) and atomics (fnv_atomic.c) use.  Errors are negative errno
 * values, as libnetvm's; fnv_nvm_fi_err() turns one into the libfabric
 * error of a completion.
 */
#ifndef FNV_NVM_H
#define FNV_NVM_H

#include "fnv.h"

#define FNV_BOUNCE		(64 * 1024)	/* bytes per NetVM transfer */
#define FNV_KEY_PORT_SHIFT	48		/* key: NetVM port, then ... */
#define FNV_KEY_RAND_MASK	((1ull << FNV_KEY_PORT_SHIFT) - 1) /* random */
#define FNV_NVM_NAME		16		/* "fi" + 12 hex digits + NUL */

/* fnv_mr.c: where [off, +len) of this process's region of key is (the
 * loop-back): 0, -EKEYREJECTED (no such region here), -ERANGE, -EROFS. */
int fnv_mr_local(uint64_t key, uint64_t off, size_t len, bool write,
		 uint8_t **at);

/* The export name of a memory region's key. */
void fnv_nvm_key_name(uint64_t key, char name[FNV_NVM_NAME]);
/* A fresh key of the domain's NetVM port (48 random bits) and its name,
 * for a memory region's or a rendezvous's export: 0 or -EIO. */
int fnv_nvm_fresh_key(const struct fnv_domain *d, uint64_t *key,
		      char name[FNV_NVM_NAME]);
/* Register the domain's NetVM endpoint and bounce buffer, once. */
int fnv_nvm_ready_locked(struct fnv_domain *d);
void fnv_nvm_fini(struct fnv_domain *d);
int fnv_nvm_fi_err(int err);

/* To or from the region of key on node, at offset off: synchronous. */
int fnv_nvm_write_locked(struct fnv_domain *d, uint16_t node, uint64_t key,
			 uint64_t off, const struct iovec *iov, size_t count);
int fnv_nvm_read_locked(struct fnv_domain *d, uint16_t node, uint64_t key,
			uint64_t off, const struct iovec *iov, size_t count);
int fnv_nvm_swap_locked(struct fnv_domain *d, uint16_t node, uint64_t key,
			uint64_t off, uint32_t val, uint32_t *old);
int fnv_nvm_cswap_locked(struct fnv_domain *d, uint16_t node, uint64_t key,
			 uint64_t off, uint32_t expect, uint32_t val,
			 uint32_t *old);

#endif
