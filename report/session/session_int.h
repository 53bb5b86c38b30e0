/* SPDX-License-Identifier: MIT */
/*
 * session_int.h - the session's state and one recording as read: shared by
 * the files of report/session/ and nothing else (session.h is the public
 * side). The files call one way (docs/design.md draws it): session.c ->
 * read.c -> load.c -> filter.c, ustack.c, pyframes.c, maps.c; session.c ->
 * resolve.c -> stitch.c, ustack.c, pyframes.c, resolve_names.c, maps.c;
 * stitch.c -> ustack.c -> maps.c; pyframes.c -> resolve_names.c.
 */
#ifndef SA_REPORT_SESSION_INT_H
#define SA_REPORT_SESSION_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "maps.h"
#include "saf.h"
#include "session.h"
#include "strpool.h"
#include "symtab.h"

/*
 * "Limits" in docs/format.md: a recording's chunks may expand to 4096 times
 * its size, and to 16 MiB whatever its size (real ones expand 2.5 to 8
 * times, 220 with --whole-stack copies); this bounds the time, keep() in
 * load.c the memory.
 */
#define RPT_MAX_EXPAND	 4096
#define RPT_EXPAND_FLOOR (16ull << 20)
/* What records keep in memory: 64 times the file's size, and 16 MiB. */
#define RPT_KEEP_PER_BYTE 64
#define RPT_KEEP_FLOOR	  (16ull << 20)

/* A recording that showed nothing: its name and why. */
struct rpt_skipped {
	uint32_t path;
	bool unread; /* an input of a set that could not be read at all */
	char why[480];
};

/*
 * The record-level filters of struct rpt_filter with their lists parsed
 * (filter.c): --pid, --tid, --comm. A list is NULL/0 when not given.
 */
struct rpt_recfilter {
	uint32_t *pids, *tids;
	size_t npids, ntids;
	char **comms;
	size_t ncomms;
};

/**
 * rpt_recfilter__init() - parse @f's lists into @rf (zeroed by the caller).
 * @return 0, -EINVAL for a bad id list, or -ENOMEM; release with
 * rpt_recfilter__fini() either way.
 */
int rpt_recfilter__init(struct rpt_recfilter *rf, const struct rpt_filter *f);
void rpt_recfilter__fini(struct rpt_recfilter *rf);
/** rpt_recfilter__task() - do --pid and --tid keep thread @tid of process @pid? */
bool rpt_recfilter__task(const struct rpt_recfilter *rf, uint32_t pid, uint32_t tid);
/** rpt_recfilter__comm() - does --comm keep @comm? */
bool rpt_recfilter__comm(const struct rpt_recfilter *rf, const char *comm);
/**
 * rpt_filter__time_ok() - does --time keep the interval [@start_ns, @end_ns)
 * of a recording that began at @base_ns? Its midpoint must be in the range.
 */
bool rpt_filter__time_ok(const struct rpt_filter *f, uint64_t base_ns, uint64_t start_ns,
			 uint64_t end_ns);

/*
 * What the stages below the session are given (docs/design.md, "The
 * stages of sa-report"): the symbolizer and its string pool, the options and
 * the parsed filters, borrowed from the session, never the session itself.
 */
struct rpt_stage_env {
	struct rpt_symbolizer *sym;
	struct rpt_strpool *pool; /* the symbolizer's */
	const struct rpt_session_opts *o;
	const struct rpt_recfilter *flt;
	uint64_t *serial; /* resolved keys, all files: stamps per-stack counting */
};

struct rpt_session {
	struct rpt_session_opts o;
	struct rpt_symbolizer *sym;
	struct rpt_file_stats *files;
	size_t nfiles, files_cap;
	char errmsg[512];
	struct rpt_recfilter flt;
	struct rpt_stage_env env; /* what load, ustack and resolve are given */
	char lost_detail[512];
	uint64_t serial;
	/* recordings read (shown or skipped); skipped ones and why */
	uint32_t nrecordings;
	struct rpt_skipped *skipped;
	size_t nskipped, skipped_cap, nskipped_told;
};

struct rpt_count_key {
	uint32_t pid, tid, gen, ustack, kstack, comm;
};

struct rpt_count {
	struct rpt_count_key k;
	uint64_t count;
	uint64_t time_ns; /* last interval end that had it */
	bool used;
	uint32_t hash; /* of k: the table grows without hashing again */
};

struct rpt_stackref {
	uint64_t first; /* index in rpt_loaded.ips */
	uint32_t n, kind;
};

struct rpt_unwinder;
struct rpt_unwind_module;
#define RPT_USTACK_PATH_MAX (SAF_MAX_STRING + 256)

