// SPDX-License-Identifier: MIT
/*
 * test_rotate.c - sa-record --rotate's file set: WHEN parsing (durations
 * versus sizes), names that sort by time, and --keep/--keep-size deleting
 * only the oldest recordings of this host whose start is their name's,
 * oldest by the monotonic clock within a boot, never a link, a directory,
 * another name or a file that only looks like one by its name.
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
static char host[256], boot[64];

/* A file @name in dir holding @size bytes of 'x' (not a recording). */
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

/*
 * A recording @name in dir: the file header and a META of @hostname and
 * boot @bootid started at @real_ns (CLOCK_REALTIME) and @mono_ns, then
 * END. @return its size.
 */
static uint64_t rec_file(const char *name, const char *hostname, const char *bootid,
			 uint64_t real_ns, uint64_t mono_ns)
{
	struct saf_meta m = {.writer = saf_str__from("sa-record test"),
			     .hostname = saf_str__from(hostname),
			     .boot_id = saf_str__from(bootid),
			     .start_realtime_ns = real_ns,
			     .start_mono_ns = mono_ns};
	struct saf_writer *w;
	char p[256];
	struct stat st;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	w = saf_writer__open_fd(fd, NULL);
	assert_non_null(w);
	assert_int_equal(saf_writer__meta(w, &m), 0);
	assert_int_equal(saf_writer__finish(w, &(struct saf_end){.end_mono_ns = mono_ns}), 0);
	saf_writer__free(w);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	return (uint64_t)st.st_size;
}

static bool exists(const char *name)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return !lstat(p, &st);
}

static void read_ids(void)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
	assert_non_null(f);
	assert_non_null(fgets(boot, sizeof(boot), f));
	boot[strcspn(boot, "\n")] = 0;
	fclose(f);
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

/* 2026-12-01 14:0M:00.000 UTC */
#define AT(m) (1796133600000000000ull + (m)*60000000000ull)

