/* SPDX-License-Identifier: MIT */
/*
 * The main() of a libcheck unit test with one test case: run TESTS (an
 * array of the START_TEST names) in suite SUITE, case TCASE, each with
 * TIMEOUT seconds (0: libcheck's default), and return the exit status.
 */
#ifndef NETVM_CHECK_RUN_H
#define NETVM_CHECK_RUN_H

#include <check.h>
#include <stddef.h>

static inline int check_run(const char *suite, const char *tcase,
			    int timeout, const TTest *const *tests, size_t n)
{
	Suite *s = suite_create(suite);
	TCase *tc = tcase_create(tcase);
	SRunner *sr;
	int failed;

	if (timeout)
		tcase_set_timeout(tc, timeout);
	for (size_t i = 0; i < n; i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

#define CHECK_RUN(suite, tcase, timeout, ...)				\
	({								\
		const TTest *const check_tests_[] = { __VA_ARGS__ };	\
		check_run(suite, tcase, timeout, check_tests_,		\
			  sizeof(check_tests_) / sizeof(check_tests_[0])); \
	})

#endif
