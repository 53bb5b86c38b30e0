// SPDX-License-Identifier: MIT
/*
 * test_pprof.c - report/output/pprof.c and pbenc.c: the gzip-compressed
 * profile.proto is inflated and decoded here by a small independent decoder,
 * then every field is checked: sample types, period, samples (locations leaf
 * first, values, labels), inline lines innermost first, functions, mappings.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <cmocka.h>
#include "sa_cmocka.h"

#include "export.h"
#include "pbenc.h"

/* ---- a minimal protobuf decoder, written from the wire-format spec ------ */

struct field {
	uint32_t num, wt;
	uint64_t v;	      /* varint value */
	const uint8_t *p;     /* length-delimited payload */
	size_t len;
};

static uint64_t varint(const uint8_t *b, size_t len, size_t *pos)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		assert_true(*pos < len);
		v |= (uint64_t)(b[*pos] & 0x7f) << shift;
		if (!(b[(*pos)++] & 0x80))
			return v;
	}
	fail_msg("varint too long");
	return 0;
}

/* Next field of b[0..len) at *pos; false at the end. */
static bool next(const uint8_t *b, size_t len, size_t *pos, struct field *f)
{
	uint64_t tag;

	if (*pos >= len)
		return false;
	tag = varint(b, len, pos);
	f->num = (uint32_t)(tag >> 3);
	f->wt = tag & 7;
	if (f->wt == 0) {
		f->v = varint(b, len, pos);
	} else {
		assert_int_equal(f->wt, 2);
		f->len = varint(b, len, pos);
		assert_true(*pos + f->len <= len);
		f->p = b + *pos;
		*pos += f->len;
	}
	return true;
}

/* The varint field @num of a message (0 when absent: proto3 default). */
static uint64_t get_u(const uint8_t *b, size_t len, uint32_t num)
{
	struct field f;
	size_t pos = 0;
	uint64_t v = 0;

	while (next(b, len, &pos, &f))
		if (f.num == num && f.wt == 0)
			v = f.v;
	return v;
}

/* The packed repeated field @num into @out (capacity @cap); @return the count. */
static size_t get_packed(const uint8_t *b, size_t len, uint32_t num, uint64_t *out, size_t cap)
{
	struct field f;
	size_t pos = 0, n = 0;

	while (next(b, len, &pos, &f)) {
		size_t q = 0;

		if (f.num != num || f.wt != 2)
			continue;
		while (q < f.len) {
			assert_true(n < cap);
			out[n++] = varint(f.p, f.len, &q);
		}
	}
	return n;
}

/* The decoded profile: raw submessages by field number. */
struct prof {
	uint8_t *raw;
	size_t len;
	char *strs[256];
	size_t nstrs;
	struct field msgs[16][256];
	size_t nmsgs[16];
	uint64_t scalar[16];
};

static void decode(const char *gz, size_t gzlen, struct prof *pr)
{
	z_stream z = { 0 };
	size_t pos = 0, cap = 1 << 20;
	struct field f;

	memset(pr, 0, sizeof(*pr));
	assert_true(gzlen > 18 && (uint8_t)gz[0] == 0x1f && (uint8_t)gz[1] == 0x8b);
	pr->raw = malloc(cap);
	assert_int_equal(inflateInit2(&z, 31), Z_OK);
	z.next_in = (uint8_t *)gz;
	z.avail_in = (uInt)gzlen;
	z.next_out = pr->raw;
	z.avail_out = (uInt)cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	pr->len = cap - z.avail_out;
	inflateEnd(&z);
	while (next(pr->raw, pr->len, &pos, &f)) {
		assert_true(f.num < 16);
		if (f.num == 6) {
			pr->strs[pr->nstrs++] = strndup((const char *)f.p, f.len);
		} else if (f.wt == 2) {
			pr->msgs[f.num][pr->nmsgs[f.num]++] = f;
		} else {
			pr->scalar[f.num] = f.v;
			pr->msgs[f.num][pr->nmsgs[f.num]++] = f;
		}
	}
}

static void prof_free(struct prof *pr)
{
	for (size_t i = 0; i < pr->nstrs; i++)
		free(pr->strs[i]);
	free(pr->raw);
}

static const char *str(const struct prof *pr, uint64_t i)
{
	assert_true(i < pr->nstrs);
	return pr->strs[i];
}

