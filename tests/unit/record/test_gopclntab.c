// SPDX-License-Identifier: MIT
/*
 * test_gopclntab.c - rec_gopclntab__collect() on tables laid out as Go
 * 1.18-1.20 and Go 1.2 write them: every function with its file offset,
 * its size up to the next entry and its name; a cut table, an unknown
 * magic and a name outside the table are refused or skipped, never read
 * past. The real thing is checked end to end by tests/cli/3241.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "gopclntab.h"

#define BASE 0x400000u /* the one PT_LOAD: vaddr BASE at offset 0 */

static int to_off(const void *arg, uint64_t va, uint64_t *off)
{
	(void)arg;
	if (va < BASE || va >= BASE + 0x100000)
		return -1;
	*off = va - BASE;
	return 0;
}

static void put(uint8_t *p, size_t off, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[off + i] = (uint8_t)(v >> (8 * i));
}

static const char names[] = "main.a\0main.b\0runtime.goexit";
static const uint32_t name_at[3] = {0, 7, 14};
static const uint32_t entry[4] = {0, 0x100, 0x180, 0x200}; /* the last: the end */

/* A Go 1.18 table (magic @magic) into @p; @return its size. */
static size_t table_118(uint8_t *p, uint32_t magic)
{
	size_t names_off = 8 + 8 * 8, pcln = names_off + sizeof(names), funcs = pcln + 7 * 4;

	memset(p, 0, 512);
	put(p, 0, magic, 4);
	p[6] = 1;
	p[7] = 8;
	put(p, 8, 3, 8);			/* nfunc */
	put(p, 8 + 2 * 8, BASE + 0x1000, 8);	/* textStart */
	put(p, 8 + 3 * 8, names_off, 8);	/* funcnameOffset */
	put(p, 8 + 7 * 8, pcln, 8);		/* pclnOffset */
	memcpy(p + names_off, names, sizeof(names));
	for (unsigned i = 0; i < 3; i++) {
		put(p, pcln + 8 * i, entry[i], 4);
		put(p, pcln + 8 * i + 4, funcs - pcln + 8 * i, 4); /* _func offset from pcln */
		put(p, funcs + 8 * i, entry[i], 4);		     /* _func.entryOff */
		put(p, funcs + 8 * i + 4, name_at[i], 4);	     /* _func.nameOff */
	}
	put(p, pcln + 24, entry[3], 4);
	return funcs + 24;
}

static void check_three(const struct rec_elftab *t, uint64_t text_off)
{
	assert_int_equal(t->nsyms, 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(t->syms[i].off, text_off + entry[i]);
		assert_int_equal(t->syms[i].size, entry[i + 1] - entry[i]);
		assert_string_equal(t->names + t->syms[i].name, names + name_at[i]);
	}
}

static void test_go118(void **state)
{
	uint8_t p[512];
	struct rec_elftab t = {0};
	size_t n = table_118(p, 0xfffffff0u);

	(void)state;
	assert_int_equal(rec_gopclntab__collect(p, n, 0, to_off, NULL, &t), 0);
	check_three(&t, 0x1000);
	rec_elftab__release(&t);
	/* Go 1.20's magic, same layout; a PIE's textStart (0) is the .text address */
	n = table_118(p, 0xfffffff1u);
	put(p, 8 + 2 * 8, 0, 8);
	assert_int_equal(rec_gopclntab__collect(p, n, BASE + 0x2000, to_off, NULL, &t), 0);
	check_three(&t, 0x2000);
	rec_elftab__release(&t);
}

static void test_go12(void **state)
{
	uint8_t p[512] = {0};
	struct rec_elftab t = {0};
	size_t tab = 16, funcs = tab + 7 * 8, nm = funcs + 3 * 16;

	(void)state;
	put(p, 0, 0xfffffffbu, 4);
	p[6] = 1;
	p[7] = 8;
	put(p, 8, 3, 8);
	memcpy(p + nm, names, sizeof(names));
	for (unsigned i = 0; i < 3; i++) {
		put(p, tab + 16 * i, BASE + 0x3000 + entry[i], 8);
		put(p, tab + 16 * i + 8, funcs + 16 * i, 8);
		put(p, funcs + 16 * i, BASE + 0x3000 + entry[i], 8);
		put(p, funcs + 16 * i + 8, nm + name_at[i], 4);
	}
	put(p, tab + 48, BASE + 0x3000 + entry[3], 8);
	assert_int_equal(rec_gopclntab__collect(p, nm + sizeof(names), 0, to_off, NULL, &t), 0);
	check_three(&t, 0x3000);
	rec_elftab__release(&t);
}

static void test_refused(void **state)
{
	uint8_t p[512];
	struct rec_elftab t = {0};
	size_t n = table_118(p, 0xfffffff0u);

	(void)state;
	/* every cut of the table is refused or gives fewer functions, never more */
	for (size_t cut = 0; cut < n; cut++) {
		int err = rec_gopclntab__collect(p, cut, 0, to_off, NULL, &t);

		assert_true(err == 0 || err == -ENOENT);
		assert_true(t.nsyms <= 3);
		rec_elftab__release(&t);
	}
	table_118(p, 0xfffffff2u);
	assert_int_equal(rec_gopclntab__collect(p, n, 0, to_off, NULL, &t), -ENOENT);
	rec_elftab__release(&t);
	/* a name offset past the table: that function alone is left out */
	table_118(p, 0xfffffff0u);
	put(p, 8 + 8 * 8 + sizeof(names) + 7 * 4 + 8 + 4, 100000, 4);
	assert_int_equal(rec_gopclntab__collect(p, n, 0, to_off, NULL, &t), 0);
	assert_int_equal(t.nsyms, 2);
	assert_string_equal(t.names + t.syms[1].name, "runtime.goexit");
	rec_elftab__release(&t);
}

SA_TEST_MAIN(test_go118, test_go12, test_refused)
