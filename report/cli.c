// SPDX-License-Identifier: MIT
/*
 * cli.c - sa-report's command line: the options, their checks and --help
 * (cli.h). main.c runs what it parsed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

enum {
	O_TOP = 256,
	O_INFO,
	O_SVG,
	O_DIFF,
	O_COMM,
	O_PID,
	O_TID,
	O_TIME,
	O_SINCE,
	O_UNTIL,
	O_FOCUS,
	O_IGNORE,
	O_MINPCT,
	O_SHOWPID,
	O_SHOWTID,
	O_ANNOT,
	O_ADDRS,
	O_LINES,
	O_NODEM,
	O_DEBUGDIR,
	O_SYMFS,
	O_SORT,
	O_ROWS,
	O_TITLE,
	O_WIDTH,
	O_MINW,
	O_INV,
	O_NONORM,
	O_NEGATE,
	O_VERSION,
	O_PPROF,
	O_SPEEDSCOPE,
	O_OFFCPU,
	O_WALL,
	O_STATE,
	O_NOCACHE,
	O_SHORT,
};

static const struct option long_opts[] = {
	{"top", 0, NULL, O_TOP},
	{"info", 0, NULL, O_INFO},
	{"svg", 0, NULL, O_SVG},
	{"pprof", 0, NULL, O_PPROF},
	{"speedscope", 0, NULL, O_SPEEDSCOPE},
	{"diff", 0, NULL, O_DIFF},
	{"off-cpu", 0, NULL, O_OFFCPU},
	{"wall", 0, NULL, O_WALL},
	{"state", 1, NULL, O_STATE},
	{"output", 1, NULL, 'o'},
	{"input", 1, NULL, 'i'},
	{"comm", 1, NULL, O_COMM},
	{"pid", 1, NULL, O_PID},
	{"tid", 1, NULL, O_TID},
	{"user-only", 0, NULL, 'U'},
	{"kernel-only", 0, NULL, 'K'},
	{"time", 1, NULL, O_TIME},
	{"since", 1, NULL, O_SINCE},
	{"until", 1, NULL, O_UNTIL},
	{"focus", 1, NULL, O_FOCUS},
	{"ignore", 1, NULL, O_IGNORE},
	{"min-percent", 1, NULL, O_MINPCT},
	{"percent-limit", 1, NULL, O_MINPCT},
	{"show-pid", 0, NULL, O_SHOWPID},
	{"show-tid", 0, NULL, O_SHOWTID},
	{"annotate-frames", 0, NULL, O_ANNOT},
	{"addrs", 0, NULL, O_ADDRS},
	{"lines", 0, NULL, O_LINES},
	{"no-demangle", 0, NULL, O_NODEM},
	{"debug-dir", 1, NULL, O_DEBUGDIR},
	{"symfs", 1, NULL, O_SYMFS},
	{"no-cache", 0, NULL, O_NOCACHE},
	{"sort", 1, NULL, O_SORT},
	{"rows", 1, NULL, O_ROWS},
	{"title", 1, NULL, O_TITLE},
	{"width", 1, NULL, O_WIDTH},
	{"min-width", 1, NULL, O_MINW},
	{"minwidth", 1, NULL, O_MINW},
	{"inverted", 0, NULL, O_INV},
	{"short-names", 0, NULL, O_SHORT},
	{"no-normalize", 0, NULL, O_NONORM},
	{"negate", 0, NULL, O_NEGATE},
	{"verbose", 0, NULL, 'v'},
	{"quiet", 0, NULL, 'q'},
	{"version", 0, NULL, O_VERSION},
	{"help", 0, NULL, 'h'},
	{0},
};

static void usage(FILE *f)
{
	fputs("usage: sa-report [MODE] [OPTIONS] FILE... (- reads standard input)\n"
	      "modes: (default) folded stacks | --top | --info | --svg | --pprof | --speedscope\n"
	      "       --diff [--top|--svg] BEFORE AFTER\n"
	      "inputs: sa recordings, folded stacks, perf script text (found by content)\n"
	      "  --off-cpu             time off the CPU by stack (sa-record --off-cpu), in us\n"
	      "  --wall                on-CPU samples as time plus off-CPU time, per thread\n"
	      "  --state blocked|runnable  only waits that blocked, or were preempted\n"
	      "  -o, --output FILE     write there instead of stdout\n"
	      "  -i, --input FILE      an input (also positional; several are merged)\n"
	      "  --comm LIST --pid LIST --tid LIST   keep only these (comma-separated)\n"
	      "  -U, --user-only       user frames only    -K, --kernel-only  kernel only\n"
	      "  --time FROM-TO        seconds from the start; an interval counts when its\n"
	      "                        midpoint is in [FROM, TO)\n"
	      "  --since TIME --until TIME   wall-clock range over all inputs (e.g. rotated\n"
	      "                        files): HH:MM[:SS] today, local time, or ISO 8601\n"
	      "                        2026-12-01T14:02:00Z (or +01:00; no zone: local)\n"
	      "  --focus RE --ignore RE --min-percent P (--percent-limit P)\n"
	      "  --show-pid --show-tid --annotate-frames --addrs --lines --no-demangle\n"
	      "  --debug-dir DIR (repeatable)  --symfs DIR\n"
	      "  --no-cache            neither read nor write the symbol cache\n"
	      "                        ($XDG_CACHE_HOME/sa, else ~/.cache/sa)\n"
	      "  --sort self|total --rows N      (--top)\n"
	      "  --title T --width PX --min-width PX --inverted --short-names (--svg)\n"
	      "  --no-normalize --negate         (--diff)\n"
	      "  -v, --verbose  -q, --quiet  --version  -h, --help\n"
	      "exit status: 0 shown, 1 failed, 2 usage error, 3 shown but an input of a set\n"
	      "could not be read (newer format, not a recording) and was skipped\n"
	      "Stacks recorded with --call-graph fp are frame-pointer walks: code built\n"
	      "without frame pointers shows truncated stacks (--info names such binaries).\n"
	      "Stack copies of --call-graph dwarf or auto are unwound here with the sampled\n"
	      "binaries' CFI (same build ids; --symfs where they are elsewhere).\n",
	      f);
}

static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "sa-report: invalid %s '%s'\n", what, arg);
	return -EINVAL;
}

static int num(const char *arg, double *v, const char *what)
{
	char *end;

	*v = strtod(arg, &end);
	return end == arg || *end || *v < 0 ? bad(what, arg) : 0;
}

/* A decimal number of seconds, as written: digits, at most one '.', no sign, hex or exponent. */
static double seconds(const char *p, const char **end)
{
	size_t n = strspn(p, "0123456789"), m = 0;

	if (p[n] == '.')
		m = 1 + strspn(p + n + 1, "0123456789");
	*end = p + n + m;
	return n + m > (m ? 1 : 0) ? strtod(p, NULL) : -1;
}

