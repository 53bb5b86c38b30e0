// SPDX-License-Identifier: MIT
/*
 * test_strclip.c - host strings cut to the format's string limit: kept
 * whole up to SAF_MAX_STRING bytes, else cut before a UTF-8 continuation
 * byte and marked "...", each cut counted.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "strclip.h"

static char big[SAF_MAX_STRING + 64];

static void fill(size_t n)
{
	memset(big, 'a', n);
	big[n] = 0;
}

static void test_fits(void **state)
{
	rec_clipbuf buf;
	uint64_t n = 0;
	struct saf_str s;

	(void)state;
	fill(SAF_MAX_STRING);
	s = rec_strclip(big, SAF_MAX_STRING, buf, &n);
	assert_ptr_equal(s.str, big);
	assert_int_equal(s.len, SAF_MAX_STRING);
	assert_int_equal(n, 0);
	s = rec_strclip(NULL, 0, buf, &n);
	assert_int_equal(s.len, 0);
	assert_non_null(s.str);
}

static void test_clipped(void **state)
{
	rec_clipbuf buf;
	uint64_t n = 0;
	struct saf_str s;

	(void)state;
	fill(SAF_MAX_STRING + 1);
	s = rec_strclip(big, SAF_MAX_STRING + 1, buf, &n);
	assert_ptr_equal(s.str, buf);
	assert_int_equal(s.len, SAF_MAX_STRING);
	assert_memory_equal(s.str + s.len - 3, "...", 3);
	assert_int_equal(strlen(buf), SAF_MAX_STRING);
	assert_int_equal(n, 1);
	s = rec_strclip(big, SAF_MAX_STRING + 1, buf, NULL);
	assert_int_equal(s.len, SAF_MAX_STRING);
}

/* A two-byte and a four-byte character across the cut stay whole or go whole. */
static void test_utf8(void **state)
{
	size_t cut = SAF_MAX_STRING - 3;
	rec_clipbuf buf;
	struct saf_str s;

	(void)state;
	fill(SAF_MAX_STRING + 40);
	memcpy(big + cut - 1, "\xc3\xa9", 2); /* é: its second byte would be cut off */
	s = rec_strclip(big, strlen(big), buf, NULL);
	assert_int_equal(s.len, SAF_MAX_STRING - 1);
	assert_memory_equal(s.str + cut - 1, "...", 3);
	fill(SAF_MAX_STRING + 40);
	memcpy(big + cut - 2, "\xf0\x9f\x98\x80", 4); /* U+1F600 */
	s = rec_strclip(big, strlen(big), buf, NULL);
	assert_int_equal(s.len, SAF_MAX_STRING - 2);
	assert_memory_equal(s.str + cut - 2, "...", 3);
	fill(SAF_MAX_STRING + 40);
	memset(big + cut - 4, 0x80, 8); /* not UTF-8: cut where the limit says */
	s = rec_strclip(big, strlen(big), buf, NULL);
	assert_int_equal(s.len, SAF_MAX_STRING);
}

static void test_dup(void **state)
{
	uint64_t n = 0;
	char *d;

	(void)state;
	fill(SAF_MAX_STRING + 40);
	d = rec_strclip_dup(big, strlen(big), &n);
	assert_non_null(d);
	assert_int_equal(strlen(d), SAF_MAX_STRING);
	assert_int_equal(n, 1);
	free(d);
	d = rec_strclip_dup("abc", 2, &n);
	assert_string_equal(d, "ab");
	assert_int_equal(n, 1);
	free(d);
}

SA_TEST_MAIN(test_fits, test_clipped, test_utf8, test_dup)
