// SPDX-License-Identifier: MIT
/*
 * test_symcache.c - report/symbols/symcache.c: an entry comes back as stored; a
 * damaged, truncated, stale or symlinked file is ignored; readers never see
 * a half-written file while other processes store the same entry; the
 * directory stays within its bound by dropping the least recently used.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "symcache.h"

#define HEX "0123456789abcdef0123456789abcdef01234567"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/sa-symcache-test.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static struct rpt_symcache_id test_id(uint32_t source)
{
	struct rpt_symcache_id id = {1, 2, 3, 4, 5, 6, 7, 8, source, 0};

	return id;
}

/* An entry of @hex with @n offsets, each with frames named after it and @tag. */
static struct rpt_symcache_ent *filled(struct rpt_symcache *c, const char *hex, int n,
				       const char *tag)
{
	struct rpt_symcache_id id = test_id(1);
	struct rpt_symcache_ent *e;
	bool hit;

	e = rpt_symcache__load(c, hex, &id, &hit);
	assert_non_null(e);
	for (int i = 0; i < n; i++) {
		char a[64], b[64];
		const char *names[2] = {a, b};
		uint32_t kinds[2] = {3, 0};

		snprintf(a, sizeof(a), "inl_%s_%d", tag, i);
		snprintf(b, sizeof(b), "fn_%s_%d", tag, i / 2);
		assert_int_equal(rpt_symcache_ent__put(e, 0x1000 + 16 * i, 0, names, kinds, 2), 0);
	}
	return e;
}

/* @e holds the frames filled() gave offset @i with @tag. */
static void check_frames(const struct rpt_symcache_ent *e, int i, const char *tag)
{
	struct rpt_symcache_frame f[4];
	char a[64], b[64];

	snprintf(a, sizeof(a), "inl_%s_%d", tag, i);
	snprintf(b, sizeof(b), "fn_%s_%d", tag, i / 2);
	assert_int_equal(rpt_symcache_ent__get(e, 0x1000 + 16 * i, 0, f, 4), 2);
	assert_string_equal(rpt_symcache_ent__str(e, f[0].name), a);
	assert_string_equal(rpt_symcache_ent__str(e, f[1].name), b);
	assert_int_equal(f[0].kind, 3);
	assert_int_equal(f[1].kind, 0);
}

static void path_of(char *buf, size_t cap, const char *hex)
{
	snprintf(buf, cap, "%s/%s-0" RPT_SYMCACHE_SUFFIX, dir, hex);
}

static void test_roundtrip(void **state)
{
	struct rpt_symcache *c = rpt_symcache__open(dir, 0);
	struct rpt_symcache_id id = test_id(1), other = test_id(2);
	struct rpt_symcache_ent *e;
	struct rpt_symcache_frame f[4];
	bool hit;

	(void)state;
	assert_non_null(c);
	e = filled(c, HEX, 100, "a");
	rpt_symcache_ent__set_facts(e, 5);
	assert_int_equal(rpt_symcache__store(c, e), 1);
	assert_int_equal(rpt_symcache__store(c, e), 0); /* nothing new */
	rpt_symcache_ent__free(e);
	assert_true(rpt_symcache__has(c, HEX, 0));
	e = rpt_symcache__load(c, HEX, &id, &hit);
	assert_true(hit);
	for (int i = 0; i < 100; i++)
		check_frames(e, i, "a");
	assert_int_equal(rpt_symcache_ent__get(e, 0x1000 + 8, 0, f, 4), -ENOENT);
	assert_int_equal(rpt_symcache_ent__get(e, 0x1000, 4096, f, 4), -ENOENT); /* other pgoff */
	assert_int_equal(rpt_symcache_ent__facts(e), 5);
	rpt_symcache_ent__free(e);
	/* made from other files: not used */
	e = rpt_symcache__load(c, HEX, &other, &hit);
	assert_false(hit);
	assert_int_equal(rpt_symcache_ent__get(e, 0x1000, 0, f, 4), -ENOENT);
	rpt_symcache_ent__free(e);
	rpt_symcache__free(c);
}

/*
 * A loaded entry given new offsets (in descending order) and a replaced
 * one is written merged: the file's records, then this run's, by offset.
 */
