/* SPDX-License-Identifier: MIT */
/*
 * symcache.h - what symbolization derived from a binary, kept on disk per
 * build id ($XDG_CACHE_HOME/sa) so that a later report of the same binaries
 * opens neither their ELF nor their DWARF: the frames of every file offset
 * looked up before. Files are checksummed, written atomically, bounded in
 * total size (least recently used removed first); a damaged one is ignored.
 */
#ifndef SA_REPORT_SYMCACHE_H
#define SA_REPORT_SYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strpool.h"

/* Default bound of the cache directory's total size. */
#define RPT_SYMCACHE_MAX_BYTES (256ULL << 20)
#define RPT_SYMCACHE_HEX_MAX   128     /* longest build id, in hex digits */
#define RPT_SYMCACHE_SUFFIX    ".sac"  /* entry files: <build id>-<variant>.sac */
#define RPT_SYMCACHE_TMP       ".tmp-" /* files being written */

/*
 * The files an entry was derived from, and how: an entry is used only when
 * every field equals the current one. A file is known by inode, size,
 * modification and change time (0s when absent): a file rewritten in place
 * changes its ctime even when its mtime is set back.
 */
struct rpt_symcache_id {
	uint64_t sym_ino, sym_size, sym_mtime_ns, sym_ctime_ns; /* the file symbols came from */
	uint64_t bin_ino, bin_size, bin_mtime_ns, bin_ctime_ns; /* the binary (segments), if any */
	uint32_t source;					/* enum rpt_dso_source */
	uint32_t variant; /* symbolizer options that shape names */
};

/* One frame: @name is an offset in the entry's pool. */
struct rpt_symcache_frame {
	uint32_t name;
	uint32_t kind;
};

struct rpt_symcache;
struct rpt_symcache_ent;

/**
 * rpt_symcache_id__init() - the identity of symbol file @sym and binary
 * @bin (NULL: none), read with stat(), plus @source and @variant.
 */
void rpt_symcache_id__init(struct rpt_symcache_id *id, const char *sym, const char *bin,
			   uint32_t source, uint32_t variant);

/**
 * rpt_symcache__open() - the cache in directory @dir, created (mode 0700,
 * parents too) when missing; NULL @dir means $XDG_CACHE_HOME/sa, else
 * $HOME/.cache/sa. The directory must be ours: not a symlink, owned by the
 * effective user, writable by nobody else. @max_bytes: bound of the files'
 * total size (0: RPT_SYMCACHE_MAX_BYTES).
 * @return a handle released with rpt_symcache__free(), or NULL with errno
 * (EPERM for a directory that is not ours, ENOENT without a home, ENOMEM).
 */
struct rpt_symcache *rpt_symcache__open(const char *dir, uint64_t max_bytes);

/** rpt_symcache__free() - release the handle. Accepts NULL. */
void rpt_symcache__free(struct rpt_symcache *c);

/**
 * rpt_symcache__has() - a file for build id @hex and @variant exists (it
 * may still be rejected by rpt_symcache__load()). Cheap: one fstatat().
 */
bool rpt_symcache__has(struct rpt_symcache *c, const char *hex, uint32_t variant);

/**
 * rpt_symcache__load() - the entry of build id @hex (lower-case) made from
 * @id. A missing, damaged, foreign or mismatching file gives a new empty
 * entry (stored again by rpt_symcache__store() once something is added).
 * Marks the file used (for eviction). @hit: set to whether the file was used.
 * @return an entry released with rpt_symcache_ent__free(), or NULL (ENOMEM).
 */
struct rpt_symcache_ent *rpt_symcache__load(struct rpt_symcache *c, const char *hex,
					    const struct rpt_symcache_id *id, bool *hit);

/**
 * rpt_symcache__store() - write @e if something was added since it was
 * loaded: to a temporary file, renamed over the entry's (readers see the
 * old file or the new one, never a part). Two reports storing at once each
 * write a whole file; the last rename wins. Call rpt_symcache__trim() after
 * the last store. @return 1 when written, 0 when there was nothing to
 * write, or -errno (the cache is only an optimisation: callers ignore it).
 */
