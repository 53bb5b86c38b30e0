// SPDX-License-Identifier: MIT
/*
 * diff.c - comparing two profiles (--diff): the two-column folded form
 * FlameGraph's differential mode reads, the differential flame graph (red
 * grew, blue shrank) and the self/total table ranked by change.
 *
 * Normalization (the default) scales BEFORE's counts by AFTER's total over
 * BEFORE's total, as FlameGraph's difffolded.pl -n does, so both columns
 * describe the same number of samples and a frame's change is its change in
 * share. --no-normalize compares raw counts. The SVG colours, and --top
 * marks, only changes beyond sampling noise (noise.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output_int.h"

/* Both profiles' stacks in one profile, with each side's weight per stack. */
struct diff_union {
	struct rpt_profile *u;
	double *w[2];	 /* 0 before (scaled when normalizing), 1 after */
	double total[2]; /* raw totals */
	bool normalized;
};

/* Add @p's stacks to @d->u by name (kinds dropped: the two sides may come
 * from a recording and from other tools' folded text); weights into @w. */
static int add_side(struct diff_union *d, const struct rpt_profile *p, double *w)
{
	struct rpt_frame *buf = NULL;
	size_t cap = 0;
	int err = 0;

	for (size_t i = 0; i < p->nstacks && !err; i++) {
		const struct rpt_stack *s = &p->stacks[i];
		const struct rpt_frame *f = rpt_profile__stack_frames(p, s);
		int64_t idx;

		if (s->nframes > cap) {
			void *nb = realloc(buf, s->nframes * 2 * sizeof(*buf));

			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap = s->nframes * 2;
		}
		for (uint32_t j = 0; j < s->nframes && !err; j++) {
			const char *name = rpt_profile__name(p, f[j].name);
			int64_t off = rpt_profile__intern(d->u, name, strlen(name));

			err = off < 0 ? (int)off : 0;
			buf[j].name = (uint32_t)off;
			buf[j].kind = RPT_FRAME_USER;
		}
		idx = err ? 0 : rpt_profile__add_index(d->u, buf, s->nframes, 0);
		if (idx < 0)
			err = (int)idx;
		else if (w && !err)
			w[idx] += (double)s->count;
	}
	free(buf);
	return err;
}

static void union_release(struct diff_union *d)
{
	rpt_profile__free(d->u);
	free(d->w[0]);
	free(d->w[1]);
}

/* Two passes: collect and sort the union first, so the weights are filled
 * against the final (sorted) stack indexes. */
static int union_build(struct diff_union *d, const struct rpt_profile *before,
		       const struct rpt_profile *after, const struct rpt_diff_opts *o)
{
	int err;

	memset(d, 0, sizeof(*d));
	d->u = rpt_profile__new();
	if (!d->u)
		return -ENOMEM;
	err = add_side(d, before, NULL);
	if (!err)
		err = add_side(d, after, NULL);
	if (err)
		return err;
	rpt_profile__sort(d->u);
	d->w[0] = calloc(d->u->nstacks + 1, sizeof(double));
	d->w[1] = calloc(d->u->nstacks + 1, sizeof(double));
	if (!d->w[0] || !d->w[1])
		return -ENOMEM;
	err = add_side(d, before, d->w[0]);
	if (!err)
		err = add_side(d, after, d->w[1]);
	if (err)
		return err;
	d->total[0] = (double)before->total;
	d->total[1] = (double)after->total;
	d->normalized = !(o && o->no_normalize) && d->total[0] > 0 && d->total[1] > 0;
	if (d->normalized)
		for (size_t i = 0; i < d->u->nstacks; i++)
			d->w[0][i] *= d->total[1] / d->total[0];
	return 0;
}

/* Normalized BEFORE counts are rounded to the nearest integer. */
int rpt_diff__folded(const struct rpt_profile *before, const struct rpt_profile *after, FILE *out,
		     const struct rpt_diff_opts *o)
{
	struct diff_union d;
	int err = union_build(&d, before, after, o);

	for (size_t i = 0; !err && i < d.u->nstacks; i++) {
		const struct rpt_stack *s = &d.u->stacks[i];
		const struct rpt_frame *f = rpt_profile__stack_frames(d.u, s);

		for (uint32_t j = 0; j < s->nframes; j++) {
			if (j)
				putc(';', out);
			rpt_put_folded_name(out, rpt_profile__name(d.u, f[j].name));
		}
		fprintf(out, " %.0f %.0f\n", round(d.w[0][i]), d.w[1][i]);
	}
	if (!err && (fflush(out) || ferror(out)))
		err = errno ? -errno : -EIO;
	union_release(&d);
	return err;
}

