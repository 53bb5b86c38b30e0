// SPDX-License-Identifier: MIT
/*
 * A recursive workload: main -> sa_recursive_run -> sa_recurse, which calls
 * itself -n levels deep (default 8) and burns the same CPU at every level, so
 * each level holds an equal share of self time and sa_recurse is on every
 * stack of the run: its total is 100%, counted once per stack.
 */
#include <getopt.h>
#include <unistd.h>

#include "sa_sample.h"

static unsigned long unit_iters;

/* Work before and after the call keeps the recursion from becoming a loop. */
__attribute__((noipa)) void sa_recurse(int depth)
{
	SA_SPIN(unit_iters / 2);
	if (depth > 1)
		sa_recurse(depth - 1);
	SA_SPIN(unit_iters - unit_iters / 2);
}

__attribute__((noipa)) unsigned long sa_recursive_run(int depth, uint64_t until)
{
	unsigned long calls = 0;

	while (sa_mono_ns() < until) {
		sa_recurse(depth);
		calls++;
	}
	return calls;
}

int main(int argc, char **argv)
{
	double seconds = 5;
	long depth = 8;
	unsigned long calls;
	uint64_t c0;
	int opt;

	while ((opt = getopt(argc, argv, "d:n:h")) != -1) {
		switch (opt) {
		case 'd':
			seconds = sa_parse_double(argv[0], "-d", optarg);
			break;
		case 'n':
			depth = sa_parse_long(argv[0], "-n", optarg);
			break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: %s [-d SECONDS] [-n DEPTH]\n"
				"  sa_recurse calls itself DEPTH levels deep (default 8), burning "
				"the\n"
				"  same CPU at each level, for SECONDS (default 5)\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind != argc || depth < 1 || depth > 100) {
		fprintf(stderr, "%s: bad arguments (depth 1..100)\n", argv[0]);
		return 2;
	}
	unit_iters = sa_calibrate(5000);
	c0 = sa_thread_cpu_ns();
	calls = sa_recursive_run((int)depth, sa_mono_ns() + (uint64_t)(seconds * 1e9));
	printf("recursive: depth %ld cpu %.4f s throughput %.1f iterations/s "
	       "(each level %.2f %% self, sa_recurse 100 %% total)\n",
	       depth, (sa_thread_cpu_ns() - c0) / 1e9, calls / seconds, 100.0 / depth);
	return 0;
}
