// SPDX-License-Identifier: MIT
/*
 * test_saf_reader.c - the reader against damage: a cut at every byte, every
 * single-bit flip, version rules, forward compatibility, lengths declared
 * past the file, failed allocations, and the known-bad files of
 * tests/data/bad with their expected messages.
 */
#include <dirent.h>
#include <fcntl.h>

#include "saf_test.h"
#include "sa_cmocka.h"

/* Encoded records of every complete chunk in [0, end), in file order. */
static size_t prefix_len(const struct tst_read *full, const uint8_t *buf, size_t len,
			 size_t end)
{
	struct saf_reader *r = saf_reader__open_mem(buf, len, NULL);
	struct saf_record rec;
	struct saf_buf b = { 0 };
	uint64_t off, chunk_end = 0;
	size_t keep = 0;

	(void)full;
	assert_non_null(r);
	while (saf_reader__next(r, &rec) == 1) {
		saf_reader__chunk(r, NULL, &off);
		chunk_end = saf_reader__info(r)->good_bytes;
		if (chunk_end > end)
			break;
		assert_int_equal(saf_rec_encode(&b, &rec), 0);
		keep = b.len;
	}
	saf_reader__free(r);
	saf_buf_release(&b);
	return keep;
}

static void test_truncate_every_offset(void **state)
{
	size_t len, cut;
	uint8_t *buf = tst_sample(0, &len);
	struct tst_read full, t;

	(void)state;
	tst_read_mem(buf, len, &full);
	assert_int_equal(full.ret, 0);
	for (cut = 0; cut < len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);

		memcpy(copy, buf, cut);
		tst_read_mem(copy, cut, &t);
		assert_int_equal(t.recs.len, cut < SAF_FILE_HEADER_SIZE ? 0 :
					     prefix_len(&full, buf, len, cut));
		assert_memory_equal(t.recs.p, full.recs.p, t.recs.len);
		assert_false(t.info.finished);
		assert_true(!strncmp(t.msg, "offset ", 7));
		if (cut < SAF_FILE_HEADER_SIZE)
			assert_string_equal(t.msg, "offset 0: file too short for the 24-byte header");
		else if (t.ret == 0)
			assert_non_null(strstr(t.msg, "no end chunk; the recording did not finish cleanly"));
		else
			assert_true(t.ret == -EBADMSG && strstr(t.msg, "bytes dropped"));
		tst_read_free(&t);
		free(copy);
	}
	tst_read_free(&full);
	free(buf);
}

/* The offset an error message names, or -1. */
static long msg_offset(const char *msg)
{
	return strncmp(msg, "offset ", 7) ? -1 : strtol(msg + 7, NULL, 10);
}

static void test_bitflip_every_bit(void **state)
{
	size_t len, i;
	uint8_t *buf = tst_sample(0, &len);
	struct tst_read full, t;
	int bit, same = 0, errors = 0;

	(void)state;
	tst_read_mem(buf, len, &full);
	assert_true(full.info.chunks >= 3);
	for (i = 0; i < len; i++) {
		for (bit = 0; bit < 8; bit++) {
			buf[i] ^= (uint8_t)(1 << bit);
			tst_read_mem(buf, len, &t);
			buf[i] ^= (uint8_t)(1 << bit);
			if (t.ret == 0 && t.info.finished) {
				assert_int_equal(t.recs.len, full.recs.len);
				assert_memory_equal(t.recs.p, full.recs.p, t.recs.len);
				same++;
			} else {
				long off = msg_offset(t.msg);

				/* The error names the chunk (or header field) holding the bit. */
				assert_true(off >= 0 && (size_t)off <= i);
				assert_true(t.ret < 0);
				assert_memory_equal(t.recs.p, full.recs.p, t.recs.len);
				errors++;
			}
			tst_read_free(&t);
		}
	}
	print_message("# %zu bits: %d errors, %d read identical\n", len * 8, errors, same);
	tst_read_free(&full);
	free(buf);
}

static void test_newer_major_refused(void **state)
{
	struct saf_buf b = { 0 };
	char eb[256];
	struct saf_reader_opts o = { .sz = sizeof(o), .errbuf = eb, .errbuf_sz = sizeof(eb) };

	(void)state;
	tst_put_header(&b, 2, 0, SAF_FILE_HEADER_SIZE);
	errno = 0;
	assert_null(saf_reader__open_mem(b.p, b.len, &o));
	assert_int_equal(errno, ENOTSUP);
	assert_string_equal(eb, "offset 8: format version 2.0 is newer than this reader (1.11); "
				"a newer sa is needed to read it");
	saf_buf_release(&b);
}

