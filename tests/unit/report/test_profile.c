// SPDX-License-Identifier: MIT
/*
 * test_profile.c - report/common/profile.c: interning, stack merging, deterministic
 * sort order and merging two profiles.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "sa_cmocka.h"

#include "profile.h"

static uint32_t in(struct rpt_profile *p, const char *s)
{
	int64_t off = rpt_profile__intern(p, s, strlen(s));

	assert_true(off >= 0);
	return (uint32_t)off;
}

/* Add "a;b;c" style chains, all frames of kind USER. */
static void add(struct rpt_profile *p, const char *chain, uint64_t count)
{
	struct rpt_frame f[32];
	char buf[256], *tok, *save = NULL;
	uint32_t n = 0;

	snprintf(buf, sizeof(buf), "%s", chain);
	for (tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		f[n].name = in(p, tok);
		f[n++].kind = RPT_FRAME_USER;
	}
	assert_int_equal(rpt_profile__add(p, f, n, count), 0);
}

static void test_intern(void **state)
{
	struct rpt_profile *p = rpt_profile__new();
	uint32_t a, b;

	(void)state;
	assert_non_null(p);
	assert_int_equal(rpt_profile__intern(p, "", 0), 0);
	a = in(p, "main");
	b = in(p, "work");
	assert_true(a > 0 && b > 0 && a != b);
	assert_int_equal(in(p, "main"), a);
	/* length-bounded: "mainly" cut to 4 bytes is "main" */
	assert_int_equal(rpt_profile__intern(p, "mainly", 4), a);
	assert_string_equal(rpt_profile__name(p, a), "main");
	assert_string_equal(rpt_profile__name(p, 0), "");
	rpt_profile__free(p);
	rpt_profile__free(NULL);
}

/* Enough names to force several rehashes; every one still found. */
static void test_intern_many(void **state)
{
	struct rpt_profile *p = rpt_profile__new();
	static uint32_t offs[20000];
	char name[32];

	(void)state;
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "fn_%d", i);
		offs[i] = in(p, name);
	}
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "fn_%d", i);
		assert_int_equal(in(p, name), offs[i]);
		assert_string_equal(rpt_profile__name(p, offs[i]), name);
	}
	assert_int_equal(p->nnames, 20000);
	rpt_profile__free(p);
}

static void test_add_merges(void **state)
{
	struct rpt_profile *p = rpt_profile__new();

	(void)state;
	add(p, "app;main;a", 3);
	add(p, "app;main;b", 2);
	add(p, "app;main;a", 4);
	add(p, "app;main", 1);
	assert_int_equal(p->nstacks, 3);
	assert_int_equal(p->stacks[0].count, 7);
	assert_int_equal(p->stacks[0].nframes, 3);
	assert_int_equal(p->total, 10);
	/* a different kind is a different frame */
	{
		struct rpt_frame f[2] = {{in(p, "app"), RPT_FRAME_ROOT, 0},
					 {in(p, "main"), RPT_FRAME_KERNEL, 0}};

		assert_int_equal(rpt_profile__add(p, f, 2, 5), 0);
	}
	assert_int_equal(p->nstacks, 4);
	rpt_profile__free(p);
}

static void test_add_many(void **state)
{
	struct rpt_profile *p = rpt_profile__new();
	char chain[64];

	(void)state;
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 5000; i++) {
			snprintf(chain, sizeof(chain), "app;main;f%d;g%d", i % 97, i);
			add(p, chain, 1);
		}
	assert_int_equal(p->nstacks, 5000);
	assert_int_equal(p->total, 10000);
	for (size_t i = 0; i < p->nstacks; i++)
		assert_int_equal(p->stacks[i].count, 2);
	rpt_profile__free(p);
}

static const char *leaf(const struct rpt_profile *p, size_t i)
{
	const struct rpt_stack *s = &p->stacks[i];

	return rpt_profile__name(p, rpt_profile__stack_frames(p, s)[s->nframes - 1].name);
}

static void test_sort(void **state)
{
	struct rpt_profile *p = rpt_profile__new();

	(void)state;
	add(p, "b;x", 1);
	add(p, "a;z", 1);
	add(p, "a;y;q", 1);
	add(p, "a", 1);
	add(p, "a;y", 1);
	rpt_profile__sort(p);
	assert_string_equal(leaf(p, 0), "a");
	assert_string_equal(leaf(p, 1), "y");
	assert_string_equal(leaf(p, 2), "q");
	assert_string_equal(leaf(p, 3), "z");
	assert_string_equal(leaf(p, 4), "x");
	/* the index still finds stacks after the sort */
	add(p, "a;z", 10);
	assert_int_equal(p->nstacks, 5);
	assert_int_equal(p->stacks[3].count, 11);
	rpt_profile__free(p);
}

static void test_merge(void **state)
{
	struct rpt_profile *a = rpt_profile__new(), *b = rpt_profile__new();

	(void)state;
	add(a, "app;main;x", 5);
	a->meta.host = in(a, "web01");
	a->meta.lost = 2;
	add(b, "app;main;y", 7);
	add(b, "app;main;x", 1);
	b->meta.host = in(b, "web01");
	b->meta.lost = 3;
	assert_int_equal(rpt_profile__merge(a, b), 0);
	assert_int_equal(a->nstacks, 2);
	assert_int_equal(a->total, 13);
	assert_int_equal(a->stacks[0].count, 6);
	assert_int_equal(a->meta.lost, 5);
	assert_string_equal(rpt_profile__name(a, a->meta.host), "web01");
	b->meta.host = in(b, "web02");
	assert_int_equal(rpt_profile__merge(a, b), 0);
	assert_int_equal(a->meta.host, 0);
	assert_int_equal(a->total, 21);
	rpt_profile__free(a);
	rpt_profile__free(b);
}

SA_TEST_MAIN(test_intern, test_intern_many, test_add_merges, test_add_many, test_sort, test_merge)
