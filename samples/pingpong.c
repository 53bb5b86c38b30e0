// SPDX-License-Identifier: MIT
/*
 * A ping-pong over two pipes with a known amount of user work on each side:
 * thread sa-ping runs sa_ping_a/b/c (50/30/20 of its work, -w us) then hands
 * the turn to sa-pong, which runs sa_pong_a/b (70/30 of -p us, default -w)
 * and hands it back. Each
 * thread measures its own CPU time (CLOCK_THREAD_CPUTIME_ID) and the share
 * of it spent in each function, and prints them: the oracle of test 2020
 * and of tests/accuracy for samplers at the context switch (issue 36).
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sa_sample.h"

/* One round in TIMED is timed function by function; the rest stand for it. */
#define TIMED 16

static double work_us = 20, pong_us = -1, cpu_s = 2, max_s = 60, rate, wait_s;
static unsigned long iters_per_us;
static double clock_ns; /* what one thread CPU clock read adds to a timed stretch */
static int to_pong[2], to_ping[2];
static const char *go_file;

struct side {
	const char *name;
	int nfn;
	const char *fn[3];
	int pct[3];
	void (*call[3])(unsigned long);
	double work_us; /* a round's work, set in main() */
	uint64_t timed_ns, timed_rounds, rounds, cpu_ns;
	long tid;
};

#define WORK_FN(name)                                                                              \
	__attribute__((noipa)) void name(unsigned long iters)                                      \
	{                                                                                          \
		SA_SPIN(iters);                                                                    \
	}
WORK_FN(sa_ping_a)
WORK_FN(sa_ping_b)
WORK_FN(sa_ping_c)
WORK_FN(sa_pong_a)
WORK_FN(sa_pong_b)

static struct side ping = {.name = "sa-ping",
			   .nfn = 3,
			   .fn = {"sa_ping_a", "sa_ping_b", "sa_ping_c"},
			   .pct = {50, 30, 20},
			   .call = {sa_ping_a, sa_ping_b, sa_ping_c}};
static struct side pong = {.name = "sa-pong",
			   .nfn = 2,
			   .fn = {"sa_pong_a", "sa_pong_b"},
			   .pct = {70, 30},
			   .call = {sa_pong_a, sa_pong_b}};

/*
 * One side's work for a round. The calls' split is by construction (the
 * same loop, pct[i] of the iterations each); what a round's work costs in
 * thread CPU time is measured every TIMED-th round with the thread CPU
 * clock (preemption does not count), less the clock's own cost.
 */
static void do_round(struct side *s)
{
	double iters = s->work_us * (double)iters_per_us / 100;
	bool timed = s->rounds % TIMED == 0;
	uint64_t c0 = 0;
	int i;

	if (timed)
		c0 = sa_thread_cpu_ns();
	for (i = 0; i < s->nfn; i++)
		s->call[i]((unsigned long)(iters * s->pct[i]));
	s->rounds++;
	if (!timed)
		return;
	s->timed_ns += sa_thread_cpu_ns() - c0;
	s->timed_rounds++;
}

/* A program's own function around the libc wrappers that block. */
__attribute__((noipa)) int sa_pp_pass(int out, int in, char *c)
{
	if (write(out, c, 1) != 1)
		return -1;
	return read(in, c, 1) == 1 ? 0 : -1;
}

static void *ping_main(void *arg)
{
	struct side *s = arg;
	uint64_t end_wall = sa_mono_ns() + (uint64_t)(max_s * 1e9);
	char c = 1;

	pthread_setname_np(pthread_self(), s->name);
	s->tid = syscall(SYS_gettid);
	for (;;) {
		if (s->rounds % 64 == 0 &&
		    (sa_thread_cpu_ns() >= cpu_s * 1e9 || sa_mono_ns() >= end_wall))
			break;
		do_round(s);
		if (sa_pp_pass(to_pong[1], to_ping[0], &c))
			break;
	}
	c = 0; /* the stop byte */
	if (write(to_pong[1], &c, 1) != 1)
		perror("pingpong: write");
	s->cpu_ns = sa_thread_cpu_ns();
	return NULL;
}

static void *pong_main(void *arg)
{
	struct side *s = arg;
	char c;

	pthread_setname_np(pthread_self(), s->name);
	s->tid = syscall(SYS_gettid);
	if (read(to_pong[0], &c, 1) == 1)
		while (c) {
			do_round(s);
			if (sa_pp_pass(to_ping[1], to_pong[0], &c))
				break;
		}
	s->cpu_ns = sa_thread_cpu_ns();
	return NULL;
}

