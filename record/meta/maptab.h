/* SPDX-License-Identifier: MIT */
/*
 * maptab.h - the executable mappings of each recorded process image
 * (pid, exec generation), as learned from side-band MMAP2 records, forks
 * and /proc/PID/maps, used to turn sampled user addresses into (file,
 * offset) pairs for symbol embedding (elfsyms.h).
 */
#ifndef REC_MAPTAB_H
#define REC_MAPTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "elfsyms.h"
#include "rec_sink.h"

struct rec_maptab;

/**
 * rec_maptab__new() - an empty table feeding @es.
 * @es: borrowed, must outlive the table; NULL when symbols are not
 *      embedded (--no-embed-symbols): mappings are still tracked for forks.
 * @return a table released with rec_maptab__free(), or NULL with errno.
 */
struct rec_maptab *rec_maptab__new(struct rec_elfsyms *es);

/**
 * rec_maptab_map_fn - called for each executable file mapping the table
 * learns, before the MAP record is emitted (@m borrowed for the call; @fd
 * an open fd of the mapped file, borrowed for the call, or -1).
 */
typedef void (*rec_maptab_map_fn)(void *arg, int fd, const struct saf_map *m);

/** rec_maptab__on_map() - set the mapping hook (NULL for none). */
void rec_maptab__on_map(struct rec_maptab *mt, rec_maptab_map_fn fn, void *arg);

/* rec_maptab_want_fn - whether the hook wants the files of process @pid opened. */
typedef bool (*rec_maptab_want_fn)(void *arg, uint32_t pid);

/**
 * rec_maptab__on_map_want() - open files for the hook only for the
 * processes @want says (called with the hook's arg; NULL: every process).
 * The side band brings every process's mappings: with -p, opening each
 * file of the host's other processes cost auto 78 ms per 10 s here.
 */
void rec_maptab__on_map_want(struct rec_maptab *mt, rec_maptab_want_fn want);

/**
 * rec_maptab__add() - a mapping of (m->pid, m->gen) from m->time_ns on.
 * @m: copied (path and build id included).
 * @fd: -1, or an open fd of the mapped file, owned by the table from now
 *      on (handed to the elfsyms registry, or closed).
 * @sink: gets the MAP record, with the build id filled in: a mapping
 *        without one gets it read from @fd or its path (cached by dev and
 *        inode) when possible; those still without one are not embedded.
 * @return 0, -ENOMEM, or the sink's negative errno.
 */
int rec_maptab__add(struct rec_maptab *mt, const struct saf_map *m, int fd,
		    const struct rec_sink *sink);

/**
 * rec_maptab__wants_fd() - would rec_maptab__add() of @m use an open fd of
 * the file? Not when @m has a build id whose file an earlier mapping
 * already handed over with one (symbols are read once per build id), and
 * no file hook is set: opening each mapped file costs a path walk per
 * mapping, and short processes map the same dozen files again and again.
 */
bool rec_maptab__wants_fd(const struct rec_maptab *mt, const struct saf_map *m);

/**
 * rec_maptab__fork() - process @child starts as a copy of @parent's image:
 * emit a MAP record for (child, gen) for each mapping @parent has at
 * generation @gen, and track them. A parent unknown to the table is read
 * from /proc/PARENT/maps first (best effort).
 * @return the number of MAP records emitted, or a negative errno.
 */
int rec_maptab__fork(struct rec_maptab *mt, uint32_t parent, uint32_t child, uint32_t gen,
		     uint64_t time_ns, const struct rec_sink *sink);

/**
 * rec_maptab__load_proc() - track (pid, gen) from /proc/PID/maps, unless it
 * is known. Files are opened through /proc/PID/map_files.
 * @return 0, or a negative errno (-ENOENT gone, -EACCES refused).
 */
int rec_maptab__load_proc(struct rec_maptab *mt, uint32_t pid, uint32_t gen);