/* Everything read from one file, freed once it is resolved. */
struct rpt_loaded {
	struct rpt_file_stats *st;
	uint32_t file_idx;
	struct saf_file_info base; /* the reader's damage counts when this recording began */
	bool empty;		   /* damaged or unfinished, and no interval: not shown */
	uint64_t kept, keep_max;   /* bytes records keep here, and their bound (keep()) */
	uint64_t meta_kept;	   /* of kept, by mappings and symbols: at most keep_max / 2 */
	struct rpt_maps maps;
	struct rpt_symtab ksyms; /* key 0 */
	struct rpt_symtab jit;	 /* key pid */
	struct rpt_symtab py;	 /* key pid: PYCODE names by code address (pyframes.c) */
	uint64_t *ips;
	size_t nips, ips_cap;
	/* file stack id -> index in refs: the recorder numbers a file's stacks
	 * one after the other, so most are in a dense array from the first
	 * id on (index + 1, 0: none); the others, in the hash map */
	uint32_t *stack_dense;
	size_t stack_dense_cap;
	uint32_t stack_base;
	struct rpt_hmap stacks;
	struct rpt_hmap
		sampled; /* images (pid << 32 | gen) and pids (1 << 63 | pid) with samples */
	struct rpt_stackref *refs;
	size_t nrefs, refs_cap;
	struct rpt_count *counts; /* open addressing */
	size_t ncounts, counts_cap;
	uint32_t cur_symtab; /* dso of the last SYMTAB record */
	bool in_interval_ok; /* the open interval passes --time */
	int64_t last_comm;   /* the comm of the last COUNT record (0: none) */
	size_t last_comm_len;
	uint64_t iv_end;
	/* intervals lost to damage: seq gaps after a damaged place */
	bool have_iv, iv_open, damage_since_iv;
	uint64_t iv_seq;
	/* USTACK records, unwound offline (ustack.c) */
	struct rpt_unwinder *unw;
	bool unw_quiet;		    /* no stderr line for binaries walks stopped at */
	struct rpt_hmap ustack_ids; /* hash of unwound frames -> synthetic stack id */
	uint32_t nustacks;
	struct rpt_unwind_module *umods;
	char (*upaths)[RPT_USTACK_PATH_MAX];
	size_t umods_cap;
	bool umods_ok; /* umods hold the image (umods_pid, umods_gen) ... */
	uint32_t umods_pid, umods_gen;
	const char *umods_pool; /* ... and the string pool's base then */
	size_t umods_n;		/* ... when it had this many mappings */
	/* (pid, gen, return address) -> the frames unwound stacks show above it */
	struct rpt_hmap stitch;
};

#define RPT_USTACK_MAX_FRAMES 512

/** rpt_loaded__pycode() - keep a PYCODE record's names (pyframes.c). @return 0 or -ENOMEM. */
int rpt_loaded__pycode(const struct rpt_stage_env *e, struct rpt_loaded *l,
		       const struct saf_pycode *p);

/*
 * rpt_loaded__ustack() - unwind USTACK record @u (ustack.c): @c gets the
 * equivalent COUNT; when the unwound frames (in @ips, RPT_USTACK_MAX_FRAMES
 * entries) are new, @st gets a STACK to add under c->ustack.
 * @return 1 when @st is to be added, 0 when not, or -ENOMEM.
 */
int rpt_loaded__ustack(const struct rpt_stage_env *e, struct rpt_loaded *l,
		       const struct saf_ustack *u, uint64_t *ips, struct saf_stack *st,
		       struct saf_count *c);
void rpt_loaded__ustack_fini(struct rpt_loaded *l);

/* rpt_loaded__unwound() - is user stack id @id one unwound from a USTACK (ustack.c)? */
bool rpt_loaded__unwound(const struct rpt_loaded *l, uint32_t id);

/**
 * rpt_loaded__stitch_index() - index the frames near the root of every
 * unwound stack (stitch.c), after all counts are read. @return 0 or -ENOMEM.
 */
int rpt_loaded__stitch_index(struct rpt_loaded *l);

/**
 * rpt_loaded__stitch() - the outer frames a frame-pointer walk @ref of count
 * @c misses, when the process image's unwound stacks agree on them.
 * @first: set to their index in l->ips (borrowed, valid while @l is).
 * @return how many (0: none to add).
 */
uint32_t rpt_loaded__stitch(const struct rpt_loaded *l, const struct rpt_count *c,
			    const struct rpt_stackref *ref, uint64_t *first);
/** rpt_loaded__stack() - the index in refs of file stack @id. @return false when none. */
static inline bool rpt_loaded__stack(const struct rpt_loaded *l, uint64_t id, uint64_t *idx)
{
	uint64_t d = id - l->stack_base;

	if (d < l->stack_dense_cap && l->stack_dense[d]) {
		*idx = l->stack_dense[d] - 1;
		return true;
	}
	return rpt_hmap__get(&l->stacks, id, idx);
}

/* load.c: one record into @l (-EFBIG past l->keep_max), and damage met */
int rpt_loaded__record(const struct rpt_stage_env *e, struct rpt_loaded *l,
		       const struct saf_record *r);
void rpt_loaded__damage(struct rpt_loaded *l);
void rpt_loaded__fini(struct rpt_loaded *l);

/*
 * rpt_loaded__read() - every chunk of one recording that validates, read
 * from @r into @l (read.c). @name: the pool offset of what messages call
 * it; @errmsg, @cap: where a message goes on failure.
 * @return 0 at the end of the file, 1 when another recording follows, or
 * -errno. A recording damaged or unfinished that gave no interval has
 * nothing to show: l->empty is set.
 */
int rpt_loaded__read(const struct rpt_stage_env *e, struct rpt_loaded *l, struct saf_reader *r,
		     uint32_t name, char *errmsg, size_t cap);

/* rpt_loaded__resolve() - every key of @l into named frames added to @prof (resolve.c). */
int rpt_loaded__resolve(const struct rpt_stage_env *e, struct rpt_loaded *l,
			struct rpt_profile *prof);

#endif /* SA_REPORT_SESSION_INT_H */
