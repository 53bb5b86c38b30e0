// SPDX-License-Identifier: MIT
/*
 * test_share.c - a thread's periods given to its stacks by their samples
 * (record/drain/share.c): totals kept exactly, shares by samples, threads
 * apart, what the first pass did not see left as it was.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "share.h"

/* One thread, three stacks: 10 periods over 7 samples, 1 + 2 + 4. */
static void test_one_thread(void **state)
{
	struct rec_share *s = rec_share__new();
	__u64 a, b, c;

	(void)state;
	assert_non_null(s);
	/* the kernel's weights put 6 periods on the stack of one sample */
	assert_int_equal(rec_share__add(s, 5, 6, 6, 1), 0);
	assert_int_equal(rec_share__add(s, 5, 6, 2, 2), 0);
	assert_int_equal(rec_share__add(s, 5, 6, 2, 4), 0);
	a = rec_share__take(s, 5, 6, 6, 1);
	b = rec_share__take(s, 5, 6, 2, 2);
	c = rec_share__take(s, 5, 6, 2, 4);
	/* 10/7 = 1.43 a sample: round(1.43) = 1, round(4.29) - 1 = 3, 10 - 4 = 6 */
	assert_int_equal(a, 1);
	assert_int_equal(b, 3);
	assert_int_equal(c, 6);
	rec_share__free(s);
}

/* Threads are shared apart; a thread of 0 periods gives its stacks 0. */
static void test_threads_apart(void **state)
{
	struct rec_share *s = rec_share__new();
	__u64 sum = 0;

	(void)state;
	assert_non_null(s);
	rec_share__add(s, 1, 1, 100, 50);
	rec_share__add(s, 1, 2, 0, 3);
	rec_share__add(s, 2, 1, 7, 7); /* another process, the same tid: its own */
	for (int i = 0; i < 50; i++)
		sum += rec_share__take(s, 1, 1, 2, 1);
	assert_int_equal(sum, 100);
	assert_int_equal(rec_share__take(s, 1, 2, 0, 3), 0);
	assert_int_equal(rec_share__take(s, 2, 1, 7, 7), 7);
	rec_share__free(s);
}

/* Rounding never loses or adds a period, whatever the order and the numbers. */
static void test_totals_exact(void **state)
{
	struct rec_share *s = rec_share__new();
	static const __u64 samples[] = {3, 1, 1, 7, 2, 1, 9, 1, 1, 4, 1, 2, 5};
	const size_t n = sizeof(samples) / sizeof(samples[0]);

	(void)state;
	assert_non_null(s);
	for (__u64 periods = 0; periods < 200; periods += 7) {
		__u64 sum = 0, all = 0;

		rec_share__clear(s);
		for (size_t i = 0; i < n; i++) {
			rec_share__add(s, 9, 9, i ? 0 : periods, samples[i]);
			all += samples[i];
		}
		for (size_t i = 0; i < n; i++) {
			__u64 got = rec_share__take(s, 9, 9, 0, samples[i]);
			double exact = (double)periods * samples[i] / all;

			/* within a period of its exact share */
			assert_true(got + 1 > exact && got < exact + 1);
			sum += got;
		}
		assert_int_equal(sum, periods);
	}
	rec_share__free(s);
}

/* What the first pass did not see, or more samples than it saw, stays as it was. */
static void test_unseen(void **state)
{
	struct rec_share *s = rec_share__new();

	(void)state;
	assert_non_null(s);
	rec_share__add(s, 3, 3, 4, 2);
	assert_int_equal(rec_share__take(s, 4, 4, 9, 1), 9);
	assert_int_equal(rec_share__take(s, 3, 3, 5, 3), 5);
	assert_int_equal(rec_share__take(s, 3, 3, 1, 2), 4);
	rec_share__clear(s);
	assert_int_equal(rec_share__take(s, 3, 3, 1, 2), 1);
	rec_share__free(s);
	rec_share__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_thread),
		cmocka_unit_test(test_threads_apart),
		cmocka_unit_test(test_totals_exact),
		cmocka_unit_test(test_unseen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
