// SPDX-License-Identifier: MIT
/*
 * in_perfscript.c - the `perf script` text reader: a header line per sample
 * ("comm pid/tid ... event:"), its frames leaf first, one per indented line
 * ("addr sym+off (dso)"), a blank line after. Names follow
 * stackcollapse-perf.pl's rules so the folded output matches it; where they
 * do not is in docs/input.md. Lines stream: memory follows distinct stacks.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "input.h"

#define MAX_NAME 4096

struct ps {
	struct rpt_profile *p;
	const struct rpt_perfscript_opts *o;
	struct rpt_perfscript_stats *st;
	struct rpt_frame *fr; /* this sample's frames, leaf first; [0] unused */
	size_t n, cap;
	bool in_sample, java;
	uint32_t root;
	char pc[32];	    /* the previous frame line's address: perf's inline chains */
	int64_t mod_off;    /* the module of the previous frame line, and its path: */
	char mod[MAX_NAME]; /* consecutive frames mostly share one */
	char name[MAX_NAME];
};

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Whitespace, digits, any slashes, digits or none, whitespace at @s: what
 * follows a comm in stackcollapse-perf.pl's header pattern. @return whether
 * @s is that, with the two numbers (the second may be empty). */
static bool pid_field(const char *s, const char **pid, size_t *plen, const char **tid, size_t *tlen)
{
	if (!is_ws(*s))
		return false;
	while (is_ws(*s))
		s++;
	*pid = s;
	while (is_digit(*s))
		s++;
	*plen = (size_t)(s - *pid);
	while (*s == '/')
		s++;
	*tid = s;
	while (is_digit(*s))
		s++;
	*tlen = (size_t)(s - *tid);
	return *plen && is_ws(*s);
}

/* The event named at the end of a header ("...: [period] event:"), or 0. */
static size_t header_event(const char *s, size_t len, const char **ev)
{
	size_t e, b;

	while (len && is_ws(s[len - 1]))
		len--;
	if (len < 3 || s[len - 1] != ':')
		return 0;
	e = b = len - 1;
	while (b && !is_ws(s[b - 1]))
		b--;
	if (b == e || !b)
		return 0;
	*ev = s + b;
	while (b && is_ws(s[b - 1]))
		b--;
	while (b && is_digit(s[b - 1]))
		b--;
	while (b && is_ws(s[b - 1]))
		b--;
	return b && s[b - 1] == ':' ? e - (size_t)(*ev - s) : 0;
}

static int grow(struct ps *x);

static int end_sample(struct ps *x)
{
	struct rpt_frame *f;
	size_t n = x->n;
	int err;

	if (!x->in_sample)
		return 0;
	x->in_sample = false;
	err = grow(x);
	if (err)
		return err;
	f = x->fr;
	/* leaf first as read: reverse behind the root, in place */
	f[0] = (struct rpt_frame){.name = x->root, .kind = RPT_FRAME_ROOT};
	for (size_t i = 1, j = n; i < j; i++, j--) {
		struct rpt_frame t = f[i];

		f[i] = f[j];
		f[j] = t;
	}
	err = rpt_profile__add(x->p, f, (uint32_t)n + 1, 1);
	if (!err)
		x->st->samples++;
	return err;
}

static int header(struct ps *x, const char *s, size_t len)
{
	const char *pid, *tid, *ev = NULL;
	size_t plen, tlen, clen, evlen;
	int64_t off;
	int n;

	for (clen = 2; clen < len && !pid_field(s + clen, &pid, &plen, &tid, &tlen); clen++)
		;
	if (clen >= len)
		return 1;
	evlen = header_event(s, len, &ev);
	if (evlen && !x->st->event[0])
		snprintf(x->st->event, sizeof(x->st->event), "%.*s", (int)evlen, ev);
	if (evlen && (strlen(x->st->event) != evlen || memcmp(x->st->event, ev, evlen))) {
		x->st->other_event++;
		return 0;
	}
	if (!tlen) { /* one number: perf's tid */
		tid = pid;
		tlen = plen;
	}
	if (x->o && x->o->show_tid)
		n = snprintf(x->name, sizeof(x->name), "%.*s-%.*s/%.*s", (int)clen, s, (int)plen,
			     pid, (int)tlen, tid);
	else if (x->o && x->o->show_pid)
		n = snprintf(x->name, sizeof(x->name), "%.*s-%.*s", (int)clen, s, (int)plen, pid);
	else
		n = snprintf(x->name, sizeof(x->name), "%.*s", (int)clen, s);
	for (char *c = x->name; *c; c++)
		*c = *c == ' ' ? '_' : *c;
	off = rpt_profile__intern(x->p, x->name, (size_t)n < sizeof(x->name) ? (size_t)n : 0);
	if (off < 0)
		return (int)off;
	x->root = (uint32_t)off;
	x->java = !strncmp(x->name, "java", 4);
	x->in_sample = true;
	x->n = 0;
	x->pc[0] = '\0';
	return 0;
}