static int bad_time(const char *arg)
{
	fprintf(stderr,
		"sa-report: invalid --time '%s' (expected FROM-TO or FROM- in seconds since "
		"the start, decimal: 2-5.5, 10-)\n",
		arg);
	return -EINVAL;
}

static int parse_time(struct rpt_filter *f, const char *arg)
{
	const char *end;

	f->time_from = seconds(arg, &end);
	if (f->time_from < 0 || *end != '-')
		return bad_time(arg);
	f->time_to = end[1] ? seconds(end + 1, &end) : 1e18;
	if (!end[1] && f->time_to >= 1e18)
		end++;
	f->has_time = true;
	return f->time_to < 0 || *end || f->time_to < f->time_from ? bad_time(arg) : 0;
}

static int parse_wall(struct rpt_filter *f, bool since, const char *arg)
{
	int64_t ns;

	if (rpt_parse_wall_time(arg, time(NULL), &ns)) {
		fprintf(stderr,
			"sa-report: invalid %s '%s' (expected [YYYY-MM-DD ]HH:MM[:SS[.frac]], "
			"local time, or with Z or +HH:MM, as written: no 2026-02-30 or 24:00)\n",
			since ? "--since" : "--until", arg);
		return -EINVAL;
	}
	if (!f->has_wall) {
		f->wall_from_ns = INT64_MIN;
		f->wall_to_ns = INT64_MAX;
		f->has_wall = true;
	}
	*(since ? &f->wall_from_ns : &f->wall_to_ns) = ns;
	return 0;
}

static int set_mode(struct rpt_cli *c, int mode)
{
	c->mode = mode;
	c->nmodes++;
	return 0;
}

