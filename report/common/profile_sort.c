// SPDX-License-Identifier: MIT
/*
 * profile_sort.c - rpt_profile__sort(): the profile's stacks in name order,
 * by a most-significant-frame-first radix sort over integer frame keys
 * (name ranks computed once), then the frames stored in that order.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "grow.h"

/* A sort key holds a frame's name rank, kind and module rank in 64 bits. */
#define RANK_BITS (32 - RPT_FRAME_KIND_BITS)

static int cmp_stacks(const void *a, const void *b, void *arg)
{
	return rpt_profile__cmp_stacks(arg, a, b);
}

static int cmp_names(const void *a, const void *b, void *arg)
{
	const char *pool = arg;

	return strcmp(pool + *(const uint32_t *)a, pool + *(const uint32_t *)b);
}

/*
 * Rank every pooled string once (names are interned, so two offsets differ
 * exactly when their strings do): the stack sort then works on integers
 * instead of calling strcmp() per frame. NULL on allocation failure.
 */
static uint32_t *rank_names(const struct rpt_profile *p)
{
	uint32_t *rank = calloc(p->pool_len ? p->pool_len : 1, sizeof(*rank));
	uint32_t *offs = malloc((p->nnames + 1) * sizeof(*offs));
	size_t n = 0;

	if (!rank || !offs) {
		free(rank);
		free(offs);
		return NULL;
	}
	for (size_t off = 1; off < p->pool_len && n < p->nnames; off += strlen(p->pool + off) + 1)
		offs[n++] = (uint32_t)off;
	qsort_r(offs, n, sizeof(*offs), cmp_names, p->pool);
	for (size_t i = 0; i < n; i++)
		rank[offs[i]] = (uint32_t)i + 1; /* "" at offset 0 keeps rank 0 */
	free(offs);
	return rank;
}

/*
 * A frame as one integer in the order of rpt_profile__cmp_stacks(): name
 * rank, then kind, then module rank. Key 0 means "past the last frame" and
 * sorts before every frame, so a chain comes before its extensions.
 */
static inline uint64_t frame_key(const uint32_t *rank, const struct rpt_frame *f)
{
	return (uint64_t)(rank[f->name] + 1) << 32 | (uint64_t)f->kind << RANK_BITS |
	       rank[f->module];
}

static inline uint64_t key_at(const struct rpt_profile *p, const uint32_t *rank,
			      const struct rpt_stack *s, uint32_t depth)
{
	return depth < s->nframes ? frame_key(rank, &p->frames[s->first + depth]) : 0;
}

/*
 * The keys of the first PRE_KEYS frames are read while the stacks are still
 * in insertion order, which is the frames' order in memory; deeper keys are
 * read (into the last slot) as runs reach them.
 */
#define PRE_KEYS 3

struct sort_ent {
	uint64_t key[PRE_KEYS]; /* key[k] of frame k, the last slot reused deeper */
	struct rpt_stack s;
};

/* Stacks ent[lo, hi) share their first @depth frames; order them by the rest. */
struct sort_run {
	uint32_t lo, hi, depth;
};

static void insertion_sort(struct sort_ent *a, size_t n, unsigned int k)
{
	for (size_t i = 1; i < n; i++) {
		struct sort_ent e = a[i];
		size_t j = i;

		for (; j && a[j - 1].key[k] > e.key[k]; j--)
			a[j] = a[j - 1];
		a[j] = e;
	}
}

