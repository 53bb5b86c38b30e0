// SPDX-License-Identifier: MIT
/*
 * uwtab.c - the in-kernel unwinder's tables in the BPF maps: one table per
 * file (by device and inode), its rows in a slice of the uwrows array
 * (uwalloc.c) while the budget lasts, shared by every process mapping the
 * file; per process the sorted ranges of its executable mappings,
 * rewritten whole in uwprocs (a hash map update is atomic for a BPF
 * reader) at each new mapping. Each file counts the ranges that map it;
 * gone processes are dropped (gc()), and a table no range maps is kept a
 * while for the next process to map it, then freed (uwgc.c). Tables are
 * built on a worker (uwwork.c) and installed here, rows before ranges.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "clock.h"
#include "htab.h"
#include "safeopen.h"
#include "uwalloc.h"
#include "uwtab.h"
#include "uwtab_int.h"
#include "uwwork.h"

#define UPLOAD_BATCH 4096

struct rec_uwtab *rec_uwtab__new(int rows_fd, int procs_fd, uint32_t max_rows, uint64_t max_ns)
{
	struct rec_uwtab *u = calloc(1, sizeof(*u));
	const char *test_rows;

	if (!u)
		return NULL;
	u->rows_fd = rows_fd;
	u->procs_fd = procs_fd;
	u->max_ns = max_ns;
	u->unmapped = getenv("SA_RECORD_TEST_UW_UNMAPPED");
	if (u->unmapped && !*u->unmapped)
		u->unmapped = NULL;
	test_rows = getenv("SA_RECORD_TEST_UW_ROWS");
	if (test_rows && strtoul(test_rows, NULL, 10) && strtoul(test_rows, NULL, 10) < max_rows)
		max_rows = (uint32_t)strtoul(test_rows, NULL, 10);
	u->files = rec_htab__new(sizeof(struct fkey), sizeof(struct fval));
	u->procs = rec_htab__new(sizeof(__u32), sizeof(struct pval));
	/* NULL: built on this thread (and for tests of the budget, whose counts at
	 * the end must not depend on when the worker ran) */
	if (!getenv("SA_RECORD_TEST_UW_SYNC"))
		u->work = rec_uwwork__new(max_ns);
	if (!u->files || !u->procs || rec_uwalloc__init(&u->rows, max_rows)) {
		rec_uwtab__free(u);
		errno = ENOMEM;
		return NULL;
	}
	return u;
}

/* Rows @r[0..@n) to uwrows[@row0 ..). */
static int upload(struct rec_uwtab *u, uint32_t row0, const struct sa_uw_row *r, size_t n)
{
	__u32 keys[UPLOAD_BATCH];
	size_t i, k, m;
	__u32 cnt;
	int err;

	for (i = 0; i < n; i += m) {
		m = n - i < UPLOAD_BATCH ? n - i : UPLOAD_BATCH;
		for (k = 0; k < m; k++)
			keys[k] = row0 + (__u32)(i + k);
		cnt = (__u32)m;
		err = bpf_map_update_batch(u->rows_fd, keys, r + i, &cnt, NULL);
		if (err)
			return err;
	}
	return 0;
}

/*
 * A slice of @n rows; where none is free, the processes gone are dropped
 * and the tables no process maps freed, the longest idle first.
 */
static int64_t take(struct rec_uwtab *u, size_t n)
{
	int64_t row0;

	if (n > u->rows.total)
		return -ENOSPC;
	row0 = rec_uwalloc__get(&u->rows, (uint32_t)n);
	if (row0 >= 0)
		return row0;
	uw_gc_procs(u, sac_now_ns(CLOCK_MONOTONIC));
	if (!uw_make_room(u, (uint32_t)n))
		return -ENOSPC;
	return rec_uwalloc__get(&u->rows, (uint32_t)n);
}

/* A finished build of @v's file (@err, @f): its rows into a slice of uwrows, or why there are none.
 */
static void store(struct rec_uwtab *u, struct fval *v, int err, const struct rec_uwfile *f,
		  uint64_t cpu_ns)
{
	int64_t row0;

	v->row0 = SA_UW_NOTABLE;
	u->st.build_ns += cpu_ns;
	if (cpu_ns > u->st.max_build_ns)
		u->st.max_build_ns = cpu_ns;
	memcpy(v->loads, f->loads, sizeof(v->loads));
	v->nloads = (uint32_t)f->nloads;
	if (err == -ENOENT) {
		v->row0 = 0; /* no CFI: frame pointers */
		u->st.nocfi++;
	} else if (err == -ETIME) {
		u->st.slow++;
	} else if (err) {
		u->st.failed++;
	} else if ((row0 = take(u, f->nrows)) < 0) {
		u->st.nofit++;
	} else if (!upload(u, (uint32_t)row0, f->rows, f->nrows)) {
		v->row0 = (uint32_t)row0;
		v->nrows = (uint32_t)f->nrows;
		u->st.rows += v->nrows;
		u->st.tables++;
	} else {
		rec_uwalloc__put(&u->rows, (uint32_t)row0, (uint32_t)f->nrows);
		u->st.failed++;
	}
}

