// SPDX-License-Identifier: MIT
/*
 * deadline.c - one drain's deadlines: its own, a budget after its flip
 * (a storm's stacks took a drain 20 s), and once the recording stops,
 * the stop path's: the drain under way at the stop is cut a fixed time
 * after it, the last drain gets what the end's budget leaves
 * (docs/reliability.md, "The stop path").
 */
#include "deadline.h"

/* The earlier of two deadlines, 0 being none. */
static uint64_t earlier(uint64_t a, uint64_t b)
{
	return !a ? b : !b || a < b ? a : b;
}

/* The stop's time, 0 before one is known. */
static uint64_t stop_ns(const struct rec_deadline *dl)
{
	return earlier(dl->signal_ns ? *dl->signal_ns : 0, dl->end_at);
}

void rec_deadline__begin(struct rec_deadline *dl, uint64_t start_ns)
{
	dl->stacks = dl->budget_ns ? start_ns + dl->budget_ns : 0;
	dl->counts = dl->budget_ns ? dl->stacks + dl->budget_ns : 0;
	dl->last_stacks = dl->last_counts = 0;
}

void rec_deadline__set_stop(struct rec_deadline *dl, const volatile uint64_t *signal_ns,
			    uint64_t end_at, uint64_t stacks_ns, uint64_t counts_ns)
{
	dl->signal_ns = signal_ns;
	dl->end_at = end_at;
	dl->busy_stacks_ns = stacks_ns;
	dl->busy_counts_ns = counts_ns;
}

void rec_deadline__last(struct rec_deadline *dl, uint64_t now_ns, uint64_t until_ns)
{
	dl->last_counts = until_ns > now_ns ? until_ns : now_ns;
	dl->last_stacks = now_ns + (dl->last_counts - now_ns) / 2;
	if (!dl->last_stacks) /* a clock at 0: still a deadline */
		dl->last_stacks = dl->last_counts = 1;
}

/* The stop path's cap on a deadline, @after_stop_ns after the stop (0: none). */
static uint64_t stop_cap(const struct rec_deadline *dl, uint64_t last, uint64_t after_stop_ns)
{
	uint64_t s;

	if (dl->last_counts)
		return last;
	s = stop_ns(dl);
	return s && (dl->busy_stacks_ns || dl->busy_counts_ns) ? s + after_stop_ns : 0;
}

uint64_t rec_deadline__stacks(const struct rec_deadline *dl)
{
	return earlier(dl->stacks, stop_cap(dl, dl->last_stacks, dl->busy_stacks_ns));
}

uint64_t rec_deadline__counts(const struct rec_deadline *dl)
{
	return earlier(dl->counts, stop_cap(dl, dl->last_counts, dl->busy_counts_ns));
}

uint64_t rec_deadline__describe(const struct rec_deadline *dl, uint64_t now_ns)
{
	uint64_t until = dl->counts;

	if (until && until < now_ns + dl->budget_ns / 2)
		until = now_ns + dl->budget_ns / 2;
	return earlier(until, stop_cap(dl, dl->last_counts, dl->busy_counts_ns));
}
