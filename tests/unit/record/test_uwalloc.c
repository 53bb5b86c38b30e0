// SPDX-License-Identifier: MIT
/*
 * test_uwalloc.c - slices of the unwinder's row array (record/cfi/uwalloc.c):
 * first fit, the budget never exceeded, freed slices merged with their
 * neighbours so that the whole array is one slice again once all are back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <cmocka.h>
#include "uwalloc.h"

static void test_first_fit(void **state)
{
	struct rec_uwalloc a;

	(void)state;
	assert_int_equal(rec_uwalloc__init(&a, 100), 0);
	assert_int_equal(rec_uwalloc__get(&a, 40), 0);
	assert_int_equal(rec_uwalloc__get(&a, 40), 40);
	assert_int_equal(rec_uwalloc__get(&a, 30), -ENOSPC); /* 20 left */
	assert_int_equal(rec_uwalloc__get(&a, 0), -ENOSPC);
	assert_int_equal(rec_uwalloc__put(&a, 0, 40), 0);
	assert_int_equal(a.used, 40);
	assert_int_equal(rec_uwalloc__largest(&a), 40);
	assert_int_equal(rec_uwalloc__get(&a, 30), 0); /* the first hole that fits */
	assert_int_equal(rec_uwalloc__get(&a, 15), 80);
	assert_int_equal(rec_uwalloc__get(&a, 10), 30);
	assert_int_equal(rec_uwalloc__get(&a, 6), -ENOSPC);
	rec_uwalloc__fini(&a);
}

/* Give back in every order of three neighbours: one free slice of all at the end. */
static void test_merge(void **state)
{
	static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
					 {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
	struct rec_uwalloc a;
	int i, k;

	(void)state;
	for (i = 0; i < 6; i++) {
		assert_int_equal(rec_uwalloc__init(&a, 90), 0);
		for (k = 0; k < 3; k++)
			assert_int_equal(rec_uwalloc__get(&a, 30), 30 * k);
		for (k = 0; k < 3; k++)
			assert_int_equal(rec_uwalloc__put(&a, 30 * orders[i][k], 30), 0);
		assert_int_equal(a.nv, 1);
		assert_int_equal(a.used, 0);
		assert_int_equal(rec_uwalloc__largest(&a), 90);
		rec_uwalloc__fini(&a);
	}
}

/* Many small tables come and go: the rows in use never pass the budget, nor overlap. */
static void test_churn(void **state)
{
	static uint8_t owner[1000];
	struct rec_uwalloc a;
	int64_t at[64] = {0};
	uint32_t len[64] = {0}, i, r, k;

	(void)state;
	assert_int_equal(rec_uwalloc__init(&a, 1000), 0);
	for (i = 0; i < 5000; i++) {
		k = (i * 7919u) % 64;
		if (len[k]) {
			for (r = 0; r < len[k]; r++)
				owner[at[k] + r] = 0;
			assert_int_equal(rec_uwalloc__put(&a, (uint32_t)at[k], len[k]), 0);
			len[k] = 0;
			continue;
		}
		len[k] = 1 + (i * 104729u) % 60;
		at[k] = rec_uwalloc__get(&a, len[k]);
		if (at[k] < 0) {
			assert_true(rec_uwalloc__largest(&a) < len[k]);
			len[k] = 0;
			continue;
		}
		assert_true(at[k] + len[k] <= 1000);
		for (r = 0; r < len[k]; r++) {
			assert_int_equal(owner[at[k] + r], 0);
			owner[at[k] + r] = 1;
		}
		assert_true(a.used <= 1000);
	}
	rec_uwalloc__fini(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_fit),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_churn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
