// SPDX-License-Identifier: MIT
/*
 * dwinline.c - per compile unit index of inlined subroutines (see
 * dwinline.h). A unit's index is every DW_TAG_inlined_subroutine with its
 * nearest inlined ancestor, and every address range of them sorted by start.
 * The innermost range holding an address is the last one starting at or
 * below it, or one of that range's ancestors: ranges of one subprogram nest
 * and never overlap otherwise, so this is exact on well-formed DWARF.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <dwarf.h>

#include "dwinline.h"
#include "grow.h"
#include "lowerbound.h"
#include "strpool.h"

#define DWI_MAX_DEPTH 256

struct dwi_die {
	Dwarf_Die die;
	int32_t parent;	   /* nearest inlined ancestor, -1 = the subprogram */
	uint32_t first, n; /* its ranges in cu_idx.own */
};

struct dwi_range {
	Dwarf_Addr lo, hi;
	uint32_t die;
};

struct sub_idx {
	struct dwi_die *dies;
	size_t ndies, dies_cap;
	struct dwi_range *own;	  /* in DIE order */
	struct dwi_range *sorted; /* by lo */
	size_t nranges, ranges_cap;
};

/* A subprogram's address range; its inline index is built on first use. */
struct dwi_sub {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
	struct sub_idx *idx;
};

struct cu_subs {
	struct dwi_sub *subs; /* by lo */
	size_t n, cap;
	bool plain_c; /* C or assembly: no type holds code */
};

struct rpt_dwinline {
	struct rpt_hmap by_cu; /* CU DIE offset -> index in cus */
	struct cu_subs *cus;
	size_t ncus, cus_cap;
};

struct rpt_dwinline *rpt_dwinline__new(void)
{
	return calloc(1, sizeof(struct rpt_dwinline));
}

static void sub_idx_fini(struct sub_idx *c)
{
	if (!c)
		return;
	SAC_FREE_ALL(c->dies, c->own, c->sorted);
}

void rpt_dwinline__free(struct rpt_dwinline *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->ncus; i++) {
		for (size_t j = 0; j < x->cus[i].n; j++) {
			sub_idx_fini(x->cus[i].subs[j].idx);
			free(x->cus[i].subs[j].idx);
		}
		free(x->cus[i].subs);
	}
	free(x->cus);
	rpt_hmap__fini(&x->by_cu);
	free(x);
}

static int add_die(struct sub_idx *c, Dwarf_Die *die, int32_t parent)
{
	uint32_t me = c->ndies;
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	if (SAC_GROW(c->dies, c->dies_cap, c->ndies + 1, 64))
		return -ENOMEM;
	c->dies[me] = (struct dwi_die){*die, parent, c->nranges, 0};
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (end <= start)
			continue;
		if (SAC_GROW(c->own, c->ranges_cap, c->nranges + 1, 64))
			return -ENOMEM;
		c->own[c->nranges++] = (struct dwi_range){start, end, me};
		c->dies[me].n++;
	}
	c->ndies++;
	return me;
}

/*
 * Tags under which code-holding DIEs can sit; types and data are skipped.
 * In C (@plain_c) a structure or union never holds a function: not walking
 * their members is a third of the cost of indexing a libc unit.
 */
static bool may_hold_code(int tag, bool plain_c)
{
	switch (tag) {
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		return !plain_c;
	case DW_TAG_subprogram:
	case DW_TAG_lexical_block:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
		return true;
	}
	return false;
}

static int walk(struct sub_idx *c, Dwarf_Die *parent_die, int32_t parent, int depth, bool plain_c)
{
	Dwarf_Die child;

	if (depth > DWI_MAX_DEPTH || dwarf_child(parent_die, &child))
		return 0;
	do {
		int tag = dwarf_tag(&child), err;
		int32_t me = parent;

		if (tag == DW_TAG_inlined_subroutine) {
			me = add_die(c, &child, parent);
			if (me < 0)
				return me;
		} else if (tag == DW_TAG_subprogram) {
			me = -1;
		}
		if (may_hold_code(tag, plain_c) && dwarf_haschildren(&child) > 0) {
			err = walk(c, &child, me, depth + 1, plain_c);
			if (err)
				return err;
		}
	} while (!dwarf_siblingof(&child, &child));
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct dwi_range *x = a, *y = b;

	/* at one start, the inner (later, deeper) DIE last: the floor finds it */
	return SAC_CMP(x->lo, y->lo) ?: SAC_CMP(x->die, y->die);
}

