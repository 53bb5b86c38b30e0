// SPDX-License-Identifier: MIT
/*
 * test_saf_varint.c - the codecs under the writer and reader: LEB128
 * varints at their edges, overlong and unterminated input, zigzag frame
 * deltas, record limits and forward-compatible record decoding.
 */
#include "saf_test.h"
#include "sa_cmocka.h"

static void roundtrip(uint64_t v, size_t want_len)
{
	uint8_t b[SAF_VARINT_MAX];
	const uint8_t *p = b;
	uint64_t got = 0;
	size_t n = saf_varint_put(b, v);

	assert_int_equal(n, want_len);
	assert_int_equal(saf_varint_get(&p, b + n, &got), 0);
	assert_true(got == v);
	assert_ptr_equal(p, b + n);
	p = b; /* one byte short is unterminated */
	assert_int_equal(saf_varint_get(&p, b + n - 1, &got), -EBADMSG);
	assert_ptr_equal(p, b);
}

static void test_varint_edges(void **state)
{
	(void)state;
	roundtrip(0, 1);
	roundtrip(1, 1);
	roundtrip(127, 1);
	roundtrip(128, 2);
	roundtrip(16383, 2);
	roundtrip(16384, 3);
	roundtrip(UINT32_MAX, 5);
	roundtrip(1ull << 63, 10);
	roundtrip(UINT64_MAX, 10);
}

static void bad(const uint8_t *b, size_t n)
{
	const uint8_t *p = b;
	uint64_t v;

	assert_int_equal(saf_varint_get(&p, b + n, &v), -EBADMSG);
	assert_ptr_equal(p, b);
}

static void test_varint_rejects(void **state)
{
	static const uint8_t eleven[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					  0x80, 0x80, 0x80, 0x80, 0x01 };
	static const uint8_t past64[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
	static const uint8_t noncanon[] = { 0x80, 0x00 };
	static const uint8_t noncanon2[] = { 0xff, 0x80, 0x00 };
	static const uint8_t unterminated[] = { 0xff, 0xff };

	(void)state;
	bad(eleven, sizeof(eleven));
	bad(past64, sizeof(past64));
	bad(noncanon, sizeof(noncanon));
	bad(noncanon2, sizeof(noncanon2));
	bad(unterminated, sizeof(unterminated));
	bad(unterminated, 0);
}

static int decode_buf(const struct saf_buf *b, struct saf_record *rec, struct saf_arena *a)
{
	const uint8_t *p = b->p;
	uint64_t blen;

	assert_int_equal(saf_varint_get(&p, b->p + b->len, &blen), 0);
	assert_int_equal(blen, b->len - (size_t)(p - b->p));
	return saf_rec_decode(p, blen, rec, a);
}

/* Zigzag deltas: every 64-bit address, jumps both ways, survive. */
static void test_stack_zigzag(void **state)
{
	static const uint64_t ips[] = { UINT64_MAX, 0, 1ull << 63, (1ull << 63) - 1, 5, 4, 0xffffffff81000000ull };
	struct saf_record in = { .kind = SAF_REC_STACK, .stack = { 9, 1, 7, ips } }, out;
	uint64_t frames[8];
	char arena[64];
	struct saf_arena a = { arena, 0, sizeof(arena), frames, 8, NULL, false };
	struct saf_buf b = { 0 };

	(void)state;
	assert_int_equal(saf_rec_encode(&b, &in), 0);
	assert_int_equal(decode_buf(&b, &out, &a), 1);
	assert_true(tst_rec_eq(&in, &out));
	saf_buf_release(&b);
}

static void test_record_forward_compat(void **state)
{
	static const uint8_t unknown[] = { 77, 1, 2, 3 };
	static const uint8_t wide_u32[] = { SAF_REC_EXIT, 0x80, 0x80, 0x80, 0x80, 0x10 };
	static const uint8_t extra[] = { SAF_REC_EXIT, 5, 6, 0xff, 0xff, 0xff };
	struct saf_arena a = { 0 };
	struct saf_record rec;

	(void)state;
	assert_int_equal(saf_rec_decode(unknown, sizeof(unknown), &rec, &a), 0);
	assert_int_equal(saf_rec_decode(unknown, 0, &rec, &a), -EBADMSG);
	assert_int_equal(saf_rec_decode(wide_u32, sizeof(wide_u32), &rec, &a), -EBADMSG);
	/* bytes after the known fields are a newer writer's: ignored, even unparsable */
	assert_int_equal(saf_rec_decode(extra, sizeof(extra), &rec, &a), 1);
	assert_int_equal(rec.exit.pid, 5);
	assert_int_equal(rec.exit.time_ns, 6);
	assert_int_equal(saf_rec_decode(extra, 2, &rec, &a), 1);
	assert_int_equal(rec.exit.time_ns, 0);
}

static void test_limits(void **state)
{
	static char big[SAF_MAX_STRING];
	struct saf_record r = { .kind = SAF_REC_KSYM };
	struct saf_buf b = { 0 };

	(void)state;
	r.ksym.name = (struct saf_str){ big, SAF_MAX_STRING };
	assert_int_equal(saf_rec_encode(&b, &r), 0);
	r.ksym.name.len++;
	b.len = 0;
	assert_int_equal(saf_rec_encode(&b, &r), -EINVAL);
	assert_int_equal(b.len, 0);
	assert_int_equal(saf_rec_chunk_type(SAF_REC_USYM), SAF_CHUNK_USYMS);
	assert_int_equal(saf_rec_chunk_type(99), 0);
	saf_buf_release(&b);
}

SA_TEST_MAIN(test_varint_edges, test_varint_rejects, test_stack_zigzag, test_record_forward_compat, test_limits)
