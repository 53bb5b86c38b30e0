// SPDX-License-Identifier: MIT
/*
 * test_svg.c - report/output/svg.c and flame.c: the SVG is well-formed XML
 * (xmllint) whatever bytes names hold, boxes are as wide as their share,
 * narrow frames are merged away, icicle layout, deterministic colours.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "sa_cmocka.h"

#include "output_int.h"
#include "rpt_test.h"

static char *svg_str(const struct rpt_profile *p, const struct rpt_svg_opts *o)
{
	return RPT_TEST_CAPTURE(rpt_svg__write, p, o);
}

/*
 * xmllint --noout on @text: 0 when well-formed. xmllint (libxml2-utils) is
 * installed by make check; its absence fails the test rather than pass it.
 */
static int xmllint(const char *text)
{
	char path[] = "/tmp/sa-test-svg.XXXXXX", cmd[128];
	int fd = mkstemp(path), rc;
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	if (system("command -v xmllint >/dev/null 2>&1")) {
		unlink(path);
		fail_msg("xmllint not installed (libxml2-utils)");
	}
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
	rc = system(cmd);
	unlink(path);
	return rc;
}

/* The width attribute of the box whose tooltip starts with @name. */
static double box(const char *svg, const char *name, char *attr_out)
{
	char pat[128];
	const char *t, *r;
	double w = -1;

	snprintf(pat, sizeof(pat), "<title>%s&#10;", name);
	t = strstr(svg, pat);
	assert_non_null(t);
	r = strstr(t, "width=\"");
	assert_non_null(r);
	sscanf(r, "width=\"%lf\"", &w);
	if (attr_out) {
		r = strstr(t, " y=\"");
		sscanf(r, " y=\"%[0-9]\"", attr_out);
	}
	return w;
}

static const char *split =
	"app;main;work;leaf_a 600\napp;main;work;leaf_b 300\napp;main;leaf_c 100\n";

static void test_widths(void **state)
{
	struct rpt_profile *p = parse_str(split);
	char *svg = svg_str(p, NULL);
	double a = box(svg, "leaf_a", NULL), b = box(svg, "leaf_b", NULL);
	double c = box(svg, "leaf_c", NULL), all = box(svg, "all", NULL);

	(void)state;
	assert_int_equal(xmllint(svg), 0);
	assert_true(all > 1000);
	assert_true(a / all > 0.599 && a / all < 0.601);
	assert_true(b / all > 0.299 && b / all < 0.301);
	assert_true(c / all > 0.099 && c / all < 0.101);
	assert_non_null(strstr(svg, "1000 samples, 0 lost"));
	free(svg);
	rpt_profile__free(p);
}

