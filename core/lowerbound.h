/* SPDX-License-Identifier: MIT */
/*
 * lowerbound.h - the one lower-bound search over a sorted array, for
 * core/, record/ and report/. Header only: inlined with its predicate, it
 * costs what a loop written out costs.
 */
#ifndef SA_CORE_LOWERBOUND_H
#define SA_CORE_LOWERBOUND_H

#include <stdbool.h>
#include <stddef.h>

/**
 * sac_lower_bound() - the first index in [0, @n) at which @below(@ctx, i)
 * is false, or @n when it holds at every index. @below must hold for a
 * prefix of the indexes and at none after it (the array is sorted by what
 * it tests); it is called about log2(@n) + 1 times. The last index where
 * it holds is the result minus one. @ctx: borrowed, passed to @below.
 */
static inline size_t sac_lower_bound(size_t n, bool (*below)(const void *ctx, size_t i),
				     const void *ctx)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (below(ctx, mid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif /* SA_CORE_LOWERBOUND_H */
