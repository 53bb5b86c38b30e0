// SPDX-License-Identifier: MIT
/*
 * filter.c - the filters. Record-level ones, which load.c applies as it
 * reads: --pid, --tid and --comm lists, --time and --since/--until on
 * intervals. Profile-level ones shared by every output mode: --focus (keep
 * stacks through a matching frame), --ignore (drop them) and --min-percent
 * (drop stacks below a share of what is left). Calls no other stage.
 */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output.h"
#include "session_int.h"

/* Per pool offset: whether the name was tried, and whether it matched. */
#define M_FOCUS_DONE  0x1
#define M_FOCUS	      0x2
#define M_IGNORE_DONE 0x4
#define M_IGNORE      0x8

struct filter_ctx {
	const struct rpt_profile *p;
	regex_t focus, ignore;
	bool has_focus, has_ignore;
	uint8_t *memo; /* one byte per pool byte; only name starts are used */
};

static bool name_matches(struct filter_ctx *c, uint32_t name, bool focus)
{
	uint8_t done = focus ? M_FOCUS_DONE : M_IGNORE_DONE, hit = focus ? M_FOCUS : M_IGNORE;

	if (!(c->memo[name] & done)) {
		regex_t *re = focus ? &c->focus : &c->ignore;

		c->memo[name] |= done;
		if (!regexec(re, rpt_profile__name(c->p, name), 0, NULL, 0))
			c->memo[name] |= hit;
	}
	return c->memo[name] & hit;
}

static bool keep_stack(struct filter_ctx *c, const struct rpt_stack *s)
{
	const struct rpt_frame *f = rpt_profile__stack_frames(c->p, s);
	bool focused = !c->has_focus;

	for (uint32_t j = 0; j < s->nframes; j++) {
		if (c->has_ignore && name_matches(c, f[j].name, false))
			return false;
		if (!focused && name_matches(c, f[j].name, true))
			focused = true;
	}
	return focused;
}

static int compile(regex_t *re, const char *pattern, const char *what, char *errbuf,
		   size_t errbuf_sz)
{
	char msg[128];
	int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);

	if (!rc)
		return 0;
	regerror(rc, re, msg, sizeof(msg));
	if (errbuf && errbuf_sz)
		snprintf(errbuf, errbuf_sz, "%s regex '%s': %s", what, pattern, msg);
	return -EINVAL;
}

/* Add stack @s of @src into @dst, names re-interned; @buf holds >= nframes. */
static int copy_stack(struct rpt_profile *dst, const struct rpt_profile *src,
		      const struct rpt_stack *s, struct rpt_frame *buf)
{
	const struct rpt_frame *f = rpt_profile__stack_frames(src, s);

	for (uint32_t j = 0; j < s->nframes; j++) {
		const char *name = rpt_profile__name(src, f[j].name);
		int64_t off = rpt_profile__intern(dst, name, strlen(name));

		if (off < 0)
			return (int)off;
		buf[j].name = (uint32_t)off;
		buf[j].kind = f[j].kind;
		name = rpt_profile__name(src, f[j].module);
		off = rpt_profile__intern(dst, name, strlen(name));
		if (off < 0)
			return (int)off;
		buf[j].module = (uint32_t)off;
	}
	return rpt_profile__add(dst, buf, s->nframes, s->count);
}

static int copy_meta(struct rpt_profile *dst, const struct rpt_profile *src)
{
	int err = rpt_profile__copy_meta(dst, src);

	if (err)
		return err;
	/* Modules first: a profile's frames carry modules only once it has a table. */
	for (size_t i = 0; i < src->nmodules; i++) {
		const struct rpt_module *m = &src->modules[i];
		int64_t off = rpt_profile__add_module(dst, rpt_profile__name(src, m->path),
						      rpt_profile__name(src, m->build_id));

		if (off < 0)
			return (int)off;
	}
	return 0;
}

/* Move what @keep marks from @p into a fresh profile, then swap it into @p. */
static int rebuild(struct rpt_profile *p, const uint8_t *keep, uint64_t min_count)
{
	struct rpt_profile *q = rpt_profile__new(), tmp;
	struct rpt_frame *buf = NULL;
	uint32_t maxn = 0;
	int err = -ENOMEM;

	if (!q)
		goto cleanup;
	for (size_t i = 0; i < p->nstacks; i++)
		if (p->stacks[i].nframes > maxn)
			maxn = p->stacks[i].nframes;
	buf = malloc((maxn + 1) * sizeof(*buf));
	if (!buf)
		goto cleanup;
	err = copy_meta(q, p);
	for (size_t i = 0; i < p->nstacks && !err; i++)
		if (keep[i] && p->stacks[i].count >= min_count)
			err = copy_stack(q, p, &p->stacks[i], buf);
	if (err)
		goto cleanup;
	tmp = *p;
	*p = *q;
	*q = tmp;
cleanup:
	free(buf);
	rpt_profile__free(q);
	return err;
}

