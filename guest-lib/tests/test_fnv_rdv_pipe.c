// SPDX-License-Identifier: MIT
/*
 * Unit tests of the provider's pipelined rendezvous read
 * (fi_netvm/fnv_rdv_pipe.c) against a fake NIC whose queued reads land
 * either at once ("early": a chunk queued into the half still waiting to
 * be copied out would overwrite it) or only at the next flush ("late": a
 * chunk copied out before its flush would be stale).  Every message,
 * whole or cut short, of one piece or several, in chunks or not, arrives
 * byte for byte in either mode; no read leaves its piece or the area;
 * each piece is imported once; a range that starts inside the message
 * (a receiver whose sender wrote the rest) lands in the same places of
 * the receive and touches nothing before or after it; an import, a read
 * or a flush that fails ends the read with its error and leaves nothing
 * queued.
 */
#include "check_run.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fnv_rdv_pipe.h"

struct fi_provider fnv_prov = { .name = "netvm" };

#define CHUNK		4096	/* small chunks: many of them per message */
#define PIECE_MAX	(40 * 1024)
#define PENDING_MAX	8

/* the sender's pieces, each "exported" under the key i + 100 */
static uint8_t src[FNV_IOV_MAX][PIECE_MAX];
static uint8_t area[2 * CHUNK];

static struct fake {
	bool late;			/* reads land at the flush */
	struct {
		uint8_t *to;
		const uint8_t *from;
		size_t len;
	} pending[PENDING_MAX];
	size_t npending;
	size_t piece_len[FNV_IOV_MAX];
	int imports[FNV_IOV_MAX];	/* per piece */
	int segs, reads, flushes;
	int fail_seg_at, fail_read_at, fail_flush_at;	/* 1-based, 0: never */
	int fail_read_err, fail_flush_err;
} nic;

static int fake_seg(void *ctx, const struct fnv_rdv_piece *piece)
{
	uint64_t key = piece->key;

	(void)ctx;
	ck_assert_uint_ge(key, 100);
	ck_assert_uint_lt(key, 100 + FNV_IOV_MAX);
	nic.imports[key - 100]++;
	if (++nic.segs == nic.fail_seg_at)
		return -EKEYREJECTED;
	return (int)(key - 100) + 7;	/* segment handles need not be 0 */
}

static void land(size_t i)
{
	memcpy(nic.pending[i].to, nic.pending[i].from, nic.pending[i].len);
}

static int fake_read(void *ctx, int seg, uint64_t off, void *to, size_t len)
{
	int p = seg - 7;

	(void)ctx;
	ck_assert_int_ge(p, 0);
	ck_assert_int_lt(p, FNV_IOV_MAX);
	ck_assert_uint_gt(len, 0);
	/* inside the piece and inside the area (one half) */
	ck_assert_uint_le(off + len, nic.piece_len[p]);
	ck_assert((uint8_t *)to >= area);
	ck_assert_uint_le((uint8_t *)to + len - area, sizeof(area));
	ck_assert_uint_le(len, CHUNK);
	if (++nic.reads == nic.fail_read_at)
		return nic.fail_read_err;
	ck_assert_uint_lt(nic.npending, PENDING_MAX);
	nic.pending[nic.npending].to = to;
	nic.pending[nic.npending].from = &src[p][off];
	nic.pending[nic.npending].len = len;
	if (!nic.late)
		land(nic.npending);
	nic.npending++;
	return 0;
}

static int fake_flush(void *ctx)
{
	(void)ctx;
	nic.flushes++;
	for (size_t i = 0; i < nic.npending && nic.late; i++)
		land(i);
	nic.npending = 0;
	if (nic.flushes == nic.fail_flush_at)
		return nic.fail_flush_err;
	return 0;
}

static const struct fnv_rdv_nic fake = {
	.seg = fake_seg, .read = fake_read, .flush = fake_flush,
};

/* A request of the pieces' lengths (key i + 100 each). */
static struct fnv_rdv_req request(const size_t *lens, uint32_t count)
{
	struct fnv_rdv_req q = { .count = count };

