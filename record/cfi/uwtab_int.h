/* SPDX-License-Identifier: MIT */
/*
 * uwtab_int.h - the state uwtab.c (tables, ranges) and uwgc.c (what gone
 * processes leave) share; private to record/cfi/uw*.c.
 */
#ifndef REC_UWTAB_INT_H
#define REC_UWTAB_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "htab.h"
#include "uwalloc.h"
#include "uwtab.h"
#include "uwwork.h"

#define UW_GC_NS   1000000000ull  /* gone processes are looked for at most every second */
#define UW_KEEP_NS 10000000000ull /* a table no process maps is kept 10 s for the next */

struct fkey {
	uint64_t dev, ino;
};

struct fval {
	uint32_t row0, nrows; /* as struct sa_uw_range */
	uint64_t loads[REC_UW_LOADS][3];
	uint32_t nloads;
	uint32_t refs;	  /* ranges of tracked processes that map it */
	uint64_t idle_ns; /* CLOCK_MONOTONIC when refs fell to 0 */
	bool dead;	  /* its table freed: built again when met */
	bool pending;	  /* its build is on the worker (uwwork.c): row0 SA_UW_NOTABLE till then */
	uint64_t seq;	  /* the number of its last build posted */
	struct rec_uwjob *job; /* while pending: its job (uw_unref() sets its skip) */
};

/* A process: the ranges written to uwprocs, and the file of each. */
struct pval {
	struct sa_uw_proc k;
	struct fkey f[SA_UW_RANGES];
	uint64_t pgoff[SA_UW_RANGES]; /* the mapping's file offset, for its bias once built */
};

struct rec_uwtab {
	struct rec_htab *files; /* struct fkey -> struct fval */
	struct rec_htab *procs; /* tgid -> struct pval */
	int rows_fd, procs_fd;
	struct rec_uwalloc rows; /* slices of uwrows */
	struct rec_uwwork *work; /* the builds; NULL: on this thread */
	uint64_t seq;		 /* builds posted */
	uint64_t max_ns;
	uint64_t last_gc;
	const char *unmapped; /* tests: mappings of paths holding it never reach the kernel */
	struct rec_uwtab_stats st;
};

/** uw_unref() - a range of file @k is gone (@now: CLOCK_MONOTONIC ns). */
void uw_unref(struct rec_uwtab *u, const struct fkey *k, uint64_t now);

/**
 * uw_gc_procs() - drop the processes that are gone (their uwprocs entry
 * deleted by the kernel when they were freed, or no such process), and
 * with them their files' references. Pointers into u->procs go stale.
 */
void uw_gc_procs(struct rec_uwtab *u, uint64_t now);

/**
 * uw_gc_files() - free the tables idle for UW_KEEP_NS, and forget the
 * files idle that long. Pointers into u->files go stale.
 */
void uw_gc_files(struct rec_uwtab *u, uint64_t now);

/**
 * uw_make_room() - free idle tables, the longest idle first, until @n rows
 * fit in one slice. Pointers into u->files stay valid.
 * @return whether they fit.
 */
bool uw_make_room(struct rec_uwtab *u, uint32_t n);

#endif /* REC_UWTAB_INT_H */
