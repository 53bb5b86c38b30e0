/* SPDX-License-Identifier: MIT */
/*
 * symbolize_int.h - the symbolizer's state, shared by symbolize.c (the
 * registry, the source search and the per-run lookup cache) and symdisk.c
 * (its use of the on-disk cache, symcache.h). Not for other files.
 */
#ifndef SA_REPORT_SYMBOLIZE_INT_H
#define SA_REPORT_SYMBOLIZE_INT_H

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "symbolize.h"
#include "symcache.h"
#include "symlines.h"
#include "symtab.h"

#define SYM_MAX_FRAMES 64

/* A lookup to add to its binary's cache entry (symdisk.c). */
struct rpt_symdisk_pend {
	uint32_t dso, n;
	size_t first; /* in psyms */
	uint64_t off, pgoff;
};

struct rpt_symbolizer {
	struct rpt_symbolizer_opts o;
	struct rpt_strpool pool;
	struct rpt_dso *dsos;
	size_t ndsos, dsos_cap;
	struct rpt_hmap dso_index;  /* pool offset of the key string -> index */
	struct rpt_symtab usyms;    /* key: dso index */
	struct rpt_symlines ulines; /* key: dso index */
	struct rpt_hmap cache;	    /* dso << 44 | offset -> first << 8 | n */
	struct rpt_hmap names;	    /* ELF name pointer -> pool offset (no --lines) */
	struct rpt_sym *syms;
	size_t nsyms, syms_cap;
	struct rpt_sym tmp[SYM_MAX_FRAMES];
	struct rpt_dwprefetch *prefetch; /* NULL: one CPU, or none started */
	struct rpt_symcache *disk;	 /* NULL: --no-cache, or not usable */
	bool disk_tried;
	char disk_note[PATH_MAX + 160]; /* -v: the cache used, or "none: " and why */
	struct rpt_hmap disk_names;	/* dso << 32 | cache name id -> pool offset */
	struct rpt_symdisk_pend *pend;	/* lookups for the cache, in order */
	size_t npend, pend_cap;
	struct rpt_sym *psyms; /* their frames */
	size_t npsyms, psyms_cap;
};

static inline int64_t intern(struct rpt_symbolizer *s, const char *str)
{
	return rpt_strpool__intern(&s->pool, str, strlen(str));
}

/*
 * rpt_symbolizer__set_reason() - @d's reason: "@why: @path" (@path may be
 * NULL). Inline beside intern(): symdisk.c sets reasons too, and calls
 * nothing of symbolize.c, which calls it.
 */
static inline void rpt_symbolizer__set_reason(struct rpt_symbolizer *s, struct rpt_dso *d,
					      const char *why, const char *path)
{
	char buf[PATH_MAX + 64];
	int64_t r;

	snprintf(buf, sizeof(buf), path ? "%s: %s" : "%s", why, path);
	r = intern(s, buf);
	if (r >= 0)
		d->reason = r;
}

/**
 * rpt_symdisk__has() - build id @hex has a cache file for these options:
 * its debug file need not be inflated ahead. Opens the cache on first use.
 */
bool rpt_symdisk__has(struct rpt_symbolizer *s, const char *hex);

/**
 * rpt_symdisk__open() - the cache entry of @d's files: @sym opened with
 * @bin (may be NULL) as @source. When the entry on disk was made from the
 * same files, @d takes the facts their open gave then, opens nothing now
 * and gets the entry (true). Else *@fresh gets an empty entry for
 * rpt_symdisk__keep() (or NULL), and the caller opens the files.
 */
bool rpt_symdisk__open(struct rpt_symbolizer *s, struct rpt_dso *d, const char *sym,
		       const char *bin, enum rpt_dso_source source,
		       struct rpt_symcache_ent **fresh);

/**
 * rpt_symdisk__keep() - @d was opened from @source (@bin when @have_bin):
 * give it @e (owned from now on) if @e was made for that, else free @e.
 */
void rpt_symdisk__keep(struct rpt_symbolizer *s, struct rpt_dso *d, struct rpt_symcache_ent *e,
		       enum rpt_dso_source source, bool have_bin, const char *bin);

/** rpt_symdisk__open_deferred() - a cached @d missed: open its files now. */
void rpt_symdisk__open_deferred(struct rpt_symbolizer *s, struct rpt_dso *d);

/**
 * rpt_symdisk__get() - s->tmp from @d's cache entry for @off in a mapping
 * at @pgoff. @return the number of frames, -ENOENT (not there) or -ENOMEM.
 */
int rpt_symdisk__get(struct rpt_symbolizer *s, struct rpt_dso *d, uint64_t off, uint64_t pgoff);

/**
 * rpt_symdisk__put() - keep the @n frames of s->tmp for @d's entry (added
 * to it by rpt_symdisk__flush(); a failure only loses them).
 */
void rpt_symdisk__put(struct rpt_symbolizer *s, struct rpt_dso *d, uint64_t off, uint64_t pgoff,
		      int n);

/**
 * rpt_symdisk__flush() - add the kept lookups to the binaries' entries,
 * write and release them, on the prefetcher's thread when there is one
 * (done before its join); the pool is copied for it.
 */
void rpt_symdisk__flush(struct rpt_symbolizer *s);

#endif /* SA_REPORT_SYMBOLIZE_INT_H */
