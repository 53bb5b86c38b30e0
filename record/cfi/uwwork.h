/* SPDX-License-Identifier: MIT */
/*
 * uwwork.h - the thread that builds the in-kernel unwinder's tables off the
 * recorder's main thread (docs/unwinding.md "Built off the main thread"):
 * uwtab.c posts a file, the worker parses its CFI into rows (uwbuild.c),
 * and uwtab.c takes the finished table back and installs it. The worker
 * touches no BPF map and no state of uwtab.c, so that stopping never waits
 * for it longer than a bound.
 */
#ifndef REC_UWWORK_H
#define REC_UWWORK_H

#include <stdint.h>
#include "uwtab.h"

/* One file to build; filled in by the worker. */
struct rec_uwjob {
	struct rec_uwjob *next;
	int fd;		    /* owned: closed once built */
	uint64_t dev, ino;  /* the file, as uwtab.c keys it */
	uint64_t seq;	    /* uwtab.c's number of this build */
	uint64_t posted_ns; /* CLOCK_MONOTONIC */
	int skip;	    /* set (atomically) by the main thread: no process maps the file now */
	int err;	    /* rec_uw_build()'s; -ECANCELED when skipped */
	uint64_t cpu_ns;    /* the worker's CPU time on it */
	struct rec_uwfile f;
};

struct rec_uwwork;

/**
 * rec_uwwork__new() - start the worker, at nice 0 (or the recorder's nice
 * value if higher: never raised above normal) and SCHED_OTHER, with every
 * signal blocked. Each build is bounded by @max_ns of the worker's CPU time.
 * For tests, $SA_RECORD_TEST_UW_DELAY_MS makes the worker sleep that long,
 * deaf to the stop, before each build: a build stuck in a file system.
 * @return an object released with rec_uwwork__free(), or NULL with errno.
 */
struct rec_uwwork *rec_uwwork__new(uint64_t max_ns);

/** rec_uwwork__post() - queue @j (owned from now on) for the worker. */
void rec_uwwork__post(struct rec_uwwork *w, struct rec_uwjob *j);

/**
 * rec_uwwork__done() - a finished job, oldest first, or NULL when none is.
 * The caller owns it: rec_uwjob__free(). Never blocks on a build.
 */
struct rec_uwjob *rec_uwwork__done(struct rec_uwwork *w);

/** rec_uwwork__queued() - jobs posted and not yet taken back by rec_uwwork__done(). */
uint64_t rec_uwwork__queued(struct rec_uwwork *w);

/** rec_uwjob__free() - close its fd, free its rows and itself. Accepts NULL. */
void rec_uwjob__free(struct rec_uwjob *j);

/**
 * rec_uwwork__free() - stop the worker: a build under way is told to stop,
 * and waited for at most @wait_ns; past that the worker is left to end
 * alone (it owns the object then, and frees it) or with the process.
 * Accepts NULL.
 */
void rec_uwwork__free(struct rec_uwwork *w, uint64_t wait_ns);

#endif /* REC_UWWORK_H */
