// SPDX-License-Identifier: MIT
/*
 * test_fguard.c - the deadline on reads of others' files: inline until
 * enabled; a job that waits (here on an empty pipe, as on a FUSE server
 * that does not answer) is abandoned at its deadline and its device skipped
 * from then on; a job that only needs CPU is not; the abandoned job is
 * released once it returns.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "fguard.h"

#define DEV_SLOW 0x12345ull

static int pipefd[2] = {-1, -1};
static volatile int released;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int plain(void *arg)
{
	return *(int *)arg;
}

/* Waits for a byte that comes only after its caller gave up. */
static int waits(void *arg)
{
	char c;
	int err = rec_fguard_dev(DEV_SLOW);

	(void)arg;
	if (err)
		return err;
	return read(pipefd[0], &c, 1) == 1 ? 7 : -EIO;
}

static void release(void *arg, int ret)
{
	(void)arg;
	released = ret;
}

/* 300 ms of CPU: runnable all along, never waiting. */
static int spins(void *arg)
{
	double end = now_ms() + 300;

	(void)arg;
	while (now_ms() < end)
		;
	return 5;
}

static void test_inline_until_enabled(void **state)
{
	int v = 42;

	(void)state;
	assert_false(rec_fguard_on());
	assert_int_equal(rec_fguard_run(plain, &v, NULL), 42);
	assert_int_equal(rec_fguard_dev(DEV_SLOW), 0);
	assert_false(rec_fguard_blocked(DEV_SLOW));
}

static void test_deadline_skips_device(void **state)
{
	struct rec_fguard_stats st;
	double t0;
	int v = 3, i;

	(void)state;
	assert_int_equal(pipe(pipefd), 0);
	rec_fguard_enable(100);
	assert_int_equal(rec_fguard_run(plain, &v, NULL), 3); /* on the worker */
	t0 = now_ms();
	assert_int_equal(rec_fguard_run(waits, NULL, release), -ETIMEDOUT);
	assert_true(now_ms() - t0 < 5000);
	rec_fguard_stats(&st);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.blocked, 1);
	assert_int_equal(st.stuck, 1);
	/* the device is skipped at once from now on, by a new worker */
	t0 = now_ms();
	assert_int_equal(rec_fguard_run(waits, NULL, release), -ETIMEDOUT);
	assert_true(rec_fguard_blocked(DEV_SLOW));
	rec_fguard_stats(&st);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.skipped, 2);
	/* the abandoned job ends when its read does, and is released */
	assert_int_equal(write(pipefd[1], "x", 1), 1);
	for (i = 0; i < 500 && !released; i++)
		usleep(10000);
	assert_int_equal(released, 7);
	rec_fguard_stats(&st);
	assert_int_equal(st.stuck, 0);
}

static void test_cpu_bound_job_is_not_abandoned(void **state)
{
	(void)state;
	/* deadline 100 ms, the job needs 300 ms of CPU: extended, not abandoned */
	assert_int_equal(rec_fguard_run(spins, NULL, NULL), 5);
}

SA_TEST_MAIN(test_inline_until_enabled, test_deadline_skips_device,
	     test_cpu_bound_job_is_not_abandoned)
