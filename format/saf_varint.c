// SPDX-License-Identifier: MIT
/*
 * saf_varint.c - LEB128 varints, the chunk checksum and the growable byte
 * buffer the writer and reader build on ("Varints", "Chunk header" in
 * docs/format.md).
 */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "saf_internal.h"

size_t saf_varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Near the end of the buffer: every byte is bounds-checked. */
static int varint_get_tail(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t val = 0;
	unsigned int shift = 0;
	size_t n;

	for (n = 0; n < SAF_VARINT_MAX; n++) {
		uint8_t b;

		if (p + n >= end)
			return -EBADMSG; /* unterminated */
		b = p[n];
		if (n == SAF_VARINT_MAX - 1 && b > 1)
			return -EBADMSG; /* bits past 64 */
		val |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (b == 0 && n > 0)
				return -EBADMSG; /* not the shortest form */
			*v = val;
			*pp = p + n + 1;
			return 0;
		}
	}
	return -EBADMSG; /* more than 10 bytes */
}

/*
 * Only the shortest encoding is accepted ("Varints"), so every value has
 * exactly one byte form and a rewrite of what was read is byte-identical.
 */
int saf_varint_get(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t val = 0, b;

	/* The decoder's hot loop: with 10 bytes left no byte needs a bounds check. */
	if (end - p < SAF_VARINT_MAX)
		return varint_get_tail(pp, end, v);
	for (unsigned int shift = 0; shift < 63; shift += 7) {
		b = *p++;
		val |= (b & 0x7f) << shift;
		if (b < 0x80) {
			if (!b && shift)
				return -EBADMSG; /* not the shortest form */
			*v = val;
			*pp = p;
			return 0;
		}
	}
	b = *p++; /* the tenth byte holds bit 63 only, and is not 0 (shortest form) */
	if (b != 1)
		return -EBADMSG;
	*v = val | b << 63;
	*pp = p;
	return 0;
}

uint32_t saf_crc32(const uint8_t *hdr20, const uint8_t *rest, size_t rest_len)
{
	uLong crc = crc32(0L, Z_NULL, 0);

	crc = crc32(crc, hdr20, 20);
	while (rest_len) {
		uInt n = rest_len > (1u << 30) ? (1u << 30) : (uInt)rest_len;

		crc = crc32(crc, rest, n);
		rest += n;
		rest_len -= n;
	}
	return (uint32_t)crc;
}

int saf_buf_grow_to(struct saf_buf *b, size_t cap)
{
	uint8_t *p;

	if (b->cap >= cap)
		return 0;
	p = saf_realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

int saf_buf_reserve(struct saf_buf *b, size_t more)
{
	size_t cap;

	if (b->cap - b->len >= more)
		return 0;
	if (more > SIZE_MAX / 2 - b->len)
		return -ENOMEM;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < more)
		cap *= 2;
	return saf_buf_grow_to(b, cap);
}

int saf_buf_put_varint(struct saf_buf *b, uint64_t v)
{
	int err = saf_buf_reserve(b, SAF_VARINT_MAX);

	if (err)
		return err;
	b->len += saf_varint_put(b->p + b->len, v);
	return 0;
}

void saf_buf_release(struct saf_buf *b)
{
	saf_free(b->p);
	memset(b, 0, sizeof(*b));
}
