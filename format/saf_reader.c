// SPDX-License-Identifier: MIT
/*
 * saf_reader.c - the validating reader: file header, then chunk by chunk
 * (lengths before allocation, checksum, sequence, decompression), records
 * handed out only from a chunk that validated whole ("Reading a damaged or
 * truncated file" in docs/format.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "saf_internal.h"
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

/*
 * "File header" at @base: magic, then checksum, then version (so a flipped
 * bit is damage). @return 0 with *@hsize set, or the errno; *@why and
 * *@at say what and where.
 */
static int header_at(struct saf_reader *r, uint64_t base, uint16_t *hsize, const char **why,
		     uint64_t *at)
{
	int64_t have = saf_rd_have(r, base, SAF_FILE_HEADER_SIZE);
	const uint8_t *h;
	int err = 0;

	*at = base;
	*why = "cannot read the file header";
	if (have < 0)
		return (int)have;
	*why = "file too short for the 24-byte header";
	if (have < SAF_FILE_HEADER_SIZE)
		return -EBADMSG;
	h = saf_rd_fetch(r, base, SAF_FILE_HEADER_SIZE, &r->payload, &err);
	*why = "cannot read the file header";
	if (!h)
		return err;
	*why = "not an sa recording (bad magic)";
	if (memcmp(h, SAF_MAGIC, SAF_MAGIC_LEN))
		return -EBADMSG;
	*why = "file header checksum mismatch";
	if (saf_crc32(h, NULL, 0) != saf_get_le32(h + 20))
		return -EBADMSG;
	r->info.version_major = saf_get_le16(h + 8);
	r->info.version_minor = saf_get_le16(h + 10);
	*hsize = saf_get_le16(h + 12);
	*at = base + 8;
	if (r->info.version_major > SAF_VERSION_MAJOR)
		return -ENOTSUP;
	*why = "unknown format version";
	if (r->info.version_major < SAF_VERSION_MAJOR)
		return -EBADMSG;
	*at = base + 12;
	*why = "bad file header size";
	have = saf_rd_have(r, base, *hsize);
	if (have < 0)
		return (int)have;
	if (*hsize < SAF_FILE_HEADER_SIZE || *hsize > have)
		return -EBADMSG;
	return 0;
}

static int check_header(struct saf_reader *r)
{
	const char *why;
	uint16_t hsize = 0;
	uint64_t at;
	int err = header_at(r, 0, &hsize, &why, &at);

	if (err == -ENOTSUP)
		return saf_rd_fail(r, -ENOTSUP, 8,
				   "format version %u.%u is newer than this reader (%u.%u); "
				   "a newer sa is needed to read it",
				   r->info.version_major, r->info.version_minor, SAF_VERSION_MAJOR,
				   SAF_VERSION_MINOR);
	if (err && at == 8)
		return saf_rd_fail(r, err, at, "%s %u.%u", why, r->info.version_major,
				   r->info.version_minor);
	if (err && at == 12)
		return saf_rd_fail(r, err, at, "%s %u", why, hsize);
	if (err)
		return saf_rd_fail(r, err, at, "%s", why);
	r->off = hsize;
	r->info.good_bytes = hsize;
	r->info.recordings = 1;
	return 0;
}

/**
 * saf_rd_next_recording() - with opts.concat, a valid file header at r->off
 * starts the next recording ("Concatenated recordings"). @return true when
 * it did (r->off past that header, the chunk sequence from 0).
 */
bool saf_rd_next_recording(struct saf_reader *r)
{
	uint16_t v[2] = {r->info.version_major, r->info.version_minor}, hsize;
	const char *why;
	uint64_t at, was = r->off;

	if (!r->concat || header_at(r, r->off, &hsize, &why, &at)) {
		r->info.version_major = v[0];
		r->info.version_minor = v[1];
		return false;
	}
	r->err = 0; /* the chunk check that failed here */
	r->errmsg[0] = '\0';
	if (!r->info.finished)
		saf_rd_warn(r, was, "no end chunk; the recording did not finish cleanly");
	r->info.recording_offset = was;
	r->info.recordings++;
	r->info.finished = false;
	r->after_end = false;
	r->off = was + hsize;
	r->info.good_bytes = r->off;
	r->next_seq = 0;
	return true;
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

static void set_budget(struct saf_reader *r, uint32_t ratio, uint64_t floor)
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

static struct saf_reader *open_common(struct saf_reader *r, const struct saf_reader_opts *opts)
{
	int err = check_header(r);

	if (opts && opts->sz >= offsetof(struct saf_reader_opts, resync) + sizeof(bool))
		r->resync = opts->resync;
	if (opts && opts->sz >= offsetof(struct saf_reader_opts, expand_floor) + sizeof(uint64_t)) {
		r->concat = opts->concat;
		set_budget(r, opts->max_expand, opts->expand_floor);
	}
	if (!err && opts && opts->sz >= offsetof(struct saf_reader_opts, prefetch) + sizeof(bool) &&
	    opts->prefetch)
		saf_prefetch_new(r); /* without it, this thread does the work */
	if (!err)
		return r;
	if (opts && opts->sz >= offsetof(struct saf_reader_opts, errbuf_sz) + sizeof(size_t) &&
	    opts->errbuf && opts->errbuf_sz)
		snprintf(opts->errbuf, opts->errbuf_sz, "%s", r->errmsg);
	saf_reader__free(r);
	errno = -err;
	return NULL;
}

static struct saf_reader *alloc_reader(void)
{
	struct saf_reader *r = saf_malloc(sizeof(*r));

	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	return r;
}

static void early_error(const struct saf_reader_opts *opts, const char *what, int err)
{
	if (opts && opts->sz >= offsetof(struct saf_reader_opts, errbuf_sz) + sizeof(size_t) &&
	    opts->errbuf && opts->errbuf_sz)
		snprintf(opts->errbuf, opts->errbuf_sz, "offset 0: %s: %s", what, strerror(err));
	errno = err;
}

struct saf_reader *saf_reader__open(const char *path, const struct saf_reader_opts *opts)
{
	struct saf_reader *r = NULL;
	struct stat st;
	int fd = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		int err = errno;

		if (fd >= 0)
			close(fd);
		early_error(opts, "cannot open", err);
		return NULL;
	}
	r = alloc_reader();
	if (!r) {
		close(fd);
		early_error(opts, "reader", ENOMEM);
		return NULL;
	}
	r->fd = fd;
	r->info.file_size = (uint64_t)st.st_size;
	return open_common(r, opts);
}

