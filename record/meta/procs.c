// SPDX-License-Identifier: MIT
/*
 * procs.c - at a process image's first sample in a file, a PROC record (from
 * /proc for a process that was running before the recording) and the MAP
 * records the output lacks, from the one mapping table (maptab.c); a COMM
 * record for each new thread name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "hash.h"
#include "htab.h"
#include "maptab.h"
#include "procs.h"
#include "record.h"

struct proc_key {
	__u32 tgid, gen;
};

struct rec_procs {
	struct saf_writer *w;
	struct rec_htab *seen;	/* proc_key -> u8 */
	struct rec_htab *comms; /* tid -> hash of its last comm */
	struct rec_maptab *mt;	/* NULL: no MAP records */
	rec_cur_gen_fn cur_gen;
	void *ctx;
	unsigned long test_delay_us; /* see test_delay() */
};

struct rec_procs *rec_procs__new(struct saf_writer *w, rec_cur_gen_fn cur_gen, void *ctx)
{
	struct rec_procs *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->w = w;
	p->cur_gen = cur_gen;
	p->ctx = ctx;
	if (getenv("SA_RECORD_TEST_META_DELAY_US"))
		p->test_delay_us = strtoul(getenv("SA_RECORD_TEST_META_DELAY_US"), NULL, 10);
	p->seen = rec_htab__new(sizeof(struct proc_key), 1);
	p->comms = rec_htab__new(sizeof(__u32), sizeof(__u64));
	if (!p->seen || !p->comms) {
		rec_procs__free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void rec_procs__set_maptab(struct rec_procs *p, struct rec_maptab *mt)
{
	p->mt = mt;
}

/*
 * comm and ppid from one read of /proc/PID/stat ("pid (comm) S ppid ...",
 * comm may hold spaces and parens: it ends at the last ')'); a process
 * gone gives "" and 0. One open per new image instead of two.
 */
static __u32 read_stat(__u32 tgid, char *comm, size_t sz)
{
	char path[64], buf[512], *l, *r;
	unsigned int ppid = 0;
	ssize_t n;
	int fd;

	comm[0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/stat", tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	l = strchr(buf, '(');
	r = strrchr(buf, ')');
	if (!l || !r || r < l)
		return 0;
	snprintf(comm, sz, "%.*s", (int)(r - l - 1), l + 1);
	if (sscanf(r + 1, " %*c %u", &ppid) != 1)
		ppid = 0;
	return ppid;
}

/*
 * SA_RECORD_TEST_META_DELAY_US=N (tests only): each process image's first
 * capture first waits N us, as reading its /proc files and binaries does
 * on a loaded host (5210-busy-first-interval.t; selfcontained.c waits as
 * long before reading kallsyms).
 */
static void test_delay(const struct rec_procs *p)
{
	struct timespec ts = {.tv_sec = p->test_delay_us / 1000000,
			      .tv_nsec = (long)(p->test_delay_us % 1000000) * 1000};

	if (p->test_delay_us)
		nanosleep(&ts, NULL);
}

static int capture(struct rec_procs *p, __u32 tgid, __u32 gen, const char *comm)
{
	struct saf_record rec = {.kind = SAF_REC_PROC};
	struct rec_sink sink = {rec_sink__writer_emit, p->w};
	char path[64], pcomm[64], exe[4096];
	bool current = !p->cur_gen || p->cur_gen(p->ctx, tgid) == gen;
	uint64_t now = sac_now_ns(CLOCK_MONOTONIC);
	ssize_t n = 0;
	int err;

	test_delay(p);
	rec.proc = (struct saf_proc){.pid = tgid, .gen = gen, .time_ns = now};
	rec.proc.ppid = read_stat(tgid, pcomm, sizeof(pcomm));
	if (current) { /* /proc shows the current image only */
		snprintf(path, sizeof(path), "/proc/%u/exe", tgid);
		n = readlink(path, exe, sizeof(exe) - 1);
	}
	exe[n > 0 ? n : 0] = 0;
	rec.proc.comm = saf_str__from(pcomm[0] ? pcomm : comm);
	rec.proc.exe = saf_str__from(exe);
	err = saf_writer__add(p->w, &rec);
	if (err || !p->mt)
		return err;
	err = rec_maptab__emit_once(p->mt, tgid, gen, current, now, &sink);
	return err < 0 ? err : 0;
}

int rec_procs__capture(struct rec_procs *p, __u32 tgid, __u32 gen)
{
	struct proc_key k = {.tgid = tgid, .gen = gen};
	bool is_new;

	if (!rec_htab__put(p->seen, &k, &is_new))
		return -ENOMEM;
	return is_new ? capture(p, tgid, gen, "") : 0;
}

int rec_procs__note(struct rec_procs *p, __u32 tgid, __u32 gen, __u32 tid, const char *comm)
{
	struct proc_key k = {.tgid = tgid, .gen = gen};
	struct saf_record rec = {.kind = SAF_REC_COMM};
	char name[SA_COMM_LEN + 1];
	__u64 h, *last;
	bool is_new;
	int err;

	if (!tgid)
		return 0; /* idle */
	memcpy(name, comm, SA_COMM_LEN);
	name[SA_COMM_LEN] = 0;
	if (!rec_htab__put(p->seen, &k, &is_new))
		return -ENOMEM;
	if (is_new && (err = capture(p, tgid, gen, name)))
		return err;
	h = sac_hash_bytes(name, strlen(name), gen) | 1;
	last = rec_htab__put(p->comms, &tid, NULL);
	if (!last)
		return -ENOMEM;
	if (*last == h)
		return 0;
	*last = h;
	rec.comm =
		(struct saf_comm){.pid = tgid, .tid = tid, .time_ns = sac_now_ns(CLOCK_MONOTONIC)};
	rec.comm.comm = saf_str__from(name);
	return saf_writer__add(p->w, &rec);
}

void rec_procs__new_file(struct rec_procs *p)
{
	rec_htab__clear(p->seen);
	rec_htab__clear(p->comms);
}

void rec_procs__free(struct rec_procs *p)
{
	if (!p)
		return;
	rec_htab__free(p->seen);
	rec_htab__free(p->comms);
	free(p);
}
