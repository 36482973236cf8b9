// SPDX-License-Identifier: MIT
/*
 * Unit tests of the rendezvous export cache (fi_netvm/fnv_rdv_cache.c)
 * against fake NetVM exports that refuse overlapping pages (-EEXIST) and
 * more than a few at once (-ENOSPC), as NetVM does.  A message on the same
 * buffer as an earlier one takes the kept export with no new one made; a
 * message's end changes the key its peer was told, every time, so no key
 * handed out opens the buffer after its message; an export kept idle
 * gives way to an overlapping one, to a memory region on its pages and to
 * the export limit, but one a message still uses never does; a different
 * range or access is another export; a failed rekey removes the export.
 */
#include "check_run.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fnv_nvm.h"
#include "fnv_rdm.h"

struct fi_provider fnv_prov = { .name = "netvm" };

#define FAKE_MAX	6	/* the fake NIC's export limit */
#define PAGE		4096

static struct {
	bool used;
	uintptr_t start, end;	/* whole pages */
	bool writable;
	uint64_t key;		/* what a peer told of it would use */
} fake[FAKE_MAX];
static int made, removed, rekeys, fail_rekey;
static uint64_t next_key = 1;
static uint8_t mem[64 * PAGE] __attribute__((aligned(PAGE)));

static uintptr_t down(uintptr_t a)
{
	return a / PAGE * PAGE;
}

