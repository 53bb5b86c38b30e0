// SPDX-License-Identifier: MIT
/*
 * test_saf_resync.c - reading on after damage (saf_reader_opts.resync):
 * every single-bit flip loses exactly the chunk holding it, a chunk cut out
 * loses only itself, garbage between chunks (across the 64 KiB scan block,
 * read from a file) loses only the garbage, two damaged chunks two, and
 * planted headers cannot make the scan quadratic. Every test runs twice:
 * on the caller's thread, then with opts.prefetch (the next chunk checked
 * on a second thread), which must not change a record, error or message;
 * so must not a chunk of many frames or records the checksum passes.
 */
#include <fcntl.h>
#include <time.h>

#include "saf_test.h"
#include "sa_cmocka.h"

static bool rs_prefetch; /* the second run: opts.prefetch */

/* Records of one read, with the chunk each came from. */
struct rs_read {
	struct saf_buf recs;
	uint64_t chunk_off[64];
	size_t rec_end[64]; /* recs.len after the last record of that chunk */
	size_t nchunks;
	int errors, last_err;
	char first_msg[256];
	struct saf_file_info info;
};

static struct saf_reader *rs_open(const uint8_t *buf, size_t len, bool resync, bool as_file,
				  int *fd)
{
	struct saf_reader_opts o = {.sz = sizeof(o), .resync = resync, .prefetch = rs_prefetch};
	char path[64];

	*fd = -1;
	if (!as_file)
		return saf_reader__open_mem(buf, len, &o);
	*fd = memfd_create("damaged", 0);
	assert_true(*fd >= 0);
	assert_int_equal(write(*fd, buf, len), (ssize_t)len);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", *fd);
	return saf_reader__open(path, &o);
}

static void rs_read(const uint8_t *buf, size_t len, bool resync, bool as_file, struct rs_read *t)
{
	struct saf_record rec;
	uint64_t off, prev = UINT64_MAX;
	int ret, fd, calls = 0;
	struct saf_reader *r = rs_open(buf, len, resync, as_file, &fd);

	memset(t, 0, sizeof(*t));
	assert_non_null(r);
	while ((ret = saf_reader__next(r, &rec)) != 0) {
		assert_true(++calls < 100000); /* it ends */
		if (ret < 0) {
			if (!t->errors++)
				snprintf(t->first_msg, sizeof(t->first_msg), "%s",
					 saf_reader__errmsg(r));
			t->last_err = ret;
			if (!resync)
				break;
			continue;
		}
		saf_reader__chunk(r, NULL, &off);
		if (off != prev) {
			assert_true(t->nchunks < 64);
			t->chunk_off[t->nchunks++] = off;
			prev = off;
		}
		assert_int_equal(saf_rec_encode(&t->recs, &rec), 0);
		t->rec_end[t->nchunks - 1] = t->recs.len;
	}
	t->info = *saf_reader__info(r);
	saf_reader__free(r);
	if (fd >= 0)
		close(fd);
}

/* The records of @full without those of its chunk @k. */
static void without_chunk(const struct rs_read *full, size_t k, struct saf_buf *out)
{
	size_t from = k ? full->rec_end[k - 1] : 0;

	out->len = 0;
	assert_int_equal(saf_buf_reserve(out, full->recs.len), 0);
	memcpy(out->p, full->recs.p, from);
	memcpy(out->p + from, full->recs.p + full->rec_end[k], full->recs.len - full->rec_end[k]);
	out->len = full->recs.len - (full->rec_end[k] - from);
}

/* Index of the chunk of @full holding byte @i; every chunk has records. */
static size_t chunk_at(const struct rs_read *full, size_t i)
{
	size_t k = 0;

	while (k + 1 < full->nchunks && full->chunk_off[k + 1] <= i)
		k++;
	return k;
}