static void test_merge(void **state)
{
	struct rpt_symcache *c = rpt_symcache__open(dir, 0);
	struct rpt_symcache_id id = test_id(1);
	struct rpt_symcache_ent *e;
	bool hit;

	(void)state;
	assert_non_null(c);
	e = filled(c, HEX, 100, "a");
	assert_int_equal(rpt_symcache__store(c, e), 1);
	rpt_symcache_ent__free(e);
	e = rpt_symcache__load(c, HEX, &id, &hit);
	assert_true(hit);
	for (int i = 149; i >= 100; i--) {
		char a[64], b[64];
		const char *names[2] = {a, b};
		uint32_t kinds[2] = {3, 0};

		snprintf(a, sizeof(a), "inl_m_%d", i);
		snprintf(b, sizeof(b), "fn_m_%d", i / 2);
		assert_int_equal(rpt_symcache_ent__put(e, 0x1000 + 16 * i, 0, names, kinds, 2), 0);
	}
	assert_int_equal(rpt_symcache_ent__put(e, 0x1000, 0, (const char *[]){"inl_z_0", "fn_z_0"},
					       (const uint32_t[]){3, 0}, 2),
			 0);
	check_frames(e, 0, "z");
	check_frames(e, 1, "a");
	assert_int_equal(rpt_symcache__store(c, e), 1);
	rpt_symcache_ent__free(e);
	e = rpt_symcache__load(c, HEX, &id, &hit);
	assert_true(hit);
	check_frames(e, 0, "z");
	for (int i = 1; i < 150; i++)
		check_frames(e, i, i < 100 ? "a" : "m");
	/* added for the store only (no index): of one offset, the last counts */
	for (int k = 0; k < 2; k++) {
		struct rpt_symcache_frame f[2] = {
			{rpt_symcache_ent__name(e, k ? "inl_w_5" : "inl_v_5"), 3},
			{rpt_symcache_ent__name(e, k ? "fn_w_2" : "fn_v_2"), 0}};

		assert_int_equal(rpt_symcache_ent__put_frames(e, 0x1000 + 16 * 5, 0, f, 2, true),
				 0);
	}
	assert_int_equal(rpt_symcache__store(c, e), 1);
	rpt_symcache_ent__free(e);
	e = rpt_symcache__load(c, HEX, &id, &hit);
	assert_true(hit);
	check_frames(e, 5, "w");
	check_frames(e, 4, "a");
	check_frames(e, 6, "a");
	rpt_symcache_ent__free(e);
	rpt_symcache__free(c);
}

/* Overwrite byte @at of the entry file with @v, or cut the file at @at (@v < 0). */
static void damage(const char *hex, off_t at, int v)
{
	char path[512];
	int fd;

	path_of(path, sizeof(path), hex);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	if (v < 0) {
		assert_int_equal(ftruncate(fd, at), 0);
	} else {
		unsigned char b = v;

		assert_int_equal(pwrite(fd, &b, 1, at), 1);
	}
	close(fd);
}

static void test_damaged(void **state)
{
	struct rpt_symcache *c = rpt_symcache__open(dir, 0);
	struct rpt_symcache_id id = test_id(1);
	/* header byte, a record's first frame, a frame's name, a string, the end */
	const off_t at[] = {0, 9, 60, 100, 200, 3000, -1};
	struct rpt_symcache_ent *e;
	struct stat st;
	char path[512];
	bool hit;

	(void)state;
	assert_non_null(c);
	path_of(path, sizeof(path), HEX);
	for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
		e = filled(c, HEX, 100, "d");
		assert_int_equal(rpt_symcache__store(c, e), 1);
		rpt_symcache_ent__free(e);
		assert_int_equal(stat(path, &st), 0);
		if (at[k] < 0)
			damage(HEX, st.st_size - 1, -1); /* truncated */
		else
			damage(HEX, at[k] % st.st_size, 0xa5);
		e = rpt_symcache__load(c, HEX, &id, &hit);
		assert_non_null(e);
		assert_false(hit);
		rpt_symcache_ent__free(e);
	}
	/* the damaged file is replaced once something is stored again */
	e = rpt_symcache__load(c, HEX, &id, &hit);
	assert_int_equal(rpt_symcache__store(c, e), 0); /* empty: nothing to write */
	rpt_symcache_ent__free(e);
	e = filled(c, HEX, 3, "r");
	assert_int_equal(rpt_symcache__store(c, e), 1);
	rpt_symcache_ent__free(e);
	e = rpt_symcache__load(c, HEX, &id, &hit);
	assert_true(hit);
	check_frames(e, 2, "r");
	rpt_symcache_ent__free(e);
	rpt_symcache__free(c);
}

