// SPDX-License-Identifier: GPL-2.0-only
/*
 * The firmware's trace points are listed once, in fw_trace_events.h;
 * QEMU's tracetool reads only qemu-device/trace-events, which repeats
 * them.  This test holds the two together: the firmware section of
 * trace-events (after its marker line) must be exactly the lines the
 * list makes, in its order.  Argument: the trace-events file.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw_trace_events.h"

#define MARKER	"# the firmware's trace points"

static const char *const expected[] = {
#define LINE2(...) FW_TRACE_LINE2(__VA_ARGS__),
#define LINE3(...) FW_TRACE_LINE3(__VA_ARGS__),
	FW_TRACE_EVENTS(LINE2, LINE3)
#undef LINE2
#undef LINE3
};

static const char *path;

START_TEST(test_one_line_per_event)
{
	_Static_assert(sizeof(expected) / sizeof(expected[0]) == FW_TR_COUNT,
		       "one line per event");
	char line[512];
	unsigned int n = 0;
	int in_section = 0;
	FILE *f = fopen(path, "r");

	ck_assert_msg(f != NULL, "cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, MARKER, strlen(MARKER))) {
			ck_assert_msg(!in_section, "two firmware sections");
			in_section = 1;
			continue;
		}
		if (!in_section || line[0] == '#')
			continue;
		if (line[0] == 0) {
			in_section = 2;	/* a blank line ends the section */
			continue;
		}
		ck_assert_msg(in_section == 1, "trace-events: %s after the "
			      "firmware section's end", line);
		ck_assert_msg(n < FW_TR_COUNT, "trace-events: %s is not in "
			      "fw_trace_events.h", line);
		ck_assert_msg(!strcmp(line, expected[n]),
			      "trace-events has\n  %s\nfw_trace_events.h makes\n  %s",
			      line, expected[n]);
		n++;
	}
	fclose(f);
	ck_assert_msg(in_section, "trace-events: no line \"%s\"", MARKER);
	ck_assert_msg(n == FW_TR_COUNT, "trace-events lacks %s",
		      n < FW_TR_COUNT ? expected[n] : "");
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("firmware-trace-events");
	TCase *tc = tcase_create("trace-events");
	SRunner *sr;
	int failed;

	if (argc != 2) {
		fprintf(stderr, "usage: %s TRACE-EVENTS\n", argv[0]);
		return 2;
	}
	path = argv[1];
	tcase_add_test(tc, test_one_line_per_event);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