static void test_bitflip_loses_one_chunk(void **state)
{
	size_t len, i, k, end;
	uint8_t *buf = tst_sample(64, &len);
	struct saf_buf want = {0};
	struct rs_read full, t;
	int bit, checked = 0;

	(void)state;
	rs_read(buf, len, true, false, &full);
	assert_int_equal(full.errors, 0);
	assert_true(full.info.finished && full.nchunks >= 5 && full.nchunks == full.info.chunks);
	for (i = SAF_FILE_HEADER_SIZE; i < len; i++) {
		k = chunk_at(&full, i);
		end = k + 1 < full.nchunks ? full.chunk_off[k + 1] : len;
		without_chunk(&full, k, &want);
		for (bit = 0; bit < 8; bit++) {
			buf[i] ^= (uint8_t)(1 << bit);
			rs_read(buf, len, true, (i + bit) % 16 == 0, &t);
			buf[i] ^= (uint8_t)(1 << bit);
			assert_int_equal(t.errors, 1);
			assert_int_equal(t.recs.len, want.len);
			assert_memory_equal(t.recs.p, want.p, want.len);
			assert_int_equal(t.info.damage_count, 1);
			assert_int_equal(t.info.dropped_chunks, 1);
			assert_int_equal(t.info.dropped_bytes, end - full.chunk_off[k]);
			assert_int_equal(t.info.finished, end < len);
			if (end < len)
				assert_non_null(strstr(t.first_msg, "chunks dropped, resumed at"));
			else
				assert_non_null(strstr(t.first_msg, "bytes dropped"));
			saf_buf_release(&t.recs);
			checked++;
		}
	}
	print_message("# %d bit flips: each lost its own chunk only (%zu chunks)\n", checked,
		      full.nchunks);
	saf_buf_release(&want);
	saf_buf_release(&full.recs);
	free(buf);
}

static void test_chunk_cut_out(void **state)
{
	size_t len, k = 2, n;
	uint8_t *buf = tst_sample(64, &len), *c = malloc(len);
	struct saf_buf want = {0};
	struct rs_read full, t;

	(void)state;
	rs_read(buf, len, true, false, &full);
	n = full.chunk_off[k + 1] - full.chunk_off[k];
	memcpy(c, buf, full.chunk_off[k]);
	memcpy(c + full.chunk_off[k], buf + full.chunk_off[k + 1], len - full.chunk_off[k + 1]);
	rs_read(c, len - n, false, false, &t);
	assert_int_equal(t.last_err, -EBADMSG);
	assert_non_null(strstr(t.first_msg, "has sequence number 3"));
	assert_int_equal(t.recs.len, full.rec_end[k - 1]);
	saf_buf_release(&t.recs);
	rs_read(c, len - n, true, false, &t);
	without_chunk(&full, k, &want);
	assert_int_equal(t.errors, 1);
	assert_int_equal(t.recs.len, want.len);
	assert_memory_equal(t.recs.p, want.p, want.len);
	assert_int_equal(t.info.dropped_bytes, 0);
	assert_int_equal(t.info.dropped_chunks, 1);
	assert_true(t.info.finished);
	saf_buf_release(&t.recs);
	saf_buf_release(&want);
	saf_buf_release(&full.recs);
	free(c);
	free(buf);
}

/* Garbage between chunks, longer than the scan block, with a fake header in it. */
static void test_garbage_between_chunks(void **state)
{
	size_t len, g = 200000, at;
	uint8_t *buf = tst_sample(64, &len), *c = malloc(len + g);
	struct rs_read full, t;
	int as_file;

	(void)state;
	rs_read(buf, len, true, false, &full);
	at = full.chunk_off[3];
	memcpy(c, buf, at);
	for (size_t i = 0; i < g; i++)
		c[at + i] = (uint8_t)(i * 2654435761u >> 13);
	/* a plausible header (lengths fit, seq ahead) whose checksum is wrong */
	memcpy(c + at + 70000, buf + at, SAF_CHUNK_HEADER_SIZE);
	c[at + 70000 + 20] ^= 1;
	memcpy(c + at + g, buf + at, len - at);
	for (as_file = 0; as_file < 2; as_file++) {
		rs_read(c, len + g, true, as_file, &t);
		assert_int_equal(t.errors, 1);
		assert_int_equal(t.recs.len, full.recs.len);
		assert_memory_equal(t.recs.p, full.recs.p, full.recs.len);
		assert_int_equal(t.info.dropped_bytes, g);
		assert_int_equal(t.info.dropped_chunks, 0);
		assert_true(t.info.finished);
		saf_buf_release(&t.recs);
	}
	saf_buf_release(&full.recs);
	free(c);
	free(buf);
}