/*
 * Two processes store the same entry (different contents) over and over
 * while this one loads it: every load finds one whole version.
 */
static void test_concurrent(void **state)
{
	struct rpt_symcache *c = rpt_symcache__open(dir, 0);
	struct rpt_symcache_id id = test_id(1);
	const char *tags[2] = {"x", "y"};
	pid_t pid[2];
	int status, seen[2] = {0, 0};

	(void)state;
	assert_non_null(c);
	for (int w = 0; w < 2; w++) {
		struct rpt_symcache_ent *e = filled(c, HEX, 3000 + 1000 * w, tags[w]);

		assert_int_equal(rpt_symcache__store(c, e), 1);
		pid[w] = fork();
		assert_true(pid[w] >= 0);
		if (!pid[w]) {
			char a[32], b[32];
			const char *names[2] = {a, b};
			uint32_t kinds[2] = {3, 0};

			snprintf(a, sizeof(a), "inl_%s_0", tags[w]);
			snprintf(b, sizeof(b), "fn_%s_0", tags[w]);
			for (int i = 0; i < 150; i++) {
				/* the same frames again: something to write */
				rpt_symcache_ent__put(e, 0x1000, 0, names, kinds, 2);
				if (rpt_symcache__store(c, e) != 1)
					_exit(1);
			}
			_exit(0);
		}
		rpt_symcache_ent__free(e);
	}
	for (int i = 0; i < 400; i++) {
		struct rpt_symcache_ent *e;
		struct rpt_symcache_frame f[4];
		bool hit;
		int w;

		e = rpt_symcache__load(c, HEX, &id, &hit);
		assert_true(hit);
		/* writer x stores 3000 offsets, y 4000 */
		w = rpt_symcache_ent__get(e, 0x1000 + 16 * 3500, 0, f, 4) == 2;

		seen[w]++;
		check_frames(e, 0, tags[w]);
		check_frames(e, 2999, tags[w]);
		rpt_symcache_ent__free(e);
	}
	for (int w = 0; w < 2; w++) {
		assert_int_equal(waitpid(pid[w], &status, 0), pid[w]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	print_message("loads saw writer x %d times, y %d times\n", seen[0], seen[1]);
	rpt_symcache__free(c);
}

static void set_mtime(const char *hex, time_t t)
{
	struct timespec ts[2] = {{t, 0}, {t, 0}};
	char path[512];

	path_of(path, sizeof(path), hex);
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static uint64_t dir_bytes(int *nfiles)
{
	char cmd[160];
	unsigned long long b = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "find '%s' -name '*.sac' -printf '%%s\\n' | awk '{ s += $1; n++ } "
		 "END { print s + 0, n + 0 }'",
		 dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%llu %d", &b, nfiles), 2);
	pclose(p);
	return b;
}

static void test_bound(void **state)
{
	struct rpt_symcache *c = rpt_symcache__open(dir, 0);
	struct rpt_symcache_id id = test_id(1);
	struct rpt_symcache_ent *e;
	char hex[8][48];
	uint64_t one;
	int n;
	bool hit;

	(void)state;
	assert_non_null(c);
	for (int i = 0; i < 8; i++) {
		snprintf(hex[i], sizeof(hex[i]), "%02u%s", (unsigned)i % 10u, HEX + 2);
		e = filled(c, hex[i], 50, "b");
		assert_int_equal(rpt_symcache__store(c, e), 1);
		rpt_symcache_ent__free(e);
		set_mtime(hex[i], 1000000 + 100 * i); /* 0 the least recently used */
	}
	one = dir_bytes(&n) / 8;
	assert_int_equal(n, 8);
	rpt_symcache__free(c);
	/* a use makes entry 1 the most recent: 0, 2, 3 and 4 go */
	c = rpt_symcache__open(dir, 4 * one + one / 2);
	e = rpt_symcache__load(c, hex[1], &id, &hit);
	assert_true(hit);
	rpt_symcache_ent__free(e);
	assert_int_equal(rpt_symcache__trim(c), 0);
	assert_true(dir_bytes(&n) <= 4 * one + one / 2);
	assert_int_equal(n, 4);
	for (int i = 0; i < 8; i++)
		assert_int_equal(rpt_symcache__has(c, hex[i], 0), i == 1 || i > 4);
	rpt_symcache__free(c);
}

static void test_not_ours(void **state)
{
	char sub[128], link[128], path[512], target[128];
	struct rpt_symcache *c;
	struct rpt_symcache_id id = test_id(1);
	struct rpt_symcache_ent *e;
	bool hit;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/open", dir);
	assert_int_equal(mkdir(sub, 0777), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	c = rpt_symcache__open(sub, 0);
	assert_null(c); /* writable by others */
	assert_int_equal(errno, EPERM);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(dir, link), 0);
	assert_null(rpt_symcache__open(link, 0));
	/* an entry file that is a symlink is not followed */
	c = rpt_symcache__open(dir, 0);
	assert_non_null(c);
	e = filled(c, HEX, 5, "s");
	assert_int_equal(rpt_symcache__store(c, e), 1);
	rpt_symcache_ent__free(e);
	path_of(path, sizeof(path), HEX);
	snprintf(target, sizeof(target), "%s/real", dir);
	assert_int_equal(rename(path, target), 0);
	assert_int_equal(symlink(target, path), 0);
	e = rpt_symcache__load(c, HEX, &id, &hit);
	assert_false(hit);
	rpt_symcache_ent__free(e);
	rpt_symcache__free(c);
}

/*
 * The default directory ($HOME/.cache/sa): never made in a HOME that is
 * not the effective user's (root with sudo keeping HOME), never through a
 * symlinked ~/.cache.
 */
static void test_default_dir(void **state)
{
	char home[128], cache[160], away[128], probe[192];
	char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	char *old_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
	struct rpt_symcache *c;
	struct stat st;

	(void)state;
	unsetenv("XDG_CACHE_HOME");
	/* ours: made 0700 */
	snprintf(home, sizeof(home), "%s/h-ours", dir);
	assert_int_equal(mkdir(home, 0755), 0);
	setenv("HOME", home, 1);
	c = rpt_symcache__open(NULL, 0);
	assert_non_null(c);
	rpt_symcache__free(c);
	snprintf(probe, sizeof(probe), "%s/.cache/sa", home);
	assert_int_equal(stat(probe, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	/* ~/.cache a symlink to elsewhere: not followed, nothing made there */
	snprintf(home, sizeof(home), "%s/h-link", dir);
	snprintf(cache, sizeof(cache), "%s/.cache", home);
	snprintf(away, sizeof(away), "%s/elsewhere", dir);
	assert_int_equal(mkdir(home, 0755), 0);
	assert_int_equal(mkdir(away, 0755), 0);
	assert_int_equal(symlink(away, cache), 0);
	setenv("HOME", home, 1);
	assert_null(rpt_symcache__open(NULL, 0));
	snprintf(probe, sizeof(probe), "%s/sa", away);
	assert_int_not_equal(stat(probe, &st), 0);
	/* a HOME owned by someone else (as root): no cache, nothing made in it */
	if (geteuid() == 0) {
		snprintf(home, sizeof(home), "%s/h-other", dir);
		assert_int_equal(mkdir(home, 0755), 0);
		assert_int_equal(chown(home, 65534, 65534), 0);
		setenv("HOME", home, 1);
		assert_null(rpt_symcache__open(NULL, 0));
		snprintf(probe, sizeof(probe), "%s/.cache", home);
		assert_int_not_equal(stat(probe, &st), 0);
	}
	if (old_home)
		setenv("HOME", old_home, 1);
	else
		unsetenv("HOME");
	if (old_xdg)
		setenv("XDG_CACHE_HOME", old_xdg, 1);
	free(old_home);
	free(old_xdg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_ours, setup, teardown),
		cmocka_unit_test_setup_teardown(test_default_dir, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
