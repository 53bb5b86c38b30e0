// SPDX-License-Identifier: MIT
/*
 * input.c - opening what sa-report reads: a path or "-", its kind found from
 * the first 64 KiB (kept, so a pipe loses nothing), a stream for the text
 * readers, and for the recording reader a path, or standard input as a
 * stream read once (rpt_input__read()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input.h"
#include "saf.h"

#define PEEK_MAX      (64 * 1024)
#define PEEK_LINE_MAX (64 << 20) /* a first line longer than this is not sniffed whole */
#define PERF_MAGIC    "PERFILE2" /* perf.data, file and pipe mode (perf's header.c) */

struct rpt_input {
	FILE *src;  /* the file, or stdin */
	FILE *text; /* src itself (rewound), or a cookie stream serving peek first */
	char *peek;
	size_t peek_len, peek_off;
	enum rpt_input_kind kind;
	const char *orig;
};

void rpt_input__errf(char *buf, size_t sz, size_t line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!buf || !sz)
		return;
	n = snprintf(buf, sz, "line %zu: ", line);
	if (n < 0 || (size_t)n >= sz)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, sz - n, fmt, ap);
	va_end(ap);
}

const char *rpt_input__kind_name(enum rpt_input_kind k)
{
	static const char *const names[] = {
		[RPT_INPUT_UNKNOWN] = "unknown",
		[RPT_INPUT_SA] = "sa recording",
		[RPT_INPUT_FOLDED] = "folded text",
		[RPT_INPUT_PERFSCRIPT] = "perf script text",
		[RPT_INPUT_PERFDATA] = "perf.data file",
	};

	return k <= RPT_INPUT_PERFDATA ? names[k] : "unknown";
}

