// SPDX-License-Identifier: MIT
/*
 * throttle.c - samples the kernel did not take. An event that fires more
 * than kernel.perf_event_max_sample_rate / HZ times in one tick (when the
 * kernel or an administrator lowers that limit while sa-record samples)
 * is stopped until a later tick; the kernel says so with THROTTLE and
 * UNTHROTTLE records in the event's ring, which this file reads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/perf_event.h>
#include "throttle.h"

/* 2 pages of 32-byte records: 256 spans, 0.5 s of a throttle at every tick of HZ 250 */
#define THR_DATA_PAGES 2

struct thr_ring {
	struct perf_event_mmap_page *m; /* NULL: unwatched */
	size_t map_len;
	char *data;
	uint64_t data_sz;
	uint64_t since; /* throttled since then (CLOCK_MONOTONIC ns), 0: running */
};

struct rec_throttle {
	struct thr_ring *r;
	int n, unwatched;
	double freq;
	uint64_t spans;
	uint64_t off_ns; /* throttled time not yet taken */
};

/* @r's ring on event @fd: 0, or -1 (then unwatched). */
static int map_ring(struct thr_ring *r, int fd)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *m;

	r->map_len = (size_t)pg * (1 + THR_DATA_PAGES);
	m = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		r->m = NULL;
		return -1;
	}
	r->m = m;
	r->data = (char *)m + (r->m->data_offset ? r->m->data_offset : (uint64_t)pg);
	r->data_sz = r->m->data_size ? r->m->data_size : (uint64_t)pg * THR_DATA_PAGES;
	return 0;
}

void rec_throttle__rewatch(struct rec_throttle *t, int i, int fd)
{
	struct thr_ring *r;

	if (!t || i < 0 || i >= t->n)
		return;
	r = &t->r[i];
	rec_throttle__read(t); /* what the old event said before it stopped */
	if (r->m)
		munmap(r->m, r->map_len);
	else
		t->unwatched--;
	r->since = 0;
	if (map_ring(r, fd))
		t->unwatched++;
}

struct rec_throttle *rec_throttle__new(const int *fds, int nfds, double freq)
{
	struct rec_throttle *t = calloc(1, sizeof(*t));
	int i;

	if (!t || !(t->r = calloc(nfds > 0 ? nfds : 1, sizeof(*t->r)))) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->n = nfds;
	t->freq = freq;
	for (i = 0; i < nfds; i++)
		if (map_ring(&t->r[i], fds[i]))
			t->unwatched++;
	return t;
}

/* @n bytes at ring offset @pos, across the wrap */
static void ring_copy(const struct thr_ring *r, uint64_t pos, void *out, size_t n)
{
	uint64_t o = pos % r->data_sz;
	size_t first = n < r->data_sz - o ? n : (size_t)(r->data_sz - o);

	memcpy(out, r->data + o, first);
	memcpy((char *)out + first, r->data, n - first);
}

static void on_record(struct rec_throttle *t, struct thr_ring *r, uint32_t type, uint64_t time)
{
	if (type == PERF_RECORD_THROTTLE) {
		t->spans++;
		if (!r->since)
			r->since = time;
	} else if (type == PERF_RECORD_UNTHROTTLE && r->since) {
		t->off_ns += time > r->since ? time - r->since : 0;
		r->since = 0;
	}
}

void rec_throttle__read(struct rec_throttle *t)
{
	struct perf_event_header h;
	uint64_t head, tail, time;
	int i;

	for (i = 0; t && i < t->n; i++) {
		struct thr_ring *r = &t->r[i];

		if (!r->m)
			continue;
		head = __atomic_load_n(&r->m->data_head, __ATOMIC_ACQUIRE);
		for (tail = r->m->data_tail; tail + sizeof(h) <= head; tail += h.size) {
			ring_copy(r, tail, &h, sizeof(h));
			if (h.size < sizeof(h))
				break; /* cannot be: stop rather than spin */
			time = 0;
			if (h.size >= sizeof(h) + sizeof(time))
				ring_copy(r, tail + sizeof(h), &time, sizeof(time));
			on_record(t, r, h.type, time);
		}
		__atomic_store_n(&r->m->data_tail, head, __ATOMIC_RELEASE);
	}
}

uint64_t rec_throttle__take(struct rec_throttle *t, uint64_t now_ns)
{
	uint64_t ns;
	int i;

	if (!t)
		return 0;
	rec_throttle__read(t);
	for (i = 0; i < t->n; i++) {
		if (!t->r[i].since || t->r[i].since >= now_ns)
			continue;
		t->off_ns += now_ns - t->r[i].since;
		t->r[i].since = now_ns;
	}
	ns = t->off_ns;
	t->off_ns = 0;
	return (uint64_t)(ns * t->freq / 1e9 + 0.5);
}

uint64_t rec_throttle__spans(const struct rec_throttle *t)
{
	return t ? t->spans : 0;
}

int rec_throttle__unwatched(const struct rec_throttle *t)
{
	return t ? t->unwatched : 0;
}

void rec_throttle__free(struct rec_throttle *t)
{
	int i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		if (t->r[i].m)
			munmap(t->r[i].m, t->r[i].map_len);
	free(t->r);
	free(t);
}
