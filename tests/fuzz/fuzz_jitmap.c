// SPDX-License-Identifier: MIT
/*
 * fuzz_jitmap.c - libFuzzer harness: the bytes are a /tmp/perf-PID.map that
 * another user wrote, read by record/meta/jitmap.c through a fake /proc (status,
 * root/tmp/) as sa-record reads it: opened by rec_safe_open(), polled twice
 * (the second poll must find nothing new), every JITSYM record checked.
 */
#include <assert.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitmap.h"

static char dir[] = "/tmp/fuzz_jitmap.XXXXXX", proc[160], mapf[224];
static uint64_t nrec;

static void teardown(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "fuzz_jitmap: could not remove %s\n", dir);
}

static int emit(void *ctx, const struct saf_record *r)
{
	(void)ctx;
	assert(r->kind == SAF_REC_JITSYM && r->jitsym.pid == 4242);
	assert(r->jitsym.name.len && r->jitsym.name.len <= SAF_MAX_STRING);
	assert(!memchr(r->jitsym.name.str, '\n', r->jitsym.name.len));
	nrec++;
	return 0;
}

/* tmp/proc/4242/{status, root/tmp/perf-7.map}: pid 7 in its own namespace. */
static void setup(void)
{
	char p[256];
	FILE *f;

	if (proc[0])
		return;
	assert(mkdtemp(dir));
	atexit(teardown);
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(p, sizeof(p), "%s/proc/4242/root/tmp", dir);
	for (char *s = p + strlen(dir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	assert(!mkdir(p, 0755) || access(p, F_OK) == 0);
	snprintf(p, sizeof(p), "%s/4242/status", proc);
	f = fopen(p, "w");
	assert(f);
	fprintf(f, "Name:\tnode\nUid:\t%u\t%u\t%u\t%u\nNSpid:\t4242\t7\n", getuid(), getuid(),
		getuid(), getuid());
	fclose(f);
	snprintf(mapf, sizeof(mapf), "%s/4242/root/tmp/perf-7.map", proc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_sink sink = {emit, NULL};
	struct rec_jitmap *jm;
	struct rec_jitmap_stats st;
	uint64_t before;
	int fd, n;

	setup();
	fd = open(mapf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert(fd >= 0);
	assert(write(fd, data, size) == (ssize_t)size);
	close(fd);
	jm = rec_jitmap__new(proc);
	assert(jm && !rec_jitmap__note(jm, 4242));
	nrec = 0;
	n = rec_jitmap__poll(jm, &sink);
	assert(n >= 0 && (uint64_t)n == nrec);
	rec_jitmap__stats(jm, &st);
	assert(st.bytes <= size);
	before = nrec;
	assert(rec_jitmap__poll(jm, &sink) == 0 && nrec == before);
	rec_jitmap__free(jm);
	return 0;
}
