/* SPDX-License-Identifier: MIT */
/*
 * uwalloc.h - slices of the in-kernel unwinder's row array (uwtab.c): free
 * extents kept sorted and merged, taken first fit, so that the rows of a
 * table freed (its file no longer mapped) serve the next tables. The
 * allocator owns its extent list; the rows themselves live in a BPF map.
 */
#ifndef REC_UWALLOC_H
#define REC_UWALLOC_H

#include <stddef.h>
#include <stdint.h>

struct rec_uwalloc {
	struct rec_uwext {
		uint32_t start, n;
	} * v; /* free extents, sorted by start, none adjacent */
	size_t nv, cap;
	uint32_t total; /* rows in the array */
	uint32_t used;	/* rows handed out */
};

/** rec_uwalloc__init() - @total rows, all free. @return 0 or -ENOMEM. */
int rec_uwalloc__init(struct rec_uwalloc *a, uint32_t total);

/** rec_uwalloc__get() - @n rows (> 0) in one slice. @return its first row, or -ENOSPC. */
int64_t rec_uwalloc__get(struct rec_uwalloc *a, uint32_t n);

/**
 * rec_uwalloc__put() - give back the slice [@start, @start + @n) that
 * rec_uwalloc__get() returned. @return 0, or -ENOMEM when the extent list
 * could not grow (the rows are then lost to the budget, never handed out twice).
 */
int rec_uwalloc__put(struct rec_uwalloc *a, uint32_t start, uint32_t n);

/** rec_uwalloc__largest() - the longest free slice, in rows. */
uint32_t rec_uwalloc__largest(const struct rec_uwalloc *a);

/** rec_uwalloc__fini() - release the extent list. */
void rec_uwalloc__fini(struct rec_uwalloc *a);

#endif /* REC_UWALLOC_H */