/**
 * rec_maptab__emit() - emit a MAP record (at @time_ns) for each mapping of
 * the image (pid, gen), e.g. after rec_maptab__load_proc().
 * @return the number of records, or the sink's negative errno.
 */
int rec_maptab__emit(struct rec_maptab *mt, uint32_t pid, uint32_t gen, uint64_t time_ns,
		     const struct rec_sink *sink);

/**
 * rec_maptab__emit_once() - emit the MAP records of (pid, gen) unless the
 * output has them already (side-band mappings, a fork, an earlier call, or
 * rec_maptab__emit_all() at the head of the file). With @may_load, an image
 * unknown to the table (running since before the recording) is read from
 * /proc/PID/maps first; pass false when /proc shows a later image.
 * @return the number of records, or a negative errno (-ENOMEM, the sink's).
 */
int rec_maptab__emit_once(struct rec_maptab *mt, uint32_t pid, uint32_t gen, bool may_load,
			  uint64_t time_ns, const struct rec_sink *sink);

/**
 * rec_maptab__note_stack() - tell the elfsyms registry which file offsets
 * the user addresses @ips of (pid, gen) hit. An image unknown to the table
 * is read from /proc first (a process running since before the recording).
 * @return the number of symbols newly wanted, or -ENOMEM.
 */
int rec_maptab__note_stack(struct rec_maptab *mt, uint32_t pid, uint32_t gen, const uint64_t *ips,
			   size_t n);

/**
 * rec_maptab__find() - the mapping of (pid, gen) holding address @pc, into
 * @m (its path borrowed until the table changes). An image unknown to the
 * table is read from /proc first, as for rec_maptab__note_stack().
 * @return 0, -ENOENT (no mapping there), or -ENOMEM.
 */
int rec_maptab__find(struct rec_maptab *mt, uint32_t pid, uint32_t gen, uint64_t pc,
		     struct saf_map *m);

/**
 * rec_maptab__find_span() - rec_maptab__find(), and in @span the addresses
 * [span[0], span[1]) around @pc that the same mapping answers for (later
 * mappings of a reused range cut it short) until the table changes.
 * @return as rec_maptab__find(); @span is set only on 0.
 */
int rec_maptab__find_span(struct rec_maptab *mt, uint32_t pid, uint32_t gen, uint64_t pc,
			  struct saf_map *m, uint64_t span[2]);

/**
 * rec_maptab__exit() - process @pid exited; its images are dropped at the
 * second rec_maptab__drained() from now, after the samples taken before
 * the exit were drained and noted.
 */
void rec_maptab__exit(struct rec_maptab *mt, uint32_t pid);

/**
 * rec_maptab__exec() - @pid exec'd into image @gen: its other images are
 * dropped as at an exit, two drains from now, once the samples taken
 * before the exec are written (a process that exec'd itself 385 times a
 * second grew the recorder by 1 MB/s).
 */
void rec_maptab__exec(struct rec_maptab *mt, uint32_t pid, uint32_t gen);

/** rec_maptab__drained() - a drain interval ended: drop expired images. */
void rec_maptab__drained(struct rec_maptab *mt);

/**
 * rec_maptab__emit_all() - emit a MAP record (at @time_ns) for each mapping
 * of every image tracked: the head of a new file (--rotate).
 * @return the number of records, or the sink's negative errno.
 */
int rec_maptab__emit_all(struct rec_maptab *mt, uint64_t time_ns, const struct rec_sink *sink);

/**
 * rec_maptab__new_file() - --rotate, before the new file's head is written:
 * forget the images whose process is gone (its exit was seen, or /proc/PID
 * is) that no sample or emit named in the file just closed nor the one
 * before: a later sample of that pid is of a new image. Then the build ids
 * no image left names leave the elfsyms registry and the fed set, and the
 * tables shrink to what is left. Never called without --rotate: one file
 * keeps every image it wrote.
 */
