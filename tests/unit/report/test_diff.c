// SPDX-License-Identifier: MIT
/*
 * test_diff.c - report/output/diff.c: the two-column folded diff (normalized and
 * raw, byte-exact), --diff --top values, and the differential SVG's colours
 * (grown red, shrunk blue, grey within sampling noise), --negate reaching
 * frames only in BEFORE, and the sig column of --diff --top.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sa_cmocka.h"

#include "output.h"
#include "rpt_test.h"


enum mode { FOLDED, TOP, SVG };

static char *diff_str(const char *b, const char *a, enum mode m, const struct rpt_diff_opts *o)
{
	struct rpt_profile *pb = parse_str(b), *pa = parse_str(a);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	assert_non_null(f);
	rc = m == FOLDED ? rpt_diff__folded(pb, pa, f, o)
	     : m == TOP	 ? rpt_diff__top(pb, pa, f, o)
			 : rpt_diff__svg(pb, pa, f, o);
	assert_int_equal(rc, 0);
	fclose(f);
	rpt_profile__free(pb);
	rpt_profile__free(pa);
	return buf;
}

static const char *before = "app;main;leaf_a 600\napp;main;leaf_b 300\napp;main;leaf_c 100\n"
			    "app;main;gone 20\n";
static const char *after2x = "app;main;leaf_a 600\napp;main;leaf_b 1200\napp;main;leaf_c 200\n"
			     "app;main;new 40\n";

static void test_folded(void **state)
{
	struct rpt_diff_opts raw = {.no_normalize = true};
	char *out;

	(void)state;
	/* BEFORE (1020) scaled to AFTER's total (2040): x2 */
	out = diff_str(before, after2x, FOLDED, NULL);
	assert_string_equal(out, "app;main;gone 40 0\n"
				 "app;main;leaf_a 1200 600\n"
				 "app;main;leaf_b 600 1200\n"
				 "app;main;leaf_c 200 200\n"
				 "app;main;new 0 40\n");
	free(out);
	out = diff_str(before, after2x, FOLDED, &raw);
	assert_string_equal(out, "app;main;gone 20 0\n"
				 "app;main;leaf_a 600 600\n"
				 "app;main;leaf_b 300 1200\n"
				 "app;main;leaf_c 100 200\n"
				 "app;main;new 0 40\n");
	free(out);
}

/* The row of @fn: self before, after, delta, total before, after, delta. */
static void row(const char *out, const char *fn, double v[6])
{
	char pat[64];
	const char *line;

	snprintf(pat, sizeof(pat), "  %s\n", fn);
	line = strstr(out, pat);
	assert_non_null(line);
	while (line > out && line[-1] != '\n')
		line--;
	assert_int_equal(
		sscanf(line, "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]),
		6);
}

static void test_top(void **state)
{
	const char *b = "app;main;leaf_a 600\napp;main;leaf_b 300\napp;main;leaf_c 100\n";
	const char *a = "app;main;leaf_a 300\napp;main;leaf_b 600\napp;main;leaf_c 100\n";
	double v[6];
	char *out = diff_str(b, a, TOP, NULL), *first;

	(void)state;
	row(out, "leaf_a", v);
	assert_true(v[0] == 60 && v[1] == 30 && v[2] == -30 && v[5] == -30);
	row(out, "leaf_b", v);
	assert_true(v[0] == 30 && v[1] == 60 && v[2] == 30 && v[5] == 30);
	row(out, "leaf_c", v);
	assert_true(v[2] == 0);
	row(out, "main", v);
	assert_true(v[3] == 100 && v[4] == 100 && v[5] == 0);
	/* ranked by size of change: the two 30-point moves first */
	first = strstr(out, "function\n");
	assert_non_null(first);
	assert_non_null(strstr(first, "leaf_a\n"));
	assert_true(strstr(first, "leaf_a\n") < strstr(first, "leaf_c\n"));
	assert_true(strstr(first, "leaf_b\n") < strstr(first, "leaf_c\n"));
	free(out);
}

/* The fill of the box whose tooltip starts with @name, or 0 when absent. */
static unsigned fill_of(const char *svg, const char *name)
{
	char pat[64];
	const char *t;
	unsigned rgb = 0;

	snprintf(pat, sizeof(pat), "<title>%s&#10;", name);
	t = strstr(svg, pat);
	if (!t)
		return 0;
	t = strstr(t, "fill=\"#");
	sscanf(t, "fill=\"#%x\"", &rgb);
	return rgb;
}

static void test_svg(void **state)
{
	struct rpt_diff_opts neg = {.negate = true};
	char *svg = diff_str(before, after2x, SVG, NULL);
	unsigned grew, shrank, same;

	(void)state;
	grew = fill_of(svg, "leaf_b");
	shrank = fill_of(svg, "leaf_a");
	same = fill_of(svg, "leaf_c");
	assert_true((grew >> 16) == 0xff && (grew & 0xff) < 0xff);     /* red */
	assert_true((shrank & 0xff) == 0xff && (shrank >> 16) < 0xff); /* blue */
	assert_true((same >> 16) == (same & 0xff));		       /* neutral */
	assert_int_equal(fill_of(svg, "gone"), 0);		       /* zero width in AFTER */
	assert_non_null(strstr(svg, "before 600 (58.82%), after 600 (29.41%)"));
	free(svg);
	svg = diff_str(before, after2x, SVG, &neg);
	/* widths from BEFORE: the vanished frame is drawn, blue; red still means growth */
	assert_true((fill_of(svg, "gone") & 0xff) == 0xff);
	assert_true((fill_of(svg, "leaf_b") >> 16) == 0xff);
	assert_int_equal(fill_of(svg, "new"), 0);
	free(svg);
}

/* 100 -> 110 of 1000 (p 0.56) is noise: grey, no '*'; 100 -> 300 is not. */
static void test_noise(void **state)
{
	const char *b = "app;main;noise 100\napp;main;real 100\napp;main;rest 800\n";
	const char *a = "app;main;noise 110\napp;main;real 300\napp;main;rest 590\n";
	char *svg = diff_str(b, a, SVG, NULL), *top = diff_str(b, a, TOP, NULL);

	(void)state;
	assert_int_equal(fill_of(svg, "noise"), 0xd8d8d8);
	assert_int_equal(fill_of(svg, "main"), 0xd8d8d8);
	assert_true((fill_of(svg, "real") >> 16) == 0xff && (fill_of(svg, "real") & 0xff) < 0xff);
	assert_non_null(strstr(svg, "Chance of any false colour: 0.1% (Bonferroni over 5 frames)"));
	assert_non_null(strstr(svg, ", within noise</title>"));
	/* 5 totals and 3 selfs; the sig column precedes the name */
	assert_non_null(strstr(top, "Bonferroni over 8 tests)\n"));
	assert_non_null(strstr(top, " ..  noise\n"));
	assert_non_null(strstr(top, " **  real\n"));
	free(svg);
	free(top);
}

SA_TEST_MAIN(test_folded, test_top, test_svg, test_noise)
