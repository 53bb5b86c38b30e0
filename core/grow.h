/* SPDX-License-Identifier: MIT */
/*
 * grow.h - room for one more element (or n more) in a realloc'ed array that
 * doubles, the one form of the growth idiom record/ and report/ both use,
 * and the one call a destructor frees its buffers with.
 */
#ifndef SAC_GROW_H
#define SAC_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/**
 * sac_grow_realloc() - sac_grow() where the array is full; with @max, a
 * capacity in elements it may not pass (SIZE_MAX: none): -EFBIG, nothing
 * changed, when the doubled capacity would.
 */
int sac_grow_realloc(void **buf, size_t *cap, size_t need, size_t elem, size_t init, size_t max);

/**
 * sac_grow() - make room for @need elements of @elem bytes in the array
 * *@buf of capacity *@cap (in elements): the capacity doubles from @init
 * (> 0), or from *@cap when it is not 0, until it holds @need. On success
 * *@buf and *@cap may change; on failure both are left as they were, so the
 * caller still owns (and frees) the old array. The check is inline, so a
 * caller that does not need to grow pays no call.
 * @return 0 or -ENOMEM (also when the size in bytes would overflow).
 */
static inline int sac_grow(void **buf, size_t *cap, size_t need, size_t elem, size_t init)
{
	if (need <= *cap)
		return 0;
	return sac_grow_realloc(buf, cap, need, elem, init, SIZE_MAX);
}

/**
 * sac_grow_max() - sac_grow() for an array that may hold at most @max
 * elements: -EFBIG, with *@buf and *@cap left as they were, when the
 * capacity doubled to hold @need would pass @max.
 * @return 0, -EFBIG or -ENOMEM.
 */
static inline int sac_grow_max(void **buf, size_t *cap, size_t need, size_t elem, size_t init,
			       size_t max)
{
	if (need <= *cap)
		return 0;
	return sac_grow_realloc(buf, cap, need, elem, init, max);
}

/*
 * SAC_GROW() - sac_grow() on array @p (any object pointer) with size_t
 * capacity @cap: room for @need elements, doubling from @init.
 */
#define SAC_GROW(p, cap, need, init) sac_grow((void **)&(p), &(cap), (need), sizeof(*(p)), (init))

/** sac_free_n() - free() each of the @n pointers in @p (NULL ones too). */
static inline void sac_free_n(void *const *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i]);
}

/*
 * SAC_FREE_ALL() - free() every pointer argument, in order: the buffers an
 * object owns and, last, the object itself. The arguments are read before
 * any is freed, so `SAC_FREE_ALL(o->a, o->b, o)` is safe.
 */
#define SAC_FREE_ALL(...)                                                                          \
	sac_free_n((void *const[]){__VA_ARGS__},                                                   \
		   sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

#endif /* SAC_GROW_H */
