/* SPDX-License-Identifier: MIT */
/*
 * jitbudget.h - byte budgets for reading perf maps (jitmap.c), kept per key
 * (a file's device and inode, or an owner uid) for the whole run, so a
 * rotation that reads every map again spends from the same budget. Each
 * budget is a token bucket: full at @burst bytes, refilled at @burst per
 * @refill_s seconds. The table owns its entries; it is bounded to @max keys:
 * past that, the key that spent least is forgotten (it starts full again).
 */
#ifndef REC_JITBUDGET_H
#define REC_JITBUDGET_H

#include <stddef.h>
#include <stdint.h>

struct rec_jitbud_ent {
	uint64_t k1, k2;
	uint64_t tokens; /* bytes left at t_ns */
	uint64_t t_ns;
};

struct rec_jitbud {
	struct rec_jitbud_ent *e; /* sorted by (k1, k2) */
	size_t n, cap, max;
	uint64_t burst;
	uint64_t refill_s;
};

/** rec_jitbud__init() - an empty table of budgets of @burst bytes each. */
void rec_jitbud__init(struct rec_jitbud *b, uint64_t burst, uint64_t refill_s, size_t max);

/**
 * rec_jitbud__avail() - bytes key (@k1, @k2) may still read at @now_ns: its
 * bucket refilled to @now_ns, or @burst for a key never charged.
 */
uint64_t rec_jitbud__avail(struct rec_jitbud *b, uint64_t k1, uint64_t k2, uint64_t now_ns);

/**
 * rec_jitbud__spend() - charge @n bytes to key (@k1, @k2) at @now_ns.
 * @return 0 or -ENOMEM (the bytes are then not charged).
 */
int rec_jitbud__spend(struct rec_jitbud *b, uint64_t k1, uint64_t k2, uint64_t n, uint64_t now_ns);

/** rec_jitbud__fini() - free the table. */
void rec_jitbud__fini(struct rec_jitbud *b);

#endif /* REC_JITBUDGET_H */