int rpt_symcache__store(struct rpt_symcache *c, struct rpt_symcache_ent *e);

/**
 * rpt_symcache__trim() - remove the least recently used (oldest
 * modification time) entry files while the directory holds more than its
 * bound, and temporary files older than an hour. Safe against other
 * reports doing the same (a file removed twice counts once).
 * @return 0 or -errno.
 */
int rpt_symcache__trim(struct rpt_symcache *c);

/**
 * rpt_symcache_dir__open_note() - create (mode 0700, parents too) and open
 * the directory @dir, NULL for the default (rpt_symcache__open()), if it is
 * ours, and say what -v says of it into @note (@cap bytes; NULL: nothing):
 * the directory used, or "none: " and why (a $HOME that is not the
 * effective user's, a symlink). @return its descriptor, or -errno (-EPERM
 * when it is not ours).
 */
int rpt_symcache_dir__open_note(const char *dir, char *note, size_t cap);

/**
 * rpt_symcache__open_note() - rpt_symcache__open() with the note of
 * rpt_symcache_dir__open_note().
 */
struct rpt_symcache *rpt_symcache__open_note(const char *dir, uint64_t max_bytes, char *note,
					     size_t cap);

/** rpt_symcache_dir__trim() - rpt_symcache__trim() of directory @dirfd bound to @max_bytes. */
int rpt_symcache_dir__trim(int dirfd, uint64_t max_bytes);

/** rpt_symcache_ent__free() - release an entry. Accepts NULL. */
void rpt_symcache_ent__free(struct rpt_symcache_ent *e);

/**
 * rpt_symcache_ent__get() - the frames stored for file offset @off of a
 * mapping at file offset @pgoff, copied to @out (at most @cap); their names
 * via rpt_symcache_ent__str(). @return the number copied (0 is a stored
 * answer), or -ENOENT.
 */
int rpt_symcache_ent__get(const struct rpt_symcache_ent *e, uint64_t off, uint64_t pgoff,
			  struct rpt_symcache_frame *out, int cap);

/**
 * rpt_symcache_ent__name() - the name id of @name (copied) in @e, for
 * rpt_symcache_ent__put_frames(). @return it, or -ENOMEM.
 */
int64_t rpt_symcache_ent__name(struct rpt_symcache_ent *e, const char *name);

/**
 * rpt_symcache_ent__put_frames() - store the @n frames @f (names from
 * rpt_symcache_ent__name()) of @off, replacing any. @last: no
 * rpt_symcache_ent__get() of @e will follow, only rpt_symcache__store()
 * (cheaper: no index is kept). @return 0 or -ENOMEM.
 */
int rpt_symcache_ent__put_frames(struct rpt_symcache_ent *e, uint64_t off, uint64_t pgoff,
				 const struct rpt_symcache_frame *f, int n, bool last);

/**
 * rpt_symcache_ent__put() - rpt_symcache_ent__put_frames() of @n (at most
 * 64) frames named @names[i] (copied), of kinds @kinds[i].
 * @return 0, -EINVAL or -ENOMEM.
 */
int rpt_symcache_ent__put(struct rpt_symcache_ent *e, uint64_t off, uint64_t pgoff,
			  const char *const *names, const uint32_t *kinds, int n);

/** rpt_symcache_ent__str() - the name of id @name. Borrowed, valid until the next put. */
const char *rpt_symcache_ent__str(const struct rpt_symcache_ent *e, uint32_t name);

/** rpt_symcache_ent__facts() - the caller's flags kept with the entry. */
uint32_t rpt_symcache_ent__facts(const struct rpt_symcache_ent *e);

/** rpt_symcache_ent__set_facts() - set them (stored with the entry). */
void rpt_symcache_ent__set_facts(struct rpt_symcache_ent *e, uint32_t facts);

#endif /* SA_REPORT_SYMCACHE_H */