/* Message of repeated field @num whose field 1 (id) is @id. */
static const struct field *by_id(const struct prof *pr, uint32_t num, uint64_t id)
{
	for (size_t i = 0; i < pr->nmsgs[num]; i++)
		if (get_u(pr->msgs[num][i].p, pr->msgs[num][i].len, 1) == id)
			return &pr->msgs[num][i];
	fail_msg("no message %u with id %llu", num, (unsigned long long)id);
	return NULL;
}

/* "name file:line" of line @k of location @id, innermost first. */
static void loc_line(const struct prof *pr, uint64_t id, size_t k, char *out, size_t cap)
{
	const struct field *loc = by_id(pr, 4, id), *fn;
	struct field f;
	size_t pos = 0, n = 0;

	while (next(loc->p, loc->len, &pos, &f)) {
		if (f.num != 4 || n++ != k)
			continue;
		fn = by_id(pr, 5, get_u(f.p, f.len, 1));
		snprintf(out, cap, "%s %s:%llu", str(pr, get_u(fn->p, fn->len, 2)),
			 str(pr, get_u(fn->p, fn->len, 4)), (unsigned long long)get_u(f.p, f.len, 2));
		return;
	}
	snprintf(out, cap, "-");
}

/* ---- tests --------------------------------------------------------------- */

static char *write_gz(const struct rpt_profile *p, const struct rpt_pprof_opts *o, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(rpt_pprof__write(p, f, o), 0);
	fclose(f);
	return buf;
}

static uint32_t in(struct rpt_profile *p, const char *s)
{
	int64_t off = rpt_profile__intern(p, s, strlen(s));

	assert_true(off > 0);
	return (uint32_t)off;
}

/* app-42/43 -> main (bin) -> outer a.c:10 -> mid [i] b.h:20 -> leaf [i] b.h:30, x7;
 * app-42/44 -> main -> do_sys [k], x3. */
static struct rpt_profile *fixture(void)
{
	struct rpt_profile *p = rpt_profile__new();
	uint32_t bin, lib;

	assert_non_null(p);
	bin = (uint32_t)rpt_profile__add_module(p, "/usr/bin/app", "00ff");
	lib = (uint32_t)rpt_profile__add_module(p, "/lib/libx.so", NULL);
	assert_true(bin > 0 && lib > 0 && bin != lib);
	{
		struct rpt_frame a[] = {
			{ in(p, "app-42/43"), RPT_FRAME_ROOT, 0 },
			{ in(p, "main"), RPT_FRAME_USER, bin },
			{ in(p, "outer a.c:10"), RPT_FRAME_USER, lib },
			{ in(p, "mid b.h:20"), RPT_FRAME_INLINE, lib },
			{ in(p, "leaf b.h:30"), RPT_FRAME_INLINE, lib },
		};
		struct rpt_frame b[] = {
			{ in(p, "app-42/44"), RPT_FRAME_ROOT, 0 },
			{ in(p, "main"), RPT_FRAME_USER, bin },
			{ in(p, "do_sys"), RPT_FRAME_KERNEL, 0 },
		};

		assert_int_equal(rpt_profile__add(p, a, 5, 7), 0);
		assert_int_equal(rpt_profile__add(p, b, 3, 3), 0);
	}
	p->meta.freq_hz = 1000;
	p->meta.duration_ns = 2500000000ULL;
	return p;
}

static void test_header(void **state)
{
	struct rpt_profile *p = fixture();
	size_t len;
	char *gz = write_gz(p, NULL, &len);
	struct prof pr;
	const struct field *st;

	(void)state;
	decode(gz, len, &pr);
	assert_string_equal(str(&pr, 0), "");
	assert_int_equal(pr.nmsgs[1], 2); /* sample_type */
	st = &pr.msgs[1][0];
	assert_string_equal(str(&pr, get_u(st->p, st->len, 1)), "samples");
	assert_string_equal(str(&pr, get_u(st->p, st->len, 2)), "count");
	st = &pr.msgs[1][1];
	assert_string_equal(str(&pr, get_u(st->p, st->len, 1)), "cpu");
	assert_string_equal(str(&pr, get_u(st->p, st->len, 2)), "nanoseconds");
	st = &pr.msgs[11][0]; /* period_type */
	assert_string_equal(str(&pr, get_u(st->p, st->len, 1)), "cpu");
	assert_int_equal(pr.scalar[12], 1000000); /* period: 1e9 / 1000 Hz */
	assert_int_equal(pr.scalar[10], 2500000000ULL);
	assert_string_equal(str(&pr, pr.scalar[14]), "cpu");
	/* mappings: the module table in order, with build ids */
	assert_int_equal(pr.nmsgs[3], 2);
	st = by_id(&pr, 3, 1);
	assert_string_equal(str(&pr, get_u(st->p, st->len, 5)), "/usr/bin/app");
	assert_string_equal(str(&pr, get_u(st->p, st->len, 6)), "00ff");
	assert_int_equal(get_u(st->p, st->len, 7), 1);
	assert_int_equal(get_u(st->p, st->len, 10), 1); /* has_inline_frames */
	st = by_id(&pr, 3, 2);
	assert_string_equal(str(&pr, get_u(st->p, st->len, 5)), "/lib/libx.so");
	assert_int_equal(get_u(st->p, st->len, 6), 0);
	prof_free(&pr);
	free(gz);
	rpt_profile__free(p);
}

