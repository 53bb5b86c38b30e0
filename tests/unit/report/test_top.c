// SPDX-License-Identifier: MIT
/*
 * test_top.c - report/output/top.c: self and total per function, a shared helper
 * called from two parents, a recursive chain that stays at 100%, sort
 * order, --rows, the summary header and the per-process line (the root
 * frame is no row), byte-exact.
 */
#include <errno.h>
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

static char *top_str(const struct rpt_profile *p, const struct rpt_top_opts *o)
{
	return RPT_TEST_CAPTURE(rpt_top__write, p, o);
}

/* The row of @fn: self, self%, total, total%. */
static void row(const char *out, const char *fn, double v[4])
{
	char pat[128];
	const char *line;

	snprintf(pat, sizeof(pat), "  %s\n", fn);
	line = strstr(out, pat);
	assert_non_null(line);
	while (line > out && line[-1] != '\n')
		line--;
	assert_int_equal(sscanf(line, "%lf %lf%% %lf %lf%%", &v[0], &v[1], &v[2], &v[3]), 4);
}

static void test_shared_helper(void **state)
{
	struct rpt_profile *p = parse_str("app;main;b;helper 30\n"
					  "app;main;b;helper;memcpy 25\n"
					  "app;main;c;helper 20\n"
					  "app;main;b 10\n"
					  "app;main;c 15\n");
	double h[4], m[4], b[4];
	char *out = top_str(p, NULL);

	(void)state;
	row(out, "helper", h);
	row(out, "memcpy", m);
	row(out, "main", b);
	/* total = its two call sites (b: 30 + 25, c: 20); self below total */
	assert_true(h[0] == 50 && h[2] == 75);
	assert_true(h[0] < h[2]);
	assert_true(h[1] == 50 && h[3] == 75);
	assert_true(m[0] == 25 && m[2] == 25);
	assert_true(b[0] == 0 && b[2] == 100 && b[3] == 100);
	free(out);
	rpt_profile__free(p);
}

static void test_recursion(void **state)
{
	struct rpt_profile *p = parse_str("app;main;fib;fib;fib;fib 70\n"
					  "app;main;fib;fib;work;fib 20\n"
					  "app;main;other 10\n");
	double f[4];
	char *out = top_str(p, NULL);

	(void)state;
	row(out, "fib", f);
	assert_true(f[0] == 90 && f[2] == 90);
	assert_true(f[3] <= 100);
	free(out);
	rpt_profile__free(p);
}

static void test_exact(void **state)
{
	struct rpt_summary sum = {.host = "web\x01"
					  "01",
				  .duration_ns = 2500000000ULL,
				  .samples = 10,
				  .lost = 3,
				  .lost_detail = "lost_ustack 3"};
	struct rpt_top_opts o = {.summary = &sum};
	struct rpt_profile *p = parse_str("app;main;a 6\napp;main;b 4\n");
	char *out = top_str(p, &o);

	(void)state;
	assert_string_equal(out, "# host: web_01\n"
				 "# duration: 2.50 s\n"
				 "# samples: 10, lost: 3 (lost_ustack 3)\n"
				 "# processes: app 100.00%\n"
				 "        SELF   SELF%        TOTAL  TOTAL%  FUNCTION\n"
				 "           6  60.00%            6  60.00%  a\n"
				 "           4  40.00%            4  40.00%  b\n"
				 "           0   0.00%           10 100.00%  main\n");
	free(out);
	o.summary = NULL;
	o.sort_total = true;
	o.rows = 2;
	out = top_str(p, &o);
	assert_string_equal(out, "# processes: app 100.00%\n"
				 "        SELF   SELF%        TOTAL  TOTAL%  FUNCTION\n"
				 "           0   0.00%           10 100.00%  main\n"
				 "           6  60.00%            6  60.00%  a\n");
	free(out);
	rpt_profile__free(p);
}

/* The comm at the root is no function: a header line, the largest first, at most 5. */
static void test_roots(void **state)
{
	struct rpt_profile *p = parse_str("g;m 1\nf;m 2\ne;m 3\nd;m 4\nc;m 5\nb;m 6\na;m 79\n");
	char *out = top_str(p, NULL);

	(void)state;
	assert_string_equal(out, "# processes: a 79.00%, b 6.00%, c 5.00%, d 4.00%, e 3.00%, "
				 "2 more 3.00%\n"
				 "        SELF   SELF%        TOTAL  TOTAL%  FUNCTION\n"
				 "         100 100.00%          100 100.00%  m\n");
	free(out);
	rpt_profile__free(p);
}

static void test_filter(void **state)
{
	const char *text = "app;main;a;x 50\napp;main;b;y 30\napp;main;c 15\napp;main;d 5\n";
	struct rpt_profile *p = parse_str(text);
	char err[128];

	(void)state;
	assert_int_equal(rpt_profile__filter(p, "^(a|b)$", NULL, 0, err, sizeof(err)), 0);
	assert_int_equal(p->total, 80);
	assert_int_equal(rpt_profile__filter(p, NULL, "^y$", 0, err, sizeof(err)), 0);
	assert_int_equal(p->total, 50);
	assert_int_equal(p->nstacks, 1);
	rpt_profile__free(p);
	p = parse_str(text);
	assert_int_equal(rpt_profile__filter(p, NULL, NULL, 10, err, sizeof(err)), 0);
	assert_int_equal(p->total, 95);
	assert_int_equal(rpt_profile__filter(p, "(", NULL, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--focus"));
	assert_int_equal(p->total, 95);
	rpt_profile__free(p);
}

/* Filtering rebuilds the profile; the frames keep their binaries. */
static void test_filter_keeps_modules(void **state)
{
	struct rpt_profile *p = rpt_profile__new();
	int64_t mod = rpt_profile__add_module(p, "/usr/bin/app", "abcd");
	struct rpt_frame f[2] = {{.kind = RPT_FRAME_ROOT}, {.kind = RPT_FRAME_USER}};
	const struct rpt_frame *g;
	char err[64];

	(void)state;
	assert_true(mod > 0);
	f[0].name = (uint32_t)rpt_profile__intern(p, "app", 3);
	f[1].name = (uint32_t)rpt_profile__intern(p, "main", 4);
	f[1].module = (uint32_t)mod;
	assert_int_equal(rpt_profile__add(p, f, 2, 5), 0);
	f[1].name = (uint32_t)rpt_profile__intern(p, "other", 5);
	assert_int_equal(rpt_profile__add(p, f, 2, 5), 0);
	assert_int_equal(rpt_profile__filter(p, "^main$", NULL, 0, err, sizeof(err)), 0);
	assert_int_equal(p->nstacks, 1);
	assert_int_equal(p->nmodules, 1);
	g = rpt_profile__stack_frames(p, &p->stacks[0]);
	assert_string_equal(rpt_profile__name(p, g[1].module), "/usr/bin/app");
	assert_string_equal(rpt_profile__name(p, rpt_profile__module(p, g[1].module)->build_id),
			    "abcd");
	rpt_profile__free(p);
}

SA_TEST_MAIN(test_shared_helper, test_recursion, test_exact, test_roots, test_filter, test_filter_keeps_modules)
