// SPDX-License-Identifier: MIT
/*
 * test_gopclntab.c - rec_gopclntab__collect() on tables laid out as Go
 * 1.18-1.20 and Go 1.2 write them: every function with its file offset,
 * its size up to the next entry and its name; a cut table, an unknown
 * magic and a name outside the table are refused or skipped, never read
 * past. rec_gopcln__frames() on a table of one function with one call
 * inlined into it, in the layouts of Go 1.18 and 1.20: each range's file,
 * line and inline frames, and none where no tree names an inlined frame.
 * The real thing is checked end to end by tests/cli/3241 and 3242.
 */
#include <stdarg.h>
#include <stdbool.h>
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

/* ---- lines ---- */

#define PCLN_VA	  0x500000u
#define RODATA_VA 0x600000u
#define TEXT	  (BASE + 0x1000u)

/* Offsets of the parts of lines_table()'s table. */
enum { L_NAMES = 72, L_CU = 88, L_FILES = 92, L_PCTAB = 104, L_PCLN = 160, L_SIZE = 280 };

/*
 * main.f at [TEXT, TEXT + 0x40), its lines 9, 10, 20 (main.g inlined,
 * called from pc 0x08, on line 10), 11, in a table of Go 1.18 (@magic 0xfffffff0) or 1.20
 * (0xfffffff1) into @p; its inline tree into @ro, moduledata into @nd.
 */
static void lines_table(uint8_t *p, uint8_t *ro, uint8_t *nd, uint32_t magic)
{
	static const uint8_t pcfile[] = {2, 0x40, 0};
	static const uint8_t pcln[] = {20, 0x08, 2, 0x08, 20, 0x10, 17, 0x20, 0};
	static const uint8_t inl[] = {0, 0x10, 2, 0x10, 1, 0x20, 0};
	bool v120 = magic == 0xfffffff1u;
	size_t fn = L_PCLN + 12, fnsize = v120 ? 44 : 40, gofunc_word = v120 ? 40 : 38;

	memset(p, 0, L_SIZE);
	memset(ro, 0, 64);
	memset(nd, 0, 512);
	put(p, 0, magic, 4);
	p[6] = 1;
	p[7] = 8;
	put(p, 8, 1, 8);				 /* nfunc */
	put(p, 16, 1, 8);				 /* nfiles */
	put(p, 24, TEXT, 8);				 /* textStart */
	put(p, 32, L_NAMES, 8);				 /* funcnameOffset */
	put(p, 40, L_CU, 8);				 /* cuOffset */
	put(p, 48, L_FILES, 8);				 /* filetabOffset */
	put(p, 56, L_PCTAB, 8);				 /* pctabOffset */
	put(p, 64, L_PCLN, 8);				 /* pclnOffset */
	memcpy(p + L_NAMES, "main.f\0main.g", 14);	 /* at 0 and 7 */
	memcpy(p + L_FILES, "/src/a.go", 10);		 /* cutab[0] = 0 */
	memcpy(p + L_PCTAB + 1, pcfile, sizeof(pcfile)); /* a table at 0 is none */
	memcpy(p + L_PCTAB + 8, pcln, sizeof(pcln));
	memcpy(p + L_PCTAB + 24, inl, sizeof(inl));
	put(p, L_PCLN + 4, 12, 4); /* functab: (0, _func at 12), end 0x40 */
	put(p, L_PCLN + 8, 0x40, 4);
	put(p, fn + 20, 1, 4);		/* pcfile */
	put(p, fn + 24, 8, 4);		/* pcln */
	put(p, fn + 28, 3, 4);		/* npcdata */
	p[fn + fnsize - 1] = 4;		/* nfuncdata */
	put(p, fn + fnsize + 8, 24, 4); /* pcdata[InlTreeIndex] */
	for (unsigned k = 0; k < 3; k++)
		put(p, fn + fnsize + 12 + 4 * k, 0xffffffffu, 4);
	put(p, fn + fnsize + 24, 8, 4); /* funcdata[InlTree]: gofunc + 8 */
	/* node 0: main.g (name 7), called from pc 0x08 */
	put(ro, 8 + (v120 ? 4 : 12), 7, 4);
	put(ro, 8 + (v120 ? 8 : 16), 0x08, 4);
	put(ro, 8 + 2, 0x55, 1); /* 1.18's funcID, 1.20's padding: read by neither */
	put(nd, 64, PCLN_VA, 8); /* moduledata at 64: pcHeader, funcnametab, ... */
	put(nd, 72, PCLN_VA + L_NAMES, 8);
	put(nd, 64 + 8 * (gofunc_word - 1), RODATA_VA, 8); /* rodata */
	put(nd, 64 + 8 * gofunc_word, RODATA_VA, 8);	   /* gofunc */
}

