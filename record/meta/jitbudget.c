// SPDX-License-Identifier: MIT
/*
 * jitbudget.c - token buckets of perf-map bytes by key, for the run
 * (jitbudget.h). A sorted array: lookups are O(log n), a new key O(n).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "grow.h"
#include "jitbudget.h"
#include "lowerbound.h"

void rec_jitbud__init(struct rec_jitbud *b, uint64_t burst, uint64_t refill_s, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->burst = burst;
	b->refill_s = refill_s ? refill_s : 1;
	b->max = max ? max : 1;
}

struct bud_key {
	const struct rec_jitbud *b;
	uint64_t k1, k2;
};

static bool ent_below(const void *ctx, size_t i)
{
	const struct bud_key *k = ctx;
	const struct rec_jitbud_ent *e = &k->b->e[i];

	return e->k1 < k->k1 || (e->k1 == k->k1 && e->k2 < k->k2);
}

static size_t lower(const struct rec_jitbud *b, uint64_t k1, uint64_t k2)
{
	return sac_lower_bound(b->n, ent_below, &(struct bud_key){b, k1, k2});
}

static struct rec_jitbud_ent *find(struct rec_jitbud *b, uint64_t k1, uint64_t k2)
{
	size_t i = lower(b, k1, k2);

	if (i < b->n && b->e[i].k1 == k1 && b->e[i].k2 == k2)
		return &b->e[i];
	return NULL;
}

/* Refill @e to @now: burst bytes per refill_s seconds, up to burst. */
static void refill(const struct rec_jitbud *b, struct rec_jitbud_ent *e, uint64_t now)
{
	unsigned __int128 add;

	if (now <= e->t_ns)
		return;
	add = (unsigned __int128)b->burst * (now - e->t_ns) / (b->refill_s * 1000000000ull);
	e->t_ns = now;
	if (add >= b->burst - e->tokens)
		e->tokens = b->burst;
	else
		e->tokens += (uint64_t)add;
}

uint64_t rec_jitbud__avail(struct rec_jitbud *b, uint64_t k1, uint64_t k2, uint64_t now_ns)
{
	struct rec_jitbud_ent *e = find(b, k1, k2);

	if (!e)
		return b->burst;
	refill(b, e, now_ns);
	return e->tokens;
}

/* Forget the entry with the most bytes left (it spent least), for a new key. */
static void evict(struct rec_jitbud *b, uint64_t now)
{
	size_t i, best = 0;

	for (i = 0; i < b->n; i++) {
		refill(b, &b->e[i], now);
		if (b->e[i].tokens > b->e[best].tokens)
			best = i;
	}
	memmove(&b->e[best], &b->e[best + 1], (b->n - best - 1) * sizeof(*b->e));
	b->n--;
}

int rec_jitbud__spend(struct rec_jitbud *b, uint64_t k1, uint64_t k2, uint64_t n, uint64_t now_ns)
{
	struct rec_jitbud_ent *e = find(b, k1, k2);
	size_t i;

	if (!e) {
		if (b->n >= b->max)
			evict(b, now_ns);
		if (SAC_GROW(b->e, b->cap, b->n + 1, 64))
			return -ENOMEM;
		i = lower(b, k1, k2);
		memmove(&b->e[i + 1], &b->e[i], (b->n - i) * sizeof(*b->e));
		b->e[i] = (struct rec_jitbud_ent){k1, k2, b->burst, now_ns};
		b->n++;
		e = &b->e[i];
	}
	refill(b, e, now_ns);
	e->tokens = n < e->tokens ? e->tokens - n : 0;
	return 0;
}

void rec_jitbud__fini(struct rec_jitbud *b)
{
	free(b->e);
	memset(b, 0, sizeof(*b));
}
