/* SPDX-License-Identifier: MIT */
/*
 * output.h - the writers that turn an aggregated profile (profile.h) into
 * what sa-report prints: folded stacks, the self/total table, SVG flame
 * graphs and differences, plus the profile-level filters (--focus,
 * --ignore, --min-percent) and the folded-text parser used by --diff.
 */
#ifndef SA_REPORT_OUTPUT_H
#define SA_REPORT_OUTPUT_H

#include "profile.h"

/* Header lines shown above a table and in SVG subtitles. */
struct rpt_summary {
	const char *host; /* NULL if unknown or several */
	uint64_t duration_ns;
	uint64_t samples;	 /* kept samples in the profile */
	uint64_t total;		 /* when filters left @samples: the files' kept samples, else 0 */
	uint64_t lost;		 /* lost samples, all causes */
	const char *lost_detail; /* e.g. "lost_ustack 3, lost_ringbuf 1", or NULL */
	uint32_t value;		 /* enum rpt_value of @samples and @total */
};

/* ---- units (units.c) ---------------------------------------------------- */

/**
 * rpt_value__put() - @v counts of enum rpt_value @value, readable: "1234
 * samples", or a time ("12.3 ms", "1.234 s", "850 us") for microseconds.
 */
void rpt_value__put(FILE *out, uint32_t value, double v);

/** rpt_value__title() - the default flame graph title for @value; static. */
const char *rpt_value__title(uint32_t value);

/* ---- folded ------------------------------------------------------------- */

struct rpt_folded_opts {
	bool annotate; /* suffix _[k] _[j] _[i] by frame kind, as stackcollapse-perf */
};

/**
 * rpt_folded__write() - one "root;...;leaf count" line per stack, in the
 * profile's current order (call rpt_profile__sort() first for determinism).
 * ';', newlines and control characters in names are replaced by '_' ... so
 * every line parses. @return 0 or a negative errno of the write.
 */
int rpt_folded__write(const struct rpt_profile *p, FILE *out, const struct rpt_folded_opts *o);

/**
 * rpt_folded__parse() - read folded text ("a;b;c 12" per line; the two-column
 * "stack before after" form is refused) into a new profile. Frames suffixed
 * _[k] _[j] _[i] get that kind. @errbuf gets "line N: reason" on failure.
 * @return a profile the caller frees with rpt_profile__free(), or NULL with
 * errno (EBADMSG for malformed text, ENOMEM).
 */
struct rpt_profile *rpt_folded__parse(FILE *in, char *errbuf, size_t errbuf_sz);

/* ---- filters ------------------------------------------------------------ */

/**
 * rpt_profile__filter() - keep only stacks through a frame matching @focus
 * (POSIX extended regex, NULL = all) and drop stacks through a frame
 * matching @ignore (NULL = none); then drop stacks whose share of the
 * remaining total is below @min_percent (0 = keep all). Rebuilds p in place.
 * @return 0, -EINVAL for a bad regex (message in errbuf), or -ENOMEM.
 */
int rpt_profile__filter(struct rpt_profile *p, const char *focus, const char *ignore,
			double min_percent, char *errbuf, size_t errbuf_sz);

/* ---- top ---------------------------------------------------------------- */

struct rpt_top_opts {
	bool sort_total;		   /* default: by self */
	uint32_t rows;			   /* 0 = all */
	const struct rpt_summary *summary; /* printed as header lines, or NULL */
};

/**
 * rpt_top__write() - per function: self samples and %, total samples and %
 * (a function counts once per stack, so recursion never exceeds 100%).
 * @return 0 or a negative errno.
 */
int rpt_top__write(const struct rpt_profile *p, FILE *out, const struct rpt_top_opts *o);

/* ---- svg ---------------------------------------------------------------- */

struct rpt_svg_opts {
	const char *title;    /* NULL = "CPU flame graph" */
	const char *subtitle; /* NULL = built from summary */
	const struct rpt_summary *summary;
	uint32_t width;	  /* px, 0 = 1200 */
	double min_width; /* px, frames narrower are merged away; < 0 = default */
	bool inverted;	  /* icicle */
	bool short_names; /* labels without C++ template and parameter lists */
};

/** rpt_svg__write() - an interactive, self-contained flame graph. @return 0 or -errno. */
int rpt_svg__write(const struct rpt_profile *p, FILE *out, const struct rpt_svg_opts *o);

/* ---- diff --------------------------------------------------------------- */

struct rpt_diff_opts {
	bool no_normalize;		/* compare raw counts */
	bool negate;			/* swap the roles of before and after */
	const struct rpt_svg_opts *svg; /* for rpt_diff__svg() */
	const struct rpt_top_opts *top; /* for rpt_diff__top() */
};

/** rpt_diff__folded() - "stack before after" per line (FlameGraph difffolded form). */
int rpt_diff__folded(const struct rpt_profile *before, const struct rpt_profile *after, FILE *out,
		     const struct rpt_diff_opts *o);
/** rpt_diff__svg() - differential flame graph: widths from AFTER, red grew, blue shrank. */
int rpt_diff__svg(const struct rpt_profile *before, const struct rpt_profile *after, FILE *out,
		  const struct rpt_diff_opts *o);
/** rpt_diff__top() - functions ranked by change in self % and total %. */
int rpt_diff__top(const struct rpt_profile *before, const struct rpt_profile *after, FILE *out,
		  const struct rpt_diff_opts *o);

#endif /* SA_REPORT_OUTPUT_H */
