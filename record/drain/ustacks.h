/* SPDX-License-Identifier: MIT */
/*
 * ustacks.h - raw user stacks of --call-graph dwarf kept per map set until
 * their interval is written as USTACK records (ustacks.c). Used by drain.c.
 */
#ifndef REC_USTACKS_H
#define REC_USTACKS_H

#include <stdbool.h>
#include <linux/types.h>

struct rec_procs;
struct rec_uwtrim;
struct sa_rb_ustack;
struct saf_writer;

struct rec_ustacks;

/* Called per written USTACK with its process image and leaf address. */
typedef int (*rec_ustack_note_fn)(void *ctx, __u32 tgid, __u32 gen, __u64 ip);

/**
 * rec_ustacks__new() - empty pending sets.
 * @return an object released with rec_ustacks__free(), or NULL with errno.
 */
struct rec_ustacks *rec_ustacks__new(void);

/** rec_ustacks__set_trim() - trim captures with @trim (borrowed; NULL: none). */
void rec_ustacks__set_trim(struct rec_ustacks *u, struct rec_uwtrim *trim);

/** rec_ustacks__pending() - are captures of map set @set waiting to be written? */
bool rec_ustacks__pending(const struct rec_ustacks *u, __u32 set);
typedef int (*rec_ustack_kfid_fn)(void *ctx, __u32 kfid);

struct rec_share;

/**
 * rec_ustacks__share() - the captures of @set to @sh (share.h): their
 * periods and samples when not @take, else their periods from it.
 */
void rec_ustacks__share(struct rec_ustacks *u, __u32 set, struct rec_share *sh, bool take);

/** rec_ustacks__set_ensure() - call @fn(@ctx, kfid) before each USTACK is written (--rotate). */
void rec_ustacks__set_ensure(struct rec_ustacks *u, rec_ustack_kfid_fn fn, void *ctx);
/* Called every few captures while a set is trimmed and written: the drain
 * consumes its ring buffers there, so a long interval end loses nothing. */
typedef void (*rec_ustack_pump_fn)(void *ctx);

/**
 * rec_ustacks__set_pump() - call @fn(@ctx) every few captures while a set
 * is trimmed and written. @fn may add captures to the other set (those of
 * the interval that began at the flip), never to the one being written.
 */
void rec_ustacks__set_pump(struct rec_ustacks *u, rec_ustack_pump_fn fn, void *ctx);

/**
 * rec_ustacks__add() - keep ring buffer record @r (copied; its set is
 * r->epoch & 1) with kernel stack file id @kfid until its interval is
 * written; an identical pending capture just counts one more.
 * @return 0 or -ENOMEM (the sample is then lost, counted by the caller).
 */
int rec_ustacks__add(struct rec_ustacks *u, const struct sa_rb_ustack *r, __u32 kfid);

/**
 * rec_ustacks__write() - write the pending captures of map set @set as
 * USTACK records into the open interval of @w, noting each process image
 * in @procs and calling @note (may be NULL) with @ctx; then empty the set.
 * @return 0 or a negative errno from the writer.
 */
int rec_ustacks__write(struct rec_ustacks *u, __u32 set, struct saf_writer *w,
		       struct rec_procs *procs, rec_ustack_note_fn note, void *ctx);

/** rec_ustacks__free() - release everything pending. Accepts NULL. */
void rec_ustacks__free(struct rec_ustacks *u);

#endif /* REC_USTACKS_H */
