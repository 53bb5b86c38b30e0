// SPDX-License-Identifier: MIT
/*
 * saf_chunk.c - check one chunk for the reader: every length is checked
 * against the file and the limits before anything is allocated, then the
 * checksum, the sequence number, decompression (grown as bytes decode) and
 * every record ("Chunk header", "Reading a damaged or truncated file").
 * Called by saf_reader.c and by the prefetch thread (saf_prefetch.c); it
 * calls only down: saf_rdio.c, saf_stream.c and the record decoder.
 */
#include <errno.h>
#include <string.h>

#include "saf_chunk.h"

static bool type_known(uint32_t type)
{
	return saf_chunk_type__name(type) != NULL;
}

/* The chunk at r->off fits in what remains (a stream is read that far). */
static int check_fits(struct saf_reader *r, const struct saf_chunk_hdr *c)
{
	uint64_t need = (uint64_t)c->hsize + c->psize;
	int64_t have = saf_rd_have(r, r->off, need);

	if (have < 0)
		return saf_rd_fail(r, (int)have, r->off, "chunk %u: read error", r->next_seq);
	if ((uint64_t)have < need)
		return saf_rd_fail(r, -EBADMSG, r->off,
				   "chunk %llu truncated: needs %llu bytes, %llu remain",
				   (unsigned long long)r->next_seq, (unsigned long long)need,
				   (unsigned long long)have);
	return 0;
}

/*
 * Lengths and flags of the header at r->off, before anything is allocated;
 * whether the chunk fits comes last, so that a stream is read on for it
 * only once its sizes are in bounds ("Chunk header", rule 6).
 */
static int check_hdr(struct saf_reader *r, const uint8_t *h, struct saf_chunk_hdr *c)
{
	uint64_t idx = r->next_seq;

	c->type = saf_get_le32(h);
	c->hsize = saf_get_le16(h + 4);
	c->flags = saf_get_le16(h + 6);
	c->psize = saf_get_le32(h + 8);
	c->csize = saf_get_le32(h + 12);
	c->seq = saf_get_le32(h + 16);
	if (c->hsize < SAF_CHUNK_HEADER_SIZE)
		return saf_rd_fail(r, -EBADMSG, r->off, "chunk %llu: header size %u < %d",
				   (unsigned long long)idx, c->hsize, SAF_CHUNK_HEADER_SIZE);
	if (c->flags & ~SAF_CHUNK_FLAG_ZSTD)
		return saf_rd_fail(r, -EBADMSG, r->off, "chunk %llu: unknown flags 0x%x",
				   (unsigned long long)idx, c->flags);
	if (c->csize > SAF_CHUNK_MAX_CONTENT)
		return saf_rd_fail(r, -EOVERFLOW, r->off,
				   "chunk %llu: content size %u over the %u-byte limit",
				   (unsigned long long)idx, c->csize, SAF_CHUNK_MAX_CONTENT);
	if (c->flags & SAF_CHUNK_FLAG_ZSTD
		    ? c->psize > ZSTD_compressBound(c->csize) + SAF_PAYLOAD_SLACK
		    : c->psize != c->csize)
		return saf_rd_fail(r, -EBADMSG, r->off,
				   "chunk %llu: payload size %u does not fit content size %u",
				   (unsigned long long)idx, c->psize, c->csize);
	return check_fits(r, c);
}

/* "Compression": one frame, content size declared, window within the chunk. */
static int check_frame(struct saf_reader *r, const uint8_t *p, const struct saf_chunk_hdr *c)
{
	ZSTD_frameHeader fh;
	unsigned long long wmax = 1024;
	size_t ret = ZSTD_getFrameHeader(&fh, p, c->psize);

	while (wmax < c->csize)
		wmax <<= 1;
	if (ret != 0 || fh.frameType != ZSTD_frame)
		return saf_rd_fail(r, -EBADMSG, r->off, "chunk %u: payload is not a zstd frame",
				   r->next_seq);
	if (fh.frameContentSize != c->csize)
		return saf_rd_fail(r, -EBADMSG, r->off,
				   "chunk %u: zstd frame content size differs from %u", r->next_seq,
				   c->csize);
	if (fh.windowSize > wmax)
		return saf_rd_fail(r, -EBADMSG, r->off, "chunk %u: zstd window larger than chunk",
				   r->next_seq);
	if (!r->dctx) {
		r->dctx = ZSTD_createDCtx_advanced(saf_zstd_mem());
		if (!r->dctx)
			return saf_rd_fail(r, -ENOMEM, r->off, "out of memory");
	}
	ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_only);
	return 0;
}

