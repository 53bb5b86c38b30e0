// SPDX-License-Identifier: MIT
/*
 * wl-selfexec.c - one pid that execs itself again and again, the workload
 * of 5110-exec-loop.t and tests/bench/hostile-soak.sh (built by them with
 * cc, non-PIE: every image has the same addresses). `wl-selfexec END [K]`:
 * spins 0.1 ms in its own function, then execs itself with K + 1, until
 * the epoch second END; then prints K, the execs made. The count so far
 * is argv[2], so /proc/PID/cmdline gives the rate while it runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static void spin(void)
{
	struct timespec t0, t;
	volatile unsigned long x = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++)
			x++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 100000);
}

int main(int argc, char **argv)
{
	char n[32];
	long k = argc > 2 ? atol(argv[2]) : 0;

	if (argc < 2 || time(NULL) >= atol(argv[1])) {
		printf("%ld\n", k);
		return 0;
	}
	spin();
	snprintf(n, sizeof(n), "%ld", k + 1);
	execl("/proc/self/exe", argv[0], argv[1], n, (char *)NULL);
	return 1;
}
