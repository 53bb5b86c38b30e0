// SPDX-License-Identifier: MIT
/*
 * test_folded.c - report/output/folded.c: byte-exact folded output (sorted, names
 * sanitized, --annotate-frames suffixes) and the parser (kinds, merging,
 * refusal of malformed and two-column input).
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

#include "output.h"

static struct rpt_profile *parse_str(const char *text, char *err, size_t errsz)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct rpt_profile *p;

	assert_non_null(f);
	p = rpt_folded__parse(f, err, errsz);
	fclose(f);
	return p;
}

/* Folded text of @p (sorted first); the caller frees it. */
static char *write_str(struct rpt_profile *p, bool annotate)
{
	struct rpt_folded_opts o = {.annotate = annotate};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	rpt_profile__sort(p);
	assert_int_equal(rpt_folded__write(p, f, &o), 0);
	fclose(f);
	return buf;
}

static void test_roundtrip_sorted(void **state)
{
	const char *in = "app;main;work;leaf_b 30\n"
			 "app;main;work;leaf_a 60\n"
			 "\n"
			 "# a comment\n"
			 "app;main;leaf_c 10\r\n"
			 "app;main;work;leaf_a 5\n";
	const char *want = "app;main;leaf_c 10\n"
			   "app;main;work;leaf_a 65\n"
			   "app;main;work;leaf_b 30\n";
	char err[128];
	struct rpt_profile *p = parse_str(in, err, sizeof(err));
	char *out;

	(void)state;
	assert_non_null(p);
	assert_int_equal(p->total, 105);
	assert_int_equal(p->nstacks, 3);
	out = write_str(p, false);
	assert_string_equal(out, want);
	free(out);
	rpt_profile__free(p);
}

static void test_kinds(void **state)
{
	const char *in = "app;main;sys_read_[k];vfs_read_[k] 3\n"
			 "app;interp;jit_fn_[j];inl_[i];[unknown] 2\n";
	char err[128];
	struct rpt_profile *p = parse_str(in, err, sizeof(err));
	const struct rpt_frame *f;
	char *out;

	(void)state;
	assert_non_null(p);
	f = rpt_profile__stack_frames(p, &p->stacks[0]);
	assert_int_equal(f[0].kind, RPT_FRAME_ROOT);
	assert_int_equal(f[1].kind, RPT_FRAME_USER);
	assert_int_equal(f[2].kind, RPT_FRAME_KERNEL);
	assert_string_equal(rpt_profile__name(p, f[2].name), "sys_read");
	f = rpt_profile__stack_frames(p, &p->stacks[1]);
	assert_int_equal(f[2].kind, RPT_FRAME_JIT);
	assert_int_equal(f[3].kind, RPT_FRAME_INLINE);
	assert_int_equal(f[4].kind, RPT_FRAME_UNKNOWN);
	out = write_str(p, true);
	assert_string_equal(out, "app;interp;jit_fn_[j];inl_[i];[unknown] 2\n"
				 "app;main;sys_read_[k];vfs_read_[k] 3\n");
	free(out);
	out = write_str(p, false);
	assert_string_equal(out, "app;interp;jit_fn;inl;[unknown] 2\n"
				 "app;main;sys_read;vfs_read 3\n");
	free(out);
	rpt_profile__free(p);
}

/* Names holding ';', newlines and control bytes still give one parseable line. */
static void test_sanitize(void **state)
{
	static const char *names[] = {"we;ird", "multi\nline\r", "tab\there\x01\x7f",
				      "operator<< (std::ostream&)"};
	struct rpt_profile *p = rpt_profile__new(), *q;
	struct rpt_frame f[5];
	char err[128], *out;

	(void)state;
	f[0].name = (uint32_t)rpt_profile__intern(p, "app", 3);
	f[0].kind = RPT_FRAME_ROOT;
	for (int i = 0; i < 4; i++) {
		f[i + 1].name = (uint32_t)rpt_profile__intern(p, names[i], strlen(names[i]));
		f[i + 1].kind = RPT_FRAME_USER;
	}
	assert_int_equal(rpt_profile__add(p, f, 5, 42), 0);
	out = write_str(p, false);
	assert_string_equal(out,
			    "app;we_ird;multi_line_;tab_here__;operator<< (std::ostream&) 42\n");
	q = parse_str(out, err, sizeof(err));
	assert_non_null(q);
	assert_int_equal(q->nstacks, 1);
	assert_int_equal(q->stacks[0].nframes, 5);
	assert_int_equal(q->total, 42);
	free(out);
	rpt_profile__free(p);
	rpt_profile__free(q);
}

static void expect_bad(const char *text, const char *msg)
{
	char err[160];
	struct rpt_profile *p = parse_str(text, err, sizeof(err));

	assert_null(p);
	assert_int_equal(errno, EBADMSG);
	assert_non_null(strstr(err, msg));
}

static void test_malformed(void **state)
{
	(void)state;
	expect_bad("a;b 1\nno_count_here\n", "line 2:");
	expect_bad("a;b 12x\n", "line 1:");
	expect_bad(" 5\n", "line 1:");
	expect_bad("a;b 99999999999999999999999\n", "line 1:");
	expect_bad("a;b 10 12\n", "two counts");
}

static void test_empty(void **state)
{
	char err[64];
	struct rpt_profile *p = parse_str("", err, sizeof(err));
	char *out;

	(void)state;
	assert_non_null(p);
	assert_int_equal(p->nstacks, 0);
	out = write_str(p, false);
	assert_string_equal(out, "");
	free(out);
	rpt_profile__free(p);
}

SA_TEST_MAIN(test_roundtrip_sorted, test_kinds, test_sanitize, test_malformed, test_empty)
