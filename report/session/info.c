// SPDX-License-Identifier: MIT
/*
 * info.c - sa-report --info: what each recording holds (host, kernel, times,
 * target, samples, losses by cause, clean finish), then every binary with
 * samples: where its symbols came from or why none could be used, and
 * which binaries look like they were built without frame pointers; and
 * the stderr warning of any mode when many stack walks broke.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session_int.h"

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * a / b : 0;
}

static void info_times(FILE *out, const struct rpt_file_stats *f)
{
	time_t t = f->start_realtime_ns / 1000000000ULL;
	uint64_t start = f->has_meta ? f->start_mono_ns : f->first_ns;
	char when[64] = "unknown";
	struct tm tm;

	if (f->start_realtime_ns && gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(out, "  start:      %s\n", when);
	fprintf(out, "  duration:   %.3f s (%llu intervals)\n",
		f->last_ns > start ? (f->last_ns - start) / 1e9 : 0.0,
		(unsigned long long)f->intervals);
}

/* "CPU 1 not sampled 5.02-10.31 s (offline)", seconds from the file's start. */
static void info_cpugaps(FILE *out, const struct rpt_file_stats *f)
{
	uint64_t start = f->has_meta ? f->start_mono_ns : f->first_ns;
	size_t i, n = f->ncpugaps < 4 ? f->ncpugaps : 4;

	if (!f->ncpugaps)
		return;
	fprintf(out, "  cpu gaps:   %zu, %.3f s in all (offline, not sampled):", f->ncpugaps,
		f->cpugap_ns / 1e9);
	for (i = 0; i < n; i++)
		fprintf(out, "%s CPU %u %.3f-%.3f s", i ? "," : "", f->cpugaps[i].cpu,
			((double)f->cpugaps[i].from_ns - (double)start) / 1e9,
			((double)f->cpugaps[i].to_ns - (double)start) / 1e9);
	fprintf(out, "%s\n", f->ncpugaps > n ? ", ..." : "");
}

static void info_losses(FILE *out, const struct rpt_file_stats *f)
{
	uint64_t lost = 0;

	for (uint32_t id = 1; id <= SAF_MAX_COUNTERS; id++) {
		const char *name = saf_counter__name(id);

		if (name && !strncmp(name, "lost", 4))
			lost += f->lost[id];
	}
	fprintf(out, "  samples:    %llu kept, %llu after filters\n",
		(unsigned long long)f->samples, (unsigned long long)f->samples_used);
	fprintf(out, "  lost:       %llu (%.2f%%)", (unsigned long long)lost,
		pct(lost, lost + f->samples));
	for (uint32_t id = 1; id <= SAF_MAX_COUNTERS; id++) {
		const char *name = saf_counter__name(id);

		if (f->lost[id] && name && strncmp(name, "runs", 4) && strncmp(name, "kept", 4) &&
		    !strstr(name, "uw_"))
			fprintf(out, " %s=%llu", name, (unsigned long long)f->lost[id]);
	}
	fputc('\n', out);
	if (!(f->meta_flags & SAF_META_UW_KERNEL))
		return;
	/* format 1.5: the in-kernel unwinder's walks, and what fell back */
	fprintf(out,
		"  unwinding:  in the kernel from CFI: %llu samples walked, %llu sent as "
		"stack copies; %llu switch-outs walked, %llu by frame pointers (no "
		"tables yet), %llu cut short\n",
		(unsigned long long)f->lost[SAF_CTR_UW_WALKED],
		(unsigned long long)f->lost[SAF_CTR_UW_COPIED],
		(unsigned long long)f->lost[SAF_CTR_OFF_UW_WALKED],
		(unsigned long long)f->lost[SAF_CTR_OFF_UW_FP],
		(unsigned long long)f->lost[SAF_CTR_OFF_UW_CUT]);
}

