// SPDX-License-Identifier: MIT
/*
 * saf_resync.c - what the reader does after a damaged chunk: with
 * saf_reader_opts.resync, find the next chunk that validates (lengths,
 * flags, sequence and checksum over header and payload) and read on from
 * there; else stop. Both count what was dropped (docs/format.md, "Reading
 * a damaged or truncated file").
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "saf_chunk.h"

#define SCAN_BLOCK (64u << 10)

/*
 * Rules 2..6 and 8 of "Chunk header" for a header at @off: nothing read
 * yet from a file; a stream is read as far as the chunk once the rest hold.
 * @return 1 yes, 0 no, <0 a read error.
 */
static int plausible(struct saf_reader *r, const uint8_t *h, uint64_t off)
{
	uint32_t psize = saf_get_le32(h + 8), csize = saf_get_le32(h + 12);
	uint16_t hsize = saf_get_le16(h + 4), flags = saf_get_le16(h + 6);
	uint64_t need = (uint64_t)hsize + psize;
	int64_t have;

	if (hsize < SAF_CHUNK_HEADER_SIZE || (flags & ~SAF_CHUNK_FLAG_ZSTD))
		return 0;
	if ((!r->st && need > r->info.file_size - off) || csize > SAF_CHUNK_MAX_CONTENT)
		return 0;
	if (flags & SAF_CHUNK_FLAG_ZSTD ? psize > ZSTD_compressBound(csize) + SAF_PAYLOAD_SLACK
					: psize != csize)
		return 0;
	/* an earlier chunk (or a second file's) is not where reading resumes */
	if (saf_get_le32(h + 16) < r->next_seq)
		return 0;
	have = r->st ? saf_rd_have(r, off, need) : (int64_t)need;
	return have < 0 ? (int)have : (uint64_t)have == need;
}

/* "Concatenated recordings": magic and checksum of a file header (24 bytes at @h). */
static bool is_file_header(const uint8_t *h)
{
	return !memcmp(h, SAF_MAGIC, SAF_MAGIC_LEN) &&
	       saf_crc32(h, NULL, 0) == saf_get_le32(h + 20);
}

/* Rule 7: the checksum over header and payload. @return 1 yes, 0 no, <0 error. */
static int crc_ok(struct saf_reader *r, const uint8_t *h, uint64_t off)
{
	size_t len = (size_t)saf_get_le16(h + 4) + saf_get_le32(h + 8);
	int err = 0;
	const uint8_t *p = saf_rd_fetch(r, off, len, &r->payload, &err);

	if (!p)
		return err;
	return saf_crc32(p, p + SAF_CHUNK_HEADER_SIZE, len - SAF_CHUNK_HEADER_SIZE) ==
	       saf_get_le32(p + 20);
}

/*
 * The offset of the first valid chunk at or after @from, or the file size
 * when there is none; a negative errno for a read error or -ENOMEM. The
 * file is scanned in blocks, and a checksum is computed only where the
 * header's lengths fit, so a scan costs about one read of what it skips;
 * checksums over more than 4 times the bytes left end it (a file built
 * with a fitting header at every step would otherwise cost O(n^2)).
 */
static int64_t find_chunk(struct saf_reader *r, uint64_t from, uint32_t *seq)
{
	uint64_t off = from, hi = from, spent = 0;

	for (;;) {
		int64_t have = saf_rd_have(r, off, SCAN_BLOCK);
		size_t len = have < 0 ? 0 : (size_t)have;
		const uint8_t *b;
		int err = 0;

		if (have < 0)
			return have;
		if (len < SAF_CHUNK_HEADER_SIZE)
			break;
		saf_rd_release(r, off); /* a stream's window: this block on */
		b = saf_rd_fetch(r, off, len, &r->scan, &err);
		if (!b)
			return err;
		hi = off + len > hi ? off + len : hi;
		for (size_t i = 0; i + SAF_CHUNK_HEADER_SIZE <= len; i++) {
			uint64_t clen = (uint64_t)saf_get_le16(b + i + 4) + saf_get_le32(b + i + 8);
			int ok;

			if (r->concat && is_file_header(b + i)) {
				r->at_header = true;
				*seq = r->next_seq;
				return (int64_t)(off + i);
			}
			ok = plausible(r, b + i, off + i);
			if (ok <= 0) {
				if (ok < 0)
					return ok;
				continue;
			}
			/*
			 * headers planted to fit make each checksum long: the
			 * work is bound to 4 times the bytes the scan covers
			 * (a file's: all that remain; a stream's: as read)
			 */
			spent += clen;
			hi = off + i + clen > hi ? off + i + clen : hi;
			if (spent > 4 * ((r->st ? hi : r->info.file_size) - from) + SCAN_BLOCK) {
				r->scan_gave_up = true;
				return saf_rd_size(r);
			}
			/* r->payload, not the block's r->scan: b stays valid */
			ok = crc_ok(r, b + i, off + i);
			if (ok < 0)
				return ok;
			if (ok) {
				*seq = saf_get_le32(b + i + 16);
				return (int64_t)(off + i);
			}
		}
		off += len - (SAF_CHUNK_HEADER_SIZE - 1);
	}
	return saf_rd_size(r); /* a stream is at its end here */
}

static void append(struct saf_reader *r, const char *fmt, unsigned long long a,
		   unsigned long long b, unsigned long long c)
{
	size_t n = strlen(r->errmsg);

	snprintf(r->errmsg + n, sizeof(r->errmsg) - n, fmt, a, b, c);
}

/**
 * saf_chunk_damaged() - the chunk at r->off failed with @err (its message is
 * in r->errmsg). Without resync, or for an error that is not damage, reading
 * stops there. With resync, reading goes on at the next valid chunk.
 * @return @err, handed to the caller once (or for good when reading stops).
 */
int saf_chunk_damaged(struct saf_reader *r, int err)
{
	uint64_t size, at = r->off;
	bool go_on = r->resync && (err == -EBADMSG || err == -EOVERFLOW);
	uint32_t seq = 0;
	int64_t next;

	if (err == -ENOMEM || !at)
		return err;
	r->info.damaged = true;
	r->info.damage_count++;
	/* a chunk that is whole but comes after a gap in the sequence is kept */
	next = go_on ? find_chunk(r, r->seq_ahead ? at : at + 1, &seq) : saf_rd_size(r);
	r->seq_ahead = false;
	if (next < 0 && !go_on)
		next = (int64_t)r->info.file_size; /* a stream's read error: what was read */
	if (next < 0) {
		r->err = (int)next;
		return r->err;
	}
	size = r->info.file_size;
	r->info.dropped_bytes += (uint64_t)next - at;
	if ((uint64_t)next == size) {
		r->info.dropped_chunks++;
		append(r,
		       r->scan_gave_up ? "; %llu bytes dropped (too many false chunk headers)"
				       : "; %llu bytes dropped",
		       size - at, 0, 0);
		if (go_on) { /* nothing more to read: the next call ends it */
			r->err = 0;
			r->done = true;
		}
		return err;
	}
	if (r->at_header) { /* the damaged tail of one recording, then the next */
		r->at_header = false;
		r->info.dropped_chunks++;
		append(r, "; %llu bytes dropped, a recording follows at offset %llu", next - at,
		       next, 0);
		r->off = (uint64_t)next;
		r->err = 0;
		return err;
	}
	r->info.dropped_chunks += seq - r->next_seq;
	append(r, "; %llu bytes and %llu chunks dropped, resumed at offset %llu", next - at,
	       seq - r->next_seq, next);
	r->off = (uint64_t)next;
	r->next_seq = seq;
	r->err = 0;
	return err;
}
