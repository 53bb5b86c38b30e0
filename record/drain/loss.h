/* SPDX-License-Identifier: MIT */
/*
 * loss.h - an interval's LOSS record and the recording's totals (loss.c).
 * Used by drain.c.
 */
#ifndef REC_LOSS_H
#define REC_LOSS_H

#include <stdint.h>
#include <linux/types.h>

struct rec_ctrs;
struct rec_totals;
struct saf_loss;

/**
 * rec_loss__fill() - the on-CPU counters of @c as LOSS pairs in @l, with
 * @lost_us samples sa-record dropped moved from kept to their own cause,
 * @truncated kept samples at the depth limit and @sb_lost side-band records.
 */
void rec_loss__fill(struct saf_loss *l, const struct rec_ctrs *c, __u64 truncated, __u64 lost_us,
		    __u64 sb_lost);

/**
 * rec_loss__add_files() - append to @l the files skipped since the last call
 * because their file system did not answer in time (fguard.c), if any.
 * One recorder per process: the count already written is kept here.
 */
void rec_loss__add_files(struct saf_loss *l);

/**
 * rec_loss__add_throttled() - append to @l the @n samples the kernel did
 * not take while it throttled the sampling events (sampler/throttle.h),
 * if any.
 */
void rec_loss__add_throttled(struct saf_loss *l, uint64_t n);

/**
 * rec_loss__add_unwritten() - append to @l the @n mappings dropped since
 * the last interval without a MAP record (meta/maptab.h, rec_maptab__defer()).
 */
void rec_loss__add_unwritten(struct saf_loss *l, uint64_t n);

/** rec_totals__add() - add interval loss record @l to the recording's totals @t. */
void rec_totals__add(struct rec_totals *t, const struct saf_loss *l);

#endif /* REC_LOSS_H */
