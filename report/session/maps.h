/* SPDX-License-Identifier: MIT */
/*
 * maps.h - the mapping timeline of one recording: per (pid, exec generation)
 * the executable mappings with the time each was captured, so that a raw
 * address at a sample's time becomes (mapping -> binary, file offset).
 */
#ifndef SA_REPORT_MAPS_H
#define SA_REPORT_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strpool.h"

#define RPT_NO_DSO UINT32_MAX

struct rpt_map {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;	     /* file offset of start */
	uint64_t time_ns;    /* when captured (CLOCK_MONOTONIC) */
	uint64_t flags;	     /* SAF_MAP_* */
	uint32_t dso;	     /* symbolizer binary index, RPT_NO_DSO for anon */
	uint32_t label;	     /* pool offset of the "[libfoo.so]" basename */
};

struct rpt_proc {
	uint32_t pid, gen;
	uint32_t comm, exe; /* pool offsets */
	uint64_t time_ns;
	struct rpt_map *maps;
	size_t nmaps, maps_cap;
	uint64_t max_len; /* longest mapping, bounds the backward scan */
	uint64_t *reach;  /* once sorted: highest end of maps[0..i], ends it sooner */
	bool sorted;
	bool disjoint; /* once sorted: no two mappings overlap */
	size_t hit;    /* if disjoint: the mapping found last */
};

struct rpt_maps {
	struct rpt_proc *procs;
	size_t nprocs, cap;
	struct rpt_hmap index; /* pid << 32 | gen -> index */
	/* the image rpt_maps__proc() gave last: a process's records come together */
	uint64_t proc_key;
	size_t proc_idx;
	bool proc_valid;
	/* the image rpt_maps__find() used last, and for which (pid, gen) */
	struct rpt_proc *last;
	uint64_t last_key;
	bool last_valid;
};

/**
 * rpt_maps__proc() - the process image (pid, gen), created empty if new.
 * @return a borrowed pointer valid until the next call that adds, or NULL
 * on -ENOMEM.
 */
struct rpt_proc *rpt_maps__proc(struct rpt_maps *m, uint32_t pid, uint32_t gen);

/** rpt_maps__add() - add a mapping of (pid, gen) (copied). @return 0 or -ENOMEM. */
int rpt_maps__add(struct rpt_maps *m, uint32_t pid, uint32_t gen, const struct rpt_map *map);

/**
 * rpt_maps__find() - the mapping of (pid, gen) holding @addr at @time_ns:
 * of the mappings holding it, the last captured at or before @time_ns, else
 * the first captured after (metadata found late). An unknown gen falls back
 * to the nearest earlier one of the pid. Sorts on first use (not thread-safe).
 * @return a borrowed mapping, valid until the next add, or NULL.
 */
const struct rpt_map *rpt_maps__find(struct rpt_maps *m, uint32_t pid, uint32_t gen, uint64_t addr,
				     uint64_t time_ns);

/** rpt_maps__fini() - release everything. Safe on a zeroed struct. */
void rpt_maps__fini(struct rpt_maps *m);

#endif /* SA_REPORT_MAPS_H */
