// SPDX-License-Identifier: MIT
/*
 * wl-spin.c - a program whose own function spins for argv[1] seconds
 * (2 by default), the workload of 5150-long-strings.t and
 * tests/bench/hostile-soak.sh. The function is named by -DSPIN_FN=NAME
 * when built (spin_leaf by default): 5150 gives it 5,000 bytes.
 */
#include <stdlib.h>
#include <time.h>

#ifndef SPIN_FN
#define SPIN_FN spin_leaf
#endif

volatile unsigned long sink;

__attribute__((noinline)) void SPIN_FN(void)
{
	for (volatile int i = 0; i < 200000; i++)
		sink += i;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		SPIN_FN();
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while (b.tv_sec - a.tv_sec + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return 0;
}