static void test_hostile_names(void **state)
{
	static const char *names[] = {
		"<script>alert(1)</script>",
		"a & b && c",
		"\"dq\" 'sq' ]]> -->",
		"ctl\x01\x02\x1b\x7f end",
		"bad\xff\xfe utf8 \xc3\x28",
		"overlong \xc0\xaf",
		"surrogate \xed\xa0\x80",
		"cut \xe2\x82",
		"ok \xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5",
		"nonchar \xef\xbf\xbe",
	};
	struct rpt_summary sum = {.host = "<host&\x01>", .samples = 10};
	struct rpt_svg_opts o = {.title = "t<i>t&le\"", .summary = &sum, .min_width = -1};
	struct rpt_profile *p = rpt_profile__new();
	struct rpt_frame f[2];
	char *svg;

	(void)state;
	f[0].name = (uint32_t)rpt_profile__intern(p, "co<mm>\x03", 7);
	f[0].kind = RPT_FRAME_ROOT;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		f[1].name = (uint32_t)rpt_profile__intern(p, names[i], strlen(names[i]));
		f[1].kind = (uint32_t)(i % 4);
		assert_int_equal(rpt_profile__add(p, f, 2, 10 + i), 0);
	}
	svg = svg_str(p, &o);
	assert_int_equal(xmllint(svg), 0);
	assert_null(strstr(svg, "<script>alert"));
	assert_null(strstr(svg, "<host"));
	assert_non_null(strstr(svg, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_non_null(strstr(svg, "a &amp; b &amp;&amp; c"));
	assert_non_null(strstr(svg, "&quot;dq&quot; &#39;sq&#39; ]]&gt; --&gt;"));
	assert_non_null(strstr(svg, "ctl____ end"));
	assert_non_null(strstr(svg, "bad\xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd("));
	assert_non_null(strstr(svg, "ok \xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5"));
	assert_non_null(strstr(svg, "t&lt;i&gt;t&amp;le&quot;"));
	free(svg);
	rpt_profile__free(p);
}

static void test_put_xml_truncates(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	rpt_put_xml(f,
		    "\xc3\xa9<\xff"
		    "abc",
		    3);
	fclose(f);
	assert_string_equal(buf, "\xc3\xa9&lt;\xef\xbf\xbd");
	free(buf);
}

/* 2000 one-sample stacks next to a big one: at 1 px minimum they vanish. */
static void test_min_width(void **state)
{
	struct rpt_profile *p = rpt_profile__new();
	struct rpt_svg_opts o = {.min_width = 1};
	struct rpt_frame f[3];
	char name[32], *svg, *s;
	int boxes = 0;

	(void)state;
	f[0].name = (uint32_t)rpt_profile__intern(p, "app", 3);
	f[1].name = (uint32_t)rpt_profile__intern(p, "big", 3);
	f[0].kind = f[1].kind = f[2].kind = RPT_FRAME_USER;
	assert_int_equal(rpt_profile__add(p, f, 2, 100000), 0);
	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "tiny_%d", i);
		f[1].name = (uint32_t)rpt_profile__intern(p, name, strlen(name));
		f[2].name = (uint32_t)rpt_profile__intern(p, "leaf", 4);
		assert_int_equal(rpt_profile__add(p, f, 3, 1), 0);
	}
	svg = svg_str(p, &o);
	for (s = svg; (s = strstr(s, "</title><rect")); s++)
		boxes++;
	assert_int_equal(boxes, 3); /* all, app, big */
	assert_int_equal(xmllint(svg), 0);
	free(svg);
	o.min_width = 0;
	svg = svg_str(p, &o);
	boxes = 0;
	for (s = svg; (s = strstr(s, "</title><rect")); s++)
		boxes++;
	assert_int_equal(boxes, 3 + 4000);
	free(svg);
	rpt_profile__free(p);
}

static void test_inverted(void **state)
{
	struct rpt_profile *p = parse_str(split);
	struct rpt_svg_opts o = {.inverted = true, .width = 600, .min_width = -1};
	char ya[16], yall[16], *svg;

	(void)state;
	svg = svg_str(p, &o);
	box(svg, "all", yall);
	box(svg, "leaf_a", ya);
	assert_true(atoi(yall) < atoi(ya)); /* icicle: root on top */
	assert_non_null(strstr(svg, "width=\"600\""));
	free(svg);
	o.inverted = false;
	svg = svg_str(p, &o);
	box(svg, "all", yall);
	box(svg, "leaf_a", ya);
	assert_true(atoi(yall) > atoi(ya));
	free(svg);
	rpt_profile__free(p);
}

static void test_colours(void **state)
{
	uint32_t u = rpt_frame_colour("memcpy", RPT_FRAME_USER);
	uint32_t k = rpt_frame_colour("memcpy", RPT_FRAME_KERNEL);
	uint32_t j = rpt_frame_colour("Lfoo;", RPT_FRAME_JIT);
	uint32_t in = rpt_frame_colour("inl", RPT_FRAME_INLINE);

	(void)state;
	assert_int_equal(u, rpt_frame_colour("memcpy", RPT_FRAME_USER));
	assert_int_not_equal(u, k);
	assert_true((j >> 8 & 0xff) > (j >> 16)); /* JIT: green */
	assert_true((in & 0xff) > (in >> 16));	  /* inlined: aqua */
	assert_true((u >> 16) > (u & 0xff));	  /* user: warm */
	assert_int_not_equal(rpt_frame_colour("leaf_a", 0), rpt_frame_colour("leaf_b", 0));
}