/* A 1.7 file: bigger header, a PROC with two extra fields, unknown kind and type. */
static void test_newer_minor_read(void **state)
{
	struct saf_buf b = { 0 }, c = { 0 };
	struct saf_record proc = { .kind = SAF_REC_PROC, .proc = { 5, 1, 1, 9,
		saf_str__from("x"), saf_str__from("/x") } }, rec, end = { .kind = SAF_REC_END };
	struct saf_reader *r;

	(void)state;
	tst_put_header(&b, 1, 7, 40);
	assert_int_equal(saf_rec_encode(&c, &proc), 0);
	c.p[0] += 3; /* body length (one byte either way): 3 bytes of new fields */
	assert_int_equal(saf_buf_put_varint(&c, 300), 0);
	assert_int_equal(saf_buf_put_varint(&c, 7), 0);
	assert_int_equal(saf_buf_put_varint(&c, 2), 0); /* unknown kind 99, 2 bytes */
	assert_int_equal(saf_buf_put_varint(&c, 99), 0);
	assert_int_equal(saf_buf_put_varint(&c, 1), 0);
	tst_put_chunk(&b, SAF_CHUNK_PROCS, 0, c.p, (uint32_t)c.len, (uint32_t)c.len, 0);
	tst_put_chunk(&b, 42, 0, "future", 6, 6, 1);
	c.len = 0;
	assert_int_equal(saf_rec_encode(&c, &end), 0);
	tst_put_chunk(&b, SAF_CHUNK_END, 0, c.p, (uint32_t)c.len, (uint32_t)c.len, 2);
	r = saf_reader__open_mem(b.p, b.len, NULL);
	assert_non_null(r);
	assert_int_equal(saf_reader__next(r, &rec), 1);
	assert_true(tst_rec_eq(&rec, &proc));
	assert_int_equal(saf_reader__next(r, &rec), 1);
	assert_int_equal(rec.kind, SAF_REC_END);
	assert_int_equal(saf_reader__next(r, &rec), 0);
	assert_int_equal(saf_reader__info(r)->version_minor, 7);
	assert_int_equal(saf_reader__info(r)->skipped_records, 1);
	assert_int_equal(saf_reader__info(r)->skipped_chunks, 1);
	assert_int_equal(saf_reader__info(r)->chunks, 3);
	assert_true(saf_reader__info(r)->finished);
	saf_reader__free(r);
	saf_buf_release(&b);
	saf_buf_release(&c);
}

/* An older writer's PROC without its strings: missing trailing fields read as empty. */
static void test_missing_trailing_fields(void **state)
{
	static const uint8_t body[] = { 3, SAF_REC_PROC, 5, 1 };
	struct saf_buf b = { 0 };
	struct saf_reader *r;
	struct saf_record rec;

	(void)state;
	tst_put_header(&b, 1, 0, SAF_FILE_HEADER_SIZE);
	tst_put_chunk(&b, SAF_CHUNK_PROCS, 0, body, sizeof(body), sizeof(body), 0);
	r = saf_reader__open_mem(b.p, b.len, NULL);
	assert_int_equal(saf_reader__next(r, &rec), 1);
	assert_int_equal(rec.proc.pid, 5);
	assert_int_equal(rec.proc.gen, 1);
	assert_int_equal(rec.proc.ppid, 0);
	assert_int_equal(rec.proc.comm.len, 0);
	assert_string_equal(rec.proc.exe.str, "");
	assert_int_equal(saf_reader__next(r, &rec), 0);
	assert_false(saf_reader__info(r)->finished);
	saf_reader__free(r);
	saf_buf_release(&b);
}

/*
 * Read @b both from memory and through a file; the error must be @err, and
 * no allocation may be larger than the file plus the reader's fixed-size
 * object: nothing is sized from a declared length.
 */
static void expect_refused(const struct saf_buf *b, int err, const char *why)
{
	char path[64];
	int fd = memfd_create("declared", 0), pass;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, b->p, b->len), (ssize_t)b->len);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (pass = 0; pass < 2; pass++) {
		struct saf_reader *r;
		struct saf_record rec;
		int ret;

		tst_alloc_start(0);
		r = pass ? saf_reader__open(path, NULL) : saf_reader__open_mem(b->p, b->len, NULL);
		assert_non_null(r);
		while ((ret = saf_reader__next(r, &rec)) == 1)
			;
		assert_int_equal(ret, err);
		assert_non_null(strstr(saf_reader__errmsg(r), why));
		saf_reader__free(r);
		tst_alloc_stop();
		assert_int_equal(ta.live, 0);
		if (ta.largest > b->len + 1024)
			fail_msg("%s: allocated %zu bytes for a %zu-byte file", why, ta.largest,
				 b->len);
	}
	close(fd);
}

