/* SPDX-License-Identifier: MIT */
/*
 * starve.h - noticing that the recorder's thread waits for a CPU (a storm
 * of busy threads beside it) and raising its priority then (starve.c).
 * Made by loop.c before the start, checked by drain.c at every poll.
 */
#ifndef REC_STARVE_H
#define REC_STARVE_H

#include <stdint.h>

struct rec_starve;

/** What the watch saw, for the summary line. */
struct rec_starve_stats {
	uint64_t waited_ns; /* the longest wait for a CPU in one window */
	uint64_t window_ns; /* that window's length */
	int nice;	    /* the nice value it is raised to */
	int raised;	    /* 1 once raised */
	int raise_err;	    /* 0, or the -errno of a raise that failed */
	long runnable;	    /* runnable tasks on the host at the start */
};

/**
 * rec_starve__new() - watch the calling thread's wait for a CPU
 * (/proc/thread-self/schedstat), and raise it at once when the host has
 * far more runnable tasks than CPUs. The watch acts on that thread only.
 * @return a watch released with rec_starve__free(), or NULL with errno.
 */
struct rec_starve *rec_starve__new(void);

/**
 * rec_starve__check() - at most every REC_STARVE_WINDOW_NS: when the
 * thread waited on a run queue for more than a quarter of the window, set
 * its nice value to REC_STARVE_NICE (once: it stays for the rest of the
 * run). Cheap enough for every poll (one pread()). Accepts NULL.
 */
void rec_starve__check(struct rec_starve *s, uint64_t now_ns);

/** rec_starve__stats() - what was seen so far; borrowed, valid until the free. */
const struct rec_starve_stats *rec_starve__stats(const struct rec_starve *s);

/** rec_starve__free() - release the watch (the priority stays). Accepts NULL. */
void rec_starve__free(struct rec_starve *s);

#endif /* REC_STARVE_H */
