// SPDX-License-Identifier: MIT
/*
 * A process tree: the parent (sa_forker_parent) forks and executes -c children
 * (sa_forker_child), each of which starts -g grandchildren
 * (sa_forker_grandchild), by re-executing this binary with a role. Each burns
 * -m ms of its own CPU time (default 500) in its function; the parent exits
 * with -x STATUS (default 0), or 1 if a descendant failed.
 */
#include <getopt.h>
#include <sys/prctl.h>

#include "sa_proc.h"
#include "sa_sample.h"

static unsigned long chunk_iters;

__attribute__((noipa)) void sa_forker_parent(uint64_t ns)
{
	SA_BURN_CPU_NS(ns, chunk_iters);
}

__attribute__((noipa)) void sa_forker_child(uint64_t ns)
{
	SA_BURN_CPU_NS(ns, chunk_iters);
}

__attribute__((noipa)) void sa_forker_grandchild(uint64_t ns)
{
	SA_BURN_CPU_NS(ns, chunk_iters);
}

/* Starts @n copies of this binary as @role; returns their pids in @pids. */
static void spawn_role(const char *role, long n, const char *ms, long kids, pid_t *pids)
{
	char kids_s[32];
	char *argv[] = {
		(char *)sa_self_path(), "-r", (char *)role, "-m", (char *)ms, "-g", kids_s, NULL};
	long i;

	snprintf(kids_s, sizeof(kids_s), "%ld", kids);
	for (i = 0; i < n; i++)
		pids[i] = sa_spawn(argv);
}

static int wait_all(const pid_t *pids, long n)
{
	int failed = 0;
	long i;

	for (i = 0; i < n; i++)
		if (sa_wait(pids[i]) != 0)
			failed = 1;
	return failed;
}

int main(int argc, char **argv)
{
	const char *role = "parent", *ms_s = "500";
	long children = 2, grandchildren = 2, status = 0;
	pid_t pids[64];
	uint64_t c0;
	double ms;
	int opt, failed;

	while ((opt = getopt(argc, argv, "c:g:m:x:r:h")) != -1) {
		switch (opt) {
		case 'c':
			children = sa_parse_long(argv[0], "-c", optarg);
			break;
		case 'g':
			grandchildren = sa_parse_long(argv[0], "-g", optarg);
			break;
		case 'm':
			ms_s = optarg;
			break;
		case 'x':
			status = sa_parse_long(argv[0], "-x", optarg);
			break;
		case 'r':
			role = optarg;
			break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: %s [-c CHILDREN] [-g GRANDCHILDREN] [-m MS] [-x STATUS]\n"
				"  CHILDREN (default 2) each start GRANDCHILDREN (default 2); "
				"every\n"
				"  process burns MS ms of CPU (default 500) in sa_forker_parent,\n"
				"  sa_forker_child or sa_forker_grandchild; exits with STATUS\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	ms = sa_parse_double(argv[0], "-m", ms_s);
	if (optind != argc || children > 64 || grandchildren > 64 || status > 255) {
		fprintf(stderr, "%s: bad arguments\n", argv[0]);
		return 2;
	}
	chunk_iters = sa_calibrate(500000);
	c0 = sa_thread_cpu_ns();
	if (!strcmp(role, "grandchild")) {
		prctl(PR_SET_NAME, "forker-grand");
		sa_forker_grandchild((uint64_t)(ms * 1e6));
		failed = 0;
	} else if (!strcmp(role, "child")) {
		prctl(PR_SET_NAME, "forker-child");
		spawn_role("grandchild", grandchildren, ms_s, 0, pids);
		sa_forker_child((uint64_t)(ms * 1e6));
		failed = wait_all(pids, grandchildren);
	} else if (!strcmp(role, "parent")) {
		spawn_role("child", children, ms_s, grandchildren, pids);
		sa_forker_parent((uint64_t)(ms * 1e6));
		failed = wait_all(pids, children);
	} else {
		fprintf(stderr, "%s: unknown role '%s'\n", argv[0], role);
		return 2;
	}
	printf("forker: pid %d role %s cpu %.4f s in sa_forker_%s\n", (int)getpid(), role,
	       (sa_thread_cpu_ns() - c0) / 1e9, role);
	fflush(stdout);
	if (failed) {
		fprintf(stderr, "forker: a process under pid %d failed\n", (int)getpid());
		return 1;
	}
	return !strcmp(role, "parent") ? (int)status : 0;
}
