// SPDX-License-Identifier: MIT
/*
 * main.c - sa-report: parses the command line (cli.c), reads every input
 * of any kind into one profile (or two for --diff), runs the session (read,
 * filter, symbolize, aggregate) and calls one writer of output.h. Exit
 * codes: RPT_EXIT_* in cli.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "export.h"
#include "input.h"
#include "output.h"
#include "session.h"

static bool record_filters(const struct rpt_cli *c)
{
	const struct rpt_filter *f = &c->so.filter;

	return f->comm || f->pid || f->tid || f->has_time || f->user_only || f->kernel_only;
}

/* -ENODATA when @path is a regular file of 0 bytes (no sa file is), else 0. */
static int empty_input(const char *path)
{
	struct stat st;

	if (!strcmp(path, "-") || stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	return st.st_size ? 0 : -ENODATA;
}

/*
 * An input that could not be read at all (@why): in a set (@in_set) it is
 * skipped, said and counted, and the others are read (the exit status is
 * then RPT_EXIT_SKIPPED); alone it fails the run.
 * @return 0 when skipped, else @err.
 */
static int unreadable(struct rpt_cli *c, struct rpt_session *s, const char *path, bool in_set,
		      const char *why, int err)
{
	if (!in_set || rpt_session__skip_input(s, path, why)) {
		fprintf(stderr, "sa-report: %s\n", why);
		return err;
	}
	c->nunread++;
	return 0;
}

/*
 * Add input @path, of any kind, to @p; prints why not. One of a set
 * (@in_set) that cannot be read is skipped (unreadable()).
 * @return 0 or -errno.
 */
static int add_input(struct rpt_cli *c, struct rpt_session *s, const char *path,
		     struct rpt_profile *p, bool in_set)
{
	struct rpt_perfscript_opts po = {.show_pid = c->so.show_pid, .show_tid = c->so.show_tid};
	struct rpt_input *in = rpt_input__open(path);
	struct rpt_perfscript_stats st;
	enum rpt_input_kind k = in ? rpt_input__kind(in) : RPT_INPUT_UNKNOWN;
	const char *sa = k == RPT_INPUT_SA ? rpt_input__path(in) : NULL;
	char errbuf[256] = "", why[1024] = "";
	int err = -EBADMSG;

	if (k == RPT_INPUT_SA) /* a path, or standard input read once */
		err = sa ? rpt_session__add_file(s, sa, path, p)
			 : rpt_session__add_stream(s, rpt_input__read, in, path, p);
	if (!in)
		snprintf(why, sizeof(why), "%s: %s", path, strerror(errno));
	else if (k == RPT_INPUT_SA && err && err != -ENODATA)
		snprintf(why, sizeof(why), "%s", rpt_session__errmsg(s));
	else if (k == RPT_INPUT_FOLDED && (err = empty_input(path)))
		fprintf(stderr,
			"sa-report: %s: empty file (0 bytes): not a recording (was sa-record "
			"stopped before its first interval?)\n",
			path);
	else if (k == RPT_INPUT_FOLDED)
		err = rpt_folded__read(p, rpt_input__stream(in), errbuf, sizeof(errbuf));
	else if (k == RPT_INPUT_PERFSCRIPT)
		err = rpt_perfscript__read(p, rpt_input__stream(in), &po, &st, errbuf,
					   sizeof(errbuf));
	else if (k == RPT_INPUT_PERFDATA)
		snprintf(why, sizeof(why),
			 "%s: a perf.data file; sa-report reads its text: "
			 "perf script -i %s | sa-report [OPTIONS] -",
			 path, strcmp(path, "-") ? path : "FILE");
	else if (k != RPT_INPUT_SA)
		snprintf(why, sizeof(why),
			 "%s: not an sa recording, folded stacks or perf script text", path);
	if (errbuf[0] && err)
		fprintf(stderr, "sa-report: %s: %s\n", path, errbuf);
	if (why[0])
		err = unreadable(c, s, path, in_set, why, err);
	if (k == RPT_INPUT_SA || why[0])
		rpt_session__warn_skipped(s, stderr);
	if (why[0]) {
		rpt_input__close(in);
		return err;
	}
	/* a recording with no interval (killed at a rotation): the others are read */
	c->nempty += err == -ENODATA;
	err = err == -ENODATA ? 0 : err;
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
static struct rpt_profile *load(struct rpt_cli *c, struct rpt_session *s, const char **in, int n)
{
	struct rpt_profile *p = rpt_profile__new();
	int nfolded = c->nfolded, nempty = c->nempty, nunread = c->nunread;
	char errbuf[256] = "";

	for (int i = 0; p && i < n; i++) {
		if (add_input(c, s, in[i], p, n > 1)) {
			rpt_profile__free(p);
			return NULL;
		}
	}
	/* nothing but recordings without samples, or inputs that could not be read */
	if (p && c->nempty - nempty + c->nunread - nunread == n)
		goto fail;
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
static int write_export(struct rpt_cli *c, struct rpt_session *s, struct rpt_profile *p, FILE *out,
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
	return c->mode == RPT_M_PPROF ? rpt_pprof__write(p, out, &po)
				      : rpt_speedscope__write(p, out, &sso);
}

static bool filtered(const struct rpt_cli *c)
{
	const struct rpt_filter *f = &c->so.filter;

	return c->focus || c->ignore || c->min_percent > 0 || f->comm || f->pid || f->tid ||
	       f->has_time || f->has_wall || f->user_only || f->kernel_only;
}

/* --time that selects no interval of any file: a usage error (exit 2). */
static int check_time(struct rpt_cli *c, struct rpt_session *s)
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

/*
 * Filters that leave nothing of samples the recordings hold: say so, and
 * which, where an empty profile would look like an empty recording.
 * @return true when the run is to fail (exit 1).
 */
static bool matches_nothing(const struct rpt_cli *c, struct rpt_session *s,
			    struct rpt_profile *const *p)
{
	const struct rpt_filter *f = &c->so.filter;
	uint64_t total = 0;

	if (!filtered(c) || c->mode == RPT_M_INFO || c->so.value != RPT_VALUE_SAMPLES)
		return false;
	for (size_t i = 0; i < rpt_session__nfiles(s); i++)
		total += rpt_session__file(s, i)->samples;
	if (!total || (p[0]->total && (!c->diff || p[1]->total)))
		return false;
	fprintf(stderr, "sa-report: no sample of the %llu recorded matches",
		(unsigned long long)total);
	if (f->comm)
		fprintf(stderr, " --comm %s", f->comm);
	if (f->pid)
		fprintf(stderr, " --pid %s", f->pid);
	if (f->tid)
		fprintf(stderr, " --tid %s", f->tid);
	if (f->has_time || f->has_wall)
		fprintf(stderr, " %s", f->has_time ? "--time" : "--since/--until");
	if (f->user_only || f->kernel_only)
		fprintf(stderr, " %s", f->user_only ? "-U" : "-K");
	if (c->focus || c->ignore || c->min_percent > 0)
		fprintf(stderr, " --focus/--ignore/--min-percent");
	fprintf(stderr, "%s (--info lists the processes)\n", c->diff ? " in one input" : "");
	return true;
}

/* --off-cpu, --wall: the profile's time, and off-CPU periods lost (by cause with -v). */
static void time_summary(struct rpt_cli *c, struct rpt_session *s, const struct rpt_profile *p,
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

static int write_out(struct rpt_cli *c, struct rpt_session *s, struct rpt_profile **p, FILE *out)
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
	if (c->mode == RPT_M_FOLDED && !c->quiet)
		rpt_session__warn(s, stderr, c->verbose);
	if (c->mode == RPT_M_FOLDED && !c->quiet && c->so.value != RPT_VALUE_SAMPLES && sum.lost)
		fprintf(stderr, "sa-report: %llu off-CPU periods lost (--info names the causes)\n",
			(unsigned long long)sum.lost);
	if (c->diff)
		return c->mode == RPT_M_TOP   ? rpt_diff__top(p[0], p[1], out, &dopt)
		       : c->mode == RPT_M_SVG ? rpt_diff__svg(p[0], p[1], out, &dopt)
					      : rpt_diff__folded(p[0], p[1], out, &dopt);
	if (c->mode == RPT_M_TOP)
		return rpt_top__write(p[0], out, &to);
	if (c->mode == RPT_M_SVG)
		return rpt_svg__write(p[0], out, &vo);
	if (c->mode == RPT_M_PPROF || c->mode == RPT_M_SPEEDSCOPE)
		return write_export(c, s, p[0], out, &sum);
	return rpt_folded__write(p[0], out, &fo);
}

static int run(struct rpt_cli *c, struct rpt_session *s)
{
	struct rpt_profile *p[2] = {NULL, NULL};
	FILE *out = stdout;
	const char *note;
	int ret = RPT_EXIT_FAIL, err;

	p[0] = load(c, s, c->inputs, c->diff ? 1 : c->ninputs);
	if (p[0] && c->diff)
		p[1] = load(c, s, c->inputs + 1, 1);
	if (!p[0] || (c->diff && !p[1]))
		goto cleanup;
	/* the same words in every mode; exit 0 with what could be read */
	rpt_session__warn_damage(s, stderr);
	note = rpt_symbolizer__cache_note(rpt_session__symbolizer(s));
	if (c->verbose && note)
		fprintf(stderr, "sa-report: symbol cache: %s\n", note);
	if (check_time(c, s)) {
		ret = RPT_EXIT_USAGE;
		goto cleanup;
	}
	if (matches_nothing(c, s, p))
		goto cleanup;
	/* every input is read: binaries are released while the output is written */
	rpt_symbolizer__retire(rpt_session__symbolizer(s));
	if (c->mode == RPT_M_PPROF && !c->out && isatty(STDOUT_FILENO)) {
		fprintf(stderr,
			"sa-report: not writing binary pprof data to a terminal; use -o FILE\n");
		goto cleanup;
	}
	if (c->mode == RPT_M_SVG && !c->out && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "sa-report: not writing an SVG to a terminal; use -o FILE\n");
		goto cleanup;
	}
	if (c->out && !(out = fopen(c->out, "w"))) {
		fprintf(stderr, "sa-report: %s: %s\n", c->out, strerror(errno));
		goto cleanup;
	}
	if (!c->quiet) /* every mode, once: a profile of broken walks misleads */
		rpt_session__warn_walks(s, stderr);
	if (c->mode == RPT_M_INFO)
		err = rpt_session__info(s, out, c->verbose);
	else
		err = write_out(c, s, p, out);
	if (!err && fflush(out))
		err = -errno;
	if (err)
		fprintf(stderr, "sa-report: writing output: %s\n", strerror(-err));
	ret = err ? RPT_EXIT_FAIL : c->nunread ? RPT_EXIT_SKIPPED : RPT_EXIT_OK;
cleanup:
	if (out && out != stdout && fclose(out) && !ret)
		ret = 1;
	rpt_profile__free(p[0]);
	rpt_profile__free(p[1]);
	return ret;
}

int main(int argc, char **argv)
{
	static struct rpt_cli c;
	struct rpt_session *s;
	int ret;

	ret = rpt_cli__parse(&c, argc, argv);
	if (ret)
		return ret > 0 ? RPT_EXIT_OK : RPT_EXIT_USAGE;
	s = rpt_session__new(&c.so);
	if (!s) {
		fprintf(stderr, "sa-report: %s\n", strerror(errno));
		return RPT_EXIT_FAIL;
	}
	ret = run(&c, s);
	rpt_session__free(s);
	return ret;
}
