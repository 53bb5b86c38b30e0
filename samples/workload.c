// SPDX-License-Identifier: MIT
/*
 * The reference workload: main -> sa_run -> sa_leaf_a / sa_leaf_b / sa_leaf_c
 * with a CPU split chosen by -s (default 60,30,10), and sa_shared_helper called
 * from both sa_leaf_b and sa_leaf_c. Work is interleaved in rounds of fixed-cost
 * units, so the split holds however the threads are scheduled; the split is
 * also measured here with thread CPU time and printed with the throughput.
 * -p paces each round to a fixed period of the monotonic clock: periodic code
 * that a sampler with a commensurate period would see at one phase only.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "sa_sample.h"

#define NLEAF 3
/* Every BLOCK rounds, TIMED of them run each leaf back to back, timed. */
#define BLOCK 256
#define TIMED 16

static const char *const leaf_names[NLEAF] = {"sa_leaf_a", "sa_leaf_b", "sa_leaf_c"};

static unsigned long unit_iters;
static unsigned long split[NLEAF] = {60, 30, 10};
static uint64_t deadline_ns;
static uint64_t cpu_budget_ns; /* -c: stop after this much thread CPU time */
static double pace_ns;	       /* -p: one round per this many ns of CLOCK_MONOTONIC */

struct worker {
	pthread_t thread;
	unsigned long rounds;
	unsigned long calls[NLEAF];
	unsigned long timed_calls[NLEAF];
	uint64_t timed_ns[NLEAF];
	uint64_t cpu_ns;
};

/* Innermost function under the helper: a leaf that owns its frame. */
__attribute__((noipa)) void sa_helper_inner(unsigned long units)
{
	SA_SPIN(units * unit_iters);
}

/* Half of its units itself, half in sa_helper_inner: self < total. */
__attribute__((noipa)) void sa_shared_helper(unsigned long units)
{
	unsigned long inner = units / 2;

	sa_helper_inner(inner);
	SA_SPIN((units - inner) * unit_iters);
}

__attribute__((noipa)) void sa_leaf_a(unsigned long units)
{
	SA_SPIN(units * unit_iters);
}

/* A third in the helper. The call is not last, so it is never a tail call. */
__attribute__((noipa)) void sa_leaf_b(unsigned long units)
{
	unsigned long helper = units / 3;

	sa_shared_helper(helper);
	SA_SPIN((units - helper) * unit_iters);
}

/* Half in the helper. */
__attribute__((noipa)) void sa_leaf_c(unsigned long units)
{
	unsigned long helper = units / 2;

	sa_shared_helper(helper);
	SA_SPIN((units - helper) * unit_iters);
}

static void (*const leaves[NLEAF])(unsigned long) = {sa_leaf_a, sa_leaf_b, sa_leaf_c};

/* Waits for the round's deadline outside every leaf, so a sample here is no leaf's. */
__attribute__((noipa)) void sa_pace_wait(uint64_t deadline_ns)
{
	while (sa_mono_ns() < deadline_ns)
		;
}

static bool run_done(const struct worker *w)
{
	return cpu_budget_ns ? sa_thread_cpu_ns() - w->cpu_ns >= cpu_budget_ns
			     : sa_mono_ns() >= deadline_ns;
}

/*
 * -p: round k starts at base + k * pace_ns exactly (a late round skips to
 * the next start on that grid); one round in BLOCK is timed leaf by leaf.
 */
__attribute__((noipa)) void sa_run_paced(struct worker *w)
{
	uint64_t base = sa_mono_ns(), t[NLEAF + 1], now;
	unsigned long k = 1;
	int i;

	do {
		for (i = 0; i < NLEAF; i++) {
			if (w->rounds % BLOCK == 0)
				t[i] = sa_thread_cpu_ns();
			leaves[i](split[i]);
			w->calls[i]++;
		}
		if (w->rounds % BLOCK == 0) {
			t[NLEAF] = sa_thread_cpu_ns();
			for (i = 0; i < NLEAF; i++) {
				w->timed_ns[i] += t[i + 1] - t[i];
				w->timed_calls[i]++;
			}
		}
		w->rounds++;
		now = sa_mono_ns();
		if (base + (uint64_t)(k * pace_ns) <= now)
			k = (unsigned long)((now - base) / pace_ns) + 1;
		sa_pace_wait(base + (uint64_t)(k++ * pace_ns));
	} while (!run_done(w));
}

__attribute__((noipa)) void sa_run(struct worker *w)
{
	uint64_t t0, t1;
	int i, k;

	w->cpu_ns = sa_thread_cpu_ns();
	if (pace_ns > 0)
		sa_run_paced(w);
	while (pace_ns <= 0) {
		for (i = 0; i < NLEAF; i++) {
			t0 = sa_thread_cpu_ns();
			for (k = 0; k < TIMED; k++)
				leaves[i](split[i]);
			t1 = sa_thread_cpu_ns();
			w->timed_ns[i] += t1 - t0;
			w->timed_calls[i] += TIMED;
			w->calls[i] += TIMED;
		}
		for (k = TIMED; k < BLOCK; k++) {
			sa_leaf_a(split[0]);
			sa_leaf_b(split[1]);
			sa_leaf_c(split[2]);
		}
		for (i = 0; i < NLEAF; i++)
			w->calls[i] += BLOCK - TIMED;
		w->rounds += BLOCK;
		if (run_done(w))
			break;
	}
	w->cpu_ns = sa_thread_cpu_ns() - w->cpu_ns;
}

