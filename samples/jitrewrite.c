// SPDX-License-Identifier: MIT
/*
 * A JIT that rewrites its perf map (issue 31): it "compiles" -n functions
 * one after another into pages of anonymous executable memory, and after
 * each compile writes /tmp/perf-PID.map anew with every function compiled
 * so far, newest first, as the JVM's Compiler.perfmap and other JITs that
 * dump their live methods do: with fopen("w") (-m w, truncating the file in
 * place) or by writing PATH.tmp and renaming it over the map (-m rename).
 * main -> sa_jit_run calls the compiled functions in turn until the thread
 * used -c seconds of CPU; function k is compiled after k/n of that time.
 * Every JIT function is named sa_jit_fn_K in the final map, so a profiler
 * that reads the map as it ends names all of their samples (perf does).
 * -w FILE: then idle until FILE exists (at most 60 s), so that a recorder
 * can end while the process lives (its map is then not read after exit).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sa_sample.h"

#define MAX_FNS 64

#if defined(__x86_64__)
/* push %rbp; mov %rsp,%rbp; mov %rdi,%rax; 1: dec %rax; jnz 1b; pop %rbp; ret */
static const unsigned char code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8,
				     0x48, 0xff, 0xc8, 0x75, 0xfb, 0x5d, 0xc3};
#endif

typedef void (*jit_fn)(unsigned long iters);

static long page;

/* Write the map: functions [0, n) of @base, newest first. */
static int write_map(const char *mode, unsigned char *base, int n)
{
	char path[64], tmp[80];
	FILE *f;
	int k;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(strcmp(mode, "w") ? tmp : path, "w");
	if (!f)
		return -1;
	for (k = n - 1; k >= 0; k--)
		fprintf(f, "%lx %zx sa_jit_fn_%d\n", (unsigned long)(base + (size_t)k * page),
			sizeof(code), k);
	if (fclose(f))
		return -1;
	return strcmp(mode, "w") ? rename(tmp, path) : 0;
}

/* "Compile" function @k: copy the code to its page and make it executable. */
static int compile(unsigned char *base, int k)
{
	unsigned char *p = base + (size_t)k * page;

	memcpy(p, code, sizeof(code));
	return mprotect(p, (size_t)page, PROT_READ | PROT_EXEC);
}

static __attribute__((noipa)) int sa_jit_run(unsigned char *base, int nfns, double cpu_s,
					     const char *mode)
{
	uint64_t t0 = sa_thread_cpu_ns(), total = (uint64_t)(cpu_s * 1e9), used;
	int n = 0, k = 0;

	while ((used = sa_thread_cpu_ns() - t0) < total) {
		if (n < nfns && used >= total / (uint64_t)nfns * (uint64_t)n) {
			if (compile(base, n) || write_map(mode, base, n + 1))
				return -1;
			n++;
		}
		((jit_fn)(void *)(base + (size_t)k * page))(200000);
		k = (k + 1) % n;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *mode = "w", *wait_for = NULL;
	double cpu_s = 3;
	long nfns = 12;
	unsigned char *base;
	int opt, n;

	while ((opt = getopt(argc, argv, "c:n:m:w:h")) != -1) {
		switch (opt) {
		case 'c':
			cpu_s = sa_parse_double(argv[0], "-c", optarg);
			break;
		case 'n':
			nfns = sa_parse_long(argv[0], "-n", optarg);
			break;
		case 'm':
			mode = optarg;
			break;
		case 'w':
			wait_for = optarg;
			break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: %s [-c CPU_SECONDS] [-n FUNCTIONS] [-m w|rename] [-w "
				"FILE]\n"
				"  compiles FUNCTIONS (12, at most 64) functions one by one and\n"
				"  rewrites /tmp/perf-PID.map after each, for CPU_SECONDS (3)\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind != argc || nfns < 1 || nfns > MAX_FNS ||
	    (strcmp(mode, "w") && strcmp(mode, "rename"))) {
		fprintf(stderr, "%s: bad arguments\n", argv[0]);
		return 2;
	}
#if defined(__x86_64__)
	page = sysconf(_SC_PAGESIZE);
	base = mmap(NULL, (size_t)(nfns * page), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	n = sa_jit_run(base, (int)nfns, cpu_s, mode);
	if (n < 0) {
		perror("jitrewrite");
		return 1;
	}
	printf("jitrewrite: pid %d, %d functions, map rewritten %d times (-m %s)\n", (int)getpid(),
	       n, n, mode);
	fflush(stdout);
	for (n = 0; wait_for && n < 3000 && access(wait_for, F_OK); n++)
		usleep(20000);
	return 0;
#else
	(void)base;
	(void)n;
	(void)wait_for;
	fprintf(stderr, "%s: x86-64 only\n", argv[0]);
	return 77;
#endif
}
