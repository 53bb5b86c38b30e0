// SPDX-License-Identifier: MIT
/*
 * test_throttle.c - the samples not taken while the kernel throttled an
 * event, from its ring: a memfd of the ring's size stands in for the
 * perf event, and the test writes THROTTLE / UNTHROTTLE records into it
 * as the kernel would, across the ring's wrap.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/perf_event.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "throttle.h"

#define MS 1000000ull

struct fake {
	int fd;
	struct perf_event_mmap_page *m;
	char *data;
	uint64_t sz;
};

static void fake_open(struct fake *f)
{
	long pg = sysconf(_SC_PAGESIZE);

	f->fd = memfd_create("ring", MFD_CLOEXEC);
	assert_true(f->fd >= 0);
	assert_int_equal(ftruncate(f->fd, 3 * pg), 0); /* the meta page and 2 of data */
	f->m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	assert_true(f->m != MAP_FAILED);
	f->data = (char *)f->m + pg;
	f->sz = 2 * pg;
}

static void fake_close(struct fake *f)
{
	munmap(f->m, (size_t)f->sz / 2 * 3);
	close(f->fd);
}

/*
 * One record of @type at @time, as the kernel writes it (time, id, stream
 * id), or a 24-byte PERF_RECORD_LOST (id, lost) that shifts the records
 * after it off the ring's 32-byte grid, so some straddle its wrap.
 */
static void put(struct fake *f, uint32_t type, uint64_t time)
{
	struct {
		struct perf_event_header h;
		uint64_t time, id, stream;
	} r = {{type, 0, type == PERF_RECORD_LOST ? 24 : sizeof(r)}, time, 1, 1};
	uint64_t head = f->m->data_head, o = head % f->sz;
	size_t first = r.h.size < f->sz - o ? r.h.size : f->sz - o;

	memcpy(f->data + o, &r, first);
	memcpy(f->data, (char *)&r + first, r.h.size - first);
	f->m->data_head = head + r.h.size;
}

static void test_spans(void **state)
{
	struct fake f;
	struct rec_throttle *t;

	(void)state;
	fake_open(&f);
	t = rec_throttle__new(&f.fd, 1, 1000); /* 1 sample a ms */
	assert_non_null(t);
	assert_int_equal(rec_throttle__unwatched(t), 0);
	assert_int_equal(rec_throttle__take(t, 100 * MS), 0);
	put(&f, PERF_RECORD_THROTTLE, 110 * MS);
	put(&f, PERF_RECORD_UNTHROTTLE, 114 * MS);
	put(&f, PERF_RECORD_THROTTLE, 150 * MS);
	rec_throttle__read(t);
	/* 4 ms, then 50 ms of a span still open at 200 */
	assert_int_equal(rec_throttle__take(t, 200 * MS), 54);
	put(&f, PERF_RECORD_UNTHROTTLE, 210 * MS);
	assert_int_equal(rec_throttle__take(t, 300 * MS), 10);
	assert_int_equal(rec_throttle__spans(t), 2);
	/* an UNTHROTTLE without its THROTTLE (lost) counts nothing */
	put(&f, PERF_RECORD_UNTHROTTLE, 310 * MS);
	assert_int_equal(rec_throttle__take(t, 400 * MS), 0);
	assert_int_equal(f.m->data_tail, f.m->data_head);
	rec_throttle__free(t);
	fake_close(&f);
}

static void test_wrap(void **state)
{
	struct fake f;
	struct rec_throttle *t;
	uint64_t now = 0, i;

	(void)state;
	fake_open(&f);
	t = rec_throttle__new(&f.fd, 1, 2000);
	assert_non_null(t);
	/* 1,000 spans of 1 ms, read every 100: the 8 KiB ring wraps 15 times */
	put(&f, PERF_RECORD_LOST, 0);
	for (i = 0; i < 1000; i++) {
		put(&f, PERF_RECORD_THROTTLE, now + 1 * MS);
		put(&f, PERF_RECORD_UNTHROTTLE, now + 2 * MS);
		now += 4 * MS;
		if (i % 100 == 99)
			rec_throttle__read(t);
	}
	assert_int_equal(rec_throttle__take(t, now), 2000);
	assert_int_equal(rec_throttle__spans(t), 1000);
	rec_throttle__free(t);
	fake_close(&f);
}

static void test_unwatched(void **state)
{
	int fd = -1;
	struct rec_throttle *t;

	(void)state;
	t = rec_throttle__new(&fd, 1, 99);
	assert_non_null(t);
	assert_int_equal(rec_throttle__unwatched(t), 1);
	assert_int_equal(rec_throttle__take(t, 1000 * MS), 0);
	rec_throttle__free(t);
	assert_int_equal(rec_throttle__take(NULL, 1), 0);
	rec_throttle__free(NULL);
}

SA_TEST_MAIN(test_spans, test_wrap, test_unwatched)
