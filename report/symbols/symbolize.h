/* SPDX-License-Identifier: MIT */
/*
 * symbolize.h - offline symbolization per (binary, file offset), cached.
 * A binary is known by its build id (or its path when the recording has no
 * id); its symbols come from, in order: a debug file found by build id, the
 * binary at its recorded path (or under --symfs) when its build id matches,
 * and symbols embedded in the recording (USYM). Each binary keeps the source
 * it was symbolized from and the reason anything better could not be used.
 * What a binary's files gave is kept on disk per build id (symcache.h).
 */
#ifndef SA_REPORT_SYMBOLIZE_H
#define SA_REPORT_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strpool.h"

enum rpt_dso_source {
	RPT_SRC_NONE = 0,
	RPT_SRC_DEBUG_FILE, /* a separate debug file found by build id */
	RPT_SRC_BINARY,	    /* the binary itself, build id checked */
	RPT_SRC_EMBEDDED,   /* USYM records of the recording */
	RPT_SRC_DEBUGINFOD, /* a debug file fetched through libdebuginfod */
};

/* One binary; every string is an offset in the symbolizer's pool. */
struct rpt_dso {
	uint32_t path;	   /* as recorded */
	uint32_t build_id; /* lower-case hex, 0 = none recorded */
	uint32_t file_idx; /* input file, for binaries without build id */
	enum rpt_dso_source source;
	uint32_t used_path; /* the file symbols came from, 0 = none */
	uint32_t reason;    /* why a better source was not usable, 0 = none */
	bool opened;	    /* sources were searched */
	uint32_t id_kind;   /* enum saf_id_kind of build_id: 1, a content hash */
	/* statistics kept by the pipeline */
	uint64_t samples;    /* samples with a frame in this binary */
	uint64_t frames;     /* frames here (weighted by samples) */
	uint64_t unresolved; /* of those, frames left unnamed */
	uint64_t outermost;  /* samples whose outermost frame is here */
	uint64_t truncated;  /* of those, samples whose walk looks broken */
	uint64_t stamp;	     /* pipeline: last stack that counted it */
	/* private */
	struct rpt_elfsym *elf;
	bool has_usyms;
	int prefetch;		       /* its debug file's prefetch job, -1 = none */
	struct rpt_symcache_ent *cent; /* its on-disk cache entry, or NULL */
	uint32_t bin_path;	       /* the binary opened with used_path, 0 = none */
	bool deferred;		       /* cached: used_path opened on the first miss */
};

/* One resolved frame. */
struct rpt_sym {
	uint32_t name; /* pool offset: demangled, with " file:line" for --lines */
	uint32_t kind; /* enum rpt_frame_kind: RPT_FRAME_USER or RPT_FRAME_INLINE */
};

struct rpt_symbolizer_opts {
	const char *const *debug_dirs; /* --debug-dir, searched before /usr/lib/debug */
	size_t ndebug_dirs;
	const char *symfs; /* --symfs: binaries are looked up under it first */
	bool no_demangle;
	bool lines;
	bool no_system_debug;  /* skip /usr/lib/debug (tests) */
	bool no_prefetch;      /* no second thread: no user frame will be looked up (-K) */
	bool no_cache;	       /* --no-cache: no symcache.h cache on disk */
	const char *cache_dir; /* NULL: $XDG_CACHE_HOME/sa or ~/.cache/sa */
};

struct rpt_symbolizer;

/**
 * rpt_symbolizer__new() - an empty symbolizer. @o: copied (strings borrowed,
 * they must outlive the symbolizer). @return an object released with
 * rpt_symbolizer__free(), or NULL with errno = ENOMEM.
 */
struct rpt_symbolizer *rpt_symbolizer__new(const struct rpt_symbolizer_opts *o);

/** rpt_symbolizer__free() - release it and every opened binary. Accepts NULL. */
void rpt_symbolizer__free(struct rpt_symbolizer *s);

/**
 * rpt_symbolizer__cache_note() - for -v: the symbol cache directory used,
 * or "none: " and why; NULL when no binary asked for it. Borrowed, valid
 * until rpt_symbolizer__free().
 */
const char *rpt_symbolizer__cache_note(const struct rpt_symbolizer *s);

/** rpt_symbolizer__pool() - the string pool of every name it returns. Borrowed. */
struct rpt_strpool *rpt_symbolizer__pool(struct rpt_symbolizer *s);