struct saf_reader *saf_reader__open_stream(saf_read_fn read, void *cookie,
					   const struct saf_reader_opts *opts)
{
	struct saf_reader *r;

	if (!read) {
		early_error(opts, "no stream", EINVAL);
		return NULL;
	}
	r = alloc_reader();
	if (r) {
		r->st = saf_malloc(sizeof(*r->st));
		if (r->st)
			memset(r->st, 0, sizeof(*r->st));
	}
	if (!r || !r->st) {
		saf_free(r);
		early_error(opts, "reader", ENOMEM);
		return NULL;
	}
	r->st->read = read;
	r->st->cookie = cookie;
	r->info.file_size = UINT64_MAX;
	r->info.stream = true;
	return open_common(r, opts);
}

struct saf_reader *saf_reader__open_mem(const void *buf, size_t len,
					const struct saf_reader_opts *opts)
{
	struct saf_reader *r;

	if (!buf && len) {
		early_error(opts, "no buffer", EINVAL);
		return NULL;
	}
	r = alloc_reader();
	if (!r) {
		early_error(opts, "reader", ENOMEM);
		return NULL;
	}
	/* A zero-length view still needs a non-NULL base to mean "memory". */
	r->mem = buf ? buf : (const uint8_t *)"";
	r->info.file_size = len;
	return open_common(r, opts);
}

/* Hand out the next record of the current chunk; 0 when the chunk is used up. */
static int next_in_chunk(struct saf_reader *r, struct saf_record *rec)
{
	while (r->cp < r->cend) {
		uint64_t blen;
		int ret;

		/* The chunk validated whole (saf_chunk_load()), so this cannot fail. */
		saf_varint_get(&r->cp, r->cend, &blen);
		r->arena.arena_len = 0;
		ret = saf_rec_decode(r->cp, blen, rec, &r->arena);
		r->cp += blen;
		if (ret > 0)
			return 1;
		r->info.skipped_records++;
	}
	return 0;
}

int saf_reader__next(struct saf_reader *r, struct saf_record *rec)
{
	int ret;

	if (!r || !rec)
		return -EINVAL;
	for (;;) {
		if (r->err)
			return r->err;
		if (r->pcur ? saf_prefetch_next(r, rec) : next_in_chunk(r, rec))
			return 1;
		if (r->done)
			return 0;
		ret = saf_chunk_load(r);
		if (ret == SAF_READER_NEW_RECORDING)
			return ret;
		if (ret < 0)
			return saf_chunk_damaged(r, ret);
	}
}

const struct saf_file_info *saf_reader__info(const struct saf_reader *r)
{
	return &r->info;
}

void saf_reader__chunk(const struct saf_reader *r, uint32_t *type, uint64_t *offset)
{
	if (type)
		*type = r->chunk_type;
	if (offset)
		*offset = r->chunk_off;
}

const char *saf_reader__errmsg(const struct saf_reader *r)
{
	return r ? r->errmsg : "";
}

void saf_reader__free(struct saf_reader *r)
{
	if (!r)
		return;
	saf_prefetch_free(r); /* before the file it reads is closed */
	if (r->fd >= 0)
		close(r->fd);
	if (r->st)
		saf_buf_release(&r->st->win);
	saf_free(r->st);
	saf_buf_release(&r->payload);
	saf_buf_release(&r->content);
	saf_buf_release(&r->scan);
	saf_free(r->arena.arena);
	saf_free(r->arena.ips);
	ZSTD_freeDCtx(r->dctx);
	saf_free(r);
}