static void test_samples(void **state)
{
	struct rpt_profile *p = fixture();
	struct rpt_pprof_opts o = { .root = { .has_pid = true, .has_tid = true } };
	uint64_t locs[8], vals[4];
	size_t len, n;
	char *gz = write_gz(p, &o, &len), line[128];
	struct prof pr;
	const struct field *s, *loc;
	struct field f;
	size_t pos = 0, nlab = 0;

	(void)state;
	decode(gz, len, &pr);
	assert_int_equal(pr.nmsgs[2], 2);
	s = &pr.msgs[2][0];
	/* leaf first: outer (with mid, leaf inlined), then main; the root is a label */
	n = get_packed(s->p, s->len, 1, locs, 8);
	assert_int_equal(n, 2);
	assert_int_equal(get_packed(s->p, s->len, 2, vals, 4), 2);
	assert_int_equal(vals[0], 7);
	assert_int_equal(vals[1], 7000000);
	loc_line(&pr, locs[0], 0, line, sizeof(line));
	assert_string_equal(line, "leaf b.h:30");
	loc_line(&pr, locs[0], 1, line, sizeof(line));
	assert_string_equal(line, "mid b.h:20");
	loc_line(&pr, locs[0], 2, line, sizeof(line));
	assert_string_equal(line, "outer a.c:10");
	loc_line(&pr, locs[0], 3, line, sizeof(line));
	assert_string_equal(line, "-");
	loc = by_id(&pr, 4, locs[0]);
	assert_int_equal(get_u(loc->p, loc->len, 2), 2); /* mapping of /lib/libx.so */
	loc_line(&pr, locs[1], 0, line, sizeof(line));
	assert_string_equal(line, "main :0");
	loc = by_id(&pr, 4, locs[1]);
	assert_int_equal(get_u(loc->p, loc->len, 2), 1);
	/* labels comm=app, pid=42, tid=43 */
	while (next(s->p, s->len, &pos, &f)) {
		const char *key;

		if (f.num != 3)
			continue;
		key = str(&pr, get_u(f.p, f.len, 1));
		nlab++;
		if (!strcmp(key, "comm"))
			assert_string_equal(str(&pr, get_u(f.p, f.len, 2)), "app");
		else if (!strcmp(key, "pid"))
			assert_int_equal(get_u(f.p, f.len, 3), 42);
		else if (!strcmp(key, "tid"))
			assert_int_equal(get_u(f.p, f.len, 3), 43);
		else
			fail_msg("unexpected label %s", key);
	}
	assert_int_equal(nlab, 3);
	/* second sample: kernel frame, no mapping; shares main's location */
	s = &pr.msgs[2][1];
	assert_int_equal(get_packed(s->p, s->len, 1, locs + 2, 6), 2);
	assert_int_equal(locs[3], locs[1]);
	loc_line(&pr, locs[2], 0, line, sizeof(line));
	assert_string_equal(line, "do_sys :0");
	loc = by_id(&pr, 4, locs[2]);
	assert_int_equal(get_u(loc->p, loc->len, 2), 0);
	assert_int_equal(pr.nmsgs[4], 3); /* locations: outer+inlines, main, do_sys */
	assert_int_equal(pr.nmsgs[5], 5); /* functions */
	prof_free(&pr);
	free(gz);
	rpt_profile__free(p);
}

