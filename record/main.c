// SPDX-License-Identifier: MIT
/*
 * main.c - sa-record's command line: parse and check the options, spawn the
 * `-- CMD` child, hand over to rec_run(). Exit codes: 0, 1 on failure, 2 on
 * a usage error; with `-- CMD` its status, 125 for our failures, 126/127.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "loop.h"
#include "record.h"
#include "rotate.h"
#include "target.h"
#include "grow.h"
#include "kfeatures.h"

static const char usage_text[] =
	"Usage: sa-record [OPTIONS] [-- CMD [ARGS...]]\n"
	"Sample on-CPU stacks with eBPF and write them to an .sa file for sa-report.\n"
	"\n"
	"Target (default -a):\n"
	"  -a, --all-cpus           the whole system (with -- CMD: for as long as CMD runs)\n"
	"  -p, --pid PID[,PID...]   these processes, all their threads\n"
	"  -t, --tid TID[,TID...]   these threads\n"
	"  -G, --cgroup PATH        tasks in this cgroup v2 directory and below; absolute\n"
	"                           or relative to the cgroup2 mount\n"
	"  -- CMD [ARGS...]         run CMD, record it and every process it starts, stop\n"
	"                           when it exits and exit with its status\n"
	"Sampling:\n"
	"  -F, --freq HZ            samples per second per CPU (default 99)\n"
	"  -e, --event EVENT        cpu-clock (default) or cycles (needs a hardware PMU)\n"
	"  -C, --cpu LIST           only these CPUs, e.g. 0-3,6\n"
	"  -U, --user-only          user stacks only\n"
	"  -K, --kernel-only        kernel stacks only\n"
	"      --idle               keep samples of the idle task (pid 0)\n"
	"  -g                       accepted for perf's habit; stacks are always taken\n"
	"      --call-graph MODE    fp (default): frame-pointer walk, counted in the kernel;\n"
	"                           dwarf: registers and a copy of the user stack per sample,\n"
	"                           unwound by sa-report with the binaries' CFI;\n"
	"                           auto: user stacks walked in the kernel from each\n"
	"                           binary's CFI tables, counted like fp; dwarf's copy\n"
	"                           only where no table covers the walk (a process's first\n"
	"                           10-100 ms, a table over the 16 MiB budget)\n"
	"      --stack-size SIZE    dwarf, auto: user stack bytes copied per sample (default 16k,\n"
	"                           at most 32k; cut at the end of the stack)\n"
	"      --whole-stack        dwarf, auto: keep each copy whole (by default only the\n"
	"                           words sa-report's unwind reads are kept, found by\n"
	"                           walking the copy here with the binaries' .eh_frame)\n"
	"      --no-python          do not read CPython 3.11 frames (read by default in fp and\n"
	"                           auto modes, and off-CPU in all; sa-report puts them in\n"
	"                           place of the eval loop)\n"
	"Off-CPU time:\n"
	"      --off-cpu            also time every stay of a target thread off the CPU, by\n"
	"                           the stacks it left with (sa-report --off-cpu, --wall);\n"
	"                           user stacks walked in the kernel from CFI, any MODE\n"
	"      --off-cpu-min USEC   skip stays shorter than USEC microseconds (default 0)\n"
	"Output:\n"
	"  -o, --output FILE        default record.sa; an existing FILE becomes FILE.old\n"
	"      --duration SECONDS   stop after this long (default: Ctrl-C or SIGTERM)\n"
	"      --interval SECONDS   drain the kernel maps this often (default 1)\n"
	"      --max-size SIZE      stop when the file reaches SIZE (k, M, G suffixes)\n"
	"      --rotate WHEN        close the file and start the next at the first interval\n"
	"                           end past WHEN: a duration (30s, 10m, 2h, 1d) or a size\n"
	"                           (64M, 1G); files are named FILE's stem plus their start\n"
	"                           in UTC: host.sa -> host-20261201T140200.000Z.sa\n"
	"      --keep N             with --rotate: delete the oldest closed files beyond N\n"
	"      --keep-size SIZE     with --rotate: ... beyond SIZE bytes in total\n"
	"  -q, --quiet              no status line and no summary\n"
	"Kernel memory:\n"
	"      --stack-map-size N   stack-map slots per map set (2 sets; ~1 KiB each)\n"
	"      --counts-map-size N  distinct (thread, stacks) keys per interval\n"
	"      --ringbuf-size SIZE  collision-recovery ring buffer\n"
	"      --no-embed-symbols   do not carry ELF symbols of sampled binaries in the file\n"
	"  -h, --help, -V, --version\n"
	"\n"
	"By default stacks are walked with frame pointers (bpf_get_stackid). Code built\n"
	"without them (-fomit-frame-pointer, the default of many distributions' -O2)\n"
	"gives truncated user stacks: often only the sampled function and one wrong\n"
	"caller; a leaf without its own frame is charged past its caller. For such\n"
	"code use --call-graph auto, or dwarf (larger files; sa-report then needs the\n"
	"sampled binaries, which hold the unwind tables). Kernel stacks are complete (ORC).\n"
	"Stacks deeper than 127 frames are cut and counted as truncated.\n";

enum {
	OPT_IDLE = 256,
	OPT_DURATION,
	OPT_INTERVAL,
	OPT_MAX_SIZE,
	OPT_STACK_MAP,
	OPT_COUNTS_MAP,
	OPT_RINGBUF,
	OPT_NO_EMBED,
	OPT_CALL_GRAPH,
	OPT_STACK_SIZE,
	OPT_WHOLE_STACK,
	OPT_OFF_CPU,
	OPT_OFF_CPU_MIN,
	OPT_ROTATE,
	OPT_KEEP,
	OPT_KEEP_SIZE,
	OPT_NO_PYTHON,
};

static const struct option long_opts[] = {
	{"all-cpus", no_argument, NULL, 'a'},
	{"pid", required_argument, NULL, 'p'},
	{"tid", required_argument, NULL, 't'},
	{"cgroup", required_argument, NULL, 'G'},
	{"freq", required_argument, NULL, 'F'},
	{"event", required_argument, NULL, 'e'},
	{"cpu", required_argument, NULL, 'C'},
	{"user-only", no_argument, NULL, 'U'},
	{"kernel-only", no_argument, NULL, 'K'},
	{"idle", no_argument, NULL, OPT_IDLE},
	{"output", required_argument, NULL, 'o'},
	{"quiet", no_argument, NULL, 'q'},
	{"duration", required_argument, NULL, OPT_DURATION},
	{"interval", required_argument, NULL, OPT_INTERVAL},
	{"max-size", required_argument, NULL, OPT_MAX_SIZE},
	{"stack-map-size", required_argument, NULL, OPT_STACK_MAP},
	{"counts-map-size", required_argument, NULL, OPT_COUNTS_MAP},
	{"ringbuf-size", required_argument, NULL, OPT_RINGBUF},
	{"no-embed-symbols", no_argument, NULL, OPT_NO_EMBED},
	{"call-graph", required_argument, NULL, OPT_CALL_GRAPH},
	{"stack-size", required_argument, NULL, OPT_STACK_SIZE},
	{"whole-stack", no_argument, NULL, OPT_WHOLE_STACK},
	{"off-cpu", no_argument, NULL, OPT_OFF_CPU},
	{"off-cpu-min", required_argument, NULL, OPT_OFF_CPU_MIN},
	{"rotate", required_argument, NULL, OPT_ROTATE},
	{"keep", required_argument, NULL, OPT_KEEP},
	{"keep-size", required_argument, NULL, OPT_KEEP_SIZE},
	{"no-python", no_argument, NULL, OPT_NO_PYTHON},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{0},
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "sa-record: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'sa-record --help'.\n");
	return REC_EXIT_USAGE;
}

/* "64k", "10M", "1G" -> bytes; 0 on a bad value */
static uint64_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	uint64_t mul = 1;

	if (end == s || v <= 0)
		return 0;
	switch (*end) {
	case 'k':
	case 'K':
		mul = 1ull << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mul = 1ull << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mul = 1ull << 30;
		end++;
		break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	return *end ? 0 : (uint64_t)(v * mul);
}

