// SPDX-License-Identifier: MIT
/*
 * A workload with a known on/off-CPU split: thread sa-off-worker repeats
 * rounds of burning CPU (sa_off_burn), sleeping (sa_off_sleep) and waiting
 * on a pipe (sa_off_pipe_wait) that thread sa-off-writer answers after its
 * own sleep. Each phase is timed here with CLOCK_MONOTONIC and printed.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sa_sample.h"

static double burn_ms = 20, sleep_ms = 10, wait_ms = 15, duration_s = 6, under_ms = 12;
static int req[2], rep[2];
static unsigned long spin_iters;

struct phases {
	uint64_t burn, burn_cpu, sleep, wait, total, sleeps_under;
	uint64_t reads_over_ns; /* time in read() of the pipe waits over under_ms + 1 ms */
	unsigned long rounds;
};

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

__attribute__((noipa)) void sa_off_burn(uint64_t ns)
{
	uint64_t end = sa_mono_ns() + ns;

	SA_BURN_UNTIL(end, spin_iters);
}

__attribute__((noipa)) void sa_off_sleep(uint64_t ns)
{
	sleep_ns(ns);
}

/* Ask the writer for a byte and block until it comes. @return ns in read(). */
__attribute__((noipa)) uint64_t sa_off_pipe_wait(void)
{
	uint64_t t;
	char c = 1;

	if (write(req[1], &c, 1) != 1)
		goto fail;
	t = sa_mono_ns();
	if (read(rep[0], &c, 1) != 1)
		goto fail;
	return sa_mono_ns() - t;
fail:
	perror("offcpu: pipe");
	exit(1);
}

__attribute__((noipa)) void sa_off_writer_sleep(uint64_t ns)
{
	sleep_ns(ns);
}

/* sa-off-writer: answer each request after wait_ms; ends at EOF. */
static void *sa_off_writer(void *arg)
{
	char c;

	(void)arg;
	pthread_setname_np(pthread_self(), "sa-off-writer");
	while (read(req[0], &c, 1) == 1) {
		sa_off_writer_sleep((uint64_t)(wait_ms * 1e6));
		if (write(rep[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static void *sa_off_worker(void *arg)
{
	struct phases *p = arg;
	uint64_t t0 = sa_mono_ns(), end = t0 + (uint64_t)(duration_s * 1e9), a, b, c0;

	pthread_setname_np(pthread_self(), "sa-off-worker");
	printf("offcpu: worker tid %ld\n", (long)syscall(SYS_gettid));
	/*
	 * Each phase is bracketed by the clock reads right around its call:
	 * the thread CPU clock is a system call, where a loaded host preempts
	 * the thread, so it is read outside the brackets.
	 */
	while ((c0 = sa_thread_cpu_ns(), a = sa_mono_ns()) < end) {
		sa_off_burn((uint64_t)(burn_ms * 1e6));
		b = sa_mono_ns();
		p->burn += b - a;
		p->burn_cpu += sa_thread_cpu_ns() - c0;
		b = sa_mono_ns();
		sa_off_sleep((uint64_t)(sleep_ms * 1e6));
		a = sa_mono_ns();
		p->sleep += a - b;
		p->sleeps_under += a - b < (uint64_t)(under_ms * 1e6);
		b = sa_off_pipe_wait();
		p->wait += sa_mono_ns() - a;
		/*
		 * A read blocks for the writer's sleep less the time the worker
		 * spent between its request and its read: on a loaded host it
		 * may be preempted there, and the block is shorter than wait_ms.
		 */
		if (b >= (uint64_t)((under_ms + 1) * 1e6))
			p->reads_over_ns += b;
		p->rounds++;
	}
	p->total = sa_mono_ns() - t0;
	return NULL;
}

int main(int argc, char **argv)
{
	struct phases p = {0};
	pthread_t w, wr;
	int opt;

	while ((opt = getopt(argc, argv, "d:b:s:w:m:")) != -1) {
		double v = opt == '?' ? 0 : sa_parse_double(argv[0], "option", optarg);

		if (opt == 'd')
			duration_s = v;
		else if (opt == 'b')
			burn_ms = v;
		else if (opt == 's')
			sleep_ms = v;
		else if (opt == 'w')
			wait_ms = v;
		else if (opt == 'm')
			under_ms = v;
		else {
			fprintf(stderr, "usage: offcpu [-d S] [-b MS] [-s MS] [-w MS] [-m MS]\n");
			return 2;
		}
	}
	spin_iters = sa_calibrate(20000);
	if (pipe(req) || pipe(rep) || pthread_create(&wr, NULL, sa_off_writer, NULL)) {
		perror("offcpu");
		return 1;
	}
	if (pthread_create(&w, NULL, sa_off_worker, &p)) {
		perror("offcpu");
		return 1;
	}
	pthread_join(w, NULL);
	close(req[1]);
	pthread_join(wr, NULL);
	printf("offcpu: rounds %lu\n", p.rounds);
	printf("offcpu: burn_ns %llu cpu_ns %llu\n", (unsigned long long)p.burn,
	       (unsigned long long)p.burn_cpu);
	printf("offcpu: sleep_ns %llu\n", (unsigned long long)p.sleep);
	printf("offcpu: sleeps_under %g ms %llu\n", under_ms, (unsigned long long)p.sleeps_under);
	printf("offcpu: wait_ns %llu\n", (unsigned long long)p.wait);
	printf("offcpu: reads_over %g ms ns %llu\n", under_ms + 1,
	       (unsigned long long)p.reads_over_ns);
	printf("offcpu: total_ns %llu\n", (unsigned long long)p.total);
	return 0;
}
