/* SPDX-License-Identifier: MIT */
/*
 * drain.h - one interval at a time out of the kernel and into the file
 * (drain.c): ring buffers, counts, stacks, off-CPU time and user stack
 * copies, and the totals of the whole recording. Used by loop.c; loss.c
 * and offcpu.c add to the totals.
 */
#ifndef REC_DRAIN_H
#define REC_DRAIN_H

#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <linux/types.h>
#include "sa_shared.h"

struct rec_procs;
struct rec_session;
struct saf_writer;

struct rec_drain;

/** Totals over the whole recording, for the status line and END. */
struct rec_totals {
	uint64_t runs, kept, filtered, lost, collisions, truncated, intervals;
	uint64_t off_runs, off_kept, off_short, off_lost, off_recovered; /* --off-cpu periods */
	uint64_t uw[SA_CTR__NR - SA_CTR_UW]; /* the in-kernel unwinder's counters, SA_CTR_UW on */
	uint64_t files_skipped; /* others' files their file system kept waiting (fguard.c) */
	uint64_t late;		/* of lost: samples the drain's deadlines dropped */
	uint64_t bare;	    /* of kept: samples whose process, names were not captured in time */
	uint64_t throttled; /* samples the kernel did not take: it throttled the events */
};

/**
 * rec_drain__new() - drain state for session @s writing to @w and noting
 * processes in @procs (all borrowed; they must outlive the drain).
 * @return a drain released with rec_drain__free(), or NULL with errno.
 */
struct rec_drain *rec_drain__new(struct rec_session *s, struct saf_writer *w,
				 struct rec_procs *procs);

/**
 * rec_drain__poll() - wait up to @timeout_ms for the ring buffer to pass its
 * wake-up threshold, then consume what it holds.
 * @return 0 or a negative errno (-EINTR is not an error: returns 0).
 */
int rec_drain__poll(struct rec_drain *d, int timeout_ms);

/**
 * rec_drain__interval() - end the current interval (begun at @start_ns) and
 * write it: flip the map set, wait @grace_ns (longer than one sample period,
 * so that every program run that read the old epoch has finished), then
 * drain the old set and write INTERVAL, COUNTs and LOSS.
 * @end_ns: gets the time of the flip, which ends this interval and starts
 * the next.
 * @return 0 or a negative errno (a write error or a map error).
 */
int rec_drain__interval(struct rec_drain *d, uint64_t start_ns, uint64_t grace_ns,
			uint64_t *end_ns);
struct rec_sc;
struct rec_uwtrim;

/** rec_drain__set_sc() - capture symbols and mappings through @sc (borrowed). */
void rec_drain__set_sc(struct rec_drain *d, struct rec_sc *sc);

struct rec_py;
/** rec_drain__set_py() - name CPython frames through @py (borrowed), or not (NULL). */
void rec_drain__set_py(struct rec_drain *d, struct rec_py *py);

/**
 * rec_drain__set_abort() - when *@abort (borrowed, set by a signal handler)
 * is non-zero, the ring buffers are read no further and the grace period
 * is cut short: a second stop signal ends the recording at once.
 */
void rec_drain__set_abort(struct rec_drain *d, volatile sig_atomic_t *abort);

/**
 * rec_drain__set_budget() - what reading one interval's stacks may take
 * after its grace period (0, the default: no limit). A stack not read by
 * then is not read, and counts not written by twice that are not written:
 * their samples are counted as lost in user space (lost_userspace; of
 * them, rec_totals.late). The processes, names and symbols of the counts
 * written are captured after them, until the count deadline or for half
 * @budget_ns if that ends later (the rest: rec_totals.bare), so one drain
 * takes at most the grace period, the rings' last look and 2.5 x
 * @budget_ns, plus one capture or symbol table read past its deadline and
 * compression (docs/reliability.md, "The stop path").
 */
void rec_drain__set_budget(struct rec_drain *d, uint64_t budget_ns);

/**
 * rec_drain__set_stop() - the stop path's deadlines (docs/reliability.md,
 * "The stop path"): the stop is *@signal_ns (borrowed; 0 until a signal
 * handler sets it) or @end_at (0: none), the earlier; a drain under way
 * then reads no stack @stacks_ns after it and writes or describes no
 * count @counts_ns after it. What they skip is counted as the budget's
 * deadlines' is. Ignored with SA_RECORD_TEST_NO_DEADLINE.
 */
void rec_drain__set_stop(struct rec_drain *d, const volatile uint64_t *signal_ns, uint64_t end_at,
			 uint64_t stacks_ns, uint64_t counts_ns);

/**
 * rec_drain__set_last() - the next rec_drain__interval() is the last: it
 * reads stacks over the first half of the time from its flip to
 * @until_ns, writes and describes counts until @until_ns (counted as
 * above when cut), looks at the rings no later than its stack deadline,
 * and leaves the stack maps to be freed with the program.
 */
void rec_drain__set_last(struct rec_drain *d, uint64_t until_ns);

/** rec_drain__set_trim() - keep only what an unwind reads of each stack copy (@trim borrowed). */
void rec_drain__set_trim(struct rec_drain *d, struct rec_uwtrim *trim);

/** rec_drain__totals() - counters summed over every interval written; borrowed. */
const struct rec_totals *rec_drain__totals(const struct rec_drain *d);

struct rec_starve;

/**
 * rec_drain__set_starve() - check at every poll whether the drain waits for
 * a CPU, and raise its priority then (@starve borrowed; starve.h).
 */
void rec_drain__set_starve(struct rec_drain *d, struct rec_starve *starve);

/** rec_drain__unique_stacks() - stacks written to the file so far. */
size_t rec_drain__unique_stacks(const struct rec_drain *d);

/**
 * rec_drain__keep_frames() - --rotate: keep what rec_drain__new_file() needs
 * to write a stack interned before a rotation again after it.
 * @return 0 or -ENOMEM.
 */
int rec_drain__keep_frames(struct rec_drain *d);

/**
 * rec_drain__new_file() - the writer moved to a new file, after an
 * interval's end: stacks are written there again as they are referenced.
 * @return the first stack id of the file just closed (smaller ids are no
 * longer referenced).
 */
__u32 rec_drain__new_file(struct rec_drain *d);

/** rec_drain__free() - release the drain state. Accepts NULL. */
void rec_drain__free(struct rec_drain *d);

#endif /* REC_DRAIN_H */