static double parse_seconds(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	return end == s || *end || v <= 0 || v > 1e7 ? -1 : v;
}

/*
 * A sample here costs the BPF program 7-15 us (bpf_stats on the 2-CPU test
 * VM, 999-10,000 Hz, 2026-12-02) plus its timer interrupt: 25 us is what
 * -F is sized by against kernel.perf_cpu_time_max_percent. The kernel
 * checks that share only for hardware events (in their NMI handler); a
 * cpu-clock event at 50,000 Hz took the recorder's CPUs from under it.
 */
#define REC_SAMPLE_NS 50000

static long sysctl_long(const char *name, long dflt)
{
	char path[96];
	FILE *f;
	long v;

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	f = fopen(path, "re");
	if (!f)
		return dflt;
	if (fscanf(f, "%ld", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

/*
 * -F over what this host allows now is lowered to it, and said
 * (docs/reliability.md, "Rates"): kernel.perf_event_max_sample_rate (which
 * the kernel itself lowers when sampling interrupts run long), and the
 * rate at which samples take kernel.perf_cpu_time_max_percent of a CPU (0
 * or 100: no such limit, as for the kernel).
 */
static void clamp_rate(struct rec_opts *o)
{
	long kmax = sysctl_long("perf_event_max_sample_rate", 100000);
	long pct = sysctl_long("perf_cpu_time_max_percent", 25);
	long cpu_max = pct > 0 && pct < 100 ? pct * (1000000000l / 100) / REC_SAMPLE_NS : kmax;
	long lim = kmax < cpu_max ? kmax : cpu_max;

	if (lim < 1)
		lim = 1;
	if ((long)o->freq <= lim)
		return;
	fprintf(stderr,
		"sa-record: -F %u is over what this host allows: sampling at %ld Hz "
		"(kernel.perf_event_max_sample_rate = %ld; kernel.perf_cpu_time_max_percent "
		"= %ld at about %d us a sample)\n",
		o->freq, lim, kmax, pct, REC_SAMPLE_NS / 1000);
	o->freq = (unsigned int)lim;
}

static char *join(int argc, char **argv, const char *prefix)
{
	size_t len = strlen(prefix) + 1;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	strcpy(s, prefix);
	for (i = 0; i < argc; i++) {
		if (s[0])
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* --call-graph and --stack-size (docs/unwinding.md) */
static int parse_unwind_opt(struct rec_opts *o, int c, const char *arg)
{
	uint64_t v;

	if (c == OPT_STACK_SIZE) {
		v = parse_size(arg);
		if (v < 64 || v > SA_USTACK_MAX)
			return usage_error("bad stack size '%s' (64 .. 32k)", arg);
		o->stack_size = (__u32)v & ~7u;
		return 0;
	}
	if (!strcmp(arg, "fp"))
		o->call_graph = SA_CG_FP;
	else if (!strcmp(arg, "dwarf"))
		o->call_graph = SA_CG_DWARF;
	else if (!strcmp(arg, "auto"))
		o->call_graph = SA_CG_AUTO;
	else
		return usage_error("unknown call graph mode '%s' (fp, dwarf or auto)", arg);
#if !defined(__x86_64__)
	if (o->call_graph != SA_CG_FP)
		return usage_error("--call-graph %s is implemented for x86-64 only", arg);
#endif
	return 0;
}

static int parse_opt(struct rec_opts *o, int c, const char *arg, int *ntargets)
{
	char *end;
	long v;

	switch (c) {
	case 'a':
		o->all = true;
		break;
	case 'p':
	case 't':
		if (rec_parse_id_list(arg, &o->ids, &o->nids))
			return usage_error("bad PID list '%s'", arg);
		o->filter = c == 'p' ? SA_FILTER_TGID : SA_FILTER_TID;
		++*ntargets;
		break;
	case 'G':
		o->cgroup = arg;
		o->filter = SA_FILTER_CGROUP;
		++*ntargets;
		break;
	case 'F':
		errno = 0;
		v = strtol(arg, &end, 10);
		if (*end || end == arg || v < 1 || v > 1000000000l || errno)
			return usage_error("bad frequency '%s': give 1 .. "
					   "kernel.perf_event_max_sample_rate Hz",
					   arg);
		o->freq = v; /* lowered to what the host allows by check() */
		break;
	case 'e':
		o->event = arg;
		if (!strcmp(arg, "cycles") || !strcmp(arg, "cpu-cycles"))
			o->cycles = true;
		else if (strcmp(arg, "cpu-clock"))
			return usage_error("unknown event '%s' (cpu-clock or cycles)", arg);
		break;
	case 'C':
		if (rec_parse_cpu_list(arg, &o->cpus, &o->ncpus))
			return usage_error("bad CPU list '%s'", arg);
		break;
	case 'U':
		o->user_only = true;
		break;
	case 'K':
		o->kernel_only = true;
		break;
	case 'g':
		break;
	case 'q':
		o->quiet = true;
		break;
	case 'o':
		o->output = arg;
		break;
	case OPT_IDLE:
		o->idle = true;
		break;
	case OPT_NO_EMBED:
		o->no_embed_symbols = true;
		break;
	case OPT_NO_PYTHON:
		o->no_python = true;
		break;
	case OPT_WHOLE_STACK:
		o->whole_stack = true;
		break;
	case OPT_OFF_CPU:
		o->off_cpu = true;
		break;
	case OPT_OFF_CPU_MIN:
		v = strtol(arg, &end, 10);
		if (*end || end == arg || v < 0 || v > 3600000000l)
			return usage_error("bad --off-cpu-min '%s' (microseconds)", arg);
		o->off_cpu_min_ns = (uint64_t)v * 1000;
		break;
	case OPT_CALL_GRAPH:
	case OPT_STACK_SIZE:
		return parse_unwind_opt(o, c, arg);
	case OPT_DURATION:
		if ((o->duration = parse_seconds(arg)) < 0)
			return usage_error("bad duration '%s'", arg);
		break;
	case OPT_INTERVAL:
		if ((o->interval = parse_seconds(arg)) < 0.01)
			return usage_error("bad interval '%s' (at least 0.01 s)", arg);
		break;
	case OPT_MAX_SIZE:
		if (!(o->max_size = parse_size(arg)))
			return usage_error("bad size '%s'", arg);
		break;
	case OPT_ROTATE:
		if (rec_rotate_parse(arg, &o->rotate_secs, &o->rotate_bytes))
			return usage_error("bad --rotate '%s' (e.g. 10m, 30s, 64M)", arg);
		break;
	case OPT_KEEP:
		if ((v = strtol(arg, &end, 10)) < 1 || *end || v > 1000000)
			return usage_error("bad --keep '%s'", arg);
		o->keep = (unsigned int)v;
		break;
	case OPT_KEEP_SIZE:
		if (!(o->keep_size = parse_size(arg)))
			return usage_error("bad size '%s'", arg);
		break;
	case OPT_STACK_MAP:
	case OPT_COUNTS_MAP:
	case OPT_RINGBUF:
		v = c == OPT_RINGBUF ? (long)parse_size(arg) : strtol(arg, &end, 10);
		if (v < 1 || v > (1l << 30) || (c != OPT_RINGBUF && *end))
			return usage_error("bad size '%s'", arg);
		*(c == OPT_STACK_MAP	? &o->stack_map_size
		  : c == OPT_COUNTS_MAP ? &o->counts_map_size
					: &o->ringbuf_size) = v;
		break;
	default:
		return usage_error("%s", "bad option");
	}
	return 0;
}

static int check(struct rec_opts *o, int ntargets)
{
	int i;

	if (ntargets > 1 || (ntargets && o->all))
		return usage_error("%s", "give one of -a, -p, -t, -G");
	if (ntargets && o->cmd && o->filter != SA_FILTER_CGROUP)
		return usage_error("%s", "-p and -t do not combine with -- CMD");
	if (o->user_only && o->kernel_only)
		return usage_error("%s", "-U and -K exclude each other");
	if (o->off_cpu_min_ns && !o->off_cpu)
		return usage_error("%s", "--off-cpu-min needs --off-cpu");
	if (!o->output[0])
		return usage_error("%s", "empty output file name");
	if ((o->keep || o->keep_size) && !o->rotate_secs && !o->rotate_bytes)
		return usage_error("%s", "--keep and --keep-size need --rotate");
	clamp_rate(o);
	/* a stay can outlive a file, and its stacks with it (docs/deploy.md) */
	if (o->cmd && !o->all && !ntargets)
		o->filter = SA_FILTER_TGID; /* CMD and its descendants */
	for (i = 0; i < o->nids; i++) {
		char path[32];

		snprintf(path, sizeof(path), "/proc/%d", o->ids[i]);
		if (access(path, F_OK)) {
			fprintf(stderr, "sa-record: no such %s: %d\n",
				o->filter == SA_FILTER_TID ? "thread" : "process", o->ids[i]);
			return REC_EXIT_FAIL;
		}
	}
	return 0;
}

/* The version, then the running kernel's features, one a line (probed as root). */
static int version(void)
{
	const struct rec_kfeatures *f;
	char line[256];
	int i;

	printf("sa-record %s\n", SA_VERSION);
	fflush(stdout);
	f = rec_kfeatures__get();
	for (i = 0; rec_kfeatures__describe(f, i, line, sizeof(line)); i++)
		printf("kernel feature %s\n", line);
	return 0;
}

static int parse(struct rec_opts *o, int argc, char **argv)
{
	const char *target_arg = "";
	int c, err, ntargets = 0;

	while ((c = getopt_long(argc, argv, "+ap:t:G:F:e:C:UKgqo:hV", long_opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			exit(0);
		}
		if (c == 'V')
			exit(version());
		if (c == '?')
			return REC_EXIT_USAGE;
		if ((err = parse_opt(o, c, optarg, &ntargets)))
			return err;
		if (c == 'p' || c == 't' || c == 'G')
			target_arg = optarg;
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	err = check(o, ntargets);
	if (err)
		return err;
	o->cmdline = join(argc, argv, "");
	if (o->cmd && o->filter != SA_FILTER_CGROUP)
		o->target_desc = join(argc - optind, argv + optind, o->all ? "-a --" : "--");
	else if (o->filter == SA_FILTER_ALL)
		o->target_desc = join(0, NULL, "-a");
	else
		o->target_desc = join(1, (char **)&target_arg,
				      o->filter == SA_FILTER_TGID  ? "-p"
				      : o->filter == SA_FILTER_TID ? "-t"
								   : "-G");
	return o->cmdline && o->target_desc ? 0 : REC_EXIT_FAIL;
}

int main(int argc, char **argv)
{
	struct rec_opts o = {
		.freq = 99,
		.event = "cpu-clock",
		.interval = 1.0,
		.output = "record.sa",
		.call_graph = SA_CG_FP,
		.stack_size = 16384,
	};
	int go = -1, status = -1, wstatus, err;
	char line[512];
	pid_t child = 0;

	rec_signals__install(); /* a stop from the exec on ends the start-up */
	err = parse(&o, argc, argv);
	if (err)
		goto cleanup;
	/* a mode this kernel cannot run: one line, before any file or child */
	if (rec_kfeatures__refusal(rec_kfeatures__get(), &o, line, sizeof(line))) {
		fprintf(stderr, "sa-record: %s\n", line);
		err = o.cmd ? REC_EXIT_CMD_FAIL : REC_EXIT_FAIL;
		goto cleanup;
	}
	if (o.cmd) {
		child = rec_child__spawn(o.cmd, &go, &status);
		if (child < 0) {
			fprintf(stderr, "sa-record: fork: %s\n", strerror(-child));
			err = REC_EXIT_CMD_FAIL;
			goto cleanup;
		}
	}
	rec_start__hold("spawn");
	err = rec_run(&o, child, go, status, &wstatus);
cleanup:
	SAC_FREE_ALL(o.cmdline, o.target_desc, o.ids, o.cpus);
	return err;
}
