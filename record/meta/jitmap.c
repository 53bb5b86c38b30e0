// SPDX-License-Identifier: MIT
/*
 * jitmap.c - incremental copies of /tmp/perf-PID.map. Each tracked pid keeps
 * the fd of its map file once it exists and the offset read so far; only
 * complete lines are consumed, so a line being written is read next time.
 * The file is the target user's: it is opened through rec_safe_open() and
 * read within a budget of bytes and time per drain (docs/security.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "clock.h"
#include "grow.h"
#include "jitmap.h"
#include "safeopen.h"

/* A perf map is a few MiB after hours of node; past this it is not read. */
#define JIT_MAX_FILE (256ull << 20)
/*
 * What one process's map may cost over the whole run, rotations included
 * (each new file reads every map again from its start): 1 GiB, about 200
 * rotations of a 5 MiB map. Past it the map is no longer read.
 */
#define JIT_RUN_BYTES (1ull << 30)
/* What one drain may spend on all map files together. */
#define JIT_POLL_BYTES (8u << 20)
#define JIT_POLL_NS    (50 * 1000000ull)

struct jproc {
	uint32_t pid;
	int fd;	      /* -1 until the map file exists */
	uint64_t off; /* bytes consumed */
	int gone;     /* the process had exited when the file was looked for */
	int refused;  /* the file was refused (and said so): never read */
	int nuids;    /* uids[]: real and effective uid; -1 unknown */
	uid_t uids[2];
	uint64_t dev, ino; /* the open file's */
	uint64_t run;	   /* bytes read over the run, never reset */
};

struct rec_jitmap {
	char proc[256];
	struct jproc *ps; /* sorted by pid */
	size_t n, cap;
	uint64_t bytes;
	uint64_t poll_end_ns; /* the current drain's deadline */
	uint32_t poll_bytes;  /* bytes left in the current drain's budget */
	char buf[65536];
};

struct rec_jitmap *rec_jitmap__new(const char *proc)
{
	struct rec_jitmap *jm = calloc(1, sizeof(*jm));

	if (!jm)
		return NULL;
	snprintf(jm->proc, sizeof(jm->proc), "%s", proc ? proc : "/proc");
	return jm;
}

