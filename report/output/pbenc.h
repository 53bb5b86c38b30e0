/* SPDX-License-Identifier: MIT */
/*
 * pbenc.h - a minimal protobuf wire-format encoder (varints, length-delimited
 * fields, packed repeated integers) into a growable buffer, and gzip of a
 * buffer to a FILE. Just what profile.proto needs; see pbenc.c for why.
 */
#ifndef SA_REPORT_PBENC_H
#define SA_REPORT_PBENC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A growable byte buffer. @err latches the first failure (-ENOMEM), so a
 * message is built without checking every call and checked once at the end. */
struct rpt_pb {
	uint8_t *buf;
	size_t len, cap;
	int err;
};

/** rpt_pb__fini() - free the buffer; the struct can be reused. Accepts an empty one. */
void rpt_pb__fini(struct rpt_pb *b);

/** rpt_pb__varint() - a bare base-128 varint (used for packed elements). */
void rpt_pb__varint(struct rpt_pb *b, uint64_t v);

/** rpt_pb__uint() - field @field as varint @v; nothing when @v is 0 (proto3 default). */
void rpt_pb__uint(struct rpt_pb *b, uint32_t field, uint64_t v);

/** rpt_pb__raw() - @len bytes of @data (already encoded fields), copied as they are. */
void rpt_pb__raw(struct rpt_pb *b, const void *data, size_t len);

/** rpt_pb__bytes() - field @field, length-delimited, @len bytes of @data (copied). */
void rpt_pb__bytes(struct rpt_pb *b, uint32_t field, const void *data, size_t len);

/** rpt_pb__msg() - field @field holding the message encoded in @sub, then resets @sub. */
void rpt_pb__msg(struct rpt_pb *b, uint32_t field, struct rpt_pb *sub);

/**
 * rpt_pb__gzip() - write @len bytes of @data to @out as one gzip member.
 * @level: zlib level, 0 = default. @return 0, -ENOMEM, -EIO (zlib or the write).
 */
int rpt_pb__gzip(const void *data, size_t len, FILE *out, int level);

#endif /* SA_REPORT_PBENC_H */