static void info_file(struct rpt_session *s, FILE *out, const struct rpt_file_stats *f)
{
	fprintf(out, "file: %s\n", rpt_strpool__str(s->env.pool, f->path));
	fprintf(out, "  host:       %s\n", rpt_strpool__str(s->env.pool, f->host));
	fprintf(out, "  kernel:     %s %s\n", rpt_strpool__str(s->env.pool, f->kernel),
		rpt_strpool__str(s->env.pool, f->arch));
	fprintf(out, "  recorder:   %s: %s\n", rpt_strpool__str(s->env.pool, f->writer),
		rpt_strpool__str(s->env.pool, f->cmdline));
	fprintf(out, "  target:     %s\n", rpt_strpool__str(s->env.pool, f->target));
	fprintf(out, "  event:      %s at %llu Hz on %llu CPUs\n",
		rpt_strpool__str(s->env.pool, f->event), (unsigned long long)f->freq_hz,
		(unsigned long long)f->ncpus);
	info_cpugaps(out, f);
	if (f->maps_dropped || f->meta_dropped) {
		char line[1024];

		rpt_session__dropped(f, line, sizeof(line));
		fprintf(out, "  dropped:    %s\n", line);
	}
	info_times(out, f);
	info_losses(out, f);
	fprintf(out, "  finished:   %s%s%s\n", f->finished && !f->damaged ? "cleanly" : "no",
		f->errmsg[0] ? ": " : "", f->errmsg);
	/* the side band sees every process on the host, the samples the target's */
	fprintf(out, "  processes:  %llu with samples (%llu images), of %llu images seen\n",
		(unsigned long long)f->procs_sampled, (unsigned long long)f->images_sampled,
		(unsigned long long)f->procs);
	fprintf(out,
		"  contents:   %llu process images, %llu stacks, %llu kernel symbols, "
		"%llu embedded symbols, %llu JIT symbols\n",
		(unsigned long long)f->procs, (unsigned long long)f->stacks,
		(unsigned long long)f->ksyms, (unsigned long long)f->usyms,
		(unsigned long long)f->jitsyms);
	if (f->py_read || f->py_refused)
		fprintf(out,
			"  python:     %llu processes' frames read, %llu refused; %llu code "
			"objects "
			"named; first: %s\n",
			(unsigned long long)f->py_read, (unsigned long long)f->py_refused,
			(unsigned long long)f->pycodes, rpt_session__str(s, f->py_first));
	fprintf(out,
		"  unresolved: %.1f%% of user frames; broken walks (frames dropped) in "
		"%.1f%% of samples\n",
		pct(f->unresolved, f->user_frames), pct(f->dropped_frames, f->samples_used));
	if (f->kernel_unnamed)
		fprintf(out, "  kernel:     %s\n",
			f->has_ksyms
				? "some kernel addresses unnamed"
				: "no kernel symbols in the file: kernel frames show as [kernel]");
}

static const char *src_name(enum rpt_dso_source src)
{
	switch (src) {
	case RPT_SRC_DEBUG_FILE:
		return "debug file";
	case RPT_SRC_BINARY:
		return "binary";
	case RPT_SRC_EMBEDDED:
		return "embedded symbols";
	case RPT_SRC_DEBUGINFOD:
		return "debuginfod";
	default:
		return "not symbolized";
	}
}

static int dso_cmp(const void *a, const void *b)
{
	const struct rpt_dso *x = *(const struct rpt_dso *const *)a;
	const struct rpt_dso *y = *(const struct rpt_dso *const *)b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->path < y->path ? -1 : x->path > y->path;
}