	for (uint32_t i = 0; i < count; i++) {
		q.piece[i].key = 100 + i;
		q.piece[i].len = lens[i];
		q.len += lens[i];
	}
	return q;
}

static void setup(bool late, const size_t *lens, uint32_t count)
{
	memset(&nic, 0, sizeof(nic));
	nic.late = late;
	for (uint32_t i = 0; i < count; i++)
		nic.piece_len[i] = lens[i];
	for (size_t p = 0; p < FNV_IOV_MAX; p++)
		for (size_t i = 0; i < PIECE_MAX; i++)
			src[p][i] = (uint8_t)random();
	memset(area, 0xee, sizeof(area));
}

/* Read n bytes of the pieces into three receive pieces; check them. */
static void read_and_check(bool late, const size_t *lens, uint32_t count,
			   size_t n)
{
	struct fnv_rdv_req q = request(lens, count);
	static uint8_t dst[FNV_IOV_MAX * PIECE_MAX + 1];
	size_t cut1 = n / 3, cut2 = n / 3 + n / 5;
	struct iovec iov[3] = {
		{ dst, cut1 }, { dst + cut1, cut2 - cut1 },
		{ dst + cut2, sizeof(dst) - cut2 },
	};
	size_t at = 0, chunks = 0;

	setup(late, lens, count);
	memset(dst, 0x5a, sizeof(dst));
	ck_assert_int_eq(fnv_rdv_pipe(&fake, &q, iov, 3, 0, n, area, CHUNK), 0);
	for (uint32_t p = 0; p < count && at < n; p++) {
		size_t k = lens[p] < n - at ? lens[p] : n - at;

		ck_assert_msg(!memcmp(dst + at, src[p], k),
			      "piece %u of %zu B, %zu read, late %d", p, lens[p],
			      n, late);
		ck_assert_int_eq(nic.imports[p], 1);
		at += k;
		chunks += (k + CHUNK - 1) / CHUNK;
	}
	ck_assert_uint_eq(at, n);
	ck_assert_uint_eq(dst[n], 0x5a);	/* nothing past it */
	ck_assert_int_eq(nic.reads, (int)chunks);
	ck_assert_int_eq(nic.flushes, (int)chunks);	/* one per chunk */
	ck_assert_uint_eq(nic.npending, 0);
}

