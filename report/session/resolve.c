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
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "resolve_int.h"

/*
 * "[label+0x..]": a mapping's label with @v, the file offset of an address
 * in a binary, or the address itself in anonymous memory.
 */
static int64_t label_plus(struct rpt_strpool *pool, const struct rpt_map *m, uint64_t v)
{
	char lbl[SAF_MAX_STRING + 3];
	size_t len;

	snprintf(lbl, sizeof(lbl), "%s", rpt_strpool__str(pool, m->label));
	len = strlen(lbl);
	if (len && lbl[len - 1] == ']')
		lbl[len - 1] = '\0';
	return rpt_res__pool_fmt(pool, "%s+0x%llx]", lbl, (unsigned long long)v);
}

/* An address inside a binary's mapping: its frames, or "[libfoo.so]". */
static int user_in_map(struct res_ctx *x, const struct rpt_map *m, uint64_t addr, uint64_t la)
{
	const struct rpt_stage_env *e = x->e;
	const struct rpt_sym *f;
	struct rpt_dso *d;
	uint32_t first;
	int n = rpt_res__addr_lookup(x, m->dso, la - m->start + m->pgoff, m->pgoff, &first);

	if (n < 0)
		return n;
	f = n ? x->cache.frames + first : NULL; /* no frames: maybe no array yet */
	d = rpt_symbolizer__get(e->sym, m->dso);
	if (d->stamp != x->serial) { /* once per stack */
		d->stamp = x->serial;
		d->samples += x->c->count;
	}
	d->frames += x->c->count;
	x->outer_dso = m->dso;
	x->outer_unnamed = !n;
	x->l->st->user_frames += x->c->count;
	for (int i = 0; i < n; i++)
		rpt_res__push_prof(x, f[i].name, f[i].kind);
	if (n)
		return 0;
	d->unresolved += x->c->count;
	x->l->st->unresolved += x->c->count;
	if (e->o->addrs)
		return rpt_res__push(x, label_plus(e->pool, m, addr - m->start + m->pgoff),
				     RPT_FRAME_UNKNOWN);
	return rpt_res__push(x, m->label, RPT_FRAME_UNKNOWN);
}

/*
 * The exec generation whose mappings hold user stack @ref of @c. The
 * recorder bumps the generation at sched_process_exec, which fires after
 * start_thread() switched the user registers to the new image: a sample in
 * between carries the next image's ip under the old generation. Its leaf
 * (read from the registers, so always a real ip) then lies in no mapping
 * of its generation but in one of the next.
 */
static uint32_t stack_gen(struct rpt_loaded *l, const struct rpt_count *c,
			  const struct rpt_stackref *ref)
{
	uint32_t gen = c->k.gen;

	if (ref->n && !rpt_maps__find(&l->maps, c->k.pid, gen, l->ips[ref->first], c->time_ns) &&
	    rpt_maps__find(&l->maps, c->k.pid, gen + 1, l->ips[ref->first], c->time_ns))
		gen++;
	return gen;
}

/* The frame at @addr of image @gen, the leaf when @leaf. @return 0 or -ENOMEM. */
static int user_frame(struct res_ctx *x, uint32_t gen, uint64_t addr, bool leaf)
{
	struct rpt_loaded *l = x->l;
	const struct rpt_count *c = x->c;
	uint64_t la = leaf ? addr : addr - 1; /* callers: the call, not the return */
	const struct rpt_map *m = rpt_maps__find(&l->maps, c->k.pid, gen, addr, c->time_ns);
	const struct rpt_symtab_ent *j = NULL;

	if ((!m || m->dso == RPT_NO_DSO) && x->jit_pid)
		j = rpt_symtab__lookup(&l->jit, c->k.pid, la);
	x->cur_dso = m && !j ? m->dso : RPT_NO_DSO;
	if (j)
		return rpt_res__push(x, j->name, RPT_FRAME_JIT);
	if (m && m->dso != RPT_NO_DSO)
		return user_in_map(x, m, addr, la);
	if (m &&
	    x->e->o->addrs) /* [anon], [vdso]: no file offset, so the address, as [kernel+0x..] */
		return rpt_res__push(x, label_plus(x->e->pool, m, addr), RPT_FRAME_UNKNOWN);
	if (m)
		return rpt_res__push(x, m->label, RPT_FRAME_UNKNOWN);
	if (leaf)
		return rpt_res__push(x, rpt_strpool__intern(x->e->pool, "[unknown]", 9),
				     RPT_FRAME_UNKNOWN);
	x->dropped++; /* below the leaf, in no mapping: a broken walk */
	return 0;
}

