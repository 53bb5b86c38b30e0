/* SPDX-License-Identifier: MIT */
/*
 * procs.h - PROC and COMM records of the processes seen in samples, and
 * the MAP records the file lacks, from the mapping table (procs.c). Used by
 * loop.c and drain/.
 */
#ifndef REC_PROCS_H
#define REC_PROCS_H

#include <linux/types.h>

struct saf_writer;

struct rec_procs;
struct rec_maptab;

typedef __u32 (*rec_cur_gen_fn)(void *ctx, __u32 tgid);

/**
 * rec_procs__new() - process tracking writing to @w (borrowed). @cur_gen
 * (with @ctx) gives a tgid's current exec generation, so that /proc is
 * read only for the image it describes.
 * @return state released with rec_procs__free(), or NULL with errno.
 */
struct rec_procs *rec_procs__new(struct saf_writer *w, rec_cur_gen_fn cur_gen, void *ctx);

/**
 * rec_procs__set_maptab() - take MAP records from @mt (borrowed, must
 * outlive @p): those of an image the side-band did not announce are read
 * from /proc/PID/maps by the table at the image's first sample.
 */
void rec_procs__set_maptab(struct rec_procs *p, struct rec_maptab *mt);

/**
 * rec_procs__note() - a sample of thread @tid of (@tgid, @gen) named @comm
 * (SA_COMM_LEN bytes, maybe unterminated) was seen: write PROC/MAP records
 * for a new process image and a COMM record for a new thread name.
 * @return 0 or a negative errno from the writer.
 */
int rec_procs__note(struct rec_procs *p, __u32 tgid, __u32 gen, __u32 tid, const char *comm);

/**
 * rec_procs__capture() - write PROC and MAP records for @tgid at exec
 * generation @gen now, unless (tgid, gen) was written before.
 * @return 0 or a negative errno from the writer.
 */
int rec_procs__capture(struct rec_procs *p, __u32 tgid, __u32 gen);

/**
 * rec_procs__new_file() - the writer moved to a new file (--rotate): forget
 * the images and thread names written, so the next samples write them again.
 */
void rec_procs__new_file(struct rec_procs *p);

/** rec_procs__free() - release the state. Accepts NULL. */
void rec_procs__free(struct rec_procs *p);

#endif /* REC_PROCS_H */
