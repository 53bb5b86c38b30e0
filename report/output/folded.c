// SPDX-License-Identifier: MIT
/*
 * folded.c - folded stacks ("root;...;leaf count"), the text form that
 * FlameGraph's flamegraph.pl reads: the writer (names sanitized so every line
 * parses, optional _[k] _[j] _[i] suffixes). The reader is in_folded.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output_int.h"

static const char *const kind_suffix[] = {
	[RPT_FRAME_KERNEL] = "_[k]",
	[RPT_FRAME_JIT] = "_[j]",
	[RPT_FRAME_INLINE] = "_[i]",
	[RPT_FRAME_PYTHON] = "_[p]",
};

#define SUFFIX_LEN 4

size_t rpt_utf8_len(const char *str)
{
	static const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
	const unsigned char *s = (const unsigned char *)str;
	size_t n = s[0] >= 0xf8 ? 0 : s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
	uint32_t v;

	if (s[0] < 0x80)
		return 1;
	if (!n)
		return 0;
	v = s[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0; /* also stops at the NUL */
		v = v << 6 | (s[i] & 0x3f);
	}
	return v < min_cp[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) ? 0 : n;
}

bool rpt_cp_hidden(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) ||		       /* C1 controls */
	       cp == 0x061c || cp == 0x200e || cp == 0x200f || /* bidi marks */
	       (cp >= 0x202a && cp <= 0x202e) ||	       /* bidi embeddings, overrides */
	       (cp >= 0x2066 && cp <= 0x2069) ||	       /* bidi isolates */
	       (cp >= 0x200b && cp <= 0x200d) ||	       /* zero width space, joiners */
	       (cp >= 0x2060 && cp <= 0x2064) || cp == 0xfeff; /* word joiner, BOM */
}

void rpt_put_folded_name(FILE *out, const char *s)
{
	const char *run = s;

	/* Clean runs go out with one fwrite: this is the hot loop of folded output. */
	while (*s) {
		unsigned char c = (unsigned char)*s;
		size_t n = c < 0x80 ? 1 : rpt_utf8_len(s);

		if (c == ';' || c < 0x20 || c == 0x7f || !n) {
			fwrite(run, 1, (size_t)(s - run), out);
			fputs(n ? "_" : RPT_UTF8_REPLACEMENT, out);
			run = ++s;
		} else {
			s += n;
		}
	}
	fwrite(run, 1, (size_t)(s - run), out);
}

/* Lines are built in a buffer and written in large blocks: a million stacks
 * of 25 frames made stdio's per-call cost the largest part of the output. */
struct line_buf {
	FILE *out;
	size_t len;
	char buf[1 << 16];
};

static void lb_flush(struct line_buf *b)
{
	if (b->len)
		fwrite(b->buf, 1, b->len, b->out);
	b->len = 0;
}

static void lb_put(struct line_buf *b, const char *s, size_t n)
{
	if (b->len + n > sizeof(b->buf)) {
		lb_flush(b);
		if (n > sizeof(b->buf)) {
			fwrite(s, 1, n, b->out);
			return;
		}
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
}

static void lb_put_u64(struct line_buf *b, uint64_t v)
{
	char d[20];
	size_t n = 0;

	do
		d[sizeof(d) - ++n] = (char)('0' + v % 10);
	while (v /= 10);
	lb_put(b, d + sizeof(d) - n, n);
}

/*
 * Whether the name at each pool offset is plain printable ASCII without ';'
 * (written as is), found on first use: bit 2i of @memo says "known", bit
 * 2i+1 "plain". NULL @memo: every name takes rpt_put_folded_name().
 */
static bool name_plain(uint8_t *memo, const char *pool, uint32_t off)
{
	const unsigned char *c = (const unsigned char *)pool + off;
	uint8_t *m = memo ? &memo[off / 4] : NULL;
	unsigned int sh = off % 4 * 2;

	if (!m)
		return false;
	if (*m >> sh & 1)
		return *m >> sh & 2;
	while (*c >= 0x20 && *c < 0x7f && *c != ';')
		c++;
	*m |= (uint8_t)((*c ? 1 : 3) << sh);
	return !*c;
}

int rpt_folded__write(const struct rpt_profile *p, FILE *out, const struct rpt_folded_opts *o)
{
	bool annotate = o && o->annotate;
	uint8_t *memo = calloc(p->pool_len / 4 + 1, 1); /* NULL only makes it slower */
	struct line_buf *b = malloc(sizeof(*b));
	int err = 0;

	if (!b) {
		free(memo);
		return -ENOMEM;
	}
	b->out = out;
	b->len = 0;
	for (size_t i = 0; i < p->nstacks && !err; i++) {
		const struct rpt_stack *s = &p->stacks[i];
		const struct rpt_frame *f = rpt_profile__stack_frames(p, s);

		for (uint32_t j = 0; j < s->nframes; j++) {
			const char *name = rpt_profile__name(p, f[j].name);

			if (j)
				lb_put(b, ";", 1);
			if (name_plain(memo, p->pool, f[j].name)) {
				lb_put(b, name, strlen(name));
			} else {
				lb_flush(b);
				rpt_put_folded_name(out, name);
			}
			if ((annotate && f[j].kind >= RPT_FRAME_KERNEL &&
			     f[j].kind <= RPT_FRAME_INLINE) ||
			    f[j].kind == RPT_FRAME_PYTHON)
				lb_put(b, kind_suffix[f[j].kind], SUFFIX_LEN);
		}
		lb_put(b, " ", 1);
		lb_put_u64(b, s->count);
		lb_put(b, "\n", 1);
		if (ferror(out))
			err = errno ? -errno : -EIO;
	}
	lb_flush(b);
	if (!err && (fflush(out) || ferror(out)))
		err = errno ? -errno : -EIO;
	free(memo);
	free(b);
	return err;
}