static int user_frames(struct res_ctx *x, const struct rpt_stackref *ref)
{
	struct rpt_loaded *l = x->l;
	uint32_t gen = stack_gen(l, x->c, ref), nouter, n0 = x->n;
	uint32_t py0 = rpt_res__py_first(x, &l->ips[ref->first], ref->n), npy = ref->n - py0;
	uint64_t outer = 0;
	int err = 0;

	for (uint32_t i = 0; i < py0 && !err; i++) /* the Python frames are merged below */
		err = user_frame(x, gen, l->ips[ref->first + i], !i);
	/* a frame-pointer walk of auto: the outer frames unwound stacks show */
	nouter = err ? 0 : rpt_loaded__stitch(l, x->c, ref, &outer);
	for (uint32_t i = 0; i < nouter && !err; i++)
		err = user_frame(x, gen, l->ips[outer + i], false);
	x->cur_dso = RPT_NO_DSO;
	if (!err && npy)
		err = rpt_res__python(x, n0, &l->ips[ref->first + py0], npy);
	else if (!err)
		err = rpt_res__py_refused(x);
	return err;
}

/*
 * Where a complete frame-pointer walk ends: C's entry points and thread
 * starts, and Go's (docs/unwinding.md, "Go"): a goroutine's stack begins
 * at runtime.goexit, a thread's own (g0) stack at runtime.mstart, the
 * first thread's at runtime.rt0_go. Go's assembly functions carry their
 * ABI in .symtab (runtime.goexit.abi0), and --lines appends " file:line".
 */
static bool root_like(const char *name)
{
	static const char *const roots[] = {
		"_start",	  "main",	    "start_thread",   "clone",
		"clone3",	  "__clone",	    "__clone3",	      "thread_start",
		"_dl_start_user", "runtime.goexit", "runtime.mstart", "runtime.rt0_go",
	};

	if (!strncmp(name, "__libc_start", 12))
		return true;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		size_t n = strlen(roots[i]);
		const char *end = name + n;

		if (strncmp(name, roots[i], n))
			continue;
		if (!strncmp(end, ".abi0", 5))
			end += 5;
		if (!*end || *end == ' ')
			return true;
	}
	return false;
}

static void walk_stats(struct res_ctx *x, uint32_t nkernel)
{
	/* a recording whose stacks the kernel may have walked with CFI (format 1.5) */
	bool unwound = rpt_loaded__unwound(x->l, x->c->k.ustack) ||
		       (x->l->st->meta_flags & SAF_META_UW_KERNEL);
	struct rpt_dso *d;
	const char *outer;

	if (x->dropped)
		x->l->st->dropped_frames += x->c->count;
	if (x->dropped && !unwound)
		x->l->st->broken_fp += x->c->count;
	/* a CFI unwind's end says nothing about frame pointers */
	if (x->n == nkernel || x->outer_dso == RPT_NO_DSO || unwound)
		return;
	d = rpt_symbolizer__get(x->e->sym, x->outer_dso);
	outer = rpt_profile__name(x->prof, x->fr[x->n - 1].name);
	d->outermost += x->c->count;
	if (x->dropped || x->outer_unnamed || !root_like(outer))
		d->truncated += x->c->count;
}

static int64_t root_name(struct res_ctx *x)
{
	const struct rpt_count *c = x->c;
	const char *comm = rpt_strpool__str(x->e->pool, c->k.comm);
	char buf[SAF_MAX_STRING + 32];

	if (!*comm)
		comm = "[unknown]";
	else if (!x->e->o->show_tid && !x->e->o->show_pid)
		return c->k.comm; /* interned already */
	if (x->e->o->show_tid)
		snprintf(buf, sizeof(buf), "%s-%u/%u", comm, c->k.pid, c->k.tid);
	else if (x->e->o->show_pid)
		snprintf(buf, sizeof(buf), "%s-%u", comm, c->k.pid);
	else
		snprintf(buf, sizeof(buf), "%s", comm);
	return rpt_strpool__intern(x->e->pool, buf, strlen(buf));
}