/* Without --show-pid a name like "kworker/0:1-events" is all comm. */
static void test_root_plain(void **state)
{
	struct rpt_profile *p = rpt_profile__new();
	struct rpt_frame fr[2] = { { in(p, "kworker/0:1-7"), RPT_FRAME_ROOT, 0 },
				   { in(p, "f"), RPT_FRAME_USER, 0 } };
	size_t len, pos = 0, nlab = 0;
	char *gz;
	struct prof pr;
	struct field f;

	(void)state;
	assert_int_equal(rpt_profile__add(p, fr, 2, 1), 0);
	gz = write_gz(p, NULL, &len);
	decode(gz, len, &pr);
	assert_int_equal(pr.scalar[12], 0); /* no frequency, no period */
	while (next(pr.msgs[2][0].p, pr.msgs[2][0].len, &pos, &f)) {
		if (f.num != 3)
			continue;
		nlab++;
		assert_string_equal(str(&pr, get_u(f.p, f.len, 1)), "comm");
		assert_string_equal(str(&pr, get_u(f.p, f.len, 2)), "kworker/0:1-7");
	}
	assert_int_equal(nlab, 1);
	assert_int_equal(pr.nmsgs[3], 0);
	prof_free(&pr);
	free(gz);
	rpt_profile__free(p);
}

static void test_varint_edges(void **state)
{
	static const uint64_t vals[] = { 1, 127, 128, 300, 16383, 16384, UINT32_MAX, UINT64_MAX };
	struct rpt_pb b = { 0 };
	size_t pos = 0;
	struct field f;

	(void)state;
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		rpt_pb__uint(&b, (uint32_t)i + 1, vals[i]);
	rpt_pb__uint(&b, 99, 0); /* a default value is not written */
	assert_int_equal(b.err, 0);
	assert_int_equal(b.buf[0], 0x08);
	assert_int_equal(b.buf[1], 0x01);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		assert_true(next(b.buf, b.len, &pos, &f));
		assert_int_equal(f.num, i + 1);
		assert_true(f.v == vals[i]);
	}
	assert_false(next(b.buf, b.len, &pos, &f));
	assert_int_equal(b.len, 2 + 2 + 3 + 3 + 3 + 4 + 6 + 11);
	rpt_pb__fini(&b);
}

/* The module field separates frames only once a module table exists. */
static void test_module_merge(void **state)
{
	struct rpt_profile *p = rpt_profile__new(), *q = rpt_profile__new();
	struct rpt_frame f[2] = { { in(p, "app"), RPT_FRAME_ROOT, 0 }, { in(p, "f"), 0, 12345 } };
	uint32_t m1, m2;

	(void)state;
	assert_int_equal(rpt_profile__add(p, f, 2, 1), 0);
	f[1].module = 999; /* ignored: no module table yet */
	assert_int_equal(rpt_profile__add(p, f, 2, 1), 0);
	assert_int_equal(p->nstacks, 1);
	assert_int_equal(p->frames[1].module, 0);
	m1 = (uint32_t)rpt_profile__add_module(p, "/a", "aa");
	m2 = (uint32_t)rpt_profile__add_module(p, "/b", "");
	assert_int_equal(rpt_profile__add_module(p, "/b", "bb"), m2);
	assert_string_equal(rpt_profile__name(p, rpt_profile__module(p, m2)->build_id), "bb");
	assert_int_equal(rpt_profile__add_module(p, "", "x"), -EINVAL);
	f[1].module = m1;
	assert_int_equal(rpt_profile__add(p, f, 2, 2), 0);
	f[1].module = m2;
	assert_int_equal(rpt_profile__add(p, f, 2, 4), 0);
	f[1].module = m1;
	assert_int_equal(rpt_profile__add(p, f, 2, 8), 0);
	assert_int_equal(p->nstacks, 3);
	assert_int_equal(rpt_profile__merge(q, p), 0);
	assert_int_equal(q->nstacks, 3);
	assert_int_equal(q->nmodules, 2);
	rpt_profile__sort(q);
	/* "" < "/a" < "/b" */
	assert_int_equal(q->stacks[0].count, 2);
	assert_int_equal(q->stacks[1].count, 10);
	assert_string_equal(rpt_profile__name(q, q->frames[q->stacks[1].first + 1].module), "/a");
	assert_int_equal(q->stacks[2].count, 4);
	rpt_profile__free(p);
	rpt_profile__free(q);
}

SA_TEST_MAIN(test_header, test_samples, test_root_plain, test_varint_edges, test_module_merge)
