// SPDX-License-Identifier: MIT
/*
 * speedscope.c - sa-report --speedscope: the profile in speedscope's JSON
 * file format, one sampled profile per process (root frame), frames shared
 * across them, plus the "fn file:line" name splitter export.h declares.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "grow.h"

#define SS_SCHEMA "https://www.speedscope.app/file-format-schema.json"

void rpt_name__split(const char *name, struct rpt_name_parts *out)
{
	const char *sp = strrchr(name, ' '), *colon;
	char *end;
	long line;

	*out = (struct rpt_name_parts){.fn_len = strlen(name)};
	if (!sp || sp == name)
		return;
	colon = strrchr(sp, ':');
	if (!colon || colon == sp + 1 || colon[1] < '0' || colon[1] > '9')
		return;
	line = strtol(colon + 1, &end, 10);
	if (*end)
		return;
	out->fn_len = (size_t)(sp - name);
	out->file = sp + 1;
	out->file_len = (size_t)(colon - sp - 1);
	out->line = line;
}

/* Length of a valid UTF-8 sequence at @s (at most @n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	uint32_t cp = s[0] & (0x7f >> len);

	if (s[0] < 0xc2 || s[0] > 0xf4 || len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and values past U+10FFFF are invalid */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* @s[0..n) as a JSON string; bytes that are not UTF-8 become U+FFFD. */
static void json_str(FILE *f, const char *s, size_t n)
{
	const unsigned char *b = (const unsigned char *)s;

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		size_t len;

		if (b[i] == '"' || b[i] == '\\') {
			fputc('\\', f);
			fputc(b[i++], f);
		} else if (b[i] < 0x20 || b[i] == 0x7f) {
			fprintf(f, "\\u%04x", b[i++]);
		} else if (b[i] < 0x80) {
			fputc(b[i++], f);
		} else if ((len = utf8_len(b + i, n - i))) {
			fwrite(b + i, 1, len, f);
			i += len;
		} else {
			fputs("\\ufffd", f);
			i++;
		}
	}
	fputc('"', f);
}

/* The writer's state: a frame index per profile frame and the shared frames. */
struct ss {
	const struct rpt_profile *p;
	uint32_t *frame_idx; /* per p->frames entry: index in the shared frames */
	uint64_t *keys;	     /* open addressing: name << 32 | module ... */
	uint32_t *kinds;     /* ... and kind ... */
	uint32_t *vals;	     /* ... -> shared frame index, UINT32_MAX = empty slot */
	size_t cap;
	uint32_t *shared; /* shared frame -> index in p->frames of its first use */
	uint32_t nshared;
	uint32_t *order; /* stack indices sorted by root name */
};

/* Shared frame of p->frames[fi]: same name, kind and module, same index. */
static uint32_t frame_of(struct ss *w, size_t fi)
{
	const struct rpt_frame *f = &w->p->frames[fi];
	uint64_t key = (uint64_t)f->name << 32 | f->module;
	size_t slot = ((key ^ f->kind) * 0x9e3779b97f4a7c15ULL >> 17) & (w->cap - 1);

	while (w->vals[slot] != UINT32_MAX && (w->keys[slot] != key || w->kinds[slot] != f->kind))
		slot = (slot + 1) & (w->cap - 1);
	if (w->vals[slot] == UINT32_MAX) {
		w->keys[slot] = key;
		w->kinds[slot] = f->kind;
		w->vals[slot] = w->nshared;
		w->shared[w->nshared++] = (uint32_t)fi;
	}
	return w->vals[slot];
}

static int cmp_root(const void *a, const void *b, void *arg)
{
	const struct ss *w = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct rpt_stack *sx = &w->p->stacks[x], *sy = &w->p->stacks[y];
	const char *nx = sx->nframes ? w->p->pool + w->p->frames[sx->first].name : "";
	const char *ny = sy->nframes ? w->p->pool + w->p->frames[sy->first].name : "";
	int c = strcmp(nx, ny);

	return c ? c : (x > y) - (x < y);
}

static int ss_init(struct ss *w, const struct rpt_profile *p)
{
	size_t need = p->nframes * 2 + 16;

	w->p = p;
	for (w->cap = 16; w->cap < need; w->cap *= 2)
		;
	w->frame_idx = malloc((p->nframes + 1) * sizeof(*w->frame_idx));
	w->keys = malloc(w->cap * sizeof(*w->keys));
	w->kinds = malloc(w->cap * sizeof(*w->kinds));
	w->vals = malloc(w->cap * sizeof(*w->vals));
	w->shared = malloc((p->nframes + 1) * sizeof(*w->shared));
	w->order = malloc((p->nstacks + 1) * sizeof(*w->order));
	if (!w->frame_idx || !w->keys || !w->kinds || !w->vals || !w->shared || !w->order)
		return -ENOMEM;
	memset(w->vals, 0xff, w->cap * sizeof(*w->vals));
	for (size_t i = 0; i < p->nstacks; i++)
		w->order[i] = (uint32_t)i;
	qsort_r(w->order, p->nstacks, sizeof(*w->order), cmp_root, w);
	/* root frames are profile names, not frames: number the rest in order */
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct rpt_stack *s = &p->stacks[w->order[i]];

		for (uint32_t j = 1; j < s->nframes; j++)
			w->frame_idx[s->first + j] = frame_of(w, s->first + j);
	}
	return 0;
}