static int sub_idx_build(struct sub_idx *c, Dwarf_Die *sub, bool plain_c)
{
	int err = walk(c, sub, -1, 0, plain_c);

	if (err || !c->nranges)
		return err;
	c->sorted = malloc(c->nranges * sizeof(*c->sorted));
	if (!c->sorted)
		return -ENOMEM;
	memcpy(c->sorted, c->own, c->nranges * sizeof(*c->sorted));
	qsort(c->sorted, c->nranges, sizeof(*c->sorted), range_cmp);
	return 0;
}

/* Subprograms of a unit, through namespaces and classes, not into bodies. */
static int collect_subs(struct cu_subs *c, Dwarf_Die *parent, int depth)
{
	Dwarf_Die d;

	if (depth > DWI_MAX_DEPTH || dwarf_child(parent, &d))
		return 0;
	do {
		int tag = dwarf_tag(&d);
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		if (tag != DW_TAG_subprogram) {
			if (may_hold_code(tag, c->plain_c) && dwarf_haschildren(&d) > 0 &&
			    collect_subs(c, &d, depth + 1))
				return -ENOMEM;
			continue;
		}
		while ((off = dwarf_ranges(&d, off, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			if (SAC_GROW(c->subs, c->cap, c->n + 1, 64))
				return -ENOMEM;
			c->subs[c->n++] = (struct dwi_sub){lo, hi, d, NULL};
		}
	} while (!dwarf_siblingof(&d, &d));
	return 0;
}

static int sub_cmp(const void *a, const void *b)
{
	const struct dwi_sub *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static bool plain_c(Dwarf_Die *cu)
{
	switch (dwarf_srclang(cu)) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
	case DW_LANG_Mips_Assembler:
		return true;
	}
	return false;
}

static struct cu_subs *cu_get(struct rpt_dwinline *x, Dwarf_Die *cu)
{
	uint64_t key = dwarf_dieoffset(cu), v;
	struct cu_subs *c;

	if (rpt_hmap__get(&x->by_cu, key, &v))
		return &x->cus[v];
	if (SAC_GROW(x->cus, x->cus_cap, x->ncus + 1, 64))
		return NULL;
	c = &x->cus[x->ncus];
	*c = (struct cu_subs){.plain_c = plain_c(cu)};
	if (collect_subs(c, cu, 0) || rpt_hmap__put(&x->by_cu, key, x->ncus)) {
		free(c->subs);
		return NULL;
	}
	qsort(c->subs, c->n, sizeof(*c->subs), sub_cmp);
	x->ncus++;
	return c;
}

/* The inline index of the subprogram holding @addr, built on first use. */
static struct sub_idx *sub_get(struct cu_subs *c, Dwarf_Addr addr)
{
	ssize_t best = (ssize_t)SAC_FIRST_ABOVE(c->subs, c->n, lo, addr) - 1;
	struct dwi_sub *sub;

	if (best < 0 || addr >= c->subs[best].hi)
		return NULL;
	sub = &c->subs[best];
	if (sub->idx)
		return sub->idx;
	sub->idx = calloc(1, sizeof(*sub->idx));
	if (sub->idx && sub_idx_build(sub->idx, &sub->die, c->plain_c)) {
		sub_idx_fini(sub->idx);
		free(sub->idx);
		sub->idx = NULL;
	}
	return sub->idx;
}

static bool die_holds(const struct sub_idx *c, int32_t d, Dwarf_Addr addr)
{
	const struct dwi_die *e = &c->dies[d];

	for (uint32_t i = e->first; i < e->first + e->n; i++)
		if (addr >= c->own[i].lo && addr < c->own[i].hi)
			return true;
	return false;
}

/* The innermost inlined DIE holding @addr, or -1. */
static int32_t innermost(const struct sub_idx *c, Dwarf_Addr addr)
{
	ssize_t best = (ssize_t)SAC_FIRST_ABOVE(c->sorted, c->nranges, lo, addr) - 1;
	int32_t d;

	if (best < 0)
		return -1;
	for (d = c->sorted[best].die; d >= 0; d = c->dies[d].parent)
		if (die_holds(c, d, addr))
			return d;
	return -1;
}

int rpt_dwinline__chain(struct rpt_dwinline *x, Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die *out,
			int cap)
{
	struct cu_subs *cs = cu_get(x, cu);
	struct sub_idx *c = cs ? sub_get(cs, addr) : NULL;
	int n = 0;

	if (!c)
		return 0;
	for (int32_t d = innermost(c, addr); d >= 0 && n < cap; d = c->dies[d].parent)
		out[n++] = c->dies[d].die;
	return n;
}
