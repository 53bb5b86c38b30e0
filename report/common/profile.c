// SPDX-License-Identifier: MIT
/*
 * profile.c - the aggregated profile: one string pool with open-addressing
 * interning, stacks stored back to back and merged through a second hash
 * index, so adding a chain costs O(frames) whatever the profile already holds.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "profile.h"
#include "strpool.h"

#define INIT_POOL  4096
#define INIT_INDEX 1024 /* slots; always a power of two */
#define EMPTY_SLOT 0	/* name_index: offset 0 ("") is never stored; stack_index: index + 1 */

/* A frame's module, or 0 in a profile without a module table (profile.h). */
#define FRAME_MODULE(p, f) ((p)->nmodules ? (f).module : 0)

static uint64_t hash_frames(const struct rpt_profile *p, const struct rpt_frame *f, uint32_t n)
{
	uint64_t h = SAC_FNV1A_BASIS;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t v = ((uint64_t)f[i].name << 3) ^ f[i].kind ^
			     ((uint64_t)FRAME_MODULE(p, f[i]) << 32);

		h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	return h;
}

struct rpt_profile *rpt_profile__new(void)
{
	struct rpt_profile *p = calloc(1, sizeof(*p));

	if (!p)
		goto nomem;
	p->pool = malloc(INIT_POOL);
	p->name_index = calloc(INIT_INDEX, sizeof(*p->name_index));
	p->stack_index = calloc(INIT_INDEX, sizeof(*p->stack_index));
	if (!p->pool || !p->name_index || !p->stack_index)
		goto nomem;
	p->pool[0] = '\0';
	p->pool_len = 1;
	p->pool_cap = INIT_POOL;
	p->name_index_cap = INIT_INDEX;
	p->stack_index_cap = INIT_INDEX;
	return p;
nomem:
	rpt_profile__free(p);
	errno = ENOMEM;
	return NULL;
}

void rpt_profile__free(struct rpt_profile *p)
{
	if (!p)
		return;
	SAC_FREE_ALL(p->pool, p->frames, p->stacks, p->name_index, p->stack_index, p->modules, p);
}

static int rehash_names(struct rpt_profile *p)
{
	size_t ncap = p->name_index_cap * 2, mask = ncap - 1;
	uint32_t *idx = calloc(ncap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < p->name_index_cap; i++) {
		uint32_t off = p->name_index[i];
		const char *s = p->pool + off;
		size_t slot;

		if (off == EMPTY_SLOT)
			continue;
		slot = sac_hash_fnv1a(SAC_FNV1A_BASIS, s, strlen(s)) & mask;
		while (idx[slot] != EMPTY_SLOT)
			slot = (slot + 1) & mask;
		idx[slot] = off;
	}
	free(p->name_index);
	p->name_index = idx;
	p->name_index_cap = ncap;
	return 0;
}

/*
 * Names are stored NUL-terminated, so a name holding a NUL byte is cut at it:
 * symbol and comm strings cannot hold one anyway.
 */
int64_t rpt_profile__intern(struct rpt_profile *p, const char *name, size_t len)
{
	size_t mask, slot;
	uint32_t off;
	int err;

	len = strnlen(name, len);
	if (len == 0)
		return 0;
	if ((p->nnames + 1) * 2 > p->name_index_cap) {
		err = rehash_names(p);
		if (err)
			return err;
	}
	mask = p->name_index_cap - 1;
	slot = sac_hash_fnv1a(SAC_FNV1A_BASIS, name, len) & mask;
	while ((off = p->name_index[slot]) != EMPTY_SLOT) {
		if (!memcmp(p->pool + off, name, len) && p->pool[off + len] == '\0')
			return off;
		slot = (slot + 1) & mask;
	}
	if (p->pool_len + len + 1 > UINT32_MAX)
		return -ENOMEM;
	err = sac_grow((void **)&p->pool, &p->pool_cap, p->pool_len + len + 1, 1, INIT_POOL);
	if (err)
		return err;
	off = (uint32_t)p->pool_len;
	memcpy(p->pool + off, name, len);
	p->pool[off + len] = '\0';
	p->pool_len += len + 1;
	p->name_index[slot] = off;
	p->nnames++;
	return off;
}

int rpt_profile__copy_meta(struct rpt_profile *dst, const struct rpt_profile *src)
{
	const char *host = rpt_profile__name(src, src->meta.host);
	const char *title = rpt_profile__name(src, src->meta.title);
	int64_t h = rpt_profile__intern(dst, host, strlen(host));
	int64_t t = rpt_profile__intern(dst, title, strlen(title));

	if (h < 0 || t < 0)
		return -ENOMEM;
	dst->meta = src->meta;
	dst->meta.host = (uint32_t)h;
	dst->meta.title = (uint32_t)t;
	return 0;
}

