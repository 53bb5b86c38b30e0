// SPDX-License-Identifier: MIT
/*
 * ustacks.c - raw user stacks of --call-graph dwarf between ring buffer and
 * file: each record is kept, per map set, until its interval is written;
 * identical captures (same thread, registers, kernel stack and stack bytes)
 * are merged into one USTACK record with a count (docs/format.md). With a
 * trimmer (uwtrim.c), at the interval's end, when the side band has told
 * of every mapping made before the samples, each capture keeps only the
 * words an unwind reads (a USTACK_SPARSE record), and captures that then
 * agree are merged again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "htab.h"
#include "record.h"
#include "uwtrim.h"

/* One pending capture; its stack bytes (runs when sparse) follow it in the arena. */
struct us_ent {
	__u32 tgid, tid, gen, kfid;
	__u32 ubytes, sparse;
	__u64 regs[SA_UREGS];
	char comm[SA_COMM_LEN];
	/* not part of what identifies a capture (ent_key()) */
	__u64 count; /* 0: merged into an earlier entry */
	__u32 room;  /* bytes after the entry in the arena */
	__u32 walk;  /* enum saf_walk of the trimmer's walk */
	__u64 fr;    /* its frames: the set's frames[fr .. fr + nfr) */
	__u32 nfr;
	__u32 pad;
};

struct us_key {
	__u64 h1, h2;
};

struct us_set {
	unsigned char *arena;
	size_t len, cap;
	struct rec_htab *index; /* us_key -> offset in arena */
	uint64_t *frames;	/* the walked frames of the entries (format 1.3) */
	size_t nframes, frames_cap;
};

struct rec_ustacks {
	struct us_set set[SA_NSETS];
	struct rec_uwtrim *trim;       /* NULL: whole copies */
	__u8 runs[SA_USTACK_MAX + 64]; /* a trimmed capture */
	rec_ustack_kfid_fn ensure;     /* --rotate: kernel stack of a carried capture */
	void *ensure_ctx;
};

/** rec_ustacks__set_trim() - trim captures with @trim (borrowed; NULL: none). */
void rec_ustacks__set_trim(struct rec_ustacks *u, struct rec_uwtrim *trim)
{
	u->trim = trim;
}

/** rec_ustacks__pending() - are captures of map set @set waiting to be written? */
bool rec_ustacks__pending(const struct rec_ustacks *u, __u32 set)
{
	return u->set[set].len != 0;
}

/* What identifies capture @e with bytes @b: everything but count and room. */
static struct us_key ent_key(const struct us_ent *e, const void *b)
{
	size_t n = offsetof(struct us_ent, count);

	return (struct us_key){
		rec_hash_bytes(b, e->ubytes, rec_hash_bytes(e, n, 0x5a5a)),
		rec_hash_bytes(b, e->ubytes, rec_hash_bytes(e, n, 0x0123456789abcdefull))};
}

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
		free(u->set[i].frames);
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
	struct us_ent e = {.tgid = r->tgid,
			   .tid = r->tid,
			   .gen = r->gen,
			   .kfid = kfid,
			   .ubytes = r->ubytes,
			   .count = 1,
			   .room = (r->ubytes + 7) & ~7u}; /* walk: SAF_WALK_NONE */
	struct us_key k;
	size_t *off;
	bool is_new;

	memcpy(e.regs, r->regs, sizeof(e.regs));
	memcpy(e.comm, r->comm, sizeof(e.comm));
	k = ent_key(&e, r->stack);
	/* room first: an index entry must never point at nothing */
	if (arena_reserve(s, sizeof(e) + e.room))
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
	s->len += sizeof(e) + e.room;
	return 0;
}

/* The entry after the one at @off. */
static size_t next_ent(const struct us_set *s, size_t off)
{
	return off + sizeof(struct us_ent) + ((const struct us_ent *)(s->arena + off))->room;
}

