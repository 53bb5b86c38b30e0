// SPDX-License-Identifier: MIT
/*
 * test_saf_stream.c - saf_reader__open_stream() against saf_reader__open_mem()
 * on the same bytes, handed over in pieces of 1 byte to 200 KiB (and an
 * EINTR): the same records, returns, messages and file facts, on whole,
 * concatenated, cut, damaged and over-bound recordings, with and without
 * prefetch ("Reading a stream" in docs/format.md); a read error ends it.
 */
#include "saf_test.h"
#include "sa_cmocka.h"

struct pieces {
	const uint8_t *buf;
	size_t len, pos, k;
	size_t fail_at; /* EIO once this many bytes were given; 0: never */
};

static ssize_t piece_read(void *cookie, void *buf, size_t len)
{
	static const size_t sizes[] = {1, 5, 4096, 3, 200000, 24, 65536, 7};
	struct pieces *p = cookie;
	size_t n = sizes[p->k++ % (sizeof(sizes) / sizeof(sizes[0]))];

	if (p->k % 11 == 0) {
		errno = EINTR;
		return -1;
	}
	if (p->fail_at && p->pos >= p->fail_at) {
		errno = EIO;
		return -1;
	}
	n = n < len ? n : len;
	n = n < p->len - p->pos ? n : p->len - p->pos;
	if (p->fail_at)
		n = n < p->fail_at - p->pos ? n : p->fail_at - p->pos;
	memcpy(buf, p->buf + p->pos, n);
	p->pos += n;
	return (ssize_t)n;
}

/* What a reader gave: every return, record (encoded) and message, then its facts. */
struct trace {
	struct saf_buf log;
	struct saf_file_info info;
	int last;
	size_t recs;
	char msg[256]; /* the last message */
};

static void log_str(struct trace *t, const char *s)
{
	if (s[0])
		snprintf(t->msg, sizeof(t->msg), "%s", s);
	size_t n = strlen(s) + 1;

	assert_int_equal(saf_buf_reserve(&t->log, n), 0);
	memcpy(t->log.p + t->log.len, s, n);
	t->log.len += n;
}

static void run(const uint8_t *buf, size_t len, bool stream, const struct saf_reader_opts *o,
		struct trace *t)
{
	struct pieces p = {.buf = buf, .len = len};
	struct saf_reader *r = stream ? saf_reader__open_stream(piece_read, &p, o)
				      : saf_reader__open_mem(buf, len, o);
	struct saf_record rec;
	char line[300];
	int ret, calls = 0;

	memset(t, 0, sizeof(*t));
	if (!r) {
		snprintf(line, sizeof(line), "open: %d %s", errno, o->errbuf);
		log_str(t, line);
		t->info.stream = stream;
		return;
	}
	while ((ret = saf_reader__next(r, &rec)) != 0) {
		assert_true(++calls < 100000);
		snprintf(line, sizeof(line), "%d %s", ret, ret == 1 ? "" : saf_reader__errmsg(r));
		log_str(t, line);
		if (ret == 1)
			assert_int_equal(saf_rec_encode(&t->log, &rec), 0);
		t->recs += ret == 1;
		t->last = ret;
		if (ret == -EFBIG || ret == -EIO)
			break;
	}
	log_str(t, saf_reader__errmsg(r));
	t->info = *saf_reader__info(r);
	saf_reader__free(r);
}

/* @buf read from memory and as a stream, in each mode: the same. */
static void same(const uint8_t *buf, size_t len, uint32_t max_expand, uint64_t floor)
{
	for (int m = 0; m < 4; m++) {
		char eb[256] = "";
		struct saf_reader_opts o = {.sz = sizeof(o),
					    .errbuf = eb,
					    .errbuf_sz = sizeof(eb),
					    .resync = true,
					    .prefetch = m & 1,
					    .concat = m & 2,
					    .max_expand = max_expand,
					    .expand_floor = floor};
		struct trace a, b;

		run(buf, len, false, &o, &a);
		run(buf, len, true, &o, &b);
		if (a.log.len != b.log.len || memcmp(a.log.p, b.log.p, a.log.len))
			fail_msg("mode %d, %zu bytes: the stream read differently: %s / %s", m, len,
				 a.msg, b.msg);
		assert_true(b.info.stream);
		b.info.stream = false;
		assert_memory_equal(&a.info, &b.info, sizeof(a.info));
		saf_buf_release(&a.log);
		saf_buf_release(&b.log);
	}
}

