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

/* Rules 2..6 and 8 of "Chunk header" for a header at @off: nothing read yet. */
static bool plausible(const struct saf_reader *r, const uint8_t *h, uint64_t off)
{
	uint32_t psize = saf_get_le32(h + 8), csize = saf_get_le32(h + 12);
	uint16_t hsize = saf_get_le16(h + 4), flags = saf_get_le16(h + 6);

	if (hsize < SAF_CHUNK_HEADER_SIZE || (flags & ~SAF_CHUNK_FLAG_ZSTD))
		return false;
	if ((uint64_t)hsize + psize > r->info.file_size - off || csize > SAF_CHUNK_MAX_CONTENT)
		return false;
	if (flags & SAF_CHUNK_FLAG_ZSTD ? psize > ZSTD_compressBound(csize) + SAF_PAYLOAD_SLACK
					: psize != csize)
		return false;
	/* an earlier chunk (or a second file's) is not where reading resumes */
	return saf_get_le32(h + 16) >= r->next_seq;
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
	uint64_t size = r->info.file_size, off = from;
	/* headers planted to fit make each checksum long: bound the work */
	uint64_t budget = 4 * (size - from) + SCAN_BLOCK, spent = 0;

	while (size - off >= SAF_CHUNK_HEADER_SIZE) {
		size_t len = size - off < SCAN_BLOCK ? (size_t)(size - off) : SCAN_BLOCK;
		int err = 0;
		const uint8_t *b = saf_rd_fetch(r, off, len, &r->scan, &err);

		if (!b)
			return err;
		for (size_t i = 0; i + SAF_CHUNK_HEADER_SIZE <= len; i++) {
			int ok;

			if (r->concat && is_file_header(b + i)) {
				r->at_header = true;
				*seq = r->next_seq;
				return (int64_t)(off + i);
			}
			if (!plausible(r, b + i, off + i))
				continue;
			spent += (uint64_t)saf_get_le16(b + i + 4) + saf_get_le32(b + i + 8);
			if (spent > budget) {
				r->scan_gave_up = true;
				return (int64_t)size;
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
	return (int64_t)size;
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
	uint64_t size = r->info.file_size, at = r->off;
	bool go_on = r->resync && (err == -EBADMSG || err == -EOVERFLOW);
	uint32_t seq = 0;
	int64_t next = (int64_t)size;

	if (err == -ENOMEM || !at)
		return err;
	r->info.damaged = true;
	r->info.damage_count++;
	/* a chunk that is whole but comes after a gap in the sequence is kept */
	if (go_on)
		next = find_chunk(r, r->seq_ahead ? at : at + 1, &seq);
	r->seq_ahead = false;
	if (next < 0) {
		r->err = (int)next;
		return r->err;
	}
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
