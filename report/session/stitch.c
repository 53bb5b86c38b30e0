// SPDX-License-Identifier: MIT
/*
 * stitch.c - the outer frames of --call-graph auto's frame-pointer walks.
 * A frame-pointer walk ends where the chain leaves code built with frame
 * pointers: under main, at the return address into glibc's
 * __libc_start_call_main, without __libc_start_main and _start, which the
 * CFI unwind of a stack copy of the same process shows. The frames above a
 * return address that close to the root depend on that address only (its
 * function was entered from one place), so a walk ending at address R
 * takes the frames the process image's unwound stacks show above R, when
 * all of them agree and there are at most STITCH_MAX_OUTER.
 */
#include <errno.h>
#include <string.h>

#include "hash.h"
#include "session_int.h"

#define STITCH_MAX_OUTER 3
#define STITCH_CONFLICT	 UINT64_MAX
#define STITCH_POS_BITS	 10 /* RPT_USTACK_MAX_FRAMES fits */

_Static_assert(RPT_USTACK_MAX_FRAMES < 1 << STITCH_POS_BITS, "frame positions fit");

static uint64_t stitch_key(uint32_t pid, uint32_t gen, uint64_t addr)
{
	uint64_t k[2] = {(uint64_t)pid << 32 | gen, addr};
	uint64_t h = sac_hash_fnv(k, sizeof(k), 0x57);

	return h == UINT64_MAX ? 0 : h; /* UINT64_MAX is rpt_hmap's empty mark */
}

/* The frames above position @v's frame: their count, and where they start. */
static uint32_t outer_of(const struct rpt_loaded *l, uint64_t v, uint64_t *first)
{
	const struct rpt_stackref *r = &l->refs[v >> STITCH_POS_BITS];
	uint32_t i = (uint32_t)(v & ((1u << STITCH_POS_BITS) - 1));

	*first = r->first + i + 1;
	return r->n - i - 1;
}

static bool same_outer(const struct rpt_loaded *l, uint64_t a, uint64_t b)
{
	uint64_t fa, fb;
	uint32_t na = outer_of(l, a, &fa), nb = outer_of(l, b, &fb);

	return na == nb && !memcmp(&l->ips[fa], &l->ips[fb], na * sizeof(*l->ips));
}

/* Index the return addresses near the root of @c's unwound stack. */
static int index_stack(struct rpt_loaded *l, const struct rpt_count *c)
{
	const struct rpt_stackref *r;
	uint64_t idx, old;

	if (!rpt_loaded__stack(l, c->k.ustack, &idx))
		return 0;
	r = &l->refs[idx];
	for (uint32_t i = r->n > STITCH_MAX_OUTER + 1 ? r->n - STITCH_MAX_OUTER - 1 : 1;
	     i + 1 < r->n; i++) {
		uint64_t key = stitch_key(c->k.pid, c->k.gen, l->ips[r->first + i]);
		uint64_t v = idx << STITCH_POS_BITS | i;

		if (rpt_hmap__get(&l->stitch, key, &old)) {
			if (old == STITCH_CONFLICT || same_outer(l, old, v))
				continue;
			v = STITCH_CONFLICT;
		}
		if (rpt_hmap__put(&l->stitch, key, v))
			return -ENOMEM;
	}
	return 0;
}

int rpt_loaded__stitch_index(struct rpt_loaded *l)
{
	for (size_t i = 0; i < l->counts_cap; i++) {
		const struct rpt_count *c = &l->counts[i];
		int err;

		if (!c->used || !rpt_loaded__unwound(l, c->k.ustack))
			continue;
		err = index_stack(l, c);
		if (err)
			return err;
	}
	return 0;
}

uint32_t rpt_loaded__stitch(const struct rpt_loaded *l, const struct rpt_count *c,
			    const struct rpt_stackref *ref, uint64_t *first)
{
	uint64_t v;

	if (!l->nustacks || ref->n < 2 || rpt_loaded__unwound(l, c->k.ustack) ||
	    !rpt_hmap__get(&l->stitch,
			   stitch_key(c->k.pid, c->k.gen, l->ips[ref->first + ref->n - 1]), &v) ||
	    v == STITCH_CONFLICT)
		return 0;
	return outer_of(l, v, first);
}
