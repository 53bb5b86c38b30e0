// SPDX-License-Identifier: MIT
/*
 * uwgc.c - what gone processes leave in the in-kernel unwinder's tables:
 * their ranges (in the recorder, and in uwprocs where the recorder wrote
 * them after the kernel's sa_on_free had run), the references they held
 * on files, and the tables no process maps any more, kept UW_KEEP_NS for
 * the next process (a compile loop runs cc1 again and again) or until
 * their rows are needed, then freed. Deleting from a rec_htab is copying
 * what stays to a new one.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "uwtab_int.h"
#include "uwwork.h"

void uw_unref(struct rec_uwtab *u, const struct fkey *k, uint64_t now)
{
	struct fval *v = rec_htab__get(u->files, k);

	if (v && v->refs && !--v->refs) {
		v->idle_ns = now;
		/* nobody waits for it now: the worker skips it, and it is posted again when met */
		if (v->pending && v->job)
			__atomic_store_n(&v->job->skip, 1, __ATOMIC_RELAXED);
	}
}

/* Whether the process @tgid is gone: no uwprocs entry, or no such process. */
static bool gone(struct rec_uwtab *u, __u32 tgid, struct sa_uw_proc *buf)
{
	if (kill((pid_t)tgid, 0) && errno == ESRCH)
		return true;
	return bpf_map_lookup_elem(u->procs_fd, &tgid, buf) && errno == ENOENT;
}

void uw_gc_procs(struct rec_uwtab *u, uint64_t now)
{
	struct rec_htab *keep = NULL;
	struct sa_uw_proc *buf = malloc(sizeof(*buf));
	const __u32 *key;
	struct pval *p, *q;
	size_t it = 0;
	uint32_t i;

	if (buf)
		keep = rec_htab__new(sizeof(__u32), sizeof(struct pval));
	while (keep && (key = rec_htab__next(u->procs, &it, (void **)&p))) {
		if (!gone(u, *key, buf)) {
			q = rec_htab__put(keep, key, NULL);
			if (q) {
				*q = *p;
				continue;
			}
		}
		bpf_map_delete_elem(u->procs_fd, key); /* written after it was freed */
		for (i = 0; i < p->k.n && i < SA_UW_RANGES; i++)
			uw_unref(u, &p->f[i], now);
		u->st.gone++;
	}
	if (keep) {
		rec_htab__free(u->procs);
		u->procs = keep;
	}
	free(buf);
	u->st.procs = rec_htab__len(u->procs);
}

/* Free @v's table (its rows back to the budget); it is built again when met. */
static void free_table(struct rec_uwtab *u, struct fval *v)
{
	if (!v->dead && v->row0 != SA_UW_NOTABLE && v->nrows) {
		if (!rec_uwalloc__put(&u->rows, v->row0, v->nrows)) {
			u->st.rows -= v->nrows;
			u->st.tables--;
			u->st.freed++;
		}
	}
	v->dead = true;
	v->row0 = SA_UW_NOTABLE;
	v->nrows = 0;
}

void uw_gc_files(struct rec_uwtab *u, uint64_t now)
{
	struct rec_htab *keep = rec_htab__new(sizeof(struct fkey), sizeof(struct fval));
	const struct fkey *key;
	struct fval *v, *w;
	size_t it = 0;

	while (keep && (key = rec_htab__next(u->files, &it, (void **)&v))) {
		if (!v->refs && (v->dead || now - v->idle_ns >= UW_KEEP_NS)) {
			free_table(u, v);
			continue;
		}
		w = rec_htab__put(keep, key, NULL);
		if (!w)
			break; /* out of memory: keep the old table whole */
		*w = *v;
	}
	if (keep && !key) {
		rec_htab__free(u->files);
		u->files = keep;
	} else {
		rec_htab__free(keep);
	}
}

bool uw_make_room(struct rec_uwtab *u, uint32_t n)
{
	struct fval *v, *old;
	size_t it;

	while (rec_uwalloc__largest(&u->rows) < n) {
		old = NULL;
		it = 0;
		while (rec_htab__next(u->files, &it, (void **)&v))
			if (!v->refs && !v->dead && v->nrows && (!old || v->idle_ns < old->idle_ns))
				old = v;
		if (!old)
			return false;
		free_table(u, old);
	}
	return true;
}