static int zfail(struct saf_reader *r, size_t ret)
{
	if (ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation)
		return saf_rd_fail(r, -ENOMEM, r->off, "out of memory");
	return saf_rd_fail(r, -EBADMSG, r->off, "chunk %u: zstd: %s", r->next_seq,
			   ZSTD_getErrorName(ret));
}

/*
 * The output grows as bytes actually decode, never to csize up front, so a
 * small payload declaring a large content size costs nothing until it
 * really expands ("Limits").
 */
static int inflate(struct saf_reader *r, const uint8_t *p, const struct saf_chunk_hdr *c)
{
	ZSTD_inBuffer in = {p, c->psize, 0};
	struct saf_buf *b = &r->content;
	size_t cap = c->csize < 4ull * c->psize + 4096 ? c->csize : 4ull * c->psize + 4096;
	int err = check_frame(r, p, c);

	b->len = 0;
	if (!err && saf_buf_grow_to(b, cap ? cap : 1))
		return saf_rd_fail(r, -ENOMEM, r->off, "out of memory");
	while (!err) {
		ZSTD_outBuffer out = {b->p, b->cap < c->csize ? b->cap : c->csize, b->len};
		uint8_t extra;
		size_t in0 = in.pos, ret = ZSTD_decompressStream(r->dctx, &out, &in);

		b->len = out.pos;
		if (ZSTD_isError(ret))
			return zfail(r, ret);
		if (!ret)
			break;
		if (out.pos < out.size) {
			if (in.pos == in.size || in.pos == in0)
				err = saf_rd_fail(r, -EBADMSG, r->off,
						  "chunk %u: zstd frame truncated", r->next_seq);
			continue;
		}
		if (out.size < c->csize) {
			size_t ncap = out.size * 2 < c->csize ? out.size * 2 : c->csize;

			if (saf_buf_grow_to(b, ncap))
				err = saf_rd_fail(r, -ENOMEM, r->off, "out of memory");
			continue;
		}
		/* Full at csize: anything more is a size mismatch. */
		out = (ZSTD_outBuffer){&extra, 1, 0};
		ret = ZSTD_decompressStream(r->dctx, &out, &in);
		if (ZSTD_isError(ret))
			return zfail(r, ret);
		if (out.pos || (ret && in.pos == in.size))
			err = saf_rd_fail(r, -EBADMSG, r->off,
					  "chunk %u: zstd frame does not decode to %u bytes",
					  r->next_seq, c->csize);
		else if (!ret)
			break;
	}
	if (!err && (in.pos != in.size || b->len != c->csize))
		err = saf_rd_fail(r, -EBADMSG, r->off,
				  "chunk %u: zstd frame does not decode to %u bytes", r->next_seq,
				  c->csize);
	return err;
}

