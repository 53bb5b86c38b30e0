// SPDX-License-Identifier: MIT
/*
 * saf_stream.c - the reader's bytes when they come from a stream (a pipe):
 * a window of what was read and not yet passed, grown only as far as one
 * chunk (its lengths checked first) or one resync block needs, and dropped
 * as the reader moves on ("Reading a stream" in docs/format.md). A file or
 * a buffer answers the same questions from its size.
 */
#include <errno.h>
#include <string.h>

#include "saf_chunk.h"

#define STREAM_READ (64u << 10) /* the least a read asks for */

/* Read until the window ends at @upto or the stream does. @return 0 or -errno. */
static int fill(struct saf_stream *st, uint64_t upto)
{
	while (!st->eof && !st->err && st->base + st->win.len < upto) {
		uint64_t want = upto - (st->base + st->win.len);
		size_t ask = want < STREAM_READ ? STREAM_READ : (size_t)want;
		ssize_t n;

		if (saf_buf_reserve(&st->win, ask))
			return -ENOMEM;
		n = st->read(st->cookie, st->win.p + st->win.len, ask);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			st->err = errno ? -errno : -EIO;
		else if (n == 0)
			st->eof = true;
		else
			st->win.len += (size_t)n;
	}
	return st->err;
}

/**
 * saf_rd_have() - the bytes at @off, up to @want: what a file holds there,
 * or for a stream what it gives once read that far (less only at its end;
 * info.file_size is then its length). @return the count, or -errno.
 */
int64_t saf_rd_have(struct saf_reader *r, uint64_t off, uint64_t want)
{
	struct saf_stream *st = r->st;
	uint64_t end;
	int err;

	if (!st)
		end = r->info.file_size;
	else {
		err = fill(st, off + want);
		if (err)
			return err;
		end = st->base + st->win.len;
		if (st->eof)
			r->info.file_size = end;
	}
	if (off >= end)
		return 0;
	return (int64_t)(end - off < want ? end - off : want);
}

/* A stream's bytes [@off, @off + @len) copied into @b (rd_fetch()'s stream side). */
const uint8_t *saf_rd_stream_fetch(struct saf_reader *r, uint64_t off, size_t len,
				   struct saf_buf *b, int *err)
{
	struct saf_stream *st = r->st;
	int64_t have = saf_rd_have(r, off, len);

	b->len = 0;
	if (have < 0 || (uint64_t)have < len || off < st->base) {
		*err = have < 0 ? (int)have : -EBADMSG;
		return NULL;
	}
	*err = saf_buf_reserve(b, len ? len : 1);
	if (*err)
		return NULL;
	memcpy(b->p, st->win.p + (off - st->base), len);
	return b->p;
}

/** saf_rd_release() - a stream's bytes before @off are not read again. */
void saf_rd_release(struct saf_reader *r, uint64_t off)
{
	struct saf_stream *st = r->st;
	size_t drop;

	if (!st || off <= st->base)
		return;
	drop = off - st->base < st->win.len ? (size_t)(off - st->base) : st->win.len;
	memmove(st->win.p, st->win.p + drop, st->win.len - drop);
	st->win.len -= drop;
	st->base += drop;
}

/**
 * saf_rd_size() - the file's size; a stream is read to its end for it
 * (what is read is dropped). @return the size, or -errno (info.file_size
 * is then what could be read).
 */
int64_t saf_rd_size(struct saf_reader *r)
{
	struct saf_stream *st = r->st;
	int err = 0;

	while (st && !st->eof && !err) {
		saf_rd_release(r, st->base + st->win.len);
		err = fill(st, st->base + st->win.len + STREAM_READ);
	}
	if (st)
		r->info.file_size = st->base + st->win.len;
	return err ? err : (int64_t)r->info.file_size;
}

/** saf_rd_bound_base() - the bytes "Limits" are proportional to, with the chunk ending at @end. */
uint64_t saf_rd_bound_base(const struct saf_reader *r, uint64_t end)
{
	return r->st ? end : r->info.file_size;
}
