// SPDX-License-Identifier: MIT
/*
 * test_jitmap.c - perf map files read inside the process's namespace (a
 * fake /proc with NSpid and root/), incrementally, an incomplete last line
 * left for the next poll, and the final read at exit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "jitmap.h"
#include "rec_test_sink.h"

static char dir[64];
static char proc[128], mapf[256];

static void append(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* dir/proc/4242/{status,root -> dir/ct}, dir/ct/tmp/perf-7.map */
static int setup(void **state)
{
	char p[256];

	(void)state;
	strcpy(dir, "/tmp/test_jitmap.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	mkdir(proc, 0755);
	snprintf(p, sizeof(p), "%s/4242", proc);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/4242/status", proc);
	append(p, "Name:\tnode\nNSpid:\t4242\t7\n");
	snprintf(p, sizeof(p), "%s/ct", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/ct/tmp", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/4242/root", proc);
	assert_int_equal(symlink("../../ct", p), 0);
	snprintf(mapf, sizeof(mapf), "%s/ct/tmp/perf-7.map", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

static void test_incremental(void **state)
{
	struct test_sink ts = { 0 };
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_jitmap *jm = rec_jitmap__new(proc);

	(void)state;
	assert_int_equal(rec_jitmap__note(jm, 4242), 0);
	assert_int_equal(rec_jitmap__note(jm, 4242), 0);
	/* No file yet: nothing, no error. */
	assert_int_equal(rec_jitmap__poll(jm, &sink), 0);
	append(mapf, "7f0000001000 40 LazyCompile:*hot /app/x.js:1\n7f00000020");
	assert_int_equal(rec_jitmap__poll(jm, &sink), 1);
	assert_int_equal(ts.n, 1);
	assert_int_equal(ts.recs[0].rec.jitsym.pid, 4242);
	assert_true(ts.recs[0].rec.jitsym.start == 0x7f0000001000);
	assert_true(ts.recs[0].rec.jitsym.size == 0x40);
	assert_string_equal(ts.recs[0].s1, "LazyCompile:*hot /app/x.js:1");
	/* The incomplete line is completed, plus a malformed one. */
	append(mapf, "00 10 Builtin:Add\nnot a line\n");
	assert_int_equal(rec_jitmap__poll(jm, &sink), 1);
	assert_true(ts.recs[1].rec.jitsym.start == 0x7f0000002000);
	assert_string_equal(ts.recs[1].s1, "Builtin:Add");
	assert_int_equal(rec_jitmap__poll(jm, &sink), 0);
	/* At exit, what was added since is copied, then the pid is forgotten. */
	append(mapf, "0x7f0000003000 0x8 Stub:last\n");
	assert_int_equal(rec_jitmap__exit(jm, 4242, &sink), 1);
	assert_string_equal(ts.recs[2].s1, "Stub:last");
	append(mapf, "7f0000004000 8 after_exit\n");
	assert_int_equal(rec_jitmap__poll(jm, &sink), 0);
	assert_int_equal(rec_jitmap__exit(jm, 4242, &sink), 0);
	assert_true(rec_jitmap__bytes(jm) > 60);
	test_sink_reset(&ts);
	rec_jitmap__free(jm);
}

static void test_gone_process_is_dropped(void **state)
{
	struct test_sink ts = { 0 };
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_jitmap *jm = rec_jitmap__new(proc);

	(void)state;
	/* pid 999999 has no /proc entry and no /tmp/perf-999999.map. */
	assert_int_equal(rec_jitmap__note(jm, 999999), 0);
	assert_int_equal(rec_jitmap__note(jm, 4242), 0);
	assert_int_equal(rec_jitmap__poll(jm, &sink), 4);
	assert_int_equal(rec_jitmap__exit(jm, 999999, &sink), 0);
	test_sink_reset(&ts);
	rec_jitmap__free(jm);
}

static void test_sink_error(void **state)
{
	struct test_sink ts = { .fail_with = -ENOSPC };
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_jitmap *jm = rec_jitmap__new(proc);

	(void)state;
	assert_int_equal(rec_jitmap__note(jm, 4242), 0);
	assert_int_equal(rec_jitmap__poll(jm, &sink), -ENOSPC);
	ts.fail_with = 0;
	/* The refused line is read again. */
	assert_int_equal(rec_jitmap__poll(jm, &sink), 4);
	test_sink_reset(&ts);
	rec_jitmap__free(jm);
}

/*
 * Two pids whose perf maps are one inode (here one container's file seen
 * by both; a hard link is the same): only the first is read, so 20 such
 * processes cost one file, not 20 (issue 29).
 */
static void test_shared_file_read_once(void **state)
{
	struct test_sink ts = { 0 };
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_jitmap *jm = rec_jitmap__new(proc);
	char p[256];
	int n;

	(void)state;
	snprintf(p, sizeof(p), "%s/4243", proc);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/4243/status", proc);
	append(p, "Name:\tnode\nNSpid:\t4243\t7\n");
	snprintf(p, sizeof(p), "%s/4243/root", proc);
	assert_int_equal(symlink("../../ct", p), 0);
	assert_int_equal(rec_jitmap__note(jm, 4242), 0);
	assert_int_equal(rec_jitmap__note(jm, 4243), 0);
	n = rec_jitmap__poll(jm, &sink);
	/* the file holds what the tests before wrote: read for one pid only */
	assert_true(n > 0);
	for (size_t i = 0; i < ts.n; i++)
		assert_int_equal(ts.recs[i].rec.jitsym.pid, 4242);
	append(mapf, "7f0000005000 8 later\n");
	assert_int_equal(rec_jitmap__poll(jm, &sink), 1);
	test_sink_reset(&ts);
	rec_jitmap__free(jm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incremental),
		cmocka_unit_test(test_gone_process_is_dropped),
		cmocka_unit_test(test_sink_error),
		cmocka_unit_test(test_shared_file_read_once),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
