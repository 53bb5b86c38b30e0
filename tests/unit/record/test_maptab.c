// SPDX-License-Identifier: MIT
/*
 * test_maptab.c - when the side band opens a mapped file: once a mapping
 * has handed a build id's file over with an open fd, later mappings of
 * that build id need none; without a build id, for another one, or with a
 * file hook (--call-graph auto) every mapping still does. And images of
 * many processes of one generation are all found again. At a rotation,
 * the images of processes gone and their build ids are forgotten, not
 * those of a live process nor those a sample named lately. A mapping found
 * answers for the span of it that later mappings of a reused range leave.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "maptab.h"
#include "rec_test_sink.h"

#define GONE_SPAN_PID 5000001u /* above PID_MAX_LIMIT: no /proc to read */

static void no_hook(void *arg, int fd, const struct saf_map *m)
{
	(void)arg;
	(void)fd;
	(void)m;
}

static bool only_pid_1(void *arg, uint32_t pid)
{
	(void)arg;
	return pid == 1;
}

static void test_fd_once_per_build_id(void **state)
{
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	uint8_t bid[SAF_MAX_BUILD_ID], other[SAF_MAX_BUILD_ID];
	struct rec_elfsyms *es = rec_elfsyms__new(0);
	struct rec_maptab *mt = rec_maptab__new(es);
	char path[900];
	struct saf_map m = {.pid = (uint32_t)getpid(),
			    .start = 0x400000,
			    .end = 0x401000,
			    .flags = SAF_MAP_EXEC};
	ssize_t len = readlink("/proc/self/exe", path, sizeof(path) - 1);
	int fd, n;

	(void)state;
	assert_non_null(mt);
	assert_true(len > 0);
	path[len] = '\0';
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = rec_elfsyms__read_build_id(fd, bid, sizeof(bid));
	assert_true(n >= 16);
	m.path = saf_str__from(path);
	m.build_id = (struct saf_bytes){bid, (uint32_t)n};
	assert_true(rec_maptab__wants_fd(mt, &m));
	/* handed over without an fd: the next mapping is still opened */
	assert_int_equal(rec_maptab__add(mt, &m, -1, &sink), 0);
	assert_true(rec_maptab__wants_fd(mt, &m));
	assert_int_equal(rec_maptab__add(mt, &m, fd, &sink), 0);
	assert_false(rec_maptab__wants_fd(mt, &m));
	m.pid++; /* another process, the same file */
	assert_false(rec_maptab__wants_fd(mt, &m));
	memcpy(other, bid, (size_t)n);
	other[0] ^= 1;
	m.build_id.data = other;
	assert_true(rec_maptab__wants_fd(mt, &m));
	m.build_id = (struct saf_bytes){NULL, 0}; /* read from the file */
	assert_true(rec_maptab__wants_fd(mt, &m));
	m.build_id = (struct saf_bytes){bid, (uint32_t)n};
	rec_maptab__on_map(mt, no_hook, NULL);
	assert_true(rec_maptab__wants_fd(mt, &m));
	/* the hook wants only its processes' files: another's, fed already, is not opened */
	rec_maptab__on_map_want(mt, only_pid_1);
	assert_false(rec_maptab__wants_fd(mt, &m));
	m.pid = 1;
	assert_true(rec_maptab__wants_fd(mt, &m));
	rec_maptab__free(mt);
	rec_elfsyms__free(es);
	test_sink_reset(&ts);
}