/*
 * A stack index slot keeps the upper half of the chain's hash next to the
 * stack's index + 1: a probe then reads another stack only when the hashes
 * agree, instead of missing the cache on every occupied slot it passes.
 */
#define SLOT(h, si) (((h) & ~(uint64_t)UINT32_MAX) | ((uint64_t)(si) + 1))

/* Place stack @si in a stack index of @cap slots (cap a power of two). */
static void index_stack(const struct rpt_profile *p, uint64_t *idx, size_t cap, size_t si)
{
	const struct rpt_stack *s = &p->stacks[si];
	size_t mask = cap - 1;
	uint64_t h = hash_frames(p, p->frames + s->first, s->nframes);
	size_t slot = h & mask;

	while (idx[slot] != EMPTY_SLOT)
		slot = (slot + 1) & mask;
	idx[slot] = SLOT(h, si);
}

static int rebuild_stack_index(struct rpt_profile *p, size_t cap)
{
	uint64_t *idx = calloc(cap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < p->nstacks; i++)
		index_stack(p, idx, cap, i);
	free(p->stack_index);
	p->stack_index = idx;
	p->stack_index_cap = cap;
	return 0;
}

/* Stored frames @a (modules already normalized) equal the caller's @b. */
static bool frames_equal(const struct rpt_profile *p, const struct rpt_frame *a,
			 const struct rpt_frame *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i].name != b[i].name || a[i].kind != b[i].kind ||
		    a[i].module != FRAME_MODULE(p, b[i]))
			return false;
	return true;
}

int rpt_profile__reserve(struct rpt_profile *p, size_t nstacks, size_t nframes)
{
	size_t cap = p->stack_index_cap;
	int err;

	err = SAC_GROW(p->stacks, p->stacks_cap, p->nstacks + nstacks, 256);
	if (!err)
		err = SAC_GROW(p->frames, p->frames_cap, p->nframes + nframes, 1024);
	while (!err && (p->nstacks + nstacks) * 2 > cap)
		cap *= 2;
	if (err || cap == p->stack_index_cap)
		return err;
	if (!p->stack_index) { /* dropped by a sort: rebuilt at this size by the next add */
		p->stack_index_cap = cap;
		return 0;
	}
	return rebuild_stack_index(p, cap);
}

int64_t rpt_profile__add_index(struct rpt_profile *p, const struct rpt_frame *frames, uint32_t n,
			       uint64_t count)
{
	size_t mask, slot;
	struct rpt_stack *s;
	uint64_t h, v;
	int err;

	if (!p->stack_index) { /* dropped by rpt_profile__sort() */
		err = rebuild_stack_index(p, p->stack_index_cap);
		if (err)
			return err;
	}
	/* Keep the load under one half, so probes stay short and always end. */
	if ((p->nstacks + 1) * 2 > p->stack_index_cap) {
		err = rebuild_stack_index(p, p->stack_index_cap * 2);
		if (err)
			return err;
	}
	mask = p->stack_index_cap - 1;
	h = hash_frames(p, frames, n);
	slot = h & mask;
	while ((v = p->stack_index[slot]) != EMPTY_SLOT) {
		s = &p->stacks[(uint32_t)v - 1];
		if ((v ^ h) >> 32 == 0 && s->nframes == n &&
		    frames_equal(p, p->frames + s->first, frames, n)) {
			s->count += count;
			p->total += count;
			return (uint32_t)v - 1;
		}
		slot = (slot + 1) & mask;
	}
	if (p->nstacks >= UINT32_MAX - 1 || p->nframes + n > UINT32_MAX)
		return -ENOMEM;
	err = SAC_GROW(p->stacks, p->stacks_cap, p->nstacks + 1, 256);
	if (!err)
		err = SAC_GROW(p->frames, p->frames_cap, p->nframes + n, 1024);
	if (err)
		return err;
	for (uint32_t i = 0; i < n; i++) {
		assert(frames[i].kind < (1u << RPT_FRAME_KIND_BITS));
		p->frames[p->nframes + i] = frames[i];
		p->frames[p->nframes + i].module = FRAME_MODULE(p, frames[i]);
	}
	s = &p->stacks[p->nstacks];
	s->count = count;
	s->nframes = n;
	s->first = (uint32_t)p->nframes;
	p->nframes += n;
	p->total += count;
	p->stack_index[slot] = SLOT(h, p->nstacks);
	return (int64_t)p->nstacks++;
}

int rpt_profile__add(struct rpt_profile *p, const struct rpt_frame *frames, uint32_t n,
		     uint64_t count)
{
	int64_t i = rpt_profile__add_index(p, frames, n, count);

	return i < 0 ? (int)i : 0;
}