/* Keep the frames of the trimmer's last walk for @e (none when out of memory). */
static void keep_frames(struct rec_ustacks *u, struct us_set *s, struct us_ent *e)
{
	const uint64_t *pcs;
	uint32_t n, walk = rec_uwtrim__frames(u->trim, &pcs, &n);

	if (s->nframes + n > s->frames_cap) {
		size_t ncap = s->frames_cap ? s->frames_cap : 4096;
		uint64_t *p;

		while (ncap < s->nframes + n)
			ncap *= 2;
		p = realloc(s->frames, ncap * sizeof(*p));
		if (!p)
			return; /* the record says "not walked": a report needs the binaries */
		s->frames = p;
		s->frames_cap = ncap;
	}
	memcpy(s->frames + s->nframes, pcs, n * sizeof(*pcs));
	e->walk = walk;
	e->fr = s->nframes;
	e->nfr = n;
	s->nframes += n;
}

/*
 * Trim every capture of @s in place (runs are shorter than the copy, or
 * it stays whole), then merge those that now agree into the first.
 */
static void trim_set(struct rec_ustacks *u, struct us_set *s)
{
	size_t off;

	rec_htab__clear(s->index);
	for (off = 0; off < s->len; off = next_ent(s, off)) {
		struct us_ent *e = (struct us_ent *)(s->arena + off);
		__u8 *b = s->arena + off + sizeof(*e);
		ssize_t n = rec_uwtrim__runs(u->trim, e->tgid, e->gen, e->regs[0], e->regs[1],
					     e->regs[2], b, e->ubytes, u->runs, sizeof(u->runs));
		struct us_key k;
		size_t *first;
		bool is_new;

		keep_frames(u, s, e);
		if (n >= 0) {
			memcpy(b, u->runs, (size_t)n);
			e->ubytes = (__u32)n;
			e->sparse = 1;
		}
		k = ent_key(e, b);
		first = rec_htab__put(s->index, &k, &is_new);
		if (first && !is_new) {
			((struct us_ent *)(s->arena + *first))->count += e->count;
			e->count = 0;
		} else if (first) {
			*first = off;
		}
	}
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
	struct saf_record rec;
	size_t off = 0;
	int err = 0;

	if (u->trim)
		trim_set(u, s);
	for (; !err && off < s->len; off = next_ent(s, off)) {
		const struct us_ent *e = (const struct us_ent *)(s->arena + off);
		struct saf_bytes b = {s->arena + off + sizeof(*e), e->ubytes};

		if (!e->count)
			continue;
		err = rec_procs__note(procs, e->tgid, e->gen, e->tid, e->comm);
		if (!err && note)
			err = note(ctx, e->tgid, e->gen, e->regs[0]);
		/* callers' names too, at pc - 1: the call, not what follows it */
		for (__u32 i = 1; !err && note && i < e->nfr; i++)
			err = note(ctx, e->tgid, e->gen, s->frames[e->fr + i] - 1);
		if (!err && u->ensure)
			err = u->ensure(u->ensure_ctx, e->kfid);
		rec.kind = e->sparse ? SAF_REC_USTACK_SPARSE : SAF_REC_USTACK;
		rec.ustack = (struct saf_ustack){.pid = e->tgid,
						 .tid = e->tid,
						 .gen = e->gen,
						 .kstack = e->kfid,
						 .count = e->count,
						 .nregs = SA_UREGS};
		rec.ustack.comm.str = e->comm;
		rec.ustack.comm.len = strnlen(e->comm, SA_COMM_LEN);
		memcpy(rec.ustack.regs, e->regs, sizeof(e->regs));
		if (e->sparse)
			rec.ustack.runs = b;
		else
			rec.ustack.stack = b;
		if (e->walk != SAF_WALK_NONE) {
			rec.ustack.walk = e->walk;
			rec.ustack.nwalked = e->nfr;
			rec.ustack.walked = s->frames + e->fr;
		}
		if (!err)
			err = saf_writer__add(w, &rec);
	}
	s->len = 0;
	s->nframes = 0;
	rec_htab__clear(s->index);
	return err;
}

/** rec_ustacks__set_ensure() - call @fn(@ctx, kfid) before each USTACK is written (--rotate). */
void rec_ustacks__set_ensure(struct rec_ustacks *u, rec_ustack_kfid_fn fn, void *ctx)
{
	u->ensure = fn;
	u->ensure_ctx = ctx;
}