/* ---- differential flame graph ------------------------------------------- */

struct diff_svg_ctx {
	const struct diff_union *d;
	bool negate;	  /* widths (v[0]) are BEFORE, v[1] AFTER */
	bool tested;	  /* counts are samples: colour only changes beyond noise */
	double max_delta; /* largest |after - before| of any frame but the root */
	double thresh;	  /* per-frame p below which a change is beyond noise */
	double *p;	  /* per node: p-value, NAN until computed */
};

/* What the counts are: "samples", or "us" (--off-cpu, --wall). */
static const char *unit_name(const struct rpt_profile *p)
{
	return rpt_value__is_time(p->meta.value) ? "us" : "samples";
}

static void node_sides(const struct diff_svg_ctx *c, const struct rpt_flame_node *n, double *b,
		       double *a)
{
	*b = c->negate ? n->v[0] : n->v[1];
	*a = c->negate ? n->v[1] : n->v[0];
}

/* BEFORE's raw count from a (possibly normalized) weight. */
static double raw_before(const struct diff_union *d, double w)
{
	return d->normalized ? w * d->total[0] / d->total[1] : w;
}

/* Node @i's p-value (rpt_noise__p()), computed once. */
static double node_p(const struct diff_svg_ctx *c, const struct rpt_flame *f, size_t i)
{
	const struct diff_union *d = c->d;
	double b, a;

	if (isnan(c->p[i])) {
		node_sides(c, &f->n[i], &b, &a);
		c->p[i] =
			rpt_noise__p(raw_before(d, b), d->total[0], a, d->total[1], !d->normalized);
	}
	return c->p[i];
}

/* Red for growth, blue for shrinkage, deeper for a larger change relative
 * to the largest one in the graph; grey for a change within sampling noise
 * (or none), so only what is real takes a colour. */
static uint32_t diff_fill(const struct rpt_flame *f, size_t i, void *ctx)
{
	const struct diff_svg_ctx *c = ctx;
	double b, a, r;
	uint32_t k;

	node_sides(c, &f->n[i], &b, &a);
	if (c->tested && (i == 0 || node_p(c, f, i) >= c->thresh))
		return 0xd8d8d8;
	if (fabs(a - b) < 1e-9 || c->max_delta <= 0)
		return 0xfafafa;
	r = fabs(a - b) / c->max_delta;
	k = (uint32_t)(30 + 200 * (r > 1 ? 1 : r));
	return a > b ? (0xffu << 16 | (250 - k) << 8 | (250 - k))
		     : ((250 - k) << 16 | (250 - k) << 8 | 0xffu);
}

static void diff_detail(FILE *out, const struct rpt_flame *f, size_t i, void *ctx)
{
	const struct diff_svg_ctx *c = ctx;
	const struct diff_union *d = c->d;
	double b, a, raw_b, pb, pa, pv;

	node_sides(c, &f->n[i], &b, &a);
	raw_b = raw_before(d, b);
	pb = d->total[0] > 0 ? 100 * raw_b / d->total[0] : 0;
	pa = d->total[1] > 0 ? 100 * a / d->total[1] : 0;
	fprintf(out, "before %.0f (%.2f%%), after %.0f (%.2f%%), delta %+.0f%s (%+.2f pp)", raw_b,
		pb, a, pa, a - b, d->normalized ? " normalized" : "", pa - pb);
	if (!c->tested || i == 0)
		return;
	pv = node_p(c, f, i);
	if (pv > 0)
		fprintf(out, ", p %.2g", pv);
	else
		fputs(", p < 1e-300", out);
	fputs(pv < c->thresh ? ", beyond noise" : ", within noise", out);
}

