/* SPDX-License-Identifier: MIT */
/*
 * elfsyms.h - ELF symbols embedded in the recording: a registry of the
 * executable files mapped by recorded processes (by build id), the file
 * offsets sampled in each, and the SYMTAB + USYM records of the symbols
 * that cover them, each symbol written once per recording.
 */
#ifndef REC_ELFSYMS_H
#define REC_ELFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rec_sink.h"

struct rec_elfsyms;

/* Costs and outcomes, for the summary and docs/self-contained.md. */
struct rec_elfsyms_stats {
	uint64_t files;	     /* build ids registered (again after a forget) */
	uint64_t loaded;     /* files whose symbol table was read */
	uint64_t failed;     /* files that could not be read or did not match */
	uint64_t no_symbols; /* files with neither .symtab nor .dynsym */
	uint64_t fds_held;   /* open fds kept for files not read yet */
	uint64_t symtabs;    /* SYMTAB records emitted */
	uint64_t usyms;	     /* USYM records emitted */
	uint64_t name_bytes; /* bytes of names in those USYM records */
	uint64_t load_ns;    /* CLOCK_MONOTONIC time spent reading ELF files */
	uint64_t evicted;    /* tables dropped at a rotation (read again if needed) */
	uint64_t tab_bytes;  /* heap bytes of the tables held now */
	uint64_t forgotten;  /* files no process image named any more, dropped */
	uint64_t clipped;    /* names over SAF_MAX_STRING bytes, clipped (strclip.h) */
	uint64_t dbgsyms;    /* tables read from a debug file's .symtab (locals too) */
	uint64_t ulines;     /* ULINE records emitted (Go's file:line, golines.h) */
};

/*
 * Where the host's debug files are found by build id
 * (DIR/.build-id/xx/rest.debug). A stripped binary keeps only its exported
 * symbols; its debug file, when installed (libc6-dbg), also names the local
 * functions every stack passes (glibc's __libc_start_call_main,
 * start_thread, clone3), and those are embedded instead.
 */
#define REC_ELFSYMS_DEBUG_DIR "/usr/lib/debug"

/*
 * The symbol tables held are a cache. When reading one takes them past
 * this many bytes, the least recently used go (about 40 python3-sized
 * tables fit; those with symbols still to be written in the interval stay).
 * With --rotate, a table no mapping or sample named in the file just closed
 * nor the one before goes at the rotation. A dropped table is read again
 * from its path when a sample needs it; within a file, what was written of
 * it is remembered (a flag per symbol). Likewise the fd kept for a file not
 * read yet is closed at a rotation after two such files: it would keep a
 * deleted binary on disk for the whole run.
 */
#define REC_ELFSYMS_BUDGET (16u << 20)

/**
 * rec_elfsyms__new() - an empty registry.
 * @max_fds: how many not-yet-read files to keep open (a kept fd lets a
 *           deleted file or one in another mount namespace be read later);
 *           0 picks half of RLIMIT_NOFILE's soft limit, after raising it
 *           to the hard limit.
 * @return a registry released with rec_elfsyms__free(), or NULL with errno.
 * Not thread-safe.
 */
struct rec_elfsyms *rec_elfsyms__new(size_t max_fds);

/**
 * rec_elfsyms__file() - register an executable file and get its id.
 * @build_id, @bid_len: the build id (1 to SAF_MAX_BUILD_ID bytes), or a
 *           content hash (then rec_elfsyms__set_kind()); files with
 *           neither are not embedded (-EINVAL).
 * @path: the path recorded in its MAP record; copied.
 * @fd: -1, or an open read-only fd of the file, which the registry owns
 *      from now on (it is closed at once if the file is known or the fd
 *      budget is spent). With -1, @path is opened when symbols are needed.
 *
 * A file opened later is used only if its build id matches.
 * @return the file id (>= 0), or a negative errno; @fd is owned by the
 * registry even on failure.
 */
