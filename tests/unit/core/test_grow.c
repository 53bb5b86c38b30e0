// SPDX-License-Identifier: MIT
/*
 * test_grow.c - sac_grow(): doubling from the initial capacity until the
 * need fits, no realloc when it fits already, and -ENOMEM with the array
 * and capacity untouched where the size in bytes would overflow.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <errno.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "grow.h"

static void test_doubles_from_init(void **state)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(SAC_GROW(v, cap, 1, 16), 0);
	assert_non_null(v);
	assert_int_equal(cap, 16);
	v[15] = 7;
	assert_int_equal(SAC_GROW(v, cap, 16, 16), 0); /* fits: unchanged */
	assert_int_equal(cap, 16);
	assert_int_equal(SAC_GROW(v, cap, 17, 16), 0);
	assert_int_equal(cap, 32);
	assert_int_equal(SAC_GROW(v, cap, 200, 16), 0);
	assert_int_equal(cap, 256);
	assert_int_equal(v[15], 7); /* contents kept */
	free(v);
}

static void test_overflow_leaves_array(void **state)
{
	uint64_t *v = NULL, *before;
	size_t cap = 0;

	(void)state;
	assert_int_equal(SAC_GROW(v, cap, 3, 4), 0);
	before = v;
	assert_int_equal(SAC_GROW(v, cap, SIZE_MAX / 4, 4), -ENOMEM);
	assert_ptr_equal(v, before);
	assert_int_equal(cap, 4);
	assert_int_equal(sac_grow((void **)&v, &cap, SIZE_MAX, 1, 4), -ENOMEM);
	assert_int_equal(cap, 4);
	free(v);
}

SA_TEST_MAIN(test_doubles_from_init, test_overflow_leaves_array)
