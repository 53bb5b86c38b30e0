// SPDX-License-Identifier: MIT
/*
 * saf_rdio.c - the bottom of the reader, what every stage of it uses: the
 * bytes at an offset (from memory, pread() or a stream's window in
 * saf_stream.c), the messages that stop reading or only warn, and the
 * bound on what the chunks may expand to ("Limits" in docs/format.md).
 * Calls nothing above it: saf_reader.c, saf_chunk.c and saf_resync.c call
 * down into it (saf_prefetch.c through saf_chunk.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "saf_chunk.h"

static void set_msg(struct saf_reader *r, uint64_t off, const char *fmt, va_list ap)
{
	int n = snprintf(r->errmsg, sizeof(r->errmsg), "offset %llu: ", (unsigned long long)off);

	vsnprintf(r->errmsg + n, sizeof(r->errmsg) - (size_t)n, fmt, ap);
}

/** saf_rd_fail() - stop reading at the chunk at @off: the error sticks. */
int saf_rd_fail(struct saf_reader *r, int err, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_msg(r, off, fmt, ap);
	va_end(ap);
	/* Past the file header, saf_chunk_damaged() says what is lost. */
	r->err = err;
	return err;
}

/** saf_rd_warn() - note a condition that does not stop reading. */
void saf_rd_warn(struct saf_reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_msg(r, off, fmt, ap);
	va_end(ap);
}

/** saf_rd_fetch() - @len bytes at @off, from memory or read into @b. */
const uint8_t *saf_rd_fetch(struct saf_reader *r, uint64_t off, size_t len, struct saf_buf *b,
			    int *err)
{
	size_t got = 0;

	if (r->mem)
		return r->mem + off;
	if (r->st)
		return saf_rd_stream_fetch(r, off, len, b, err);
	b->len = 0;
	*err = saf_buf_reserve(b, len);
	if (*err)
		return NULL;
	while (got < len) {
		ssize_t n = pread(r->fd, b->p + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*err = n < 0 ? -errno : -EBADMSG;
			return NULL;
		}
		got += (size_t)n;
	}
	return b->p;
}

/* "Limits": the content @size bytes may expand to (0: unbounded). */
static uint64_t budget_for(uint64_t size, uint32_t ratio, uint64_t floor)
{
	uint64_t b;

	if (!ratio && !floor)
		return 0;
	b = size > UINT64_MAX / (ratio ? ratio : 1) ? UINT64_MAX : size * ratio;
	return b < floor ? floor : b;
}

/**
 * saf_rd_set_budget() - opts.max_expand and opts.expand_floor: a file's
 * bound is set now, a stream's as it is read.
 */
void saf_rd_set_budget(struct saf_reader *r, uint32_t ratio, uint64_t floor)
{
	r->max_expand = ratio;
	r->expand_floor = floor;
	if (!r->st)
		r->content_budget = budget_for(r->info.file_size, ratio, floor);
}

/**
 * saf_rd_budget() - the content the chunks may expand to, checked at the
 * chunk ending at @end: the whole file's bound, or a stream's for the bytes
 * up to @end ("Reading a stream"). 0: unbounded.
 */
uint64_t saf_rd_budget(const struct saf_reader *r, uint64_t end)
{
	return r->st ? budget_for(end, r->max_expand, r->expand_floor) : r->content_budget;
}
