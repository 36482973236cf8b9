// SPDX-License-Identifier: MIT
/*
 * Unit tests of when a reader of an empty completion queue sleeps
 * (fi_netvm/fnv_nap.c), on a clock the test moves: only after a run of
 * empty reads, each close to the last, lasting the spin time; never
 * with spin < 0, at once with 0; a read that returned something or a
 * pause between reads starts the run again; after a sleep that found
 * nothing, the next empty read sleeps at once.
 */
#include "check_run.h"

#include "fnv_nap.h"

#define US	1000LL		/* ns */
#define SPIN	(200 * US)

/* empty reads every step ns from t0 until one says "nap": its time */
static int64_t first_nap(struct fnv_nap *n, int64_t t0, int64_t step,
			 int64_t spin)
{
	for (int64_t t = t0; t < t0 + 100 * spin + 1; t += step)
		if (fnv_nap_empty(n, t, spin))
			return t;
	return -1;
}

START_TEST(after_the_spin)
{
	struct fnv_nap n = { 0 };

	/* reads every 10 us: the one 200 us after the first sleeps */
	ck_assert_int_eq(first_nap(&n, 1000 * US, 10 * US, SPIN),
			 1000 * US + SPIN);
}
END_TEST

START_TEST(never_and_at_once)
{
	struct fnv_nap n = { 0 };

	for (int64_t t = 1; t < 10 * SPIN; t += US)
		ck_assert(!fnv_nap_empty(&n, t, -1));
	n = (struct fnv_nap){ 0 };
	ck_assert(fnv_nap_empty(&n, 5 * US, 0));
}
END_TEST

START_TEST(busy_restarts)
{
	struct fnv_nap n = { 0 };
	int64_t t = 1000 * US;

	/* 150 us empty, then a completion, then 150 us empty again: no nap */
	for (; t < 1150 * US; t += 10 * US)
		ck_assert(!fnv_nap_empty(&n, t, SPIN));
	fnv_nap_busy(&n);
	for (int64_t t1 = t; t < t1 + 150 * US; t += 10 * US)
		ck_assert(!fnv_nap_empty(&n, t, SPIN));
	/* without a completion, the run goes on to 200 us and sleeps */
	ck_assert_int_eq(first_nap(&n, t, 10 * US, SPIN), t + 50 * US);
}
END_TEST

START_TEST(pause_restarts)
{
	struct fnv_nap n = { 0 };
	int64_t t = 1000 * US;

	/* a caller that reads, then works 300 us, then reads: never sleeps */
	for (int i = 0; i < 100; i++, t += 300 * US)
		ck_assert(!fnv_nap_empty(&n, t, SPIN));
	/* reads just under the spin time apart form one run */
	n = (struct fnv_nap){ 0 };
	ck_assert_int_eq(first_nap(&n, t, SPIN - 1, SPIN), t + 2 * (SPIN - 1));
}
END_TEST

START_TEST(slept_goes_on)
{
	struct fnv_nap n = { 0 };
	int64_t t = first_nap(&n, 1000 * US, 10 * US, SPIN);

	/* a 1 ms sleep found nothing: the next empty read sleeps at once */
	ck_assert_int_ge(t, 0);
	t += 1000 * US;
	fnv_nap_slept(&n, t);
	ck_assert(fnv_nap_empty(&n, t + 5 * US, SPIN));
	/* without fnv_nap_slept, the 1 ms gap would have started a new run */
	n = (struct fnv_nap){ 0 };
	t = first_nap(&n, 1000 * US, 10 * US, SPIN);
	ck_assert(!fnv_nap_empty(&n, t + 1000 * US, SPIN));
}
END_TEST

int main(void)
{
	return CHECK_RUN("fnv_nap", "nap", 0,
			 after_the_spin, never_and_at_once, busy_restarts,
			 pause_restarts, slept_goes_on);
}
