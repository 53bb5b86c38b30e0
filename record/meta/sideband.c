// SPDX-License-Identifier: MIT
/*
 * sideband.c - one PERF_COUNT_SW_DUMMY event per CPU whose ring carries
 * MMAP2 (with build ids from Linux 5.12; before, the maps table reads them
 * from the files), COMM, FORK, EXIT and LOST records. Records of all
 * CPUs are copied out, merged by time (a fork on one CPU must be handled
 * before the child's exec on another) and turned into saf records, with the
 * exec generation kept as the BPF program keeps it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "grow.h"
#include "jitmap.h"
#include "safeopen.h"
#include "sideband.h"

/* Records younger than this wait for the next poll (cross-CPU ordering). */
#define REORDER_NS 5000000ull
/*
 * What one poll may spend handling records (each MMAP2 may open a binary
 * and read its build id): 3.7 s in one poll at load 200, beside a storm,
 * held up --duration. The rest waits for the next poll, in order. The
 * last poll gets more, then what is left is not handled (counted).
 */
#define POLL_BUDGET_NS	(50 * 1000000ull)
#define FINAL_BUDGET_NS (500 * 1000000ull)
/* rec_sideband_end_by(): 0, or when the last poll stops handling records */
static uint64_t end_by;

/* sample_id_all trailer with TID | TIME | CPU: pid, tid, time, cpu, res */
#define TRAILER 24

struct ring {
	int fd;
	void *base;
	size_t data_size; /* power of two */
};

struct qent {
	uint64_t time;
	uint32_t off, len;
	uint64_t seq;
};

struct rec_sideband {
	struct ring *rings;
	int nrings;
	struct rec_sink sink;
	struct rec_maptab *maptab;
	struct rec_jitmap *jitmap;
	uint32_t *gens, *ppids; /* indexed by pid, up to pid_max */
	size_t pid_max;
	uint8_t *arena;
	size_t arena_len, arena_cap;
	struct qent *q;
	size_t nq, qcap;
	uint64_t seq;
	struct rec_sideband_stats st;
	unsigned long test_delay_us; /* see handle() */
};

static size_t read_pid_max(void)
{
	unsigned long v = 0;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v ? v + 1 : 4194305;
}

/*
 * A kernel before 5.12 refuses the build_id bit it does not know with
 * EINVAL: asked without it from then on (*@bid cleared), MMAP2 records
 * carry the file's device and inode, and rec_maptab__add() reads the build
 * id from the file, as for /proc/PID/maps.
 */
