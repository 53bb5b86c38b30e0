// SPDX-License-Identifier: MIT
/*
 * uwtab.c - the in-kernel unwinder's tables in the BPF maps: one table per
 * file (by device and inode), its rows appended to the uwrows array while
 * the budget lasts, shared by every process mapping the file; per process
 * the sorted ranges of its executable mappings, rewritten whole in uwprocs
 * (a hash map update is atomic for a BPF reader) at each new mapping.
 */
#include <errno.h>
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
#include "uwtab.h"

#define UPLOAD_BATCH 4096

struct fkey {
	uint64_t dev, ino;
};

struct fval {
	uint32_t row0, nrows; /* as struct sa_uw_range */
	uint64_t loads[REC_UW_LOADS][3];
	uint32_t nloads;
};

struct rec_uwtab {
	struct rec_htab *files; /* struct fkey -> struct fval */
	struct rec_htab *procs; /* tgid -> struct sa_uw_proc */
	int rows_fd, procs_fd;
	uint32_t max_rows, next_row;
	uint64_t max_ns;
	const char *unmapped; /* tests: mappings of paths holding it never reach the kernel */
	struct rec_uwtab_stats st;
};

struct rec_uwtab *rec_uwtab__new(int rows_fd, int procs_fd, uint32_t max_rows, uint64_t max_ns)
{
	struct rec_uwtab *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->rows_fd = rows_fd;
	u->procs_fd = procs_fd;
	u->max_rows = max_rows;
	u->max_ns = max_ns;
	u->unmapped = getenv("SA_RECORD_TEST_UW_UNMAPPED");
	if (u->unmapped && !*u->unmapped)
		u->unmapped = NULL;
	u->files = rec_htab__new(sizeof(struct fkey), sizeof(struct fval));
	u->procs = rec_htab__new(sizeof(__u32), sizeof(struct sa_uw_proc));
	if (!u->files || !u->procs) {
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

/* Build and store the table of @fd into @v, or mark why there is none. */
static void build(struct rec_uwtab *u, int fd, struct fval *v)
{
	uint64_t t0 = sac_now_ns(CLOCK_MONOTONIC), dt;
	struct rec_uwfile f;
	int err;

	v->row0 = SA_UW_NOTABLE;
	err = rec_uw_build(fd, u->max_ns, &f);
	dt = sac_now_ns(CLOCK_MONOTONIC) - t0;
	u->st.build_ns += dt;
	if (dt > u->st.max_build_ns)
		u->st.max_build_ns = dt;
	memcpy(v->loads, f.loads, sizeof(v->loads));
	v->nloads = (uint32_t)f.nloads;
	if (err == -ENOENT) {
		v->row0 = 0; /* no CFI: frame pointers */
		u->st.nocfi++;
	} else if (err == -ETIME) {
		u->st.slow++;
	} else if (err) {
		u->st.failed++;
	} else if (f.nrows > u->max_rows - u->next_row) {
		u->st.nofit++;
	} else if (!upload(u, u->next_row, f.rows, f.nrows)) {
		v->row0 = u->next_row;
		v->nrows = (uint32_t)f.nrows;
		u->next_row += v->nrows;
		u->st.rows += v->nrows;
		u->st.tables++;
	} else {
		u->st.failed++;
	}
	free(f.rows);
}

/*
 * The file's table, built when first met; NULL when the file cannot be
 * read. Known by the mapping's (device, inode), so that the processes of a
 * fork-heavy load cost a lookup, not an open, per mapping.
 */
static const struct fval *file_of(struct rec_uwtab *u, int fd, const struct rec_uwmap *m)
{
	struct rec_safeopen_opts o = {.sz = sizeof(o), .max_size = REC_BIN_MAX_SIZE};
	struct fkey k = {m->dev, m->ino};
	struct fval *v = NULL;
	struct stat st;
	bool is_new;
	int own = -1;

	if (m->ino && (v = rec_htab__get(u->files, &k)))
		return v;
	if (fd < 0)
		fd = own = rec_safe_open(m->path, &o, NULL, 0);
	if (fd < 0 || fstat(fd, &st))
		goto out;
	if (!m->ino)
		k = (struct fkey){st.st_dev, st.st_ino};
	v = rec_htab__put(u->files, &k, &is_new);
	if (v && is_new) {
		u->st.files++;
		build(u, fd, v);
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

/* Put @r in @p's sorted ranges, replacing those it overlaps. */
static bool insert(struct sa_uw_proc *p, const struct sa_uw_range *r)
{
	uint32_t i, k = 0;

	for (i = 0; i < p->n; i++)
		if (p->r[i].end <= r->start || p->r[i].start >= r->end)
			p->r[k++] = p->r[i];
	p->n = k;
	if (p->n >= SA_UW_RANGES)
		return false;
	for (i = p->n; i > 0 && p->r[i - 1].start > r->start; i--)
		p->r[i] = p->r[i - 1];
	p->r[i] = *r;
	p->n++;
	return true;
}

void rec_uwtab__map(struct rec_uwtab *u, int fd, const struct rec_uwmap *m)
{
	const struct fval *v = file_of(u, fd, m);
	struct sa_uw_range r = {.start = m->start, .end = m->end};
	struct sa_uw_proc *p;
	__u32 key = m->pid, gen = m->gen;
	bool is_new;

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
	if (is_new || p->gen != gen) {
		memset(p, 0, sizeof(*p));
		p->gen = gen;
	}
	if (!insert(p, &r)) {
		u->st.rfull++;
		return;
	}
	if (!bpf_map_update_elem(u->procs_fd, &key, p, BPF_ANY))
		u->st.ranges++;
}

void rec_uwtab__prebuild(struct rec_uwtab *u, const char *path)
{
	struct rec_uwmap m = {.path = path};

	file_of(u, -1, &m);
}

const struct rec_uwtab_stats *rec_uwtab__stats(const struct rec_uwtab *u)
{
	return &u->st;
}

void rec_uwtab__free(struct rec_uwtab *u)
{
	if (!u)
		return;
	rec_htab__free(u->files);
	rec_htab__free(u->procs);
	free(u);
}
