/* SPDX-License-Identifier: MIT */
/*
 * session.h - the symbolizing pipeline of sa-report: read each recording
 * (read.c, load.c), aggregate its counts by (process, thread, stacks) with the
 * record-level filters applied, then resolve each distinct key once into
 * named frames and add it to a struct rpt_profile (resolve.c). Several
 * files share one symbolizer; each file's addresses use its own metadata.
 */
#ifndef SA_REPORT_SESSION_H
#define SA_REPORT_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <time.h>
#include "output.h"
#include "profile.h"
#include "saf.h"
#include "symbolize.h"

/* Record-level filters; lists are comma-separated, NULL = no filter. */
struct rpt_filter {
	const char *comm, *pid, *tid;
	bool user_only, kernel_only;
	bool has_time;
	double time_from, time_to;	  /* seconds since the recording's start */
	bool has_wall;			  /* --since/--until */
	int64_t wall_from_ns, wall_to_ns; /* CLOCK_REALTIME, [from, to) */
};

/* Which off-CPU periods count (OFFCPU flags); 0 = all. */
enum rpt_off_state {
	RPT_OFF_ALL = 0,
	RPT_OFF_BLOCKED = 1,  /* asleep at switch-out */
	RPT_OFF_RUNNABLE = 2, /* preempted or yielded */
};

/**
 * rpt_parse_wall_time() - --since/--until: "HH:MM[:SS[.frac]]" (local time,
 * the day of @now), "YYYY-MM-DD[T ]HH:MM[:SS[.frac]]" (local) or the same
 * ending in "Z", "+HH[:MM]" or "-HH[:MM]" (ISO 8601) into nanoseconds of
 * CLOCK_REALTIME in *@ns (filter.c).
 * @return 0, or -EINVAL for anything else.
 */
int rpt_parse_wall_time(const char *arg, time_t now, int64_t *ns);

/**
 * rpt_filter__wall_ok() - does the interval [@start_ns, @end_ns)
 * (CLOCK_MONOTONIC of a file whose META gave @start_real_ns at
 * @start_mono_ns) pass --since/--until? Its midpoint must be in the range.
 */
bool rpt_filter__wall_ok(const struct rpt_filter *f, uint64_t start_real_ns, uint64_t start_mono_ns,
			 uint64_t start_ns, uint64_t end_ns);

struct rpt_session_opts {
	struct rpt_symbolizer_opts sym;
	enum rpt_value value;
	enum rpt_off_state off_state;
	struct rpt_filter filter;
	bool show_pid, show_tid;
	bool addrs;    /* [libfoo.so+0x1a2b] for unnamed frames */
	bool progress; /* progress line on stderr when symbolizing is slow */
	bool quiet;    /* -q: no warnings on stderr */
};

/* What one file held; strings are offsets in the symbolizer's pool. */
struct rpt_file_stats {
	uint32_t path, host, kernel, target, cmdline, event, writer, arch;
	uint64_t freq_hz, ncpus, start_realtime_ns, start_mono_ns;
	uint64_t first_ns, last_ns; /* interval span */
	uint64_t intervals, procs, stacks, ksyms, usyms, jitsyms;
	uint64_t pycodes, py_read, py_refused; /* PYCODE: code objects, interpreters (pyframes.c) */
	uint32_t py_first;		       /* "pid version binary: status" of the first, or 0 */
	uint64_t images_sampled, procs_sampled; /* process images, pids with samples */
	uint64_t samples;			/* kept samples in the file */
	uint64_t samples_used;			/* after record-level filters */
	uint64_t lost[SAF_MAX_COUNTERS + 1];	/* sums by counter id */
	uint64_t dropped_frames;		/* samples with broken-walk frames dropped */
	uint64_t broken_fp;			/* of those, frame-pointer walks (not unwound) */
	uint64_t unresolved;			/* user frames left unnamed (weighted) */
	uint64_t user_frames;			/* user frames (weighted) */
	uint64_t kernel_unnamed;		/* samples with [kernel] frames */
	bool has_meta, finished, damaged, has_ksyms;
	uint64_t meta_flags; /* SAF_META_*: SAF_META_OFF_CPU says OFFCPU records were taken */
	char errmsg[256];    /* reader's message about dropped data */
	/* damage (docs/format.md, "Reading a damaged or truncated file") */
	uint64_t damage_count, dropped_bytes, dropped_chunks;
	uint64_t end_ns, end_intervals; /* from END, when it was read */
	uint64_t iv_ns;			/* time the intervals read cover */
	uint64_t iv_in_time;		/* intervals that pass --time */
	uint64_t lost_ivs, partial_ivs; /* intervals lost whole, or in part */
	struct rpt_lost_ivs {
		uint64_t first, last, from_ns, to_ns;
	} lost_runs[4]; /* the first lost runs of intervals */
	size_t nlost_runs;
	/* CPUGAP: CPUs not sampled for a while (they went offline); the first kept */
	struct rpt_cpugap {
		uint32_t cpu;
		uint64_t from_ns, to_ns;
	} cpugaps[4];
	size_t ncpugaps; /* all of them */
	/* mappings and symbols not kept: past half the bound on what records keep */
	uint64_t maps_dropped, meta_dropped; /* MAP records; PROC and symbol records */
	struct rpt_dropped_maps {
		uint32_t pid;
		uint64_t n;
		char path[96]; /* the first one's, clipped */
	} dropped[4];	       /* the first processes */
	size_t ndropped;
	uint64_t cpugap_ns; /* their total length */
};

