// SPDX-License-Identifier: MIT
/*
 * wl-storm.c - a thread storm, the workload of 5200-storm-deadline.t,
 * tests/bench/thread-storm.sh and tests/bench/hostile-soak.sh (the scripts
 * build it with cc). `wl-storm N SECS [DEPTHS]`: N threads, released at
 * once through a pipe, each spinning in storm_spin() under a chain of
 * storm_step() calls of its own depth (thread i: i % DEPTHS, 1 by default),
 * so that the threads' user stacks differ; "ready N" on stdout once they
 * all exist; SIGALRM ends the process SECS seconds after that.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int gate[2];

__attribute__((noinline)) static void storm_spin(void)
{
	volatile unsigned long x = 0;

	for (;;)
		x++;
}

/* One frame per level, kept by the volatile local (no tail call) */
__attribute__((noinline)) static void storm_step(int depth)
{
	volatile int keep = depth;

	if (depth > 0)
		storm_step(depth - 1);
	else
		storm_spin();
	(void)keep;
}

static void *thread_main(void *arg)
{
	struct pollfd p = {.fd = gate[0], .events = POLLIN};

	poll(&p, 1, -1);
	storm_step((int)(long)arg);
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	_exit(0);
}

int main(int argc, char **argv)
{
	int i, n = argc > 2 ? atoi(argv[1]) : 0, depths = argc > 3 ? atoi(argv[3]) : 1;
	pthread_attr_t at;
	pthread_t t;

	if (n <= 0 || depths <= 0 || pipe(gate))
		return 2;
	signal(SIGALRM, on_alarm);
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 65536);
	for (i = 0; i < n; i++)
		if (pthread_create(&t, &at, thread_main, (void *)(long)(i % depths)))
			return 1;
	printf("ready %d\n", n);
	fflush(stdout);
	alarm(atoi(argv[2]));
	close(gate[1]);
	for (;;)
		pause();
}