static void info_dso(struct rpt_session *s, FILE *out, const struct rpt_dso *d, bool verbose)
{
	fprintf(out, "  %10llu  %s\n", (unsigned long long)d->samples,
		rpt_strpool__str(s->env.pool, d->path));
	fprintf(out, "              %s %s; %s", d->id_kind ? "content hash" : "build id",
		d->build_id ? rpt_strpool__str(s->env.pool, d->build_id) : "none recorded",
		src_name(d->source));
	if (d->used_path && d->source != RPT_SRC_EMBEDDED)
		fprintf(out, " %s", rpt_strpool__str(s->env.pool, d->used_path));
	if (d->reason)
		fprintf(out, " (%s)", rpt_strpool__str(s->env.pool, d->reason));
	fprintf(out, "; %.1f%% frames unresolved", pct(d->unresolved, d->frames));
	if (d->outermost && (verbose || d->truncated))
		fprintf(out, "; %.1f%% of its stacks look truncated",
			pct(d->truncated, d->outermost));
	fputc('\n', out);
}

int rpt_session__info(struct rpt_session *s, FILE *out, bool verbose)
{
	struct rpt_symbolizer *sym = s->sym;
	size_t n = rpt_symbolizer__ndsos(sym), nshown = 0;
	struct rpt_dso **v = calloc(n + 1, sizeof(*v));
	bool header = false;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->nfiles; i++)
		info_file(s, out, &s->files[i]);
	for (size_t i = 0; i < s->nskipped; i++)
		fprintf(out, "file: %s\n  skipped:    %s: %s\n",
			rpt_strpool__str(s->env.pool, s->skipped[i].path),
			s->skipped[i].unread ? "cannot be read" : "holds no samples",
			s->skipped[i].why);
	for (size_t i = 0; i < n; i++)
		if (rpt_symbolizer__get(sym, i)->samples)
			v[nshown++] = rpt_symbolizer__get(sym, i);
	qsort(v, nshown, sizeof(*v), dso_cmp);
	fprintf(out, "binaries with samples (samples, path, symbol source):\n");
	for (size_t i = 0; i < nshown; i++)
		info_dso(s, out, v[i], verbose);
	for (size_t i = 0; i < nshown; i++) {
		/* most walks through it end early: likely built without frame pointers */
		if (v[i]->outermost < 10 || pct(v[i]->truncated, v[i]->outermost) < 50)
			continue;
		if (!header)
			fprintf(out, "binaries that appear to lack frame pointers (re-record with "
				     "--call-graph auto, or rebuild them with "
				     "-fno-omit-frame-pointer):\n");
		header = true;
		fprintf(out, "  %s\n", rpt_strpool__str(s->env.pool, v[i]->path));
	}
	free(v);
	return ferror(out) ? -EIO : 0;
}

/* The binary with samples that most walks end in without reaching a root. */
static const struct rpt_dso *most_truncated(struct rpt_session *s)
{
	const struct rpt_dso *best = NULL;

	for (size_t i = 0; i < rpt_symbolizer__ndsos(s->sym); i++) {
		const struct rpt_dso *d = rpt_symbolizer__get(s->sym, i);

		if (d->truncated && (!best || d->truncated > best->truncated))
			best = d;
	}
	return best;
}

void rpt_session__warn_walks(struct rpt_session *s, FILE *err)
{
	uint64_t broken = 0, fp = 0, used = 0;
	const struct rpt_dso *d;

	for (size_t i = 0; i < s->nfiles; i++) {
		broken += s->files[i].dropped_frames;
		fp += s->files[i].broken_fp;
		used += s->files[i].samples_used;
	}
	if (!broken || pct(broken, used) < RPT_BROKEN_WALK_PCT)
		return;
	fprintf(err, "sa-report: %.1f%% of samples have a broken stack walk (frames dropped)",
		pct(broken, used));
	d = fp * 2 >= broken ? most_truncated(s) : NULL;
	if (d)
		fprintf(err, "; %s seems built without frame pointers",
			rpt_strpool__str(s->env.pool, d->path));
	if (fp * 2 >= broken)
		fputs("; re-record with --call-graph auto (or dwarf) for whole stacks", err);
	else
		fputs(" though unwound from stack copies; see --info", err);
	fputc('\n', err);
}