static void test_two_damaged_chunks(void **state)
{
	size_t len;
	uint8_t *buf = tst_sample(64, &len);
	struct saf_buf want = {0}, want2 = {0};
	struct rs_read full, part, t;

	(void)state;
	rs_read(buf, len, true, false, &full);
	assert_true(full.nchunks >= 6);
	buf[full.chunk_off[1] + 30] ^= 4;
	buf[full.chunk_off[4] + 2] ^= 4; /* the type field: the checksum catches it */
	rs_read(buf, len, true, false, &t);
	assert_int_equal(t.errors, 2);
	assert_int_equal(t.info.damage_count, 2);
	assert_int_equal(t.info.dropped_chunks, 2);
	without_chunk(&full, 4, &want);
	/* chunk 1 out of what is left: rebuild the index without chunk 4 */
	part = full;
	part.recs = want;
	for (size_t k = 4; k + 1 < full.nchunks; k++)
		part.rec_end[k] = full.rec_end[k + 1] - (full.rec_end[4] - full.rec_end[3]);
	part.nchunks--;
	without_chunk(&part, 1, &want2);
	assert_int_equal(t.recs.len, want2.len);
	assert_memory_equal(t.recs.p, want2.p, want2.len);
	saf_buf_release(&t.recs);
	saf_buf_release(&want);
	saf_buf_release(&want2);
	saf_buf_release(&full.recs);
	free(buf);
}

/*
 * A header that fits, planted every 24 bytes over 2 MiB, each claiming a
 * 1 MiB payload with a wrong checksum: without the scan's budget this is
 * 43,000 checksums of 1 MiB; with it the read gives up in milliseconds.
 */
