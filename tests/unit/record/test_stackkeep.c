// SPDX-License-Identifier: MIT
/*
 * test_stackkeep.c - stack ids across a rotation (--rotate): ids stay
 * unique over the run, a stack seen again in a new file gets a new id, and
 * an id of the previous file referenced in the new one is written there
 * again once, with its frames; older ids are forgotten.
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

static void test_carry(void **state)
{
	__u64 a[3] = {10, 11, 12}, b[2] = {20, 21};
	struct rec_stackdb *db;
	struct saf_writer *w;
	const __u64 *ips;
	__u32 kind, n;
	int fd = memfd_create("stackkeep", 0), err;

	(void)state;
	w = saf_writer__open_fd(fd, NULL);
	db = rec_stackdb__new();
	assert_non_null(w);
	assert_non_null(db);
	assert_int_equal(rec_stackdb__keep_frames(db), 0);
	assert_int_equal(rec_stackdb__intern(db, SAF_STACK_USER, a, 3, w, &err), 1);
	assert_int_equal(rec_stackdb__intern(db, SAF_STACK_KERNEL, b, 2, w, &err), 2);
	/* in its own file an id needs nothing */
	assert_int_equal(rec_stackdb__ensure(db, 2, w, &kind, &ips, &n), 0);
	assert_int_equal(rec_stackdb__new_file(db), 1);
	/* seen again after the rotation: a new id, written in the new file */
	assert_int_equal(rec_stackdb__intern(db, SAF_STACK_USER, a, 3, w, &err), 3);
	assert_int_equal(err, 0);
	/* interned before the rotation, counted after: written again, once */
	assert_int_equal(rec_stackdb__ensure(db, 2, w, &kind, &ips, &n), 1);
	assert_int_equal(kind, SAF_STACK_KERNEL);
	assert_int_equal(n, 2);
	assert_memory_equal(ips, b, sizeof(b));
	assert_int_equal(rec_stackdb__ensure(db, 2, w, &kind, &ips, &n), 0);
	assert_int_equal(rec_stackdb__ensure(db, 3, w, &kind, &ips, &n), 0);
	assert_int_equal(rec_stackdb__ensure(db, 0, w, &kind, &ips, &n), 0);
	assert_int_equal(rec_stackdb__new_file(db), 3);
	/* the file before the previous one is forgotten; the previous is kept */
	assert_int_equal(rec_stackdb__ensure(db, 1, w, &kind, &ips, &n), 0);
	assert_int_equal(rec_stackdb__ensure(db, 3, w, &kind, &ips, &n), 1);
	assert_memory_equal(ips, a, sizeof(a));
	assert_int_equal(rec_stackdb__count(db), 3);
	rec_stackdb__free(db);
	saf_writer__free(w);
	close(fd);
}

SA_TEST_MAIN(test_carry)
