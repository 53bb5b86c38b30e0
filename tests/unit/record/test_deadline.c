// SPDX-License-Identifier: MIT
/*
 * test_deadline.c - one drain's deadlines (record/drain/deadline.c): its
 * own a budget and two after the flip, the stop's caps on the drain under
 * way at a signal or at --duration's end, and the last drain's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "deadline.h"

#define MS 1000000ull

/* A drain begun at 1000 ms with a 250 ms budget, a 250/500 ms cut after a stop. */
static void setup(struct rec_deadline *dl, const volatile uint64_t *sig, uint64_t end_at)
{
	*dl = (struct rec_deadline){.budget_ns = 250 * MS};
	rec_deadline__set_stop(dl, sig, end_at, 250 * MS, 500 * MS);
	rec_deadline__begin(dl, 1000 * MS);
}

static void test_own(void **state)
{
	volatile uint64_t sig = 0;
	struct rec_deadline dl;

	(void)state;
	setup(&dl, &sig, 0);
	assert_int_equal(rec_deadline__stacks(&dl), 1250 * MS);
	assert_int_equal(rec_deadline__counts(&dl), 1500 * MS);
	/* describing gets half a budget when it begins late */
	assert_int_equal(rec_deadline__describe(&dl, 1100 * MS), 1500 * MS);
	assert_int_equal(rec_deadline__describe(&dl, 1400 * MS), 1525 * MS);
	assert_false(rec_deadline__passed(1250 * MS, 1249 * MS));
	assert_true(rec_deadline__passed(1250 * MS, 1250 * MS));
	assert_false(rec_deadline__passed(0, UINT64_MAX));
	/* no budget: no deadline of its own */
	dl = (struct rec_deadline){0};
	rec_deadline__begin(&dl, 1000 * MS);
	assert_int_equal(rec_deadline__stacks(&dl), 0);
	assert_int_equal(rec_deadline__counts(&dl), 0);
	assert_int_equal(rec_deadline__describe(&dl, 1400 * MS), 0);
}

/* A signal while a drain runs: cut 250 and 500 ms after it, never later than its own. */
static void test_signal(void **state)
{
	volatile uint64_t sig = 0;
	struct rec_deadline dl;

	(void)state;
	setup(&dl, &sig, 0);
	sig = 900 * MS;
	assert_int_equal(rec_deadline__stacks(&dl), 1150 * MS);
	assert_int_equal(rec_deadline__counts(&dl), 1400 * MS);
	assert_int_equal(rec_deadline__describe(&dl, 1390 * MS), 1400 * MS);
	sig = 1200 * MS; /* later than its own: its own stand */
	assert_int_equal(rec_deadline__stacks(&dl), 1250 * MS);
	assert_int_equal(rec_deadline__counts(&dl), 1500 * MS);
	/* without a budget the stop still cuts it */
	dl.budget_ns = 0;
	rec_deadline__begin(&dl, 1000 * MS);
	assert_int_equal(rec_deadline__stacks(&dl), 1450 * MS);
	assert_int_equal(rec_deadline__describe(&dl, 1000 * MS), 1700 * MS);
}

/* --duration's end is a stop known ahead; a signal before it comes first. */
static void test_end_at(void **state)
{
	volatile uint64_t sig = 0;
	struct rec_deadline dl;

	(void)state;
	setup(&dl, &sig, 1100 * MS);
	assert_int_equal(rec_deadline__stacks(&dl), 1250 * MS);
	assert_int_equal(rec_deadline__counts(&dl), 1500 * MS);
	setup(&dl, &sig, 800 * MS);
	assert_int_equal(rec_deadline__stacks(&dl), 1050 * MS);
	assert_int_equal(rec_deadline__counts(&dl), 1300 * MS);
	sig = 700 * MS;
	assert_int_equal(rec_deadline__stacks(&dl), 950 * MS);
	/* no caps given: the stop changes nothing */
	dl = (struct rec_deadline){.budget_ns = 250 * MS};
	rec_deadline__set_stop(&dl, &sig, 800 * MS, 0, 0);
	rec_deadline__begin(&dl, 1000 * MS);
	assert_int_equal(rec_deadline__stacks(&dl), 1250 * MS);
}

/* The last drain: stacks over the first half of what is left, all of it by the end. */
static void test_last(void **state)
{
	volatile uint64_t sig = 900 * MS;
	struct rec_deadline dl;

	(void)state;
	setup(&dl, &sig, 0);
	rec_deadline__last(&dl, 1000 * MS, 1600 * MS);
	assert_int_equal(rec_deadline__stacks(&dl), 1250 * MS); /* its own is earlier */
	assert_int_equal(rec_deadline__counts(&dl), 1500 * MS);
	rec_deadline__last(&dl, 1000 * MS, 1400 * MS);
	assert_int_equal(rec_deadline__stacks(&dl), 1200 * MS);
	assert_int_equal(rec_deadline__counts(&dl), 1400 * MS);
	assert_int_equal(rec_deadline__describe(&dl, 1390 * MS), 1400 * MS);
	/* past its end already: everything is cut at once */
	rec_deadline__last(&dl, 1500 * MS, 1400 * MS);
	assert_true(rec_deadline__passed(rec_deadline__stacks(&dl), 1500 * MS));
	assert_true(rec_deadline__passed(rec_deadline__counts(&dl), 1500 * MS));
	/* the next begin forgets it: the stop's caps are back */
	rec_deadline__begin(&dl, 2000 * MS);
	assert_int_equal(rec_deadline__counts(&dl), 1400 * MS);
	sig = 0;
	assert_int_equal(rec_deadline__counts(&dl), 2500 * MS);
}

SA_TEST_MAIN(test_own, test_signal, test_end_at, test_last)