/* The profile's module of binary @dso, looked up once per file. */
static int64_t module_of(struct res_ctx *x, uint32_t dso)
{
	size_t cap = x->mods_cap;

	if (dso == RPT_NO_DSO)
		return 0;
	if (dso >= cap) {
		if (SAC_GROW(x->mods, x->mods_cap, (size_t)dso + 1, 64))
			return -ENOMEM;
		for (size_t i = cap; i < x->mods_cap; i++)
			x->mods[i] = -1;
	}
	if (x->mods[dso] < 0)
		x->mods[dso] = rpt_res__prof_module(x, dso);
	return x->mods[dso];
}

static void job_stack(const struct rpt_loaded *l, uint32_t id, struct rpt_stackref *ref,
		      size_t *nframes, uint32_t *idx)
{
	uint64_t v;

	if (id && rpt_loaded__stack(l, id, &v)) {
		*ref = l->refs[v];
		*nframes += ref->n;
		*idx = (uint32_t)v;
	} else {
		*ref = (struct rpt_stackref){0};
		*idx = 0;
	}
}

/*
 * The keys in table order with their stacks looked up: one loop of
 * independent hash lookups overlaps their cache misses (a million keys'
 * stacks are spread over hundreds of MB), and counting the frames they
 * make lets the profile be sized once. NULL on -ENOMEM.
 */
static struct key_job *plan_keys(const struct rpt_loaded *l, size_t *njobs, size_t *nframes)
{
	struct key_job *jobs = malloc((l->ncounts + 1) * sizeof(*jobs));
	size_t n = 0;
	uint32_t uidx;

	*nframes = 0;
	for (size_t i = 0; jobs && i < l->counts_cap; i++) {
		const struct rpt_count *c = &l->counts[i];

		if (!c->used)
			continue;
		jobs[n].slot = (uint32_t)i;
		job_stack(l, c->k.kstack, &jobs[n].kstack, nframes, &jobs[n].kidx);
		job_stack(l, c->k.ustack, &jobs[n].ustack, nframes, &uidx);
		*nframes += 1; /* the root */
		n++;
	}
	*njobs = n;
	return jobs;
}

/*
 * Symbolize every user address of the stacks once, ahead of the keys
 * (rpt_symbolizer__warm()): while a debug file is still being inflated,
 * the binaries that do not wait for it go first, then its units as they
 * arrive, instead of the first key that needs its last unit waiting for
 * all of it. The keys then find every address in the symbolizer's cache.
 */
static int warm(struct res_ctx *x, const struct key_job *jobs, size_t njobs)
{
	struct rpt_loaded *l = x->l;
	struct rpt_hmap seen = {0};
	struct rpt_sym_req *v = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	for (size_t i = 0; i < njobs && !err; i++) {
		const struct rpt_count *c = &l->counts[jobs[i].slot];
		const struct rpt_stackref *ref = &jobs[i].ustack;
		uint32_t gen = stack_gen(l, c, ref);

		for (uint32_t k = 0; k < ref->n && !err; k++) {
			uint64_t addr = l->ips[ref->first + k], la = k ? addr - 1 : addr, off, key;
			const struct rpt_map *m =
				rpt_maps__find(&l->maps, c->k.pid, gen, addr, c->time_ns);

			if (!m || m->dso == RPT_NO_DSO)
				continue;
			off = la - m->start + m->pgoff;
			/* a collision only leaves an address to the keys' own lookup */
			key = sac_hash_mix64(off ^ sac_hash_mix64(m->dso ^ (m->pgoff << 24))) >> 1;
			if (rpt_hmap__get(&seen, key, &key))
				continue;
			if (SAC_GROW(v, cap, n + 1, 1024) || rpt_hmap__put(&seen, key, 0)) {
				err = -ENOMEM;
				break;
			}
			v[n++] = (struct rpt_sym_req){
				.dso = m->dso, .off = off, .map_pgoff = m->pgoff};
		}
	}
	if (!err)
		err = rpt_symbolizer__warm(x->e->sym, v, n);
	rpt_hmap__fini(&seen);
	free(v);
	return err;
}

