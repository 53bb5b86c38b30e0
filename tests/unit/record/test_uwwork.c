// SPDX-License-Identifier: MIT
/*
 * test_uwwork.c - the worker that builds the in-kernel unwinder's tables
 * (record/cfi/uwwork.c): a posted file comes back built, jobs come back in
 * order, and stopping with a build stuck (the test delay) returns within
 * its bound instead of waiting for the build.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "clock.h"
#include "uwwork.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

static struct rec_uwjob *job(const char *path, uint64_t seq)
{
	struct rec_uwjob *j = calloc(1, sizeof(*j));

	assert_non_null(j);
	j->fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(j->fd >= 0);
	j->seq = seq;
	return j;
}

/* The next finished job, waiting up to 60 s (a loaded host). */
static struct rec_uwjob *wait_done(struct rec_uwwork *w)
{
	uint64_t end = sac_now_ns(CLOCK_MONOTONIC) + 60000000000ull;
	struct rec_uwjob *j;

	while (!(j = rec_uwwork__done(w)) && sac_now_ns(CLOCK_MONOTONIC) < end)
		usleep(1000);
	return j;
}

static void test_built_in_order(void **state)
{
	struct rec_uwwork *w;
	struct rec_uwjob *j;

	(void)state;
	unsetenv("SA_RECORD_TEST_UW_DELAY_MS");
	w = rec_uwwork__new(10000000000ull);
	assert_non_null(w);
	rec_uwwork__post(w, job(LIBC, 1));
	rec_uwwork__post(w, job("/proc/self/cmdline", 2)); /* not ELF */
	assert_int_equal(rec_uwwork__queued(w), 2);
	j = wait_done(w);
	assert_non_null(j);
	assert_int_equal(j->seq, 1);
	assert_int_equal(j->err, 0);
	assert_true(j->f.nrows > 1000);
	assert_int_equal(j->fd, -1); /* closed once built */
	assert_true(j->cpu_ns > 0);
	rec_uwjob__free(j);
	j = wait_done(w);
	assert_non_null(j);
	assert_int_equal(j->seq, 2);
	assert_int_not_equal(j->err, 0);
	assert_null(j->f.rows);
	rec_uwjob__free(j);
	assert_int_equal(rec_uwwork__queued(w), 0);
	assert_null(rec_uwwork__done(w));
	rec_uwwork__free(w, 1000000000ull);
}

/*
 * A build that does not end (the delay stands for a read a file system
 * does not answer): the stop waits 100 ms for it, not the 30 s; the
 * worker, left alone, owns what it holds.
 */
static void test_stop_does_not_wait(void **state)
{
	struct rec_uwwork *w;
	uint64_t t0;

	(void)state;
	setenv("SA_RECORD_TEST_UW_DELAY_MS", "30000", 1);
	w = rec_uwwork__new(1000000000ull);
	unsetenv("SA_RECORD_TEST_UW_DELAY_MS");
	assert_non_null(w);
	rec_uwwork__post(w, job(LIBC, 1));
	rec_uwwork__post(w, job(LIBC, 2));
	usleep(10000);
	assert_null(rec_uwwork__done(w));
	t0 = sac_now_ns(CLOCK_MONOTONIC);
	rec_uwwork__free(w, 100000000ull);
	/* 100 ms asked; 5 s leaves room for a loaded host, far from 30 s */
	assert_true(sac_now_ns(CLOCK_MONOTONIC) - t0 < 5000000000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_built_in_order),
		cmocka_unit_test(test_stop_does_not_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
