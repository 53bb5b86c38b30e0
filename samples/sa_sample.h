/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the sample workloads: a fixed-cost work unit calibrated at
 * start, thread CPU and monotonic clocks, and number parsing. Header-only
 * because the Makefile builds one binary per samples/NAME.c.
 */
#ifndef SA_SAMPLE_H
#define SA_SAMPLE_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/*
 * SA_SPIN(iters) burns CPU in the body of the function that uses it. It is a
 * macro, not an inline function, so that DWARF has no inline frame for it and
 * a symbolizer charges the samples to that function itself. The loop is
 * written in asm and aligned to 64 bytes so that every copy costs the same per
 * iteration: with compiler-placed loops, the copies' alignment differed and
 * their speed by up to 15% (a loop branch crossing a 32-byte line is slower on
 * many x86 cores). The volatile store to a local puts it on the stack, which
 * forces gcc to set up a frame even in a leaf (gcc 12 omits the frame of a
 * leaf that never touches the stack, and a frame-pointer walk then skips the
 * leaf's caller).
 */
#if defined(__x86_64__)
#define SA_SPIN_LOOP(acc_, cnt_)                                                                   \
	__asm__ volatile(".p2align 6\n"                                                            \
			 "1:\n\t"                                                                  \
			 "imul %[mul], %[acc]\n\t"                                                 \
			 "add %[cnt], %[acc]\n\t"                                                  \
			 "dec %[cnt]\n\t"                                                          \
			 "jnz 1b\n"                                                                \
			 : [acc] "+r"(acc_), [cnt] "+r"(cnt_)                                      \
			 : [mul] "r"(6364136223846793005UL)                                        \
			 : "cc")
#else
#define SA_SPIN_LOOP(acc_, cnt_)                                                                   \
	for (; cnt_; cnt_--) {                                                                     \
		acc_ = acc_ * 6364136223846793005UL + cnt_;                                        \
		__asm__ volatile("" : "+r"(acc_));                                                 \
	}
#endif

/*
 * -DSA_FRAMELESS_LEAVES (build/samples/workload-leaf) drops the volatile
 * local: the natural case, where gcc gives leaves no frame at all, used to
 * check that an unwinder with CFI still finds their callers.
 */
#ifdef SA_FRAMELESS_LEAVES
#define SA_SPIN_ACC_QUAL_
#else
#define SA_SPIN_ACC_QUAL_ volatile
#endif

#define SA_SPIN(iters)                                                                             \
	do {                                                                                       \
		SA_SPIN_ACC_QUAL_ unsigned long sa_acc_;                                           \
		unsigned long sa_x_ = 1, sa_n_ = (iters);                                          \
		if (sa_n_)                                                                         \
			SA_SPIN_LOOP(sa_x_, sa_n_);                                                \
		sa_acc_ = sa_x_;                                                                   \
		(void)sa_acc_;                                                                     \
	} while (0)

static inline uint64_t sa_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t sa_thread_cpu_ns(void)
{
	return sa_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static inline uint64_t sa_mono_ns(void)
{
	return sa_clock_ns(CLOCK_MONOTONIC);
}

/* Not inlined: calibration samples must not be charged to a caller's leaf. */
static __attribute__((noipa, unused)) void sa_calibrate_spin(unsigned long iters)
{
	SA_SPIN(iters);
}

/*
 * Iterations of SA_SPIN() that take about @ns of thread CPU time here. Takes
 * the fastest of several trials so that a preempted or throttled trial does not
 * inflate the unit; about 40 ms in total.
 */
static inline unsigned long sa_calibrate(double ns)
{
	const unsigned long trial = 1UL << 20;
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < 8; i++) {
		uint64_t t0 = sa_thread_cpu_ns(), dt;

		sa_calibrate_spin(trial);
		dt = sa_thread_cpu_ns() - t0;
		if (dt && dt < best)
			best = dt;
	}
	if (best == UINT64_MAX)
		best = trial;
	double iters = ns * (double)trial / (double)best;
	return iters < 1 ? 1 : (unsigned long)iters;
}

/* Burns @ns of this thread's CPU time in the calling function's body. */
#define SA_BURN_CPU_NS(ns, iters)                                                                  \
	do {                                                                                       \
		uint64_t sa_end_ = sa_thread_cpu_ns() + (ns);                                      \
		while (sa_thread_cpu_ns() < sa_end_)                                               \
			SA_SPIN(iters);                                                            \
	} while (0)

/* Burns until the monotonic clock reaches @deadline_ns. */
#define SA_BURN_UNTIL(deadline_ns, iters)                                                          \
	do {                                                                                       \
		while (sa_mono_ns() < (deadline_ns))                                               \
			SA_SPIN(iters);                                                            \
	} while (0)

static inline double sa_parse_double(const char *prog, const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0) {
		fprintf(stderr, "%s: bad value for %s: '%s'\n", prog, opt, s);
		exit(2);
	}
	return v;
}

static inline long sa_parse_long(const char *prog, const char *opt, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0) {
		fprintf(stderr, "%s: bad value for %s: '%s'\n", prog, opt, s);
		exit(2);
	}
	return v;
}

#endif /* SA_SAMPLE_H */
