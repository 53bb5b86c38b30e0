// SPDX-License-Identifier: MIT
/*
 * test_grow.c - sac_grow(): doubling from the initial capacity until the
 * need fits, no realloc when it fits already, and -ENOMEM with the array
 * and capacity untouched where the size in bytes would overflow;
 * sac_grow_max(): the same doubling up to its ceiling, -EFBIG with nothing
 * changed where the doubled capacity would pass it, even when the need
 * itself does not.
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

static void test_ceiling(void **state)
{
	char *v = NULL, *before;
	size_t cap = 0;

	(void)state;
	assert_int_equal(sac_grow_max((void **)&v, &cap, 100, 1, 64, 256), 0);
	assert_int_equal(cap, 128);
	assert_int_equal(sac_grow_max((void **)&v, &cap, 256, 1, 64, 256), 0); /* at it: fits */
	assert_int_equal(cap, 256);
	before = v;
	assert_int_equal(sac_grow_max((void **)&v, &cap, 257, 1, 64, 256), -EFBIG);
	assert_ptr_equal(v, before);
	assert_int_equal(cap, 256);
	free(v);
	/* 65 fits under 100, but the capacity doubles from 64 to 128 */
	v = NULL;
	cap = 0;
	assert_int_equal(sac_grow_max((void **)&v, &cap, 65, 1, 64, 100), -EFBIG);
	assert_null(v);
	assert_int_equal(cap, 0);
	assert_int_equal(sac_grow_max((void **)&v, &cap, 64, 1, 64, 100), 0);
	assert_int_equal(cap, 64);
	free(v);
}

SA_TEST_MAIN(test_doubles_from_init, test_overflow_leaves_array, test_ceiling)
