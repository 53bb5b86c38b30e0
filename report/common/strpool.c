// SPDX-License-Identifier: MIT
/*
 * strpool.c - interning string pool and u64 -> u64 hash map of the report
 * pipeline. Both grow by doubling; lookups are O(1) expected,
 * so report cost follows the number of distinct names and addresses, not samples.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "strpool.h"

int rpt_strpool__init(struct rpt_strpool *sp)
{
	memset(sp, 0, sizeof(*sp));
	sp->cap = 4096;
	sp->buf = malloc(sp->cap);
	if (!sp->buf)
		return -ENOMEM;
	sp->buf[0] = '\0';
	sp->len = 1;
	return 0;
}

void rpt_strpool__fini(struct rpt_strpool *sp)
{
	free(sp->buf);
	free(sp->index);
	memset(sp, 0, sizeof(*sp));
}

/* A string's hash for the pool's index: eight bytes a step. */
static uint32_t str_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	if (len) {
		w = 0;
		memcpy(&w, s, len);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
	}
	return (uint32_t)sac_hash_mix64(h);
}

static int strpool_grow_index(struct rpt_strpool *sp)
{
	size_t ncap = sp->index_cap ? sp->index_cap * 2 : 1024;
	uint64_t *idx = calloc(ncap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < sp->index_cap; i++) {
		uint64_t e = sp->index[i];
		size_t j;

		if (!e)
			continue;
		j = (e >> 32) & (ncap - 1); /* the hash kept beside the offset */
		while (idx[j])
			j = (j + 1) & (ncap - 1);
		idx[j] = e;
	}
	free(sp->index);
	sp->index = idx;
	sp->index_cap = ncap;
	return 0;
}

int64_t rpt_strpool__intern(struct rpt_strpool *sp, const char *s, size_t len)
{
	const char *nul = memchr(s, '\0', len);
	uint32_t h;
	size_t j;

	if (nul)
		len = nul - s;
	if (!len)
		return 0;
	if ((sp->n + 1) * 2 > sp->index_cap && strpool_grow_index(sp))
		return -ENOMEM;
	h = str_hash(s, len);
	j = h & (sp->index_cap - 1);
	for (; sp->index[j]; j = (j + 1) & (sp->index_cap - 1)) {
		const char *c = sp->buf + (uint32_t)sp->index[j];

		if (sp->index[j] >> 32 == h && !strncmp(c, s, len) && c[len] == '\0')
			return (uint32_t)sp->index[j];
	}
	/* offsets are 32-bit: a pool past 4 GiB is out of memory */
	if (sac_grow_max((void **)&sp->buf, &sp->cap, sp->len + len + 1, 1, 4096, UINT32_MAX))
		return -ENOMEM;
	memcpy(sp->buf + sp->len, s, len);
	sp->buf[sp->len + len] = '\0';
	sp->index[j] = (uint64_t)h << 32 | sp->len;
	sp->n++;
	sp->len += len + 1;
	return (uint32_t)sp->index[j];
}

static size_t hmap_find(const struct rpt_hmap *m, uint64_t key)
{
	size_t j = sac_hash_mix64(key) & (m->cap - 1);

	while (m->slots[j].key != UINT64_MAX && m->slots[j].key != key)
		j = (j + 1) & (m->cap - 1);
	return j;
}

bool rpt_hmap__get(const struct rpt_hmap *m, uint64_t key, uint64_t *val)
{
	size_t j;

	if (!m->cap)
		return false;
	j = hmap_find(m, key);
	if (m->slots[j].key != key)
		return false;
	*val = m->slots[j].val;
	return true;
}

static int hmap_grow(struct rpt_hmap *m)
{
	struct rpt_hmap old = *m;

	m->cap = old.cap ? old.cap * 2 : 256;
	m->slots = malloc(m->cap * sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return -ENOMEM;
	}
	memset(m->slots, 0xff, m->cap * sizeof(*m->slots));
	for (size_t i = 0; i < old.cap; i++) {
		if (old.slots[i].key != UINT64_MAX)
			m->slots[hmap_find(m, old.slots[i].key)] = old.slots[i];
	}
	free(old.slots);
	return 0;
}

int rpt_hmap__put(struct rpt_hmap *m, uint64_t key, uint64_t val)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap && hmap_grow(m))
		return -ENOMEM;
	j = hmap_find(m, key);
	if (m->slots[j].key != key) {
		m->slots[j].key = key;
		m->n++;
	}
	m->slots[j].val = val;
	return 0;
}

void rpt_hmap__fini(struct rpt_hmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}