static void test_whole_and_concat(void **state)
{
	size_t len;
	uint8_t *s = tst_sample(64, &len), *two = malloc(2 * len + 100);

	(void)state;
	assert_non_null(two);
	same(s, len, 0, 0);
	memcpy(two, s, len);
	memcpy(two + len, s, len);
	same(two, 2 * len, 0, 0);
	memset(two + len, 0x5a, 100); /* junk after END */
	same(two, len + 100, 0, 0);
	free(two);
	free(s);
}

/* Every cut and every damaged byte of a chunk header (lengths, seq, crc) and payload. */
static void test_cut_and_damaged(void **state)
{
	size_t len;
	uint8_t *s = tst_sample(64, &len), *d = malloc(len);

	(void)state;
	assert_non_null(d);
	for (size_t cut = 0; cut < len; cut += 7)
		same(s, cut, 0, 0);
	for (size_t at = 24; at < len; at += 5) {
		memcpy(d, s, len);
		d[at] ^= 0x41;
		same(d, len, 0, 0);
	}
	free(d);
	free(s);
}

/*
 * The whole-file bound: on a stream, taken on the bytes up to the chunk
 * read; with the floor alone, the same chunk is refused.
 */
static void test_bound(void **state)
{
	size_t len;
	uint8_t *s = tst_sample(64, &len);
	struct saf_reader_opts o = {.sz = sizeof(o), .resync = true, .expand_floor = 200};
	struct trace a, b;

	(void)state;
	run(s, len, false, &o, &a);
	run(s, len, true, &o, &b);
	assert_int_equal(a.last, -EFBIG);
	assert_int_equal(b.last, -EFBIG);
	assert_int_equal(a.recs, b.recs);
	assert_true(a.recs > 0);
	assert_non_null(strstr(a.msg, "-byte file"));
	assert_non_null(strstr(b.msg, "the bound for the first "));
	assert_non_null(strstr(b.msg, " bytes of a stream"));
	saf_buf_release(&a.log);
	saf_buf_release(&b.log);
	/* 2 times what was read so far: refused where the whole file's 2 times is not */
	o.expand_floor = 0;
	o.max_expand = 2;
	run(s, len, false, &o, &a);
	run(s, len, true, &o, &b);
	assert_true(b.recs <= a.recs);
	saf_buf_release(&a.log);
	saf_buf_release(&b.log);
	free(s);
}

/* A read error ends the stream: said, no crash, the records before kept. */
static void test_read_error(void **state)
{
	size_t len, recs = 0;
	uint8_t *s = tst_sample(64, &len);
	struct pieces p = {.buf = s, .len = len, .fail_at = len / 2};
	struct saf_reader_opts o = {.sz = sizeof(o), .resync = true};
	struct saf_reader *r = saf_reader__open_stream(piece_read, &p, &o);
	struct saf_record rec;
	int ret, err = 0;

	(void)state;
	assert_non_null(r);
	while ((ret = saf_reader__next(r, &rec)) != 0 && !err)
		if (ret == 1)
			recs++;
		else
			err = ret;
	assert_int_equal(err, -EIO);
	assert_true(recs > 0);
	assert_non_null(strstr(saf_reader__errmsg(r), "read error"));
	saf_reader__free(r);
	free(s);
	assert_null(saf_reader__open_stream(NULL, NULL, NULL));
	assert_int_equal(errno, EINVAL);
}

SA_TEST_MAIN(test_whole_and_concat, test_cut_and_damaged, test_bound, test_read_error)
