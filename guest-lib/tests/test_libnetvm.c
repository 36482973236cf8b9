// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Unit tests for libnetvm's argument checking and the tools' pattern and
 * parsing helpers.  No netvm device is needed.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "netvm.h"
#include "netvm_pattern.h"

START_TEST(pattern_fill_and_check)
{
	uint8_t buf[300];
	uint32_t k = 0x01020304u;
	size_t i;

	netvm_pattern_fill(buf, sizeof(buf), k);
	ck_assert_uint_eq(netvm_pattern_seq(buf), k);
	ck_assert_uint_eq(buf[0], 0x04);
	ck_assert_uint_eq(buf[3], 0x01);
	/* the hash's values, also computed by tests/guest/test_security.py */
	ck_assert_uint_eq(buf[4], 0x60);
	ck_assert_uint_eq(buf[5], 0xa6);
	ck_assert_uint_eq(buf[7], 0x74);
	ck_assert_uint_eq(buf[299], 0xaf);
	for (i = 4; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], netvm_pattern_byte(k, i));
	/* no period of 256: a frame shifted by 256 bytes does not pass */
	for (i = 4; i < 44; i++)
		ck_assert_uint_ne(buf[i], buf[i + 256]);
	ck_assert_int_eq(netvm_pattern_check(buf, sizeof(buf), k), -1);
	ck_assert_int_eq(netvm_pattern_check(buf, sizeof(buf), k + 1), 0);
	buf[123] ^= 1;
	ck_assert_int_eq(netvm_pattern_check(buf, sizeof(buf), k), 123);
}
END_TEST

START_TEST(pattern_small_frames)
{
	uint8_t buf[3];

	/* Below 4 bytes the frame carries no sequence number. */
	netvm_pattern_fill(buf, sizeof(buf), 5);
	ck_assert_uint_eq(buf[0], 0x06);
	ck_assert_uint_eq(buf[1], 0x9b);
	ck_assert_uint_eq(buf[2], 0x33);
	ck_assert_int_eq(netvm_pattern_check(buf, sizeof(buf), 5), -1);
	ck_assert_int_eq(netvm_pattern_check(buf, 0, 5), -1);
	ck_assert_int_eq(netvm_pattern_check(buf, 1, 6), 0);
}
END_TEST

START_TEST(parse_route)
{
	uint8_t r[8];
	unsigned int n = 99;

	ck_assert_int_eq(netvm_parse_route("", r, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(netvm_parse_route("80,81:ff", r, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(r[0], 0x80);
	ck_assert_uint_eq(r[1], 0x81);
	ck_assert_uint_eq(r[2], 0xff);
	ck_assert_int_eq(netvm_parse_route("0x80", r, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(netvm_parse_route("7f", r, &n), -EINVAL);
	ck_assert_int_eq(netvm_parse_route("100", r, &n), -EINVAL);
	ck_assert_int_eq(netvm_parse_route("80,", r, &n), -EINVAL);
	ck_assert_int_eq(netvm_parse_route("80;81", r, &n), -EINVAL);
	ck_assert_int_eq(netvm_parse_route("-80", r, &n), -EINVAL);
	ck_assert_int_eq(netvm_parse_route("80,80,80,80,80,80,80,80,80", r, &n),
			 -E2BIG);
	ck_assert_int_eq(netvm_parse_route(NULL, r, &n), -EINVAL);
}
END_TEST

START_TEST(parse_uint)
{
	unsigned long v;

	ck_assert_int_eq(netvm_parse_uint("0", 10, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(netvm_parse_uint("10", 10, &v), 0);
	ck_assert_uint_eq(v, 10);
	ck_assert_int_eq(netvm_parse_uint("11", 10, &v), -EINVAL);
	ck_assert_int_eq(netvm_parse_uint("-1", 10, &v), -EINVAL);
	ck_assert_int_eq(netvm_parse_uint("1x", 10, &v), -EINVAL);
	ck_assert_int_eq(netvm_parse_uint("", 10, &v), -EINVAL);
	ck_assert_int_eq(netvm_parse_uint("99999999999999999999999", ~0ul, &v),
			 -EINVAL);
}
END_TEST

START_TEST(median)
{
	double a[] = { 5, 1, 3 }, b[] = { 4, 1, 3, 2 };

	ck_assert(netvm_median(a, 3) == 3);
	ck_assert(netvm_median(b, 4) == 2.5);
	ck_assert(netvm_median(b, 0) == 0);
}
END_TEST

START_TEST(open_errors)
{
	struct netvm *nv = (struct netvm *)1;

	ck_assert_int_eq(netvm_open(-1, &nv), -EINVAL);
	ck_assert_ptr_null(nv);
	ck_assert_int_eq(netvm_open(0, NULL), -EINVAL);
	ck_assert_int_eq(netvm_open_path(NULL, &nv), -EINVAL);
	ck_assert_int_eq(netvm_open_path("/nonexistent/netvm0", &nv), -ENOENT);
	ck_assert_ptr_null(nv);
	/* /dev/null does not know the netvm ioctls. */
	ck_assert_int_eq(netvm_open_path("/dev/null", &nv), -ENODEV);
	ck_assert_ptr_null(nv);
	ck_assert_int_eq(netvm_close(NULL), 0);
	ck_assert_int_eq(netvm_fd(NULL), -EINVAL);
}
END_TEST

START_TEST(null_handle)
{
	struct netvm_info info;
	uint8_t buf[16], route[1] = { 0x80 };
	size_t len = 7;

	ck_assert_int_eq(netvm_info(NULL, &info), -EINVAL);
	ck_assert_int_eq(netvm_raw_send(NULL, buf, sizeof(buf), NULL, 0),
			 -EINVAL);
	ck_assert_int_eq(netvm_raw_send(NULL, buf, sizeof(buf), route, 1),
			 -EINVAL);
	ck_assert_int_eq(netvm_raw_recv(NULL, buf, sizeof(buf), &len, NULL, 0),
			 -EINVAL);
	ck_assert_uint_eq(len, 0);
}
END_TEST

START_TEST(strerror_messages)
{
	ck_assert_str_eq(netvm_strerror(0), "success");
	ck_assert_ptr_nonnull(strstr(netvm_strerror(-ENOENT), "netvm.ko"));
	ck_assert_str_eq(netvm_strerror(-ETIMEDOUT), "timed out");
	ck_assert_str_eq(netvm_strerror(-ENOLINK), "link down");
	ck_assert_str_eq(netvm_strerror(-EPERM), "Operation not permitted");
	ck_assert_str_eq(netvm_strerror(-100000), "unknown error");
	ck_assert_str_eq(netvm_strerror(5), "unknown error");
}
END_TEST

static Suite *libnetvm_suite(void)
{
	Suite *s = suite_create("libnetvm");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, pattern_fill_and_check);
	tcase_add_test(tc, pattern_small_frames);
	tcase_add_test(tc, parse_route);
	tcase_add_test(tc, parse_uint);
	tcase_add_test(tc, median);
	tcase_add_test(tc, open_errors);
	tcase_add_test(tc, null_handle);
	tcase_add_test(tc, strerror_messages);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(libnetvm_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
