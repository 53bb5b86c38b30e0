/* SPDX-License-Identifier: MIT */
/*
 * lowerbound.h - the one lower-bound search over a sorted array, for
 * core/, record/ and report/, its two common forms over a uint64_t field,
 * and the three-way comparison such arrays are sorted with. Header only:
 * inlined with its predicate, it costs what a loop written out costs.
 */
#ifndef SA_CORE_LOWERBOUND_H
#define SA_CORE_LOWERBOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* An array of @size-byte elements sorted by the uint64_t at byte @off of each. */
struct sac_u64_key {
	const char *base;
	size_t size, off;
	uint64_t key;
};

static inline uint64_t sac_u64_at(const struct sac_u64_key *k, size_t i)
{
	uint64_t v;

	memcpy(&v, k->base + i * k->size + k->off, sizeof(v));
	return v;
}

static inline bool sac_u64_below(const void *ctx, size_t i)
{
	const struct sac_u64_key *k = ctx;

	return sac_u64_at(k, i) < k->key;
}

static inline bool sac_u64_at_or_below(const void *ctx, size_t i)
{
	const struct sac_u64_key *k = ctx;

	return sac_u64_at(k, i) <= k->key;
}

/* 0, and compiles only where @field of @a's elements is a uint64_t. */
#define SAC_U64_FIELD(a, field)                                                                    \
	(0 * sizeof(char[__builtin_types_compatible_p(__typeof__((a)->field), uint64_t) ? 1 : -1]))

#define SAC_U64_KEY(a, field, k)                                                                   \
	(&(struct sac_u64_key){(const char *)(a), sizeof(*(a)),                                    \
			       offsetof(__typeof__(*(a)), field) + SAC_U64_FIELD(a, field), (k)})

/**
 * SAC_FIRST_NOT_BELOW() - the first index in [0, @n) of array @a (sorted by
 * its uint64_t @field) whose @field is not below @key, @n when none is.
 */
#define SAC_FIRST_NOT_BELOW(a, n, field, key)                                                      \
	sac_lower_bound((n), sac_u64_below, SAC_U64_KEY(a, field, key))

/**
 * SAC_FIRST_ABOVE() - the first index in [0, @n) of array @a (sorted by its
 * uint64_t @field) whose @field is above @key, @n when none is: the count
 * of elements at or below @key, one past the last of them.
 */
#define SAC_FIRST_ABOVE(a, n, field, key)                                                          \
	sac_lower_bound((n), sac_u64_at_or_below, SAC_U64_KEY(a, field, key))

/** SAC_CMP() - -1, 0 or 1 as @x is below, equal to or above @y; each read twice. */
#define SAC_CMP(x, y) (((x) > (y)) - ((x) < (y)))

#endif /* SA_CORE_LOWERBOUND_H */
