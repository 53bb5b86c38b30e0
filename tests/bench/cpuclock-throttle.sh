#!/bin/bash
# SPDX-License-Identifier: MIT
# cpuclock-throttle.sh - does the kernel throttle a cpu-clock event, the
# event sa-record samples with (record/sampler/bpf_session.c)? For each
# rate given, one cpu-clock event per CPU in frequency mode, as sa-record
# opens it but with a ring of its own, runs SECS seconds while one thread
# per CPU spins (busy) or nothing runs (as found); the ring's
# PERF_RECORD_SAMPLE, THROTTLE, UNTHROTTLE and LOST records are counted.
# The kernel throttles an event that fires more than
# ceil(kernel.perf_event_max_sample_rate / HZ) times in one tick
# (docs/reliability.md, "Kernel throttling"). Root; not in make check.
# Usage: tests/bench/cpuclock-throttle.sh [SECS [RATE...]]
set -u
SECS=${1:-2}
shift
RATES=${*:-"999 5000 10000 50000 100000"}
[ "$(id -u)" = 0 ] || { echo "cpuclock-throttle: needs root" >&2; exit 1; }
T=$(mktemp -d /tmp/sa-throttle.XXXXXX)
trap 'rm -rf "$T"' EXIT
cat >"$T/probe.c" <<'C'
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#define PAGES 64
static volatile int stop;
static void *spin(void *a)
{
	cpu_set_t s;
	volatile unsigned long x = 0;
	CPU_ZERO(&s);
	CPU_SET((int)(long)a, &s);
	sched_setaffinity(0, sizeof(s), &s);
	while (!stop)
		x++;
	return NULL;
}
struct ring {
	struct perf_event_mmap_page *m;
	size_t sz;
	uint64_t samples, throttle, unthrottle, lost, tstart, throttled_ns;
};
static void drain(struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->m->data_head, __ATOMIC_ACQUIRE), tail = r->m->data_tail;
	char *base = (char *)r->m + sysconf(_SC_PAGESIZE);
	while (tail < head) {
		struct perf_event_header h;
		uint64_t t;
		size_t o = tail % r->sz;
		memcpy(&h, base + o, sizeof(h)); /* headers are 8-byte aligned: never split */
		t = 0;
		if (h.type == PERF_RECORD_THROTTLE || h.type == PERF_RECORD_UNTHROTTLE)
			memcpy(&t, base + (o + 8) % r->sz, 8); /* may wrap: fine for a probe */
		if (h.type == PERF_RECORD_SAMPLE)
			r->samples++;
		else if (h.type == PERF_RECORD_THROTTLE) {
			r->throttle++;
			r->tstart = t;
		} else if (h.type == PERF_RECORD_UNTHROTTLE) {
			r->unthrottle++;
			if (r->tstart && t > r->tstart)
				r->throttled_ns += t - r->tstart;
			r->tstart = 0;
		} else if (h.type == PERF_RECORD_LOST)
			r->lost++;
		tail += h.size;
	}
	__atomic_store_n(&r->m->data_tail, tail, __ATOMIC_RELEASE);
}
int main(int argc, char **argv)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), i, busy = !strcmp(argv[3], "busy");
	long freq = atol(argv[1]);
	double secs = atof(argv[2]);
	struct ring *r = calloc(ncpu, sizeof(*r));
	pthread_t *th = calloc(ncpu, sizeof(*th));
	struct timespec a, b;
	uint64_t s = 0, th_n = 0, un = 0, lost = 0, tns = 0;
	for (i = 0; i < ncpu; i++) {
		struct perf_event_attr at = {.size = sizeof(at), .type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_CPU_CLOCK, .sample_freq = freq, .freq = 1,
			.sample_type = PERF_SAMPLE_TIME, .use_clockid = 1, .clockid = CLOCK_MONOTONIC};
		int fd = syscall(__NR_perf_event_open, &at, -1, i, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			perror("perf_event_open");
			return 1;
		}
		r[i].sz = PAGES * sysconf(_SC_PAGESIZE);
		r[i].m = mmap(NULL, r[i].sz + sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
			      MAP_SHARED, fd, 0);
		if (r[i].m == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
	}
	for (i = 0; busy && i < ncpu; i++)
		pthread_create(&th[i], NULL, spin, (void *)(long)i);
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		usleep(1000);
		for (i = 0; i < ncpu; i++)
			drain(&r[i]);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while (b.tv_sec - a.tv_sec + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	stop = 1;
	for (i = 0; i < ncpu; i++) {
		drain(&r[i]);
		s += r[i].samples, th_n += r[i].throttle, un += r[i].unthrottle;
		lost += r[i].lost, tns += r[i].throttled_ns;
	}
	printf("%6ld Hz %s: samples %llu of %.0f nominal (%.1f%%), throttle %llu, unthrottle %llu, "
	       "throttled %.1f ms, lost records %llu\n", freq, busy ? "busy" : "as found",
	       (unsigned long long)s, freq * secs * ncpu, 100.0 * s / (freq * secs * ncpu),
	       (unsigned long long)th_n, (unsigned long long)un, tns / 1e6, (unsigned long long)lost);
	return 0;
}
C
cc -O2 -pthread -o "$T/probe" "$T/probe.c" || exit 1
echo "== cpu-clock throttling, $(date -u +%FT%TZ), kernel $(uname -r), $(nproc) CPUs," \
	"perf_event_max_sample_rate $(cat /proc/sys/kernel/perf_event_max_sample_rate)," \
	"perf_cpu_time_max_percent $(cat /proc/sys/kernel/perf_cpu_time_max_percent)"
for f in $RATES; do
	for mode in busy found; do
		timeout -s KILL $((SECS + 10)) nice -n -5 "$T/probe" "$f" "$SECS" $mode
	done
done
echo "   perf_event_max_sample_rate after: $(cat /proc/sys/kernel/perf_event_max_sample_rate)"
