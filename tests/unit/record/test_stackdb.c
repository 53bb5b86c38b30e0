// SPDX-License-Identifier: MIT
/*
 * test_stackdb.c - stack ids and their frame counts: id 0 (a sample
 * without that stack) and ids not given out yet read 0 frames even when
 * the count array was allocated over dirty heap memory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "record.h"
#include "stackdb.h"

/*
 * Leave freed 4 KiB blocks full of 0xff so the table's first allocation
 * (4096 counts) is likely to reuse one: before the fix, id 0 read 255.
 */
static void dirty_heap(void)
{
	void *p[8];
	int i;

	for (i = 0; i < 8; i++) {
		p[i] = malloc(4096);
		memset(p[i], 0xff, 4096);
	}
	for (i = 0; i < 8; i++)
		free(p[i]);
}

static void test_no_stack_has_no_frames(void **state)
{
	struct rec_stackdb *db;
	struct saf_writer *w;
	__u64 ips[6] = {1, 2, 3, 4, 5, 6};
	int fd = memfd_create("stackdb", 0), err;
	__u32 id;

	(void)state;
	w = saf_writer__open_fd(fd, NULL);
	assert_non_null(w);
	dirty_heap();
	db = rec_stackdb__new();
	assert_non_null(db);
	id = rec_stackdb__intern(db, SAF_STACK_USER, ips, 6, w, &err);
	assert_int_equal(err, 0);
	assert_int_equal(id, 1);
	assert_int_equal(rec_stackdb__nframes(db, id), 6);
	assert_int_equal(rec_stackdb__nframes(db, 0), 0);
	assert_int_equal(rec_stackdb__nframes(db, 2), 0);
	assert_int_equal(rec_stackdb__nframes(db, 4095), 0);
	assert_int_equal(rec_stackdb__intern(db, SAF_STACK_USER, ips, 6, w, &err), 1);
	assert_int_equal(rec_stackdb__intern(db, SAF_STACK_USER, ips, 0, w, &err), 0);
	assert_int_equal(rec_stackdb__count(db), 1);
	rec_stackdb__free(db);
	saf_writer__free(w);
	close(fd);
}

/*
 * --rotate: frame counts stay for the ids of the current file and the one
 * just closed (samples drained after a rotation name those), and are
 * dropped for older ones, so memory does not grow with the run.
 */
static void test_rotation_keeps_two_files(void **state)
{
	struct rec_stackdb *db = rec_stackdb__new();
	int fd = memfd_create("stackdb", 0), err, f, i;
	struct saf_writer *w = saf_writer__open_fd(fd, NULL);
	__u64 ips[4] = {7, 8, 9, 10};
	__u32 first[4];

	(void)state;
	assert_non_null(db);
	assert_non_null(w);
	for (f = 0; f < 4; f++) { /* 5000 stacks of f + 1 frames per file */
		first[f] = 0;
		for (i = 0; i < 5000; i++) {
			ips[0] = (__u64)f << 32 | (__u64)i;
			__u32 id = rec_stackdb__intern(db, SAF_STACK_USER, ips, f + 1, w, &err);

			assert_int_equal(err, 0);
			first[f] = first[f] ? first[f] : id;
		}
		if (f < 3)
			assert_int_equal(rec_stackdb__new_file(db), first[f]);
	}
	/* in file 3: ids of file 2 and 3 are known, older ones read 0 */
	assert_int_equal(rec_stackdb__nframes(db, first[3] + 4999), 4);
	assert_int_equal(rec_stackdb__nframes(db, first[2]), 3);
	assert_int_equal(rec_stackdb__nframes(db, first[2] - 1), 0);
	assert_int_equal(rec_stackdb__nframes(db, first[0]), 0);
	assert_int_equal(rec_stackdb__count(db), 20000);
	rec_stackdb__free(db);
	saf_writer__free(w);
	close(fd);
}

SA_TEST_MAIN(test_no_stack_has_no_frames, test_rotation_keeps_two_files)
