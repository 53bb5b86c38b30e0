// SPDX-License-Identifier: MIT
/*
 * ustack.c - turns a USTACK record (registers and a raw user stack copy,
 * docs/format.md) into an ordinary user stack of the loaded recording:
 * unwound offline with the binaries' CFI (unwind.c), interned under a
 * synthetic stack id, and counted like a COUNT record of that id.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash.h"
#include "session_int.h"
#include "unwind.h"
#include "uwpick.h"

/* Synthetic ids count down from here; sa-record's ids count up from 1. */
#define UST_FIRST_ID 0xffffff00u

/* The process image whose mappings describe the sample (an exec'd gen may lack them). */
static struct rpt_proc *image_of(struct rpt_loaded *l, uint32_t pid, uint32_t gen)
{
	struct rpt_proc *best = NULL;
	uint64_t idx;

	/*
	 * The latest gen <= @gen that has mappings. Look gens up without
	 * creating them (rpt_maps__proc() would), and only a few: a damaged
	 * file's gen can be 2^32 - 1. Past those, scan the images the file has.
	 */
	for (uint32_t k = 0; k <= gen && k < 64; k++)
		if (rpt_hmap__get(&l->maps.index, (uint64_t)pid << 32 | (gen - k), &idx) &&
		    l->maps.procs[idx].nmaps)
			return &l->maps.procs[idx];
	for (size_t i = 0; gen >= 64 && i < l->maps.nprocs; i++) {
		struct rpt_proc *p = &l->maps.procs[i];

		if (p->pid == pid && p->gen <= gen && p->nmaps && (!best || p->gen > best->gen))
			best = p;
	}
	return best ? best : rpt_maps__proc(&l->maps, pid, 0);
}

/* The binaries of @p, at the paths where the report can read them. */
static int image_mods(const struct rpt_stage_env *e, struct rpt_loaded *l, const struct rpt_proc *p)
{
	const char *symfs = e->o->sym.symfs;

	/*
	 * Built for the previous capture: reuse it, unless the string pool its
	 * paths point into has moved since (a mapping read after it interned a
	 * new path).
	 */
	if (l->umods_ok && p->pid == l->umods_pid && p->gen == l->umods_gen &&
	    p->nmaps == l->umods_n && rpt_strpool__str(e->pool, 0) == l->umods_pool)
		return (int)p->nmaps;
	l->umods_ok = false;
	if (p->nmaps > l->umods_cap) {
		struct rpt_unwind_module *m = realloc(l->umods, p->nmaps * sizeof(*m));
		char(*paths)[RPT_USTACK_PATH_MAX] = realloc(l->upaths, p->nmaps * sizeof(*paths));

		if (m)
			l->umods = m;
		if (paths)
			l->upaths = paths;
		if (!m || !paths)
			return -ENOMEM;
		l->umods_cap = p->nmaps;
	}
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct rpt_map *map = &p->maps[i];
		struct rpt_unwind_module *m = &l->umods[i];
		struct rpt_dso *d;

		*m = (struct rpt_unwind_module){NULL, NULL, map->start, map->end, map->pgoff};
		if (map->dso == RPT_NO_DSO)
			continue;
		d = rpt_symbolizer__get(e->sym, map->dso);
		/* [vdso]: symbols by build id, but no file of CFI: unwound as anonymous code */
		if (rpt_strpool__str(e->pool, d->path)[0] == '[')
			continue;
		m->path = rpt_strpool__str(e->pool, d->path);
		/* a content hash is no GNU build id: the binary at the path, as before 1.7 */
		m->build_id =
			d->build_id && !d->id_kind ? rpt_strpool__str(e->pool, d->build_id) : NULL;
		if (symfs) {
			snprintf(l->upaths[i], RPT_USTACK_PATH_MAX, "%s%s", symfs, m->path);
			if (!access(l->upaths[i], R_OK))
				m->path = l->upaths[i];
		}
	}
	l->umods_ok = true;
	l->umods_pool = rpt_strpool__str(e->pool, 0);
	l->umods_pid = p->pid;
	l->umods_gen = p->gen;
	l->umods_n = p->nmaps;
	return p->nmaps;
}

