// SPDX-License-Identifier: MIT
/*
 * A plain busy loop (main -> sa_busy_loop) on -t threads for -d seconds
 * (0: until killed), used as a second process next to a -p target.
 */
#include <getopt.h>
#include <pthread.h>
#include <unistd.h>

#include "sa_sample.h"

static uint64_t until;
static unsigned long chunk_iters;

__attribute__((noipa)) unsigned long sa_busy_loop(void)
{
	unsigned long n = 0;

	while (!until || sa_mono_ns() < until) {
		SA_SPIN(chunk_iters);
		n++;
	}
	return n;
}

static void *busy_thread(void *arg)
{
	*(unsigned long *)arg = sa_busy_loop();
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = 0;
	long nthreads = 1, t;
	pthread_t tids[64];
	unsigned long counts[64] = {0}, total;
	int opt;

	while ((opt = getopt(argc, argv, "d:t:h")) != -1) {
		switch (opt) {
		case 'd':
			seconds = sa_parse_double(argv[0], "-d", optarg);
			break;
		case 't':
			nthreads = sa_parse_long(argv[0], "-t", optarg);
			break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: %s [-d SECONDS] [-t THREADS]\n"
				"  spins in sa_busy_loop on THREADS threads (default 1, max 64) "
				"for\n"
				"  SECONDS (default 0: until killed)\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind != argc || nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "%s: bad arguments\n", argv[0]);
		return 2;
	}
	chunk_iters = sa_calibrate(50000);
	if (seconds > 0)
		until = sa_mono_ns() + (uint64_t)(seconds * 1e9);
	for (t = 1; t < nthreads; t++)
		if (pthread_create(&tids[t], NULL, busy_thread, &counts[t])) {
			fprintf(stderr, "%s: pthread_create failed\n", argv[0]);
			return 1;
		}
	counts[0] = sa_busy_loop();
	total = counts[0];
	for (t = 1; t < nthreads; t++) {
		pthread_join(tids[t], NULL);
		total += counts[t];
	}
	printf("busy: threads %ld throughput %.1f iterations/s\n", nthreads, total / seconds);
	return 0;
}
