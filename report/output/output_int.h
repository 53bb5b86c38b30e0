/* SPDX-License-Identifier: MIT */
/*
 * output_int.h - internals shared by the writers of output.h and nothing
 * else: the per-function table (top.c, diff.c), the flame tree and its SVG
 * drawing (flame.c, svg.c, diff.c), XML escaping and colours (svg.c).
 */
#ifndef SA_REPORT_OUTPUT_INT_H
#define SA_REPORT_OUTPUT_INT_H

#include "output.h"

/* Put @s with ';', CR, LF and control bytes replaced by '_' and bytes that
 * are not well-formed UTF-8 by U+FFFD, so every line parses (folded.c). */
void rpt_put_folded_name(FILE *out, const char *s);

/* U+FFFD in UTF-8: what a byte that is not well-formed UTF-8 becomes. */
#define RPT_UTF8_REPLACEMENT "\xef\xbf\xbd"

/* Bytes of the well-formed UTF-8 sequence at @s (1 for ASCII, NUL too), or
 * 0 when it is not one (stray or missing continuation, overlong, surrogate,
 * past U+10FFFF) (folded.c). */
size_t rpt_utf8_len(const char *s);

/* True for a code point that prints as nothing or reorders the text around
 * it (C1 controls, bidi marks and overrides, zero-width characters): tables
 * and the SVG show it as \uXXXX, so a name cannot hide or disguise itself;
 * folded, pprof and speedscope keep it raw for the programs that read them. */
bool rpt_cp_hidden(uint32_t cp);

/* ---- per-function table (top.c) ---------------------------------------- */

/* One function: self and total weight on up to two sides (diff: 0 before, 1 after). */
struct rpt_func {
	uint32_t name; /* pool offset in the profile the table was built from */
	uint32_t kind;
	double self[2], total[2];
	size_t stamp; /* last stack counted in total, + 1 */
};

struct rpt_functab {
	struct rpt_func *v;
	size_t n, cap;
	uint32_t *index; /* open addressing, row + 1 */
	size_t index_cap;
};

/**
 * rpt_functab__build() - aggregate @p per function name. Side 0 gets
 * @w0[i] (or the stack count when @w0 is NULL) for stack i, side 1 gets
 * @w1[i] (all zero when NULL). A function counts once per stack in total.
 * @return 0 or -ENOMEM; release with rpt_functab__release() either way.
 */
int rpt_functab__build(struct rpt_functab *t, const struct rpt_profile *p, const double *w0,
		       const double *w1);
void rpt_functab__release(struct rpt_functab *t);

/* Put @s with control bytes replaced by '_', hidden code points
 * (rpt_cp_hidden()) by \uXXXX and bytes that are not well-formed UTF-8 by
 * U+FFFD, for tables. */
void rpt_put_plain(FILE *out, const char *s);

/* ---- sampling noise (noise.c) ------------------------------------------- */

/* The chance that a diff of two recordings of one workload marks any change
 * as beyond noise (family-wise, split over the tests by Bonferroni). */
#define RPT_NOISE_FAMILY 0.001

/**
 * rpt_noise__p() - two-sided p-value of a change from @a of @A samples
 * (BEFORE) to @b of @B (AFTER): Fisher's exact test of the shares a/A and
 * b/B, or with @raw the exact binomial test of the counts (a ~ Bin(a + b,
 * 1/2): two Poisson counts of equal exposure). Counts are rounded. Where the
 * score test's |z| is under 2 the normal tail is returned (p > 0.045: never
 * beyond noise at any threshold rpt_noise__threshold() gives for 0.1%).
 * @return the p-value in [0, 1]; 1 for no change or no samples. Pure.
 */
double rpt_noise__p(double a, double A, double b, double B, bool raw);

/* The per-test threshold: @family / @tests (Bonferroni; @family for 0 tests). */
double rpt_noise__threshold(double family, size_t tests);

/* ---- flame tree (flame.c) ----------------------------------------------- */

/* A node of the merged call tree, in pre-order; node 0 is "all". */
struct rpt_flame_node {
	uint32_t name, kind;
	uint32_t depth;
	double v[2]; /* width weight and (diff) the other side's weight */
	double x;    /* start, in weight units, from the left */
};

struct rpt_flame {
	struct rpt_flame_node *n;
	size_t len, cap;
	uint32_t max_depth;
};

/**
 * rpt_flame__build() - the call tree of @p, siblings in name order, widths
 * from @w0 (stack counts when NULL), second weights from @w1 (or zero).
 * @return 0 or -ENOMEM; release with rpt_flame__release() either way.
 */
int rpt_flame__build(struct rpt_flame *f, const struct rpt_profile *p, const double *w0,
		     const double *w1);
void rpt_flame__release(struct rpt_flame *f);

/* ---- SVG drawing (svg.c) ------------------------------------------------ */

/* How svg.c draws a flame tree; diff.c supplies the colours and tooltips. */
struct rpt_svg_style {
	const char *default_title;
	/* fill for node i as 0xRRGGBB; NULL = by kind, hashed from the name */
	uint32_t (*fill)(const struct rpt_flame *f, size_t i, void *ctx);
	/* tooltip after the name's line; NULL = "N samples (P%)" */
	void (*detail)(FILE *out, const struct rpt_flame *f, size_t i, void *ctx);
	void *ctx;
	const char *legend; /* a line under the subtitle, or NULL for none */
};

/* How many frames of @f other than the root rpt_svg__draw() draws with @o
 * (those at least the minimum width wide); 0 when @o's width is invalid. */
size_t rpt_svg__count_drawn(const struct rpt_flame *f, const struct rpt_svg_opts *o);

/** rpt_svg__draw() - write @f (built from @p) as an SVG. @return 0 or -errno. */
int rpt_svg__draw(const struct rpt_profile *p, const struct rpt_flame *f, FILE *out,
		  const struct rpt_svg_opts *o, const struct rpt_svg_style *st);

/* Put @s XML-escaped: invalid UTF-8 becomes U+FFFD, control bytes '_'.
 * At most @max_cp code points (SIZE_MAX = all). */
void rpt_put_xml(FILE *out, const char *s, size_t max_cp);

/** rpt_fmt_fixed() - "%.*f" of @v, 0 to 3 decimals, into @buf[64]: printf's bytes, faster. */
int rpt_fmt_fixed(char *buf, double v, int prec);

/* 0xRRGGBB for a frame of @kind named @name; the same in every file. */
uint32_t rpt_frame_colour(const char *name, uint32_t kind);

/*
 * rpt_short_name() - @name without template arguments and parameter lists
 * ("ns::f<int>(int) const" -> "ns::f"); operator names and "(anonymous
 * namespace)" kept (shortname.c).
 * @return @buf (capacity @cap, truncated to fit) holding the short name, or
 * @name itself when there is nothing to drop. Borrowed from the caller.
 */
const char *rpt_short_name(const char *name, char *buf, size_t cap);

/* The embedded script (svg_script.c). */
extern const char rpt_svg_script[];

#endif /* SA_REPORT_OUTPUT_INT_H */