/* flamegraph.pl's perf palettes: no kernel colour is ever a user colour */
static void test_palettes_apart(void **state)
{
	char name[32];

	(void)state;
	for (int i = 0; i < 2000; i++) {
		uint32_t k, u, x;

		snprintf(name, sizeof(name), "fn_%d", i);
		k = rpt_frame_colour(name, RPT_FRAME_KERNEL);
		u = rpt_frame_colour(name, RPT_FRAME_USER);
		snprintf(name, sizeof(name), "ns::fn_%d", i);
		x = rpt_frame_colour(name, RPT_FRAME_USER);
		assert_int_equal(k & 0xff, 0);				 /* orange: no blue */
		assert_true((u & 0xff) >= 50);				 /* red */
		assert_true((x & 0xff) >= 50 && (x >> 8 & 0xff) >= 175); /* C++ yellow */
		assert_true((k >> 8 & 0xff) <= 155);
	}
}

/* --short-names: the label is short, title (tooltip, search) stays full */
static void test_short_names(void **state)
{
	struct rpt_profile *p =
		parse_str("app;std::vector<int, std::allocator<int> >::push_back(int const&) 10\n");
	struct rpt_svg_opts o = {.min_width = -1, .short_names = true};
	char *svg = RPT_TEST_CAPTURE(rpt_svg__write, p, &o);
	char buf[64];

	(void)state;
	assert_non_null(strstr(svg,
			       "<desc>std::vector::push_back</desc><title>std::vector&lt;int, "
			       "std::allocator&lt;int&gt; &gt;::push_back(int const&amp;)&#10;"));
	assert_non_null(strstr(svg, ">std::vector::push_back</text>"));
	free(svg);
	o.short_names = false;
	svg = RPT_TEST_CAPTURE(rpt_svg__write, p, &o);
	assert_null(strstr(svg, "<desc>"));
	free(svg);
	rpt_profile__free(p);
	assert_string_equal(rpt_short_name("ns::f<int>(int) const", buf, sizeof(buf)), "ns::f");
	assert_string_equal(rpt_short_name("(anonymous namespace)::g(char*)", buf, sizeof(buf)),
			    "(anonymous namespace)::g");
	assert_string_equal(rpt_short_name("A::operator<<(std::ostream&)", buf, sizeof(buf)),
			    "A::operator<<");
	assert_string_equal(rpt_short_name("A::operator()() const &", buf, sizeof(buf)),
			    "A::operator()");
	assert_string_equal(rpt_short_name("f(int (*)(int)) [clone .cold]", buf, sizeof(buf)),
			    "f [clone .cold]");
	assert_string_equal(rpt_short_name("main", buf, sizeof(buf)), "main");
}

/*
 * rpt_fmt_fixed() writes printf's bytes: random widths and shares, every
 * value of 0..2000 in thousandths and halves of the last decimal (ties
 * printf rounds to even: 0.125 is "0.12" with two decimals), large values.
 */
static void test_fmt_fixed(void **state)
{
	char want[64], got[64];
	unsigned int seed = 1;
	long checked = 0;

	(void)state;
	for (int prec = 0; prec <= 3; prec++) {
		for (long i = 0; i < 400000; i++) {
			double v;

			if (i < 4000)
				v = i / 2000.0 * (prec ? 1 : 1000); /* halves of the last digit */
			else if (i < 8000)
				v = (i - 4000) * 0.0005;
			else if (i < 9000)
				v = (double)(i - 8000) * 1e9 + 0.5;
			else
				v = (double)rand_r(&seed) / RAND_MAX * 1210.0;
			snprintf(want, sizeof(want), "%.*f", prec, v);
			assert_int_equal(rpt_fmt_fixed(got, v, prec), (int)strlen(want));
			assert_string_equal(got, want);
			checked++;
		}
	}
	snprintf(want, sizeof(want), "%.2f", 0.125);
	assert_string_equal(want, "0.12");
	rpt_fmt_fixed(got, 0.125, 2);
	assert_string_equal(got, "0.12");
	rpt_fmt_fixed(got, -0.0, 3);
	assert_string_equal(got, "-0.000");
	print_message("# %ld values formatted as printf does\n", checked);
}

SA_TEST_MAIN(test_widths, test_hostile_names, test_put_xml_truncates, test_min_width, test_inverted, test_colours, test_palettes_apart, test_short_names, test_fmt_fixed)
