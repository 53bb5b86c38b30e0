/* SPDX-License-Identifier: MIT */
/*
 * fguard.h - a deadline on work that may wait for a file system that never
 * answers (a stopped FUSE server, a hard NFS mount): the work runs on a
 * worker thread, and a caller waits at most a deadline; a device that made
 * it wait is skipped for the rest of the run (docs/security.md).
 */
#ifndef REC_FGUARD_H
#define REC_FGUARD_H

#include <stdbool.h>
#include <stdint.h>

/*
 * 500 ms per file (opening a local file takes well under 1 ms; 500 ms leaves
 * room for a loaded host), at most 4 workers left waiting: a file system
 * that never answers costs 500 ms per device, 2 s over a whole run at most.
 */
#define REC_FGUARD_DEADLINE_MS 500u
#define REC_FGUARD_MAX_STUCK   4u

struct rec_fguard_stats {
	uint64_t timeouts; /* jobs abandoned at their deadline */
	uint64_t skipped;  /* jobs not run: their device had timed out, or no worker was left */
	uint64_t copies;   /* files of a file system that may block, copied whole in time */
	uint32_t blocked;  /* devices skipped for the rest of the run */
	uint32_t stuck;	   /* workers still waiting for an answer */
};

/**
 * rec_fguard_enable() - from now on, rec_fguard_run() uses a worker with a
 * deadline of @deadline_ms (0: REC_FGUARD_DEADLINE_MS). Until it is called,
 * work runs inline (tests, fuzzing, tools). Later calls do nothing. Call
 * it before any thread that opens files starts.
 */
void rec_fguard_enable(unsigned int deadline_ms);

/**
 * rec_fguard_run() - run @fn(@arg) on the worker and wait for it at most
 * the deadline; inline when the guard is off or on the worker itself.
 * @release: called with @arg on the worker when @fn returns after its
 * caller gave up (the job is then the worker's); frees what @fn made.
 * The deadline counts from when the worker takes the job, and is extended
 * while the worker is runnable (starved of CPU, not waiting), up to 10 s.
 * @return @fn's result; -ETIMEDOUT when the deadline passed (@arg now
 * belongs to the worker: the caller must not touch it again), or -EAGAIN
 * if so on a local file system (a slow disk: the device is not skipped);
 * -EDEADLK when the job was not run (no worker left: @arg is still the
 * caller's).
 * Thread-safe; callers are served one at a time.
 */
int rec_fguard_run(int (*fn)(void *arg), void *arg, void (*release)(void *arg, int ret));

/**
 * rec_fguard_dev() - the device (st_dev) the running job is about to touch:
 * noted, so that a timeout skips it from then on.
 * @return 0, or -ETIMEDOUT when that device already timed out (skip it;
 * counted as skipped).
 */
int rec_fguard_dev(uint64_t dev);

/**
 * rec_fguard_local() - the running job's device is a local disk or memory
 * file system (safeopen.c asks fstatfs()): a timeout there is the host's
 * load, and does not skip the device.
 */
void rec_fguard_local(void);

/**
 * rec_fguard_is_local() - whether device @dev is a local disk or memory file
 * system: one of our mounts (/proc/self/mountinfo at rec_fguard_enable()),
 * or one a job found so.
 */
bool rec_fguard_is_local(uint64_t dev);

/** rec_fguard_blocked() - whether device @dev timed out before (counted as skipped if so). */
bool rec_fguard_blocked(uint64_t dev);

/** rec_fguard_on() - whether the guard is on (rec_fguard_enable() was called). */
bool rec_fguard_on(void);

/** rec_fguard_copied() - count one file copied whole (safeopen.c). */
void rec_fguard_copied(void);

/** rec_fguard_stats() - the counters so far; thread-safe. */
void rec_fguard_stats(struct rec_fguard_stats *st);

#endif /* REC_FGUARD_H */