static void test_many_images_of_gen_zero(void **state)
{
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_maptab *mt = rec_maptab__new(NULL);
	struct saf_map m = {.flags = SAF_MAP_EXEC | SAF_MAP_ANON, .path = saf_str__from("[anon]")};
	uint32_t pid;

	(void)state;
	assert_non_null(mt);
	for (pid = 1; pid <= 5000; pid++) {
		m.pid = pid;
		m.start = 0x10000 * pid;
		m.end = m.start + 0x1000;
		assert_int_equal(rec_maptab__add(mt, &m, -1, &sink), 0);
	}
	assert_int_equal(rec_maptab__images(mt), 5000);
	for (pid = 1; pid <= 5000; pid++) {
		struct saf_map got;

		assert_int_equal(rec_maptab__find(mt, pid, 0, 0x10000 * pid + 8, &got), 0);
		assert_int_equal(got.pid, pid);
		assert_true(got.start == 0x10000 * (uint64_t)pid);
		assert_int_equal(rec_maptab__find(mt, pid, 0, 0x10000 * pid + 0x1000, &got),
				 -ENOENT);
	}
	rec_maptab__free(mt);
	test_sink_reset(&ts);
}

/* [0x10000, 0x90000), then [0x40000, 0x50000) over it and [0x95000, 0x96000) after it. */
static void test_span_cut_by_later_mappings(void **state)
{
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_maptab *mt = rec_maptab__new(NULL);
	struct saf_map m = {.pid = GONE_SPAN_PID,
			    .flags = SAF_MAP_EXEC | SAF_MAP_ANON,
			    .path = saf_str__from("[anon]")};
	static const uint64_t maps[][2] = {
		{0x10000, 0x90000}, {0x40000, 0x50000}, {0x95000, 0x96000}};
	/* pc, the mapping's start, the span */
	static const uint64_t want[][4] = {
		{0x10000, 0x10000, 0x10000, 0x40000}, {0x3ffff, 0x10000, 0x10000, 0x40000},
		{0x40000, 0x40000, 0x40000, 0x50000}, {0x4ffff, 0x40000, 0x40000, 0x50000},
		{0x50000, 0x10000, 0x50000, 0x90000}, {0x95800, 0x95000, 0x95000, 0x96000}};
	struct saf_map got;
	uint64_t span[2];
	size_t i;

	(void)state;
	assert_non_null(mt);
	for (i = 0; i < 3; i++) {
		m.start = maps[i][0];
		m.end = maps[i][1];
		assert_int_equal(rec_maptab__add(mt, &m, -1, &sink), 0);
	}
	for (i = 0; i < sizeof(want) / sizeof(*want); i++) {
		assert_int_equal(
			rec_maptab__find_span(mt, GONE_SPAN_PID, 0, want[i][0], &got, span), 0);
		assert_true(got.start == want[i][1]);
		assert_true(span[0] == want[i][2]);
		assert_true(span[1] == want[i][3]);
		assert_int_equal(rec_maptab__find(mt, GONE_SPAN_PID, 0, want[i][0], &got), 0);
		assert_true(got.start == want[i][1]);
	}
	assert_int_equal(rec_maptab__find_span(mt, GONE_SPAN_PID, 0, 0x90000, &got, span), -ENOENT);
	rec_maptab__free(mt);
	test_sink_reset(&ts);
}

/* No process has a pid above PID_MAX_LIMIT (4194304): /proc shows none. */
#define GONE_PID 5000000u
#define NGONE	 300u

/* Map a file of build id @i into (pid, 0), handing the registry an fd. */
static void add_bid(struct rec_maptab *mt, uint32_t pid, uint32_t i, const struct rec_sink *sink)
{
	uint8_t bid[20] = {0xb1, 0xd0};
	struct saf_map m = {.pid = pid,
			    .start = 0x400000,
			    .end = 0x401000,
			    .flags = SAF_MAP_EXEC,
			    .path = saf_str__from("/nonexistent/churn"),
			    .build_id = {bid, sizeof(bid)}};

	memcpy(bid + 4, &i, sizeof(i));
	assert_int_equal(rec_maptab__add(mt, &m, open("/dev/null", O_RDONLY), sink), 0);
}

