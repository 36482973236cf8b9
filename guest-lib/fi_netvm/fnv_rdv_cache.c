// SPDX-License-Identifier: MIT
/*
 * Rendezvous exports kept for the next message on the same buffer.
 *
 * A rendezvous message exports the sender's buffer (read-only) and the
 * receiver's whole pages (writable), each under a key only the peer is
 * told.  Made and removed per message, an export of 1 MiB cost 0.1-0.3 ms
 * to make and as much to remove in a TCG guest (every page faulted and its
 * translation written into the NIC, then unmapped again), on the way of
 * every message; applications send from and receive into the same buffers
 * over and over.  So a message's end does not remove its export: it gives
 * the export a new key and name (netvm_rekey: whatever the peer was told
 * opens nothing from then on, and the NIC keeps its translations), and the
 * export waits, idle, under a key nobody was told, for the next message on
 * exactly the same range with the same access.  Nothing is pinned: the
 * driver keeps following the pages as for any export.
 *
 * Idle exports give way to everything else: to an export their pages
 * overlap (-EEXIST: the idle ones overlapping go, then the export is made
 * again), to NetVM's 64 exports per domain (-ENOSPC: the oldest idle one
 * goes), and at most FNV_RDV_CACHE are kept.  A memory region whose pages
 * an idle export holds evicts it the same way (fnv_mr.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "fnv_nvm.h"
#include "fnv_rdm.h"

#define FNV_RDV_CACHE	16	/* exports kept per domain, busy or idle */

struct fnv_rdv_kept {
	int handle;		/* libnetvm's; -1: a free slot */
	bool writable;
	bool busy;		/* a message's: its peer knows the key */
	uint64_t last;		/* when it went idle: the oldest goes first */
	struct fnv_rdv_piece piece;	/* as the next message describes it */
};

struct fnv_rdv_cache {
	struct fnv_rdv_kept kept[FNV_RDV_CACHE];
	uint64_t clock;
};

static struct fnv_rdv_cache *cache_of(struct fnv_domain *d)
{
	if (!d->rdv_cache) {
		d->rdv_cache = calloc(1, sizeof(*d->rdv_cache));
		if (d->rdv_cache)
			for (int i = 0; i < FNV_RDV_CACHE; i++)
				d->rdv_cache->kept[i].handle = -1;
	}
	return d->rdv_cache;
}

static void drop(struct fnv_domain *d, struct fnv_rdv_kept *k)
{
	fnv_nvm_unexport_locked(d, k->handle);
	memset(k, 0, sizeof(*k));
	k->handle = -1;
}

static uintptr_t page_down(uintptr_t a)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	return a / page * page;
}

/* Remove the idle exports whose pages [buf, +len) touches: how many. */
int fnv_rdv_cache_evict_locked(struct fnv_domain *d, const void *buf,
			       size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t s = page_down((uintptr_t)buf);
	uintptr_t e = page_down((uintptr_t)buf + len + page - 1);
	struct fnv_rdv_cache *c = d->rdv_cache;
	int n = 0;

	for (int i = 0; c && i < FNV_RDV_CACHE; i++) {
		struct fnv_rdv_kept *k = &c->kept[i];
		uintptr_t ks, ke;

		if (k->handle < 0 || k->busy)
			continue;
		ks = page_down((uintptr_t)k->piece.addr);
		ke = page_down((uintptr_t)(k->piece.addr + k->piece.len) +
			       page - 1);
		if (ks < e && s < ke) {
			drop(d, k);
			n++;
		}
	}
	return n;
}

static struct fnv_rdv_kept *free_slot(struct fnv_rdv_cache *c)
{
	for (int i = 0; c && i < FNV_RDV_CACHE; i++)
		if (c->kept[i].handle < 0)
			return &c->kept[i];
	return NULL;
}

/* Remove the idle export that went idle first: false if none is. */
static bool evict_oldest(struct fnv_domain *d)
{
	struct fnv_rdv_cache *c = d->rdv_cache;
	struct fnv_rdv_kept *old = NULL;

	for (int i = 0; c && i < FNV_RDV_CACHE; i++) {
		struct fnv_rdv_kept *k = &c->kept[i];

		if (k->handle >= 0 && !k->busy && (!old || k->last < old->last))
			old = k;
	}
	if (old)
		drop(d, old);
	return old != NULL;
}

int fnv_rdv_export_locked(struct fnv_domain *d, const void *buf, size_t len,
			  bool writable, struct fnv_rdv_piece *out)
{
	struct fnv_rdv_cache *c = cache_of(d);
	struct fnv_rdv_kept *slot;
	int h;

	for (int i = 0; c && i < FNV_RDV_CACHE; i++) {
		struct fnv_rdv_kept *k = &c->kept[i];

		if (k->handle >= 0 && !k->busy && k->writable == writable &&
		    k->piece.addr == (uintptr_t)buf && k->piece.len == len) {
			k->busy = true;		/* as it is: a fresh key */
			*out = k->piece;
			return k->handle;
		}
	}
	for (;;) {
		h = fnv_nvm_export_locked(d, buf, len, writable, out);
		if (h == -EEXIST && fnv_rdv_cache_evict_locked(d, buf, len))
			continue;
		if (h == -ENOSPC && evict_oldest(d))
			continue;
		break;
	}
	if (h < 0)
		return h;
	slot = free_slot(c);
	if (!slot && evict_oldest(d))
		slot = free_slot(c);
	if (slot)	/* else not kept: removed at the message's end */
		*slot = (struct fnv_rdv_kept){
			.handle = h, .writable = writable, .busy = true,
			.piece = *out,
		};
	return h;
}

void fnv_rdv_unexport_locked(struct fnv_domain *d, int handle)
{
	struct fnv_rdv_cache *c = d->rdv_cache;

	for (int i = 0; c && i < FNV_RDV_CACHE; i++) {
		struct fnv_rdv_kept *k = &c->kept[i];

		if (k->handle != handle || !k->busy)
			continue;
		/* what the peer was told opens nothing from now on */
		if (fnv_nvm_rekey_locked(d, handle, &k->piece))
			drop(d, k);
		else {
			k->busy = false;
			k->last = ++c->clock;
		}
		return;
	}
	fnv_nvm_unexport_locked(d, handle);
}

void fnv_rdv_cache_fini(struct fnv_domain *d)
{
	free(d->rdv_cache);	/* the exports went with the endpoint */
	d->rdv_cache = NULL;
}
