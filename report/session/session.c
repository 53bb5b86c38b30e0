// SPDX-License-Identifier: MIT
/*
 * session.c - the pipeline object: options, parsed filter lists, the shared
 * symbolizer, per-file stats, each recording of a file read (read.c) then
 * resolved (resolve.c), every one of a concatenation, one without samples
 * skipped and said; and the loss summary shown on stderr and in top/SVG
 * headers. The top of report/session/: the stages it calls never call it.
 */
#include <errno.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "session_int.h"

struct rpt_session *rpt_session__new(const struct rpt_session_opts *o)
{
	struct rpt_session *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	s->o = *o;
	s->sym = rpt_symbolizer__new(&o->sym);
	err = s->sym ? 0 : -ENOMEM;
	if (!err)
		err = rpt_recfilter__init(&s->flt, &s->o.filter);
	s->env = (struct rpt_stage_env){
		.sym = s->sym,
		.pool = s->sym ? rpt_symbolizer__pool(s->sym) : NULL,
		.o = &s->o,
		.flt = &s->flt,
		.serial = &s->serial,
	};
	if (err) {
		rpt_session__free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

void rpt_session__free(struct rpt_session *s)
{
	if (!s)
		return;
	rpt_symbolizer__free(s->sym);
	rpt_recfilter__fini(&s->flt);
	SAC_FREE_ALL(s->files, s->skipped, s);
}

/* "NAME" for a file's first recording, "NAME (recording K at offset N)" after. */
static int64_t recording_name(struct rpt_session *s, const char *name,
			      const struct saf_file_info *fi)
{
	char buf[PATH_MAX + 64];

	if (fi->recordings <= 1)
		return rpt_strpool__intern(rpt_symbolizer__pool(s->sym), name, strlen(name));
	snprintf(buf, sizeof(buf), "%s (recording %llu at offset %llu)", name,
		 (unsigned long long)fi->recordings, (unsigned long long)fi->recording_offset);
	return rpt_strpool__intern(rpt_symbolizer__pool(s->sym), buf, strlen(buf));
}

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* "; intervals 5-6 lost (4.00-6.00 s), interval 9 partly lost" */
static size_t put_lost_ivs(const struct rpt_file_stats *f, char *buf, size_t cap)
{
	uint64_t base = f->has_meta ? f->start_mono_ns : f->first_ns;
	size_t len = 0;

	for (size_t i = 0; i < f->nlost_runs; i++) {
		const struct rpt_lost_ivs *v = &f->lost_runs[i];
		double a = v->from_ns > base ? (v->from_ns - base) / 1e9 : 0;
		double b = v->to_ns > base ? (v->to_ns - base) / 1e9 : 0;

		if (v->first == v->last)
			len += snprintf(buf + len, len < cap ? cap - len : 0,
					"; interval %llu lost (%.2f-%.2f s)",
					(unsigned long long)v->first, a, b);
		else
			len += snprintf(buf + len, len < cap ? cap - len : 0,
					"; intervals %llu-%llu lost (%.2f-%.2f s)",
					(unsigned long long)v->first, (unsigned long long)v->last,
					a, b);
	}
	if (f->lost_ivs && f->nlost_runs == sizeof(f->lost_runs) / sizeof(f->lost_runs[0]))
		len += snprintf(buf + len, len < cap ? cap - len : 0,
				"; %llu intervals lost in all", (unsigned long long)f->lost_ivs);
	if (f->partial_ivs)
		len += snprintf(buf + len, len < cap ? cap - len : 0,
				"; %llu interval%s partly lost", (unsigned long long)f->partial_ivs,
				plural(f->partial_ivs));
	return len;
}

/* The text of a damage line for @f, without "sa-report: PATH: ", in @buf of @cap bytes. */
static void file_damage(const struct rpt_file_stats *f, char *buf, size_t cap)
{
	uint64_t base = f->has_meta ? f->start_mono_ns : f->first_ns;
	double shown = f->iv_ns / 1e9;
	size_t len;

	len = snprintf(buf, cap, "%s: ",
		       f->finished ? "recording damaged" : "recording did not finish cleanly");
	if (!f->intervals)
		len += snprintf(buf + len, len < cap ? cap - len : 0, "no interval could be read");
	else if (f->finished && f->end_ns > base)
		len += snprintf(buf + len, len < cap ? cap - len : 0,
				"shows %.2f of %.2f s (%llu of %llu intervals)", shown,
				(f->end_ns - base) / 1e9, (unsigned long long)f->intervals,
				(unsigned long long)f->end_intervals);
	else
		len += snprintf(
			buf + len, len < cap ? cap - len : 0, "shows %s%.2f s (%llu intervals)",
			f->nlost_runs || f->partial_ivs || f->damage_count > 1 ? "" : "the first ",
			shown, (unsigned long long)f->intervals);
	len += put_lost_ivs(f, buf + (len < cap ? len : cap), len < cap ? cap - len : 0);
	if (f->damage_count)
		len += snprintf(buf + len, len < cap ? cap - len : 0,
				"; %llu chunk%s and %llu byte%s dropped at %llu place%s",
				(unsigned long long)f->dropped_chunks, plural(f->dropped_chunks),
				(unsigned long long)f->dropped_bytes, plural(f->dropped_bytes),
				(unsigned long long)f->damage_count, plural(f->damage_count));
	if (f->errmsg[0])
		snprintf(buf + len, len < cap ? cap - len : 0, " (%s)", f->errmsg);
}

/* A recording with no interval: said (rpt_session__warn_skipped()), not read. */
static int skip_recording(struct rpt_session *s, int64_t name, const struct rpt_file_stats *st)
{
	struct rpt_skipped *k;

	if (SAC_GROW(s->skipped, s->skipped_cap, s->nskipped + 1, 4))
		return -ENOMEM;
	k = &s->skipped[s->nskipped++];
	k->path = (uint32_t)name;
	k->unread = false;
	file_damage(st, k->why, sizeof(k->why));
	return 0;
}

/* Why a recording that holds no interval is not shown: "NAME: damage". */
static void empty_msg(struct rpt_session *s, uint32_t name, const struct rpt_file_stats *st)
{
	int n = snprintf(s->errmsg, sizeof(s->errmsg), "%s: ", rpt_session__str(s, name));

	if (n > 0 && (size_t)n < sizeof(s->errmsg))
		file_damage(st, s->errmsg + n, sizeof(s->errmsg) - n);
}

/*
 * The recording at *@rp's position. After the last one the reader is freed
 * (*@rp = NULL) before symbolizing, so its buffers are not held then.
 * @return 1 when another follows, 0, or -errno.
 */
static int add_recording(struct rpt_session *s, struct saf_reader **rp, const char *name,
			 struct rpt_profile *prof, size_t *nread)
{
	struct saf_reader *r = *rp;
	struct rpt_loaded l = {0};
	int64_t p;
	int more, err;

	if (SAC_GROW(s->files, s->files_cap, s->nfiles + 1, 4))
		return -ENOMEM;
	l.st = &s->files[s->nfiles];
	memset(l.st, 0, sizeof(*l.st));
	l.base = *saf_reader__info(r);
	l.file_idx = s->nrecordings++; /* never reused: a key for binaries without build id */
	p = recording_name(s, name, saf_reader__info(r));
	if (p < 0)
		return -ENOMEM;
	l.st->path = p;
	more = rpt_loaded__read(&s->env, &l, r, (uint32_t)p, s->errmsg, sizeof(s->errmsg));
	if (more <= 0) {
		saf_reader__free(r);
		*rp = NULL;
	}
	if (more >= 0 && l.empty) {
		empty_msg(s, (uint32_t)p, l.st);
		err = skip_recording(s, p, l.st);
		more = err ? err : more;
	} else if (more >= 0) {
		s->nfiles++;
		(*nread)++;
		err = rpt_loaded__resolve(&s->env, &l, prof);
		if (err == -ENOMEM)
			snprintf(s->errmsg, sizeof(s->errmsg), "%s: out of memory", name);
		more = err ? err : more;
	}
	rpt_loaded__fini(&l);
	return more;
}

/*
 * The reader's options: past damage, every recording of a concatenation,
 * and a whole-file bound on what the chunks expand to (docs/format.md,
 * "Limits"): real recordings expand 2.5 to 8 times.
 */
static struct saf_reader *open_reader(const char *path, saf_read_fn read, void *cookie,
				      char *errbuf, size_t errbuf_sz)
{
	struct saf_reader_opts ro = {
		.sz = sizeof(ro),
		.errbuf = errbuf,
		.errbuf_sz = errbuf_sz,
		.resync = true,
		/* chunks checked on the second CPU while this one reads records */
		.prefetch = sysconf(_SC_NPROCESSORS_ONLN) >= 2,
		.concat = true,
		.max_expand = RPT_MAX_EXPAND,
		.expand_floor = RPT_EXPAND_FLOOR,
	};

	return path ? saf_reader__open(path, &ro) : saf_reader__open_stream(read, cookie, &ro);
}

/* Every recording of @r (freed here) into @prof. */
static int add_reader(struct rpt_session *s, struct saf_reader *r, const char *errbuf,
		      const char *name, struct rpt_profile *prof)
{
	size_t nread = 0;
	int more;

	if (!r) {
		snprintf(s->errmsg, sizeof(s->errmsg), "%s: %s", name,
			 errbuf[0] ? errbuf : strerror(errno));
		return -errno;
	}
	do
		more = add_recording(s, &r, name, prof, &nread);
	while (more > 0);
	saf_reader__free(r);
	if (more < 0)
		return more;
	return nread ? 0 : -ENODATA;
}

int rpt_session__add_file(struct rpt_session *s, const char *path, const char *name,
			  struct rpt_profile *prof)
{
	char errbuf[256] = "";
	struct saf_reader *r = open_reader(path, NULL, NULL, errbuf, sizeof(errbuf));

	return add_reader(s, r, errbuf, name, prof);
}

int rpt_session__add_stream(struct rpt_session *s, saf_read_fn read, void *cookie, const char *name,
			    struct rpt_profile *prof)
{
	char errbuf[256] = "";
	struct saf_reader *r = open_reader(NULL, read, cookie, errbuf, sizeof(errbuf));

	return add_reader(s, r, errbuf, name, prof);
}

int rpt_session__skip_input(struct rpt_session *s, const char *name, const char *why)
{
	struct rpt_skipped *k;
	int64_t off = rpt_strpool__intern(rpt_symbolizer__pool(s->sym), name, strlen(name));
	size_t ln = strlen(name);

	if (off < 0)
		return (int)off;
	if (SAC_GROW(s->skipped, s->skipped_cap, s->nskipped + 1, 4))
		return -ENOMEM;
	/* the reader's messages begin with the name: said once */
	if (!strncmp(why, name, ln) && !strncmp(why + ln, ": ", 2))
		why += ln + 2;
	k = &s->skipped[s->nskipped++];
	k->path = (uint32_t)off;
	k->unread = true;
	snprintf(k->why, sizeof(k->why), "%s", why);
	return 0;
}

int rpt_session__warn_skipped(struct rpt_session *s, FILE *err)
{
	int n = 0;

	for (; s->nskipped_told < s->nskipped; s->nskipped_told++, n++) {
		const struct rpt_skipped *k = &s->skipped[s->nskipped_told];

		fprintf(err, "sa-report: %s: %s: %s\n", rpt_session__str(s, k->path),
			k->unread ? "cannot be read, skipped" : "holds no samples, not shown",
			k->why);
	}
	return n;
}

const char *rpt_session__errmsg(const struct rpt_session *s)
{
	return s->errmsg;
}

size_t rpt_session__nfiles(const struct rpt_session *s)
{
	return s->nfiles;
}

const struct rpt_file_stats *rpt_session__file(const struct rpt_session *s, size_t i)
{
	return i < s->nfiles ? &s->files[i] : NULL;
}

struct rpt_symbolizer *rpt_session__symbolizer(struct rpt_session *s)
{
	return s->sym;
}

const char *rpt_session__str(struct rpt_session *s, uint32_t off)
{
	return rpt_strpool__str(rpt_symbolizer__pool(s->sym), off);
}

/* Lost samples of all files by cause, as "lost_ustack 3, lost_ringbuf 1". */
static uint64_t lost_by_cause(struct rpt_session *s, char *buf, size_t cap)
{
	uint64_t total = 0;
	size_t len = 0;

	buf[0] = '\0';
	for (uint32_t id = SAF_CTR_LOST_USTACK; id <= SAF_MAX_COUNTERS; id++) {
		const char *name = saf_counter__name(id);
		uint64_t v = 0;

		if (!name || strncmp(name, "lost", 4))
			continue;
		for (size_t i = 0; i < s->nfiles; i++)
			v += s->files[i].lost[id];
		if (!v)
			continue;
		total += v;
		len += snprintf(buf + len, len < cap ? cap - len : 0, "%s%s %llu", len ? ", " : "",
				name, (unsigned long long)v);
	}
	return total;
}

void rpt_session__summary(struct rpt_session *s, struct rpt_summary *sum, char *buf, size_t cap)
{
	memset(sum, 0, sizeof(*sum));
	sum->lost = lost_by_cause(s, s->lost_detail, sizeof(s->lost_detail));
	sum->lost_detail = s->lost_detail[0] ? s->lost_detail : NULL;
	for (size_t i = 0; i < s->nfiles; i++) {
		const struct rpt_file_stats *f = &s->files[i];
		uint64_t start = f->has_meta ? f->start_mono_ns : f->first_ns;

		sum->samples += f->samples_used;
		if (f->last_ns > start && f->last_ns - start > sum->duration_ns)
			sum->duration_ns = f->last_ns - start;
	}
	if (s->nfiles == 1 && s->files[0].host) {
		snprintf(buf, cap, "%s", rpt_session__str(s, s->files[0].host));
		sum->host = buf;
	} else if (s->nfiles > 1) {
		snprintf(buf, cap, "%zu recordings", s->nfiles);
		sum->host = buf;
	}
}

/* "N mappings not kept ...: pid P (N): PATH...; ..." of a file with dropped records. */
size_t rpt_session__dropped(const struct rpt_file_stats *f, char *buf, size_t cap)
{
	size_t len, i;

	len = (size_t)snprintf(buf, cap,
			       "%llu mappings and %llu symbol or process records not kept (past "
			       "half the bound on what records keep; their frames show as "
			       "unknown)",
			       (unsigned long long)f->maps_dropped,
			       (unsigned long long)f->meta_dropped);
	for (i = 0; i < f->ndropped && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s pid %u: %llu, the first %s%s",
					i ? ";" : ":", f->dropped[i].pid,
					(unsigned long long)f->dropped[i].n, f->dropped[i].path,
					strlen(f->dropped[i].path) >= 95 ? "..." : "");
	return len;
}

int rpt_session__warn_damage(struct rpt_session *s, FILE *err)
{
	char line[1024];
	int n = 0;

	for (size_t i = 0; i < s->nfiles; i++) {
		const struct rpt_file_stats *f = &s->files[i];

		if (!f->damaged && f->finished && f->errmsg[0]) /* bytes after END */
			fprintf(err, "sa-report: %s: %s\n", rpt_session__str(s, f->path),
				f->errmsg);
		if (f->maps_dropped || f->meta_dropped) {
			rpt_session__dropped(f, line, sizeof(line));
			fprintf(err, "sa-report: %s: %s\n", rpt_session__str(s, f->path), line);
		}
		if (!f->damaged && f->finished)
			continue;
		file_damage(f, line, sizeof(line));
		fprintf(err, "sa-report: %s: %s\n", rpt_session__str(s, f->path), line);
		n++;
	}
	return n;
}

void rpt_session__warn(struct rpt_session *s, FILE *err, bool verbose)
{
	char detail[512];
	uint64_t lost = lost_by_cause(s, detail, sizeof(detail));

	for (size_t i = 0; i < s->nfiles; i++) {
		const struct rpt_file_stats *f = &s->files[i];

		if (f->dropped_frames && verbose)
			fprintf(err,
				"sa-report: %s: %llu samples had frames of a broken "
				"frame-pointer walk dropped\n",
				rpt_session__str(s, f->path),
				(unsigned long long)f->dropped_frames);
	}
	if (lost)
		fprintf(err, "sa-report: lost samples: %llu (%s)\n", (unsigned long long)lost,
			detail);
}
