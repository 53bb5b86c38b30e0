// SPDX-License-Identifier: MIT
/*
 * test_contentid.c - sac_contentid__fd() as docs/format.md ("MAP record",
 * id_kind 1) says: the same bytes give the same id wherever the reads end,
 * one byte changed changes it, and a file over 64 MiB is hashed by its
 * first and last 32 MiB and its size only (a byte in its middle does not
 * count; a byte at either end and the size do).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "contentid.h"

static int memfile(const void *p, size_t n)
{
	int fd = memfd_create("cid", 0);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	return fd;
}

static void id_of(int fd, uint8_t *out)
{
	assert_int_equal(sac_contentid__fd(fd, out), 0);
}

static void test_small(void **state)
{
	uint8_t a[SAC_CONTENTID_LEN], b[SAC_CONTENTID_LEN], c[SAC_CONTENTID_LEN];
	size_t n = (3u << 20) + 123; /* blocks of 1 MiB and a tail */
	uint8_t *buf = malloc(n);
	int fd1, fd2, fd3;

	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 13);
	fd1 = memfile(buf, n);
	fd2 = memfile(buf, n);
	buf[n / 2] ^= 1;
	fd3 = memfile(buf, n);
	lseek(fd1, 17, SEEK_SET); /* pread: the offset does not matter */
	id_of(fd1, a);
	id_of(fd2, b);
	id_of(fd3, c);
	assert_memory_equal(a, b, sizeof(a));
	assert_memory_not_equal(a, c, sizeof(a));
	assert_int_equal(lseek(fd1, 0, SEEK_CUR), 17);
	close(fd1);
	close(fd2);
	close(fd3);
	free(buf);
}

static void test_empty_and_tiny(void **state)
{
	uint8_t a[SAC_CONTENTID_LEN], b[SAC_CONTENTID_LEN];
	int fd0 = memfile("", 0), fd1 = memfile("\0", 1);

	(void)state;
	id_of(fd0, a);
	id_of(fd1, b);
	assert_memory_not_equal(a, b, sizeof(a)); /* the size counts */
	close(fd0);
	close(fd1);
}

/* Byte @off of a sparse file of @size bytes set to 1: its id into @out. */
static void sparse_id(uint64_t size, uint64_t off, uint8_t *out)
{
	int fd = memfd_create("big", 0);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	if (off < size)
		assert_int_equal(pwrite(fd, "\1", 1, (off_t)off), 1);
	id_of(fd, out);
	close(fd);
}

static void test_large(void **state)
{
	uint64_t size = SAC_CONTENTID_WHOLE + (8u << 20);
	uint8_t base[SAC_CONTENTID_LEN], mid[SAC_CONTENTID_LEN], head[SAC_CONTENTID_LEN],
		tail[SAC_CONTENTID_LEN], bigger[SAC_CONTENTID_LEN];

	(void)state;
	sparse_id(size, size, base);
	sparse_id(size, size / 2, mid);
	sparse_id(size, 100, head);
	sparse_id(size, size - 100, tail);
	sparse_id(size + 1, size + 1, bigger);
	assert_memory_equal(base, mid, sizeof(base)); /* the middle is not read */
	assert_memory_not_equal(base, head, sizeof(base));
	assert_memory_not_equal(base, tail, sizeof(base));
	assert_memory_not_equal(base, bigger, sizeof(base));
}

static void test_bad_fd(void **state)
{
	uint8_t a[SAC_CONTENTID_LEN];

	(void)state;
	assert_int_equal(sac_contentid__fd(-1, a), -EBADF);
}

SA_TEST_MAIN(test_small, test_empty_and_tiny, test_large, test_bad_fd)