void rec_maptab__new_file(struct rec_maptab *mt);

/** rec_maptab__entries() - mappings tracked now, over all images. */
size_t rec_maptab__entries(const struct rec_maptab *mt);

/** rec_maptab__fed() - build ids whose file was handed over with an fd. */
size_t rec_maptab__fed(const struct rec_maptab *mt);

/** rec_maptab__clipped() - mapping paths clipped to SAF_MAX_STRING bytes (strclip.h). */
uint64_t rec_maptab__clipped(const struct rec_maptab *mt);

/**
 * rec_maptab__over() - mappings not tracked, past the table's bounds
 * (MAPTAB_MAX_PER_IMAGE exec mappings per image, 64 MiB in all); @cut
 * gets the reads of /proc/PID/maps stopped after 100 ms (the mappings
 * after that point, of unknown number, are not counted).
 */
uint64_t rec_maptab__over(const struct rec_maptab *mt, uint64_t *cut);

/**
 * rec_maptab__defer() - with @on, a side-band mapping (rec_maptab__add(),
 * rec_maptab__fork()) is tracked but not written, and
 * rec_maptab__emit_once() and rec_maptab__emit_all() write none: the MAP
 * records go out from rec_maptab__emit_hits() (a sampled user stack falls
 * in the mapping) or rec_maptab__emit_pending(). A mapping no sample hits
 * costs no file: a `nobody` loop of processes mapping 5,000 files each
 * wrote 0.5 MB/s of MAP records at -F 19 (tests/cli/5212).
 */
void rec_maptab__defer(struct rec_maptab *mt, bool on);
/** rec_maptab__deferred() - is defer on? */
bool rec_maptab__deferred(const struct rec_maptab *mt);
/**
 * rec_maptab__emit_hits() - with defer, a MAP record (at its own time, or
 * @now if later) for each mapping of (pid, gen) holding one of @ips and
 * not written in this file yet. An image unknown is read from /proc with
 * @may_load (not past the drain's deadline: only what the table has).
 * @return the number of records, or a negative errno (the sink's).
 */
int rec_maptab__emit_hits(struct rec_maptab *mt, uint32_t pid, uint32_t gen, const uint64_t *ips,
			  size_t n, bool may_load, uint64_t now, const struct rec_sink *sink);
/**
 * rec_maptab__emit_pending() - with defer, every mapping of (pid, gen)
 * not written in this file yet: a raw stack (--call-graph dwarf) is
 * unwound offline through any of them.
 * @return the number of records, or a negative errno (the sink's).
 */
int rec_maptab__emit_pending(struct rec_maptab *mt, uint32_t pid, uint32_t gen, uint64_t now,
			     const struct rec_sink *sink);
/**
 * rec_maptab__unwritten() - with defer, mappings never written (no sample
 * hit them), dropped or still tracked; @imgs (may be NULL) gets the
 * images they belong to.
 */
uint64_t rec_maptab__unwritten(const struct rec_maptab *mt, uint64_t *imgs);
/** rec_maptab__unwritten_dropped() - of those, the ones dropped so far (cheap). */
uint64_t rec_maptab__unwritten_dropped(const struct rec_maptab *mt);
/** rec_maptab__images() - images (pid, gen) tracked now. */
size_t rec_maptab__images(const struct rec_maptab *mt);

/** rec_maptab__free() - release the table (not @es). Accepts NULL. */
void rec_maptab__free(struct rec_maptab *mt);

struct rec_vdso;

/**
 * rec_maptab__set_vdso() - name every "[vdso]" mapping of @v's length by @v
 * (borrowed, kept until rec_maptab__free()): its build id goes in the MAP
 * record, its symbols are embedded, and its fd goes to on_file and on_map.
 */
void rec_maptab__set_vdso(struct rec_maptab *mt, const struct rec_vdso *v);

#endif /* REC_MAPTAB_H */
