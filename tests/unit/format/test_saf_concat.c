// SPDX-License-Identifier: MIT
/*
 * test_saf_concat.c - the reader on `cat a.sa b.sa` (opts.concat): every
 * recording is read, each after SAF_READER_NEW_RECORDING, also when the
 * first ends without END or in a cut chunk; without the option the rest is
 * ignored and said. And the whole-file bound on decompressed content
 * (opts.max_expand): -EFBIG, every record before it kept. Each test runs on
 * the caller's thread and with opts.prefetch, from memory and from a file.
 */
#include <fcntl.h>

#include "saf_test.h"
#include "sa_cmocka.h"

struct cc_read {
	size_t recs, news, recs_after_new;
	int errors, last_err;
	char msg[256];
	struct saf_file_info info;
};

static void cc_read(const uint8_t *buf, size_t len, struct saf_reader_opts *o, bool as_file,
		    struct cc_read *t)
{
	struct saf_reader *r;
	struct saf_record rec;
	char path[64];
	int ret, fd = -1, calls = 0;

	memset(t, 0, sizeof(*t));
	if (as_file) {
		fd = memfd_create("concat", 0);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, buf, len), (ssize_t)len);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		r = saf_reader__open(path, o);
	} else {
		r = saf_reader__open_mem(buf, len, o);
	}
	assert_non_null(r);
	while ((ret = saf_reader__next(r, &rec)) != 0) {
		assert_true(++calls < 100000);
		if (ret == SAF_READER_NEW_RECORDING) {
			t->news++;
			snprintf(t->msg, sizeof(t->msg), "%s", saf_reader__errmsg(r));
			continue;
		}
		if (ret < 0) {
			t->errors++;
			t->last_err = ret;
			snprintf(t->msg, sizeof(t->msg), "%s", saf_reader__errmsg(r));
			if (ret == -EFBIG)
				break;
			continue;
		}
		t->recs++;
		t->recs_after_new += t->news > 0;
	}
	if (!t->errors && !t->news)
		snprintf(t->msg, sizeof(t->msg), "%s", saf_reader__errmsg(r));
	t->info = *saf_reader__info(r);
	saf_reader__free(r);
	if (fd >= 0)
		close(fd);
}

/* Records of one sample file read alone. */
static size_t records_of(const uint8_t *buf, size_t len)
{
	struct saf_reader_opts o = {.sz = sizeof(o)};
	struct cc_read t;

	cc_read(buf, len, &o, false, &t);
	assert_int_equal(t.errors, 0);
	return t.recs;
}

/* @a then @b in one new buffer (freed by the caller). */
static uint8_t *cat2(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	uint8_t *p = malloc(alen + blen);

	assert_non_null(p);
	memcpy(p, a, alen);
	memcpy(p + alen, b, blen);
	return p;
}

/* The end of the chunk that holds byte @off of @buf (a chunk boundary). */
static size_t chunk_end_before(const uint8_t *buf, size_t len, size_t off)
{
	size_t at = saf_get_le16(buf + 12), last = at;

	while (at + 24 <= len && at < off) {
		last = at;
		at += saf_get_le16(buf + at + 4) + saf_get_le32(buf + at + 8);
	}
	return last;
}

static void each_mode(void (*fn)(bool prefetch, bool as_file))
{
	for (int m = 0; m < 4; m++)
		fn(m & 1, m & 2);
}

static void both_read(bool prefetch, bool as_file)
{
	struct saf_reader_opts o = {.sz = sizeof(o), .resync = true, .prefetch = prefetch,
				    .concat = true};
	size_t len, one;
	uint8_t *s = tst_sample(0, &len), *two = cat2(s, len, s, len);
	struct cc_read t;

	one = records_of(s, len);
	cc_read(two, 2 * len, &o, as_file, &t);
	assert_int_equal(t.errors, 0);
	assert_int_equal(t.news, 1);
	assert_int_equal(t.recs, 2 * one);
	assert_int_equal(t.recs_after_new, one);
	assert_int_equal(t.info.recordings, 2);
	assert_int_equal(t.info.recording_offset, len);
	assert_true(t.info.finished);
	o.concat = false; /* the old rule: said, not read */
	cc_read(two, 2 * len, &o, as_file, &t);
	assert_int_equal(t.news, 0);
	assert_int_equal(t.recs, one);
	assert_non_null(strstr(t.msg, "bytes after the end chunk ignored"));
	free(two);
	free(s);
}

static void test_concat_both_read(void **state)
{
	(void)state;
	each_mode(both_read);
}

/* A first recording killed at a chunk boundary (no END), then a whole one. */
static void unfinished_first(bool prefetch, bool as_file)
{
	struct saf_reader_opts o = {.sz = sizeof(o), .resync = true, .prefetch = prefetch,
				    .concat = true};
	size_t len, cut;
	uint8_t *s = tst_sample(0, &len), *two;
	struct cc_read t;

	cut = chunk_end_before(s, len, len - 1); /* before END */
	two = cat2(s, cut, s, len);
	cc_read(two, cut + len, &o, as_file, &t);
	assert_int_equal(t.errors, 0);
	assert_int_equal(t.news, 1);
	assert_int_equal(t.recs_after_new, records_of(s, len));
	assert_non_null(strstr(t.msg, "no end chunk"));
	free(two);
	free(s);
}

static void test_concat_unfinished_first(void **state)
{
	(void)state;
	each_mode(unfinished_first);
}

/* A first recording cut inside a chunk: its tail is damage, the second is read whole. */
static void cut_first(bool prefetch, bool as_file)
{
	struct saf_reader_opts o = {.sz = sizeof(o), .resync = true, .prefetch = prefetch,
				    .concat = true};
	size_t len, cut;
	uint8_t *s = tst_sample(64, &len), *two;
	struct cc_read t;

	cut = chunk_end_before(s, len, len / 2) + 30; /* 30 bytes into a chunk */
	two = cat2(s, cut, s, len);
	cc_read(two, cut + len, &o, as_file, &t);
	assert_int_equal(t.errors, 1);
	assert_int_equal(t.last_err, -EBADMSG);
	assert_int_equal(t.news, 1);
	assert_int_equal(t.recs_after_new, records_of(s, len));
	assert_true(t.info.finished);
	assert_int_equal(t.info.dropped_bytes, 30);
	free(two);
	free(s);
}

static void test_concat_cut_first(void **state)
{
	(void)state;
	each_mode(cut_first);
}

/* opts.max_expand: reading stops at the chunk past the bound, for good. */
static void expand_bound(bool prefetch, bool as_file)
{
	struct saf_reader_opts o = {.sz = sizeof(o), .resync = true, .prefetch = prefetch,
				    .expand_floor = 200};
	size_t len;
	uint8_t *s = tst_sample(64, &len);
	struct cc_read t;

	cc_read(s, len, &o, as_file, &t);
	assert_int_equal(t.last_err, -EFBIG);
	assert_true(t.recs > 0 && t.recs < records_of(s, len));
	assert_true(t.info.content_bytes <= 200);
	assert_true(t.info.damaged);
	assert_non_null(strstr(t.msg, "the chunks expand past"));
	o.max_expand = 1000; /* within the bound: all of it */
	cc_read(s, len, &o, as_file, &t);
	assert_int_equal(t.errors, 0);
	assert_int_equal(t.recs, records_of(s, len));
	free(s);
}

static void test_expand_bound(void **state)
{
	(void)state;
	each_mode(expand_bound);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concat_both_read),
		cmocka_unit_test(test_concat_unfinished_first),
		cmocka_unit_test(test_concat_cut_first),
		cmocka_unit_test(test_expand_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