int rec_elfsyms__file(struct rec_elfsyms *es, const uint8_t *build_id, size_t bid_len,
		      const char *path, int fd);

/**
 * rec_elfsyms__set_kind() - what @file's build id is (enum saf_id_kind;
 * SAF_ID_GNU when never set): with SAF_ID_CONTENT, a content hash
 * (core/contentid.h), no debug file is looked for, a file opened by path
 * is used only if its hash is the same, and its SYMTAB says the kind.
 */
void rec_elfsyms__set_kind(struct rec_elfsyms *es, int file, uint32_t kind);

/**
 * rec_elfsyms__note() - a sample hit file offset @off of file @file.
 *
 * Reads the file's symbol table the first time it is needed (.symtab,
 * else .dynsym), then marks the symbol covering @off for the next flush.
 * An offset no symbol covers is left out: the report then shows the
 * module name, never a neighbour's name.
 * @return 1 when a symbol became wanted, 0 when none did (already wanted,
 * not covered, file unreadable), or -ENOMEM / -EINVAL for a bad id.
 */
int rec_elfsyms__note(struct rec_elfsyms *es, int file, uint64_t off);

/**
 * rec_elfsyms__flush() - emit, per file with newly wanted symbols, one
 * SYMTAB record then its USYM records ("SYMTAB record", "USYM record" in
 * docs/format.md).
 * @return the number of USYM records emitted, or the sink's negative errno
 * (records not emitted stay wanted and go in the next flush).
 */
int rec_elfsyms__flush(struct rec_elfsyms *es, const struct rec_sink *sink);

/**
 * rec_elfsyms__new_file() - after rec_elfsyms__flush(), the writer moved to
 * a new file (--rotate): forget which symbols were emitted, so symbols
 * noted from now on are emitted again, and drop tables as
 * REC_ELFSYMS_BUDGET says.
 */
void rec_elfsyms__new_file(struct rec_elfsyms *es);

/** rec_elfsyms__count() - files registered now; ids are below it. */
size_t rec_elfsyms__count(const struct rec_elfsyms *es);

/**
 * rec_elfsyms__forget() - at a rotation, after rec_elfsyms__flush(): drop
 * the files no process image names any more and number the rest again.
 * @ids: rec_elfsyms__count() entries, nonzero for each file id still named;
 *       on return each kept file's new id, -1 for a dropped one. A file
 *       with symbols not flushed yet is kept.
 * @n: rec_elfsyms__count().
 *
 * A file mapped again later is registered anew (the next file gets its
 * symbols again anyway). This bounds the registry by the files the live
 * processes map, not by every build id the host ever ran.
 * @return 0, or -EINVAL when @n is not the count (nothing dropped).
 */
int rec_elfsyms__forget(struct rec_elfsyms *es, int *ids, size_t n);

/** rec_elfsyms__stats() - copy the counters into @st. */
void rec_elfsyms__stats(const struct rec_elfsyms *es, struct rec_elfsyms_stats *st);

/** rec_elfsyms__set_budget() - bytes of tables held (REC_ELFSYMS_BUDGET by default). */
void rec_elfsyms__set_budget(struct rec_elfsyms *es, uint64_t bytes);

/**
 * rec_elfsyms__read_build_id() - the GNU build id of an ELF file.
 * @fd: borrowed; read with pread, its offset is not used.
 * @buf, @cap: out buffer; SAF_MAX_BUILD_ID bytes is always enough.
 * @return the build id length (> 0), -ENOENT when the file has none,
 * -ENOEXEC when it is not ELF, -ENOSPC when @cap is too small.
 */
int rec_elfsyms__read_build_id(int fd, uint8_t *buf, size_t cap);

/** rec_elfsyms__free() - close every fd, free everything. Accepts NULL. */
void rec_elfsyms__free(struct rec_elfsyms *es);

#endif /* REC_ELFSYMS_H */
