// SPDX-License-Identifier: MIT
/*
 * jitmap.c - incremental copies of /tmp/perf-PID.map. Each tracked pid keeps
 * the fd of its map file once it exists and the offset read so far; only
 * complete lines are consumed, so a line being written is read next time.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "jitmap.h"

struct jproc {
	uint32_t pid;
	int fd;	      /* -1 until the map file exists */
	uint64_t off; /* bytes consumed */
	int gone;     /* the process had exited when the file was looked for */
};

struct rec_jitmap {
	char proc[256];
	struct jproc *ps; /* sorted by pid */
	size_t n, cap;
	uint64_t bytes;
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
	void *p;

	if (i < jm->n && jm->ps[i].pid == pid)
		return 0;
	if (jm->n == jm->cap) {
		size_t cap = jm->cap ? jm->cap * 2 : 64;

		p = realloc(jm->ps, cap * sizeof(*jm->ps));
		if (!p)
			return -ENOMEM;
		jm->ps = p;
		jm->cap = cap;
	}
	memmove(&jm->ps[i + 1], &jm->ps[i], (jm->n - i) * sizeof(*jm->ps));
	jm->ps[i] = (struct jproc){.pid = pid, .fd = -1};
	jm->n++;
	return 0;
}

/* The pid in the process's own namespace: the last field of NSpid. */
static uint32_t ns_pid(const struct rec_jitmap *jm, uint32_t pid)
{
	char path[300], line[256], *p;
	uint32_t ns = pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/status", jm->proc, pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		p = strrchr(line, '\t');
		if (p)
			ns = (uint32_t)strtoul(p + 1, NULL, 10);
		break;
	}
	fclose(f);
	return ns ? ns : pid;
}

static void try_open(const struct rec_jitmap *jm, struct jproc *jp)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/%u/root/tmp/perf-%u.map", jm->proc, jp->pid,
		 ns_pid(jm, jp->pid));
	jp->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (jp->fd >= 0)
		return;
	snprintf(path, sizeof(path), "%s/%u", jm->proc, jp->pid);
	if (!access(path, F_OK))
		return;
	/* Gone before its map was opened: the file outlives the process, and
	 * in our own mount namespace it is found under the same pid. */
	jp->gone = 1;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", jp->pid);
	jp->fd = open(path, O_RDONLY | O_CLOEXEC);
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

/* Read complete lines from jp->off on; a longer line than buf is skipped. */
static int read_new(struct rec_jitmap *jm, struct jproc *jp, const struct rec_sink *sink)
{
	int total = 0, ret;
	ssize_t n;

	while ((n = pread(jp->fd, jm->buf, sizeof(jm->buf) - 1, jp->off)) > 0) {
		char *line = jm->buf, *nl;

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
			if ((size_t)n < sizeof(jm->buf) - 1)
				break; /* an incomplete last line: next time */
			jp->off += n;  /* an absurd line: skip it */
		}
	}
	return total;
}

int rec_jitmap__poll(struct rec_jitmap *jm, const struct rec_sink *sink)
{
	int total = 0, ret;
	size_t i;

	for (i = 0; i < jm->n; i++) {
		struct jproc *jp = &jm->ps[i];

		if (jp->fd < 0)
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
	if (jp->fd < 0)
		try_open(jm, jp); /* the process is gone: works only if it was read before */
	if (jp->fd >= 0) {
		ret = read_new(jm, jp, sink);
		close(jp->fd);
	}
	memmove(&jm->ps[i], &jm->ps[i + 1], (jm->n - i - 1) * sizeof(*jm->ps));
	jm->n--;
	return ret;
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