static void test_prune_only_ours(void **state)
{
	struct rec_opts o = {0};
	struct rec_rotate *rt;
	char out[128], p[256];
	uint64_t sz[4];
	int fd;

	(void)state;
	read_ids();
	snprintf(out, sizeof(out), "%s/host.sa", dir);
	o.output = out;
	o.rotate_secs = 60;
	o.keep = 2;
	/* an earlier boot's files: ordered by their start in real time */
	sz[0] = rec_file("host-20261201T140000.000Z.sa", host, "earlier-boot", AT(0), 900);
	/* a name that was taken: with a random suffix */
	sz[1] = rec_file("host-20261201T140100.000Z-0badf00d.sa", host, "earlier-boot", AT(1), 100);
	sz[2] = rec_file("host-20261201T140200.000Z.sa", host, "earlier-boot", AT(2), 500);
	sz[3] = rec_file("host-20261201T140300.000Z.sa", host, "earlier-boot", AT(3), 200);
	/* decoys, newer by name: none is ours to count or delete */
	touch("host-20991231T235959.000Z.sa", 0);			       /* empty */
	touch("host-20991231T235958.000Z.sa", 10);			       /* foreign content */
	rec_file("host-20991231T235957.000Z.sa", "otherhost", boot, AT(9), 1); /* another host */
	rec_file("host-20991231T235956.000Z.sa", host, boot, AT(9), 1);	       /* start != name */
	touch("host-20261201T1403.000Z.sa", 1);				       /* not the pattern */
	touch("host-20261201T140300.000Z-0BADF00D.sa", 1);		       /* nor this */
	touch("other-20261201T135900.000Z.sa", 1);			       /* another stem */
	touch("host-20261201T135900.000Z.sa.old", 1); /* another extension */
	snprintf(p, sizeof(p), "%s/host-20261201T135800.000Z.sa", dir);
	assert_int_equal(symlink("host-20261201T140300.000Z.sa", p), 0);
	snprintf(p, sizeof(p), "%s/host-20261201T135700.000Z.sa", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	rt = rec_rotate__new(&o);
	assert_non_null(rt);
	rec_rotate__name(rt, AT(4)); /* the current file */
	fd = rec_rotate__open(rt);
	assert_true(fd >= 0);
	close(fd);
	/* the name is taken (here by itself): the same with a random suffix */
	fd = rec_rotate__open(rt);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(strlen(strrchr(rec_rotate__path(rt), '/') + 1),
			 strlen("host-20261201T140400.000Z-01234567.sa"));
	assert_memory_equal(strrchr(rec_rotate__path(rt), '/') + 1, "host-20261201T140400.000Z-",
			    26);
	assert_int_equal(rec_rotate__prune(rt), 2);
	assert_false(exists("host-20261201T140000.000Z.sa"));
	assert_false(exists("host-20261201T140100.000Z-0badf00d.sa"));
	assert_true(exists("host-20261201T140300.000Z-0BADF00D.sa"));
	assert_true(exists("host-20261201T140200.000Z.sa"));
	assert_true(exists("host-20261201T140300.000Z.sa"));
	assert_true(exists("host-20261201T140400.000Z.sa"));
	assert_true(exists("host-20991231T235959.000Z.sa"));
	assert_true(exists("host-20991231T235958.000Z.sa"));
	assert_true(exists("host-20991231T235957.000Z.sa"));
	assert_true(exists("host-20991231T235956.000Z.sa"));
	assert_true(exists("host-20261201T1403.000Z.sa"));
	assert_true(exists("other-20261201T135900.000Z.sa"));
	assert_true(exists("host-20261201T135900.000Z.sa.old"));
	assert_true(exists("host-20261201T135800.000Z.sa"));
	assert_true(exists("host-20261201T135700.000Z.sa"));
	/* --keep-size: the two closed files left take more than one's size: the oldest goes */
	o.keep = 0;
	o.keep_size = sz[3] + 1;
	assert_int_equal(rec_rotate__prune(rt), 1);
	assert_false(exists("host-20261201T140200.000Z.sa"));
	assert_true(exists("host-20261201T140300.000Z.sa"));
	rec_rotate__free(rt);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	assert_int_equal(system(p), 0);
}

/*
 * The clock stepped back an hour: files of this boot are ordered by their
 * monotonic start, so the newest (named an hour earlier) are kept and
 * every file of an earlier boot goes first.
 */
static void test_prune_clock_step(void **state)
{
	struct rec_opts o = {0};
	struct rec_rotate *rt;
	char out[128], p[256];
	int fd;

	(void)state;
	read_ids();
	strcpy(dir, "/tmp/test_rotate.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/host.sa", dir);
	o.output = out;
	o.rotate_secs = 60;
	o.keep = 2;
	rec_file("host-20261201T150000.000Z.sa", host, "earlier-boot", AT(60), 10);
	rec_file("host-20261201T150100.000Z.sa", host, boot, AT(61), 1000); /* before the step */
	rec_file("host-20261201T150200.000Z.sa", host, boot, AT(62), 2000);
	rec_file("host-20261201T140300.000Z.sa", host, boot, AT(3), 3000); /* after it */
	rec_file("host-20261201T140400.000Z.sa", host, boot, AT(4), 4000);
	rt = rec_rotate__new(&o);
	assert_non_null(rt);
	rec_rotate__name(rt, AT(5));
	fd = rec_rotate__open(rt);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rec_rotate__prune(rt), 3);
	assert_false(exists("host-20261201T150000.000Z.sa"));
	assert_false(exists("host-20261201T150100.000Z.sa"));
	assert_false(exists("host-20261201T150200.000Z.sa"));
	assert_true(exists("host-20261201T140300.000Z.sa"));
	assert_true(exists("host-20261201T140400.000Z.sa"));
	rec_rotate__free(rt);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	assert_int_equal(system(p), 0);
}

SA_TEST_MAIN(test_parse, test_name_sorts_by_time, test_prune_only_ours, test_prune_clock_step)
