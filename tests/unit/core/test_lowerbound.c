// SPDX-License-Identifier: MIT
/*
 * test_lowerbound.c - sac_lower_bound() against a linear scan on every
 * sorted array of up to 7 values from {0..3} (duplicates, runs, empty),
 * for every key from below the first to past the last: the first index
 * not below the key, n when there is none; and a count of calls that
 * stays logarithmic on a large array. The edge cases the callers rely on
 * by name: empty, every value below the key, every value above it, and a
 * run of keys equal to it, found from its first and left by "at or below".
 * SAC_FIRST_NOT_BELOW() and SAC_FIRST_ABOVE() over a uint64_t field that is
 * not the struct's first, on the same arrays; SAC_CMP()'s three answers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "lowerbound.h"

struct key {
	const int *v;
	int x;
	unsigned int *calls;
};

static bool below(const void *ctx, size_t i)
{
	const struct key *k = ctx;

	(*k->calls)++;
	return k->v[i] < k->x;
}

static size_t linear(const int *v, size_t n, int x)
{
	size_t i = 0;

	while (i < n && v[i] < x)
		i++;
	return i;
}

static void test_every_small_array(void **state)
{
	int v[7];
	unsigned int calls, checked = 0;

	(void)state;
	for (size_t n = 0; n <= 7; n++) {
		/* each sorted array of n values in 0..3: a code of n base-4 digits */
		for (unsigned int code = 0; code < 1u << (2 * n); code++) {
			unsigned int c = code;
			bool sorted = true;

			for (size_t i = 0; i < n; i++, c >>= 2) {
				v[i] = (int)(c & 3);
				sorted &= !i || v[i - 1] <= v[i];
			}
			if (!sorted)
				continue;
			for (int x = -1; x <= 4; x++) {
				struct key k = {v, x, &calls};

				assert_int_equal(sac_lower_bound(n, below, &k), linear(v, n, x));
				checked++;
			}
		}
	}
	assert_int_equal(checked, 6 * (1 + 4 + 10 + 20 + 35 + 56 + 84 + 120));
}

static bool at_or_below(const void *ctx, size_t i)
{
	const struct key *k = ctx;

	(*k->calls)++;
	return k->v[i] <= k->x;
}

static void test_edges(void **state)
{
	static const int v[] = {1, 3, 3, 3, 5};
	unsigned int calls = 0;
	struct key k = {v, 3, &calls};

	(void)state;
	/* empty: 0, and the predicate is never called (the array may be NULL) */
	assert_int_equal(sac_lower_bound(0, below, &(struct key){NULL, 3, &calls}), 0);
	assert_int_equal(calls, 0);
	/* every value below the key: n; every value above it: 0 */
	k.x = 9;
	assert_int_equal(sac_lower_bound(5, below, &k), 5);
	assert_int_equal(sac_lower_bound(5, at_or_below, &k), 5);
	k.x = 0;
	assert_int_equal(sac_lower_bound(5, below, &k), 0);
	assert_int_equal(sac_lower_bound(5, at_or_below, &k), 0);
	/* equal keys: "below" stops at the first 3, "at or below" past the last */
	k.x = 3;
	assert_int_equal(sac_lower_bound(5, below, &k), 1);
	assert_int_equal(sac_lower_bound(5, at_or_below, &k), 4);
	/* one element, equal: found at 0; the last at or below it is 0 too */
	assert_int_equal(sac_lower_bound(1, below, &(struct key){v + 1, 3, &calls}), 0);
	assert_int_equal(sac_lower_bound(1, at_or_below, &(struct key){v + 1, 3, &calls}), 1);
	/* every value equal to the key */
	assert_int_equal(sac_lower_bound(3, below, &(struct key){v + 1, 3, &calls}), 0);
	assert_int_equal(sac_lower_bound(3, at_or_below, &(struct key){v + 1, 3, &calls}), 3);
}

struct rec {
	uint32_t pad;
	uint64_t k;
};

static size_t linear_at_or_below(const int *v, size_t n, int x)
{
	size_t i = 0;

	while (i < n && v[i] <= x)
		i++;
	return i;
}

static void test_u64_field(void **state)
{
	static const int runs[][6] = {{0}, {2}, {1, 1}, {0, 2, 2, 2, 3}, {1, 2, 3, 3, 3, 3}};
	static const size_t lens[] = {0, 1, 2, 5, 6};
	struct rec r[6];

	(void)state;
	for (size_t a = 0; a < sizeof(lens) / sizeof(*lens); a++) {
		const int *v = runs[a];
		size_t n = lens[a];

		for (size_t i = 0; i < n; i++)
			r[i] = (struct rec){0xffffffffu, (uint64_t)v[i] + (1ull << 40)};
		for (int x = -1; x <= 4; x++) {
			uint64_t key = (uint64_t)x + (1ull << 40);

			assert_int_equal(SAC_FIRST_NOT_BELOW(r, n, k, key), linear(v, n, x));
			assert_int_equal(SAC_FIRST_ABOVE(r, n, k, key),
					 linear_at_or_below(v, n, x));
		}
	}
	/* empty and NULL: the array is never read */
	assert_int_equal(SAC_FIRST_ABOVE((struct rec *)NULL, 0, k, 7), 0);
	for (size_t i = 0; i + 1 < 5; i++) {
		assert_int_equal(SAC_CMP(r[i].k, r[i + 1].k), r[i].k < r[i + 1].k ? -1 : 0);
		assert_int_equal(SAC_CMP(r[i + 1].k, r[i].k), r[i].k < r[i + 1].k ? 1 : 0);
	}
	assert_int_equal(SAC_CMP(r[0].pad, r[0].k), -1); /* mixed widths: promoted */
}

static void test_logarithmic(void **state)
{
	static int v[100000];
	unsigned int calls = 0;
	struct key k = {v, 0, &calls};

	(void)state;
	for (int i = 0; i < 100000; i++)
		v[i] = 2 * i;
	k.x = 2 * 31337 + 1;
	assert_int_equal(sac_lower_bound(100000, below, &k), 31338);
	assert_true(calls <= 18); /* ceil(log2(100000 + 1)) = 17 */
	k.x = 2 * 31337;
	assert_int_equal(sac_lower_bound(100000, below, &k), 31337);
	k.x = 1 << 30;
	assert_int_equal(sac_lower_bound(100000, below, &k), 100000);
}

SA_TEST_MAIN(test_every_small_array, test_edges, test_u64_field, test_logarithmic)
