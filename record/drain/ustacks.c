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
#include <sys/mman.h>
#include "grow.h"
#include "hash.h"
#include "htab.h"
#include "procs.h"
#include "record.h"
#include "share.h"
#include "ustacks.h"
#include "uwtrim.h"

#define ARENA_MIN (2u << 20) /* one huge page */

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
	__u32 samples; /* the samples whose periods @count holds */
};

/* A capture's hash and, for captures that differ but share it, an ordinal. */
struct us_key {
	__u64 h, n;
};

struct us_set {
	unsigned char *arena;
	size_t len, cap;
	struct rec_htab *index; /* us_key -> offset in arena */
	uint64_t *frames;	/* the walked frames of the entries (format 1.3) */
	size_t nframes, frames_cap;
};

/* An address of a process image handed to the note callback. */
struct us_noted {
	__u32 tgid, gen;
	__u64 ip;
};

struct rec_ustacks {
	struct us_set set[SA_NSETS];
	struct rec_htab *noted;	       /* us_noted -> nothing, during one write */
	struct rec_uwtrim *trim;       /* NULL: whole copies */
	__u8 runs[SA_USTACK_MAX + 64]; /* a trimmed capture */
	rec_ustack_kfid_fn ensure;     /* --rotate: kernel stack of a carried capture */
	void *ensure_ctx;
	rec_ustack_pump_fn pump; /* see record.h */
	void *pump_ctx;
};

/* Captures between two calls of the pump: a few ms of trimming at most. */
#define US_PUMP_EVERY 64

static void pump(struct rec_ustacks *u, size_t *n)
{
	if (u->pump && ++*n % US_PUMP_EVERY == 0)
		u->pump(u->pump_ctx);
}

void rec_ustacks__set_trim(struct rec_ustacks *u, struct rec_uwtrim *trim)
{
	u->trim = trim;
}

bool rec_ustacks__pending(const struct rec_ustacks *u, __u32 set)
{
	return u->set[set].len != 0;
}

/* What identifies capture @e: everything before count. */
#define ENT_ID_LEN offsetof(struct us_ent, count)

/* The hash of capture @e with bytes @b. */
static __u64 ent_hash(const struct us_ent *e, const void *b)
{
	return sac_hash_bulk(b, e->ubytes, sac_hash_bytes(e, ENT_ID_LEN, 0x5a5a));
}

/*
 * What rec_ustacks__add() hashes with a trimmer: the capture's identity and
 * its first bytes. Hashing every byte of every copy (8 KiB on average in a
 * compile loop) was 6% of the recorder's CPU, to merge the few copies that
 * were identical before trim_set() merges those that agree after trimming.
 */
#define QUICK_BYTES 128

static __u64 ent_quick_hash(const struct us_ent *e, const void *b)
{
	return sac_hash_bytes(b, e->ubytes < QUICK_BYTES ? e->ubytes : QUICK_BYTES,
			      sac_hash_bytes(e, ENT_ID_LEN, 0x9a9a));
}

/* Is the entry at @off of @s capture @e with bytes @b? */
static bool ent_same(const struct us_set *s, size_t off, const struct us_ent *e, const void *b)
{
	const struct us_ent *o = (const struct us_ent *)(s->arena + off);

	return !memcmp(o, e, ENT_ID_LEN) && !memcmp(o + 1, b, e->ubytes);
}

/*
 * The pending entry identical to @e with bytes @b, or NULL after noting
 * @off as where @e goes: the hash finds candidates, the bytes decide (a
 * hash shared by different captures gives the next ordinal a try).
 * @return the entry, or NULL; *@err is -ENOMEM when the index cannot grow.
 */