/* stackcollapse-perf.pl's tidying of one name, in place in @b (NUL ended). */
static void tidy(char *b, bool java)
{
	char *dot = strstr(b, ".("), *w = b;

	for (char *c = b; *c; c++)
		*c = *c == ';' ? ':' : *c;
	if (!(dot && strstr(dot + 2, ")."))) { /* Go's pkg.(*T).M keeps its parentheses */
		for (char *c = strchr(b, '('); c; c = strchr(c + 1, '('))
			if (strncmp(c + 1, "anonymous namespace)", 20)) {
				*c = '\0';
				break;
			}
	}
	for (char *c = b; *c; c++)
		if (*c != '"' && *c != '\'')
			*w++ = *c;
	*w = '\0';
	if (java && b[0] == 'L' && strchr(b, '/'))
		memmove(b, b + 1, strlen(b));
}

static uint32_t frame_kind(const char *mod, size_t mlen, bool unknown)
{
	bool kernel =
		mlen && (mod[0] == '[' || (mlen >= 7 && !memcmp(mod + mlen - 7, "vmlinux", 7)));

	if (kernel && !memmem(mod, mlen, "unknown", 7))
		return RPT_FRAME_KERNEL;
	if (mlen > 14 && memmem(mod, mlen, "/tmp/perf-", 10) && memmem(mod, mlen, ".map", 4))
		return RPT_FRAME_JIT;
	return unknown ? RPT_FRAME_UNKNOWN : RPT_FRAME_USER;
}

/* Room for one more frame and the root. */
static int grow(struct ps *x)
{
	return SAC_GROW(x->fr, x->cap, x->n + 2, 128);
}

static int push(struct ps *x, const char *name, uint32_t kind, uint32_t module)
{
	int64_t off = rpt_profile__intern(x->p, name, strlen(name));
	int err = off < 0 ? (int)off : grow(x);

	if (err)
		return err;
	x->fr[++x->n] = (struct rpt_frame){.name = (uint32_t)off, .kind = kind, .module = module};
	return 0;
}

/* One part of "a->b->c" (perf's older inline form): @return 0 or -errno. */
static int part(struct ps *x, const char *f, size_t len, const char *mod, size_t mlen,
		uint32_t kind, uint32_t module)
{
	bool unknown = len == 9 && !memcmp(f, "[unknown]", 9);
	const char *base;

	if (unknown && !(mlen == 9 && !memcmp(mod, "[unknown]", 9))) {
		base = memrchr(mod, '/', mlen);
		base = base ? base + 1 : mod;
		snprintf(x->name, sizeof(x->name), "[%.*s]", (int)(mod + mlen - base), base);
	} else { /* len < MAX_NAME: frame() checked */
		memcpy(x->name, f, len);
		x->name[len] = '\0';
	}
	tidy(x->name, x->java);
	if (kind != RPT_FRAME_INLINE)
		kind = frame_kind(mod, mlen, unknown);
	return push(x, x->name, kind, module);
}

/* sym+off: the offset cut, "(...)" skipped, "a->b" split; pushed leaf first. */
static int frame_names(struct ps *x, const char *f, size_t len, const char *mod, size_t mlen,
		       uint32_t module)
{
	size_t d = len;
	int err = 0;

	while (d && isxdigit((unsigned char)f[d - 1]) && !isupper((unsigned char)f[d - 1]))
		d--;
	if (d >= 3 && d < len && !memcmp(f + d - 3, "+0x", 3))
		len = d - 3;
	if (!len || f[0] == '(')
		return 0;
	for (size_t end = len; !err;) {
		const char *arrow = NULL;

		for (size_t i = end; i >= 2 && !arrow; i--)
			arrow = f[i - 2] == '-' && f[i - 1] == '>' ? f + i - 2 : NULL;
		if (!arrow)
			return part(x, f, end, mod, mlen, RPT_FRAME_USER, module);
		err = part(x, arrow + 2, (size_t)(f + end - arrow - 2), mod, mlen, RPT_FRAME_INLINE,
			   module);
		end = (size_t)(arrow - f);
	}
	return err;
}

