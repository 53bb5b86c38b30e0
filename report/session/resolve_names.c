// SPDX-License-Identifier: MIT
/*
 * resolve_names.c - the names resolve.c pushes, moved into the profile's
 * pool once each: symbolizer strings (cached by pool offset), each user
 * address of a binary once per file (its frames), each kernel stack once
 * per file, and each binary's pprof module.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolve_int.h"

int64_t rpt_res__pool_fmt(struct rpt_strpool *pool, const char *fmt, const char *a, uint64_t x)
{
	char buf[SAF_MAX_STRING + 64];
	int len = snprintf(buf, sizeof(buf), fmt, a, (unsigned long long)x);

	if (len >= (int)sizeof(buf))
		len = sizeof(buf) - 1;
	return rpt_strpool__intern(pool, buf, len);
}

/* Symbolizer pool offset -> the profile's pool offset, cached. */
static int64_t prof_name(struct res_ctx *x, uint32_t off)
{
	const char *str;
	uint64_t v;
	int64_t r;

	if (rpt_hmap__get(&x->name_map, off, &v))
		return v;
	str = rpt_strpool__str(x->e->pool, off);
	r = rpt_profile__intern(x->prof, str, strlen(str));
	if (r >= 0 && rpt_hmap__put(&x->name_map, off, r))
		return -ENOMEM;
	return r;
}

int64_t rpt_res__name(struct res_ctx *x, uint32_t off)
{
	struct name_memo *m;
	int64_t r;

	if (!x->names)
		return prof_name(x, off);
	m = &x->names[(off * 0x9e3779b97f4a7c15ULL) >> (64 - NAME_MEMO_BITS)];
	if (m->used && m->off == off)
		return m->name;
	r = prof_name(x, off);
	if (r >= 0)
		*m = (struct name_memo){off, (uint32_t)r, true};
	return r;
}

/*
 * The profile's module (pprof mapping) for a binary: its path and build id,
 * added once per profile; cached in name_map under a key no pool offset has.
 */
int64_t rpt_res__prof_module(struct res_ctx *x, uint32_t dso)
{
	uint64_t key = 1ull << 63 | dso, v;
	const struct rpt_dso *d;
	int64_t r;

	if (dso == RPT_NO_DSO)
		return 0;
	if (rpt_hmap__get(&x->name_map, key, &v))
		return (int64_t)v;
	d = rpt_symbolizer__get(x->e->sym, dso);
	r = rpt_profile__add_module(x->prof, rpt_strpool__str(x->e->pool, d->path),
				    d->build_id ? rpt_strpool__str(x->e->pool, d->build_id) : NULL);
	if (r == -EINVAL)
		r = 0; /* a binary without a path has no mapping to show */
	if (r >= 0 && rpt_hmap__put(&x->name_map, key, (uint64_t)r))
		return -ENOMEM;
	return r;
}

/* Push a frame named in the symbolizer's pool (@name < 0: an error). */
int rpt_res__push(struct res_ctx *x, int64_t name, uint32_t kind)
{
	if (name < 0)
		return -ENOMEM;
	if (x->n < RES_MAX_FRAMES) {
		name = rpt_res__name(x, (uint32_t)name);
		if (name < 0)
			return -ENOMEM;
		rpt_res__push_prof(x, (uint32_t)name, kind);
	}
	return 0;
}

/* Slot of an address in a table of 2^@bits slots: one multiply (Fibonacci hashing). */
static inline size_t addr_slot(uint32_t dso, uint64_t off, uint64_t pgoff, unsigned int bits)
{
	uint64_t h = (off ^ pgoff << 20 ^ (uint64_t)dso << 44) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> (64 - bits));
}

static int addr_cache_grow(struct addr_cache *c)
{
	unsigned int bits = c->cap ? c->bits + 1 : 12;
	size_t ncap = (size_t)1 << bits;
	struct addr_ent *n = malloc(ncap * sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < ncap; i++)
		n[i].dso = RPT_NO_DSO;
	for (size_t i = 0; i < c->cap; i++) {
		const struct addr_ent *e = &c->slots[i];
		size_t j;

		if (e->dso == RPT_NO_DSO)
			continue;
		j = addr_slot(e->dso, e->off, e->pgoff, bits);
		while (n[j].dso != RPT_NO_DSO)
			j = (j + 1) & (ncap - 1);
		n[j] = *e;
	}
	free(c->slots);
	c->slots = n;
	c->cap = ncap;
	c->bits = bits;
	return 0;
}

void rpt_res__cache_fini(struct addr_cache *c)
{
	free(c->slots);
	free(c->frames);
	memset(c, 0, sizeof(*c));
}

