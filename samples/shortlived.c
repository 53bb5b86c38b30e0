// SPDX-License-Identifier: MIT
/*
 * Many short-lived processes: starts -n processes (default 500) one after
 * another by re-executing this binary; each burns -m ms of CPU (default 10)
 * in sa_shortlived_work and exits. The parent only waits.
 */
#include <getopt.h>
#include <sys/prctl.h>

#include "sa_proc.h"
#include "sa_sample.h"

__attribute__((noipa)) void sa_shortlived_work(uint64_t ns, unsigned long iters)
{
	SA_BURN_CPU_NS(ns, iters);
}

int main(int argc, char **argv)
{
	const char *ms_s = "10";
	long n = 500, i, failed = 0;
	int opt, child = 0;
	uint64_t w0;
	double ms;

	while ((opt = getopt(argc, argv, "n:m:ch")) != -1) {
		switch (opt) {
		case 'n':
			n = sa_parse_long(argv[0], "-n", optarg);
			break;
		case 'm':
			ms_s = optarg;
			break;
		case 'c':
			child = 1;
			break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: %s [-n PROCESSES] [-m MS]\n"
				"  starts PROCESSES (default 500) one after another; each burns "
				"MS\n"
				"  ms of CPU (default 10) in sa_shortlived_work and exits\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	ms = sa_parse_double(argv[0], "-m", ms_s);
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
		return 2;
	}
	if (child) {
		/* no calibration (it would cost more than the work): chunks of about
		 * 150 us, so the clock is read about 60 times */
		sa_shortlived_work((uint64_t)(ms * 1e6), 100000);
		return 0;
	}
	w0 = sa_mono_ns();
	for (i = 0; i < n; i++) {
		char *cargv[] = {(char *)sa_self_path(), "-c", "-m", (char *)ms_s, NULL};

		if (sa_wait(sa_spawn(cargv)) != 0)
			failed++;
	}
	double wall = (sa_mono_ns() - w0) / 1e9;
	printf("shortlived: %ld processes of %.1f ms in %.2f s, throughput %.1f iterations/s "
	       "(processes), %ld failed\n",
	       n, ms, wall, n / wall, failed);
	return failed ? 1 : 0;
}
