// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Unit tests for libnetvm's fragmentation (netvm_frag.c): every piece stays
 * within one page on both sides, pieces are contiguous and cover the
 * transfer exactly, inline only for write pieces of at most 96 bytes, and
 * only the last piece is marked (it carries the notification).
 */
#include "check_run.h"
#include <stdlib.h>

#include <netvm/netvm_fw.h>

#include "netvm_frag.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Checks every property; returns the number of pieces. */
static uint64_t check_plan(uint64_t local, uint64_t remote, uint64_t size,
			   int is_write)
{
	struct nvl_frag_iter it;
	struct nvl_frag f;
	uint64_t n = 0, covered = 0;

	nvl_frag_begin(&it, local, remote, size, is_write);
	while (nvl_frag_next(&it, &f)) {
		ck_assert_uint_eq(f.local, local + covered);
		ck_assert_uint_eq(f.remote, remote + covered);
		ck_assert_uint_ge(f.len, 1);
		ck_assert_uint_le(f.len, NVM_PAGE_SIZE);
		ck_assert_uint_eq(f.local / NVM_PAGE_SIZE,
				  (f.local + f.len - 1) / NVM_PAGE_SIZE);
		ck_assert_uint_eq(f.remote / NVM_PAGE_SIZE,
				  (f.remote + f.len - 1) / NVM_PAGE_SIZE);
		ck_assert_int_eq(f.inl, is_write && f.len <= NVM_INLINE_MAX);
		covered += f.len;
		ck_assert_int_eq(f.last, covered == size);
		n++;
	}
	ck_assert_uint_eq(covered, size);
	ck_assert_uint_eq(nvl_frag_next(&it, &f), 0);
	ck_assert_uint_eq(n, nvl_frag_count(local, remote, size));
	return n;
}

START_TEST(empty)
{
	ck_assert_uint_eq(check_plan(0x1000, 0x2000, 0, 1), 0);
}
END_TEST

START_TEST(aligned)
{
	/* both sides aligned: whole pages */
	ck_assert_uint_eq(check_plan(0x10000, 0x20000, 4096, 1), 1);
	ck_assert_uint_eq(check_plan(0x10000, 0x20000, 1 << 20, 1), 256);
	ck_assert_uint_eq(check_plan(0x10000, 0x20000, 4097, 0), 2);
}
END_TEST

START_TEST(same_offset)
{
	/* same page offset on both sides: cut only at page ends */
	ck_assert_uint_eq(check_plan(0x10100, 0x20100, 4096, 1), 2);
	ck_assert_uint_eq(check_plan(0x10ff0, 0x20ff0, 32, 1), 2);
}
END_TEST

START_TEST(different_offsets)
{
	struct nvl_frag_iter it;
	struct nvl_frag f;

	/* local 100 B into a page, remote 3000: cuts at 996 and 3996 ... */
	ck_assert_uint_eq(check_plan(0x10064, 0x20bb8, 8192, 1), 5);
	nvl_frag_begin(&it, 0x10064, 0x20bb8, 8192, 1);
	ck_assert(nvl_frag_next(&it, &f));
	ck_assert_uint_eq(f.len, 4096 - 3000);
	ck_assert(nvl_frag_next(&it, &f));
	ck_assert_uint_eq(f.len, 4096 - 100 - (4096 - 3000));
	/* a 1-byte piece is inline */
	ck_assert_uint_eq(check_plan(0x10fff, 0x20000, 2, 1), 2);
	nvl_frag_begin(&it, 0x10fff, 0x20000, 2, 1);
	ck_assert(nvl_frag_next(&it, &f));
	ck_assert_uint_eq(f.len, 1);
	ck_assert(f.inl && !f.last);
	ck_assert(nvl_frag_next(&it, &f));
	ck_assert(f.inl && f.last);
}
END_TEST

START_TEST(inline_limit)
{
	struct nvl_frag_iter it;
	struct nvl_frag f;

	nvl_frag_begin(&it, 0x10000, 0x20000, 96, 1);
	ck_assert(nvl_frag_next(&it, &f));
	ck_assert(f.inl && f.last && f.len == 96);
	nvl_frag_begin(&it, 0x10000, 0x20000, 97, 1);
	ck_assert(nvl_frag_next(&it, &f));
	ck_assert(!f.inl && f.len == 97);
	nvl_frag_begin(&it, 0x10000, 0x20000, 50, 0);	/* reads never */
	ck_assert(nvl_frag_next(&it, &f));
	ck_assert(!f.inl);
}
END_TEST

START_TEST(random_plans)
{
	int i;

	for (i = 0; i < 20000; i++) {
		uint64_t l = 0x7f0000000000ull + (next_rand() & 0xffffff);
		uint64_t r = 0x550000000000ull + (next_rand() & 0xffffff);
		uint64_t s = next_rand() % (i % 10 ? 20000 : (1 << 20) + 4097);
		uint64_t n = check_plan(l, r, s, i & 1);

		/* at most one cut per page boundary on each side */
		if (s)
			ck_assert_uint_le(n, s / NVM_PAGE_SIZE * 2 + 3);
	}
}
END_TEST

int main(void)
{
	return CHECK_RUN("libnetvm-frag", "frag", 60,
			 empty, aligned, same_offset, different_offsets, inline_limit,
			 random_plans);
}