static void ss_fini(struct ss *w)
{
	SAC_FREE_ALL(w->frame_idx, w->keys, w->kinds, w->vals, w->shared, w->order);
}

static void write_frames(struct ss *w, FILE *f)
{
	const struct rpt_profile *p = w->p;

	fputs("\"shared\":{\"frames\":[", f);
	for (uint32_t i = 0; i < w->nshared; i++) {
		const struct rpt_frame *fr = &p->frames[w->shared[i]];
		const char *name = p->pool + fr->name;
		struct rpt_name_parts np;

		rpt_name__split(name, &np);
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		json_str(f, name, np.fn_len);
		if (np.file) {
			fputs(",\"file\":", f);
			json_str(f, np.file, np.file_len);
			fprintf(f, ",\"line\":%ld", np.line);
		} else if (fr->kind == RPT_FRAME_KERNEL) {
			fputs(",\"file\":\"[kernel]\"", f);
		} else if (fr->module) {
			fputs(",\"file\":", f);
			json_str(f, p->pool + fr->module, strlen(p->pool + fr->module));
		}
		fputc('}', f);
	}
	fputs("]},\n", f);
}

/* One sampled profile: stacks order[from..to), all with the same root. */
static void write_profile(struct ss *w, FILE *f, size_t from, size_t to, uint64_t period)
{
	const struct rpt_profile *p = w->p;
	const struct rpt_stack *s0 = &p->stacks[w->order[from]];
	const char *root = s0->nframes ? p->pool + p->frames[s0->first].name : "[unknown]";
	uint64_t total = 0;

	for (size_t i = from; i < to; i++)
		total += p->stacks[w->order[i]].count;
	fputs("{\"type\":\"sampled\",\"name\":", f);
	json_str(f, root, strlen(root));
	fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%llu,\n\"samples\":[",
		period ? "nanoseconds" : "none",
		(unsigned long long)(total * (period ? period : 1)));
	for (size_t i = from; i < to; i++) {
		const struct rpt_stack *s = &p->stacks[w->order[i]];

		fputs(i > from ? ",\n[" : "\n[", f);
		for (uint32_t j = 1; j < s->nframes; j++)
			fprintf(f, j > 1 ? ",%u" : "%u", w->frame_idx[s->first + j]);
		fputc(']', f);
	}
	fputs("],\n\"weights\":[", f);
	for (size_t i = from; i < to; i++)
		fprintf(f, i > from ? ",%llu" : "%llu",
			(unsigned long long)(p->stacks[w->order[i]].count * (period ? period : 1)));
	fputs("]}", f);
}

static bool same_root(const struct rpt_profile *p, uint32_t a, uint32_t b)
{
	const struct rpt_stack *x = &p->stacks[a], *y = &p->stacks[b];
	const char *nx = x->nframes ? p->pool + p->frames[x->first].name : "";
	const char *ny = y->nframes ? p->pool + p->frames[y->first].name : "";

	return !strcmp(nx, ny);
}

int rpt_speedscope__write(const struct rpt_profile *p, FILE *out,
			  const struct rpt_speedscope_opts *o)
{
	/* whole nanoseconds, as pprof's period: weights then add up exactly */
	uint64_t period = rpt_value__is_time(p->meta.value) ? 1000 /* microseconds */
			  : p->meta.freq_hz		    ? 1000000000ULL / p->meta.freq_hz
							    : 0;
	const char *name = o && o->name	   ? o->name
			   : p->meta.title ? p->pool + p->meta.title
					   : "sa-report";
	struct ss w = {0};
	int err;

	err = ss_init(&w, p);
	if (err)
		goto cleanup;
	fputs("{\"$schema\":\"" SS_SCHEMA "\",\n\"exporter\":\"sa-report " SA_VERSION
	      "\",\"name\":",
	      out);
	json_str(out, name, strlen(name));
	fputs(",\"activeProfileIndex\":0,\n", out);
	write_frames(&w, out);
	fputs("\"profiles\":[", out);
	for (size_t from = 0, to; from < p->nstacks; from = to) {
		for (to = from + 1; to < p->nstacks && same_root(p, w.order[from], w.order[to]);
		     to++)
			;
		fputs(from ? ",\n" : "\n", out);
		write_profile(&w, out, from, to, period);
	}
	fputs("]}\n", out);
	err = ferror(out) ? -EIO : 0;
cleanup:
	ss_fini(&w);
	return err;
}