/* The legend line: what a colour means and the chance of a false one. */
static void svg_legend(char *buf, size_t cap, const struct diff_svg_ctx *c, size_t frames)
{
	if (!c->tested) {
		snprintf(buf, cap,
			 "values are times, not sample counts: every change is coloured, "
			 "none tested against sampling noise");
		return;
	}
	snprintf(buf, cap,
		 "red/blue: change beyond sampling noise (%s, two-sided, p < %.2g per frame); "
		 "grey: within noise. Chance of any false colour: %g%% (Bonferroni over %zu "
		 "frames)",
		 c->d->normalized ? "Fisher's exact test of the shares"
				  : "exact binomial test of the counts",
		 c->thresh, 100 * RPT_NOISE_FAMILY, frames);
}

static void svg_subtitle(char *buf, size_t cap, const struct diff_union *d,
			 const struct rpt_profile *after, bool negate)
{
	snprintf(buf, cap,
		 "before %.0f %s, after %.0f %s, %s; widths from %s; red grew, blue shrank",
		 d->total[0], unit_name(after), d->total[1], unit_name(after),
		 d->normalized ? "before scaled to after's total" : "raw counts",
		 negate ? "BEFORE" : "AFTER");
}

int rpt_diff__svg(const struct rpt_profile *before, const struct rpt_profile *after, FILE *out,
		  const struct rpt_diff_opts *o)
{
	struct rpt_svg_opts so = {.min_width = -1};
	struct diff_svg_ctx c = {.negate = o && o->negate,
				 .tested = !rpt_value__is_time(after->meta.value)};
	struct rpt_svg_style st = {.default_title = "Differential flame graph",
				   .fill = diff_fill,
				   .detail = diff_detail,
				   .ctx = &c};
	struct rpt_flame f = {0};
	struct diff_union d;
	char sub[256], legend[320];
	size_t frames;
	int err;

	err = union_build(&d, before, after, o);
	c.d = &d;
	if (!err)
		err = rpt_flame__build(&f, d.u, d.w[c.negate ? 0 : 1], d.w[c.negate ? 1 : 0]);
	if (!err && !(c.p = malloc((f.len + 1) * sizeof(*c.p))))
		err = -ENOMEM;
	if (err)
		goto cleanup;
	for (size_t i = 0; i < f.len; i++)
		c.p[i] = NAN;
	for (size_t i = 1; i < f.len; i++)
		c.max_delta = fmax(c.max_delta, fabs(f.n[i].v[0] - f.n[i].v[1]));
	if (o && o->svg)
		so = *o->svg;
	if (!so.subtitle) {
		svg_subtitle(sub, sizeof(sub), &d, after, c.negate);
		so.subtitle = sub;
	}
	frames = rpt_svg__count_drawn(&f, &so);
	c.thresh = rpt_noise__threshold(RPT_NOISE_FAMILY, frames);
	svg_legend(legend, sizeof(legend), &c, frames);
	st.legend = legend;
	err = rpt_svg__draw(d.u, &f, out, &so, &st);
cleanup:
	free(c.p);
	rpt_flame__release(&f);
	union_release(&d);
	return err;
}

/* ---- --diff --top -------------------------------------------------------- */

struct diff_top_ctx {
	const struct rpt_profile *u;
	const struct diff_union *d;
	double scale[2]; /* multiply a weight by this to get what the table shows */
	double thresh;	 /* per-test p below which a change is beyond noise */
	bool by_total, tested;
};

static double change(const struct diff_top_ctx *c, const double v[2])
{
	return v[1] * c->scale[1] - v[0] * c->scale[0];
}

static int cmp_change(const void *a, const void *b, void *arg)
{
	const struct diff_top_ctx *c = arg;
	const struct rpt_func *x = a, *y = b;
	double dx = fabs(change(c, c->by_total ? x->total : x->self));
	double dy = fabs(change(c, c->by_total ? y->total : y->self));

	if (dx != dy)
		return dx < dy ? 1 : -1;
	dx = fabs(change(c, c->by_total ? x->self : x->total));
	dy = fabs(change(c, c->by_total ? y->self : y->total));
	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(rpt_profile__name(c->u, x->name), rpt_profile__name(c->u, y->name));
}

/* '*' beyond noise, '.' within, '-' untested (times) for weights @v. */
static char noise_mark(const struct diff_top_ctx *c, const double v[2])
{
	const struct diff_union *d = c->d;

	if (!c->tested)
		return '-';
	return rpt_noise__p(raw_before(d, v[0]), d->total[0], v[1], d->total[1], !d->normalized) <
			       c->thresh
		       ? '*'
		       : '.';
}

