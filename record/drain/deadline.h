/* SPDX-License-Identifier: MIT */
/*
 * deadline.h - until when one interval's drain reads stacks, writes
 * counts and describes them (deadline.c): its own deadlines, a budget
 * after its flip, capped once the recording stops by the stop path's
 * (docs/reliability.md, "The stop path"). Used by drain.c.
 */
#ifndef REC_DEADLINE_H
#define REC_DEADLINE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Times are CLOCK_MONOTONIC ns; 0 is "none". Zero-initialised: no
 * deadline at all. The fields are the setters' and deadline.c's.
 */
struct rec_deadline {
	uint64_t budget_ns;			 /* of the drain's own: 0, none */
	uint64_t stacks, counts;		 /* this drain's own, from rec_deadline__begin() */
	const volatile uint64_t *signal_ns;	 /* a stop signal's time, set by its handler */
	uint64_t end_at;			 /* a stop known ahead (--duration's end) */
	uint64_t busy_stacks_ns, busy_counts_ns; /* the drain under way at a stop */
	uint64_t last_stacks, last_counts;	 /* the last drain's (rec_deadline__last()) */
};

/**
 * rec_deadline__begin() - a drain begins at @start_ns (its flip and grace
 * period): stacks are read until one budget after it, counts written
 * until one more. Clears what rec_deadline__last() set.
 */
void rec_deadline__begin(struct rec_deadline *dl, uint64_t start_ns);

/**
 * rec_deadline__set_stop() - where the stop is seen from: *@signal_ns
 * (borrowed; 0 until a signal handler sets it) or @end_at (0: none), the
 * earlier. A drain under way at the stop reads stacks until
 * @stacks_ns after it and writes or describes counts until @counts_ns
 * after it, if its own deadlines end later.
 */
void rec_deadline__set_stop(struct rec_deadline *dl, const volatile uint64_t *signal_ns,
			    uint64_t end_at, uint64_t stacks_ns, uint64_t counts_ns);

/**
 * rec_deadline__last() - the next drain, from @now_ns, is the last: it
 * ends by @until_ns (reading stacks over the first half of what is left),
 * whatever its own deadlines and the stop's say.
 */
void rec_deadline__last(struct rec_deadline *dl, uint64_t now_ns, uint64_t until_ns);

/** rec_deadline__stacks() - when reading stacks ends (0: never). */
uint64_t rec_deadline__stacks(const struct rec_deadline *dl);

/** rec_deadline__counts() - when writing counts ends (0: never). */
uint64_t rec_deadline__counts(const struct rec_deadline *dl);

/**
 * rec_deadline__describe() - when describing the counts written, begun at
 * @now_ns, ends: the count deadline, or half a budget after @now_ns if
 * later, but never past the stop's or the last drain's (0: never).
 */
uint64_t rec_deadline__describe(const struct rec_deadline *dl, uint64_t now_ns);

/** rec_deadline__passed() - @now_ns is at or past @until_ns (0: never). */
static inline bool rec_deadline__passed(uint64_t until_ns, uint64_t now_ns)
{
	return until_ns && now_ns >= until_ns;
}

#endif /* REC_DEADLINE_H */