/* Stable LSD radix sort of @a by key[@k], over the bytes in which keys differ. */
static void sort_ents(struct sort_ent *a, struct sort_ent *tmp, size_t n, unsigned int k)
{
	struct sort_ent *src = a, *dst = tmp, *t;
	uint64_t diff = 0;

	if (n < 32) {
		insertion_sort(a, n, k);
		return;
	}
	for (size_t i = 1; i < n; i++)
		diff |= a[i].key[k] ^ a[0].key[k];
	for (unsigned int shift = 0; shift < 64; shift += 8) {
		size_t cnt[256] = {0}, sum = 0;

		if (!(diff >> shift & 0xff))
			continue;
		for (size_t i = 0; i < n; i++)
			cnt[src[i].key[k] >> shift & 0xff]++;
		for (size_t b = 0; b < 256; b++) {
			size_t c = cnt[b];

			cnt[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[cnt[src[i].key[k] >> shift & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

/* Order run @r by its frame at r.depth; queue the ties for the next frame. */
static void sort_run(const struct rpt_profile *p, const uint32_t *rank, struct sort_ent *ent,
		     struct sort_ent *tmp, struct sort_run r, struct sort_run *runs, size_t *nruns)
{
	size_t len = r.hi - r.lo, j;
	unsigned int k = r.depth < PRE_KEYS ? r.depth : PRE_KEYS - 1;

	ent += r.lo;
	for (size_t i = 0; r.depth >= PRE_KEYS && i < len; i++) {
		if (i + 16 < len && r.depth < ent[i + 16].s.nframes) /* overlap the misses */
			__builtin_prefetch(&p->frames[ent[i + 16].s.first + r.depth]);
		ent[i].key[k] = key_at(p, rank, &ent[i].s, r.depth);
	}
	sort_ents(ent, tmp, len, k);
	for (size_t i = 0; i < len; i = j) {
		for (j = i + 1; j < len && ent[j].key[k] == ent[i].key[k]; j++)
			;
		/* key 0 twice would be two equal chains, which add() merges */
		if (j - i > 1 && ent[i].key[k])
			runs[(*nruns)++] = (struct sort_run){r.lo + i, r.lo + j, r.depth + 1};
	}
}

/*
 * Store the frames in the stacks' new order, so the writers, which walk the
 * stacks in order, read memory front to back instead of missing the cache
 * (and the TLB) once per stack: measured, this costs less than it saves
 * even for one pass. Skipped (nothing lost but speed) when memory is short.
 */
static void compact_frames(struct rpt_profile *p)
{
	struct rpt_frame *nf = malloc((p->nframes + 1) * sizeof(*nf));
	size_t at = 0;

	if (!nf || !p->nframes) {
		free(nf);
		return;
	}
	for (size_t i = 0; i < p->nstacks; i++) {
		struct rpt_stack *s = &p->stacks[i];

		if (i + 8 < p->nstacks)
			__builtin_prefetch(&p->frames[p->stacks[i + 8].first]);
		if (s->nframes)
			memcpy(nf + at, p->frames + s->first, s->nframes * sizeof(*nf));
		s->first = (uint32_t)at;
		at += s->nframes;
	}
	assert(at == p->nframes);
	free(p->frames);
	p->frames = nf;
	p->frames_cap = p->nframes + 1;
}

/*
 * Most-significant-frame-first radix sort: bucket all stacks by their root,
 * then each group of equal roots by the next frame, and so on. Every stack
 * is touched once per frame it shares with another, instead of
 * O(log n) comparisons each missing the cache, which dominated --top and
 * --svg on a million unique stacks. -ENOMEM leaves @p as it was.
 */
static int sort_radix(struct rpt_profile *p, const uint32_t *rank)
{
	size_t n = p->nstacks, nruns = 0;
	struct sort_ent *ent = malloc(n * sizeof(*ent)), *tmp = malloc(n * sizeof(*tmp));
	/* pending runs are disjoint and hold two stacks or more */
	struct sort_run *runs = malloc((n / 2 + 1) * sizeof(*runs));
	int err = -ENOMEM;

	if (!ent || !tmp || !runs)
		goto cleanup;
	for (size_t i = 0; i < n; i++) {
		ent[i].s = p->stacks[i];
		for (uint32_t k = 0; k < PRE_KEYS; k++)
			ent[i].key[k] = key_at(p, rank, &ent[i].s, k);
	}
	runs[nruns++] = (struct sort_run){0, (uint32_t)n, 0};
	while (nruns) {
		struct sort_run r = runs[--nruns];

		sort_run(p, rank, ent, tmp, r, runs, &nruns);
	}
	for (size_t i = 0; i < n; i++)
		p->stacks[i] = ent[i].s;
	compact_frames(p);
	err = 0;
cleanup:
	SAC_FREE_ALL(ent, tmp, runs);
	return err;
}

void rpt_profile__sort(struct rpt_profile *p)
{
	uint32_t *rank = NULL;

	if (p->nstacks < 2)
		return;
	/* Ranks of more names than RANK_BITS holds cannot be keys: compare strings. */
	if (p->nnames < (1u << RANK_BITS) - 1)
		rank = rank_names(p);
	if (!rank || sort_radix(p, rank))
		qsort_r(p->stacks, p->nstacks, sizeof(*p->stacks), cmp_stacks, p);
	free(rank);
	/* Stack indexes moved: the index is rebuilt by the next add, if any. */
	free(p->stack_index);
	p->stack_index = NULL;
}
