/* SPDX-License-Identifier: MIT */
/*
 * sideband.h - the kernel's side-band records (MMAP2 with build ids, COMM,
 * FORK, EXIT, LOST) from one dummy software perf event per CPU, turned into
 * PROC, MAP, COMM and EXIT records as processes and libraries appear, with
 * the exec generation the BPF program counts.
 */
#ifndef REC_SIDEBAND_H
#define REC_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "maptab.h"
#include "rec_sink.h"

struct rec_sideband;
struct rec_jitmap;

struct rec_sideband_opts {
	size_t sz;		   /* sizeof(struct rec_sideband_opts) */
	const int *cpus;	   /* CPUs to open; NULL = 0 .. ncpus-1 */
	int ncpus;		   /* 0 = every possible CPU (sysconf) */
	size_t ring_pages;	   /* data pages per CPU, a power of 2; 0 = 128 */
	struct rec_sink sink;	   /* gets PROC, MAP, COMM, EXIT records */
	struct rec_maptab *maptab; /* borrowed; gets every mapping and fork */
	struct rec_jitmap *jitmap; /* borrowed, may be NULL; told of exits */
};

/* What was seen, for the summary and tests. */
struct rec_sideband_stats {
	uint64_t records, mmap2, mmap2_exec, mmap2_build_id, comm, exec, fork, exit;
	uint64_t lost;	      /* records the kernel dropped (PERF_RECORD_LOST) */
	uint64_t lost_events; /* PERF_RECORD_LOST records */
	uint64_t other;	      /* records of other types, skipped */
	uint64_t unhandled;   /* records left at the last poll's deadline */
};

/**
 * rec_sideband__open() - open and enable one dummy event per CPU with
 * mmap2, comm, comm_exec, task, build_id and sample_id_all, on
 * CLOCK_MONOTONIC (comparable with bpf_ktime_get_ns()), and map its ring.
 * Open it before the BPF program is attached, so that every exec the
 * program counts is also seen here and generations stay equal.
 * @return a handle released with rec_sideband__free(), or NULL with errno
 * (EACCES/EPERM without privileges, EINVAL on a kernel without build_id).
 */
struct rec_sideband *rec_sideband__open(const struct rec_sideband_opts *opts);

/**
 * rec_sideband__poll() - take every record out of the rings, order them by
 * time across CPUs and handle those older than a few milliseconds (later
 * ones wait for the next poll so a slower CPU cannot reorder them), for at
 * most 50 ms (the rest wait too); with @final, handle all within 500 ms
 * (or until rec_sideband_end_by()) and drop the rest
 * (rec_sideband_stats.unhandled). Call it before each drain
 * and once at the end.
 * @return records handled, or the sink's negative errno.
 */
int rec_sideband__poll(struct rec_sideband *sb, bool final);

/**
 * rec_sideband_end_by() - every later last poll (@final) handles records
 * until @until_ns (CLOCK_MONOTONIC ns) if that comes before its own
 * 500 ms: what the stop path's budget leaves (docs/reliability.md, "The
 * stop path"); 0 lifts it. Process-wide, since the recording's owner
 * reaches the side band only through rec_sc__finish(). Not thread-safe.
 */
void rec_sideband_end_by(uint64_t until_ns);

/**
 * rec_sideband__gen() - the exec generation of @pid as counted here: 0
 * until its first exec, inherited on fork, forgotten at exit (as the BPF
 * program's gens map).
 */
uint32_t rec_sideband__gen(const struct rec_sideband *sb, uint32_t pid);

/** rec_sideband__stats() - copy the counters. */
void rec_sideband__stats(const struct rec_sideband *sb, struct rec_sideband_stats *st);

/** rec_sideband__free() - unmap and close everything. Accepts NULL. */
void rec_sideband__free(struct rec_sideband *sb);

#endif /* REC_SIDEBAND_H */
