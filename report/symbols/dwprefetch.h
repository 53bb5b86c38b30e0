/* SPDX-License-Identifier: MIT */
/*
 * dwprefetch.h - debug files opened ahead (rpt_dwload) on a second thread
 * while the recording is still being read: inflating libc's DWARF is the
 * longest step of symbolization. Used only by symbolize.c.
 */
#ifndef SA_REPORT_DWPREFETCH_H
#define SA_REPORT_DWPREFETCH_H

#include <stdbool.h>

#include "dwload.h"

struct rpt_dwprefetch;

/**
 * rpt_dwprefetch__new() - a prefetcher: rpt_dwload__open() of queued debug
 * files on one worker thread, most wanted (uses times file size) first.
 * @lines as for rpt_dwload__open(). @return it, or NULL (one CPU, or no thread could be
 * made: then callers open files themselves).
 */
struct rpt_dwprefetch *rpt_dwprefetch__new(bool lines);

/**
 * rpt_dwprefetch__want() - queue @path (copied), whose GNU build id must be
 * @hex (lower-case, copied). @return the job's number (the same for a path
 * queued already), -EAGAIN when the worker could not be started, or -ENOMEM.
 */
int rpt_dwprefetch__want(struct rpt_dwprefetch *p, const char *path, const char *hex);

/**
 * rpt_dwprefetch__bump() - one more use of job @job (a binary mapped once
 * more): the pending job worth most is opened next. Only from the thread
 * that calls rpt_dwprefetch__want().
 */
void rpt_dwprefetch__bump(struct rpt_dwprefetch *p, int job);

/**
 * rpt_dwprefetch__busy() - a debug file is queued or being built: a lookup
 * in it may have to wait.
 */
bool rpt_dwprefetch__busy(struct rpt_dwprefetch *p);

/**
 * rpt_dwprefetch__hold() - start no pending job until rpt_dwprefetch__want()
 * queues a new one: every file the caller needs now was taken, the rest
 * would only compete with it for the CPU (and delay the join at
 * rpt_dwprefetch__free()).
 */
void rpt_dwprefetch__hold(struct rpt_dwprefetch *p);

/**
 * rpt_dwprefetch__take() - the opened DWARF of @path. While the worker is
 * inflating it, the caller inflates the sections not claimed yet but
 * .debug_info, waits for the others, and gets the DWARF while .debug_info
 * still arrives (rpt_dwload__cu() waits for its units); a job not started
 * yet is cancelled. @return the object, now owned
 * by the caller, or NULL (not queued, not started, build id mismatch, or
 * failed).
 */
struct rpt_dwload *rpt_dwprefetch__take(struct rpt_dwprefetch *p, const char *path);

/**
 * rpt_dwprefetch__drop() - have @fn(@arg) run on the worker thread, soon
 * (before rpt_dwprefetch__free() returns at the latest): releasing what is
 * no longer needed overlaps the caller's own work.
 * @return 0, or -EAGAIN when no worker runs (-ENOMEM): call @fn yourself.
 */
int rpt_dwprefetch__drop(struct rpt_dwprefetch *p, void (*fn)(void *), void *arg);

/** rpt_dwprefetch__free() - stop and join the worker, free what nobody took. Accepts NULL. */
void rpt_dwprefetch__free(struct rpt_dwprefetch *p);

#endif /* SA_REPORT_DWPREFETCH_H */