static void chunk_with_body(struct saf_buf *b, const uint8_t *body, size_t len)
{
	b->len = 0;
	tst_put_header(b, 1, 0, SAF_FILE_HEADER_SIZE);
	tst_put_chunk(b, SAF_CHUNK_STACKS, 0, body, (uint32_t)len, (uint32_t)len, 0);
}

static void test_declared_lengths(void **state)
{
	/* body length 2^62; a string of 4000 bytes; 4096 frames; 64 counters; a 5000-byte string */
	static const uint8_t huge_body[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 6 };
	static const uint8_t long_str[] = { 6, SAF_REC_COMM, 1, 1, 1, 0xa0, 0x1f };
	static const uint8_t deep[] = { 6, SAF_REC_STACK, 1, 0, 0x80, 0x20, 0 };
	static const uint8_t counters[] = { 4, SAF_REC_LOSS, 0, 64, 1 };
	static const uint8_t over[] = { 6, SAF_REC_COMM, 1, 1, 1, 0x88, 0x27 };
	static const uint8_t garbage[] = { 0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff };
	struct saf_buf b = { 0 };

	(void)state;
	tst_put_header(&b, 1, 0, SAF_FILE_HEADER_SIZE);
	tst_put_chunk(&b, SAF_CHUNK_STACKS, SAF_CHUNK_FLAG_ZSTD, "abcd", 4, 1000, 0);
	saf_put_le32(b.p + SAF_FILE_HEADER_SIZE + 8, 0xfffffff0u); /* sizes first: rule 6 */
	expect_refused(&b, -EBADMSG, "payload size 4294967280 does not fit content size 1000");
	b.len = 0;
	tst_put_header(&b, 1, 0, SAF_FILE_HEADER_SIZE);
	tst_put_chunk(&b, SAF_CHUNK_STACKS, 0, "abcd", 4, 4, 0);
	saf_put_le32(b.p + SAF_FILE_HEADER_SIZE + 8, 1000); /* payload past the file: rule 7 */
	saf_put_le32(b.p + SAF_FILE_HEADER_SIZE + 12, 1000);
	expect_refused(&b, -EBADMSG, "chunk 0 truncated: needs 1024 bytes, 28 remain");
	b.len = 0;
	tst_put_header(&b, 1, 0, SAF_FILE_HEADER_SIZE);
	tst_put_chunk(&b, SAF_CHUNK_STACKS, SAF_CHUNK_FLAG_ZSTD, "abcd", 4, 0xffffffffu, 0);
	expect_refused(&b, -EOVERFLOW, "content size 4294967295 over the 67108864-byte limit");
	b.len = 0;
	tst_put_header(&b, 1, 0, SAF_FILE_HEADER_SIZE);
	tst_put_chunk(&b, SAF_CHUNK_STACKS, SAF_CHUNK_FLAG_ZSTD, garbage, sizeof(garbage),
		      60u << 20, 0);
	expect_refused(&b, -EBADMSG, "payload is not a zstd frame");
	chunk_with_body(&b, huge_body, sizeof(huge_body));
	expect_refused(&b, -EBADMSG, "record runs past the chunk");
	chunk_with_body(&b, long_str, sizeof(long_str));
	expect_refused(&b, -EBADMSG, "string runs past the record");
	chunk_with_body(&b, deep, sizeof(deep));
	expect_refused(&b, -EBADMSG, "stack frames run past the record");
	chunk_with_body(&b, counters, sizeof(counters));
	expect_refused(&b, -EBADMSG, "loss counters run past the record");
	chunk_with_body(&b, over, sizeof(over));
	expect_refused(&b, -EOVERFLOW, "string or build id longer than its limit");
	saf_buf_release(&b);
}

