// SPDX-License-Identifier: MIT
/*
 * test_pyread.c - record/python/pyread.c on objects built in this process's
 * own memory: a code object's names read as the 3.11 layout says, and
 * whatever else the memory holds (another type, a pointer anywhere, a
 * length of 2^40) refused or cut, never read past a bound.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "pyint.h"

static uint64_t code_type[8], str_type[8], other_type[8];
static uint8_t code[256], qual[512], file[512];
static struct rec_py_bin bin;

static void put64(uint8_t *p, size_t off, uint64_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

/* A compact str: ASCII at 48, or Latin-1 (kind 1) at 72. */
static void make_str(uint8_t *s, const char *text, size_t len, bool ascii)
{
	uint32_t state = 1u << 5 | 1u << 7 | (ascii ? 1u << 6 : 1u << 2);

	memset(s, 0, 512);
	put64(s, 8, (uintptr_t)str_type);
	put64(s, 16, len);
	memcpy(s + 32, &state, sizeof(state));
	memcpy(s + (ascii ? 48 : 72), text, strlen(text));
}

static int setup(void **state)
{
	int32_t line = 12;

	(void)state;
	bin.layout = rec_py__layout(0x030b02f0, 166688);
	bin.code_type = (uintptr_t)code_type;
	bin.unicode_type = (uintptr_t)str_type;
	memset(code, 0, sizeof(code));
	put64(code, 8, (uintptr_t)code_type);
	memcpy(code + 72, &line, sizeof(line));
	put64(code, 112, (uintptr_t)file);
	put64(code, 128, (uintptr_t)qual);
	make_str(qual, "Parser.parse", 12, true);
	make_str(file, "/srv/app.py", 11, true);
	return 0;
}

static int read_it(struct rec_py_code *c)
{
	return rec_py__read_code((uint32_t)getpid(), &bin, (uintptr_t)code, c);
}

static void test_names(void **state)
{
	struct rec_py_code c;

	(void)state;
	assert_non_null(bin.layout);
	assert_null(rec_py__layout(0x030c00f0, 166688)); /* 3.12 of 3.11's size: not confirmed */
	assert_null(rec_py__layout(0x030b02f0, 166680)); /* another _PyRuntimeState */
	/* each version's row, at its own size only (pyfind.c) */
	assert_non_null(rec_py__layout(0x030c01f0, 459944));
	assert_non_null(rec_py__layout(0x030d00f0, 283320));
	assert_non_null(rec_py__layout(0x0308ff00, 1464));
	assert_non_null(rec_py__layout(0x0309ff00, 656));
	assert_non_null(rec_py__layout(0x030aff00, 672));
	assert_null(rec_py__layout(0x030aff00, 656));	 /* 3.10 of 3.9's size */
	assert_null(rec_py__layout(0x0307ff00, 1464));	 /* 3.7: no row */
	assert_null(rec_py__layout(0x030e00f0, 283320)); /* 3.14: no row */
	assert_int_equal(read_it(&c), 0);
	assert_string_equal(c.name, "Parser.parse");
	assert_string_equal(c.file, "/srv/app.py");
	assert_int_equal(c.line, 12);
}

static void test_latin1(void **state)
{
	struct rec_py_code c;

	(void)state;
	make_str(qual, "caf\xe9", 4, false);
	assert_int_equal(read_it(&c), 0);
	assert_string_equal(c.name, "caf\xc3\xa9");
}

static void test_wrong_types(void **state)
{
	struct rec_py_code c;

	(void)state;
	put64(code, 8, (uintptr_t)other_type);
	assert_int_equal(read_it(&c), -EBADMSG);
	put64(code, 8, (uintptr_t)code_type);
	put64(qual, 8, (uintptr_t)other_type);
	assert_int_equal(read_it(&c), -EBADMSG);
}

static void test_anywhere(void **state)
{
	struct rec_py_code c;

	(void)state;
	assert_int_equal(rec_py__read_code((uint32_t)getpid(), &bin, 16, &c), -EFAULT);
	assert_int_equal(rec_py__read_code((uint32_t)getpid(), &bin, ~0ull - 8, &c), -EFAULT);
	put64(code, 128, 0x10);
	assert_int_equal(read_it(&c), -EFAULT);
	put64(code, 128, 0);
	assert_int_equal(read_it(&c), -EFAULT);
}

static void test_long(void **state)
{
	struct rec_py_code c;

	(void)state;
	memset(qual + 48, 'x', 400);
	put64(qual, 16, 1ull << 40);
	assert_int_equal(read_it(&c), 0);
	assert_int_equal(strlen(c.name), REC_PY_NAME_MAX - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_names, setup),
		cmocka_unit_test_setup(test_latin1, setup),
		cmocka_unit_test_setup(test_wrong_types, setup),
		cmocka_unit_test_setup(test_anywhere, setup),
		cmocka_unit_test_setup(test_long, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
