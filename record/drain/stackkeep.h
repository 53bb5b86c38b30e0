/* SPDX-License-Identifier: MIT */
/*
 * stackkeep.h - the frames of the stacks written to the current and the
 * previous file of a rotated recording (sa-record --rotate), so a stack id
 * given in one file can be written again in the next.
 */
#ifndef REC_STACKKEEP_H
#define REC_STACKKEEP_H

#include <linux/types.h>

struct stack_frames;

/** rec_stack_frames__new() - empty; NULL with errno on failure. */
struct stack_frames *rec_stack_frames__new(void);

/**
 * rec_stack_frames__add() - stack @id (@kind, @ips[0..@n), copied) was
 * written to the current file.
 * @return 0 or -ENOMEM.
 */
int rec_stack_frames__add(struct stack_frames *sf, __u32 id, __u32 kind, const __u64 *ips, __u32 n);

/**
 * rec_stack_frames__carry() - @id is referenced in the current file: when
 * only the previous file has it, copy it to the current one and give its
 * @kind, @ips (borrowed until the next call) and @n.
 * @return 1 when copied, 0 when the current file has it or nothing does,
 * -ENOMEM.
 */
int rec_stack_frames__carry(struct stack_frames *sf, __u32 id, __u32 *kind, const __u64 **ips,
			    __u32 *n);

/** rec_stack_frames__new_file() - the current file becomes the previous one. */
void rec_stack_frames__new_file(struct stack_frames *sf);

/** rec_stack_frames__free() - release everything. Accepts NULL. */
void rec_stack_frames__free(struct stack_frames *sf);

#endif /* REC_STACKKEEP_H */