static int open_ring(struct ring *r, int cpu, size_t pages, bool *bid)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.build_id = *bid,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
	};
	size_t psz = sysconf(_SC_PAGESIZE);

	r->data_size = pages * psz;
	r->fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0 && errno == EINVAL && *bid) {
		*bid = false;
		attr.build_id = 0;
		r->fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (r->fd < 0)
		return -errno;
	r->base = mmap(NULL, (pages + 1) * psz, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	return 0;
}

static int list_cpus(const struct rec_sideband_opts *o, int **out)
{
	int n = o->ncpus > 0 ? o->ncpus : (int)sysconf(_SC_NPROCESSORS_CONF), i;
	int *c = calloc(n > 0 ? n : 1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		c[i] = o->cpus ? o->cpus[i] : i;
	*out = c;
	return n;
}

struct rec_sideband *rec_sideband__open(const struct rec_sideband_opts *o)
{
	struct rec_sideband *sb = NULL;
	size_t pages = o->ring_pages ? o->ring_pages : 128;
	int *cpus = NULL, n, i, err;
	bool bid = true;

	err = -EINVAL;
	if (pages & (pages - 1) || !o->maptab)
		goto cleanup;
	err = -ENOMEM;
	sb = calloc(1, sizeof(*sb));
	if (!sb)
		goto cleanup;
	sb->sink = o->sink;
	sb->maptab = o->maptab;
	sb->jitmap = o->jitmap;
	sb->pid_max = read_pid_max();
	if (getenv("SA_RECORD_TEST_SIDEBAND_DELAY_US"))
		sb->test_delay_us = strtoul(getenv("SA_RECORD_TEST_SIDEBAND_DELAY_US"), NULL, 10);
	/* Pages of these stay untouched (and free) for pids never seen. */
	sb->gens = calloc(sb->pid_max, sizeof(*sb->gens));
	sb->ppids = calloc(sb->pid_max, sizeof(*sb->ppids));
	n = list_cpus(o, &cpus);
	if (n < 0 || !sb->gens || !sb->ppids)
		goto cleanup;
	sb->rings = calloc(n, sizeof(*sb->rings));
	if (!sb->rings)
		goto cleanup;
	for (i = 0; i < n; i++)
		sb->rings[i].fd = -1;
	sb->nrings = n;
	for (i = 0; i < n; i++) {
		err = open_ring(&sb->rings[i], cpus[i], pages, &bid);
		/* A possible but offline CPU has no events to give. */
		if (err == -ENODEV && !o->cpus)
			err = 0;
		if (err)
			goto cleanup;
	}
	err = 0;
cleanup:
	free(cpus);
	if (err) {
		rec_sideband__free(sb);
		errno = -err;
		return NULL;
	}
	return sb;
}

static int queue_add(struct rec_sideband *sb, const void *a, size_t alen, const void *b,
		     size_t blen)
{
	size_t len = alen + blen;
	struct qent *e;

	if (SAC_GROW(sb->arena, sb->arena_cap, sb->arena_len + len, 1 << 20) ||
	    SAC_GROW(sb->q, sb->qcap, sb->nq + 1, 4096))
		return -ENOMEM;
	memcpy(sb->arena + sb->arena_len, a, alen);
	if (blen)
		memcpy(sb->arena + sb->arena_len + alen, b, blen);
	e = &sb->q[sb->nq++];
	e->off = sb->arena_len;
	e->len = len;
	e->seq = sb->seq++;
	e->time = 0;
	if (len >= sizeof(struct perf_event_header) + TRAILER)
		memcpy(&e->time, sb->arena + e->off + len - 16, sizeof(e->time));
	sb->arena_len += len;
	return 0;
}

/* Copy every record out of one ring; a record may wrap past the end. */
static int drain_ring(struct rec_sideband *sb, struct ring *r)
{
	struct perf_event_mmap_page *meta = r->base;
	uint8_t *data;
	uint64_t head, tail;
	int err = 0;

	if (!meta)
		return 0;
	data = (uint8_t *)r->base + meta->data_offset;
	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	tail = meta->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		size_t at = tail & (r->data_size - 1), first;

		first = r->data_size - at;
		if (first >= sizeof(h)) {
			memcpy(&h, data + at, sizeof(h));
		} else {
			memcpy(&h, data + at, first);
			memcpy((uint8_t *)&h + first, data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || h.size > head - tail) {
			tail = head; /* cannot happen with a sane kernel: resync */
			break;
		}
		if (first >= h.size)
			err = queue_add(sb, data + at, h.size, NULL, 0);
		else
			err = queue_add(sb, data + at, first, data, h.size - first);
		if (err)
			break;
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return err;
}

static int cmp_qent(const void *a, const void *b)
{
	const struct qent *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

uint32_t rec_sideband__gen(const struct rec_sideband *sb, uint32_t pid)
{
	return pid < sb->pid_max ? sb->gens[pid] : 0;
}

void rec_sideband__stats(const struct rec_sideband *sb, struct rec_sideband_stats *st)
{
	*st = sb->st;
}

struct sb_mmap2 {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size, res1;
			uint16_t res2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
	char filename[];
};

struct sb_comm {
	struct perf_event_header h;
	uint32_t pid, tid;
	char comm[];
};

struct sb_task {
	struct perf_event_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct sb_lost {
	struct perf_event_header h;
	uint64_t id, lost;
};

static int on_mmap2(struct rec_sideband *sb, const struct sb_mmap2 *r, uint64_t t)
{
	struct saf_map m = {.pid = r->pid, .time_ns = t};
	size_t max = r->h.size - sizeof(*r) - TRAILER, len;
	char path[4096];
	int fd = -1;

	sb->st.mmap2++;
	if (!(r->prot & PROT_EXEC))
		return 0;
	sb->st.mmap2_exec++;
	len = strnlen(r->filename, max < sizeof(path) - 1 ? max : sizeof(path) - 1);
	memcpy(path, r->filename, len);
	path[len] = '\0';
	m.gen = rec_sideband__gen(sb, r->pid);
	m.start = r->addr;
	m.end = r->addr + r->len;
	m.pgoff = r->pgoff;
	m.flags = SAF_MAP_EXEC;
	if (r->h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		sb->st.mmap2_build_id++;
		m.build_id.data = r->build_id;
		m.build_id.len = r->build_id_size <= 20 ? r->build_id_size : 0;
	} else {
		m.dev = makedev(r->maj, r->min);
		m.inode = r->ino;
	}
	if (len > 10 && !strcmp(path + len - 10, " (deleted)")) {
		path[len - 10] = '\0';
		m.flags |= SAF_MAP_DELETED;
	}
	m.path = rec_str(path);
	/* perf names anonymous code "//anon"; /proc/PID/maps shows inode 0 */
	if (path[0] != '/' || !strcmp(path, "//anon") || (!m.build_id.len && !m.inode))
		m.flags |= SAF_MAP_ANON;
	else if (rec_maptab__wants_fd(sb->maptab, &m))
		fd = rec_safe_open_mapped(r->pid, m.start, m.end, path, m.dev, m.inode);
	return rec_maptab__add(sb->maptab, &m, fd, &sb->sink);
}

static int on_comm(struct rec_sideband *sb, const struct sb_comm *r, uint64_t t)
{
	struct saf_record rec = {.kind = SAF_REC_COMM};
	size_t max = r->h.size - sizeof(*r) - TRAILER;
	char comm[64], exe[4096], link[64];
	ssize_t n;

	snprintf(comm, sizeof(comm), "%.*s", (int)strnlen(r->comm, max), r->comm);
	sb->st.comm++;
	if (!(r->h.misc & PERF_RECORD_MISC_COMM_EXEC)) {
		rec.comm = (struct saf_comm){r->pid, r->tid, t, rec_str(comm)};
		return rec_sink__emit(&sb->sink, &rec);
	}
	/* exec: a new image, as sa_on_exec counts it */
	sb->st.exec++;
	if (r->pid < sb->pid_max)
		sb->gens[r->pid]++;
	rec_maptab__exec(sb->maptab, r->pid, rec_sideband__gen(sb, r->pid));
	snprintf(link, sizeof(link), "/proc/%u/exe", r->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	rec.kind = SAF_REC_PROC;
	rec.proc = (struct saf_proc){
		.pid = r->pid,
		.gen = rec_sideband__gen(sb, r->pid),
		.time_ns = t,
		.ppid = r->pid < sb->pid_max ? sb->ppids[r->pid] : 0,
		.comm = rec_str(comm),
		.exe = rec_str(exe),
	};
	return rec_sink__emit(&sb->sink, &rec);
}

static int on_fork(struct rec_sideband *sb, const struct sb_task *r)
{
	struct saf_record rec = {.kind = SAF_REC_PROC};
	uint32_t gen = rec_sideband__gen(sb, r->ppid);
	int err;

	sb->st.fork++;
	if (r->pid == r->ppid || r->pid != r->tid || r->pid >= sb->pid_max)
		return 0;	/* a new thread */
	sb->gens[r->pid] = gen; /* the child runs its parent's image */
	sb->ppids[r->pid] = r->ppid;
	rec.proc =
		(struct saf_proc){.pid = r->pid, .gen = gen, .ppid = r->ppid, .time_ns = r->time};
	err = rec_sink__emit(&sb->sink, &rec);
	if (err)
		return err;
	err = rec_maptab__fork(sb->maptab, r->ppid, r->pid, gen, r->time, &sb->sink);
	return err < 0 ? err : 0;
}

static int on_task_exit(struct rec_sideband *sb, const struct sb_task *r)
{
	struct saf_record rec = {.kind = SAF_REC_EXIT};

	sb->st.exit++;
	if (r->pid != r->tid)
		return 0; /* a thread; sa_on_exit keys on the leader too */
	if (sb->jitmap)
		rec_jitmap__exit(sb->jitmap, r->pid, &sb->sink);
	rec_maptab__exit(sb->maptab, r->pid);
	if (r->pid < sb->pid_max)
		sb->gens[r->pid] = sb->ppids[r->pid] = 0;
	rec.exit = (struct saf_exit){.pid = r->pid, .time_ns = r->time};
	return rec_sink__emit(&sb->sink, &rec);
}

static int handle(struct rec_sideband *sb, const struct qent *e)
{
	const struct perf_event_header *h = (const void *)(sb->arena + e->off);
	const struct sb_lost *lost = (const void *)h;

	sb->st.records++;
	/*
	 * SA_RECORD_TEST_SIDEBAND_DELAY_US=N (tests only): each record first
	 * waits N us, as opening the binaries of many new processes does on
	 * a loaded host (5211-sideband-flood.t).
	 */
	if (sb->test_delay_us)
		usleep(sb->test_delay_us);
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		if (h->size < sizeof(struct sb_mmap2) + TRAILER)
			return 0;
		return on_mmap2(sb, (const void *)h, e->time);
	case PERF_RECORD_COMM:
		if (h->size < sizeof(struct sb_comm) + TRAILER)
			return 0;
		return on_comm(sb, (const void *)h, e->time);
	case PERF_RECORD_FORK:
		return h->size < sizeof(struct sb_task) ? 0 : on_fork(sb, (const void *)h);
	case PERF_RECORD_EXIT:
		return h->size < sizeof(struct sb_task) ? 0 : on_task_exit(sb, (const void *)h);
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(*lost)) {
			sb->st.lost += lost->lost;
			sb->st.lost_events++;
		}
		return 0;
	default:
		sb->st.other++;
		return 0;
	}
}

/*
 * Keep the records not handled yet. They are in time order, not arena
 * order, so they are copied to a fresh arena (moving them in place could
 * overwrite one not moved yet).
 */
static int compact(struct rec_sideband *sb, size_t done)
{
	uint8_t *fresh = NULL;
	size_t i, at = 0;

	if (done < sb->nq) {
		fresh = malloc(sb->arena_cap);
		if (!fresh)
			return -ENOMEM;
	}
	for (i = done; i < sb->nq; i++) {
		struct qent *e = &sb->q[i];

		memcpy(fresh + at, sb->arena + e->off, e->len);
		e->off = at;
		at += e->len;
		sb->q[i - done] = *e;
	}
	if (fresh) {
		free(sb->arena);
		sb->arena = fresh;
	}
	sb->nq -= done;
	sb->arena_len = at;
	return 0;
}

int rec_sideband__poll(struct rec_sideband *sb, bool final)
{
	uint64_t now = sac_now_ns(CLOCK_MONOTONIC);
	uint64_t limit = final ? UINT64_MAX : now - REORDER_NS;
	uint64_t until = now + (final ? FINAL_BUDGET_NS : POLL_BUDGET_NS);
	size_t i = 0, handled;
	int r, err = 0;

	if (final && end_by && end_by < until)
		until = end_by;
	for (r = 0; r < sb->nrings && !err; r++)
		err = drain_ring(sb, &sb->rings[r]);
	if (err)
		return err;
	/* Sorting moves entries, not bytes: offsets stay valid. */
	if (sb->nq) /* sb->q is NULL until the first record */
		qsort(sb->q, sb->nq, sizeof(*sb->q), cmp_qent);
	for (i = 0; i < sb->nq && sb->q[i].time <= limit; i++) {
		if (sac_now_ns(CLOCK_MONOTONIC) >= until)
			break;
		err = handle(sb, &sb->q[i]);
		if (err) {
			i++; /* a record the sink refused is not retried */
			break;
		}
	}
	handled = i;
	if (final && !err) { /* the end: what is left is dropped, counted */
		sb->st.unhandled += sb->nq - i;
		i = sb->nq;
	}
	if (compact(sb, i) && !err)
		err = -ENOMEM;
	return err ? err : (int)handled;
}

void rec_sideband_end_by(uint64_t until_ns)
{
	end_by = until_ns;
}

void rec_sideband__free(struct rec_sideband *sb)
{
	size_t psz = sysconf(_SC_PAGESIZE);
	int i;

	if (!sb)
		return;
	for (i = 0; i < sb->nrings; i++) {
		if (sb->rings[i].base)
			munmap(sb->rings[i].base, sb->rings[i].data_size + psz);
		if (sb->rings[i].fd >= 0)
			close(sb->rings[i].fd);
	}
	SAC_FREE_ALL(sb->rings, sb->gens, sb->ppids, sb->arena, sb->q, sb);
}