/*
 * --min-percent applies after --focus and --ignore, to the share of the
 * samples they left: "what is left, minus the noise". A stack is dropped
 * when count * 100 < min_percent * remaining total.
 */
int rpt_profile__filter(struct rpt_profile *p, const char *focus, const char *ignore,
			double min_percent, char *errbuf, size_t errbuf_sz)
{
	struct filter_ctx c = {.p = p};
	uint8_t *keep = NULL;
	uint64_t left = 0, min_count = 0;
	int err;

	if (!focus && !ignore && min_percent <= 0)
		return 0;
	err = focus ? compile(&c.focus, focus, "--focus", errbuf, errbuf_sz) : 0;
	if (err)
		return err;
	c.has_focus = focus != NULL;
	err = ignore ? compile(&c.ignore, ignore, "--ignore", errbuf, errbuf_sz) : 0;
	if (err)
		goto cleanup;
	c.has_ignore = ignore != NULL;
	err = -ENOMEM;
	c.memo = calloc(p->pool_len, 1);
	keep = malloc(p->nstacks + 1);
	if (!c.memo || !keep)
		goto cleanup;
	for (size_t i = 0; i < p->nstacks; i++) {
		keep[i] = keep_stack(&c, &p->stacks[i]);
		if (keep[i])
			left += p->stacks[i].count;
	}
	if (min_percent > 0) {
		double m = (double)left * min_percent / 100;

		min_count = (uint64_t)m + ((double)(uint64_t)m < m);
	}
	err = rebuild(p, keep, min_count);
cleanup:
	if (c.has_focus)
		regfree(&c.focus);
	if (c.has_ignore)
		regfree(&c.ignore);
	free(c.memo);
	free(keep);
	return err;
}

