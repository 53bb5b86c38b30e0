// SPDX-License-Identifier: MIT
/*
 * stackdb.c - file-level stack ids. Kernel stack ids are reused once a
 * drain deletes them, so every address array is interned here: (kind,
 * frame count, two independent 64-bit hashes) -> id, ids from 1, never
 * reused in a file. A new stack is written as a STACK record at once
 * (docs/format.md "STACK record"). Keeping 128 bits of hash instead of the
 * arrays bounds memory at 32 bytes per unique stack; a false match would
 * need a 128-bit collision.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "grow.h"
#include "hash.h"
#include "htab.h"
#include "record.h"
#include "stackdb.h"
#include "stackkeep.h"

struct stack_key {
	__u32 kind;
	__u32 nframes;
	__u64 h1, h2;
};

struct rec_stackdb {
	struct rec_htab *ids; /* stack_key -> __u32 id */
	__u8 *nframes;	      /* by id - nf_base */
	size_t cap;
	__u32 nf_base; /* --rotate: ids below are referenced no more */
	__u32 next_id;
	struct stack_frames *keep; /* NULL unless rotating: see stackkeep.c */
	__u32 file_first;	   /* the first id given in the current file */
};

struct rec_stackdb *rec_stackdb__new(void)
{
	struct rec_stackdb *db = calloc(1, sizeof(*db));

	if (!db)
		return NULL;
	db->ids = rec_htab__new(sizeof(struct stack_key), sizeof(__u32));
	if (!db->ids) {
		free(db);
		return NULL;
	}
	db->next_id = 1;
	db->file_first = 1;
	return db;
}

static int remember_nframes(struct rec_stackdb *db, __u32 id, __u32 n)
{
	id -= db->nf_base;
	if (id >= db->cap) {
		size_t old = db->cap;

		if (SAC_GROW(db->nframes, db->cap, (size_t)id + 1, 4096))
			return -ENOMEM;
		/* id 0 means "no stack" and is looked up too: it must read 0 */
		memset(db->nframes + old, 0, db->cap - old);
	}
	db->nframes[id] = n > 255 ? 255 : n;
	return 0;
}

/* Forget the frame counts of ids below @first (in place: cannot fail). */
static void drop_nframes(struct rec_stackdb *db, __u32 first)
{
	__u32 drop = first - db->nf_base;

	if (first <= db->nf_base || !db->cap)
		return;
	memmove(db->nframes, db->nframes + drop, db->next_id - first);
	memset(db->nframes + (db->next_id - first), 0, db->cap - (db->next_id - first));
	db->nf_base = first;
}

__u32 rec_stackdb__intern(struct rec_stackdb *db, __u32 kind, const __u64 *ips, __u32 n,
			  struct saf_writer *w, int *err)
{
	struct stack_key k = {.kind = kind, .nframes = n};
	struct saf_record rec = {.kind = SAF_REC_STACK};
	bool is_new;
	__u32 *id;

	*err = 0;
	if (!n)
		return 0;
	k.h1 = sac_hash_bytes(ips, n * sizeof(*ips), 0x5a5a);
	k.h2 = sac_hash_bytes(ips, n * sizeof(*ips), 0x0123456789abcdefull);
	id = rec_htab__put(db->ids, &k, &is_new);
	if (!id) {
		*err = -ENOMEM;
		return 0;
	}
	if (!is_new)
		return *id;
	*id = db->next_id++;
	rec.stack.id = *id;
	rec.stack.kind = kind;
	rec.stack.nframes = n;
	rec.stack.ips = (const uint64_t *)ips;
	*err = remember_nframes(db, *id, n);
	if (!*err && db->keep)
		*err = rec_stack_frames__add(db->keep, *id, kind, ips, n);
	if (!*err)
		*err = saf_writer__add(w, &rec);
	return *err ? 0 : *id;
}

__u32 rec_stackdb__nframes(const struct rec_stackdb *db, __u32 id)
{
	return id && id >= db->nf_base && id < db->next_id ? db->nframes[id - db->nf_base] : 0;
}

size_t rec_stackdb__count(const struct rec_stackdb *db)
{
	return db->next_id - 1;
}

void rec_stackdb__free(struct rec_stackdb *db)
{
	if (!db)
		return;
	rec_htab__free(db->ids);
	rec_stack_frames__free(db->keep);
	free(db->nframes);
	free(db);
}

int rec_stackdb__keep_frames(struct rec_stackdb *db)
{
	if (!db->keep && !(db->keep = rec_stack_frames__new()))
		return -ENOMEM;
	return 0;
}

__u32 rec_stackdb__new_file(struct rec_stackdb *db)
{
	__u32 first = db->file_first;

	rec_htab__clear(db->ids);
	if (db->keep)
		rec_stack_frames__new_file(db->keep);
	drop_nframes(db, first);
	db->file_first = db->next_id;
	return first;
}

int rec_stackdb__ensure(struct rec_stackdb *db, __u32 id, struct saf_writer *w, __u32 *kind,
			const __u64 **ips, __u32 *n)
{
	struct saf_record rec = {.kind = SAF_REC_STACK};
	int ret;

	if (!id || !db->keep)
		return 0;
	ret = rec_stack_frames__carry(db->keep, id, kind, ips, n);
	if (ret <= 0)
		return ret;
	rec.stack = (struct saf_stack){
		.id = id, .kind = *kind, .nframes = *n, .ips = (const uint64_t *)*ips};
	ret = saf_writer__add(w, &rec);
	return ret ? ret : 1;
}
