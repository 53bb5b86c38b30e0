// SPDX-License-Identifier: MIT
/*
 * test_speedscope.c - report/output/speedscope.c: byte-exact output for a small
 * two-process profile (shared frames, one sampled profile per root, weights
 * in nanoseconds or counts), JSON escaping of quotes, control bytes and
 * invalid UTF-8, and the "fn file:line" splitter.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sa_cmocka.h"

#include "export.h"

static uint32_t in(struct rpt_profile *p, const char *s)
{
	int64_t off = rpt_profile__intern(p, s, strlen(s));

	assert_true(off > 0);
	return (uint32_t)off;
}

static char *write_str(const struct rpt_profile *p, const struct rpt_speedscope_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(rpt_speedscope__write(p, f, o), 0);
	fclose(f);
	return buf;
}

/* The version in "exporter" becomes V: objects may be older than this test. */
static void unversion(char *out)
{
	char *v = strstr(out, "\"exporter\":\"sa-report ");
	char *end;

	assert_non_null(v);
	v += strlen("\"exporter\":\"sa-report ");
	end = strchr(v, '"');
	assert_non_null(end);
	*v = 'V';
	memmove(v + 1, end, strlen(end) + 1);
}

static void add(struct rpt_profile *p, const char *root, const char *a, uint32_t ka,
		const char *b, uint64_t count)
{
	struct rpt_frame f[3] = { { in(p, root), RPT_FRAME_ROOT, 0 }, { in(p, a), ka, 0 },
				  { b ? in(p, b) : 0, RPT_FRAME_USER, 0 } };

	assert_int_equal(rpt_profile__add(p, f, b ? 3 : 2, count), 0);
}

static void test_two_processes(void **state)
{
	struct rpt_profile *p = rpt_profile__new();
	struct rpt_speedscope_opts o = { .name = "t" };
	const char *want =
		"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
		"\"exporter\":\"sa-report V\",\"name\":\"t\",\"activeProfileIndex\":0,\n"
		"\"shared\":{\"frames\":[\n"
		"{\"name\":\"main\",\"file\":\"m.c\",\"line\":3},\n"
		"{\"name\":\"leaf\"},\n"
		"{\"name\":\"sys_read\",\"file\":\"[kernel]\"},\n"
		"{\"name\":\"main\"}]},\n"
		"\"profiles\":[\n"
		"{\"type\":\"sampled\",\"name\":\"a-1\",\"unit\":\"nanoseconds\",\"startValue\":0,"
		"\"endValue\":50000000,\n"
		"\"samples\":[\n[0,1],\n[0,2]],\n"
		"\"weights\":[30000000,20000000]},\n"
		"{\"type\":\"sampled\",\"name\":\"b-2\",\"unit\":\"nanoseconds\",\"startValue\":0,"
		"\"endValue\":70000000,\n"
		"\"samples\":[\n[0,1],\n[3]],\n"
		"\"weights\":[40000000,30000000]}]}\n";
	char *out;

	(void)state;
	/* b's stacks first: profiles still come in root-name order */
	add(p, "b-2", "main m.c:3", RPT_FRAME_USER, "leaf", 4);
	add(p, "a-1", "main m.c:3", RPT_FRAME_USER, "leaf", 3);
	add(p, "a-1", "main m.c:3", RPT_FRAME_USER, "sys_read", 2);
	add(p, "b-2", "main", RPT_FRAME_USER, NULL, 3);
	p->frames[p->stacks[2].first + 2].kind = RPT_FRAME_KERNEL;
	p->meta.freq_hz = 100;
	out = write_str(p, &o);
	unversion(out);
	assert_string_equal(out, want);
	free(out);
	rpt_profile__free(p);
}

static void test_counts_and_escapes(void **state)
{
	struct rpt_profile *p = rpt_profile__new();
	char *out;

	(void)state;
	add(p, "q\"\\\n", "caf\xc3\xa9 \xe2\x82\xac", RPT_FRAME_USER, "bad\xff\xc3(\xed\xa0\x80\x01", 5);
	out = write_str(p, NULL);
	assert_non_null(strstr(out, "\"name\":\"sa-report\""));
	assert_non_null(strstr(out, "{\"name\":\"caf\xc3\xa9 \xe2\x82\xac\"},\n"));
	/* 0xff, a truncated 2-byte sequence, an encoded surrogate (3 bytes), 0x01 */
	assert_non_null(strstr(out, "{\"name\":\"bad\\ufffd\\ufffd(\\ufffd\\ufffd\\ufffd\\u0001\"}]}"));
	assert_non_null(strstr(out, "\"name\":\"q\\\"\\\\\\u000a\",\"unit\":\"none\","
				    "\"startValue\":0,\"endValue\":5,\n"));
	assert_non_null(strstr(out, "\"weights\":[5]}]}\n"));
	free(out);
	rpt_profile__free(p);
}

static void test_split(void **state)
{
	struct rpt_name_parts np;

	(void)state;
	rpt_name__split("fn a/b.c:12", &np);
	assert_int_equal(np.fn_len, 2);
	assert_int_equal(np.file_len, 5);
	assert_memory_equal(np.file, "a/b.c", 5);
	assert_int_equal(np.line, 12);
	rpt_name__split("operator<< (std::ostream&)", &np);
	assert_null(np.file);
	assert_int_equal(np.fn_len, 26);
	rpt_name__split("f x:12a", &np);
	assert_null(np.file);
	rpt_name__split("f :3", &np);
	assert_null(np.file);
	rpt_name__split("foo(int, char) lib.h:7", &np);
	assert_int_equal(np.fn_len, 14);
	assert_int_equal(np.line, 7);
}

SA_TEST_MAIN(test_two_processes, test_counts_and_escapes, test_split)