static int parse_ids(const char *list, uint32_t **out, size_t *n)
{
	const char *p = list;

	*n = 0;
	*out = NULL;
	if (!list)
		return 0;
	*out = calloc(strlen(list) / 2 + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	while (*p) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);

		if (end == p || (*end && *end != ','))
			return -EINVAL;
		(*out)[(*n)++] = v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int parse_comms(struct rpt_recfilter *s, const char *list)
{
	char *copy, *tok, *save = NULL;

	if (!list)
		return 0;
	s->comms = calloc(strlen(list) + 2, sizeof(*s->comms));
	copy = strdup(list);
	if (!s->comms || !copy) {
		free(copy);
		return -ENOMEM;
	}
	s->comms[0] = copy; /* owns the buffer the others point into */
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		s->comms[s->ncomms++] = tok;
	if (!s->ncomms)
		s->ncomms = 1; /* "" matches nothing useful but keeps the filter on */
	return 0;
}

int rpt_recfilter__init(struct rpt_recfilter *rf, const struct rpt_filter *f)
{
	int err = parse_ids(f->pid, &rf->pids, &rf->npids);

	if (!err)
		err = parse_ids(f->tid, &rf->tids, &rf->ntids);
	if (!err)
		err = parse_comms(rf, f->comm);
	return err;
}

void rpt_recfilter__fini(struct rpt_recfilter *rf)
{
	free(rf->pids);
	free(rf->tids);
	if (rf->comms)
		free(rf->comms[0]);
	free(rf->comms);
	memset(rf, 0, sizeof(*rf));
}

static bool in_list(const uint32_t *v, size_t n, uint32_t x)
{
	if (!n)
		return true;
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

bool rpt_recfilter__task(const struct rpt_recfilter *rf, uint32_t pid, uint32_t tid)
{
	return in_list(rf->pids, rf->npids, pid) && in_list(rf->tids, rf->ntids, tid);
}

bool rpt_recfilter__comm(const struct rpt_recfilter *rf, const char *comm)
{
	if (!rf->ncomms)
		return true;
	for (size_t i = 0; i < rf->ncomms; i++)
		if (!strcmp(rf->comms[i], comm))
			return true;
	return false;
}

bool rpt_filter__time_ok(const struct rpt_filter *f, uint64_t base_ns, uint64_t start_ns,
			 uint64_t end_ns)
{
	double mid = ((double)start_ns + (double)end_ns) / 2 - (double)base_ns;

	return !f->has_time || (mid >= f->time_from * 1e9 && mid < f->time_to * 1e9);
}

/* Exactly @min to @max decimal digits at *@p (no sign, no space): *@v, *@p past them. */
static bool digits(const char **p, int min, int max, int *v)
{
	int n = 0;

	*v = 0;
	while (n < max && (*p)[n] >= '0' && (*p)[n] <= '9')
		*v = *v * 10 + ((*p)[n++] - '0');
	*p += n;
	return n >= min;
}

/* "+HH[:MM]", "-HHMM" or "Z" at @p: the offset east of UTC in seconds. */
static int parse_zone(const char *p, long *off)
{
	const char *q = p + 1;
	int hh = 0, mm = 0;

	if (!strcmp(p, "Z") || !strcmp(p, "z")) {
		*off = 0;
		return 0;
	}
	if ((p[0] != '+' && p[0] != '-') || !digits(&q, 2, 2, &hh))
		return -EINVAL;
	if (*q == ':')
		q++;
	if (*q && !digits(&q, 2, 2, &mm))
		return -EINVAL;
	if (*q || hh > 23 || mm > 59)
		return -EINVAL;
	*off = (p[0] == '-' ? -1 : 1) * (hh * 3600L + mm * 60L);
	return 0;
}

/* "HH:MM[:SS[.frac]]" at @p into @tm's clock and *@frac; the rest in *@end. */
static int parse_clock(const char *p, struct tm *tm, double *frac, const char **end)
{
	tm->tm_sec = 0;
	*frac = 0;
	if (!digits(&p, 1, 2, &tm->tm_hour) || *p++ != ':' || !digits(&p, 2, 2, &tm->tm_min))
		return -EINVAL;
	if (*p == ':') {
		p++;
		if (!digits(&p, 2, 2, &tm->tm_sec) || tm->tm_sec > 60)
			return -EINVAL;
		if (*p == '.') {
			double scale = 0.1;

			for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
				*frac += (*p - '0') * scale;
		}
	}
	*end = p;
	return tm->tm_hour > 23 || tm->tm_min > 59 ? -EINVAL : 0;
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100) || y % 400 == 0;
}

/* "YYYY-MM-DD" and a separator at *@p, checked as written (no 02-30). */
static int parse_date(const char **p, struct tm *tm)
{
	static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	const char *q = *p;
	int y, mo, d;

	if (!digits(&q, 4, 4, &y) || *q != '-')
		return 1; /* no date: a time of today */
	q++;
	if (!digits(&q, 2, 2, &mo) || *q++ != '-' || !digits(&q, 2, 2, &d))
		return -EINVAL;
	if (*q != 'T' && *q != 't' && *q != ' ')
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && leap(y)) || y < 1970)
		return -EINVAL;
	tm->tm_year = y - 1900;
	tm->tm_mon = mo - 1;
	tm->tm_mday = d;
	*p = q + 1;
	return 0;
}

int rpt_parse_wall_time(const char *arg, time_t now, int64_t *ns)
{
	struct tm tm = {0};
	const char *rest;
	double frac;
	long off = 0;
	bool zone = false;
	time_t t;
	int err;

	localtime_r(&now, &tm);
	err = parse_date(&arg, &tm);
	if (err < 0 || parse_clock(arg, &tm, &frac, &rest))
		return -EINVAL;
	if (*rest) {
		if (parse_zone(rest, &off))
			return -EINVAL;
		zone = true;
	}
	tm.tm_isdst = -1;
	t = zone ? timegm(&tm) - off : mktime(&tm);
	if (t == (time_t)-1 && tm.tm_year < 70)
		return -EINVAL;
	*ns = (int64_t)t * 1000000000ll + (int64_t)(frac * 1e9 + 0.5);
	return 0;
}

bool rpt_filter__wall_ok(const struct rpt_filter *f, uint64_t start_real_ns, uint64_t start_mono_ns,
			 uint64_t start_ns, uint64_t end_ns)
{
	double mid;

	if (!f->has_wall)
		return true;
	if (!start_real_ns)
		return false; /* no META: no wall-clock time */
	mid = (double)start_real_ns + ((double)start_ns + (double)end_ns) / 2 -
	      (double)start_mono_ns;
	return mid >= (double)f->wall_from_ns && mid < (double)f->wall_to_ns;
}