/* ns of one bare round trip here (no work), the best of a few tries */
static double bare_round_ns(void)
{
	double best = 1e18;
	uint64_t t0;
	pthread_t t;
	int i;

	for (i = 0; i < 3; i++) {
		struct side p = pong;
		char c = 1;
		int k;

		if (pthread_create(&t, NULL, pong_main, &p))
			return -1;
		t0 = sa_mono_ns();
		for (k = 0; k < 2000; k++)
			if (sa_pp_pass(to_pong[1], to_ping[0], &c))
				break;
		c = 0;
		if (write(to_pong[1], &c, 1) != 1)
			return -1;
		if ((sa_mono_ns() - t0) / 2000.0 < best)
			best = (sa_mono_ns() - t0) / 2000.0;
		pthread_join(t, NULL);
	}
	return best;
}

static void report(const struct side *s)
{
	int i;

	printf("pingpong: thread %s tid %ld rounds %llu cpu_ns %llu\n", s->name, s->tid,
	       (unsigned long long)s->rounds, (unsigned long long)s->cpu_ns);
	for (i = 0; i < s->nfn; i++) {
		double round =
			s->timed_rounds ? (double)s->timed_ns / s->timed_rounds - clock_ns : 0;
		double ns = round * s->pct[i] / 100 * s->rounds;

		printf("pingpong: func %s %s cpu_ns %.0f share %.2f of_work %d\n", s->name,
		       s->fn[i], ns, s->cpu_ns ? 100 * ns / s->cpu_ns : 0, s->pct[i]);
	}
}

/* The median of back-to-back thread CPU clock reads' differences. */
static double clock_cost(void)
{
	uint64_t d[101], t, x;
	int i, j;

	for (i = 0; i < 101; i++) {
		t = sa_thread_cpu_ns();
		d[i] = sa_thread_cpu_ns() - t;
		for (j = i; j > 0 && d[j - 1] > d[j]; j--) {
			x = d[j];
			d[j] = d[j - 1];
			d[j - 1] = x;
		}
	}
	return (double)d[50];
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pingpong [-c CPU_S] [-w US [-p PONG_US] | -r ROUNDS_PER_S] [-d MAX_S] "
		"[-W WAIT_S] [-g GO_FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	uint64_t t0, wall;
	double bare;
	int opt;

	while ((opt = getopt(argc, argv, "c:w:p:r:d:W:g:")) != -1) {
		double v =
			opt == '?' || opt == 'g' ? 0 : sa_parse_double(argv[0], "option", optarg);

		if (opt == 'g')
			go_file = optarg;
		else if (opt == 'c')
			cpu_s = v;
		else if (opt == 'w')
			work_us = v;
		else if (opt == 'p')
			pong_us = v;
		else if (opt == 'r')
			rate = v;
		else if (opt == 'd')
			max_s = v;
		else if (opt == 'W')
			wait_s = v;
		else
			usage();
	}
	iters_per_us = sa_calibrate(1e6) / 1000;
	if (!iters_per_us)
		iters_per_us = 1;
	clock_ns = clock_cost();
	if (pipe(to_pong) || pipe(to_ping)) {
		perror("pingpong: pipe");
		return 1;
	}
	bare = bare_round_ns();
	if (rate > 0) {
		/* the work that, with a bare round trip, makes @rate rounds a second */
		work_us = (1e9 / rate - bare) / 2 / 1000;
		if (work_us < 0.5) {
			fprintf(stderr,
				"pingpong: %.0f rounds/s is beyond this host (%.1f us a bare "
				"round)\n",
				rate, bare / 1000);
			return 1;
		}
	}
	ping.work_us = work_us;
	pong.work_us = pong_us >= 0 && rate <= 0 ? pong_us : work_us;
	printf("pingpong: pid %d\n", getpid());
	fflush(stdout);
	if (wait_s > 0) /* time for a sampler to attach by pid */
		usleep((useconds_t)(wait_s * 1e6));
	while (go_file && access(go_file, F_OK)) /* ... or until it says so */
		usleep(10000);
	t0 = sa_mono_ns();
	if (pthread_create(&b, NULL, pong_main, &pong) ||
	    pthread_create(&a, NULL, ping_main, &ping)) {
		perror("pingpong: thread");
		return 1;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	wall = sa_mono_ns() - t0;
	printf("pingpong: work_us %.2f pong_us %.2f bare_round_us %.2f clock_ns %.0f rounds %llu "
	       "wall_ns %llu rate %.0f\n",
	       work_us, pong.work_us, bare / 1000, clock_ns, (unsigned long long)ping.rounds,
	       (unsigned long long)wall, ping.rounds * 1e9 / wall);
	report(&ping);
	report(&pong);
	printf("pingpong: thread main cpu_ns %llu\n", (unsigned long long)sa_thread_cpu_ns());
	return 0;
}
