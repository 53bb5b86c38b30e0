// SPDX-License-Identifier: MIT
/*
 * pyframes.c - CPython frames in sa-report (docs/python.md): PYCODE
 * records kept as names by (pid, code address), and the merge that puts the
 * Python frames of a user stack in place of the native eval-loop calls
 * that ran them ("mixed mode"), marked RPT_FRAME_PYTHON.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "resolve_int.h"

/* The native function one call of which runs a group of Python frames. */
#define EVAL_FN "_PyEval_EvalFrameDefault"

/* The outermost frame of a process whose Python frames were not read. */
#define PY_NOT_READ "[python: frames not read]"

/* Native frames of one stack the merge handles; a deeper one is left as it is. */
#define MERGE_MAX 1024

int rpt_loaded__pycode(const struct rpt_stage_env *e, struct rpt_loaded *l,
		       const struct saf_pycode *p)
{
	struct rpt_strpool *pool = e->pool;
	char buf[2 * SAF_MAX_STRING + 64];
	int64_t name;

	if (!p->code) { /* the interpreter itself: for --info */
		if (p->line == SAF_PY_READ)
			l->st->py_read++;
		else
			l->st->py_refused++;
		/*
		 * (pid, 0): the frames of this process were read (no name:
		 * rpt_res__py_first()), or not (named by the mark its
		 * samples get: rpt_res__py_refused())
		 */
		name = p->line == SAF_PY_READ
			       ? 0
			       : rpt_strpool__intern(pool, PY_NOT_READ, strlen(PY_NOT_READ));
		if (name < 0 || rpt_symtab__add(&l->py, p->pid, 0, 1, (uint32_t)name))
			return -ENOMEM;
		if (l->st->py_first)
			return 0;
		snprintf(buf, sizeof(buf), "pid %u, CPython %.*s, %.*s: %s", p->pid,
			 (int)p->name.len, p->name.str ? p->name.str : "", (int)p->file.len,
			 p->file.str ? p->file.str : "",
			 p->line == SAF_PY_READ ? "frames read"
						: "layout not confirmed, native frames only");
		name = rpt_strpool__intern(pool, buf, strlen(buf));
		if (name < 0)
			return -ENOMEM;
		l->st->py_first = (uint32_t)name;
		return 0;
	}
	name = rpt_strpool__intern(pool, p->name.str ? p->name.str : "", p->name.len);
	if (name < 0)
		return -ENOMEM;
	l->st->pycodes++;
	return rpt_symtab__add(&l->py, p->pid, p->code & SAF_PY_ADDR_MASK, 1, (uint32_t)name);
}

/* Push Python frame word @w of @x's process. */
static int push_py(struct res_ctx *x, uint64_t w)
{
	uint64_t code = w & SAF_PY_ADDR_MASK;
	const struct rpt_symtab_ent *e =
		code ? rpt_symtab__lookup(&x->l->py, x->c->k.pid, code) : NULL;
	int64_t name;

	if (e && e->start == code)
		return rpt_res__push(x, e->name, RPT_FRAME_PYTHON);
	/* a frame the recorder could not read or name: marked, never guessed */
	name = rpt_strpool__intern(x->e->pool, "[python:unknown]", 16);
	return name < 0 ? -ENOMEM : rpt_res__push(x, name, RPT_FRAME_PYTHON);
}

/* Push the Python frames of groups [@g0, @g1): words @py[@start[g] .. @start[g + 1]). */
static int push_groups(struct res_ctx *x, const uint64_t *py, const uint32_t *start, uint32_t g0,
		       uint32_t g1)
{
	int err = 0;

	x->cur_dso = RPT_NO_DSO;
	for (uint32_t i = start[g0]; i < start[g1] && !err; i++)
		err = push_py(x, py[i]);
	return err;
}

/*
 * Leaf first, native frame k that is an eval-loop call gets group k (the
 * k-th from the leaf): a Python walk cut at SA_PY_FRAMES misses outer
 * groups, a native stack cut at 127 frames misses outer calls, and both
 * keep the leaf side aligned. Groups left over (frame pointers broken in an
 * interpreter built without them) go outside the outermost call replaced,
 * or at the root when no call was seen.
 */
uint32_t rpt_res__py_first(struct res_ctx *x, const uint64_t *ips, uint32_t n)
{
	const struct rpt_symtab_ent *e;
	uint32_t i = n;

	while (i > 1 && (ips[i - 1] & SAF_PY_TAG_MASK) == SAF_PY_TAG)
		i--; /* never the leaf: a sampled IP is a native one */
	if (i == n)
		return n;
	e = rpt_symtab__lookup(&x->l->py, x->c->k.pid, 0);
	return e && e->start == 0 && !e->name ? i : n;
}

int rpt_res__py_refused(struct res_ctx *x)
{
	const struct rpt_symtab_ent *e = rpt_symtab__lookup(&x->l->py, x->c->k.pid, 0);

	if (!e || e->start != 0 || !e->name)
		return 0;
	x->cur_dso = RPT_NO_DSO;
	return rpt_res__push(x, e->name, RPT_FRAME_UNKNOWN);
}

int rpt_res__python(struct res_ctx *x, uint32_t n0, const uint64_t *py, uint32_t npy)
{
	struct rpt_sym nat[MERGE_MAX];
	uint32_t dso[MERGE_MAX], start[SAF_MAX_FRAMES + 1], ng = 0, nn = x->n - n0, g = 0, last = 0;
	uint32_t neval = 0;
	int err = 0;

	if (nn > MERGE_MAX)
		return 0;
	if (npy > SAF_MAX_FRAMES)
		npy = SAF_MAX_FRAMES;
	/* a group ends at its entry frame, the first the call ran (outermost) */
	start[ng++] = 0;
	for (uint32_t i = 0; i < npy; i++)
		if ((py[i] & SAF_PY_ENTRY) && i + 1 < npy)
			start[ng++] = i + 1;
	start[ng] = npy;
	memcpy(nat, x->fr + n0, nn * sizeof(*nat));
	memcpy(dso, x->dso + n0, nn * sizeof(*dso));
	for (uint32_t j = 0; j < nn; j++)
		if (!strcmp(rpt_profile__name(x->prof, nat[j].name), EVAL_FN) && ++neval <= ng)
			last = j;
	x->n = n0;
	for (uint32_t j = 0; j < nn && !err; j++) {
		if (g < ng && !strcmp(rpt_profile__name(x->prof, nat[j].name), EVAL_FN)) {
			err = push_groups(x, py, start, g, j == last ? ng : g + 1);
			g = j == last ? ng : g + 1;
			continue;
		}
		x->cur_dso = dso[j];
		rpt_res__push_prof(x, nat[j].name, nat[j].kind);
	}
	if (!err && g < ng)
		err = push_groups(x, py, start, g, ng);
	x->cur_dso = RPT_NO_DSO;
	return err;
}
