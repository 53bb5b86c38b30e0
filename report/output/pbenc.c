// SPDX-License-Identifier: MIT
/*
 * pbenc.c - the protobuf encoder and gzip writer behind sa-report --pprof.
 * Why not protobuf-c or nanopb: profile.proto needs only varints,
 * length-delimited fields and packed repeated integers, so these ~100 lines
 * beat a code generator and a runtime dependency; zlib is already linked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pbenc.h"

#define PB_VARINT 0
#define PB_LEN	  2

void rpt_pb__fini(struct rpt_pb *b)
{
	free(b->buf);
	*b = (struct rpt_pb){0};
}

static uint8_t *reserve(struct rpt_pb *b, size_t n)
{
	size_t ncap;
	uint8_t *nb;

	if (b->err)
		return NULL;
	if (b->len + n > b->cap) {
		for (ncap = b->cap ? b->cap : 256; ncap < b->len + n; ncap *= 2)
			if (ncap > SIZE_MAX / 4)
				goto nomem;
		nb = realloc(b->buf, ncap);
		if (!nb)
			goto nomem;
		b->buf = nb;
		b->cap = ncap;
	}
	return b->buf + b->len;
nomem:
	b->err = -ENOMEM;
	return NULL;
}

void rpt_pb__varint(struct rpt_pb *b, uint64_t v)
{
	uint8_t *p = reserve(b, 10), *start = p;

	if (!p)
		return;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	b->len += (size_t)(p - start);
}

void rpt_pb__uint(struct rpt_pb *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	rpt_pb__varint(b, (uint64_t)field << 3 | PB_VARINT);
	rpt_pb__varint(b, v);
}

void rpt_pb__raw(struct rpt_pb *b, const void *data, size_t len)
{
	uint8_t *p = reserve(b, len);

	if (!p)
		return;
	if (len)
		memcpy(p, data, len);
	b->len += len;
}

void rpt_pb__bytes(struct rpt_pb *b, uint32_t field, const void *data, size_t len)
{
	rpt_pb__varint(b, (uint64_t)field << 3 | PB_LEN);
	rpt_pb__varint(b, len);
	rpt_pb__raw(b, data, len);
}

void rpt_pb__msg(struct rpt_pb *b, uint32_t field, struct rpt_pb *sub)
{
	if (sub->err && !b->err)
		b->err = sub->err;
	rpt_pb__bytes(b, field, sub->buf, sub->len);
	sub->len = 0;
}

int rpt_pb__gzip(const void *data, size_t len, FILE *out, int level)
{
	unsigned char chunk[65536];
	z_stream z = {0};
	int zr, err = 0;

	/* windowBits 15 + 16: a gzip header and trailer around the deflate stream */
	if (deflateInit2(&z, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)data;
	z.avail_in = 0;
	do {
		/* avail_in is 32 bit: feed huge buffers in pieces */
		if (!z.avail_in && len) {
			z.avail_in = len > (1u << 30) ? (1u << 30) : (uInt)len;
			len -= z.avail_in;
		}
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, len || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out) !=
		    sizeof(chunk) - z.avail_out) {
			err = errno ? -errno : -EIO;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return err;
}
