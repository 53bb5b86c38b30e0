// SPDX-License-Identifier: MIT
/*
 * flame.c - the merged call tree a flame graph draws: stacks visited in
 * name order so each shares its prefix with the one before, which builds
 * the tree in pre-order in one pass, then box positions from running sums.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "output_int.h"

static int cmp_idx(const void *a, const void *b, void *arg)
{
	const struct rpt_profile *p = arg;

	return rpt_profile__cmp_stacks(p, &p->stacks[*(const uint32_t *)a],
				       &p->stacks[*(const uint32_t *)b]);
}

static int push_node(struct rpt_flame *f, uint32_t name, uint32_t kind, uint32_t depth)
{
	struct rpt_flame_node *n;

	if (SAC_GROW(f->n, f->cap, f->len + 1, 1024))
		return -ENOMEM;
	n = &f->n[f->len++];
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->kind = kind;
	n->depth = depth;
	if (depth > f->max_depth)
		f->max_depth = depth;
	return 0;
}

/* Nodes of the current root-to-leaf path; path[0] is "all". */
struct path {
	size_t *v;
	uint32_t len, cap;
};

static int path_set(struct path *pa, uint32_t depth, size_t node)
{
	if (depth >= pa->cap) {
		uint32_t ncap = pa->cap ? pa->cap * 2 : 64;
		void *nv;

		while (ncap <= depth)
			ncap *= 2;
		nv = realloc(pa->v, ncap * sizeof(*pa->v));
		if (!nv)
			return -ENOMEM;
		pa->v = nv;
		pa->cap = ncap;
	}
	pa->v[depth] = node;
	pa->len = depth + 1;
	return 0;
}

/* Walk one stack into the tree: reuse the shared prefix, add the rest. */
static int add_stack(struct rpt_flame *f, struct path *pa, const struct rpt_profile *p,
		     const struct rpt_stack *s, double a, double b)
{
	const struct rpt_frame *fr = rpt_profile__stack_frames(p, s);
	uint32_t d = 1;
	int err;

	while (d < pa->len && d - 1 < s->nframes && f->n[pa->v[d]].name == fr[d - 1].name &&
	       f->n[pa->v[d]].kind == fr[d - 1].kind)
		d++;
	pa->len = d;
	for (; d - 1 < s->nframes; d++) {
		err = push_node(f, fr[d - 1].name, fr[d - 1].kind, d);
		if (!err)
			err = path_set(pa, d, f->len - 1);
		if (err)
			return err;
	}
	for (uint32_t i = 0; i < pa->len; i++) {
		f->n[pa->v[i]].v[0] += a;
		f->n[pa->v[i]].v[1] += b;
	}
	return 0;
}

/* x of each node: its parent's x plus the widths of the siblings before it. */
static int layout(struct rpt_flame *f)
{
	double *cursor = calloc(f->max_depth + 2, sizeof(*cursor));

	if (!cursor)
		return -ENOMEM;
	for (size_t i = 0; i < f->len; i++) {
		struct rpt_flame_node *n = &f->n[i];

		n->x = cursor[n->depth];
		cursor[n->depth] += n->v[0];
		cursor[n->depth + 1] = n->x;
	}
	free(cursor);
	return 0;
}

int rpt_flame__build(struct rpt_flame *f, const struct rpt_profile *p, const double *w0,
		     const double *w1)
{
	struct path pa = {0};
	uint32_t *order = NULL;
	int err = -ENOMEM;

	memset(f, 0, sizeof(*f));
	order = malloc((p->nstacks + 1) * sizeof(*order));
	if (!order)
		goto cleanup;
	for (size_t i = 0; i < p->nstacks; i++)
		order[i] = (uint32_t)i;
	/* Stacks in name order put every node's children right after it, sorted.
	 * Callers usually sorted the profile already: then one pass checks it. */
	for (size_t i = 1; i < p->nstacks; i++) {
		if (rpt_profile__cmp_stacks(p, &p->stacks[i - 1], &p->stacks[i]) > 0) {
			qsort_r(order, p->nstacks, sizeof(*order), cmp_idx, (void *)p);
			break;
		}
	}
	err = push_node(f, 0, RPT_FRAME_ROOT, 0);
	if (!err)
		err = path_set(&pa, 0, 0);
	for (size_t k = 0; k < p->nstacks && !err; k++) {
		uint32_t i = order[k];

		err = add_stack(f, &pa, p, &p->stacks[i], w0 ? w0[i] : (double)p->stacks[i].count,
				w1 ? w1[i] : 0);
	}
	if (!err)
		err = layout(f);
cleanup:
	free(order);
	free(pa.v);
	return err;
}

void rpt_flame__release(struct rpt_flame *f)
{
	free(f->n);
	memset(f, 0, sizeof(*f));
}
