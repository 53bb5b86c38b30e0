/* SPDX-License-Identifier: MIT */
/*
 * share.h - shares each thread's periods of CPU time among its stacks by
 * their samples, for one interval (docs/recording.md, "Counts at the
 * context switch"). The kernel counts a sample as the periods of its
 * thread's CPU time since the thread's last sample (bpf/sa_clock.bpf.h):
 * the thread's total is right, but a sample after a stretch in which the
 * thread was not sampled carries that stretch, and where a thread runs in
 * bursts such samples fall at the same places in its bursts. Where the
 * samples fall is the unbiased part; so the thread's periods are given to
 * its stacks in proportion to their samples, and its total is kept.
 */
#ifndef REC_SHARE_H
#define REC_SHARE_H

#include <linux/types.h>
#include <stdbool.h>

struct rec_share;

/** rec_share__new() - empty; NULL with errno set when out of memory. */
struct rec_share *rec_share__new(void);

/**
 * rec_share__add() - first pass: a stack of thread @tgid/@tid that holds
 * @count periods over @samples samples.
 * @return 0, or -ENOMEM (then rec_share__take() gives every count as it was).
 */
int rec_share__add(struct rec_share *s, __u32 tgid, __u32 tid, __u64 count, __u64 samples);

/**
 * rec_share__take() - second pass, each stack of the first once: the
 * periods of the stack with @samples samples, @count before. Rounded so
 * that a thread's stacks add up to its periods exactly: each stack gets
 * the thread's periods x (its samples and those of the stacks taken
 * before it) / the thread's samples, rounded, less what those got.
 */
__u64 rec_share__take(struct rec_share *s, __u32 tgid, __u32 tid, __u64 count, __u64 samples);

/** rec_share__clear() - forget every thread: the next interval's first pass. */
void rec_share__clear(struct rec_share *s);

/** rec_share__free() - release. Accepts NULL. */
void rec_share__free(struct rec_share *s);

#endif