static struct us_ent *ent_find(struct us_set *s, const struct us_ent *e, const void *b, size_t off,
			       int *err)
{
	struct us_key k = {ent_hash(e, b), 0};
	size_t *at;
	bool is_new;

	*err = 0;
	for (;; k.n++) {
		at = rec_htab__put(s->index, &k, &is_new);
		if (!at) {
			*err = -ENOMEM;
			return NULL;
		}
		if (is_new) {
			*at = off;
			return NULL;
		}
		if (ent_same(s, *at, e, b))
			return (struct us_ent *)(s->arena + *at);
	}
}

struct rec_ustacks *rec_ustacks__new(void)
{
	struct rec_ustacks *u = calloc(1, sizeof(*u));
	int i;

	if (!u)
		return NULL;
	u->noted = rec_htab__new(sizeof(struct us_noted), 0);
	if (!u->noted) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
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

void rec_ustacks__free(struct rec_ustacks *u)
{
	int i;

	if (!u)
		return;
	for (i = 0; i < SA_NSETS; i++) {
		if (u->set[i].arena)
			munmap(u->set[i].arena, u->set[i].cap);
		free(u->set[i].frames);
		rec_htab__free(u->set[i].index);
	}
	rec_htab__free(u->noted);
	free(u);
}

/*
 * An arena holds an interval's copies, tens of MB at 999 Hz, and every
 * page of it is new memory the kernel faults in and zeroes on first touch:
 * 4 KiB at a time that was a twentieth of the recorder's CPU on a compile
 * loop. Transparent huge pages (where the system allows them on request)
 * take it 2 MiB at a time; mremap() grows it without copying.
 */
static int arena_reserve(struct us_set *s, size_t more)
{
	size_t ncap = s->cap ? s->cap : ARENA_MIN;
	void *p;

	if (s->len + more <= s->cap)
		return 0;
	while (ncap < s->len + more)
		ncap *= 2;
	if (s->arena)
		p = mremap(s->arena, s->cap, ncap, MREMAP_MAYMOVE);
	else
		p = mmap(NULL, ncap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	madvise(p, ncap, MADV_HUGEPAGE); /* a hint: EINVAL where THP is off */
	s->arena = p;
	s->cap = ncap;
	return 0;
}

/*
 * With a trimmer: the pending entry identical to @e with bytes @b if it is
 * the last one added with the same identity and first bytes, else NULL
 * after noting @off as that last one. Copies that differ further down are
 * not searched for a match: one comparison a copy at most, and a copy left
 * apart here is merged by trim_set() all the same, into the first entry,
 * with the same count, since identical copies trim to identical runs.
 */
static struct us_ent *ent_find_quick(struct us_set *s, const struct us_ent *e, const void *b,
				     size_t off, int *err)
{
	struct us_key k = {ent_quick_hash(e, b), 0};
	bool is_new;
	size_t *at = rec_htab__put(s->index, &k, &is_new);

	*err = at ? 0 : -ENOMEM;
	if (!at)
		return NULL;
	if (!is_new && ent_same(s, *at, e, b))
		return (struct us_ent *)(s->arena + *at);
	*at = off;
	return NULL;
}

int rec_ustacks__add(struct rec_ustacks *u, const struct sa_rb_ustack *r, __u32 kfid)
{
	struct us_set *s = &u->set[r->epoch & 1];
	struct us_ent e = {.tgid = r->tgid,
			   .tid = r->tid,
			   .gen = r->gen,
			   .kfid = kfid,
			   .ubytes = r->ubytes,
			   .count = r->count,
			   .samples = 1,
			   .room = (r->ubytes + 7) & ~7u}; /* walk: SAF_WALK_NONE */
	struct us_ent *same;
	int err;

	memcpy(e.regs, r->regs, sizeof(e.regs));
	memcpy(e.comm, r->comm, sizeof(e.comm));
	/* room first: an index entry must never point at nothing */
	if (arena_reserve(s, sizeof(e) + e.room))
		return -ENOMEM;
	if (u->trim)
		same = ent_find_quick(s, &e, r->stack, s->len, &err);
	else
		same = ent_find(s, &e, r->stack, s->len, &err);
	if (err)
		return err;
	if (same) {
		same->count += r->count;
		same->samples++;
		return 0;
	}
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

	if (SAC_GROW(s->frames, s->frames_cap, s->nframes + n, 4096))
		return; /* the record says "not walked": a report needs the binaries */
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
	size_t off, done = 0;

	rec_htab__clear(s->index);
	for (off = 0; off < s->len; off = next_ent(s, off)) {
		struct us_ent *e = (struct us_ent *)(s->arena + off);
		__u8 *b = s->arena + off + sizeof(*e);
		ssize_t n = rec_uwtrim__runs(u->trim, e->tgid, e->gen, e->regs[0], e->regs[1],
					     e->regs[2], b, e->ubytes, u->runs, sizeof(u->runs));
		struct us_ent *first;
		int err;

		pump(u, &done);
		keep_frames(u, s, e);
		if (n >= 0) {
			memcpy(b, u->runs, (size_t)n);
			e->ubytes = (__u32)n;
			e->sparse = 1;
		}
		first = ent_find(s, e, b, off, &err);
		if (first) { /* else e stays on its own, also when out of memory */
			first->count += e->count;
			first->samples += e->samples;
			e->count = 0;
			e->samples = 0;
		}
	}
}

/*
 * @note(@ctx, @tgid, @gen, @ip) unless this write already did: the frames
 * of a process repeat from capture to capture, and what @note does (mark
 * the symbol at @ip to be embedded) is the same the second time.
 */
static int note_once(struct rec_ustacks *u, rec_ustack_note_fn note, void *ctx, __u32 tgid,
		     __u32 gen, __u64 ip)
{
	struct us_noted k = {tgid, gen, ip};
	bool is_new = true;

	if (!note)
		return 0;
	rec_htab__put(u->noted, &k, &is_new); /* out of memory: noted again */
	return is_new ? note(ctx, tgid, gen, ip) : 0;
}

int rec_ustacks__write(struct rec_ustacks *u, __u32 set, struct saf_writer *w,
		       struct rec_procs *procs, rec_ustack_note_fn note, void *ctx)
{
	struct us_set *s = &u->set[set];
	struct saf_record rec;
	size_t off = 0, done = 0;
	int err = 0;

	if (u->trim)
		trim_set(u, s);
	for (; !err && off < s->len; off = next_ent(s, off)) {
		const struct us_ent *e = (const struct us_ent *)(s->arena + off);
		struct saf_bytes b = {s->arena + off + sizeof(*e), e->ubytes};

		if (!e->count)
			continue;
		pump(u, &done);
		err = rec_procs__note(procs, e->tgid, e->gen, e->tid, e->comm);
		if (!err)
			err = note_once(u, note, ctx, e->tgid, e->gen, e->regs[0]);
		/* callers' names too, at pc - 1: the call, not what follows it */
		for (__u32 i = 1; !err && i < e->nfr; i++)
			err = note_once(u, note, ctx, e->tgid, e->gen, s->frames[e->fr + i] - 1);
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
	rec_htab__clear(u->noted);
	return err;
}

void rec_ustacks__share(struct rec_ustacks *u, __u32 set, struct rec_share *sh, bool take)
{
	struct us_set *s = &u->set[set];

	for (size_t off = 0; off < s->len; off = next_ent(s, off)) {
		struct us_ent *e = (struct us_ent *)(s->arena + off);

		if (take)
			e->count = rec_share__take(sh, e->tgid, e->tid, e->count, e->samples);
		else
			rec_share__add(sh, e->tgid, e->tid, e->count, e->samples);
	}
}

void rec_ustacks__set_ensure(struct rec_ustacks *u, rec_ustack_kfid_fn fn, void *ctx)
{
	u->ensure = fn;
	u->ensure_ctx = ctx;
}

void rec_ustacks__set_pump(struct rec_ustacks *u, rec_ustack_pump_fn fn, void *ctx)
{
	u->pump = fn;
	u->pump_ctx = ctx;
}
