// SPDX-License-Identifier: MIT
/*
 * gen_text.c - other tools' stack text for the input benchmark
 * (bench-input.sh): "folded N" writes N unique folded stacks, "perf N"
 * writes `perf script` text of N samples (-F comm,pid,tid,time,event,ip,
 * sym,dso form, kernel frames on a quarter). Fixed seed: the same bytes on
 * every run. Not installed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEVELS 7 /* 10^7 unique paths: more than any N asked for */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static const char *const cxx[] = {
	"std::vector<int, std::allocator<int> >::push_back(int const&)",
	"std::_Hashtable<std::string, std::pair<std::string const, int> >::find(std::string "
	"const&)",
	"app::Server::handle(app::Request const&)",
	"(anonymous namespace)::parse(char const*, unsigned long)",
};
static const char *const kfr[] = {"entry_SYSCALL_64_after_hwframe", "do_syscall_64", "ksys_read",
				  "vfs_read", "copy_user_generic_string"};

/* Unique stack @k: digits of @k pick one of ten functions at each level. */
static void folded(long n)
{
	for (long k = 0; k < n; k++) {
		long v = k;
		int depth = 4 + (int)(next() % 12);

		fputs("app;_start;__libc_start_main;main", stdout);
		for (int l = 0; l < LEVELS; l++, v /= 10)
			printf(";fn_%d_%ld", l, v % 10);
		for (int d = 0; d < depth; d++)
			printf(";%s", cxx[(k + d) % 4]);
		if (k % 4 == 0)
			for (int d = 0; d < 5; d++)
				printf(";%s_[k]", kfr[d]);
		printf(" %u\n", 1 + next() % 1000);
	}
}

/* One sample: one of 5,000 call paths, skewed (squares of uniform draws). */
static void perf_sample(long i)
{
	uint32_t r = next() % 5000, path = r * r / 5000;
	int depth = 4 + (int)(path % 8);

	printf("app %u/%u %ld.%06ld: cpu-clock:ppp: \n", 1000 + path % 4, 1000 + path % 4,
	       10000 + i / 1000000, i % 1000000);
	if (path % 4 == 0)
		for (int d = 4; d >= 0; d--)
			printf("\tffffffff81%06x %s+0x%x ([kernel.kallsyms])\n", 0x1000 * d, kfr[d],
			       d * 16 + 3);
	for (int d = depth; d >= 0; d--) {
		uint32_t fn = (path >> (d % 8)) % 40;

		if (d % 5 == 1)
			printf("\t    7f00%08x %s+0x%x (/usr/lib/libapp.so)\n", fn * 64 + d,
			       cxx[fn % 4], d);
		else
			printf("\t    55%010x fn_%u_%u+0x%x (/usr/bin/app)\n", fn * 64 + d, d, fn,
			       d * 4);
	}
	printf("\t    7f0000029d90 __libc_start_call_main+0x80 "
	       "(/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n");
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	long n = argc == 3 ? atol(argv[2]) : 0;

	if (argc != 3 || n <= 0 || (strcmp(argv[1], "folded") && strcmp(argv[1], "perf"))) {
		fprintf(stderr, "usage: gen-text folded|perf N\n");
		return 2;
	}
	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	if (!strcmp(argv[1], "folded"))
		folded(n);
	else
		for (long i = 0; i < n; i++)
			perf_sample(i);
	return fflush(stdout) ? 1 : 0;
}
