// SPDX-License-Identifier: MIT
/*
 * resolve.c - turns each distinct aggregated key of a recording into named
 * frames, root first: the comm (with pid/tid), user frames caller ->
 * callee, then kernel frames as the leaf part. Addresses are normalized
 * through the mapping timeline to (binary, file offset) and symbolized;
 * frames of a broken frame-pointer walk are dropped and counted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "session.h"

#define RES_MAX_FRAMES (2 * SAF_MAX_FRAMES + 2)

struct res_ctx {
	struct rpt_session *s;
	struct rpt_loaded *l;
	const struct rpt_count *c;
	struct rpt_sym fr[RES_MAX_FRAMES]; /* leaf first while building */
	uint32_t dso[RES_MAX_FRAMES];	   /* binary of each frame, RPT_NO_DSO if none */
	uint32_t cur_dso;		   /* binary of the frames pushed now */
	uint32_t n;
	uint32_t outer_dso; /* binary of the outermost user frame */
	bool outer_unnamed;
	uint64_t dropped;
	uint64_t serial; /* counts resolved keys, from 1 */
};

static int64_t pool_fmt(struct rpt_session *s, const char *fmt, const char *a, uint64_t x)
{
	char buf[SAF_MAX_STRING + 64];
	int len = snprintf(buf, sizeof(buf), fmt, a, (unsigned long long)x);

	if (len >= (int)sizeof(buf))
		len = sizeof(buf) - 1;
	return rpt_strpool__intern(rpt_symbolizer__pool(s->sym), buf, len);
}

static int push(struct res_ctx *x, int64_t name, uint32_t kind)
{
	if (name < 0)
		return -ENOMEM;
	if (x->n < RES_MAX_FRAMES) {
		x->dso[x->n] = x->cur_dso;
		x->fr[x->n++] = (struct rpt_sym){(uint32_t)name, kind};
	}
	return 0;
}

/* An address inside a binary's mapping: its frames, or "[libfoo.so]". */
static int user_in_map(struct res_ctx *x, const struct rpt_map *m, uint64_t addr, uint64_t la)
{
	struct rpt_session *s = x->s;
	struct rpt_dso *d;
	const struct rpt_sym *f;
	uint64_t off = la - m->start + m->pgoff;
	int n = rpt_symbolizer__lookup(s->sym, m->dso, off, m->pgoff, &f);

	if (n < 0)
		return n;
	d = rpt_symbolizer__get(s->sym, m->dso);
	if (d->stamp != x->serial) { /* once per stack */
		d->stamp = x->serial;
		d->samples += x->c->count;
	}
	d->frames += x->c->count;
	x->outer_dso = m->dso;
	x->outer_unnamed = !n;
	x->l->st->user_frames += x->c->count;
	for (int i = 0; i < n; i++)
		if (push(x, f[i].name, f[i].kind))
			return -ENOMEM;
	if (n)
		return 0;
	d->unresolved += x->c->count;
	x->l->st->unresolved += x->c->count;
	if (s->o.addrs) {
		char lbl[SAF_MAX_STRING + 3];
		size_t len;

		snprintf(lbl, sizeof(lbl), "%s", rpt_session__str(s, m->label));
		len = strlen(lbl);
		if (len && lbl[len - 1] == ']')
			lbl[len - 1] = '\0';
		return push(x, pool_fmt(s, "%s+0x%llx]", lbl, addr - m->start + m->pgoff),
			    RPT_FRAME_UNKNOWN);
	}
	return push(x, m->label, RPT_FRAME_UNKNOWN);
}

