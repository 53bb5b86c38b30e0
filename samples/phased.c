// SPDX-License-Identifier: MIT
/*
 * A phased workload: sa_phase_a burns CPU for the first -a seconds (default
 * 3), then sa_phase_b for the next -b seconds (default 3), by the monotonic
 * clock, so a time-window filter on a recording has a known answer.
 */
#include <getopt.h>
#include <unistd.h>

#include "sa_sample.h"

static unsigned long chunk_iters;

struct phase {
	unsigned long chunks;
	uint64_t cpu_ns;
	uint64_t wall_ns;
};

/* Burns until @until (monotonic ns) in chunks of about 50 us. */
#define PHASE_BODY(p, until)                                                                       \
	do {                                                                                       \
		uint64_t c0 = sa_thread_cpu_ns(), w0 = sa_mono_ns();                               \
		while (sa_mono_ns() < (until)) {                                                   \
			SA_SPIN(chunk_iters);                                                      \
			(p)->chunks++;                                                             \
		}                                                                                  \
		(p)->cpu_ns = sa_thread_cpu_ns() - c0;                                             \
		(p)->wall_ns = sa_mono_ns() - w0;                                                  \
	} while (0)

__attribute__((noipa)) void sa_phase_a(struct phase *p, uint64_t until)
{
	PHASE_BODY(p, until);
}

__attribute__((noipa)) void sa_phase_b(struct phase *p, uint64_t until)
{
	PHASE_BODY(p, until);
}

static void print_phase(const char *name, const struct phase *p)
{
	double wall = p->wall_ns / 1e9;

	printf("phased: %s cpu %.4f s wall %.4f s throughput %.1f iterations/s\n", name,
	       p->cpu_ns / 1e9, wall, wall > 0 ? p->chunks / wall : 0.0);
}

int main(int argc, char **argv)
{
	double a = 3, b = 3;
	struct phase pa = {0}, pb = {0};
	uint64_t start;
	int opt;

	while ((opt = getopt(argc, argv, "a:b:h")) != -1) {
		switch (opt) {
		case 'a':
			a = sa_parse_double(argv[0], "-a", optarg);
			break;
		case 'b':
			b = sa_parse_double(argv[0], "-b", optarg);
			break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: %s [-a SECONDS] [-b SECONDS]\n"
				"  sa_phase_a for the first A seconds (default 3), then "
				"sa_phase_b\n"
				"  for B seconds (default 3)\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
		return 2;
	}
	start = sa_mono_ns();
	chunk_iters = sa_calibrate(50000);
	sa_phase_a(&pa, start + (uint64_t)(a * 1e9));
	sa_phase_b(&pb, start + (uint64_t)((a + b) * 1e9));
	print_phase("sa_phase_a", &pa);
	print_phase("sa_phase_b", &pb);
	return 0;
}
