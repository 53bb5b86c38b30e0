// SPDX-License-Identifier: MIT
/*
 * ustacks.c - raw user stacks of --call-graph dwarf between ring buffer and
 * file: each record is kept, per map set, until its interval is written;
 * identical captures (same thread, registers, kernel stack and stack bytes)
 * are merged into one USTACK record with a count (docs/format.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "htab.h"
#include "record.h"

/* One pending capture; its stack bytes follow it in the arena. */
struct us_ent {
	__u32 tgid, tid, gen, kfid;
	__u32 ubytes, pad;
	__u64 count;
	__u64 regs[SA_UREGS];
	char comm[SA_COMM_LEN];
};

struct us_key {
	__u64 h1, h2;
};

struct us_set {
	unsigned char *arena;
	size_t len, cap;
	struct rec_htab *index; /* us_key -> offset in arena */
};

struct rec_ustacks {
	struct us_set set[SA_NSETS];
};

/**
 * rec_ustacks__new() - empty pending sets.
 * @return an object released with rec_ustacks__free(), or NULL with errno.
 */
struct rec_ustacks *rec_ustacks__new(void)
{
	struct rec_ustacks *u = calloc(1, sizeof(*u));
	int i;

	if (!u)
		return NULL;
	for (i = 0; i < SA_NSETS; i++) {
		u->set[i].index = rec_htab__new(sizeof(struct us_key), sizeof(size_t));
		if (!u->set[i].index) {
			rec_ustacks__free(u);
			errno = ENOMEM;
			return NULL;
		}
	}
	return u;
}

/** rec_ustacks__free() - release everything pending. Accepts NULL. */
void rec_ustacks__free(struct rec_ustacks *u)
{
	int i;

	if (!u)
		return;
	for (i = 0; i < SA_NSETS; i++) {
		free(u->set[i].arena);
		rec_htab__free(u->set[i].index);
	}
	free(u);
}

static int arena_reserve(struct us_set *s, size_t more)
{
	size_t ncap = s->cap ? s->cap : 1 << 16;
	unsigned char *p;

	if (s->len + more <= s->cap)
		return 0;
	while (ncap < s->len + more)
		ncap *= 2;
	p = realloc(s->arena, ncap);
	if (!p)
		return -ENOMEM;
	s->arena = p;
	s->cap = ncap;
	return 0;
}

/**
 * rec_ustacks__add() - keep ring buffer record @r (copied; its set is
 * r->epoch & 1) with kernel stack file id @kfid until its interval is
 * written; an identical pending capture just counts one more.
 * @return 0 or -ENOMEM (the sample is then lost, counted by the caller).
 */
int rec_ustacks__add(struct rec_ustacks *u, const struct sa_rb_ustack *r, __u32 kfid)
{
	struct us_set *s = &u->set[r->epoch & 1];
	struct us_ent e = {r->tgid, r->tid, r->gen, kfid, r->ubytes, 0, 1, {0}, {0}};
	struct us_key k;
	size_t *off;
	bool is_new;

	memcpy(e.regs, r->regs, sizeof(e.regs));
	memcpy(e.comm, r->comm, sizeof(e.comm));
	k.h1 = rec_hash_bytes(r->stack, r->ubytes, rec_hash_bytes(&e, sizeof(e), 0x5a5a));
	k.h2 = rec_hash_bytes(r->stack, r->ubytes,
			      rec_hash_bytes(&e, sizeof(e), 0x0123456789abcdefull));
	/* room first: an index entry must never point at nothing */
	if (arena_reserve(s, sizeof(e) + ((r->ubytes + 7) & ~7u)))
		return -ENOMEM;
	off = rec_htab__put(s->index, &k, &is_new);
	if (!off)
		return -ENOMEM;
	if (!is_new) {
		((struct us_ent *)(s->arena + *off))->count++;
		return 0;
	}
	*off = s->len;
	memcpy(s->arena + s->len, &e, sizeof(e));
	memcpy(s->arena + s->len + sizeof(e), r->stack, r->ubytes);
	s->len += sizeof(e) + ((r->ubytes + 7) & ~7u);
	return 0;
}

/**
 * rec_ustacks__write() - write the pending captures of map set @set as
 * USTACK records into the open interval of @w, noting each process image
 * in @procs and calling @note (may be NULL) with @ctx; then empty the set.
 * @return 0 or a negative errno from the writer.
 */
int rec_ustacks__write(struct rec_ustacks *u, __u32 set, struct saf_writer *w,
		       struct rec_procs *procs, rec_ustack_note_fn note, void *ctx)
{
	struct us_set *s = &u->set[set];
	struct saf_record rec = {.kind = SAF_REC_USTACK};
	size_t off = 0;
	int err = 0;

	while (!err && off < s->len) {
		const struct us_ent *e = (const struct us_ent *)(s->arena + off);

		err = rec_procs__note(procs, e->tgid, e->gen, e->tid, e->comm);
		if (!err && note)
			err = note(ctx, e->tgid, e->gen, e->regs[0]);
		rec.ustack = (struct saf_ustack){.pid = e->tgid,
						 .tid = e->tid,
						 .gen = e->gen,
						 .kstack = e->kfid,
						 .count = e->count,
						 .nregs = SA_UREGS};
		rec.ustack.comm.str = e->comm;
		rec.ustack.comm.len = strnlen(e->comm, SA_COMM_LEN);
		memcpy(rec.ustack.regs, e->regs, sizeof(e->regs));
		rec.ustack.stack.data = s->arena + off + sizeof(*e);
		rec.ustack.stack.len = e->ubytes;
		if (!err)
			err = saf_writer__add(w, &rec);
		off += sizeof(*e) + ((e->ubytes + 7) & ~7u);
	}
	s->len = 0;
	rec_htab__clear(s->index);
	return err;
}
