// SPDX-License-Identifier: MIT
/*
 * main.c - sa-report's command line: parses options, runs the session
 * (read, filter, symbolize, aggregate) and calls one writer of output.h.
 * Exit status (docs/sa-report.1): 0 when a profile was shown, partial ones
 * included; 1 when nothing usable was read or on a runtime failure; 2 for a
 * usage error or a --time range outside the recordings.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "export.h"
#include "input.h"
#include "output.h"
#include "session.h"

#define MAX_INPUTS     256
#define MAX_DEBUG_DIRS 32

enum { M_FOLDED, M_TOP, M_INFO, M_SVG, M_PPROF, M_SPEEDSCOPE };

struct cli {
	struct rpt_session_opts so;
	const char *inputs[MAX_INPUTS], *debug_dirs[MAX_DEBUG_DIRS];
	int ninputs, nmodes, mode;
	int ntext, nfolded; /* inputs of text, of folded text read */
	bool diff, verbose, quiet, annotate, sort_total, inverted, no_normalize, negate,
		short_names;
	const char *out, *focus, *ignore, *title;
	double min_percent, min_width;
	unsigned rows, width;
};

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

static int parse_time(struct rpt_filter *f, const char *arg)
{
	char *end;

	f->time_from = strtod(arg, &end);
	if (end == arg || *end != '-')
		return bad("--time", arg);
	f->time_to = end[1] ? strtod(end + 1, &end) : 1e18;
	f->has_time = true;
	return *end || f->time_to < f->time_from ? bad("--time", arg) : 0;
}

static int parse_wall(struct rpt_filter *f, bool since, const char *arg)
{
	int64_t ns;

	if (rpt_parse_wall_time(arg, time(NULL), &ns))
		return bad(since ? "--since" : "--until", arg);
	if (!f->has_wall) {
		f->wall_from_ns = INT64_MIN;
		f->wall_to_ns = INT64_MAX;
		f->has_wall = true;
	}
	*(since ? &f->wall_from_ns : &f->wall_to_ns) = ns;
	return 0;
}

static int set_mode(struct cli *c, int mode)
{
	c->mode = mode;
	c->nmodes++;
	return 0;
}

