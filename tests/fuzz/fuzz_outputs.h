// SPDX-License-Identifier: MIT
/*
 * fuzz_outputs.h - what the sa-report harnesses share: repairing a
 * recording's checksums (so mutations reach records, not only the CRC
 * checks; docs/format.md "Chunk header"), and running every writer over a
 * profile with the folded output checked line by line. Static functions:
 * included by fuzz_report.c and fuzz_inputs.c only.
 */
#ifndef SA_FUZZ_OUTPUTS_H
#define SA_FUZZ_OUTPUTS_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export.h"
#include "output.h"
#include "output_int.h"
#include "session.h"

static uint32_t get_le(const uint8_t *p, int n)
{
	uint32_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static void put_crc(uint8_t *at, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	uLong crc = crc32(crc32(0, Z_NULL, 0), a, (uInt)alen);

	if (blen) /* crc32() of a NULL buffer returns the initial value */
		crc = crc32(crc, b, (uInt)blen);
	for (int i = 0; i < 4; i++)
		at[i] = (uint8_t)(crc >> (8 * i));
}

/* Recompute the file header's and every whole chunk's CRC-32 in place. */
static void fix_crcs(uint8_t *b, size_t n)
{
	size_t off;

	if (n < 24)
		return;
	put_crc(b + 20, b, 20, NULL, 0);
	off = get_le(b + 12, 2);
	while (off >= 24 && off + 24 <= n) {
		size_t hs = get_le(b + off + 4, 2), ps = get_le(b + off + 8, 4);

		if (hs < 24 || hs + ps > n - off)
			break;
		put_crc(b + off + 20, b + off, 20, b + off + 24, hs - 24 + ps);
		off += hs + ps;
	}
}

/* Folded output: one "name;name;... COUNT" line per stack, nothing else. */
static void check_folded(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *sp;

		assert(nl); /* every line is terminated */
		sp = nl;
		while (sp > p && sp[-1] >= '0' && sp[-1] <= '9')
			sp--;
		assert(sp < nl && sp > p && sp[-1] == ' '); /* " COUNT" at the end */
		/* no control byte, and well-formed UTF-8 (names are replaced) */
		for (const char *c = p; c < sp - 1; c += rpt_utf8_len(c)) {
			assert((unsigned char)*c >= 0x20 && *c != 0x7f);
			assert(rpt_utf8_len(c) && c + rpt_utf8_len(c) <= sp - 1);
		}
		p = nl + 1;
	}
}

/* Each writer into a growing memory buffer; the folded one is checked. */
static void write_all(struct rpt_session *s, struct rpt_profile *p, struct rpt_profile *q,
		      bool alt)
{
	struct rpt_summary sum;
	char host[256];
	struct rpt_folded_opts fo = { .annotate = alt };
	struct rpt_top_opts to = { .sort_total = alt, .rows = alt ? 5 : 0, .summary = &sum };
	struct rpt_svg_opts vo = { .summary = &sum, .width = alt ? 300 : 0,
				   .min_width = alt ? 0 : -1, .inverted = alt };
	struct rpt_diff_opts dopt = { .no_normalize = alt, .negate = alt, .svg = &vo, .top = &to };
	struct rpt_pprof_opts po = { .root = { .has_pid = alt, .has_tid = alt }, .level = 1 };
	struct rpt_speedscope_opts so = { .name = NULL };
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	rpt_session__summary(s, &sum, host, sizeof(host));
	out = open_memstream(&buf, &len);
	if (!out)
		return;
	rpt_session__info(s, out, alt);
	rpt_session__warn(s, out, alt);
	rpt_top__write(p, out, &to);
	rpt_svg__write(p, out, &vo);
	rpt_pprof__write(p, out, &po);
	rpt_speedscope__write(p, out, &so);
	rpt_diff__folded(q, p, out, &dopt);
	rpt_diff__svg(q, p, out, &dopt);
	rpt_diff__top(q, p, out, &dopt);
	fclose(out);
	free(buf);
	/* Folded alone in its buffer, so it can be checked line by line. */
	buf = NULL;
	len = 0;
	out = open_memstream(&buf, &len);
	if (!out)
		return;
	if (!rpt_folded__write(p, out, &fo) && !fflush(out))
		check_folded(buf, len);
	fclose(out);
	free(buf);
}

#endif /* SA_FUZZ_OUTPUTS_H */