/* "addr sym+off (dso)": @s past the indent. @return 0, 1 (not a frame line) or -errno. */
static int frame(struct ps *x, const char *s, size_t len)
{
	const char *pc = s, *fn, *mod = "", *close = NULL, *open = NULL;
	size_t pclen, flen, mlen = 0;
	int64_t module = 0;

	while (isalnum((unsigned char)*s) || *s == '_')
		s++;
	pclen = (size_t)(s - pc);
	if (!pclen)
		return 1;
	while (is_ws(*s))
		s++;
	fn = s;
	for (const char *c = pc + len - 1; c > fn && !close; c--)
		close = *c == ')' ? c : NULL;
	for (const char *c = close ? close - 2 : NULL; c && c > fn && !open; c--)
		open = c[0] == ' ' && c[1] == '(' ? c : NULL;
	if (open && close) {
		mod = open + 2;
		mlen = (size_t)(close - mod);
	}
	flen = (size_t)((open && close ? open : pc + len) - fn);
	if (!flen || flen >= MAX_NAME)
		return flen ? 0 : 1;
	/* inline chains: perf prints each inlined frame at its caller's address */
	if (x->n && pclen < sizeof(x->pc) && !memcmp(x->pc, pc, pclen) && !x->pc[pclen])
		x->fr[x->n].kind = RPT_FRAME_INLINE;
	pclen = pclen < sizeof(x->pc) ? pclen : sizeof(x->pc) - 1;
	memcpy(x->pc, pc, pclen);
	x->pc[pclen] = '\0';
	if (mlen && mod[0] == '/' && mlen < MAX_NAME) {
		if (memcmp(x->mod, mod, mlen) || x->mod[mlen]) {
			memcpy(x->mod, mod, mlen);
			x->mod[mlen] = '\0';
			x->mod_off = rpt_profile__add_module(x->p, x->mod, NULL);
		}
		module = x->mod_off;
		if (module < 0)
			return (int)module;
	}
	return frame_names(x, fn, flen, mod, mlen, (uint32_t)module);
}

/* One line without its newline. */
static int line(struct ps *x, const char *s, size_t len, size_t lineno)
{
	size_t i = 0;
	int r;

	while (i < len && is_ws(s[i]))
		i++;
	if (i == len)
		return end_sample(x);
	if (s[0] == '#')
		return 0;
	if (i == 0) {
		r = end_sample(x);
		r = r ? r : header(x, s, len);
	} else {
		r = x->in_sample ? frame(x, s + i, len - i) : 0;
	}
	if (r == 1 && !x->st->bad_lines++)
		x->st->first_bad = lineno;
	return r < 0 ? r : 0;
}

int rpt_perfscript__read(struct rpt_profile *p, FILE *in, const struct rpt_perfscript_opts *o,
			 struct rpt_perfscript_stats *st, char *errbuf, size_t errbuf_sz)
{
	struct ps *x = calloc(1, sizeof(*x));
	char *buf = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	int err = x ? 0 : -ENOMEM;

	if (errbuf && errbuf_sz)
		errbuf[0] = '\0';
	memset(st, 0, sizeof(*st));
	if (x)
		*x = (struct ps){.p = p, .o = o, .st = st};
	while (!err && (len = getline(&buf, &cap, in)) >= 0) {
		lineno++;
		if (len && buf[len - 1] == '\n')
			len--;
		buf[len] = '\0';
		err = line(x, buf, (size_t)len, lineno);
	}
	if (!err)
		err = ferror(in) ? -EIO : end_sample(x);
	if (err)
		rpt_input__errf(errbuf, errbuf_sz, lineno, "%s", strerror(-err));
	else
		p->meta.files++;
	if (x)
		free(x->fr);
	free(x);
	free(buf);
	return err;
}
