/* SPDX-License-Identifier: MIT */
/*
 * stackdb.h - file-level stack ids (stackdb.c): every stack interned once
 * per file and written as a STACK record when first seen. Used by drain.c.
 */
#ifndef REC_STACKDB_H
#define REC_STACKDB_H

#include <stddef.h>
#include <linux/types.h>

struct saf_writer;

struct rec_stackdb;

/**
 * rec_stackdb__new() - an empty table.
 * @return a table released with rec_stackdb__free(), or NULL with errno.
 */
struct rec_stackdb *rec_stackdb__new(void);

/**
 * rec_stackdb__intern() - the file id of the stack @ips[0..@n) of @kind
 * (SAF_STACK_*), leaf first. A stack seen for the first time gets the next
 * id and is added to @w as a STACK record.
 * @err: set to a negative errno on failure (then 0 is returned), else 0.
 * @return the id (>= 1), or 0 when @n is 0 or on error.
 */
__u32 rec_stackdb__intern(struct rec_stackdb *db, __u32 kind, const __u64 *ips, __u32 n,
			  struct saf_writer *w, int *err);

/**
 * rec_stackdb__nframes() - frame count of stack @id (255 means >= 255); 0
 * for id 0 (no stack) and for ids not given out yet.
 */
__u32 rec_stackdb__nframes(const struct rec_stackdb *db, __u32 id);

/** rec_stackdb__count() - unique stacks so far. */
size_t rec_stackdb__count(const struct rec_stackdb *db);

/**
 * rec_stackdb__keep_frames() - for --rotate: keep the frames of the stacks
 * written to the current and the previous file (stackkeep.c), so that
 * rec_stackdb__ensure() can write them again in the next file.
 * @return 0 or -ENOMEM.
 */
int rec_stackdb__keep_frames(struct rec_stackdb *db);

/**
 * rec_stackdb__new_file() - the writer moved to a new file: forget which
 * stacks were written (a stack seen again gets a new id and STACK record;
 * ids stay unique over the whole run), so memory is bounded by two files'
 * stacks: frame counts of ids before the file just closed are dropped. Ids
 * given before stay valid through rec_stackdb__ensure().
 * @return the first id of the file just closed: no later reference can
 * name a smaller one.
 */
__u32 rec_stackdb__new_file(struct rec_stackdb *db);

/**
 * rec_stackdb__ensure() - id @id is about to be referenced in the current
 * file: when it was written to the previous file only (a sample taken
 * after the last interval's flip, drained after the rotation), write its
 * STACK record again. @kind, @ips, @n get the stack (borrowed until the
 * next call) when it was written now.
 * @return 1 when written now, 0 when nothing was needed, or a negative errno.
 */
int rec_stackdb__ensure(struct rec_stackdb *db, __u32 id, struct saf_writer *w, __u32 *kind,
			const __u64 **ips, __u32 *n);

/** rec_stackdb__free() - release the table. Accepts NULL. */
void rec_stackdb__free(struct rec_stackdb *db);

#endif /* REC_STACKDB_H */
