/* SPDX-License-Identifier: MIT */
/*
 * selfcontained.h - one handle over everything that makes a recording
 * readable off the host: side-band mappings (sideband.h, maptab.h),
 * kernel symbols (ksyms.h), embedded ELF symbols (elfsyms.h) and JIT maps
 * (jitmap.h). The drain calls it with each new stack and each count.
 */
#ifndef REC_SELFCONTAINED_H
#define REC_SELFCONTAINED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "elfsyms.h"
#include "jitmap.h"
#include "sideband.h"

struct rec_sc;

struct rec_sc_opts {
	size_t sz;	      /* sizeof(struct rec_sc_opts) */
	struct saf_writer *w; /* borrowed; gets every record */
	bool no_embed;	      /* --no-embed-symbols: no SYMTAB/USYM records */
	bool no_sideband;     /* tests: no perf events */
	const int *cpus;      /* NULL = every CPU */
	int ncpus;
	const char *kallsyms; /* NULL = /proc/kallsyms */
	bool ksyms_early;     /* read kallsyms on a thread from open on, not at
			       * the first kernel stack (a drain's deadline) */
	int child;	      /* the `-- CMD` child, forked before this and
			       * waiting to exec: its first image is captured
			       * from /proc now; 0 = none */
	bool targets_only;    /* -p, -t, `-- CMD` without -a: the side band's
			       * PROC, MAP, COMM and EXIT records only of the
			       * target processes: @ids, @child, and with
			       * @follow the processes they fork */
	const pid_t *ids;     /* -p processes, or -t threads (@ids_are_tids) */
	int nids;
	bool ids_are_tids;
	bool follow;
};

struct rec_sc_stats {
	struct rec_sideband_stats sb;
	struct rec_elfsyms_stats es;
	uint64_t ksyms_total, ksyms_emitted;
	struct rec_jitmap_stats jit;
	uint64_t clipped_paths; /* mapping paths clipped (strclip.h); names: es.clipped */
	uint64_t note_ns;	/* time spent noting stacks and flushing symbols */
};

/**
 * rec_sc__open() - open the side-band events. Call it before the BPF
 * program is attached (see rec_sideband__open()). kallsyms is read at the
 * first kernel stack; one that cannot be read (kptr_restrict) is not
 * fatal: kernel frames then stay unnamed. @opts->kallsyms is borrowed.
 * @return a handle released with rec_sc__free(), or NULL with errno.
 */
struct rec_sc *rec_sc__open(const struct rec_sc_opts *opts);

/**
 * rec_sc__poll() - handle the side-band records queued so far. Call it at
 * each turn of the main loop and at the start of each drain.
 * @return 0 or a negative errno (a write error).
 */
int rec_sc__poll(struct rec_sc *sc);

/**
 * rec_sc__stack() - a stack got file id @fid: kernel stacks get their
 * KSYM records now; user stacks are kept for rec_sc__count().
 * @ips, @n: borrowed for the call. Calling again for a known @fid is cheap.
 * @return 0 or a negative errno.
 */
int rec_sc__stack(struct rec_sc *sc, uint32_t kind, uint32_t fid, const uint64_t *ips, uint32_t n);

/**
 * rec_sc__count() - samples of (pid, gen) with user stack @ufid (0 = none):
 * note the file offsets they hit and track the pid's JIT map.
 * @return 0 or a negative errno.
 */
int rec_sc__count(struct rec_sc *sc, uint32_t pid, uint32_t gen, uint32_t ufid);

/**
 * rec_sc__count_bare() - samples of (pid, gen) past the drain's deadline:
 * with only the mappings the table holds (no /proc read, no symbols),
 * write those their user stack @ufid hits, as the side band wrote every
 * mapping before it wrote only those (maptab.h, rec_maptab__defer()).
 * @return 0 or a negative errno.
 */
int rec_sc__count_bare(struct rec_sc *sc, uint32_t pid, uint32_t gen, uint32_t ufid);

/**
 * rec_sc__note_ip() - a raw user stack (--call-graph dwarf) of (pid, gen)
 * sampled at @ip: notes its JIT map and the symbols around @ip only, since
 * its callers are known after offline unwinding.
 * @return 0 or a negative errno.
 */
int rec_sc__note_ip(struct rec_sc *sc, uint32_t pid, uint32_t gen, uint64_t ip);

/**
 * rec_sc__interval_end() - before saf_writer__interval_end(): add the USYM
 * and JITSYM records learned in this interval and expire exited processes.
 * @return 0 or a negative errno.
 */
int rec_sc__interval_end(struct rec_sc *sc);

/**
 * rec_sc__finish() - before saf_writer__finish(): handle the side-band
 * records left (within the last poll's deadline: rec_sideband__poll()),
 * then the last symbols and JIT lines.
 * @return 0 or a negative errno.
 */
int rec_sc__finish(struct rec_sc *sc);

/**
 * rec_sc__new_file() - after rec_sc__interval_end() and the META of a new
 * file (--rotate): forget the kernel and ELF symbols and JIT lines written,
 * so they are written again as samples need them, drop the user stacks of
 * ids below @keep_from, and write the mappings of every tracked image.
 * @return 0 or a negative errno from the writer.
 */
int rec_sc__new_file(struct rec_sc *sc, uint32_t keep_from);

/** rec_sc__stats() - copy the counters into @st. */
void rec_sc__stats(const struct rec_sc *sc, struct rec_sc_stats *st);

/** rec_sc__maptab() - the mappings it tracks (borrowed, valid until rec_sc__free()). */
struct rec_maptab *rec_sc__maptab(struct rec_sc *sc);

/** rec_sc__free() - release everything. Accepts NULL. */
void rec_sc__free(struct rec_sc *sc);

#endif /* REC_SELFCONTAINED_H */