/*
 * The frames at file offset @off of binary @dso (see rpt_symbolizer__lookup()),
 * named in the profile's pool, from x->cache.frames[*@first].
 * @return how many (0 = no name), or -ENOMEM.
 */
int rpt_res__addr_lookup(struct res_ctx *x, uint32_t dso, uint64_t off, uint64_t pgoff,
			 uint32_t *first)
{
	struct addr_cache *c = &x->cache;
	const struct rpt_sym *f;
	struct addr_ent *e;
	size_t j;
	int n;

	if ((c->used + 1) * 2 > c->cap && addr_cache_grow(c))
		return -ENOMEM;
	j = addr_slot(dso, off, pgoff, c->bits);
	for (e = &c->slots[j]; e->dso != RPT_NO_DSO; e = &c->slots[j]) {
		if (e->dso == dso && e->off == off && e->pgoff == pgoff) {
			*first = e->first;
			return (int)e->n;
		}
		j = (j + 1) & (c->cap - 1);
	}
	n = rpt_symbolizer__lookup(x->e->sym, dso, off, pgoff, &f);
	if (n < 0)
		return n;
	if (SAC_GROW(c->frames, c->frames_cap, c->nframes + n, 1024))
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		int64_t name = rpt_res__name(x, f[i].name);

		if (name < 0)
			return -ENOMEM;
		c->frames[c->nframes + i] = (struct rpt_sym){(uint32_t)name, f[i].kind};
	}
	*e = (struct addr_ent){off, pgoff, dso, (uint32_t)n, (uint32_t)c->nframes};
	c->nframes += n;
	c->used++;
	*first = e->first;
	return n;
}

/* rpt_symtab__lookup() of the kernel's symbols, memoized in x->ksyms. */
static const struct rpt_symtab_ent *ksym_of(struct res_ctx *x, uint64_t addr)
{
	struct ksym_memo *m;

	if (!x->ksyms)
		return rpt_symtab__lookup(&x->l->ksyms, 0, addr);
	m = &x->ksyms[(addr * 0x9e3779b97f4a7c15ULL) >> (64 - KSYM_MEMO_BITS)];
	if (!m->used || m->addr != addr)
		*m = (struct ksym_memo){addr, rpt_symtab__lookup(&x->l->ksyms, 0, addr), true};
	return m->e;
}

static int kernel_frames(struct res_ctx *x, const struct rpt_stackref *ref, bool *unnamed_out)
{
	struct rpt_strpool *pool = x->e->pool;
	bool unnamed = false;

	for (uint32_t i = 0; i < ref->n; i++) {
		uint64_t addr = x->l->ips[ref->first + i];
		const struct rpt_symtab_ent *e = ksym_of(x, i ? addr - 1 : addr);
		int64_t name;

		if (e) {
			name = e->name;
		} else if (x->e->o->addrs) {
			name = rpt_res__pool_fmt(pool, "[kernel%s+0x%llx]", "", addr);
		} else {
			/* one [kernel] for a run of unnamed frames */
			if (x->n && x->fr[x->n - 1].kind == RPT_FRAME_KERNEL &&
			    !strcmp(rpt_profile__name(x->prof, x->fr[x->n - 1].name), "[kernel]"))
				continue;
			name = rpt_strpool__intern(pool, "[kernel]", 8);
		}
		unnamed |= !e;
		if (rpt_res__push(x, name, RPT_FRAME_KERNEL))
			return -ENOMEM;
	}
	*unnamed_out = unnamed;
	return 0;
}

/*
 * The kernel frames of @job, resolved once per kernel stack: keys differ
 * by process and user stack far more often than by kernel stack.
 */
int rpt_res__kernel(struct res_ctx *x, const struct key_job *job)
{
	struct kstack_ent *e = &x->kents[job->kidx];
	int err;

	if (!job->kstack.n)
		return 0;
	if (e->done) {
		for (uint32_t i = 0; i < e->n; i++) {
			x->dso[i] = RPT_NO_DSO;
			x->fr[i] = x->kframes[e->first + i];
		}
		x->n = e->n;
	} else {
		err = kernel_frames(x, &job->kstack, &e->unnamed);
		if (err || SAC_GROW(x->kframes, x->kframes_cap, x->nkframes + x->n, 1024))
			return err ? err : -ENOMEM;
		memcpy(x->kframes + x->nkframes, x->fr, x->n * sizeof(*x->fr));
		*e = (struct kstack_ent){(uint32_t)x->nkframes, x->n, true, e->unnamed};
		x->nkframes += x->n;
	}
	if (e->unnamed)
		x->l->st->kernel_unnamed += x->c->count;
	return 0;
}
