// SPDX-License-Identifier: MIT
/*
 * symtab.c - sorted symbol tables for KSYM, JITSYM and USYM records. Sorted
 * lazily, once, after the file is read: adds are O(1), lookups O(log n).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>

#include "grow.h"
#include "lowerbound.h"
#include "symtab.h"

int rpt_symtab__add(struct rpt_symtab *st, uint64_t key, uint64_t start, uint64_t size,
		    uint32_t name)
{
	if (SAC_GROW(st->ents, st->cap, st->n + 1, 256))
		return -ENOMEM;
	st->ents[st->n++] = (struct rpt_symtab_ent){key, start, size, name};
	st->sorted = false;
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct rpt_symtab_ent *x = a, *y = b;

	/* sized symbols first, so an alias without size never hides one */
	return SAC_CMP(x->key, y->key) ?: SAC_CMP(x->start, y->start) ?:
	       SAC_CMP(y->size, x->size) ?: SAC_CMP(x->name, y->name);
}

/* index of the last entry <= (key, addr), or -1 */
struct ent_key {
	const struct rpt_symtab_ent *ents;
	uint64_t key, addr;
};

static bool ent_at_or_below(const void *ctx, size_t i)
{
	const struct ent_key *k = ctx;
	const struct rpt_symtab_ent *e = &k->ents[i];

	return e->key < k->key || (e->key == k->key && e->start <= k->addr);
}

static ssize_t symtab_floor(struct rpt_symtab *st, uint64_t key, uint64_t addr)
{
	struct ent_key k = {st->ents, key, addr}; /* sorted in place below */

	if (!st->sorted) {
		if (st->n) /* st->ents is NULL when empty */
			qsort(st->ents, st->n, sizeof(*st->ents), ent_cmp);
		st->sorted = true;
	}
	return (ssize_t)sac_lower_bound(st->n, ent_at_or_below, &k) - 1;
}

const struct rpt_symtab_ent *rpt_symtab__lookup(struct rpt_symtab *st, uint64_t key, uint64_t addr)
{
	ssize_t i = symtab_floor(st, key, addr);
	const struct rpt_symtab_ent *e;

	if (i < 0)
		return NULL;
	/* several symbols may start at one address: take the first of them */
	while (i > 0 && st->ents[i - 1].key == key && st->ents[i - 1].start == st->ents[i].start)
		i--;
	e = &st->ents[i];
	if (e->key != key)
		return NULL;
	if (e->size && addr - e->start >= e->size)
		return NULL;
	return e;
}

void rpt_symtab__fini(struct rpt_symtab *st)
{
	free(st->ents);
	st->ents = NULL;
	st->n = st->cap = 0;
}