static int resolve_key(struct res_ctx *x, const struct key_job *job)
{
	struct rpt_frame out[RES_MAX_FRAMES + 1];
	uint64_t v;
	uint32_t nk;
	int64_t r;
	int err;

	x->n = 0;
	x->dropped = 0;
	x->serial = ++*x->e->serial;
	x->jit_pid = rpt_hmap__get(&x->jit_pids, (uint64_t)x->c->k.pid + 1, &v);
	x->outer_dso = RPT_NO_DSO;
	x->cur_dso = RPT_NO_DSO;
	err = rpt_res__kernel(x, job);
	nk = x->n;
	if (!err)
		err = user_frames(x, &job->ustack);
	if (err)
		return err;
	walk_stats(x, nk);
	r = root_name(x);
	if (r < 0 || (r = rpt_res__name(x, (uint32_t)r)) < 0)
		return -ENOMEM;
	out[0] = (struct rpt_frame){.name = (uint32_t)r, .kind = RPT_FRAME_ROOT};
	/* Modules root first, so the profile's module table keeps that order. */
	for (uint32_t i = 0; i < x->n; i++) {
		const struct rpt_sym *f = &x->fr[x->n - 1 - i];
		int64_t mod = module_of(x, x->dso[x->n - 1 - i]);

		if (mod < 0)
			return -ENOMEM;
		out[i + 1] = (struct rpt_frame){
			.name = f->name, .kind = f->kind, .module = (uint32_t)mod};
	}
	return rpt_profile__add(x->prof, out, x->n + 1, x->c->count);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int rpt_loaded__resolve(const struct rpt_stage_env *e, struct rpt_loaded *l,
			struct rpt_profile *prof)
{
	struct res_ctx x = {.e = e, .l = l, .prof = prof};
	size_t njobs = 0, nframes;
	struct key_job *jobs = NULL;
	double t0 = now_s();
	bool shown = false;
	int err = -ENOMEM;

	if (l->nustacks && rpt_loaded__stitch_index(l))
		goto cleanup;
	jobs = plan_keys(l, &njobs, &nframes);
	x.kents = calloc(l->nrefs + 1, sizeof(*x.kents));
	x.ksyms = calloc((size_t)1 << KSYM_MEMO_BITS, sizeof(*x.ksyms)); /* NULL: no memo */
	x.names = calloc((size_t)1 << NAME_MEMO_BITS, sizeof(*x.names));
	/* most processes have none: their frames in no binary skip the search */
	for (size_t i = 0; i < l->jit.n; i++)
		if (rpt_hmap__put(&x.jit_pids, l->jit.ents[i].key + 1, 0))
			goto cleanup;
	if (!jobs || !x.kents || rpt_profile__reserve(prof, njobs, nframes))
		goto cleanup;
	err = rpt_symbolizer__async(e->sym) ? warm(&x, jobs, njobs) : 0;
	for (size_t i = 0; i < njobs && !err; i++) {
		if (i + 8 < njobs &&
		    jobs[i + 8].ustack.n) { /* fetch ahead: the stacks are spread */
			__builtin_prefetch(&l->ips[jobs[i + 8].ustack.first]);
			__builtin_prefetch(&l->counts[jobs[i + 8].slot]);
		}
		x.c = &l->counts[jobs[i].slot];
		err = resolve_key(&x, &jobs[i]);
		if (e->o->progress && !((i + 1) & 255) && now_s() - t0 > 1.0) {
			fprintf(stderr, "\rsa-report: symbolizing %zu/%zu stacks", i + 1,
				l->ncounts);
			shown = true;
		}
	}
	if (shown)
		fprintf(stderr, "\r\033[K");
cleanup:
	free(jobs);
	rpt_res__cache_fini(&x.cache);
	free(x.mods);
	free(x.kents);
	free(x.ksyms);
	free(x.names);
	rpt_hmap__fini(&x.jit_pids);
	rpt_hmap__fini(&x.name_map);
	free(x.kframes);
	return err;
}