/* Build the table of @fd into @v on this thread. */
static void build(struct rec_uwtab *u, int fd, struct fval *v)
{
	uint64_t t0 = sac_now_ns(CLOCK_THREAD_CPUTIME_ID);
	struct rec_uwfile f;
	int err;

	err = rec_uw_build(fd, u->max_ns, NULL, &f);
	store(u, v, err, &f, sac_now_ns(CLOCK_THREAD_CPUTIME_ID) - t0);
	free(f.rows);
}

/*
 * Hand the build of @v's file to the worker, with @*own (then taken) or a
 * copy of @fd; on this thread where that fails.
 */
static void post(struct rec_uwtab *u, int fd, int *own, struct fval *v, const struct fkey *k)
{
	struct rec_uwjob *j = u->work ? calloc(1, sizeof(*j)) : NULL;

	if (j)
		j->fd = *own >= 0 ? *own : fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (!j || j->fd < 0) {
		free(j);
		build(u, fd, v);
		return;
	}
	*own = -1;
	j->dev = k->dev;
	j->ino = k->ino;
	j->seq = v->seq = ++u->seq;
	v->row0 = SA_UW_NOTABLE; /* until installed: copies, or frame pointers off the CPU */
	v->pending = true;
	v->job = j;
	u->st.waiting++;
	rec_uwwork__post(u->work, j);
}

/* A pending build the worker was told to skip: posted again when the file is met. */
static bool skipped(const struct fval *v)
{
	return v->pending && v->job && __atomic_load_n(&v->job->skip, __ATOMIC_RELAXED);
}

/*
 * The file's table, built when first met; NULL when the file cannot be
 * read. Known by the mapping's (device, inode), so that the processes of a
 * fork-heavy load cost a lookup, not an open, per mapping. Built on this
 * thread when @now, else on the worker.
 */
static struct fval *file_of(struct rec_uwtab *u, int fd, const struct rec_uwmap *m,
			    struct fkey *kout, bool now)
{
	struct rec_safeopen_opts o = {.sz = sizeof(o), .max_size = REC_BIN_MAX_SIZE};
	struct fkey k = {m->dev, m->ino};
	struct fval *v = NULL;
	struct stat st;
	bool is_new;
	int own = -1;

	*kout = k;
	if (m->ino && (v = rec_htab__get(u->files, &k)) && !v->dead && !skipped(v))
		return v;
	if (fd < 0)
		fd = own = rec_safe_open(m->path, &o, NULL, 0);
	if (fd < 0 || fstat(fd, &st))
		goto out;
	if (!m->ino)
		k = (struct fkey){st.st_dev, st.st_ino};
	*kout = k;
	v = rec_htab__put(u->files, &k, &is_new);
	if (v && (is_new || v->dead || skipped(v))) {
		*v = (struct fval){.idle_ns = sac_now_ns(CLOCK_MONOTONIC)};
		u->st.files++;
		if (now)
			build(u, fd, v);
		else
			post(u, fd, &own, v, &k);
	}
out:
	if (own >= 0)
		close(own);
	return v;
}

/* Where the file's rows are for the mapping at @start of offset @pgoff. */
static bool bias_of(const struct fval *v, uint64_t start, uint64_t pgoff, __u64 *bias)
{
	uint32_t i;

	for (i = 0; i < v->nloads; i++) {
		uint64_t off = v->loads[i][0] & ~4095ull, end = v->loads[i][0] + v->loads[i][2];

		if (pgoff >= off && pgoff < end) {
			*bias = start - pgoff + v->loads[i][0] - v->loads[i][1];
			return true;
		}
	}
	return false;
}

/*
 * Put @r, a range of the file @f, in @p's sorted ranges, replacing those it
 * overlaps (their files lose a reference; @f gains one).
 */
static bool insert(struct rec_uwtab *u, struct pval *p, const struct sa_uw_range *r,
		   const struct fkey *f, uint64_t pgoff, uint64_t now)
{
	struct sa_uw_proc *k = &p->k;
	struct fval *v;
	uint32_t i, n = 0;

	for (i = 0; i < k->n; i++) {
		if (k->r[i].end <= r->start || k->r[i].start >= r->end) {
			p->f[n] = p->f[i];
			p->pgoff[n] = p->pgoff[i];
			k->r[n++] = k->r[i];
		} else {
			uw_unref(u, &p->f[i], now);
		}
	}
	k->n = n;
	if (k->n >= SA_UW_RANGES)
		return false;
	for (i = k->n; i > 0 && k->r[i - 1].start > r->start; i--) {
		k->r[i] = k->r[i - 1];
		p->f[i] = p->f[i - 1];
		p->pgoff[i] = p->pgoff[i - 1];
	}
	k->r[i] = *r;
	p->f[i] = *f;
	p->pgoff[i] = pgoff;
	k->n++;
	v = rec_htab__get(u->files, f);
	if (v)
		v->refs++;
	return true;
}