/* First pass over the records: validate all, size the arena for the largest. */
static int check_records(struct saf_reader *r, const uint8_t *p, const uint8_t *end)
{
	struct saf_arena v = {0};
	struct saf_record rec;
	const uint8_t *start = p;
	size_t max_arena = 1;
	uint64_t n = 0, blen;
	int ret;

	for (; p < end; n++) {
		const uint8_t *rec_start = p;

		v.why = NULL;
		if (saf_varint_get(&p, end, &blen))
			v.why = "record length is a bad varint";
		else if (blen > (uint64_t)(end - p))
			v.why = "record runs past the chunk";
		if (v.why)
			return saf_rd_fail(r, -EBADMSG, r->off,
					   "chunk %u: record %llu at byte %zu: %s", r->next_seq,
					   (unsigned long long)n, (size_t)(rec_start - start),
					   v.why);
		v.arena_len = 0;
		ret = saf_rec_decode(p, blen, &rec, &v);
		if (ret < 0)
			return saf_rd_fail(r, ret, r->off, "chunk %u: record %llu at byte %zu: %s",
					   r->next_seq, (unsigned long long)n,
					   (size_t)(rec_start - start), v.why);
		if (v.arena_len > max_arena)
			max_arena = v.arena_len;
		p += blen;
	}
	if (max_arena > r->arena.arena_cap) {
		char *a = saf_realloc(r->arena.arena, max_arena);

		if (!a)
			return saf_rd_fail(r, -ENOMEM, r->off, "out of memory");
		r->arena.arena = a;
		r->arena.arena_cap = max_arena;
	}
	if (v.max_frames > r->arena.max_frames) {
		uint64_t *ips = saf_realloc(r->arena.ips, v.max_frames * sizeof(*ips));

		if (!ips)
			return saf_rd_fail(r, -ENOMEM, r->off, "out of memory");
		r->arena.ips = ips;
		r->arena.max_frames = v.max_frames;
	}
	return 0;
}

/*
 * Validate the chunk at r->off: header, checksum, sequence, decompression,
 * every record. Touches only @r's buffers and messages, so the prefetch
 * thread runs it on a shadow reader (saf_prefetch.c).
 * @return 1 with *@c and *@content set (*@content NULL: a chunk of unknown
 * type, to skip), or the negative errno that stops reading.
 */
int saf_chunk_check(struct saf_reader *r, struct saf_chunk_hdr *c, const uint8_t **content)
{
	uint8_t h[SAF_CHUNK_HEADER_SIZE];
	uint64_t end, budget;
	const uint8_t *p;
	int err = 0;

	*content = NULL;
	p = saf_rd_fetch(r, r->off, sizeof(h), &r->payload, &err);
	if (!p)
		return saf_rd_fail(r, err, r->off, "chunk %u: read error", r->next_seq);
	memcpy(h, p, sizeof(h));
	err = check_hdr(r, h, c);
	if (err)
		return err;
	p = saf_rd_fetch(r, r->off, (size_t)c->hsize + c->psize, &r->payload, &err);
	if (!p)
		return saf_rd_fail(r, err, r->off, "chunk %u: read error", r->next_seq);
	if (saf_crc32(p, p + SAF_CHUNK_HEADER_SIZE, c->hsize - SAF_CHUNK_HEADER_SIZE + c->psize) !=
	    saf_get_le32(h + 20))
		return saf_rd_fail(r, -EBADMSG, r->off, "chunk %u checksum mismatch", r->next_seq);
	r->seq_ahead = c->seq > r->next_seq;
	if (c->seq != r->next_seq)
		return saf_rd_fail(r, -EBADMSG, r->off, "chunk %u has sequence number %u",
				   r->next_seq, c->seq);
	if (!type_known(c->type))
		return 1;
	end = r->off + c->hsize + c->psize;
	budget = saf_rd_budget(r, end);
	if (budget && c->csize > budget - r->info.content_bytes)
		return saf_rd_fail(r, -EFBIG, r->off,
				   r->st ? "chunk %u: the chunks expand past %llu MiB, the bound "
					   "for the first %llu bytes of a stream"
					 : "chunk %u: the chunks expand past %llu MiB, the bound "
					   "for a %llu-byte file",
				   r->next_seq, (unsigned long long)(budget >> 20),
				   (unsigned long long)saf_rd_bound_base(r, end));
	p += c->hsize;
	if (c->flags & SAF_CHUNK_FLAG_ZSTD) {
		err = inflate(r, p, c);
		p = r->content.p;
	}
	if (!err && !r->defer_records)
		err = check_records(r, p, p + c->csize);
	if (err)
		return err;
	*content = p ? p : (const uint8_t *)""; /* NULL means "skip" */
	return 1;
}