/* The id of the unwound frames: an earlier identical stack's, or a new one. */
static int intern_frames(struct rpt_loaded *l, const uint64_t *ips, uint32_t n, uint32_t *id,
			 bool *is_new)
{
	uint64_t h = sac_hash_fnv(ips, n * sizeof(*ips), n), v, r;
	bool hashed = rpt_hmap__get(&l->ustack_ids, h == UINT64_MAX ? 0 : h, &v);

	if (hashed && rpt_loaded__stack(l, v, &r) && l->refs[r].n == n &&
	    !memcmp(l->ips + l->refs[r].first, ips, n * sizeof(*ips))) {
		*id = v;
		*is_new = false;
		return 0;
	}
	*id = UST_FIRST_ID - l->nustacks++;
	*is_new = true;
	/* a hash clash keeps the first stack in the index; this one goes unindexed */
	if (!hashed && rpt_hmap__put(&l->ustack_ids, h == UINT64_MAX ? 0 : h, *id))
		return -ENOMEM;
	return 0;
}

int rpt_loaded__ustack(const struct rpt_stage_env *e, struct rpt_loaded *l,
		       const struct saf_ustack *u, uint64_t *ips, struct saf_stack *st,
		       struct saf_count *c)
{
	struct rpt_unwind_regs regs = {u->nregs > SAF_UREG_IP ? u->regs[SAF_UREG_IP] : 0,
				       u->nregs > SAF_UREG_SP ? u->regs[SAF_UREG_SP] : 0,
				       u->nregs > SAF_UREG_FP ? u->regs[SAF_UREG_FP] : 0};
	struct rpt_proc *p;
	bool is_new;
	uint32_t id;
	int n, err;

	*c = (struct saf_count){u->pid, u->tid, u->gen, 0, u->kstack, u->count, u->comm};
	if (!regs.ip)
		return 0; /* no user context: a kernel-only sample */
	if (!l->unw) {
		const char *how = getenv("SA_UNWIND");

		l->unw = rpt_unwinder__new();
		if (!l->unw)
			return -ENOMEM;
		l->unw_quiet = e->o->quiet;
		rpt_unwinder__dwfl_only(l->unw, how && !strcmp(how, "libdwfl"));
	}
	p = image_of(l, u->pid, u->gen);
	if (!p)
		return -ENOMEM;
	n = image_mods(e, l, p);
	if (n >= 0)
		n = rpt_unwinder__unwind(l->unw, (uint64_t)u->pid << 32 | p->gen, l->umods, n,
					 &regs, u, ips, RPT_USTACK_MAX_FRAMES);
	if (n < 0)
		return n;
	err = intern_frames(l, ips, n, &id, &is_new);
	if (err)
		return err;
	c->ustack = id;
	*st = (struct saf_stack){id, SAF_STACK_USER, n, ips};
	return is_new;
}

bool rpt_loaded__unwound(const struct rpt_loaded *l, uint32_t id)
{
	return id <= UST_FIRST_ID && UST_FIRST_ID - id < l->nustacks;
}

void rpt_loaded__ustack_fini(struct rpt_loaded *l)
{
	const struct rpt_uwpick *p = l->unw && !l->unw_quiet ? rpt_unwinder__pick(l->unw) : NULL;

	/* once per binary: walks end in it, with neither it nor the recorder's frames here */
	for (size_t i = 0; p && i < p->nmissing; i++)
		fprintf(stderr,
			"sa-report: %s (build id %s) not found: %llu stack walks stop in it; "
			"pass --symfs DIR, or re-record with this sa-record for self-contained "
			"stacks\n",
			p->missing[i].path,
			*p->missing[i].build_id ? p->missing[i].build_id : "none",
			(unsigned long long)p->missing[i].walks);
	rpt_unwinder__free(l->unw);
	rpt_hmap__fini(&l->ustack_ids);
	free(l->umods);
	free(l->upaths);
}
