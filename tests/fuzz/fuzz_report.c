// SPDX-License-Identifier: MIT
/*
 * fuzz_report.c - libFuzzer harness for sa-report's whole pipeline: the
 * bytes are a recording (held in a memfd) that goes through the session
 * (read, filter, symbolize, aggregate), then through every output mode:
 * --info, folded, --top, --svg, --pprof, --speedscope and the three --diff
 * forms. Two option sets alternate, chosen by the input's length, so
 * filters, --show-pid/--show-tid, --addrs and --inverted are reached too.
 * Checksums are repaired before the bytes are used (the file header's and
 * each chunk's CRC-32, docs/format.md "Chunk header"): fuzz_reader already
 * covers the CRC checks, and without this nearly every mutation would stop
 * there instead of reaching records, symbolization and the writers.
 * Oracle beyond the sanitizers: every folded line parses as "stack N" and
 * holds no control byte and only well-formed UTF-8.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const no_dirs[] = { "/nonexistent-sa-fuzz-debug" };
	struct rpt_session_opts o = {
		.sym = { .debug_dirs = no_dirs, .ndebug_dirs = 1, .no_system_debug = true },
	};
	struct rpt_session *s = NULL, *ks = NULL;
	struct rpt_profile *p = NULL, *q = NULL;
	bool alt = size & 1;
	uint8_t *copy = NULL;
	char path[64];
	int fd;

	fd = memfd_create("fuzz_report", 0);
	if (fd < 0)
		return 0;
	copy = malloc(size ? size : 1);
	if (!copy)
		goto cleanup;
	memcpy(copy, data, size);
	fix_crcs(copy, size);
	if (size && write(fd, copy, size) != (ssize_t)size)
		goto cleanup;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (alt) {
		o.show_pid = o.show_tid = o.addrs = true;
		o.filter.has_time = true;
		o.filter.time_from = 0.5;
		o.filter.time_to = 1e9;
	}
	s = rpt_session__new(&o);
	p = rpt_profile__new();
	q = rpt_profile__new();
	if (!s || !p || !q)
		goto cleanup;
	if (rpt_session__add_file(s, path, path, p)) {
		assert(rpt_session__errmsg(s)[0]); /* a failure always says why */
		goto cleanup;
	}
	/* The "before" side of the diffs: the same file, kernel frames only. */
	o.filter.kernel_only = true;
	ks = rpt_session__new(&o);
	if (!ks || rpt_session__add_file(ks, path, path, q))
		goto cleanup;
	if (rpt_profile__filter(p, alt ? "a|main" : NULL, alt ? "^x" : NULL, alt ? 1.0 : 0,
				path, sizeof(path)))
		goto cleanup;
	rpt_profile__sort(p);
	rpt_profile__sort(q);
	write_all(s, p, q, alt);
cleanup:
	rpt_profile__free(q);
	rpt_profile__free(p);
	rpt_session__free(ks);
	rpt_session__free(s);
	close(fd);
	free(copy);
	return 0;
}