/**
 * rpt_symbolizer__dso() - the index of a binary, registering it if new.
 * @bid, @bid_len: its build id (bid_len 0 = unknown; then @path and
 * @file_idx name it, since one path differs between hosts).
 * @return the index (>= 0) or -ENOMEM. Nothing is opened yet.
 */
int rpt_symbolizer__dso(struct rpt_symbolizer *s, const uint8_t *bid, size_t bid_len,
			const char *path, uint32_t file_idx);

/**
 * rpt_symbolizer__set_id_kind() - what binary @idx's build id is (enum
 * saf_id_kind, "MAP record"): with SAF_ID_CONTENT a content hash, checked
 * against a binary's own, and no debug file is looked for; a kind this
 * reader does not know, never checked: only embedded symbols name it.
 */
void rpt_symbolizer__set_id_kind(struct rpt_symbolizer *s, uint32_t idx, uint32_t kind);

/** rpt_symbolizer__get() - binary @idx (borrowed, valid until the next __dso()). */
struct rpt_dso *rpt_symbolizer__get(struct rpt_symbolizer *s, uint32_t idx);

/** rpt_symbolizer__ndsos() - number of binaries registered. */
size_t rpt_symbolizer__ndsos(const struct rpt_symbolizer *s);

/**
 * rpt_symbolizer__add_usym() - an embedded symbol of binary @dso (USYM
 * record): @offset, @size in file offsets; @name copied.
 * @return 0 or -ENOMEM.
 */
int rpt_symbolizer__add_usym(struct rpt_symbolizer *s, uint32_t dso, uint64_t offset, uint64_t size,
			     const char *name);

/**
 * rpt_symbolizer__add_uline() - a source position carried for binary
 * @dso (ULINE record): the frame at @depth of file offsets [@offset,
 * @offset + @size), at @file:@line, named @name (both copied). Used, with
 * the USYM's name for depth 0, where the binary's own files name nothing.
 * @return 0 or -ENOMEM.
 */
int rpt_symbolizer__add_uline(struct rpt_symbolizer *s, uint32_t dso, uint64_t offset,
			      uint64_t size, uint32_t depth, uint32_t line, const char *file,
			      const char *name);

/**
 * rpt_symbolizer__lookup() - frames of file offset @off of binary @dso,
 * innermost (inlined) first, outermost function last. Opens the binary on
 * first use. @map_pgoff: file offset of the mapping that held the address.
 * @frames: set to a borrowed array valid until the next lookup.
 * @return the number of frames, 0 when nothing names @off, or -ENOMEM.
 */
int rpt_symbolizer__lookup(struct rpt_symbolizer *s, uint32_t dso, uint64_t off, uint64_t map_pgoff,
			   const struct rpt_sym **frames);

/**
 * rpt_symbolizer__retire() - no lookup will follow: release the opened
 * binaries and their DWARF, on the prefetcher's thread when there is one
 * (tearing a libc debug file down costs milliseconds the caller can spend
 * writing its output). The binaries' facts (rpt_dso) stay.
 */
void rpt_symbolizer__retire(struct rpt_symbolizer *s);

/** One address to symbolize ahead: rpt_symbolizer__lookup()'s arguments. */
struct rpt_sym_req {
	uint32_t dso;
	uint64_t off, map_pgoff;
	uint64_t rank; /* private to rpt_symbolizer__warm() */
	size_t idx;    /* idem */
};

/**
 * rpt_symbolizer__warm() - look the @n addresses of @v up (@v is reordered)
 * so that later lookups of them are answered from the cache: first those
 * that need no DWARF still being inflated by the prefetcher, then the rest
 * in the order their compile units arrive, so the reading overlaps the
 * inflating. Worth it only when rpt_symbolizer__async(). @return 0 or -ENOMEM.
 */
int rpt_symbolizer__warm(struct rpt_symbolizer *s, struct rpt_sym_req *v, size_t n);

/**
 * rpt_symbolizer__async() - debug files are queued or being inflated on
 * another thread (a lookup may wait for them).
 */
bool rpt_symbolizer__async(const struct rpt_symbolizer *s);

/**
 * rpt_demangle() - demangled C++/Rust name of @name into @buf (truncated
 * to @cap), GCC clone suffixes written as c++filt does ("f(int) [clone
 * .isra.0]"). A C++ name the demangler rejects is outlined: its leading
 * qualified name, "<...>" for template arguments, the clone suffixes
 * (demangle.c). Thread-safe.
 * @return @buf, or @name itself when it is not mangled or not readable.
 */
const char *rpt_demangle(const char *name, char *buf, size_t cap);

#endif /* SA_REPORT_SYMBOLIZE_H */