int rpt_profile__cmp_stacks(const struct rpt_profile *p, const struct rpt_stack *x,
			    const struct rpt_stack *y)
{
	const struct rpt_frame *fx = p->frames + x->first, *fy = p->frames + y->first;
	uint32_t n = x->nframes < y->nframes ? x->nframes : y->nframes;

	for (uint32_t i = 0; i < n; i++) {
		int c;

		if (fx[i].name != fy[i].name) {
			c = strcmp(p->pool + fx[i].name, p->pool + fy[i].name);
			if (c)
				return c;
		}
		if (fx[i].kind != fy[i].kind)
			return fx[i].kind < fy[i].kind ? -1 : 1;
		if (fx[i].module != fy[i].module) {
			c = strcmp(p->pool + fx[i].module, p->pool + fy[i].module);
			if (c)
				return c;
		}
	}
	if (x->nframes != y->nframes)
		return x->nframes < y->nframes ? -1 : 1;
	return 0;
}

static int merge_meta(struct rpt_profile *dst, const struct rpt_profile *src)
{
	bool dst_empty = dst->total == 0 && dst->nstacks == 0 && dst->meta.files == 0;
	const char *host = src->pool + src->meta.host;
	int64_t off;

	if (dst_empty || dst->meta.host) {
		off = rpt_profile__intern(dst, host, strlen(host));
		if (off < 0)
			return (int)off;
		/* Two different hosts: no single host to show. */
		dst->meta.host = dst_empty || (uint32_t)off == dst->meta.host ? (uint32_t)off : 0;
	}
	if (dst_empty)
		dst->meta.freq_hz = src->meta.freq_hz;
	else if (dst->meta.freq_hz != src->meta.freq_hz)
		dst->meta.freq_hz = 0;
	if (src->meta.duration_ns > dst->meta.duration_ns)
		dst->meta.duration_ns = src->meta.duration_ns;
	dst->meta.lost += src->meta.lost;
	dst->meta.files += src->meta.files ? src->meta.files : 1;
	return 0;
}

/*
 * Metadata: lost samples and file counts add up, the duration is the
 * longest, host and frequency are kept only while every input agrees.
 */
int rpt_profile__merge(struct rpt_profile *dst, const struct rpt_profile *src)
{
	struct rpt_frame *buf = NULL;
	size_t cap = 0;
	int err;

	err = merge_meta(dst, src);
	if (err)
		return err;
	for (size_t i = 0; i < src->nmodules; i++) {
		const struct rpt_module *m = &src->modules[i];
		int64_t off =
			rpt_profile__add_module(dst, src->pool + m->path, src->pool + m->build_id);

		if (off < 0)
			return (int)off;
	}
	for (size_t i = 0; i < src->nstacks; i++) {
		const struct rpt_stack *s = &src->stacks[i];
		const struct rpt_frame *f = src->frames + s->first;

		err = SAC_GROW(buf, cap, s->nframes, 64);
		if (err)
			goto cleanup;
		for (uint32_t j = 0; j < s->nframes; j++) {
			const char *name = src->pool + f[j].name;
			int64_t off = rpt_profile__intern(dst, name, strlen(name));

			if (off < 0) {
				err = (int)off;
				goto cleanup;
			}
			buf[j].name = (uint32_t)off;
			buf[j].kind = f[j].kind;
			name = src->pool + f[j].module;
			off = rpt_profile__intern(dst, name, strlen(name));
			if (off < 0) {
				err = (int)off;
				goto cleanup;
			}
			buf[j].module = (uint32_t)off;
		}
		err = rpt_profile__add(dst, buf, s->nframes, s->count);
		if (err)
			goto cleanup;
	}
cleanup:
	free(buf);
	return err;
}

const struct rpt_module *rpt_profile__module(const struct rpt_profile *p, uint32_t path)
{
	for (size_t i = 0; path && i < p->nmodules; i++)
		if (p->modules[i].path == path)
			return &p->modules[i];
	return NULL;
}

int64_t rpt_profile__add_module(struct rpt_profile *p, const char *path, const char *build_id)
{
	int64_t off, bid = 0;
	struct rpt_module *m;
	int err;

	off = rpt_profile__intern(p, path, strlen(path));
	if (off <= 0)
		return off ? off : -EINVAL;
	if (build_id && *build_id) {
		bid = rpt_profile__intern(p, build_id, strlen(build_id));
		if (bid < 0)
			return bid;
	}
	m = (struct rpt_module *)rpt_profile__module(p, (uint32_t)off);
	if (m) {
		if (!m->build_id)
			m->build_id = (uint32_t)bid;
		return off;
	}
	/*
	 * The first module switches frames' module field on (FRAME_MODULE).
	 * Frames stored before hold module 0, which hashes as it did without
	 * it, so the stack index stays valid.
	 */
	err = SAC_GROW(p->modules, p->modules_cap, p->nmodules + 1, 16);
	if (err)
		return err;
	p->modules[p->nmodules++] = (struct rpt_module){(uint32_t)off, (uint32_t)bid};
	return off;
}
