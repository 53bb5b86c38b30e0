/* SPDX-License-Identifier: MIT */
/*
 * offcpu.h - the off-CPU half of an interval's drain (offcpu.c, --off-cpu):
 * counts and recovered stacks out of the kernel, OFFCPU records out.
 * Used by drain.c.
 */
#ifndef REC_OFFCPU_H
#define REC_OFFCPU_H

#include <stddef.h>
#include <linux/types.h>

struct rec_ctrs;
struct rec_procs;
struct rec_py;
struct rec_session;
struct rec_totals;
struct saf_loss;
struct saf_writer;

struct rec_offcpu;
struct rec_sc;

/* a memoized or pinned stack id whose stack could not be read */
#define REC_FID_GONE UINT32_MAX

/*
 * The fields a COUNT and an OFFCPU record share (docs/format.md), as
 * designated initializers of struct saf_count or struct saf_offcpu, from
 * an aggregate's key @k (tgid, tid, gen, ufid, kfid) and value @v (count,
 * comm; the name borrowed until the record is added). For drain.c's
 * counts and offcpu.c's stays alike.
 */
#define REC_SAF_THREAD_FIELDS(k, v)                                                                \
	.pid = (k)->tgid, .tid = (k)->tid, .gen = (k)->gen, .ustack = (k)->ufid,                   \
	.kstack = (k)->kfid, .count = (v)->count,                                                  \
	.comm = {.str = (v)->comm, .len = strnlen((v)->comm, SA_COMM_LEN)}

/*
 * drain.c's stack id -> file stack id, for the ids of map set @set; an id
 * whose stack cannot be read gives *err -ENOENT, every time it is asked.
 */
typedef __u32 (*rec_resolve_fn)(void *ctx, __u32 set, __s32 kid, __u32 kind, int *err);
/* drain.c's frames -> file stack id (0 for none). */
typedef __u32 (*rec_intern_fn)(void *ctx, __u32 kind, const __u64 *ips, __u32 n, int *err);

/**
 * rec_offcpu__new() - off-CPU drain state for session @s (borrowed),
 * interning recovered stacks with @intern(@ctx, ...).
 * @return an object released with rec_offcpu__free(), or NULL with errno.
 */
struct rec_offcpu *rec_offcpu__new(struct rec_session *s, rec_intern_fn intern, void *ctx);

/**
 * rec_offcpu__on_rb() - ring_buffer callback for offrb (@ctx: the
 * rec_offcpu): interns an OFF_START's stacks, adds an OFF_END's time to
 * its interval. Out of memory, the period is counted lost; another error
 * stops the ring buffer's consumption with it.
 */
int rec_offcpu__on_rb(void *ctx, void *data, size_t len);

/**
 * rec_offcpu__drain() - take the off-CPU counts of interval @epoch (its
 * set's map) out of the kernel (lookup_and_delete_batch, or one by one
 * where that is missing) and aggregate them by file stack ids, found with
 * @resolve(@ctx, ...) or pinned. Call after the grace period, before the
 * set's stack map is cleared.
 * @return 0 or a negative errno.
 */
int rec_offcpu__drain(struct rec_offcpu *o, __u32 epoch, rec_resolve_fn resolve, void *ctx);

/**
 * rec_offcpu__pin() - before interval @epoch's stack map is cleared, read
 * the stacks of its ids that stays still need: those of threads that left
 * the CPU in @epoch and have not come back, and those of stays counted in
 * the next interval's map since the flip. BPF adds a stay to the counts
 * before it deletes the thread's start, and the starts are read first, so
 * an id moving from one to the other is seen in either. Pins of intervals
 * no open or counted stay began in are dropped.
 * @return 0 or a negative errno.
 */
int rec_offcpu__pin(struct rec_offcpu *o, __u32 epoch, rec_resolve_fn resolve, void *ctx);

/**
 * rec_offcpu__write() - write set @set's aggregated off-CPU time as OFFCPU
 * records into the open interval of @w, noting each thread in @procs and
 * each user stack in @sc and @py (NULL: none; @py names the code objects of
 * its CPython frames), then forget it.
 * @return 0 or a negative errno.
 */
int rec_offcpu__write(struct rec_offcpu *o, __u32 set, struct saf_writer *w,
		      struct rec_procs *procs, struct rec_sc *sc, struct rec_py *py);

/* --rotate: a file stack id about to be referenced in the current file. */
typedef int (*rec_carry_fn)(void *ctx, __u32 fid);

/**
 * rec_offcpu__set_carry() - --rotate: a stay can span rotations, and the
 * file it ends in must hold its stacks. rec_offcpu__write() hands each id
 * it writes, and each id a stay still open holds (pinned, or recovered
 * from the ring), to @carry(@ctx, id), which writes the STACK record again
 * where the current file lacks it. Done at every interval, an id held over
 * a rotation is always of the current or the previous file, whose frames
 * stackkeep.c has. Accepts a NULL @o (no --off-cpu).
 */
void rec_offcpu__set_carry(struct rec_offcpu *o, rec_carry_fn carry, void *ctx);

/**
 * rec_offcpu__fill_loss() - append the off-CPU counters of @c to @l, with
 * the periods of set @set sa-record dropped moved from off_kept to
 * off_lost_userspace (and forgotten).
 */
void rec_offcpu__fill_loss(struct rec_offcpu *o, __u32 set, struct saf_loss *l,
			   const struct rec_ctrs *c);

/** rec_offcpu__add_total() - add off-CPU counter @id's @v to the totals @t. */
void rec_offcpu__add_total(struct rec_totals *t, __u32 id, __u64 v);

/** rec_offcpu__free() - release it. Accepts NULL. */
void rec_offcpu__free(struct rec_offcpu *o);

#endif /* REC_OFFCPU_H */
