// SPDX-License-Identifier: MIT
/*
 * Blocking the way users' code blocks: thread sa-blk-main repeats rounds in
 * which its own functions call libc wrappers that block, sa_blk_sleep
 * (usleep), sa_blk_pipe (read of a pipe that sa-blk-helper writes after a
 * sleep) and sa_blk_cond (pthread_cond_wait until sa-blk-helper signals).
 * Each is timed here with CLOCK_MONOTONIC and printed: the oracle of the
 * off-CPU split. Built with and without frame pointers (tests/rules.mk).
 * Usage: off_wrappers SECONDS
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define SLEEP_US 10000
#define PIPE_US	 15000
#define COND_US	 20000

static int req[2], rep[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int signalled;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *helper(void *arg)
{
	char c;

	(void)arg;
	pthread_setname_np(pthread_self(), "sa-blk-helper");
	while (read(req[0], &c, 1) == 1) {
		usleep(c == 'p' ? PIPE_US : COND_US);
		if (c == 'p') {
			if (write(rep[1], &c, 1) != 1)
				exit(1);
			continue;
		}
		pthread_mutex_lock(&mu);
		signalled = 1;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void ask(char c)
{
	if (write(req[1], &c, 1) != 1)
		exit(1);
}

/* Each returns the time it blocked; none ends in a tail call, so each keeps its frame. */
__attribute__((noinline, noipa)) uint64_t sa_blk_sleep(void)
{
	uint64_t t0 = now_ns();

	usleep(SLEEP_US);
	return now_ns() - t0;
}

__attribute__((noinline, noipa)) uint64_t sa_blk_pipe(void)
{
	uint64_t t0 = now_ns();
	char c;

	ask('p');
	if (read(rep[0], &c, 1) != 1)
		exit(1);
	return now_ns() - t0;
}

__attribute__((noinline, noipa)) uint64_t sa_blk_cond(void)
{
	uint64_t t0 = now_ns();

	pthread_mutex_lock(&mu);
	ask('c');
	while (!signalled)
		pthread_cond_wait(&cv, &mu);
	signalled = 0;
	pthread_mutex_unlock(&mu);
	return now_ns() - t0;
}

int main(int argc, char **argv)
{
	uint64_t end, slp = 0, pip = 0, cnd = 0;
	unsigned long rounds = 0;
	pthread_t t;

	if (argc != 2 || pipe(req) || pipe(rep))
		return 2;
	pthread_setname_np(pthread_self(), "sa-blk-main");
	if (pthread_create(&t, NULL, helper, NULL))
		return 1;
	end = now_ns() + (uint64_t)(atof(argv[1]) * 1e9);
	while (now_ns() < end) {
		slp += sa_blk_sleep();
		pip += sa_blk_pipe();
		cnd += sa_blk_cond();
		rounds++;
	}
	printf("rounds %lu sleep_ns %llu pipe_ns %llu cond_ns %llu\n", rounds,
	       (unsigned long long)slp, (unsigned long long)pip, (unsigned long long)cnd);
	return 0;
}
