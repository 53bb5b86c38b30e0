// SPDX-License-Identifier: MIT
/*
 * procmaps.c - process metadata, first cut: for each (tgid, exec gen) seen,
 * a PROC record and MAP records for its executable mappings from
 * /proc/PID/maps with build ids; a COMM record for each new thread name.
 * Issue 5's perf side-band (MMAP2/COMM/FORK/EXIT) will feed the same
 * records through rec_procs__note()/emit_map() as they happen.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include "buildid.h"
#include "clock.h"
#include "hash.h"
#include "htab.h"
#include "procmaps.h"
#include "record.h"

struct proc_key {
	__u32 tgid, gen;
};

struct rec_procs {
	struct saf_writer *w;
	struct rec_htab *seen;	/* proc_key -> u8 */
	struct rec_htab *comms; /* tid -> hash of its last comm */
	struct rec_buildids *bids;
	rec_cur_gen_fn cur_gen;
	void *ctx;
	char *line;
	size_t line_cap;
};

/**
 * rec_procs__new() - process tracking writing to @w (borrowed). @cur_gen
 * (with @ctx) gives a tgid's current exec generation, so that /proc is
 * read only for the image it describes.
 * @return state released with rec_procs__free(), or NULL with errno.
 */
struct rec_procs *rec_procs__new(struct saf_writer *w, rec_cur_gen_fn cur_gen, void *ctx)
{
	struct rec_procs *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->w = w;
	p->cur_gen = cur_gen;
	p->ctx = ctx;
	p->seen = rec_htab__new(sizeof(struct proc_key), 1);
	p->comms = rec_htab__new(sizeof(__u32), sizeof(__u64));
	p->bids = rec_buildids__new();
	if (!p->seen || !p->comms || !p->bids) {
		rec_procs__free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

static void read_small(const char *path, char *buf, size_t sz)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (!f)
		return;
	if (!fgets(buf, sz, f))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static __u32 read_ppid(__u32 tgid)
{
	char path[64], buf[512], *p;
	unsigned int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%u/stat", tgid);
	read_small(path, buf, sizeof(buf));
	p = strrchr(buf, ')'); /* comm may hold spaces and parens */
	if (p && sscanf(p + 1, " %*c %u", &ppid) != 1)
		ppid = 0;
	return ppid;
}

static int emit_map(struct rec_procs *p, __u32 tgid, __u32 gen, const char *line)
{
	struct saf_record rec = {.kind = SAF_REC_MAP};
	struct saf_map *m = &rec.map;
	unsigned long start, end, pgoff, ino;
	unsigned int maj, min;
	char perms[8], mf[64], alt[4200];
	const uint8_t *bid = NULL;
	const char *path;
	int pos = 0, len;

	if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &start, &end, perms, &pgoff, &maj, &min,
		   &ino, &pos) < 7 ||
	    !strchr(perms, 'x'))
		return 0;
	path = line + pos;
	*m = (struct saf_map){.pid = tgid,
			      .gen = gen,
			      .start = start,
			      .end = end,
			      .pgoff = pgoff,
			      .flags = SAF_MAP_EXEC,
			      .dev = makedev(maj, min),
			      .inode = ino,
			      .time_ns = sac_now_ns(CLOCK_MONOTONIC)};
	len = strlen(path);
	if (len > 10 && !strcmp(path + len - 10, " (deleted)")) {
		m->flags |= SAF_MAP_DELETED;
		len -= 10;
	}
	m->path.str = path;
	m->path.len = len;
	if (!ino || path[0] != '/') {
		m->flags |= SAF_MAP_ANON;
	} else {
		snprintf(mf, sizeof(mf), "/proc/%u/map_files/%lx-%lx", tgid, start, end);
		snprintf(alt, sizeof(alt), "/proc/%u/root%.*s", tgid, len, path);
		len = rec_buildids__get(p->bids, mf, alt, m->dev, ino, &bid);
		if (len > 0) {
			m->build_id.data = bid;
			m->build_id.len = len;
		}
	}
	return saf_writer__add(p->w, &rec);
}

static int emit_maps(struct rec_procs *p, __u32 tgid, __u32 gen)
{
	char path[64];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%u/maps", tgid);
	f = fopen(path, "re");
	if (!f)
		return 0; /* gone, or refused (/proc/1/maps even for root): no maps */
	while (!err && getline(&p->line, &p->line_cap, f) > 0) {
		p->line[strcspn(p->line, "\n")] = 0;
		err = emit_map(p, tgid, gen, p->line);
	}
	fclose(f);
	return err;
}

static int capture(struct rec_procs *p, __u32 tgid, __u32 gen, const char *comm)
{
	struct saf_record rec = {.kind = SAF_REC_PROC};
	char path[64], pcomm[64], exe[4096];
	ssize_t n;
	int err;

	snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
	read_small(path, pcomm, sizeof(pcomm));
	snprintf(path, sizeof(path), "/proc/%u/exe", tgid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	rec.proc = (struct saf_proc){.pid = tgid,
				     .gen = gen,
				     .ppid = read_ppid(tgid),
				     .time_ns = sac_now_ns(CLOCK_MONOTONIC)};
	rec.proc.comm = saf_str__from(pcomm[0] ? pcomm : comm);
	rec.proc.exe = saf_str__from(exe);
	/* /proc shows the current image only: a sample of an older gen gets none */
	if (p->cur_gen && p->cur_gen(p->ctx, tgid) != gen) {
		rec.proc.exe = saf_str__from("");
		return saf_writer__add(p->w, &rec);
	}
	err = saf_writer__add(p->w, &rec);
	return err ? err : emit_maps(p, tgid, gen);
}

/**
 * rec_procs__capture() - write PROC and MAP records for @tgid at exec
 * generation @gen now, unless (tgid, gen) was written before.
 * @return 0 or a negative errno from the writer.
 */
int rec_procs__capture(struct rec_procs *p, __u32 tgid, __u32 gen)
{
	struct proc_key k = {.tgid = tgid, .gen = gen};
	bool is_new;

	if (!rec_htab__put(p->seen, &k, &is_new))
		return -ENOMEM;
	return is_new ? capture(p, tgid, gen, "") : 0;
}

/**
 * rec_procs__note() - a sample of thread @tid of (@tgid, @gen) named @comm
 * (SA_COMM_LEN bytes, maybe unterminated) was seen: write PROC/MAP records
 * for a new process image and a COMM record for a new thread name.
 * @return 0 or a negative errno from the writer.
 */
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

/**
 * rec_procs__new_file() - the writer moved to a new file (--rotate): forget
 * the images and thread names written, so the next samples write them again.
 */
void rec_procs__new_file(struct rec_procs *p)
{
	rec_htab__clear(p->seen);
	rec_htab__clear(p->comms);
}

/** rec_procs__free() - release the state. Accepts NULL. */
void rec_procs__free(struct rec_procs *p)
{
	if (!p)
		return;
	rec_htab__free(p->seen);
	rec_htab__free(p->comms);
	rec_buildids__free(p->bids);
	free(p->line);
	free(p);
}