static int user_frames(struct res_ctx *x, const struct rpt_stackref *ref)
{
	struct rpt_loaded *l = x->l;
	const struct rpt_count *c = x->c;
	uint32_t gen = c->k.gen;

	/*
	 * The recorder bumps the generation at sched_process_exec, which fires
	 * after start_thread() switched the user registers to the new image:
	 * a sample in between carries the next image's ip under the old
	 * generation. Its leaf (read from the registers, so always a real ip)
	 * then lies in no mapping of its generation but in one of the next.
	 */
	if (ref->n && !rpt_maps__find(&l->maps, c->k.pid, gen, l->ips[ref->first], c->time_ns) &&
	    rpt_maps__find(&l->maps, c->k.pid, gen + 1, l->ips[ref->first], c->time_ns))
		gen++;
	for (uint32_t i = 0; i < ref->n; i++) {
		uint64_t addr = l->ips[ref->first + i];
		uint64_t la = i ? addr - 1 : addr; /* callers: the call, not the return */
		const struct rpt_map *m = rpt_maps__find(&l->maps, c->k.pid, gen, addr, c->time_ns);
		const struct rpt_symtab_ent *j = NULL;
		int err;

		if (!m || m->dso == RPT_NO_DSO)
			j = rpt_symtab__lookup(&l->jit, c->k.pid, la);
		x->cur_dso = m && !j ? m->dso : RPT_NO_DSO;
		if (j)
			err = push(x, j->name, RPT_FRAME_JIT);
		else if (m && m->dso != RPT_NO_DSO)
			err = user_in_map(x, m, addr, la);
		else if (m)
			err = push(x, m->label, RPT_FRAME_UNKNOWN);
		else if (!i)
			err = push(x,
				   rpt_strpool__intern(rpt_symbolizer__pool(x->s->sym), "[unknown]",
						       9),
				   RPT_FRAME_UNKNOWN);
		else { /* below the leaf, in no mapping: a broken walk */
			x->dropped++;
			continue;
		}
		if (err)
			return err;
	}
	x->cur_dso = RPT_NO_DSO;
	return 0;
}

static int kernel_frames(struct res_ctx *x, const struct rpt_stackref *ref)
{
	struct rpt_session *s = x->s;
	struct rpt_strpool *pool = rpt_symbolizer__pool(s->sym);
	bool unnamed = false;

	for (uint32_t i = 0; i < ref->n; i++) {
		uint64_t addr = x->l->ips[ref->first + i];
		const struct rpt_symtab_ent *e =
			rpt_symtab__lookup(&x->l->ksyms, 0, i ? addr - 1 : addr);
		int64_t name;

		if (e) {
			name = e->name;
		} else if (s->o.addrs) {
			name = pool_fmt(s, "[kernel%s+0x%llx]", "", addr);
		} else {
			/* one [kernel] for a run of unnamed frames */
			if (x->n && x->fr[x->n - 1].kind == RPT_FRAME_KERNEL &&
			    !strcmp(rpt_strpool__str(pool, x->fr[x->n - 1].name), "[kernel]"))
				continue;
			name = rpt_strpool__intern(pool, "[kernel]", 8);
		}
		unnamed |= !e;
		if (push(x, name, RPT_FRAME_KERNEL))
			return -ENOMEM;
	}
	if (unnamed)
		x->l->st->kernel_unnamed += x->c->count;
	return 0;
}

/* Where a complete frame-pointer walk ends. */
static bool root_like(const char *name)
{
	static const char *const roots[] = {"_start",	"main",		"start_thread",
					    "clone",	"clone3",	"__clone",
					    "__clone3", "thread_start", "_dl_start_user"};

	if (!strncmp(name, "__libc_start", 12))
		return true;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!strcmp(name, roots[i]))
			return true;
	return false;
}

static void walk_stats(struct res_ctx *x, uint32_t nkernel)
{
	struct rpt_dso *d;
	const char *outer;

	if (x->dropped)
		x->l->st->dropped_frames += x->c->count;
	if (x->n == nkernel || x->outer_dso == RPT_NO_DSO)
		return;
	d = rpt_symbolizer__get(x->s->sym, x->outer_dso);
	outer = rpt_session__str(x->s, x->fr[x->n - 1].name);
	d->outermost += x->c->count;
	if (x->dropped || x->outer_unnamed || !root_like(outer))
		d->truncated += x->c->count;
}

static int64_t root_name(struct res_ctx *x)
{
	const struct rpt_count *c = x->c;
	const char *comm = rpt_session__str(x->s, c->k.comm);
	char buf[SAF_MAX_STRING + 32];

	if (!*comm)
		comm = "[unknown]";
	if (x->s->o.show_tid)
		snprintf(buf, sizeof(buf), "%s-%u/%u", comm, c->k.pid, c->k.tid);
	else if (x->s->o.show_pid)
		snprintf(buf, sizeof(buf), "%s-%u", comm, c->k.pid);
	else
		snprintf(buf, sizeof(buf), "%s", comm);
	return rpt_strpool__intern(rpt_symbolizer__pool(x->s->sym), buf, strlen(buf));
}