/* One option; @return 0, -EINVAL (usage error), or 1 to exit 0 at once. */
static int parse_opt(struct cli *c, int opt, const char *arg)
{
	struct rpt_filter *f = &c->so.filter;
	double v;

	switch (opt) {
	case O_TOP:
		return set_mode(c, M_TOP);
	case O_INFO:
		return set_mode(c, M_INFO);
	case O_SVG:
		return set_mode(c, M_SVG);
	case O_PPROF:
		return set_mode(c, M_PPROF);
	case O_SPEEDSCOPE:
		return set_mode(c, M_SPEEDSCOPE);
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
		if (c->ninputs == MAX_INPUTS)
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
		if (c->so.sym.ndebug_dirs == MAX_DEBUG_DIRS)
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

static int parse_args(struct cli *c, int argc, char **argv)
{
	int opt, err;

	c->min_width = -1;
	c->so.progress = isatty(STDERR_FILENO);
	c->so.sym.debug_dirs = c->debug_dirs;
	while ((opt = getopt_long(argc, argv, "o:i:UKvqh", long_opts, NULL)) != -1)
		if ((err = parse_opt(c, opt, optarg)))
			return err;
	for (; optind < argc; optind++) {
		if (c->ninputs == MAX_INPUTS)
			return bad("input count", argv[optind]);
		c->inputs[c->ninputs++] = argv[optind];
	}
	if (c->nmodes > 1 || (c->diff && c->mode >= M_INFO && c->mode != M_SVG)) {
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

static bool record_filters(const struct cli *c)
{
	const struct rpt_filter *f = &c->so.filter;

	return f->comm || f->pid || f->tid || f->has_time || f->user_only || f->kernel_only;
}

/* Add input @path, of any kind, to @p; prints why not. @return 0 or -errno. */
static int add_input(struct cli *c, struct rpt_session *s, const char *path, struct rpt_profile *p)
{
	struct rpt_perfscript_opts po = {.show_pid = c->so.show_pid, .show_tid = c->so.show_tid};
	struct rpt_input *in = rpt_input__open(path);
	struct rpt_perfscript_stats st;
	enum rpt_input_kind k = in ? rpt_input__kind(in) : RPT_INPUT_UNKNOWN;
	const char *sa = k == RPT_INPUT_SA ? rpt_input__path(in) : NULL;
	char errbuf[256] = "";
	int err = -EBADMSG;

	if (!in || (k == RPT_INPUT_SA && !sa))
		fprintf(stderr, "sa-report: %s: %s\n", path, strerror(errno));
	else if (k == RPT_INPUT_SA && (err = rpt_session__add_file(s, sa, p)))
		fprintf(stderr, "sa-report: %s\n", rpt_session__errmsg(s));
	else if (k == RPT_INPUT_FOLDED)
		err = rpt_folded__read(p, rpt_input__stream(in), errbuf, sizeof(errbuf));
	else if (k == RPT_INPUT_PERFSCRIPT)
		err = rpt_perfscript__read(p, rpt_input__stream(in), &po, &st, errbuf,
					   sizeof(errbuf));
	else if (k == RPT_INPUT_PERFDATA)
		fprintf(stderr,
			"sa-report: %s: a perf.data file; sa-report reads its text: "
			"perf script -i %s | sa-report [OPTIONS] -\n",
			path, strcmp(path, "-") ? path : "FILE");
	else if (k != RPT_INPUT_SA)
		fprintf(stderr,
			"sa-report: %s: not an sa recording, folded stacks or perf script text\n",
			path);
	if (errbuf[0] && err)
		fprintf(stderr, "sa-report: %s: %s\n", path, errbuf);
	if (!err && k != RPT_INPUT_SA && record_filters(c) && !c->quiet)
		fprintf(stderr,
			"sa-report: %s: %s; --comm --pid --tid --time -U -K filter "
			"recordings only\n",
			path, rpt_input__kind_name(k));
	if (!err && k != RPT_INPUT_SA)
		c->ntext++;
	if (!err && k == RPT_INPUT_PERFSCRIPT)
		rpt_input__warn_perfscript(stderr, path, &st, c->quiet);
	c->nfolded += !err && k == RPT_INPUT_FOLDED;
	rpt_input__close(in);
	return err;
}

/* --off-cpu, --wall: true (and a message) when a recording holds no off-CPU time. */
static bool off_cpu_missing(struct rpt_session *s)
{
	for (size_t i = 0; i < rpt_session__nfiles(s); i++) {
		const struct rpt_file_stats *f = rpt_session__file(s, i);

		if (!(f->meta_flags & SAF_META_OFF_CPU)) {
			fprintf(stderr,
				"sa-report: %s was recorded without --off-cpu: it holds no "
				"off-CPU time\n",
				rpt_session__str(s, f->path));
			return true;
		}
	}
	return false;
}

/* Load @n inputs into one new profile (a merge when n > 1). NULL on failure. */
static struct rpt_profile *load(struct cli *c, struct rpt_session *s, const char **in, int n)
{
	struct rpt_profile *p = rpt_profile__new();
	int nfolded = c->nfolded;
	char errbuf[256] = "";

	for (int i = 0; p && i < n; i++) {
		if (add_input(c, s, in[i], p)) {
			rpt_profile__free(p);
			return NULL;
		}
	}
	/* folded text with other inputs: its frames name no binary, nor always a kind */
	nfolded = c->nfolded - nfolded;
	if (p && nfolded && nfolded < n && rpt_input__unify(&p)) {
		fprintf(stderr, "sa-report: %s\n", strerror(ENOMEM));
		rpt_profile__free(p);
		return NULL;
	}
	if (p && c->so.value != RPT_VALUE_SAMPLES && off_cpu_missing(s))
		goto fail;
	if (p)
		p->meta.value = c->so.value;
	if (p &&
	    rpt_profile__filter(p, c->focus, c->ignore, c->min_percent, errbuf, sizeof(errbuf))) {
		fprintf(stderr, "sa-report: %s\n", errbuf);
		goto fail;
	}
	if (p)
		rpt_profile__sort(p);
	return p;
fail:
	rpt_profile__free(p);
	return NULL;
}

/* pprof and speedscope need the frequency: take it from the files when they agree. */
static int write_export(struct cli *c, struct rpt_session *s, struct rpt_profile *p, FILE *out,
			const struct rpt_summary *sum)
{
	struct rpt_pprof_opts po = {
		.root = {.has_pid = c->so.show_pid || c->so.show_tid, .has_tid = c->so.show_tid}};
	struct rpt_speedscope_opts sso = {.name = c->title};

	for (size_t i = 0; !p->meta.freq_hz && i < rpt_session__nfiles(s); i++) {
		if (rpt_session__file(s, i)->freq_hz != rpt_session__file(s, 0)->freq_hz)
			break;
		if (i + 1 == rpt_session__nfiles(s))
			p->meta.freq_hz = rpt_session__file(s, 0)->freq_hz;
	}
	if (!p->meta.duration_ns)
		p->meta.duration_ns = sum->duration_ns;
	return c->mode == M_PPROF ? rpt_pprof__write(p, out, &po)
				  : rpt_speedscope__write(p, out, &sso);
}

static bool filtered(const struct cli *c)
{
	const struct rpt_filter *f = &c->so.filter;

	return c->focus || c->ignore || c->min_percent > 0 || f->comm || f->pid || f->tid ||
	       f->has_time || f->has_wall || f->user_only || f->kernel_only;
}

/* --time that selects no interval of any file: a usage error (exit 2). */
static int check_time(struct cli *c, struct rpt_session *s)
{
	const struct rpt_filter *f = &c->so.filter;
	const struct rpt_file_stats *longest = NULL;
	uint64_t in = 0, dur = 0;
	char to[32] = "";

	if (!f->has_time && !f->has_wall)
		return 0;
	for (size_t i = 0; i < rpt_session__nfiles(s); i++) {
		const struct rpt_file_stats *st = rpt_session__file(s, i);
		uint64_t start = st->has_meta ? st->start_mono_ns : st->first_ns;

		in += st->iv_in_time;
		if (!longest || (st->last_ns > start && st->last_ns - start > dur)) {
			longest = st;
			dur = st->last_ns > start ? st->last_ns - start : 0;
		}
	}
	if (in || !longest)
		return 0;
	if (f->has_wall) {
		fprintf(stderr,
			"sa-report: --since/--until selects no interval of the %zu "
			"input(s) (one counts when its midpoint is in the range)\n",
			rpt_session__nfiles(s));
		return -EINVAL;
	}
	if (f->time_to < 1e17)
		snprintf(to, sizeof(to), "%g", f->time_to);
	fprintf(stderr,
		"sa-report: --time %g-%s is outside the recording: %s%s lasts %.2f s (an "
		"interval counts when its midpoint is in the range)\n",
		f->time_from, to, rpt_session__nfiles(s) > 1 ? "the longest, " : "",
		rpt_session__str(s, longest->path), dur / 1e9);
	return -EINVAL;
}

/* --off-cpu, --wall: the profile's time, and off-CPU periods lost (by cause with -v). */
static void time_summary(struct cli *c, struct rpt_session *s, const struct rpt_profile *p,
			 struct rpt_summary *sum)
{
	sum->value = c->so.value;
	sum->samples = p->total;
	sum->total = 0;
	sum->lost = 0;
	sum->lost_detail = NULL;
	for (size_t i = 0; i < rpt_session__nfiles(s); i++)
		for (uint32_t id = SAF_CTR_OFF_LOST_USTACK; id <= SAF_CTR_OFF_LOST_RINGBUF; id++)
			sum->lost += rpt_session__file(s, i)->lost[id];
}

static int write_out(struct cli *c, struct rpt_session *s, struct rpt_profile **p, FILE *out)
{
	struct rpt_summary sum;
	char host[256];
	struct rpt_folded_opts fo = {.annotate = c->annotate};
	struct rpt_top_opts to = {.sort_total = c->sort_total, .rows = c->rows, .summary = &sum};
	struct rpt_svg_opts vo = {.title = c->title,
				  .summary = &sum,
				  .width = c->width,
				  .min_width = c->min_width,
				  .inverted = c->inverted,
				  .short_names = c->short_names};
	struct rpt_diff_opts dopt = {
		.no_normalize = c->no_normalize, .negate = c->negate, .svg = &vo, .top = &to};

	rpt_session__summary(s, &sum, host, sizeof(host));
	if (c->ntext)
		sum.samples = p[0]->total;
	if (c->so.value != RPT_VALUE_SAMPLES)
		time_summary(c, s, p[0], &sum);
	if (filtered(c) && !c->diff && c->so.value == RPT_VALUE_SAMPLES) {
		sum.total = 0;
		for (size_t i = 0; i < rpt_session__nfiles(s); i++)
			sum.total += rpt_session__file(s, i)->samples;
		sum.samples = p[0]->total;
	}
	if (c->mode == M_FOLDED && !c->quiet)
		rpt_session__warn(s, stderr, c->verbose);
	if (c->mode == M_FOLDED && !c->quiet && c->so.value != RPT_VALUE_SAMPLES && sum.lost)
		fprintf(stderr, "sa-report: %llu off-CPU periods lost (--info names the causes)\n",
			(unsigned long long)sum.lost);
	if (c->diff)
		return c->mode == M_TOP	  ? rpt_diff__top(p[0], p[1], out, &dopt)
		       : c->mode == M_SVG ? rpt_diff__svg(p[0], p[1], out, &dopt)
					  : rpt_diff__folded(p[0], p[1], out, &dopt);
	if (c->mode == M_TOP)
		return rpt_top__write(p[0], out, &to);
	if (c->mode == M_SVG)
		return rpt_svg__write(p[0], out, &vo);
	if (c->mode == M_PPROF || c->mode == M_SPEEDSCOPE)
		return write_export(c, s, p[0], out, &sum);
	return rpt_folded__write(p[0], out, &fo);
}

static int run(struct cli *c, struct rpt_session *s)
{
	struct rpt_profile *p[2] = {NULL, NULL};
	FILE *out = stdout;
	int ret = 1, err;

	p[0] = load(c, s, c->inputs, c->diff ? 1 : c->ninputs);
	if (p[0] && c->diff)
		p[1] = load(c, s, c->inputs + 1, 1);
	if (!p[0] || (c->diff && !p[1]))
		goto cleanup;
	/* the same words in every mode; exit 0 with what could be read */
	rpt_session__warn_damage(s, stderr);
	if (check_time(c, s)) {
		ret = 2;
		goto cleanup;
	}
	/* every input is read: binaries are released while the output is written */
	rpt_symbolizer__retire(rpt_session__symbolizer(s));
	if (c->mode == M_PPROF && !c->out && isatty(STDOUT_FILENO)) {
		fprintf(stderr,
			"sa-report: not writing binary pprof data to a terminal; use -o FILE\n");
		goto cleanup;
	}
	if (c->mode == M_SVG && !c->out && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "sa-report: not writing an SVG to a terminal; use -o FILE\n");
		goto cleanup;
	}
	if (c->out && !(out = fopen(c->out, "w"))) {
		fprintf(stderr, "sa-report: %s: %s\n", c->out, strerror(errno));
		goto cleanup;
	}
	if (!c->quiet) /* every mode, once: a profile of broken walks misleads */
		rpt_session__warn_walks(s, stderr);
	if (c->mode == M_INFO)
		err = rpt_session__info(s, out, c->verbose);
	else
		err = write_out(c, s, p, out);
	if (!err && fflush(out))
		err = -errno;
	if (err)
		fprintf(stderr, "sa-report: writing output: %s\n", strerror(-err));
	ret = err ? 1 : 0;
cleanup:
	if (out && out != stdout && fclose(out) && !ret)
		ret = 1;
	rpt_profile__free(p[0]);
	rpt_profile__free(p[1]);
	return ret;
}

int main(int argc, char **argv)
{
	static struct cli c;
	struct rpt_session *s;
	int ret;

	ret = parse_args(&c, argc, argv);
	if (ret)
		return ret > 0 ? 0 : 2;
	s = rpt_session__new(&c.so);
	if (!s) {
		fprintf(stderr, "sa-report: %s\n", strerror(errno));
		return 1;
	}
	ret = run(&c, s);
	rpt_session__free(s);
	return ret;
}
