// SPDX-License-Identifier: MIT
/*
 * top.c - the self/total table (--top): per function, the samples where it
 * is the leaf (self) and the samples whose stack holds it at least once
 * (total, so recursion never counts a sample twice). The per-function table
 * is shared with diff.c's --diff --top.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "output_int.h"

static int functab_grow_index(struct rpt_functab *t)
{
	size_t ncap = t->index_cap ? t->index_cap * 2 : 1024, mask = ncap - 1;
	uint32_t *idx = calloc(ncap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t slot = (t->v[i].name * 0x9e3779b97f4a7c15ULL >> 20) & mask;

		while (idx[slot])
			slot = (slot + 1) & mask;
		idx[slot] = (uint32_t)(i + 1);
	}
	free(t->index);
	t->index = idx;
	t->index_cap = ncap;
	return 0;
}

/* The row for function @name, created if new; NULL on ENOMEM. */
static struct rpt_func *functab_get(struct rpt_functab *t, uint32_t name, uint32_t kind)
{
	size_t mask, slot;
	struct rpt_func *r;
	uint32_t v;

	if ((t->n + 1) * 2 > t->index_cap && functab_grow_index(t))
		return NULL;
	mask = t->index_cap - 1;
	slot = (name * 0x9e3779b97f4a7c15ULL >> 20) & mask;
	while ((v = t->index[slot])) {
		if (t->v[v - 1].name == name)
			return &t->v[v - 1];
		slot = (slot + 1) & mask;
	}
	if (SAC_GROW(t->v, t->cap, t->n + 1, 256))
		return NULL;
	r = &t->v[t->n];
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->kind = kind;
	t->index[slot] = (uint32_t)++t->n;
	return r;
}

int rpt_functab__build(struct rpt_functab *t, const struct rpt_profile *p, const double *w0,
		       const double *w1)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct rpt_stack *s = &p->stacks[i];
		const struct rpt_frame *f = rpt_profile__stack_frames(p, s);
		double a = w0 ? w0[i] : (double)s->count, b = w1 ? w1[i] : 0;

		for (uint32_t j = 0; j < s->nframes; j++) {
			struct rpt_func *r;

			if (f[j].kind == RPT_FRAME_ROOT)
				continue; /* the process, not a function: see put_roots() */
			r = functab_get(t, f[j].name, f[j].kind);
			if (!r)
				return -ENOMEM;
			if (j == s->nframes - 1) {
				r->self[0] += a;
				r->self[1] += b;
			}
			if (r->stamp == i + 1)
				continue; /* recursion: already counted for this stack */
			r->stamp = i + 1;
			r->total[0] += a;
			r->total[1] += b;
		}
	}
	return 0;
}

void rpt_functab__release(struct rpt_functab *t)
{
	free(t->v);
	free(t->index);
	memset(t, 0, sizeof(*t));
}

/* The code point of the well-formed @n-byte sequence at @s (rpt_utf8_len()). */
static uint32_t utf8_cp(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t v = u[0] & (0x7f >> n);

	for (size_t i = 1; i < n; i++)
		v = v << 6 | (u[i] & 0x3f);
	return v;
}

void rpt_put_plain(FILE *out, const char *s)
{
	while (*s) {
		unsigned char c = (unsigned char)*s;
		size_t n = rpt_utf8_len(s);

		if (!n)
			fputs(RPT_UTF8_REPLACEMENT, out);
		else if (n > 1 && rpt_cp_hidden(utf8_cp(s, n)))
			fprintf(out, "\\u%04x", (unsigned)utf8_cp(s, n));
		else if (n > 1)
			fwrite(s, 1, n, out);
		else
			putc(c < 0x20 || c == 0x7f ? '_' : c, out);
		s += n ? n : 1;
	}
}

/* "# host: ..., duration: ..." header lines of a table. */
static void put_summary(FILE *out, const struct rpt_summary *s)
{
	if (!s)
		return;
	if (s->host) {
		fputs("# host: ", out);
		rpt_put_plain(out, s->host);
		putc('\n', out);
	}
	if (s->duration_ns)
		fprintf(out, "# duration: %.2f s\n", s->duration_ns / 1e9);
	if (rpt_value__is_time(s->value)) {
		fputs(s->value == RPT_VALUE_OFF_CPU ? "# off-CPU time: " : "# wall-clock time: ",
		      out);
		rpt_value__put(out, s->value, (double)s->samples);
		if (s->total) {
			fputs(" of ", out);
			rpt_value__put(out, s->value, (double)s->total);
		}
	} else {
		fprintf(out, "# samples: %llu", (unsigned long long)s->samples);
		if (s->total)
			fprintf(out, " of %llu", (unsigned long long)s->total);
	}
	fprintf(out, ", lost: %llu", (unsigned long long)s->lost);
	if (s->lost_detail && s->lost_detail[0]) {
		fputs(" (", out);
		rpt_put_plain(out, s->lost_detail);
		putc(')', out);
	}
	putc('\n', out);
}