static size_t lower_bound(const struct rec_jitmap *jm, uint32_t pid)
{
	size_t lo = 0, hi = jm->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (jm->ps[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int rec_jitmap__note(struct rec_jitmap *jm, uint32_t pid)
{
	size_t i = lower_bound(jm, pid);

	if (i < jm->n && jm->ps[i].pid == pid)
		return 0;
	if (SAC_GROW(jm->ps, jm->cap, jm->n + 1, 64))
		return -ENOMEM;
	memmove(&jm->ps[i + 1], &jm->ps[i], (jm->n - i) * sizeof(*jm->ps));
	jm->ps[i] = (struct jproc){.pid = pid, .fd = -1, .nuids = -1};
	jm->n++;
	return 0;
}

/* The pid in the process's own namespace (the last field of NSpid), and the
 * real and effective uid the map file may be owned by. */
static uint32_t read_status(const struct rec_jitmap *jm, struct jproc *jp)
{
	char path[300], line[256], *p;
	uint32_t ns = jp->pid;
	unsigned int r, e;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/status", jm->proc, jp->pid);
	f = fopen(path, "re");
	if (!f)
		return jp->pid;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Uid:", 4) && sscanf(line + 4, "%u %u", &r, &e) == 2) {
			jp->uids[0] = r;
			jp->uids[1] = e;
			jp->nuids = 2;
		}
		if (strncmp(line, "NSpid:", 6))
			continue;
		p = strrchr(line, '\t');
		if (p)
			ns = (uint32_t)strtoul(p + 1, NULL, 10);
		break;
	}
	fclose(f);
	return ns ? ns : jp->pid;
}

/* A refusal is said once per file, on stderr, from here rather than from
 * main(): it names the pid and the reason, which only this module knows, and
 * the operator must learn why a process's JIT frames have no names. */
static void refuse(struct jproc *jp, const char *path, int err, const char *why)
{
	jp->refused = 1;
	fprintf(stderr, "sa-record: not reading %s of pid %u: %s\n", path, jp->pid,
		why[0] ? why : strerror(-err));
}

static bool missing(int err)
{
	/* -EAGAIN: a local disk slower than the open's deadline; tried again */
	return err == -ENOENT || err == -ENOTDIR || err == -ESRCH || err == -EACCES ||
	       err == -EAGAIN;
}

/*
 * A perf map is one process's: the same inode already read for another
 * tracked pid (a hard link, or a bind mount) is refused, or 20 processes
 * linking one 200 MiB file made the recording grow 3.7 MB/s.
 */
static bool shared(const struct rec_jitmap *jm, struct jproc *jp, int fd, char *why, size_t sz)
{
	struct stat st;
	size_t i;

	if (rec_safe_fstat(fd, &st))
		return false;
	jp->dev = st.st_dev;
	jp->ino = st.st_ino;
	for (i = 0; i < jm->n; i++) {
		const struct jproc *o = &jm->ps[i];

		if (o != jp && o->fd >= 0 && o->dev == jp->dev && o->ino == jp->ino) {
			snprintf(why, sz, "the same file as pid %u's perf map (a hard link)",
				 o->pid);
			return true;
		}
	}
	return false;
}

static void try_open(const struct rec_jitmap *jm, struct jproc *jp)
{
	struct rec_safeopen_opts o = {.sz = sizeof(o), .max_size = JIT_MAX_FILE};
	char path[400], buf[64], *name = buf + 1, why[160];
	int root, fd;

	snprintf(buf, sizeof(buf), "/tmp/perf-%u.map", read_status(jm, jp));
	o.nowners = jp->nuids;
	memcpy(o.owners, jp->uids, sizeof(o.owners));
	snprintf(path, sizeof(path), "%s/%u/root", jm->proc, jp->pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root >= 0) {
		o.dirfd = root;
		o.in_root = true;
		fd = rec_safe_open(name, &o, why, sizeof(why));
		close(root);
		if (fd >= 0 || !missing(fd))
			goto out;
		snprintf(path, sizeof(path), "%s/%u", jm->proc, jp->pid);
		if (!access(path, F_OK))
			return;
	}
	/* Gone before its map was opened: the file outlives the process, and
	 * in our own mount namespace it is found under the same pid. */
	jp->gone = 1;
	snprintf(buf, sizeof(buf), "/tmp/perf-%u.map", jp->pid);
	name = buf;
	o = (struct rec_safeopen_opts){.sz = sizeof(o), .max_size = JIT_MAX_FILE};
	o.nowners = jp->nuids;
	memcpy(o.owners, jp->uids, sizeof(o.owners));
	fd = rec_safe_open(name, &o, why, sizeof(why));
out:
	if (fd >= 0 && shared(jm, jp, fd, why, sizeof(why))) {
		close(fd);
		fd = -EPERM;
	}
	if (fd >= 0)
		jp->fd = fd;
	else if (!missing(fd))
		refuse(jp, buf, fd, why);
}

/* "START SIZE NAME\n", START and SIZE in hex, optionally with 0x. */
static int emit_line(uint32_t pid, char *line, const struct rec_sink *sink)
{
	struct saf_record rec = {.kind = SAF_REC_JITSYM};
	char *end, *name;
	uint64_t start, size;

	start = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return 0;
	size = strtoull(end + 1, &name, 16);
	if (name == end + 1 || *name != ' ' || !name[1])
		return 0;
	name++;
	rec.jitsym = (struct saf_jitsym){
		.pid = pid, .start = start, .size = size, .name = rec_str(name)};
	if (rec.jitsym.name.len > SAF_MAX_STRING)
		rec.jitsym.name.len = SAF_MAX_STRING;
	return rec_sink__emit(sink, &rec) ?: 1;
}

/* Each drain (@force), and an exit seen JIT_POLL_NS after the last budget
 * ran out, gets JIT_POLL_BYTES and JIT_POLL_NS for all map files together,
 * however many there are and however they grow. */
static void refill(struct rec_jitmap *jm, bool force)
{
	uint64_t t = sac_now_ns(CLOCK_MONOTONIC);

	if (!force && t < jm->poll_end_ns + JIT_POLL_NS)
		return;
	jm->poll_end_ns = t + JIT_POLL_NS;
	jm->poll_bytes = JIT_POLL_BYTES;
}

static bool budget_left(struct rec_jitmap *jm)
{
	return jm->poll_bytes && sac_now_ns(CLOCK_MONOTONIC) < jm->poll_end_ns;
}

/* Emit the complete lines of jm->buf[0, n), read at jp->off; *more is
 * cleared when the rest is an incomplete line to read next time. */
static int read_lines(struct rec_jitmap *jm, struct jproc *jp, size_t n,
		      const struct rec_sink *sink, bool *more)
{
	char *line = jm->buf, *nl;
	int total = 0, ret;

	jm->buf[n] = '\0';
	while ((nl = memchr(line, '\n', jm->buf + n - line))) {
		*nl = '\0';
		ret = emit_line(jp->pid, line, sink);
		if (ret < 0)
			return ret;
		total += ret;
		jp->off += nl + 1 - line;
		jm->bytes += nl + 1 - line;
		line = nl + 1;
	}
	if (line == jm->buf) {
		if (n < sizeof(jm->buf) - 1)
			*more = false; /* an incomplete last line: next time */
		else
			jp->off += n; /* an absurd line: skip it */
	}
	return total;
}

/* Read complete lines from jp->off on, within the budget; a longer line
 * than buf is skipped. */
static int read_new(struct rec_jitmap *jm, struct jproc *jp, const struct rec_sink *sink)
{
	bool more = true;
	int total = 0, ret;
	size_t want;
	ssize_t n;

	while (more && budget_left(jm)) {
		if (jp->off >= JIT_MAX_FILE) {
			if (!jp->refused)
				refuse(jp, "its perf map", 0, "grew past the cap of 256 MiB");
			break;
		}
		if (jp->run >= JIT_RUN_BYTES) {
			if (!jp->refused)
				refuse(jp, "its perf map", 0,
				       "read 1 GiB of it in this run, the budget");
			break;
		}
		want = sizeof(jm->buf) - 1;
		if (want > jm->poll_bytes)
			want = jm->poll_bytes;
		n = pread(jp->fd, jm->buf, want, (off_t)jp->off);
		if (n <= 0)
			break;
		jm->poll_bytes -= (uint32_t)n;
		jp->run += (uint64_t)n;
		ret = read_lines(jm, jp, (size_t)n, sink, &more);
		if (ret < 0)
			return ret;
		total += ret;
	}
	return total;
}

int rec_jitmap__poll(struct rec_jitmap *jm, const struct rec_sink *sink)
{
	int total = 0, ret;
	size_t i;

	refill(jm, true);
	for (i = 0; i < jm->n; i++) {
		struct jproc *jp = &jm->ps[i];

		if (jp->fd < 0 && !jp->refused)
			try_open(jm, jp);
		if (jp->fd < 0 && jp->gone) {
			memmove(jp, jp + 1, (jm->n - i - 1) * sizeof(*jp));
			jm->n--;
			i--;
			continue;
		}
		if (jp->fd < 0)
			continue;
		ret = read_new(jm, jp, sink);
		if (ret < 0)
			return ret;
		total += ret;
	}
	return total;
}

int rec_jitmap__exit(struct rec_jitmap *jm, uint32_t pid, const struct rec_sink *sink)
{
	size_t i = lower_bound(jm, pid);
	struct jproc *jp;
	int ret = 0;

	if (i >= jm->n || jm->ps[i].pid != pid)
		return 0;
	jp = &jm->ps[i];
	refill(jm, false);
	if (jp->fd < 0 && !jp->refused)
		try_open(jm, jp); /* the process is gone: works only if it was read before */
	if (jp->fd >= 0) {
		ret = read_new(jm, jp, sink);
		close(jp->fd);
	}
	memmove(&jm->ps[i], &jm->ps[i + 1], (jm->n - i - 1) * sizeof(*jm->ps));
	jm->n--;
	return ret;
}

void rec_jitmap__new_file(struct rec_jitmap *jm)
{
	size_t i;

	for (i = 0; i < jm->n; i++)
		jm->ps[i].off = 0;
}

uint64_t rec_jitmap__bytes(const struct rec_jitmap *jm)
{
	return jm->bytes;
}

void rec_jitmap__free(struct rec_jitmap *jm)
{
	size_t i;

	if (!jm)
		return;
	for (i = 0; i < jm->n; i++)
		if (jm->ps[i].fd >= 0)
			close(jm->ps[i].fd);
	free(jm->ps);
	free(jm);
}