/* 16 MiB of zeros is a few hundred bytes of zstd: it decodes, the size is honest. */
static void test_highly_compressible(void **state)
{
	size_t n = 16u << 20, bound = ZSTD_compressBound(n), clen;
	uint8_t *content = calloc(1, n), *z = malloc(bound);
	struct saf_buf b = { 0 };
	struct saf_reader *r;
	struct saf_record rec;

	(void)state;
	/* one record: body length n - 4 (4-byte varint), kind 99 (unknown), zeros */
	saf_varint_put(content, n - 4);
	content[4] = 99;
	clen = ZSTD_compress(z, bound, content, n, 3);
	assert_false(ZSTD_isError(clen));
	tst_put_header(&b, 1, 0, SAF_FILE_HEADER_SIZE);
	tst_put_chunk(&b, SAF_CHUNK_USYMS, SAF_CHUNK_FLAG_ZSTD, z, (uint32_t)clen, (uint32_t)n, 0);
	r = saf_reader__open_mem(b.p, b.len, NULL);
	assert_int_equal(saf_reader__next(r, &rec), 0);
	assert_int_equal(saf_reader__info(r)->skipped_records, 1);
	assert_int_equal(saf_reader__info(r)->chunks, 1);
	saf_reader__free(r);
	saf_buf_release(&b);
	free(content);
	free(z);
}

static void test_oom_loop(void **state)
{
	size_t len;
	uint8_t *buf = tst_sample(60, &len);
	long n;
	int pass;

	(void)state;
	for (pass = 0; pass < 2; pass++) {
		char path[64];
		int fd = memfd_create("oom", 0);

		assert_int_equal(write(fd, buf, len), (ssize_t)len);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		for (n = 1;; n++) {
			struct saf_reader *r;
			struct saf_record rec;
			int ret = 0;

			tst_alloc_start(n);
			r = pass ? saf_reader__open(path, NULL) : saf_reader__open_mem(buf, len, NULL);
			if (!r)
				assert_int_equal(errno, ENOMEM);
			while (r && (ret = saf_reader__next(r, &rec)) == 1)
				;
			saf_reader__free(r);
			tst_alloc_stop();
			assert_int_equal(ta.live, 0);
			if (!ta.failed) {
				assert_int_equal(ret, 0);
				break;
			}
			if (r)
				assert_int_equal(ret, -ENOMEM);
		}
		print_message("# reader (%s): %ld allocation points failed cleanly\n",
			      pass ? "file" : "memory", n - 1);
		assert_true(n > 3);
		close(fd);
	}
	free(buf);
}

static void test_open_errors(void **state)
{
	char eb[256];
	struct saf_reader_opts o = { .sz = sizeof(o), .errbuf = eb, .errbuf_sz = sizeof(eb) };

	(void)state;
	errno = 0;
	assert_null(saf_reader__open("/nonexistent/x.sa", &o));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(eb, "cannot open"));
	assert_null(saf_reader__open_mem("", 0, &o));
	assert_int_equal(errno, EBADMSG);
	assert_string_equal(eb, "offset 0: file too short for the 24-byte header");
	saf_reader__free(NULL);
	assert_string_equal(saf_chunk_type__name(SAF_CHUNK_SAMPLES), "samples");
	assert_null(saf_chunk_type__name(42));
	assert_string_equal(saf_counter__name(SAF_CTR_LOST_USTACK), "lost_ustack");
	assert_null(saf_counter__name(0));
	assert_null(saf_counter__name(SAF_CTR__MAX_KNOWN + 1));
	assert_int_equal(saf_str__from(NULL).len, 0);
}

/* ---- tests/data/bad: each NAME.sa with NAME.expect ("stage error records\nmessage\n") ---- */

#define BAD_DIR "tests/data/bad/"

static void describe(const uint8_t *buf, size_t len, char *out, size_t sz)
{
	struct tst_read t;

	tst_read_mem(buf, len, &t);
	snprintf(out, sz, "%s %s %zu\n%s\n", t.nrecs || t.info.file_size ? "next" : "open",
		 t.ret == -ENOTSUP ? "ENOTSUP" : t.ret ? strerrorname_np(-t.ret) : "0", t.nrecs,
		 t.msg);
	tst_read_free(&t);
}

static void put_file(const char *name, const char *ext, const void *p, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), BAD_DIR "%s%s", name, ext);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, len, f), len);
	fclose(f);
}

static size_t end_chunk_offset(const uint8_t *buf, size_t len)
{
	struct saf_reader *r = saf_reader__open_mem(buf, len, NULL);
	struct saf_record rec;
	uint64_t off = 0;

	while (saf_reader__next(r, &rec) == 1)
		if (rec.kind == SAF_REC_END)
			saf_reader__chunk(r, NULL, &off);
	saf_reader__free(r);
	assert_true(off > 0);
	return (size_t)off;
}

