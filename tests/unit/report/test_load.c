// SPDX-License-Identifier: MIT
/*
 * test_load.c - reading a recording into sa-report's tables: a file's
 * stack ids, which the recorder numbers one after the other (kept in a
 * dense array) but which may also lie below the first (stacks carried into
 * a rotated file), far past it, or be asked for and never defined.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "saf.h"
#include "session.h"

/* Stack ids in file order; stack i holds kernel frame "k<id>" and i + 1 samples. */
static const uint32_t ids[] = {1000, 1001, 1002, 500, 5000000, 1003, 999, 7000};
#define NIDS	     (sizeof(ids) / sizeof(ids[0]))
#define UNDEFINED_ID 1004 /* in the dense range, never defined */

static uint64_t kaddr(size_t i)
{
	return 0xffffffff81000000ull + 0x1000 * i;
}

static void write_recording(int fd, const uint32_t *ids, size_t nids)
{
	struct saf_meta m = {.writer = saf_str__from("test_load"), .freq_hz = 99, .ncpus = 1};
	struct saf_interval iv = {0, 1, 2};
	struct saf_end end = {2, 0, 0, 1, 0};
	struct saf_writer *w = saf_writer__open_fd(fd, NULL);
	char(*names)[16] = calloc(nids, sizeof(*names));
	uint64_t *ips = calloc(nids, sizeof(*ips));
	struct saf_record r;

	assert_non_null(w);
	assert_non_null(names);
	assert_non_null(ips);
	assert_int_equal(saf_writer__meta(w, &m), 0);
	for (size_t i = 0; i < nids; i++) {
		snprintf(names[i], sizeof(names[i]), "k%u", ids[i]);
		r = (struct saf_record){.kind = SAF_REC_KSYM};
		r.ksym = (struct saf_ksym){kaddr(i), saf_str__from(names[i]), saf_str__from("")};
		assert_int_equal(saf_writer__add(w, &r), 0);
	}
	assert_int_equal(saf_writer__interval(w, &iv), 0);
	for (size_t i = 0; i < nids; i++) {
		ips[i] = kaddr(i);
		r = (struct saf_record){.kind = SAF_REC_STACK};
		r.stack = (struct saf_stack){ids[i], SAF_STACK_KERNEL, 1, &ips[i]};
		assert_int_equal(saf_writer__add(w, &r), 0);
	}
	for (size_t i = 0; i <= nids; i++) {
		r = (struct saf_record){.kind = SAF_REC_COUNT};
		r.count = (struct saf_count){42,
					     42,
					     0,
					     0,
					     i < nids ? ids[i] : UNDEFINED_ID,
					     i + 1,
					     saf_str__from("load")};
		assert_int_equal(saf_writer__add(w, &r), 0);
	}
	assert_int_equal(saf_writer__interval_end(w, NULL), 0);
	assert_int_equal(saf_writer__finish(w, &end), 0);
	saf_writer__free(w);
	free(names);
	free(ips);
}

/* A recording of stacks @ids read into a new profile, the session in *@sp. */
static struct rpt_profile *load(const uint32_t *ids, size_t nids, struct rpt_session **sp)
{
	struct rpt_session_opts o = {.sym = {.no_system_debug = true}};
	struct rpt_profile *prof = rpt_profile__new();
	char path[] = "/tmp/test_load.XXXXXX";
	int fd = mkstemp(path);

	*sp = rpt_session__new(&o);
	assert_non_null(prof);
	assert_non_null(*sp);
	assert_true(fd >= 0);
	write_recording(fd, ids, nids);
	close(fd);
	assert_int_equal(rpt_session__add_file(*sp, path, path, prof), 0);
	unlink(path);
	return prof;
}

/* Every count's stack: its own kernel frame, and none for the undefined id. */
static void test_stack_ids(void **state)
{
	struct rpt_session *s;
	struct rpt_profile *prof = load(ids, NIDS, &s);
	int seen = 0;

	(void)state;
	assert_int_equal(prof->nstacks, NIDS + 1);
	for (size_t k = 0; k < prof->nstacks; k++) {
		const struct rpt_stack *st = &prof->stacks[k];
		const struct rpt_frame *f = rpt_profile__stack_frames(prof, st);
		char want[16];

		if (st->nframes == 1) { /* the root alone: the undefined id */
			assert_int_equal(st->count, NIDS + 1);
			seen |= 1 << NIDS;
			continue;
		}
		assert_int_equal(st->nframes, 2);
		assert_true(st->count >= 1 && st->count <= NIDS);
		snprintf(want, sizeof(want), "k%u", ids[st->count - 1]);
		assert_string_equal(rpt_profile__name(prof, f[1].name), want);
		seen |= 1 << (st->count - 1);
	}
	assert_int_equal(seen, (1 << (NIDS + 1)) - 1);
	rpt_session__free(s);
	rpt_profile__free(prof);
}

static long maxrss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/*
 * Ids each just within reach of the dense array's growth (twice its size
 * and 4096 past the first id): unbounded, 17 stacks would make it 2^28
 * slots (1 GiB, zeroed); the array keeps to four slots a stack and the
 * rest go to the map. Every stack is still found.
 */
static void test_far_ids(void **state)
{
	struct rpt_session *s;
	struct rpt_profile *prof;
	uint32_t far[32];
	size_t n = 0, cap = 4096;
	long rss0 = maxrss_kib();

	(void)state;
	far[n++] = 1;
	while (2 * cap + 4095 < (1u << 28)) {
		far[n++] = 1 + (uint32_t)(2 * cap + 4095);
		cap = 2 * cap + 4095 + 4096;
	}
	prof = load(far, n, &s);
	assert_int_equal(prof->nstacks, n + 1); /* UNDEFINED_ID is undefined here too */
	for (size_t k = 0; k < prof->nstacks; k++)
		assert_true(prof->stacks[k].nframes == 2 || prof->stacks[k].count == n + 1);
	assert_true(maxrss_kib() - rss0 < 64 * 1024);
	rpt_session__free(s);
	rpt_profile__free(prof);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_ids),
		cmocka_unit_test(test_far_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