static void put_diff_row(FILE *out, const struct diff_top_ctx *c, const struct rpt_func *r)
{
	const double *v[2] = {r->self, r->total};

	for (int k = 0; k < 2; k++)
		fprintf(out, "%9.2f %9.2f %+9.2f ", v[k][0] * c->scale[0], v[k][1] * c->scale[1],
			change(c, v[k]));
	fprintf(out, " %c%c  ", noise_mark(c, r->self), noise_mark(c, r->total));
	rpt_put_plain(out, rpt_profile__name(c->u, r->name));
	putc('\n', out);
}

/* Tests the table could mark: every function's self and total with samples
 * on either side, shown or not (rows are ranked by change, so testing only
 * the rows shown would pick the largest noise first). */
static size_t count_tests(const struct rpt_functab *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++)
		n += (t->v[i].self[0] + t->v[i].self[1] > 0) +
		     (t->v[i].total[0] + t->v[i].total[1] > 0);
	return n;
}

static void put_top_head(FILE *out, const struct diff_top_ctx *c, const struct rpt_profile *after,
			 bool raw, size_t tests)
{
	const struct diff_union *d = c->d;
	bool time = rpt_value__is_time(after->meta.value);

	fprintf(out, "# before: %.0f %s, after: %.0f %s; %s\n", d->total[0], unit_name(after),
		d->total[1], unit_name(after),
		raw    ? (time ? "raw microseconds" : "raw sample counts")
		: time ? "% of each profile's time"
		       : "% of each profile's samples");
	if (c->tested)
		fprintf(out,
			"# sig (self, total): * beyond sampling noise, . within (%s, two-sided, "
			"p < %.2g each; chance of any false *: %g%%, Bonferroni over %zu tests)\n",
			d->normalized ? "Fisher's exact test of the shares"
				      : "exact binomial test of the counts",
			c->thresh, 100 * RPT_NOISE_FAMILY, tests);
	else
		fputs("# sig: - (values are times, not sample counts: not tested against "
		      "sampling noise)\n",
		      out);
	fprintf(out, "%29s %29s\n%9s %9s %9s %9s %9s %9s %3s  %s\n", "------------ self",
		"----------- total", "before", "after", "delta", "before", "after", "delta", "sig",
		"function");
}

/*
 * Shares are each side's own: a function's before % is of BEFORE's total,
 * its after % of AFTER's (normalization changes nothing here). With
 * --no-normalize the columns are raw sample counts instead.
 */
int rpt_diff__top(const struct rpt_profile *before, const struct rpt_profile *after, FILE *out,
		  const struct rpt_diff_opts *o)
{
	const struct rpt_top_opts *to = o ? o->top : NULL;
	struct diff_top_ctx c = {.by_total = to && to->sort_total,
				 .tested = !rpt_value__is_time(after->meta.value)};
	struct rpt_functab t = {0};
	struct diff_union d;
	bool raw = o && o->no_normalize;
	size_t rows, tests;
	int err;

	err = union_build(&d, before, after, o);
	if (!err)
		err = rpt_functab__build(&t, d.u, d.w[0], d.w[1]);
	if (err)
		goto cleanup;
	c.u = d.u;
	c.d = &d;
	/* before weights were scaled to AFTER's total when normalized */
	c.scale[0] = raw ? 1 : 100 / (d.normalized ? d.total[1] : fmax(d.total[0], 1));
	c.scale[1] = raw ? 1 : 100 / fmax(d.total[1], 1);
	tests = count_tests(&t);
	c.thresh = rpt_noise__threshold(RPT_NOISE_FAMILY, tests);
	if (t.n) /* t.v is NULL when empty: qsort_r's pointer must not be */
		qsort_r(t.v, t.n, sizeof(*t.v), cmp_change, &c);
	rows = to && to->rows && to->rows < t.n ? to->rows : t.n;
	put_top_head(out, &c, after, raw, tests);
	for (size_t i = 0; i < rows; i++)
		put_diff_row(out, &c, &t.v[i]);
	if (fflush(out) || ferror(out))
		err = errno ? -errno : -EIO;
cleanup:
	rpt_functab__release(&t);
	union_release(&d);
	return err;
}