static void bless_one(const char *name, const uint8_t *p, size_t len)
{
	char desc[512];

	describe(p, len, desc, sizeof(desc));
	put_file(name, ".sa", p, len);
	put_file(name, ".expect", desc, strlen(desc));
}

/* SAF_BLESS=1 regenerates tests/data/bad from the sample recording. */
static void bless_bad_files(void)
{
	static const uint8_t overlong[] = { 3, SAF_REC_EXIT, 0x81, 0x00 };
	static const uint8_t exit_rec[] = { 3, SAF_REC_EXIT, 0x01, 0x02 };
	size_t len;
	uint8_t *buf = tst_sample(0, &len), *c = malloc(len + 8);
	struct saf_buf b = { 0 };

	memcpy(c, buf, len);
	c[0] = 'X';
	bless_one("bad_magic", c, len);
	c[0] = buf[0];
	c[10] ^= 1;
	bless_one("header_crc", c, len);
	c[10] = buf[10];
	c[len / 2] ^= 0x10;
	bless_one("chunk_crc", c, len);
	c[len / 2] = buf[len / 2];
	bless_one("truncated", c, len * 2 / 3);
	bless_one("no_end", c, end_chunk_offset(buf, len));
	memcpy(c + len, "junk", 4);
	bless_one("trailing_junk", c, len + 4);
	tst_put_header(&b, 2, 1, SAF_FILE_HEADER_SIZE);
	bless_one("newer_major", b.p, b.len);
	b.len = 0;
	tst_put_header(&b, 1, 0, SAF_FILE_HEADER_SIZE);
	tst_put_chunk(&b, SAF_CHUNK_PROCS, 0, exit_rec, sizeof(exit_rec), sizeof(exit_rec), 0);
	tst_put_chunk(&b, SAF_CHUNK_PROCS, 0, overlong, sizeof(overlong), sizeof(overlong), 1);
	bless_one("overlong_varint", b.p, b.len);
	b.len -= SAF_CHUNK_HEADER_SIZE + sizeof(overlong);
	tst_put_chunk(&b, SAF_CHUNK_PROCS, 0, exit_rec, sizeof(exit_rec), sizeof(exit_rec), 0);
	bless_one("seq_repeated", b.p, b.len);
	b.len = 0;
	tst_put_header(&b, 1, 0, SAF_FILE_HEADER_SIZE);
	tst_put_chunk(&b, SAF_CHUNK_STACKS, SAF_CHUNK_FLAG_ZSTD, "zz", 2, 65u << 20, 0);
	bless_one("content_over_limit", b.p, b.len);
	saf_buf_release(&b);
	free(c);
	free(buf);
}

static void test_bad_files(void **state)
{
	DIR *d;
	struct dirent *e;
	int checked = 0;

	(void)state;
	if (getenv("SAF_BLESS"))
		bless_bad_files();
	d = opendir(BAD_DIR);
	if (!d)
		fail_msg("run from the top of the tree: cannot open " BAD_DIR);
	while ((e = readdir(d))) {
		char path[512], want[512] = "", got[512];
		size_t n = strlen(e->d_name), len;
		FILE *f;
		int fd;
		uint8_t *buf;

		if (n < 4 || strcmp(e->d_name + n - 3, ".sa"))
			continue;
		snprintf(path, sizeof(path), BAD_DIR "%.*s.expect", (int)(n - 3), e->d_name);
		f = fopen(path, "r");
		assert_non_null(f);
		want[fread(want, 1, sizeof(want) - 1, f)] = '\0';
		fclose(f);
		snprintf(path, sizeof(path), BAD_DIR "%s", e->d_name);
		fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		buf = tst_slurp(fd, &len);
		close(fd);
		describe(buf, len, got, sizeof(got));
		if (strcmp(got, want))
			fail_msg("%s: got\n%s\nwant\n%s", e->d_name, got, want);
		free(buf);
		checked++;
	}
	closedir(d);
	print_message("# %d known-bad files gave their expected error\n", checked);
	assert_true(checked >= 8);
}

SA_TEST_MAIN(test_truncate_every_offset, test_bitflip_every_bit, test_newer_major_refused, test_newer_minor_read, test_missing_trailing_fields, test_declared_lengths, test_highly_compressible, test_oom_loop, test_open_errors, test_bad_files)