static struct rec_gopcln *lines_open(const uint8_t *p, size_t size, const uint8_t *ro,
				     const uint8_t *nd)
{
	return rec_gopcln__new(&(struct rec_gopcln_src){.pcln = p,
							.pcln_size = size,
							.pcln_va = PCLN_VA,
							.noptrdata = nd,
							.noptrdata_size = nd ? 512 : 0,
							.rodata = ro,
							.rodata_size = 64,
							.rodata_va = RODATA_VA});
}

static void check_frame(const struct rec_goframe *f, const char *name, unsigned line)
{
	assert_string_equal(f->name, name);
	assert_string_equal(f->file, "/src/a.go");
	assert_int_equal(f->line, line);
}

static void check_lines(uint32_t magic)
{
	uint8_t p[L_SIZE], ro[64], nd[512];
	struct rec_goframe fr[4];
	struct rec_gopcln *g;
	uint64_t lo, hi;

	lines_table(p, ro, nd, magic);
	g = lines_open(p, L_SIZE, ro, nd);
	assert_non_null(g);
	assert_int_equal(rec_gopcln__frames(g, TEXT + 0x04, fr, 4, &lo, &hi), 1);
	check_frame(&fr[0], "main.f", 9);
	assert_int_equal(lo, TEXT);
	assert_int_equal(hi, TEXT + 0x08);
	assert_int_equal(rec_gopcln__frames(g, TEXT + 0x0f, fr, 4, &lo, &hi), 1);
	check_frame(&fr[0], "main.f", 10);
	assert_int_equal(lo, TEXT + 0x08);
	assert_int_equal(rec_gopcln__frames(g, TEXT + 0x1f, fr, 4, &lo, &hi), 2);
	check_frame(&fr[0], "main.f", 10); /* the call site, at pc 0x08 */
	check_frame(&fr[1], "main.g", 20);
	assert_int_equal(lo, TEXT + 0x10);
	assert_int_equal(hi, TEXT + 0x20);
	assert_int_equal(rec_gopcln__frames(g, TEXT + 0x20, fr, 4, &lo, &hi), 1);
	check_frame(&fr[0], "main.f", 11);
	assert_int_equal(lo, TEXT + 0x20);
	assert_int_equal(hi, TEXT + 0x40);
	assert_int_equal(rec_gopcln__frames(g, TEXT + 0x40, fr, 4, &lo, &hi), 0);
	assert_int_equal(rec_gopcln__frames(g, TEXT - 1, fr, 4, &lo, &hi), 0);
	assert_int_equal(rec_gopcln__frames(g, TEXT + 0x14, fr, 1, &lo, &hi), 0); /* no room */
	rec_gopcln__free(g);
	/* no moduledata: lines, but an inlined range cannot be named */
	g = lines_open(p, L_SIZE, ro, NULL);
	assert_non_null(g);
	assert_int_equal(rec_gopcln__frames(g, TEXT + 0x04, fr, 4, &lo, &hi), 1);
	assert_int_equal(rec_gopcln__frames(g, TEXT + 0x14, fr, 4, &lo, &hi), 0);
	rec_gopcln__free(g);
	/* every cut of the table: refused, or frames that are all in it */
	for (size_t cut = 0; cut < L_SIZE; cut++) {
		g = lines_open(p, cut, ro, nd);
		for (uint64_t pc = TEXT; g && pc < TEXT + 0x41; pc += 3) {
			int n = rec_gopcln__frames(g, pc, fr, 4, &lo, &hi);

			assert_true(n >= 0 && n <= 2);
			assert_true(!n || (lo <= pc && pc < hi));
		}
		rec_gopcln__free(g);
	}
}

static void test_lines118(void **state)
{
	(void)state;
	check_lines(0xfffffff0u);
}

static void test_lines120(void **state)
{
	(void)state;
	check_lines(0xfffffff1u);
}

SA_TEST_MAIN(test_go118, test_go12, test_refused, test_lines118, test_lines120)