static void test_rotation_forgets_gone(void **state)
{
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_elfsyms *es = rec_elfsyms__new(0);
	struct rec_maptab *mt = rec_maptab__new(es);
	struct saf_map got;
	uint32_t i, self = (uint32_t)getpid();

	(void)state;
	assert_non_null(mt);
	/* a live process; its entries move as its array grows */
	for (i = 0; i < 40; i++)
		add_bid(mt, self, 0xffffffffu, &sink);
	for (i = 0; i < NGONE; i++)
		add_bid(mt, GONE_PID + i, i, &sink);
	assert_int_equal(rec_elfsyms__count(es), NGONE + 1);
	assert_int_equal(rec_maptab__fed(mt), NGONE + 1);
	/* half exited as the side band saw it, half vanished unseen */
	for (i = 0; i < NGONE / 2; i++)
		rec_maptab__exit(mt, GONE_PID + i);
	rec_maptab__new_file(mt);
	/* named in the file just closed: kept */
	assert_int_equal(rec_maptab__images(mt), NGONE + 1);
	rec_maptab__new_file(mt);
	/* a sample of the second file names one: it stays a file longer */
	assert_int_equal(rec_maptab__find(mt, GONE_PID + NGONE - 1, 0, 0x400008, &got), 0);
	rec_maptab__new_file(mt);
	assert_int_equal(rec_maptab__images(mt), 2);
	assert_int_equal(rec_elfsyms__count(es), 2);
	rec_maptab__new_file(mt); /* it was named in the file before the one closed */
	assert_int_equal(rec_maptab__images(mt), 2);
	rec_maptab__new_file(mt);
	assert_int_equal(rec_maptab__images(mt), 1);
	assert_int_equal(rec_maptab__entries(mt), 40);
	assert_int_equal(rec_elfsyms__count(es), 1);
	assert_int_equal(rec_maptab__fed(mt), 1);
	/* the live one is found, its file renumbered and still handed over */
	assert_int_equal(rec_maptab__find(mt, self, 0, 0x400008, &got), 0);
	assert_int_equal(got.build_id.len, 20);
	assert_int_equal(got.build_id.data[4], 0xff);
	assert_false(rec_maptab__wants_fd(mt, &got));
	assert_int_equal(rec_maptab__note_stack(mt, self, 0, (uint64_t[]){0x400008}, 1), 0);
	/* a build id forgotten is registered (and opened) again when mapped */
	add_bid(mt, self, 7, &sink);
	assert_int_equal(rec_elfsyms__count(es), 2);
	rec_maptab__free(mt);
	rec_elfsyms__free(es);
	test_sink_reset(&ts);
}

/*
 * A pid that execs itself again and again (issue 29: 385 execs/s grew the
 * recorder by 1 MB/s): each exec drops its other images two drains later,
 * so the table holds the last few images, and the one before an exec is
 * still found for the samples drained after it.
 */
static void test_exec_loop_drops_old_images(void **state)
{
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_maptab *mt = rec_maptab__new(NULL);
	struct saf_map m = {.pid = GONE_SPAN_PID,
			    .start = 0x400000,
			    .end = 0x401000,
			    .flags = SAF_MAP_EXEC | SAF_MAP_ANON,
			    .path = saf_str__from("[anon]")};
	struct saf_map got;
	uint32_t gen;

	(void)state;
	assert_non_null(mt);
	for (gen = 0; gen < 1000; gen++) {
		m.gen = gen;
		assert_int_equal(rec_maptab__add(mt, &m, -1, &sink), 0);
		rec_maptab__exec(mt, m.pid, gen);
		if (gen)
			assert_int_equal(rec_maptab__find(mt, m.pid, gen - 1, 0x400008, &got), 0);
		rec_maptab__drained(mt);
		test_sink_reset(&ts);
	}
	assert_true(rec_maptab__images(mt) <= 3);
	assert_int_equal(rec_maptab__find(mt, m.pid, 999, 0x400008, &got), 0);
	assert_int_equal(got.gen, 999);
	rec_maptab__free(mt);
}

SA_TEST_MAIN(test_fd_once_per_build_id, test_many_images_of_gen_zero, test_rotation_forgets_gone,
	     test_span_cut_by_later_mappings, test_exec_loop_drops_old_images)