static void test_planted_headers_bounded(void **state)
{
	size_t n = 2u << 20, i;
	struct saf_buf b = {0};
	uint8_t h[SAF_CHUNK_HEADER_SIZE] = {0};
	struct timespec t0, t1;
	struct rs_read t;

	(void)state;
	tst_put_header(&b, 1, 2, SAF_FILE_HEADER_SIZE);
	saf_put_le32(h, SAF_CHUNK_SAMPLES);
	saf_put_le16(h + 4, SAF_CHUNK_HEADER_SIZE);
	saf_put_le32(h + 8, 1u << 20);
	saf_put_le32(h + 12, 1u << 20);
	saf_put_le32(h + 16, 5);
	assert_int_equal(saf_buf_reserve(&b, n), 0);
	for (i = 0; i + sizeof(h) <= n; i += sizeof(h))
		memcpy(b.p + b.len + i, h, sizeof(h));
	b.len += i;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rs_read(b.p, b.len, true, false, &t);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(t.errors, 1);
	assert_int_equal(t.recs.len, 0);
	assert_non_null(strstr(t.first_msg, "too many false chunk headers"));
	print_message("# planted headers: gave up after %.3f s\n",
		      (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	assert_true(t1.tv_sec - t0.tv_sec < 5);
	saf_buf_release(&t.recs);
	saf_buf_release(&b);
}

/* Read @buf on one thread and prefetching: the same records, errors and message. */
static void same_both_ways(const uint8_t *buf, size_t len, bool resync)
{
	struct rs_read one, two;

	rs_prefetch = false;
	rs_read(buf, len, resync, false, &one);
	rs_prefetch = true;
	rs_read(buf, len, resync, true, &two);
	assert_int_equal(two.errors, one.errors);
	assert_int_equal(two.last_err, one.last_err);
	assert_string_equal(two.first_msg, one.first_msg);
	assert_int_equal(two.nchunks, one.nchunks);
	assert_int_equal(two.recs.len, one.recs.len);
	assert_memory_equal(two.recs.p, one.recs.p, one.recs.len);
	saf_buf_release(&one.recs);
	saf_buf_release(&two.recs);
}

/*
 * The prefetch thread validates a chunk's records as it decodes them, and
 * grows its frame buffer (moving the frames records decoded before point
 * at) when a chunk holds many: 3,000 stacks of 100 one-byte frames in one
 * 300 KB chunk, between two chunks of the sample.
 */
static void test_prefetch_deep_chunk(void **state)
{
	static uint64_t ips[100];
	struct saf_record st = {.kind = SAF_REC_STACK, .stack = {0, SAF_STACK_USER, 100, ips}};
	struct saf_writer_opts o = {.sz = sizeof(o), .chunk_target = 1u << 20};
	struct saf_meta m = tst_meta();
	struct saf_end end = {3000, 0, 0, 0, 0};
	struct saf_writer *w;
	uint8_t *buf;
	size_t len;
	int fd = memfd_create("deep", 0);

	(void)state;
	for (size_t i = 0; i < 100; i++)
		ips[i] = 0x401000 + i; /* deltas of 1: one byte each */
	assert_true(fd >= 0);
	w = saf_writer__open_fd(fd, &o);
	assert_non_null(w);
	assert_int_equal(saf_writer__meta(w, &m), 0);
	for (uint32_t id = 1; id <= 3000; id++) {
		st.stack.id = id;
		assert_int_equal(saf_writer__add(w, &st), 0);
	}
	assert_int_equal(saf_writer__finish(w, &end), 0);
	saf_writer__free(w);
	buf = tst_slurp(fd, &len);
	close(fd);
	same_both_ways(buf, len, false);
	free(buf);
}

/*
 * Records the chunk checksum does not catch (the writer's own mistakes):
 * refused with the same error and message whether or not the chunk was
 * prefetched, a USTACK_SPARSE's runs (checked once per chunk) included.
 */
static void test_prefetch_bad_records(void **state)
{
	static const uint8_t w1[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	static const uint8_t deep[] = {6, SAF_REC_STACK, 1, 0, 0x80, 0x20, 0};
	static const uint8_t over[] = {6, SAF_REC_COMM, 1, 1, 1, 0x88, 0x27};
	static const uint8_t runaway[] = {0x28, SAF_REC_EXIT, 1};
	struct saf_record u = {.kind = SAF_REC_USTACK_SPARSE};
	struct saf_buf rec = {0}, b = {0};
	uint8_t runs[32];
	size_t n = saf_urun__put(runs, 24, w1, sizeof(w1));
	const struct {
		const uint8_t *p;
		size_t len;
	} bodies[] = {{deep, sizeof(deep)}, {over, sizeof(over)}, {runaway, sizeof(runaway)}};

	(void)state;
	u.ustack = (struct saf_ustack){.pid = 7, .tid = 8, .count = 2, .runs = {runs, (uint32_t)n}};
	assert_int_equal(saf_rec_encode(&rec, &u), 0);
	rec.p[rec.len - 9] = 9; /* the run's length: 9 bytes, 8 present */
	for (size_t i = 0; i <= sizeof(bodies) / sizeof(bodies[0]); i++) {
		bool last = i == sizeof(bodies) / sizeof(bodies[0]);

		b.len = 0;
		tst_put_header(&b, 1, 0, SAF_FILE_HEADER_SIZE);
		tst_put_chunk(&b, SAF_CHUNK_STACKS, 0, deep + 1, 0, 0,
			      0); /* an empty chunk first */
		tst_put_chunk(&b, SAF_CHUNK_STACKS, 0, last ? rec.p : bodies[i].p,
			      (uint32_t)(last ? rec.len : bodies[i].len),
			      (uint32_t)(last ? rec.len : bodies[i].len), 1);
		same_both_ways(b.p, b.len, false);
		same_both_ways(b.p, b.len, true);
	}
	saf_buf_release(&rec);
	saf_buf_release(&b);
}

/*
 * A record's missing strings still cost a NUL each when decoded: 4,096
 * META records of their kind byte alone (2 bytes of the chunk, 8 empty
 * strings) decode to 4x the chunk's size in strings, read the same with
 * and without prefetch (and, under ASan, within the prefetch's buffer).
 */
static void test_prefetch_tiny_records(void **state)
{
	struct saf_buf b = {0};
	uint8_t *body = malloc(8192);

	(void)state;
	assert_non_null(body);
	for (size_t i = 0; i < 8192; i += 2) {
		body[i] = 1;
		body[i + 1] = SAF_REC_META;
	}
	tst_put_header(&b, 1, 0, SAF_FILE_HEADER_SIZE);
	tst_put_chunk(&b, SAF_CHUNK_STACKS, 0, body, 8192, 8192, 0);
	same_both_ways(b.p, b.len, false);
	free(body);
	saf_buf_release(&b);
}

static int on_one_thread(void **state)
{
	(void)state;
	rs_prefetch = false;
	return 0;
}

static int with_prefetch(void **state)
{
	(void)state;
	rs_prefetch = true;
	return 0;
}

/* Each case twice in one group (one TAP plan): on one thread, then prefetching. */
#define RS_BOTH(f)                                                                                 \
	{#f, f, on_one_thread, NULL, NULL},                                                        \
	{                                                                                          \
#f " (prefetch)", f, with_prefetch, NULL, NULL                                     \
	}

int main(void)
{
	const struct CMUnitTest tests[] = {
		RS_BOTH(test_bitflip_loses_one_chunk),
		RS_BOTH(test_chunk_cut_out),
		RS_BOTH(test_garbage_between_chunks),
		RS_BOTH(test_two_damaged_chunks),
		RS_BOTH(test_planted_headers_bounded),
		cmocka_unit_test(test_prefetch_deep_chunk),
		cmocka_unit_test(test_prefetch_bad_records),
		cmocka_unit_test(test_prefetch_tiny_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
