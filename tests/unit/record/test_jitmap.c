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
#include <stdlib.h>
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
	struct rec_jitmap_stats st;

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
	rec_jitmap__stats(jm, &st);
	assert_true(st.bytes > 60);
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

/* dir/proc/PID/{status,root -> dir/ct}, its map dir/ct/tmp/perf-NS.map in @path */
static void add_pid(int pid, int ns, char *path, size_t sz)
{
	char p[256], st[64];

	snprintf(p, sizeof(p), "%s/%d", proc, pid);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/%d/status", proc, pid);
	snprintf(st, sizeof(st), "Name:\tjit\nNSpid:\t%d\t%d\n", pid, ns);
	append(p, st);
	snprintf(p, sizeof(p), "%s/%d/root", proc, pid);
	assert_int_equal(symlink("../../ct", p), 0);
	snprintf(path, sz, "%s/ct/tmp/perf-%d.map", dir, ns);
}

/* fopen(path, "w") and write @text, as a JIT that rewrites its map does. */
static void rewrite(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/*
 * A map truncated and rewritten (shorter, then longer with other lines)
 * is read again from its start; appends are not; a map replaced by a
 * rename is reopened (issue 31).
 */
static void test_rewritten(void **state)
{
	struct test_sink ts = { 0 };
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_jitmap *jm = rec_jitmap__new(proc);
	struct rec_jitmap_stats st;
	char m[256], tmp[300];

	(void)state;
	add_pid(4244, 8, m, sizeof(m));
	assert_int_equal(rec_jitmap__note(jm, 4244), 0);
	rewrite(m, "7f0000001000 10 a_one\n7f0000002000 10 a_two\n");
	assert_int_equal(rec_jitmap__poll(jm, &sink), 2);
	rewrite(m, "7f0000003000 10 b_three\n");
	assert_int_equal(rec_jitmap__poll(jm, &sink), 1);
	assert_string_equal(ts.recs[2].s1, "b_three");
	rewrite(m, "7f0000004000 10 c_four_long\n7f0000005000 10 c_five\n7f0000006000 10 c_six\n");
	assert_int_equal(rec_jitmap__poll(jm, &sink), 3);
	assert_string_equal(ts.recs[3].s1, "c_four_long");
	append(m, "7f0000007000 10 d_seven\n");
	assert_int_equal(rec_jitmap__poll(jm, &sink), 1);
	assert_string_equal(ts.recs[6].s1, "d_seven");
	assert_int_equal(rec_jitmap__poll(jm, &sink), 0);
	snprintf(tmp, sizeof(tmp), "%s.new", m);
	rewrite(tmp, "7f0000008000 10 e_eight\n7f0000009000 10 e_nine\n");
	assert_int_equal(rename(tmp, m), 0);
	assert_int_equal(rec_jitmap__poll(jm, &sink), 2);
	assert_string_equal(ts.recs[8].s1, "e_nine");
	rec_jitmap__stats(jm, &st);
	assert_int_equal(st.rewritten, 2);
	assert_int_equal(st.replaced, 1);
	test_sink_reset(&ts);
	rec_jitmap__free(jm);
}

/*
 * A map replaced by a symbolic link (to a file the process's user could
 * not write) goes through the same checks as the first open: refused, and
 * the old file is no longer read either.
 */
static void test_replaced_by_symlink(void **state)
{
	struct test_sink ts = { 0 };
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_jitmap *jm = rec_jitmap__new(proc);
	char m[256], tmp[300], target[300];

	(void)state;
	add_pid(4246, 9, m, sizeof(m));
	assert_int_equal(rec_jitmap__note(jm, 4246), 0);
	rewrite(m, "7f0000001000 10 f_one\n");
	assert_int_equal(rec_jitmap__poll(jm, &sink), 1);
	snprintf(target, sizeof(target), "%s/secret", dir);
	rewrite(target, "7f0000002000 10 f_secret\n");
	snprintf(tmp, sizeof(tmp), "%s.lnk", m);
	assert_int_equal(symlink(target, tmp), 0);
	assert_int_equal(rename(tmp, m), 0);
	assert_int_equal(rec_jitmap__poll(jm, &sink), 0);
	assert_int_equal(rec_jitmap__poll(jm, &sink), 0);
	assert_int_equal(ts.n, 1);
	test_sink_reset(&ts);
	rec_jitmap__free(jm);
}

/*
 * A file's budget is carried across rotations and across the processes
 * that link it: 20 pids linking one file in turn read it once (issue 29).
 */
static void test_file_budget(void **state)
{
	struct test_sink ts = { 0 };
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_jitmap *jm;
	struct rec_jitmap_stats st;
	char m[256], l[256];
	int pid;

	(void)state;
	setenv("SA_RECORD_TEST_JIT_BUDGETS", "1000000,100,1000000", 1);
	jm = rec_jitmap__new(proc);
	unsetenv("SA_RECORD_TEST_JIT_BUDGETS");
	add_pid(4300, 30, m, sizeof(m));
	/* 5 lines of 30 bytes: 100 bytes hold 3 */
	rewrite(m, "7f0000001000 10 budget_line_1\n7f0000002000 10 budget_line_2\n"
		   "7f0000003000 10 budget_line_3\n7f0000004000 10 budget_line_4\n"
		   "7f0000005000 10 budget_line_5\n");
	assert_int_equal(rec_jitmap__note(jm, 4300), 0);
	assert_int_equal(rec_jitmap__poll(jm, &sink), 3);
	rec_jitmap__new_file(jm);
	assert_int_equal(rec_jitmap__poll(jm, &sink), 0);
	assert_int_equal(rec_jitmap__exit(jm, 4300, &sink), 0);
	for (pid = 4301; pid < 4320; pid++) {
		add_pid(pid, pid - 4270, l, sizeof(l));
		assert_int_equal(link(m, l), 0);
		assert_int_equal(rec_jitmap__note(jm, (uint32_t)pid), 0);
		assert_int_equal(rec_jitmap__poll(jm, &sink), 0);
		assert_int_equal(rec_jitmap__exit(jm, (uint32_t)pid, &sink), 0);
	}
	rec_jitmap__stats(jm, &st);
	assert_int_equal(st.bytes, 90);
	assert_int_equal(st.over_file, 20);
	assert_int_equal(st.over_proc + st.over_user, 0);
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
		cmocka_unit_test(test_rewritten),
		cmocka_unit_test(test_replaced_by_symlink),
		cmocka_unit_test(test_file_budget),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
