// SPDX-License-Identifier: MIT
/*
 * uwalloc.c - first-fit slices of the unwinder's row array over a sorted
 * list of free extents, merged with their neighbours when given back.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "grow.h"
#include "uwalloc.h"

int rec_uwalloc__init(struct rec_uwalloc *a, uint32_t total)
{
	*a = (struct rec_uwalloc){.total = total};
	if (!total)
		return 0;
	if (SAC_GROW(a->v, a->cap, 1, 16))
		return -ENOMEM;
	a->v[0] = (struct rec_uwext){0, total};
	a->nv = 1;
	return 0;
}

int64_t rec_uwalloc__get(struct rec_uwalloc *a, uint32_t n)
{
	size_t i;
	uint32_t start;

	for (i = 0; n && i < a->nv; i++) {
		if (a->v[i].n < n)
			continue;
		start = a->v[i].start;
		a->v[i].start += n;
		a->v[i].n -= n;
		if (!a->v[i].n) {
			memmove(&a->v[i], &a->v[i + 1], (a->nv - i - 1) * sizeof(*a->v));
			a->nv--;
		}
		a->used += n;
		return start;
	}
	return -ENOSPC;
}

int rec_uwalloc__put(struct rec_uwalloc *a, uint32_t start, uint32_t n)
{
	size_t i = 0;
	bool left, right;

	if (!n)
		return 0;
	while (i < a->nv && a->v[i].start < start)
		i++;
	left = i && a->v[i - 1].start + a->v[i - 1].n == start;
	right = i < a->nv && start + n == a->v[i].start;
	if (left && right) {
		a->v[i - 1].n += n + a->v[i].n;
		memmove(&a->v[i], &a->v[i + 1], (a->nv - i - 1) * sizeof(*a->v));
		a->nv--;
	} else if (left) {
		a->v[i - 1].n += n;
	} else if (right) {
		a->v[i].start = start;
		a->v[i].n += n;
	} else {
		if (SAC_GROW(a->v, a->cap, a->nv + 1, 16))
			return -ENOMEM;
		memmove(&a->v[i + 1], &a->v[i], (a->nv - i) * sizeof(*a->v));
		a->v[i] = (struct rec_uwext){start, n};
		a->nv++;
	}
	a->used -= n;
	return 0;
}

uint32_t rec_uwalloc__largest(const struct rec_uwalloc *a)
{
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < a->nv; i++)
		if (a->v[i].n > m)
			m = a->v[i].n;
	return m;
}

void rec_uwalloc__fini(struct rec_uwalloc *a)
{
	free(a->v);
	*a = (struct rec_uwalloc){0};
}
