// SPDX-License-Identifier: MIT
/*
 * plt_loop.c - a loop whose time is in a libc call made through the PLT:
 * abs() is a few instructions, so its stub holds a large share of the
 * samples. Built with each PLT layout for core/elfplt.c's test and 6130.
 * Usage: plt_loop [SECONDS] (of its own CPU time, so a loaded host gives
 * as many samples as an idle one)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Taking abs's address too gives the binary a .plt.got entry. */
int (*volatile plt_loop_fp)(int) = abs;

__attribute__((noinline)) long plt_loop_run(double seconds)
{
	struct timespec t0, t;
	long s = 0;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			s += abs(i - 50000);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	return s;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;

	printf("%ld %p\n", plt_loop_run(seconds), (void *)plt_loop_fp);
	return 0;
}