/* One option; @return 0, -EINVAL (usage error), or 1 to exit 0 at once. */
static int parse_opt(struct rpt_cli *c, int opt, const char *arg)
{
	struct rpt_filter *f = &c->so.filter;
	double v;

	switch (opt) {
	case O_TOP:
		return set_mode(c, RPT_M_TOP);
	case O_INFO:
		return set_mode(c, RPT_M_INFO);
	case O_SVG:
		return set_mode(c, RPT_M_SVG);
	case O_PPROF:
		return set_mode(c, RPT_M_PPROF);
	case O_SPEEDSCOPE:
		return set_mode(c, RPT_M_SPEEDSCOPE);
	case O_DIFF:
		c->diff = true;
		return 0;
	case O_OFFCPU:
	case O_WALL:
		c->so.value = opt == O_WALL ? RPT_VALUE_WALL : RPT_VALUE_OFF_CPU;
		c->so.show_tid |= opt == O_WALL; /* where each thread's time went */
		return 0;
	case O_STATE:
		if (strcmp(arg, "blocked") && strcmp(arg, "runnable"))
			return bad("--state", arg);
		c->so.off_state = arg[0] == 'b' ? RPT_OFF_BLOCKED : RPT_OFF_RUNNABLE;
		return 0;
	case 'o':
		c->out = arg;
		return 0;
	case 'i':
		if (c->ninputs == RPT_MAX_INPUTS)
			return bad("input count", arg);
		c->inputs[c->ninputs++] = arg;
		return 0;
	case O_COMM:
		f->comm = arg;
		return 0;
	case O_PID:
		f->pid = arg;
		return strspn(arg, "0123456789,") == strlen(arg) ? 0 : bad("--pid", arg);
	case O_TID:
		f->tid = arg;
		return strspn(arg, "0123456789,") == strlen(arg) ? 0 : bad("--tid", arg);
	case 'U':
		f->user_only = true;
		return 0;
	case 'K':
		f->kernel_only = true;
		return 0;
	case O_TIME:
		return parse_time(f, arg);
	case O_SINCE:
	case O_UNTIL:
		return parse_wall(f, opt == O_SINCE, arg);
	case O_FOCUS:
		c->focus = arg;
		return 0;
	case O_IGNORE:
		c->ignore = arg;
		return 0;
	case O_MINPCT:
		return num(arg, &c->min_percent, "--min-percent");
	case O_SHOWPID:
		c->so.show_pid = true;
		return 0;
	case O_SHOWTID:
		c->so.show_tid = true;
		return 0;
	case O_ANNOT:
		c->annotate = true;
		return 0;
	case O_ADDRS:
		c->so.addrs = true;
		return 0;
	case O_LINES:
		c->so.sym.lines = true;
		return 0;
	case O_NODEM:
		c->so.sym.no_demangle = true;
		return 0;
	case O_NOCACHE:
		c->so.sym.no_cache = true;
		return 0;
	case O_DEBUGDIR:
		if (c->so.sym.ndebug_dirs == RPT_MAX_DEBUG_DIRS)
			return bad("--debug-dir count", arg);
		c->debug_dirs[c->so.sym.ndebug_dirs++] = arg;
		return 0;
	case O_SYMFS:
		c->so.sym.symfs = arg;
		return 0;
	case O_SORT:
		c->sort_total = !strcmp(arg, "total");
		return c->sort_total || !strcmp(arg, "self") ? 0 : bad("--sort", arg);
	case O_ROWS:
		if (num(arg, &v, "--rows"))
			return -EINVAL;
		c->rows = v;
		return 0;
	case O_TITLE:
		c->title = arg;
		return 0;
	case O_WIDTH:
		if (num(arg, &v, "--width"))
			return -EINVAL;
		c->width = v;
		return 0;
	case O_MINW:
		return num(arg, &c->min_width, "--min-width");
	case O_INV:
		c->inverted = true;
		return 0;
	case O_SHORT:
		c->short_names = true;
		return 0;
	case O_NONORM:
		c->no_normalize = true;
		return 0;
	case O_NEGATE:
		c->negate = true;
		return 0;
	case 'v':
		c->verbose = true;
		return 0;
	case 'q':
		c->quiet = c->so.quiet = true;
		return 0;
	case O_VERSION:
		printf("sa-report %s\n", SA_VERSION);
		return 1;
	case 'h':
		usage(stdout);
		return 1;
	default:
		usage(stderr);
		return -EINVAL;
	}
}

int rpt_cli__parse(struct rpt_cli *c, int argc, char **argv)
{
	int opt, err;

	c->min_width = -1;
	c->so.progress = isatty(STDERR_FILENO);
	c->so.sym.debug_dirs = c->debug_dirs;
	while ((opt = getopt_long(argc, argv, "o:i:UKvqh", long_opts, NULL)) != -1)
		if ((err = parse_opt(c, opt, optarg)))
			return err;
	for (; optind < argc; optind++) {
		if (c->ninputs == RPT_MAX_INPUTS)
			return bad("input count", argv[optind]);
		c->inputs[c->ninputs++] = argv[optind];
	}
	if (c->nmodes > 1 || (c->diff && c->mode >= RPT_M_INFO && c->mode != RPT_M_SVG)) {
		fprintf(stderr, "sa-report: choose one mode (--diff may take --top or --svg)\n");
		return -EINVAL;
	}
	if (!c->ninputs || (c->diff && c->ninputs != 2)) {
		fprintf(stderr, "sa-report: %s\n",
			c->diff ? "--diff takes exactly two inputs" : "no input file");
		return -EINVAL;
	}
	if (c->so.filter.user_only && c->so.filter.kernel_only)
		return bad("combination", "-U -K");
	if (c->so.off_state && c->so.value == RPT_VALUE_SAMPLES)
		return bad("combination", "--state without --off-cpu or --wall");
	/* -K looks up no user frame: no debug file to inflate ahead */
	c->so.sym.no_prefetch = c->so.filter.kernel_only;
	return 0;
}