START_TEST(one_piece)
{
	static const size_t sizes[] = {
		1, 4057, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 3 * CHUNK + 5,
		PIECE_MAX,
	};

	for (int late = 0; late < 2; late++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			read_and_check(late, &sizes[i], 1, sizes[i]);
}
END_TEST

START_TEST(pieces)
{
	static const size_t lens[FNV_IOV_MAX] = {
		CHUNK + 7, 3, 2 * CHUNK, PIECE_MAX,
	};
	size_t total = lens[0] + lens[1] + lens[2] + lens[3];

	for (int late = 0; late < 2; late++)
		for (uint32_t count = 1; count <= FNV_IOV_MAX; count++)
			read_and_check(late, lens, count,
				       count == FNV_IOV_MAX ? total :
				       lens[0] + (count > 1 ? lens[1] : 0));
}
END_TEST

START_TEST(cut_short)
{
	static const size_t lens[3] = { 3 * CHUNK + 1, 2 * CHUNK, 100 };

	for (int late = 0; late < 2; late++) {
		read_and_check(late, lens, 3, 1);
		read_and_check(late, lens, 3, CHUNK);
		read_and_check(late, lens, 3, 3 * CHUNK + 2);
		read_and_check(late, lens, 3, 5 * CHUNK + 1);
	}
	/* nothing to read: nothing imported, queued or waited for */
	read_and_check(true, lens, 3, 0);
	ck_assert_int_eq(nic.imports[0], 0);
}
END_TEST

/* Bytes [from, +n) of three pieces: in their places, nothing else
 * written, only the pieces they touch imported. */
static void range_and_check(bool late, size_t from, size_t n)
{
	static const size_t lens[3] = { CHUNK + 7, 3, 2 * CHUNK };
	struct fnv_rdv_req q = request(lens, 3);
	static uint8_t dst[3 * CHUNK + 11], want[3 * CHUNK + 11];
	struct iovec iov[2] = {
		{ dst, 100 }, { dst + 100, sizeof(dst) - 100 },
	};
	size_t at = 0;

	setup(late, lens, 3);
	memset(dst, 0x5a, sizeof(dst));
	memset(want, 0x5a, sizeof(want));
	for (uint32_t p = 0; p < 3; p++) {
		for (size_t i = 0; i < lens[p]; i++, at++)
			if (at >= from && at < from + n)
				want[at] = src[p][i];
	}
	ck_assert_int_eq(fnv_rdv_pipe(&fake, &q, iov, 2, from, n, area, CHUNK),
			 0);
	ck_assert_msg(!memcmp(dst, want, sizeof(dst)), "[%zu, +%zu) late %d",
		      from, n, late);
	ck_assert_int_eq(nic.imports[0], from < lens[0] && n);
	ck_assert_int_eq(nic.imports[2], from + n > lens[0] + lens[1]);
	ck_assert_uint_eq(nic.npending, 0);
}

START_TEST(ranges)
{
	for (int late = 0; late < 2; late++) {
		range_and_check(late, 0, 5);
		range_and_check(late, 7, CHUNK + 3);		/* into piece 1 */
		range_and_check(late, CHUNK + 7, 3);		/* piece 1 only */
		range_and_check(late, CHUNK + 8, 2 * CHUNK + 2);	/* to the end */
		range_and_check(late, CHUNK + 10, 2 * CHUNK);	/* piece 2 only */
		range_and_check(late, 3 * CHUNK + 9, 1);	/* the last byte */
	}
}
END_TEST

/* A failure of kind (seg, read, flush) at call at: its error comes back,
 * and nothing stays queued. */
static void fail_at(int kind, int at, int want)
{
	static const size_t lens[2] = { 3 * CHUNK, 2 * CHUNK };
	struct fnv_rdv_req q = request(lens, 2);
	static uint8_t dst[5 * CHUNK];
	struct iovec iov = { dst, sizeof(dst) };

	setup(true, lens, 2);
	if (kind == 0)
		nic.fail_seg_at = at;
	if (kind == 1) {
		nic.fail_read_at = at;
		nic.fail_read_err = want;
	}
	if (kind == 2) {
		nic.fail_flush_at = at;
		nic.fail_flush_err = want;
	}
	ck_assert_int_eq(fnv_rdv_pipe(&fake, &q, &iov, 1, 0, sizeof(dst), area,
				      CHUNK), want);
	ck_assert_uint_eq(nic.npending, 0);
}

START_TEST(failures)
{
	fail_at(0, 1, -EKEYREJECTED);	/* the first piece's import */
	ck_assert_int_eq(nic.reads, 0);
	ck_assert_int_eq(nic.flushes, 0);
	fail_at(0, 2, -EKEYREJECTED);	/* the second's, after 3 chunks */
	ck_assert_int_eq(nic.reads, 3);
	ck_assert_int_eq(nic.imports[1], 1);
	fail_at(1, 1, -ERANGE);		/* the first read */
	ck_assert_int_eq(nic.flushes, 1);	/* drained all the same */
	fail_at(1, 4, -ENOKEY);		/* the second piece's first */
	ck_assert_int_eq(nic.flushes, 4);
	fail_at(2, 2, -EFAULT);		/* the second chunk's flush */
	ck_assert_int_eq(nic.reads, 2);
	ck_assert_int_eq(nic.flushes, 2);
	fail_at(2, 5, -EHOSTUNREACH);	/* the last */
	ck_assert_int_eq(nic.flushes, 5);
}
END_TEST

int main(void)
{
	return CHECK_RUN("fnv_rdv_pipe", "pipe", 0,
			 one_piece, pieces, cut_short, ranges, failures);
}