struct top_sort_ctx {
	const struct rpt_profile *p;
	bool by_total;
};

static int cmp_double_desc(double a, double b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct top_sort_ctx *c = arg;
	const struct rpt_func *x = a, *y = b;
	int r;

	if (c->by_total) {
		r = cmp_double_desc(x->total[0], y->total[0]);
		if (!r)
			r = cmp_double_desc(x->self[0], y->self[0]);
	} else {
		r = cmp_double_desc(x->self[0], y->self[0]);
		if (!r)
			r = cmp_double_desc(x->total[0], y->total[0]);
	}
	if (!r)
		r = strcmp(rpt_profile__name(c->p, x->name), rpt_profile__name(c->p, y->name));
	return r;
}

#define TOP_MAX_ROOTS 5

/*
 * "# processes: app 60.00%, db 40.00%": the share of each root frame (the
 * comm, with pid or tid when asked), the largest first, so the names
 * --comm takes stay in view. @return 0 or -ENOMEM.
 */
static int put_roots(FILE *out, const struct rpt_profile *p, double total)
{
	struct top_sort_ctx ctx = {.p = p, .by_total = true};
	struct rpt_functab t = {0};
	double rest = 0;

	for (size_t i = 0; i < p->nstacks; i++) {
		const struct rpt_stack *s = &p->stacks[i];
		const struct rpt_frame *f = rpt_profile__stack_frames(p, s);
		struct rpt_func *r;

		if (!s->nframes || f[0].kind != RPT_FRAME_ROOT)
			continue;
		r = functab_get(&t, f[0].name, f[0].kind);
		if (!r) {
			rpt_functab__release(&t);
			return -ENOMEM;
		}
		r->total[0] += (double)s->count;
	}
	if (t.n)
		qsort_r(t.v, t.n, sizeof(*t.v), cmp_rows, &ctx);
	for (size_t i = 0; i < t.n; i++) {
		if (i >= TOP_MAX_ROOTS) {
			rest += t.v[i].total[0];
			continue;
		}
		fputs(i ? ", " : "# processes: ", out);
		rpt_put_plain(out, rpt_profile__name(p, t.v[i].name));
		fprintf(out, " %.2f%%", 100 * t.v[i].total[0] / total);
	}
	if (t.n > TOP_MAX_ROOTS)
		fprintf(out, ", %zu more %.2f%%", t.n - TOP_MAX_ROOTS, 100 * rest / total);
	if (t.n)
		putc('\n', out);
	rpt_functab__release(&t);
	return 0;
}

/*
 * Functions are keyed by name: a name seen as several kinds (say a kernel and
 * a user function both called "main") is one row. The comm at the root of
 * every stack is no function: it stays out of the table (a process at 100%
 * would top every --sort total) and its share is a header line.
 */
int rpt_top__write(const struct rpt_profile *p, FILE *out, const struct rpt_top_opts *o)
{
	struct top_sort_ctx ctx = {.p = p, .by_total = o && o->sort_total};
	double total = p->total ? (double)p->total : 1;
	bool time = rpt_value__is_time(p->meta.value);
	double unit = time ? 1e3 : 1;
	struct rpt_functab t;
	size_t rows;
	int err;

	err = rpt_functab__build(&t, p, NULL, NULL);
	if (err)
		goto cleanup;
	if (t.n) /* t.v is NULL when empty: qsort_r's pointer must not be */
		qsort_r(t.v, t.n, sizeof(*t.v), cmp_rows, &ctx);
	rows = o && o->rows && o->rows < t.n ? o->rows : t.n;
	put_summary(out, o ? o->summary : NULL);
	err = put_roots(out, p, total);
	if (err)
		goto cleanup;
	/* --off-cpu, --wall: counts are microseconds, shown as milliseconds */
	fprintf(out, "%12s %7s %12s %7s  %s\n", time ? "SELF_MS" : "SELF", "SELF%",
		time ? "TOTAL_MS" : "TOTAL", "TOTAL%", "FUNCTION");
	for (size_t i = 0; i < rows; i++) {
		const struct rpt_func *r = &t.v[i];

		fprintf(out,
			time ? "%12.3f %6.2f%% %12.3f %6.2f%%  "
			     : "%12.0f %6.2f%% %12.0f %6.2f%%  ",
			r->self[0] / unit, 100 * r->self[0] / total, r->total[0] / unit,
			100 * r->total[0] / total);
		if (r->kind == RPT_FRAME_KERNEL) /* as perf report marks them */
			fputs("[k] ", out);
		rpt_put_plain(out, rpt_profile__name(p, r->name));
		putc('\n', out);
	}
	if (fflush(out) || ferror(out))
		err = errno ? -errno : -EIO;
cleanup:
	rpt_functab__release(&t);
	return err;
}