struct rpt_session;

/**
 * rpt_session__new() - a pipeline. @o: copied (strings borrowed; they must
 * outlive the session). @return an object released with
 * rpt_session__free(), or NULL with errno = ENOMEM.
 */
struct rpt_session *rpt_session__new(const struct rpt_session_opts *o);

/** rpt_session__free() - release it. Accepts NULL. */
void rpt_session__free(struct rpt_session *s);

/**
 * rpt_session__add_file() - read recording @path and add its filtered,
 * symbolized stacks to @prof (which the caller owns). Every recording of
 * a concatenation is read ("Concatenated recordings" in docs/format.md),
 * each one a file of rpt_session__file(); one that is damaged or unfinished
 * and holds no interval is skipped and kept for rpt_session__warn_skipped().
 * @name: what messages call it ("-" for standard input), borrowed.
 * @return 0 when something usable was read (damage is recorded in the
 * file's stats); -ENODATA when every recording of it was skipped;
 * -EBADMSG/-ENOTSUP/-errno when it could not be read; a message is then in
 * rpt_session__errmsg().
 */
int rpt_session__add_file(struct rpt_session *s, const char *path, const char *name,
			  struct rpt_profile *prof);

/**
 * rpt_session__add_stream() - as rpt_session__add_file(), for a recording
 * read once from @read(@cookie) (standard input): never held whole, under
 * the same bounds as a file ("Reading a stream" in docs/format.md).
 * @read, @cookie: borrowed for the call; @read may run on the reader's
 * second thread, never on two at once.
 */
int rpt_session__add_stream(struct rpt_session *s, saf_read_fn read, void *cookie, const char *name,
			    struct rpt_profile *prof);

/**
 * rpt_session__skip_input() - input @name of a set could not be read at
 * all (not a recording, a newer major version, unreadable): kept as
 * skipped, for rpt_session__warn_skipped() and --info, while the other
 * inputs are read. @why: the reason (a leading "NAME: " is dropped);
 * both are copied.
 * @return 0 or -ENOMEM.
 */
int rpt_session__skip_input(struct rpt_session *s, const char *name, const char *why);

/**
 * rpt_session__warn_skipped() - one line on @err per recording skipped
 * since the last call ("NAME: holds no samples, not shown: why", or
 * "NAME: cannot be read, skipped: why").
 * @return the number of lines.
 */
int rpt_session__warn_skipped(struct rpt_session *s, FILE *err);

/** rpt_session__errmsg() - the last error message. Borrowed. */
const char *rpt_session__errmsg(const struct rpt_session *s);

/** rpt_session__nfiles() - files read so far. */
size_t rpt_session__nfiles(const struct rpt_session *s);

/** rpt_session__file() - stats of file @i. Borrowed; valid until the next add. */
const struct rpt_file_stats *rpt_session__file(const struct rpt_session *s, size_t i);

/** rpt_session__symbolizer() - the shared symbolizer. Borrowed. */
struct rpt_symbolizer *rpt_session__symbolizer(struct rpt_session *s);

/** rpt_session__str() - a string of the symbolizer's pool. Borrowed. */
const char *rpt_session__str(struct rpt_session *s, uint32_t off);

/**
 * rpt_session__summary() - fill @sum (for top/svg headers) from all files.
 * @buf, @cap: storage for the strings @sum points to.
 */
void rpt_session__summary(struct rpt_session *s, struct rpt_summary *sum, char *buf, size_t cap);

/**
 * rpt_session__dropped() - one line into @buf (@cap bytes) saying which
 * mappings and symbols of file @f were not kept, and why. @return its length.
 */
size_t rpt_session__dropped(const struct rpt_file_stats *f, char *buf, size_t cap);

/** rpt_session__info() - the --info report of every file read. @return 0 or -errno. */
int rpt_session__info(struct rpt_session *s, FILE *out, bool verbose);

/** rpt_session__warn() - loss counts on @err (with folded output). */
void rpt_session__warn(struct rpt_session *s, FILE *err, bool verbose);

/**
 * rpt_session__warn_walks() - one line on @err when at least
 * RPT_BROKEN_WALK_PCT % of the samples read have a broken stack walk
 * (frames dropped), with the share, the binary most of them end in and
 * the fix: re-record with --call-graph auto (or dwarf) when frame-pointer
 * walks broke. Prints nothing otherwise. Call once, after every input is read.
 */
void rpt_session__warn_walks(struct rpt_session *s, FILE *err);

#define RPT_BROKEN_WALK_PCT 20

/**
 * rpt_session__warn_damage() - one line on @err per damaged or unfinished
 * file: what is shown and what was dropped (every mode prints it).
 * @return the number of lines written.
 */
int rpt_session__warn_damage(struct rpt_session *s, FILE *err);

#endif /* SA_REPORT_SESSION_H */
