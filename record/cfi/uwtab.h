/* SPDX-License-Identifier: MIT */
/*
 * uwtab.h - the in-kernel unwinder's tables (docs/unwinding.md "In the
 * kernel"): uwbuild.c turns one file's .eh_frame into sorted rows; uwtab.c
 * keeps one table per file in the BPF uwrows array, within a budget of rows
 * and a time bound per file, and each process's executable mappings in
 * uwprocs.
 */
#ifndef REC_UWTAB_H
#define REC_UWTAB_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "cfistep.h"
#include "sa_shared.h"

#define REC_UW_LOADS	 8	    /* PT_LOAD segments kept per file */
#define REC_UW_FILE_ROWS (8u << 20) /* rows one file may produce before merging */

/* One file's table: rows sorted by pc, and its PT_LOADs (offset, vaddr, size). */
struct rec_uwfile {
	struct sa_uw_row *rows;
	size_t nrows;
	uint64_t loads[REC_UW_LOADS][3];
	size_t nloads;
};

/**
 * rec_uw_row() - a CFI row (cfirows.h: @ret REC_CFIROW_*, @plt the PLT
 * expression's threshold or 0) as the BPF unwinder takes it; its pc is 0.
 */
struct sa_uw_row rec_uw_row(const struct sac_cfi_row *row, int ret, unsigned plt);

/**
 * rec_uw_build() - the table of the ELF file @fd (borrowed).
 * @max_ns: the time bound, in the calling thread's CPU time (a build on a
 * worker that waits for a CPU is not cut short); past it -ETIME.
 * @stop: NULL, or a flag read atomically while building: once set, the
 * build gives up with -ECANCELED.
 * @out: filled on success; the caller frees out->rows.
 * @return 0; -ENOENT no .eh_frame rows; -ETIME; -ECANCELED; -EOVERFLOW an
 * address past 4 GiB; -E2BIG over REC_UW_FILE_ROWS rows; cfirows' errors;
 * -ENOMEM. Thread-safe.
 */
int rec_uw_build(int fd, uint64_t max_ns, const int *stop, struct rec_uwfile *out);

struct rec_uwtab;

struct rec_uwtab_stats {
	uint64_t files;	 /* tables built or tried (a file met, or met again once freed) */
	uint64_t tables; /* tables in the kernel now */
	uint64_t rows;	 /* their rows (the budget is max_rows) */
	uint64_t freed;	 /* tables freed: no process mapped them any more */
	uint64_t procs;	 /* processes with ranges, now */
	uint64_t gone;	 /* processes dropped once gone */
	uint64_t nocfi;	 /* files without .eh_frame: frame pointers */
	uint64_t nofit;	 /* tables over the budget of rows: not built */
	uint64_t slow;	 /* tables over the time bound: not built */
	uint64_t failed; /* CFI that could not be read */
	uint64_t ranges; /* mappings given to the kernel */
	uint64_t rfull;	 /* mappings past SA_UW_RANGES in one process: left out */
	uint64_t build_ns, max_build_ns; /* CPU time building tables, in all and the longest */
	uint64_t waiting;		 /* builds on the worker, not installed yet */
	uint64_t max_wait_ns;		 /* the longest from a file met to its table installed */
	uint64_t dropped;		 /* builds finished for a file no longer wanted */
};

/**
 * rec_uwtab__new() - tables written to the BPF maps @rows_fd (an array of
 * @max_rows struct sa_uw_row) and @procs_fd (tgid -> struct sa_uw_proc),
 * both borrowed; each file's build bounded by @max_ns. For tests, the
 * mappings of files whose path holds $SA_RECORD_TEST_UW_UNMAPPED never
 * reach the kernel, as a mapping the side band has not brought yet, and
 * $SA_RECORD_TEST_UW_ROWS, if lower, is the budget of rows; with
 * $SA_RECORD_TEST_UW_SYNC set, tables are built on the calling thread.
 * @return an object released with rec_uwtab__free(), or NULL with errno.
 */
struct rec_uwtab *rec_uwtab__new(int rows_fd, int procs_fd, uint32_t max_rows, uint64_t max_ns);

/* An executable file mapping of process pid in exec generation gen. */
struct rec_uwmap {
	uint32_t pid, gen;
	uint64_t start, end, pgoff;
	uint64_t dev, ino; /* of the file, as user space numbers them; ino 0: unknown */
	const char *path;
};

/**
 * rec_uwtab__map() - the process of @m maps [start, end) of the file at
 * offset pgoff, executable (@fd an open fd of it, borrowed, or -1: opened
 * by path when the file is new). The first time the file is met its table
 * is posted to the worker (uwwork.h); the process's ranges are written to
 * the kernel at once, this one marked as without a table (stack copies, or
 * frame pointers off the CPU, counted by the BPF program) until
 * rec_uwtab__poll() installs it. Errors are counted in the stats, never
 * returned: a mapping left out is walked by frame pointers.
 */
void rec_uwtab__map(struct rec_uwtab *u, int fd, const struct rec_uwmap *m);

/**
 * rec_uwtab__prebuild() - build the table of the file @path now, on this
 * thread, before a process maps it (`-- CMD`'s program, the C library):
 * the first mapping then costs a lookup, and the command's first blocks
 * are walked whole.
 */
void rec_uwtab__prebuild(struct rec_uwtab *u, const char *path);

/**
 * rec_uwtab__poll() - install the tables the worker finished: rows into
 * uwrows first, then the ranges of every process that maps the file
 * rewritten to point at them, so that no range names rows not written yet.
 * Never waits for a build. Accepts NULL.
 */
void rec_uwtab__poll(struct rec_uwtab *u);

/** rec_uwtab__stats() - what was built so far; borrowed. */
const struct rec_uwtab_stats *rec_uwtab__stats(const struct rec_uwtab *u);

/**
 * rec_uwtab__free() - release it (the kernel's maps stay); a build under
 * way is waited for at most 200 ms, then left to end alone. Accepts NULL.
 */
void rec_uwtab__free(struct rec_uwtab *u);

#endif /* REC_UWTAB_H */