int fnv_nvm_export_locked(struct fnv_domain *d, const void *buf, size_t len,
			  bool writable, struct fnv_rdv_piece *out)
{
	uintptr_t s = down((uintptr_t)buf);
	uintptr_t e = down((uintptr_t)buf + len + PAGE - 1);
	int free_slot = -1;

	(void)d;
	for (int i = 0; i < FAKE_MAX; i++) {
		if (fake[i].used && fake[i].start < e && s < fake[i].end)
			return -EEXIST;
		if (!fake[i].used && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		return -ENOSPC;
	fake[free_slot] = (typeof(fake[0])){
		.used = true, .start = s, .end = e, .writable = writable,
		.key = next_key++,
	};
	made++;
	*out = (struct fnv_rdv_piece){
		.key = fake[free_slot].key, .addr = (uintptr_t)buf,
		.len = len, .nvm_key = ~fake[free_slot].key, .pt_rows = 1,
	};
	return free_slot;
}

void fnv_nvm_unexport_locked(struct fnv_domain *d, int h)
{
	(void)d;
	ck_assert_int_ge(h, 0);
	ck_assert_int_lt(h, FAKE_MAX);
	ck_assert(fake[h].used);
	fake[h].used = false;
	removed++;
}

int fnv_nvm_rekey_locked(struct fnv_domain *d, int h,
			 struct fnv_rdv_piece *piece)
{
	(void)d;
	ck_assert(fake[h].used);
	rekeys++;
	if (fail_rekey)
		return -EIO;
	fake[h].key = next_key++;
	piece->key = fake[h].key;
	piece->nvm_key = ~fake[h].key;
	return 0;
}

static struct fnv_domain dom;

static void reset(void)
{
	fnv_rdv_cache_fini(&dom);
	memset(fake, 0, sizeof(fake));
	made = removed = rekeys = fail_rekey = 0;
}

static int live(void)
{
	int n = 0;

	for (int i = 0; i < FAKE_MAX; i++)
		n += fake[i].used;
	return n;
}

/* Does key still open an export (what a peer told of it could do)? */
static bool opens(uint64_t key)
{
	for (int i = 0; i < FAKE_MAX; i++)
		if (fake[i].used && fake[i].key == key)
			return true;
	return false;
}

START_TEST(same_buffer_kept)
{
	struct fnv_rdv_piece p1, p2, p3;
	int h1, h2, h3;

	reset();
	h1 = fnv_rdv_export_locked(&dom, mem + 16, 8 * PAGE, false, &p1);
	ck_assert_int_ge(h1, 0);
	ck_assert(opens(p1.key));
	fnv_rdv_unexport_locked(&dom, h1);
	/* its message over: the key its peer was told opens nothing */
	ck_assert(!opens(p1.key));
	ck_assert_int_eq(live(), 1);	/* kept, idle */
	h2 = fnv_rdv_export_locked(&dom, mem + 16, 8 * PAGE, false, &p2);
	ck_assert_int_eq(h2, h1);
	ck_assert_int_eq(made, 1);	/* no new export */
	ck_assert(p2.key != p1.key && p2.nvm_key != p1.nvm_key);
	ck_assert(opens(p2.key));
	ck_assert(p2.addr == (uintptr_t)(mem + 16) && p2.len == 8 * PAGE);
	fnv_rdv_unexport_locked(&dom, h2);
	ck_assert(!opens(p2.key));
	h3 = fnv_rdv_export_locked(&dom, mem + 16, 8 * PAGE, false, &p3);
	ck_assert_int_eq(h3, h1);
	ck_assert(p3.key != p1.key && p3.key != p2.key);
	fnv_rdv_unexport_locked(&dom, h3);
	ck_assert_int_eq(rekeys, 3);
	ck_assert_int_eq(removed, 0);
}
END_TEST

START_TEST(busy_not_shared)
{
	struct fnv_rdv_piece p1, p2;
	int h1, h2;

	reset();
	h1 = fnv_rdv_export_locked(&dom, mem, 4 * PAGE, false, &p1);
	ck_assert_int_ge(h1, 0);
	/* the same buffer sent again while the first is in flight: NetVM
	 * exports a page once, the caller copies */
	h2 = fnv_rdv_export_locked(&dom, mem, 4 * PAGE, false, &p2);
	ck_assert_int_eq(h2, -EEXIST);
	ck_assert(opens(p1.key));	/* the first one untouched */
	fnv_rdv_unexport_locked(&dom, h1);
}
END_TEST

START_TEST(other_range_or_access)
{
	struct fnv_rdv_piece p, q;
	int h, k;

	reset();
	h = fnv_rdv_export_locked(&dom, mem, 4 * PAGE, false, &p);
	fnv_rdv_unexport_locked(&dom, h);
	/* the same pages, writable now (a receive into the send buffer):
	 * the idle read-only export gives way */
	k = fnv_rdv_export_locked(&dom, mem, 4 * PAGE, true, &q);
	ck_assert_int_ge(k, 0);
	ck_assert_int_eq(removed, 1);
	ck_assert_int_eq(made, 2);
	ck_assert(fake[k].writable && !opens(p.key));
	fnv_rdv_unexport_locked(&dom, k);
	/* a longer message from the same address: another range */
	h = fnv_rdv_export_locked(&dom, mem, 6 * PAGE, true, &p);
	ck_assert_int_ge(h, 0);
	ck_assert_int_eq(made, 3);
	ck_assert_int_eq(live(), 1);
	fnv_rdv_unexport_locked(&dom, h);
}
END_TEST

START_TEST(limit_evicts_idle_only)
{
	struct fnv_rdv_piece p[FAKE_MAX + 1];
	int h[FAKE_MAX + 1];

	reset();
	/* FAKE_MAX idle exports on separate buffers, the first oldest */
	for (int i = 0; i < FAKE_MAX; i++) {
		h[i] = fnv_rdv_export_locked(&dom, mem + i * 4 * PAGE, PAGE,
					     false, &p[i]);
		ck_assert_int_ge(h[i], 0);
		fnv_rdv_unexport_locked(&dom, h[i]);
	}
	ck_assert_int_eq(live(), FAKE_MAX);
	/* one more: the oldest idle one goes */
	h[FAKE_MAX] = fnv_rdv_export_locked(&dom, mem + 40 * PAGE, PAGE, false,
					    &p[FAKE_MAX]);
	ck_assert_int_ge(h[FAKE_MAX], 0);
	ck_assert_int_eq(removed, 1);
	ck_assert(!fake[h[0]].used || fake[h[0]].start ==
		  (uintptr_t)(mem + 40 * PAGE));
	/* all busy now: nothing is taken from a message in flight */
	for (int i = 1; i < FAKE_MAX; i++)
		ck_assert_int_ge(fnv_rdv_export_locked(&dom, mem + i * 4 * PAGE,
						       PAGE, false, &p[i]), 0);
	ck_assert_int_eq(fnv_rdv_export_locked(&dom, mem + 50 * PAGE, PAGE,
					       false, &p[0]), -ENOSPC);
	ck_assert_int_eq(live(), FAKE_MAX);
}
END_TEST

START_TEST(region_evicts)
{
	struct fnv_rdv_piece p;
	int h;

	reset();
	h = fnv_rdv_export_locked(&dom, mem + 100, 3 * PAGE, true, &p);
	fnv_rdv_unexport_locked(&dom, h);
	/* a memory region on one page of it (fnv_mr.c on -EEXIST) */
	ck_assert_int_eq(fnv_rdv_cache_evict_locked(&dom, mem + 2 * PAGE + 5,
						    10), 1);
	ck_assert_int_eq(live(), 0);
	/* the pages after it are not its */
	h = fnv_rdv_export_locked(&dom, mem, PAGE, false, &p);
	fnv_rdv_unexport_locked(&dom, h);
	ck_assert_int_eq(fnv_rdv_cache_evict_locked(&dom, mem + PAGE, PAGE),
			 0);
	/* busy ones stay */
	h = fnv_rdv_export_locked(&dom, mem, PAGE, false, &p);
	ck_assert_int_eq(fnv_rdv_cache_evict_locked(&dom, mem, PAGE), 0);
	ck_assert(opens(p.key));
	fnv_rdv_unexport_locked(&dom, h);
}
END_TEST

START_TEST(failed_rekey_removes)
{
	struct fnv_rdv_piece p;
	int h;

	reset();
	h = fnv_rdv_export_locked(&dom, mem, 2 * PAGE, false, &p);
	fail_rekey = 1;
	fnv_rdv_unexport_locked(&dom, h);
	ck_assert(!opens(p.key));
	ck_assert_int_eq(live(), 0);
	ck_assert_int_eq(removed, 1);
}
END_TEST

int main(void)
{
	return CHECK_RUN("fnv_rdv_cache", "cache", 0,
			 same_buffer_kept, busy_not_shared,
			 other_range_or_access, limit_evicts_idle_only,
			 region_evicts, failed_rekey_removes);
}
