// SPDX-License-Identifier: MIT
/*
 * test_rotate.c - sa-record --rotate's file set: WHEN parsing (durations
 * versus sizes), names that sort by time, and --keep/--keep-size deleting
 * only the oldest regular files named by the pattern, never a link, a
 * directory or another name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "record.h"
#include "rotate.h"

static void test_parse(void **state)
{
	double s;
	uint64_t b;

	(void)state;
	assert_int_equal(rec_rotate_parse("10m", &s, &b), 0);
	assert_true(s == 600 && b == 0);
	assert_int_equal(rec_rotate_parse("30s", &s, &b), 0);
	assert_true(s == 30);
	assert_int_equal(rec_rotate_parse("1.5", &s, &b), 0);
	assert_true(s == 1.5);
	assert_int_equal(rec_rotate_parse("2h", &s, &b), 0);
	assert_true(s == 7200);
	assert_int_equal(rec_rotate_parse("1d", &s, &b), 0);
	assert_true(s == 86400);
	assert_int_equal(rec_rotate_parse("64M", &s, &b), 0);
	assert_true(s == 0 && b == 64ull << 20);
	assert_int_equal(rec_rotate_parse("1GiB", &s, &b), 0);
	assert_true(b == 1ull << 30);
	assert_int_equal(rec_rotate_parse("512KB", &s, &b), 0);
	assert_true(b == 512ull << 10);
	assert_int_equal(rec_rotate_parse("", &s, &b), -EINVAL);
	assert_int_equal(rec_rotate_parse("0", &s, &b), -EINVAL);
	assert_int_equal(rec_rotate_parse("-5s", &s, &b), -EINVAL);
	assert_int_equal(rec_rotate_parse("10x", &s, &b), -EINVAL);
	assert_int_equal(rec_rotate_parse("10mm", &s, &b), -EINVAL);
	assert_int_equal(rec_rotate_parse("1K", &s, &b), -EINVAL); /* < 4 KiB */
}

static char dir[64];

static void touch(const char *name, size_t size)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	while (size--)
		fputc('x', f);
	fclose(f);
}

static bool exists(const char *name)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return !lstat(p, &st);
}

static void test_name_sorts_by_time(void **state)
{
	struct rec_opts o = {0};
	struct rec_rotate *rt;
	char out[128], a[256];

	(void)state;
	strcpy(dir, "/tmp/test_rotate.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/host.sa", dir);
	o.output = out;
	o.rotate_secs = 60;
	rt = rec_rotate__new(&o);
	assert_non_null(rt);
	/* 2026-12-01 14:02:00.007 UTC */
	snprintf(a, sizeof(a), "%s", rec_rotate__name(rt, 1796133720007000000ull));
	assert_string_equal(strrchr(a, '/') + 1, "host-20261201T140200.007Z.sa");
	assert_string_equal(rec_rotate__path(rt), a);
	assert_true(strcmp(a, rec_rotate__name(rt, 1796133720010000000ull)) < 0);
	assert_false(rec_rotate__due(rt, 1000, 1000 + 59000000000ull, 1 << 30));
	assert_true(rec_rotate__due(rt, 1000, 1000 + 60000000000ull, 0));
	rec_rotate__free(rt);
}

static void test_prune_only_ours(void **state)
{
	struct rec_opts o = {0};
	struct rec_rotate *rt;
	char out[128], p[256];
	int fd;

	(void)state;
	snprintf(out, sizeof(out), "%s/host.sa", dir);
	o.output = out;
	o.rotate_secs = 60;
	o.keep = 2;
	touch("host-20261201T140000.000Z.sa", 10);
	touch("host-20261201T140100.000Z.sa", 20);
	touch("host-20261201T140200.000Z.sa", 30);
	touch("host-20261201T140300.000Z.sa", 40);
	touch("host-20261201T1403.000Z.sa", 1);	     /* not the pattern */
	touch("other-20261201T135900.000Z.sa", 1);   /* another stem */
	touch("host-20261201T135900.000Z.sa.old", 1); /* another extension */
	snprintf(p, sizeof(p), "%s/host-20261201T135800.000Z.sa", dir);
	assert_int_equal(symlink("host-20261201T140300.000Z.sa", p), 0);
	snprintf(p, sizeof(p), "%s/host-20261201T135700.000Z.sa", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	rt = rec_rotate__new(&o);
	assert_non_null(rt);
	rec_rotate__name(rt, 1796133840000000000ull); /* 14:04:00, the current file */
	fd = rec_rotate__open(rt);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rec_rotate__open(rt), -EEXIST);
	assert_int_equal(rec_rotate__prune(rt), 2);
	assert_false(exists("host-20261201T140000.000Z.sa"));
	assert_false(exists("host-20261201T140100.000Z.sa"));
	assert_true(exists("host-20261201T140200.000Z.sa"));
	assert_true(exists("host-20261201T140300.000Z.sa"));
	assert_true(exists("host-20261201T140400.000Z.sa"));
	assert_true(exists("host-20261201T1403.000Z.sa"));
	assert_true(exists("other-20261201T135900.000Z.sa"));
	assert_true(exists("host-20261201T135900.000Z.sa.old"));
	assert_true(exists("host-20261201T135800.000Z.sa"));
	assert_true(exists("host-20261201T135700.000Z.sa"));
	/* --keep-size: 30 + 40 bytes of closed files > 50: the oldest goes */
	o.keep = 0;
	o.keep_size = 50;
	assert_int_equal(rec_rotate__prune(rt), 1);
	assert_false(exists("host-20261201T140200.000Z.sa"));
	assert_true(exists("host-20261201T140300.000Z.sa"));
	rec_rotate__free(rt);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	assert_int_equal(system(p), 0);
}

SA_TEST_MAIN(test_parse, test_name_sorts_by_time, test_prune_only_ours)
