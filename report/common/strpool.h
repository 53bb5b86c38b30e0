/* SPDX-License-Identifier: MIT */
/*
 * strpool.h - small building blocks of the symbolizing pipeline: an
 * interning string pool (names are offsets into one buffer, never a strdup
 * per frame), an open-addressing u64 -> u64 hash map used for caches, and
 * the doubling array growth every report/ file uses.
 */
#ifndef SA_REPORT_STRPOOL_H
#define SA_REPORT_STRPOOL_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

struct rpt_strpool {
	char *buf; /* offset 0 holds "" */
	size_t len, cap;
	uint64_t *index; /* hash << 32 | offset, open addressing, 0 = empty slot */
	size_t index_cap, n;
};

/** rpt_strpool__init() - an empty pool. @return 0 or -ENOMEM. */
int rpt_strpool__init(struct rpt_strpool *sp);

/** rpt_strpool__fini() - release the pool's memory. Safe on a zeroed pool. */
void rpt_strpool__fini(struct rpt_strpool *sp);

/**
 * rpt_strpool__intern() - the offset of @s[0..len), adding it if new.
 * @s: copied; need not be NUL terminated. A NUL inside cuts the name there.
 * @return the offset (0 for ""), or -ENOMEM.
 */
int64_t rpt_strpool__intern(struct rpt_strpool *sp, const char *s, size_t len);

/** rpt_strpool__str() - the string at @off. Borrowed; valid until the next intern. */
static inline const char *rpt_strpool__str(const struct rpt_strpool *sp, uint32_t off)
{
	return sp->buf + off;
}

struct rpt_hmap_slot {
	uint64_t key;
	uint64_t val;
};

/* u64 -> u64 map; key UINT64_MAX is reserved (empty slot marker). */
struct rpt_hmap {
	struct rpt_hmap_slot *slots;
	size_t cap, n;
};

/** rpt_hmap__get() - the value of @key in @val. @return true if present. */
bool rpt_hmap__get(const struct rpt_hmap *m, uint64_t key, uint64_t *val);

/** rpt_hmap__put() - set @key to @val. @return 0 or -ENOMEM. */
int rpt_hmap__put(struct rpt_hmap *m, uint64_t key, uint64_t val);

/** rpt_hmap__fini() - release the map's memory. Safe on a zeroed map. */
void rpt_hmap__fini(struct rpt_hmap *m);

#endif /* SA_REPORT_STRPOOL_H */
