/* SPDX-License-Identifier: MIT */
/*
 * uwtrim.h - the parts of a captured user stack that sa-report's unwind
 * will read, found by walking the capture here with the same rules
 * (report/unwind/unwind.c) over the .eh_frame of the files mapped on this host,
 * so that a USTACK_SPARSE record keeps only those (docs/unwinding.md).
 */
#ifndef REC_UWTRIM_H
#define REC_UWTRIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rec_maptab;
struct rec_uwtrim;

/* What the trimmer did, for --verbose and the tests. */
struct rec_uwtrim_stats {
	uint64_t captures;  /* asked about */
	uint64_t trimmed;   /* answered with runs */
	uint64_t cut_short; /* of those, walks that met a frame they could not follow */
	uint64_t bytes_in, bytes_out;
	uint64_t files, files_failed; /* binaries whose .eh_frame was opened */
};

/**
 * rec_uwtrim__new() - a trimmer finding mappings in @mt (borrowed).
 * @return an object released with rec_uwtrim__free(), or NULL with errno.
 */
struct rec_uwtrim *rec_uwtrim__new(struct rec_maptab *mt);

/** rec_uwtrim__free() - release the trimmer and its files. Accepts NULL. */
void rec_uwtrim__free(struct rec_uwtrim *t);

/**
 * rec_uwtrim__runs() - the runs (saf_urun__put() encoding) of the capture
 * @stack, @len of (pid, gen) at registers @ip, @sp, @fp that the report's
 * walk reads, into @out of @cap bytes.
 * Where the walk meets a frame it cannot follow here (no FDE in .eh_frame,
 * a rule that is a DWARF expression), everything from 128 bytes below that
 * frame's stack pointer to the end is kept; past a frame without an FDE
 * (or without a mapped file) the walk goes on by frame pointers, as the
 * report's walk does with the binary and no debug file.
 * @return the bytes written, or -1 when the whole copy should be kept
 * (a USTACK record): the runs would not be smaller, or no memory.
 */
ssize_t rec_uwtrim__runs(struct rec_uwtrim *t, uint32_t pid, uint32_t gen, uint64_t ip, uint64_t sp,
			 uint64_t fp, const uint8_t *stack, uint32_t len, uint8_t *out, size_t cap);

/**
 * rec_uwtrim__frames() - the frames the last rec_uwtrim__runs() walk found:
 * *@pcs (borrowed, valid until the next call on @t) holds *@n pcs, the leaf
 * first, then the return addresses as read (as sa-report's walk gives them).
 * @return how the walk ended: SAF_WALK_COMPLETE, or SAF_WALK_CUT where it
 * met a frame it could not follow (no FDE: the frames after it are the
 * frame-pointer fallback's; an expression rule: the walk stops there).
 */
uint32_t rec_uwtrim__frames(const struct rec_uwtrim *t, const uint64_t **pcs, uint32_t *n);

/** rec_uwtrim__stats() - counters so far. */
const struct rec_uwtrim_stats *rec_uwtrim__stats(const struct rec_uwtrim *t);

#endif /* REC_UWTRIM_H */
