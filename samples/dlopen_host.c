// SPDX-License-Identifier: MIT
/*
 * Loads a library mid-run: sleeps -w seconds, dlopens libsa_plugin.so (next to
 * this binary, or -l PATH), runs its sa_plugin_run for -r seconds of CPU (the
 * hot function is sa_plugin_hot), dlcloses it, prints "dlclosed", then burns
 * -a seconds in sa_host_after so a test can delete the library meanwhile.
 */
#include <dlfcn.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "sa_sample.h"

static unsigned long chunk_iters;

__attribute__((noipa)) void sa_host_after(uint64_t until)
{
	SA_BURN_UNTIL(until, chunk_iters);
}

static const char *default_lib(void)
{
	static char exe[PATH_MAX], lib[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return "libsa_plugin.so";
	exe[n] = '\0';
	snprintf(lib, sizeof(lib), "%s/libsa_plugin.so", dirname(exe));
	return lib;
}

int main(int argc, char **argv)
{
	double wait_s = 1, run_s = 2, after_s = 1;
	const char *lib = NULL;
	double (*run)(double);
	struct timespec ts;
	double cpu;
	void *h;
	int opt;

	while ((opt = getopt(argc, argv, "w:r:a:l:h")) != -1) {
		switch (opt) {
		case 'w':
			wait_s = sa_parse_double(argv[0], "-w", optarg);
			break;
		case 'r':
			run_s = sa_parse_double(argv[0], "-r", optarg);
			break;
		case 'a':
			after_s = sa_parse_double(argv[0], "-a", optarg);
			break;
		case 'l':
			lib = optarg;
			break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: %s [-w SECONDS] [-r SECONDS] [-a SECONDS] [-l LIBRARY]\n"
				"  sleeps W (default 1), dlopens LIBRARY (default libsa_plugin.so\n"
				"  next to this binary), burns R seconds (default 2) in its\n"
				"  sa_plugin_hot, dlcloses it, then burns A seconds (default 1)\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
		return 2;
	}
	if (!lib)
		lib = default_lib();
	chunk_iters = sa_calibrate(50000);
	ts.tv_sec = (time_t)wait_s;
	ts.tv_nsec = (long)((wait_s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s: dlopen: %s\n", argv[0], dlerror());
		return 1;
	}
	*(void **)&run = dlsym(h, "sa_plugin_run");
	if (!run) {
		fprintf(stderr, "%s: dlsym sa_plugin_run: %s\n", argv[0], dlerror());
		return 1;
	}
	cpu = run(run_s);
	if (dlclose(h)) {
		fprintf(stderr, "%s: dlclose: %s\n", argv[0], dlerror());
		return 1;
	}
	printf("dlopen_host: %s cpu %.4f s in sa_plugin_hot\ndlclosed\n", lib, cpu);
	fflush(stdout);
	sa_host_after(sa_mono_ns() + (uint64_t)(after_s * 1e9));
	return 0;
}