/* Symbolizer pool offset -> the profile's pool offset, cached. */
static int64_t prof_name(struct rpt_session *s, struct rpt_profile *prof, uint32_t off)
{
	const char *str;
	uint64_t v;
	int64_t r;

	if (rpt_hmap__get(&s->name_map, off, &v))
		return v;
	str = rpt_session__str(s, off);
	r = rpt_profile__intern(prof, str, strlen(str));
	if (r >= 0 && rpt_hmap__put(&s->name_map, off, r))
		return -ENOMEM;
	return r;
}

/*
 * The profile's module (pprof mapping) for a binary: its path and build id,
 * added once per profile; cached in name_map under a key no pool offset has.
 */
static int64_t prof_module(struct rpt_session *s, struct rpt_profile *prof, uint32_t dso)
{
	uint64_t key = 1ull << 63 | dso, v;
	const struct rpt_dso *d;
	int64_t r;

	if (dso == RPT_NO_DSO)
		return 0;
	if (rpt_hmap__get(&s->name_map, key, &v))
		return (int64_t)v;
	d = rpt_symbolizer__get(s->sym, dso);
	r = rpt_profile__add_module(prof, rpt_session__str(s, d->path),
				    d->build_id ? rpt_session__str(s, d->build_id) : NULL);
	if (r == -EINVAL)
		r = 0; /* a binary without a path has no mapping to show */
	if (r >= 0 && rpt_hmap__put(&s->name_map, key, (uint64_t)r))
		return -ENOMEM;
	return r;
}

static int resolve_key(struct res_ctx *x, struct rpt_profile *prof)
{
	struct rpt_frame out[RES_MAX_FRAMES + 1];
	struct rpt_loaded *l = x->l;
	uint64_t v;
	uint32_t nk;
	int64_t r;
	int err = 0;

	x->n = 0;
	x->dropped = 0;
	x->serial = ++x->s->serial;
	x->outer_dso = RPT_NO_DSO;
	x->cur_dso = RPT_NO_DSO;
	if (x->c->k.kstack && rpt_hmap__get(&l->stacks, x->c->k.kstack, &v))
		err = kernel_frames(x, &l->refs[v]);
	nk = x->n;
	if (!err && x->c->k.ustack && rpt_hmap__get(&l->stacks, x->c->k.ustack, &v))
		err = user_frames(x, &l->refs[v]);
	if (err)
		return err;
	walk_stats(x, nk);
	r = root_name(x);
	if (r < 0 || (r = prof_name(x->s, prof, r)) < 0)
		return -ENOMEM;
	out[0] = (struct rpt_frame){.name = (uint32_t)r, .kind = RPT_FRAME_ROOT};
	for (uint32_t i = 0; i < x->n; i++) {
		const struct rpt_sym *f = &x->fr[x->n - 1 - i];
		int64_t mod = prof_module(x->s, prof, x->dso[x->n - 1 - i]);

		r = prof_name(x->s, prof, f->name);
		if (r < 0 || mod < 0)
			return -ENOMEM;
		out[i + 1] = (struct rpt_frame){
			.name = (uint32_t)r, .kind = f->kind, .module = (uint32_t)mod};
	}
	return rpt_profile__add(prof, out, x->n + 1, x->c->count);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int rpt_loaded__resolve(struct rpt_session *s, struct rpt_loaded *l, struct rpt_profile *prof)
{
	struct res_ctx x = {.s = s, .l = l};
	double t0 = now_s();
	bool shown = false;
	size_t done = 0;
	int err;

	if (true) { /* a profile may reuse a freed one's address: start afresh */
		rpt_hmap__fini(&s->name_map);
		s->name_prof = prof;
	}
	for (size_t i = 0; i < l->counts_cap; i++) {
		if (!l->counts[i].used)
			continue;
		x.c = &l->counts[i];
		err = resolve_key(&x, prof);
		if (err)
			return err;
		if (s->o.progress && !(++done & 255) && now_s() - t0 > 1.0) {
			fprintf(stderr, "\rsa-report: symbolizing %zu/%zu stacks", done,
				l->ncounts);
			shown = true;
		}
	}
	if (shown)
		fprintf(stderr, "\r\033[K");
	return 0;
}
