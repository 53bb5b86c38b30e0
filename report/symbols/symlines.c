// SPDX-License-Identifier: MIT
/*
 * symlines.c - the ULINE records of a recording, by binary and range. A
 * range written twice (sa-record writes a range again after a table of
 * its was dropped) keeps one frame per depth.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>

#include "grow.h"
#include "lowerbound.h"
#include "symlines.h"

int rpt_symlines__add(struct rpt_symlines *t, const struct rpt_symline *e)
{
	if (SAC_GROW(t->ents, t->cap, t->n + 1, 256))
		return -ENOMEM;
	t->ents[t->n++] = *e;
	t->sorted = false;
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct rpt_symline *x = a, *y = b;

	/* the first written of a depth first */
	return SAC_CMP(x->key, y->key) ?: SAC_CMP(x->lo, y->lo) ?: SAC_CMP(x->depth, y->depth) ?:
	       SAC_CMP(x, y);
}

static bool same_range(const struct rpt_symline *x, const struct rpt_symline *y)
{
	return x->key == y->key && x->lo == y->lo;
}

/* Sorted by (binary, range, depth), one frame per depth of a range. */
static void sort(struct rpt_symlines *t)
{
	size_t k = 0;

	if (t->n)
		qsort(t->ents, t->n, sizeof(*t->ents), ent_cmp);
	for (size_t i = 0; i < t->n; i++)
		if (!k || !same_range(&t->ents[k - 1], &t->ents[i]) ||
		    t->ents[k - 1].depth != t->ents[i].depth)
			t->ents[k++] = t->ents[i];
	t->n = k;
	t->sorted = true;
}

struct line_key {
	const struct rpt_symline *ents;
	uint64_t key, off;
};

static bool line_at_or_below(const void *ctx, size_t i)
{
	const struct line_key *k = ctx;
	const struct rpt_symline *e = &k->ents[i];

	return e->key < k->key || (e->key == k->key && e->lo <= k->off);
}

size_t rpt_symlines__lookup(struct rpt_symlines *t, uint64_t key, uint64_t off,
			    const struct rpt_symline **v)
{
	struct line_key k = {t->ents, key, off};
	ssize_t best;
	size_t first, n = 0;

	if (!t->sorted)
		sort(t);
	best = (ssize_t)sac_lower_bound(t->n, line_at_or_below, &k) - 1;
	if (best < 0 || t->ents[best].key != key)
		return 0;
	first = (size_t)best;
	while (first && same_range(&t->ents[first - 1], &t->ents[best]))
		first--;
	if (off - t->ents[first].lo >= t->ents[first].size)
		return 0;
	while (first + n < t->n && same_range(&t->ents[first + n], &t->ents[first]) &&
	       t->ents[first + n].depth == n)
		n++;
	*v = &t->ents[first];
	return n;
}

void rpt_symlines__fini(struct rpt_symlines *t)
{
	free(t->ents);
	t->ents = NULL;
	t->n = t->cap = 0;
}