/* The line at @s (up to @e) without its end: @return its length, *next set. */
static size_t line_at(const char *s, const char *e, const char **next)
{
	const char *nl = memchr(s, '\n', (size_t)(e - s));
	size_t len = (size_t)((nl ? nl : e) - s);

	*next = nl ? nl + 1 : e;
	while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	return len;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "... 123": what ends every folded line. */
static bool ends_in_count(const char *s, size_t len)
{
	size_t d = 0;

	while (d < len && s[len - 1 - d] >= '0' && s[len - 1 - d] <= '9')
		d++;
	return d && d < len && s[len - 1 - d] == ' ';
}

/* " 123.456789:" in the line: perf script's time field. */
static bool has_time(const char *s, size_t len)
{
	for (size_t i = 1; i + 8 < len; i++) {
		size_t j = i;

		if (s[i - 1] != ' ' || !is_digit(s[i]))
			continue;
		while (j < len && is_digit(s[j]))
			j++;
		if (j + 7 < len && s[j] == '.' && is_digit(s[j + 1])) {
			size_t k = j + 1;

			while (k < len && is_digit(s[k]))
				k++;
			if (k < len && s[k] == ':')
				return true;
		}
	}
	return false;
}

/*
 * Folded text is "stack count" lines. perf script text starts a sample with
 * a header that does not end in a count ("...: cpu-clock: "), or one that
 * does (-F comm,pid) followed by an indented frame line; either way the
 * first indented line decides when the first line alone cannot.
 */
enum rpt_input_kind rpt_input__sniff(const char *buf, size_t n)
{
	const char *s = buf, *e = buf + n, *next;
	size_t len = 0;

	if (n >= SAF_MAGIC_LEN && !memcmp(buf, SAF_MAGIC, SAF_MAGIC_LEN))
		return RPT_INPUT_SA;
	if (n >= 8 && !memcmp(buf, PERF_MAGIC, 8))
		return RPT_INPUT_PERFDATA;
	if (memchr(buf, '\0', n))
		return RPT_INPUT_UNKNOWN;
	while (s < e) { /* first line that is neither blank nor a comment */
		len = line_at(s, e, &next);
		if (len && s[0] != '#')
			break;
		s = next;
	}
	if (s >= e)
		return RPT_INPUT_FOLDED;
	if (s[0] == ' ' || s[0] == '\t')
		return RPT_INPUT_PERFSCRIPT;
	if (next < e && (next[0] == ' ' || next[0] == '\t'))
		return RPT_INPUT_PERFSCRIPT;
	if (ends_in_count(s, len))
		return RPT_INPUT_FOLDED;
	/* a sample without frames ("comm pid ... event: "), or without call
	 * chains ("comm pid 12.345678: event: addr sym (dso)") */
	return (len && s[len - 1] == ':') || has_time(s, len) ? RPT_INPUT_PERFSCRIPT
							      : RPT_INPUT_UNKNOWN;
}

/* The peek, then the rest of the source: what a stream of the input reads. */
static ssize_t peek_read(void *cookie, char *buf, size_t size)
{
	struct rpt_input *in = cookie;
	size_t n;

	if (in->peek_off < in->peek_len) {
		n = in->peek_len - in->peek_off;
		n = n < size ? n : size;
		memcpy(buf, in->peek + in->peek_off, n);
		in->peek_off += n;
		return (ssize_t)n;
	}
	n = fread(buf, 1, size, in->src);
	if (!n && ferror(in->src)) {
		errno = errno ? errno : EIO;
		return -1;
	}
	return (ssize_t)n;
}

/* A stream from the first byte: the file rewound, or the peek then the rest. */
static int open_text(struct rpt_input *in)
{
	static const cookie_io_functions_t io = {.read = peek_read};

	if (in->src != stdin && !fseek(in->src, 0, SEEK_SET)) {
		in->text = in->src;
		return 0;
	}
	in->text = fopencookie(in, "r", io);
	if (!in->text)
		return -errno;
	setvbuf(in->text, NULL, _IOFBF, 1 << 16);
	return 0;
}

/*
 * Text whose first line is longer than the first read: read on to the end
 * of that line (up to PEEK_LINE_MAX), so what the text is does not depend
 * on its first line fitting 64 KiB.
 */
static int peek_first_line(struct rpt_input *in)
{
	size_t cap = PEEK_MAX;

	while (in->peek_len == cap && cap < PEEK_LINE_MAX &&
	       !memchr(in->peek, '\n', in->peek_len) && !memchr(in->peek, '\0', in->peek_len)) {
		char *n = realloc(in->peek, cap * 2);

		if (!n)
			return -ENOMEM;
		in->peek = n;
		in->peek_len += fread(n + cap, 1, cap, in->src);
		cap *= 2;
		if (ferror(in->src))
			return -EIO;
	}
	return 0;
}

struct rpt_input *rpt_input__open(const char *path)
{
	struct rpt_input *in = calloc(1, sizeof(*in));
	int err = 0;

	if (!in)
		return NULL;
	in->orig = path;
	in->src = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	in->peek = malloc(PEEK_MAX);
	if (!in->src || !in->peek) {
		err = in->src ? -ENOMEM : -errno;
		goto fail;
	}
	in->peek_len = fread(in->peek, 1, PEEK_MAX, in->src);
	if (ferror(in->src)) {
		err = -EIO;
		goto fail;
	}
	err = peek_first_line(in);
	if (err)
		goto fail;
	in->kind = rpt_input__sniff(in->peek, in->peek_len);
	if (in->kind == RPT_INPUT_FOLDED || in->kind == RPT_INPUT_PERFSCRIPT)
		err = open_text(in);
	if (!err)
		return in;
fail:
	rpt_input__close(in);
	errno = -err;
	return NULL;
}

enum rpt_input_kind rpt_input__kind(const struct rpt_input *in)
{
	return in->kind;
}

FILE *rpt_input__stream(struct rpt_input *in)
{
	return in->text;
}

const char *rpt_input__path(const struct rpt_input *in)
{
	struct stat st;

	/* a pipe by name (<(cmd), /dev/stdin) gave its first bytes to the peek */
	if (in->src == stdin || fstat(fileno(in->src), &st) || !S_ISREG(st.st_mode))
		return NULL;
	return in->orig;
}

ssize_t rpt_input__read(void *in, void *buf, size_t len)
{
	return peek_read(in, buf, len);
}

void rpt_input__close(struct rpt_input *in)
{
	if (!in)
		return;
	if (in->text && in->text != in->src)
		fclose(in->text);
	if (in->src && in->src != stdin)
		fclose(in->src);
	free(in->peek);
	free(in);
}

void rpt_input__warn_perfscript(FILE *out, const char *path, const struct rpt_perfscript_stats *st,
				bool quiet)
{
	if (quiet)
		return;
	if (st->other_event)
		fprintf(out,
			"sa-report: %s: kept the %llu samples of event %s; skipped %llu of "
			"other events (one event per input)\n",
			path, (unsigned long long)st->samples, st->event,
			(unsigned long long)st->other_event);
	if (st->bad_lines)
		fprintf(out,
			"sa-report: %s: skipped %llu lines of no known form (first: line %zu)\n",
			path, (unsigned long long)st->bad_lines, st->first_bad);
}

/* Per pool offset, the kind other than user code some frame of that name
 * has (0 = none): a name known as kernel, JIT or inline elsewhere. */
static uint8_t *known_kinds(const struct rpt_profile *p)
{
	uint8_t *k = calloc(p->pool_len + 1, 1);

	for (size_t i = 0; k && i < p->nframes; i++)
		if (p->frames[i].kind >= RPT_FRAME_KERNEL &&
		    p->frames[i].kind <= RPT_FRAME_INLINE && !k[p->frames[i].name])
			k[p->frames[i].name] = (uint8_t)p->frames[i].kind;
	return k;
}

int rpt_input__unify(struct rpt_profile **pp)
{
	const struct rpt_profile *p = *pp;
	struct rpt_profile *q = rpt_profile__new();
	uint8_t *kinds = known_kinds(p);
	struct rpt_frame *buf = NULL;
	size_t cap = 0;
	int err = q && kinds ? rpt_profile__copy_meta(q, p) : -ENOMEM;

	for (size_t i = 0; !err && i < p->nstacks; i++) {
		const struct rpt_stack *s = &p->stacks[i];
		const struct rpt_frame *f = rpt_profile__stack_frames(p, s);

		if (s->nframes > cap) {
			void *nb = realloc(buf, s->nframes * sizeof(*buf));

			err = nb ? 0 : -ENOMEM;
			buf = nb ? nb : buf;
			cap = nb ? s->nframes : cap;
		}
		for (uint32_t j = 0; !err && j < s->nframes; j++) {
			const char *name = rpt_profile__name(p, f[j].name);
			int64_t off = rpt_profile__intern(q, name, strlen(name));
			uint32_t kind = f[j].kind;

			if (kind == RPT_FRAME_USER && kinds[f[j].name])
				kind = kinds[f[j].name];
			err = off < 0 ? (int)off : 0;
			buf[j] = (struct rpt_frame){.name = (uint32_t)off, .kind = kind};
		}
		if (!err)
			err = rpt_profile__add(q, buf, s->nframes, s->count);
	}
	free(buf);
	free(kinds);
	if (err) {
		rpt_profile__free(q);
		return err;
	}
	rpt_profile__free(*pp);
	*pp = q;
	return 0;
}
