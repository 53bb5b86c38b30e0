// SPDX-License-Identifier: MIT
/*
 * in_folded.c - the folded-text reader ("root;...;leaf count" per line, as
 * FlameGraph's stackcollapse scripts, bpftrace, bcc's profile -f and
 * async-profiler write): one reader for every input of sa-report, --diff's
 * included. Lines stream through a buffer: memory follows distinct stacks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "input.h"
#include "output.h"

static const char *const kind_suffix[] = {
	[RPT_FRAME_KERNEL] = "_[k]",
	[RPT_FRAME_JIT] = "_[j]",
	[RPT_FRAME_INLINE] = "_[i]",
	[RPT_FRAME_PYTHON] = "_[p]",
};

#define SUFFIX_LEN 4

#define set_err rpt_input__errf

/* Parse an unsigned decimal count spanning [s, e). */
static bool parse_count(const char *s, const char *e, uint64_t *out)
{
	uint64_t v = 0;

	if (s == e)
		return false;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

/*
 * A frame's kind from its text: an annotation suffix wins (and is stripped,
 * so names match those of a symbolized recording); then the root is the
 * comm; "[...]" is an unresolved frame; anything else user code.
 */
static uint32_t frame_kind(const char *name, size_t *len, uint32_t depth)
{
	for (uint32_t k = RPT_FRAME_KERNEL; k <= RPT_FRAME_PYTHON; k++) {
		if (kind_suffix[k] && *len > SUFFIX_LEN &&
		    !memcmp(name + *len - SUFFIX_LEN, kind_suffix[k], SUFFIX_LEN)) {
			*len -= SUFFIX_LEN;
			return k;
		}
	}
	if (depth == 0)
		return RPT_FRAME_ROOT;
	if (*len >= 2 && name[0] == '[' && name[*len - 1] == ']')
		return RPT_FRAME_UNKNOWN;
	return RPT_FRAME_USER;
}

struct parse_state {
	struct rpt_profile *p;
	struct rpt_frame *frames;
	size_t cap;
};

/* Split "a;b;c" ([s, e)) into interned frames and add them with @count. */
static int add_line(struct parse_state *st, const char *s, const char *e, uint64_t count)
{
	uint32_t n = 0;

	while (s <= e) {
		const char *semi = memchr(s, ';', (size_t)(e - s));
		size_t len = (semi ? semi : e) - s;
		int64_t off;
		uint32_t kind;

		if (n == UINT32_MAX)
			return -EOVERFLOW;
		if (SAC_GROW(st->frames, st->cap, (size_t)n + 1, 64))
			return -ENOMEM;
		kind = frame_kind(s, &len, n);
		off = rpt_profile__intern(st->p, s, len);
		if (off < 0)
			return (int)off;
		st->frames[n].name = (uint32_t)off;
		st->frames[n].kind = kind;
		n++;
		if (!semi)
			break;
		s = semi + 1;
	}
	return rpt_profile__add(st->p, st->frames, n, count);
}

/* One line without its newline. Blank lines and '#' comments are skipped. */
static int parse_line(struct parse_state *st, char *line, size_t len, size_t lineno, char *errbuf,
		      size_t errbuf_sz)
{
	const char *sp, *sp2;
	uint64_t count;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0 || line[0] == '#')
		return 0;
	if (memchr(line, '\0', len)) {
		set_err(errbuf, errbuf_sz, lineno, "NUL byte in line");
		return -EBADMSG;
	}
	line[len] = '\0';
	sp = strrchr(line, ' ');
	if (!sp || sp == line || !parse_count(sp + 1, line + len, &count)) {
		set_err(errbuf, errbuf_sz, lineno, "expected \"frame;frame;... COUNT\"");
		return -EBADMSG;
	}
	line[sp - line] = '\0';
	sp2 = strrchr(line, ' ');
	if (sp2 && parse_count(sp2 + 1, sp, &count)) {
		set_err(errbuf, errbuf_sz, lineno,
			"two counts: a differential (\"stack before after\") file is not a "
			"profile");
		return -EBADMSG;
	}
	if (count > UINT64_MAX - st->p->total) { /* never a wrapped total, nor a share past 100% */
		set_err(errbuf, errbuf_sz, lineno,
			"count %llu takes the total past 2^64-1 (%llu before this line)",
			(unsigned long long)count, (unsigned long long)st->p->total);
		return -EOVERFLOW;
	}
	return add_line(st, line, sp, count);
}

int rpt_folded__read(struct rpt_profile *p, FILE *in, char *errbuf, size_t errbuf_sz)
{
	struct parse_state st = {.p = p};
	char *line = NULL;
	size_t lcap = 0, lineno = 0;
	ssize_t len;
	int err = 0;

	if (errbuf && errbuf_sz)
		errbuf[0] = '\0';
	while ((len = getline(&line, &lcap, in)) >= 0) {
		lineno++;
		if (len && line[len - 1] == '\n')
			len--;
		err = parse_line(&st, line, (size_t)len, lineno, errbuf, errbuf_sz);
		if (err) {
			if (err != -EBADMSG && err != -EOVERFLOW)
				set_err(errbuf, errbuf_sz, lineno, "%s", strerror(-err));
			goto cleanup;
		}
	}
	if (ferror(in)) {
		err = -EIO;
		set_err(errbuf, errbuf_sz, lineno + 1, "read error");
		goto cleanup;
	}
	p->meta.files++;
cleanup:
	free(line);
	free(st.frames);
	return err;
}

struct rpt_profile *rpt_folded__parse(FILE *in, char *errbuf, size_t errbuf_sz)
{
	struct rpt_profile *p = rpt_profile__new();
	int err = p ? rpt_folded__read(p, in, errbuf, errbuf_sz) : -ENOMEM;

	if (err) {
		rpt_profile__free(p);
		errno = -err;
		return NULL;
	}
	return p;
}