static void *sa_thread_main(void *arg)
{
	sa_run(arg);
	return NULL;
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [-d SECONDS | -c CPU_SECONDS] [-t THREADS] [-s A,B,C] [-u UNIT_US]\n"
		"       [-p ROUND_NS]\n"
		"  main -> sa_run -> sa_leaf_a/b/c taking A/B/C parts of the CPU time\n"
		"  (default 60,30,10); sa_shared_helper runs under sa_leaf_b (1/3 of it)\n"
		"  and sa_leaf_c (1/2 of it), half of it in sa_helper_inner.\n"
		"  -d duration in seconds (default 5)   -t threads (default 1; main runs one)\n"
		"  -c run until each thread has used this much CPU time instead (the\n"
		"     same number of samples however busy the machine is)\n"
		"  -u cost of one work unit in microseconds (default 2)\n"
		"  -p start a round (one call of each leaf) every ROUND_NS ns of the\n"
		"     monotonic clock (decimals allowed), waiting in sa_pace_wait; the\n"
		"     leaves take 80%% of it and -u is ignored\n",
		prog);
}

static void parse_split(const char *prog, const char *s)
{
	unsigned long v[NLEAF];
	char tail;

	if (sscanf(s, "%lu,%lu,%lu%c", &v[0], &v[1], &v[2], &tail) != 3 ||
	    v[0] + v[1] + v[2] == 0 || v[0] + v[1] + v[2] > 100000) {
		fprintf(stderr, "%s: bad split '%s' (want A,B,C, e.g. 60,30,10)\n", prog, s);
		exit(2);
	}
	memcpy(split, v, sizeof(v));
}

static void report(const struct worker *w, long nthreads, double seconds)
{
	double leaf_ns[NLEAF] = {0}, sum = 0, cpu = 0, rounds = 0, helper, helper_self;
	int i;
	long t;

	for (t = 0; t < nthreads; t++) {
		for (i = 0; i < NLEAF; i++)
			/* timed calls stand for all calls of that leaf in this thread */
			leaf_ns[i] +=
				(double)w[t].timed_ns[i] * w[t].calls[i] / w[t].timed_calls[i];
		cpu += w[t].cpu_ns;
		rounds += w[t].rounds;
	}
	for (i = 0; i < NLEAF; i++)
		sum += leaf_ns[i];
	printf("workload: threads %ld duration %.2f s split %lu,%lu,%lu unit %lu iterations\n",
	       nthreads, seconds, split[0], split[1], split[2], unit_iters);
	printf("workload: throughput %.1f iterations/s (one iteration = one call of each leaf)\n",
	       rounds / seconds);
	printf("workload: thread cpu %.4f s\n", cpu / 1e9);
	for (i = 0; i < NLEAF; i++)
		printf("workload: leaf %s cpu %.4f s share %.2f %% (measured)\n", leaf_names[i],
		       leaf_ns[i] / 1e9, 100 * leaf_ns[i] / sum);
	/* by construction: the helper's units inside leaf b and leaf c */
	helper = leaf_ns[1] * (double)(split[1] / 3) / (split[1] ? split[1] : 1) +
		 leaf_ns[2] * (double)(split[2] / 2) / (split[2] ? split[2] : 1);
	helper_self =
		leaf_ns[1] * (double)(split[1] / 3 - split[1] / 3 / 2) / (split[1] ? split[1] : 1) +
		leaf_ns[2] * (double)(split[2] / 2 - split[2] / 2 / 2) / (split[2] ? split[2] : 1);
	printf("workload: helper sa_shared_helper total %.2f %% self %.2f %% (by construction)\n",
	       100 * helper / sum, 100 * helper_self / sum);
}

int main(int argc, char **argv)
{
	double seconds = 5, unit_us = 2, cpu_s = 0;
	long nthreads = 1, t;
	struct worker *w;
	uint64_t w0;
	int opt;

	while ((opt = getopt(argc, argv, "c:d:t:s:u:p:h")) != -1) {
		switch (opt) {
		case 'c':
			cpu_s = sa_parse_double(argv[0], "-c", optarg);
			break;
		case 'd':
			seconds = sa_parse_double(argv[0], "-d", optarg);
			break;
		case 't':
			nthreads = sa_parse_long(argv[0], "-t", optarg);
			break;
		case 's':
			parse_split(argv[0], optarg);
			break;
		case 'u':
			unit_us = sa_parse_double(argv[0], "-u", optarg);
			break;
		case 'p':
			pace_ns = sa_parse_double(argv[0], "-p", optarg);
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind != argc || nthreads < 1 || nthreads > 1024 || unit_us <= 0) {
		usage(stderr, argv[0]);
		return 2;
	}
	w = calloc(nthreads, sizeof(*w));
	if (!w) {
		perror("calloc");
		return 1;
	}
	if (pace_ns > 0)
		unit_us = 0.8 * pace_ns / 1000 / (split[0] + split[1] + split[2]);
	unit_iters = sa_calibrate(unit_us * 1000);
	cpu_budget_ns = (uint64_t)(cpu_s * 1e9);
	w0 = sa_mono_ns();
	deadline_ns = w0 + (uint64_t)(seconds * 1e9);
	for (t = 1; t < nthreads; t++) {
		if (pthread_create(&w[t].thread, NULL, sa_thread_main, &w[t])) {
			fprintf(stderr, "%s: pthread_create failed\n", argv[0]);
			return 1;
		}
	}
	sa_run(&w[0]);
	for (t = 1; t < nthreads; t++)
		pthread_join(w[t].thread, NULL);
	report(w, nthreads, (sa_mono_ns() - w0) / 1e9);
	free(w);
	return 0;
}