/* @p's ranges are another image's (an exec) or another process's (a pid reused). */
static void reset(struct rec_uwtab *u, struct pval *p, __u32 gen, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < p->k.n && i < SA_UW_RANGES; i++)
		uw_unref(u, &p->f[i], now);
	memset(p, 0, sizeof(*p));
	p->k.gen = gen;
}

void rec_uwtab__map(struct rec_uwtab *u, int fd, const struct rec_uwmap *m)
{
	uint64_t now = sac_now_ns(CLOCK_MONOTONIC);
	struct sa_uw_range r = {.start = m->start, .end = m->end};
	const struct fval *v;
	struct fkey f;
	struct pval *p;
	__u32 key = m->pid, gen = m->gen;
	bool is_new;

	if (now - u->last_gc >= UW_GC_NS) {
		u->last_gc = now;
		uw_gc_procs(u, now);
		uw_gc_files(u, now);
	}
	rec_uwtab__poll(u);
	v = file_of(u, fd, m, &f, false);
	if (!v || (u->unmapped && m->path && strstr(m->path, u->unmapped)))
		return;
	if (v->row0 != SA_UW_NOTABLE && v->nrows && !bias_of(v, m->start, m->pgoff, &r.bias)) {
		u->st.failed++;
		return;
	}
	r.row0 = v->row0;
	r.nrows = v->nrows;
	p = rec_htab__put(u->procs, &key, &is_new);
	if (!p)
		return;
	if (is_new || p->k.gen != gen)
		reset(u, p, gen, now);
	u->st.procs = rec_htab__len(u->procs);
	if (!insert(u, p, &r, &f, m->pgoff, now)) {
		u->st.rfull++;
		return;
	}
	if (!bpf_map_update_elem(u->procs_fd, &key, &p->k, BPF_ANY))
		u->st.ranges++;
}

void rec_uwtab__prebuild(struct rec_uwtab *u, const char *path)
{
	struct rec_uwmap m = {.path = path};
	struct fkey f;

	file_of(u, -1, &m, &f, true);
}

/* Point every range of the file @k at its table @v, now built, in the recorder and the kernel. */
static void republish(struct rec_uwtab *u, const struct fkey *k, const struct fval *v)
{
	struct sa_uw_range *r;
	const __u32 *pid;
	struct pval *p;
	size_t it = 0;
	uint32_t i;
	bool hit;

	while ((pid = rec_htab__next(u->procs, &it, (void **)&p))) {
		for (hit = false, i = 0; i < p->k.n && i < SA_UW_RANGES; i++) {
			if (p->f[i].dev != k->dev || p->f[i].ino != k->ino)
				continue;
			hit = true;
			r = &p->k.r[i];
			r->row0 = v->row0;
			r->nrows = v->nrows;
			r->bias = 0;
			if (v->nrows && !bias_of(v, r->start, p->pgoff[i], &r->bias)) {
				u->st.failed++;
				r->row0 = SA_UW_NOTABLE;
				r->nrows = 0;
			}
		}
		/* BPF_EXIST: a process the kernel has freed is not written back */
		if (hit)
			bpf_map_update_elem(u->procs_fd, pid, &p->k, BPF_EXIST);
	}
}

/* A build back from the worker: stored, then given to the processes mapping its file. */
static void install(struct rec_uwtab *u, const struct rec_uwjob *j)
{
	struct fkey k = {j->dev, j->ino};
	struct fval *v = rec_htab__get(u->files, &k);
	uint64_t waited = sac_now_ns(CLOCK_MONOTONIC) - j->posted_ns;

	u->st.waiting--;
	if (waited > u->st.max_wait_ns)
		u->st.max_wait_ns = waited;
	if (v && v->job == j)
		v->job = NULL;
	if (v && v->pending && v->seq == j->seq && j->err == -ECANCELED) {
		v->pending = false;
		v->dead = true; /* skipped: built when met again */
	}
	if (!v || v->dead || !v->pending || v->seq != j->seq || j->err == -ECANCELED) {
		u->st.dropped++; /* freed or skipped meanwhile (every process gone), or met again */
		return;
	}
	v->pending = false;
	store(u, v, j->err, &j->f, j->cpu_ns);
	if (v->row0 != SA_UW_NOTABLE)
		republish(u, &k, v);
}

void rec_uwtab__poll(struct rec_uwtab *u)
{
	struct rec_uwjob *j;

	if (!u || !u->work)
		return;
	while ((j = rec_uwwork__done(u->work))) {
		install(u, j);
		rec_uwjob__free(j);
	}
}

const struct rec_uwtab_stats *rec_uwtab__stats(const struct rec_uwtab *u)
{
	return &u->st;
}

void rec_uwtab__free(struct rec_uwtab *u)
{
	if (!u)
		return;
	rec_uwwork__free(u->work, 200000000ull);
	rec_htab__free(u->files);
	rec_htab__free(u->procs);
	rec_uwalloc__fini(&u->rows);
	free(u);
}
