// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loading saved firmware state (fw_load.c): the state of a chip that
 * booted and carried traffic passes; a copy with one field corrupted (an
 * index past its array, a count past its bound, a bad enum, an offset
 * past SRAM, a cycle in a chain) is refused, naming the check that
 * caught it.  A migration stream is input: every such field reaches an
 * array index or an SRAM offset without another check.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_host.h"
#include "fw_load.h"

#define PA	1
#define PB	2
#define KEY_B	0xaaaabbbbccccddddull
#define SRC	0x10000000ull
#define DST	0x20000000ull
#define LEN	(64u * 1024)

static struct sim_chip ca, cb;
static struct sim_host ha, hb;
static struct fw copy;		/* static: struct fw is large */

/* Two chips, a process on each, some writes and reads in flight and done. */
static void setup(void)
{
	sh_two_nodes(&ca, &cb, &ha, &hb);
	sim_settle(&ca, &cb);
	sh_open(&ha, PA);
	sh_open(&hb, PB);
	sh_alloc(&ha, PA, SRC, LEN, 0, true);
	sh_alloc(&hb, PB, DST, LEN, KEY_B, true);
	sim_settle(&ca, &cb);
	sh_fill(&ha, PA, SRC, LEN, 7);
	sh_write(&ha, PA, 1, PB, SRC, DST, LEN, KEY_B, 0, 0);
	sh_read(&ha, PA, 1, PB, SRC, DST, 4096, KEY_B);
	sim_run(&ca, &cb, 20);		/* some of it still in flight */
}

static void teardown(void)
{
	sim_free(&ca);
	sim_free(&cb);
}

static void check_refused(const char *field, const char *expect)
{
	const char *what = NULL;

	ck_assert_msg(!fw_state_ok(&copy, &what), "%s: corrupt state passed",
		      field);
	ck_assert_msg(what && strstr(what, expect),
		      "%s: refused by '%s', expected '%s'", field,
		      what ? what : "(none)", expect);
}

START_TEST(test_live_state_passes)
{
	const char *what = NULL;

	ck_assert_msg(fw_state_ok(&ca.fw, &what), "mid-traffic: %s", what);
	sim_settle(&ca, &cb);
	ck_assert_msg(fw_state_ok(&ca.fw, &what), "settled: %s", what);
	ck_assert_msg(fw_state_ok(&cb.fw, &what), "peer: %s", what);
	ck_assert_uint_eq(ca.fw.nv.configured, 1);
}
END_TEST

/* One corruption: a field, the value that breaks it, the check's text. */
struct corruption {
	const char *field;
	void (*apply)(struct fw *fw);
	const char *expect;
};

#define BAD(name, stmt, expect_) \
	static void bad_##name(struct fw *fw) { stmt; }
#include "test_fw_load_cases.h"
#undef BAD
#define BAD(name, stmt, expect_) { #name, bad_##name, expect_ },
static const struct corruption corruptions[] = {
#include "test_fw_load_cases.h"
};
#undef BAD

START_TEST(test_corrupt_refused)
{
	const struct corruption *c = &corruptions[_i];

	sim_settle(&ca, &cb);
	copy = ca.fw;
	c->apply(&copy);
	check_refused(c->field, c->expect);
}
END_TEST

static Suite *load_suite(void)
{
	Suite *s = suite_create("fw-load");
	TCase *tc = tcase_create("load");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_live_state_passes);
	tcase_add_loop_test(tc, test_corrupt_refused, 0,
			    sizeof(corruptions) / sizeof(corruptions[0]));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(load_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
