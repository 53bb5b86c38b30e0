// SPDX-License-Identifier: MIT
/*
 * maps.c - per (pid, exec generation) mapping timelines, looked up by
 * address and time. Mappings are sorted by start once; a lookup scans back
 * only as far as the longest mapping reaches.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "grow.h"
#include "lowerbound.h"
#include "maps.h"

struct rpt_proc *rpt_maps__proc(struct rpt_maps *m, uint32_t pid, uint32_t gen)
{
	uint64_t key = (uint64_t)pid << 32 | gen, idx;
	struct rpt_proc *p;

	m->last_valid = false; /* an image may be added, or moved */
	if (m->proc_valid && m->proc_key == key)
		return &m->procs[m->proc_idx];
	if (rpt_hmap__get(&m->index, key, &idx)) {
		m->proc_key = key;
		m->proc_idx = idx;
		m->proc_valid = true;
		return &m->procs[idx];
	}
	if (SAC_GROW(m->procs, m->cap, m->nprocs + 1, 64))
		return NULL;
	if (rpt_hmap__put(&m->index, key, m->nprocs))
		return NULL;
	m->proc_key = key;
	m->proc_idx = m->nprocs;
	m->proc_valid = true;
	p = &m->procs[m->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->gen = gen;
	return p;
}

int rpt_maps__add(struct rpt_maps *m, uint32_t pid, uint32_t gen, const struct rpt_map *map)
{
	struct rpt_proc *p = rpt_maps__proc(m, pid, gen);

	if (!p)
		return -ENOMEM;
	if (map->end <= map->start)
		return 0;
	if (SAC_GROW(p->maps, p->maps_cap, p->nmaps + 1, 16))
		return -ENOMEM;
	p->maps[p->nmaps++] = *map;
	if (map->end - map->start > p->max_len)
		p->max_len = map->end - map->start;
	p->sorted = false;
	return 0;
}

static int map_cmp(const void *a, const void *b)
{
	const struct rpt_map *x = a, *y = b;

	return SAC_CMP(x->start, y->start) ?: SAC_CMP(x->time_ns, y->time_ns);
}

static struct rpt_proc *proc_get(struct rpt_maps *m, uint32_t pid, uint32_t gen)
{
	uint64_t key = (uint64_t)pid << 32 | gen, idx;

	/* a stack's frames ask for the same image one after the other */
	if (m->last_valid && m->last_key == key)
		return m->last;
	m->last_valid = true;
	m->last_key = key;
	m->last = NULL;
	/* a gen without metadata of its own: use the nearest earlier image */
	for (uint32_t g = gen, tries = 0; tries < 16; g--, tries++) {
		if (rpt_hmap__get(&m->index, (uint64_t)pid << 32 | g, &idx) &&
		    m->procs[idx].nmaps) {
			m->last = &m->procs[idx];
			break;
		}
		if (!g)
			break;
	}
	return m->last;
}

/* Sort by start, and note how far each prefix reaches (NULL on ENOMEM: slower, still right). */
static void sort_maps(struct rpt_proc *p)
{
	uint64_t reach = 0;

	free(p->reach);
	p->reach = NULL;
	p->sorted = true;
	if (!p->nmaps) /* p->maps is NULL when empty */
		return;
	qsort(p->maps, p->nmaps, sizeof(*p->maps), map_cmp);
	p->reach = malloc(p->nmaps * sizeof(*p->reach));
	p->disjoint = true;
	p->hit = 0;
	for (size_t i = 0; i < p->nmaps; i++) {
		if (p->maps[i].start < reach)
			p->disjoint = false;
		if (p->maps[i].end > reach)
			reach = p->maps[i].end;
		if (p->reach)
			p->reach[i] = reach;
	}
}

const struct rpt_map *rpt_maps__find(struct rpt_maps *m, uint32_t pid, uint32_t gen, uint64_t addr,
				     uint64_t time_ns)
{
	struct rpt_proc *p = proc_get(m, pid, gen);
	const struct rpt_map *before = NULL, *after = NULL;
	ssize_t i;

	if (!p)
		return NULL;
	if (!p->sorted)
		sort_maps(p);
	/* no overlap: the one mapping holding @addr is the answer, whatever the time */
	if (p->disjoint &&
	    addr - p->maps[p->hit].start < p->maps[p->hit].end - p->maps[p->hit].start)
		return &p->maps[p->hit];
	/* the last mapping starting at or below @addr, and those before it */
	i = (ssize_t)SAC_FIRST_ABOVE(p->maps, p->nmaps, start, addr) - 1;
	for (; i >= 0 && addr - p->maps[i].start < p->max_len && (!p->reach || addr < p->reach[i]);
	     i--) {
		const struct rpt_map *c = &p->maps[i];

		if (addr >= c->end)
			continue;
		if (p->disjoint) {
			p->hit = (size_t)i;
			return c;
		}
		if (c->time_ns <= time_ns) {
			if (!before || c->time_ns > before->time_ns)
				before = c;
		} else if (!after || c->time_ns < after->time_ns) {
			after = c;
		}
	}
	return before ? before : after;
}

void rpt_maps__fini(struct rpt_maps *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		free(m->procs[i].maps);
		free(m->procs[i].reach);
	}
	free(m->procs);
	rpt_hmap__fini(&m->index);
	memset(m, 0, sizeof(*m));
}
