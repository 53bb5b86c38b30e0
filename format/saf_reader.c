// SPDX-License-Identifier: MIT
/*
 * saf_reader.c - the validating reader: file header, then chunk by chunk
 * (lengths before allocation, checksum, sequence, decompression), records
 * handed out only from a chunk that validated whole ("Reading a damaged or
 * truncated file" in docs/format.md). The top of format/'s reader: it
 * calls saf_chunk.c, saf_prefetch.c and saf_resync.c, which call only
 * down (saf_rdio.c, saf_stream.c), never back here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "saf_internal.h"
#include "saf_chunk.h"

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

/*
 * With opts.concat, a valid file header at r->off
 * starts the next recording ("Concatenated recordings"). @return true when
 * it did (r->off past that header, the chunk sequence from 0).
 */
static bool next_recording(struct saf_reader *r)
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

static struct saf_reader *open_common(struct saf_reader *r, const struct saf_reader_opts *opts)
{
	int err = check_header(r);

	if (opts && opts->sz >= offsetof(struct saf_reader_opts, resync) + sizeof(bool))
		r->resync = opts->resync;
	if (opts && opts->sz >= offsetof(struct saf_reader_opts, expand_floor) + sizeof(uint64_t)) {
		r->concat = opts->concat;
		saf_rd_set_budget(r, opts->max_expand, opts->expand_floor);
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

/* Past the last chunk: a clean file ended with END, anything else is a warning. */
static int at_end(struct saf_reader *r)
{
	r->done = true;
	if (!r->info.finished)
		saf_rd_warn(r, r->off, "no end chunk; the recording did not finish cleanly");
	return 0;
}

/* Bytes after END that are no recording: counted (a stream is read to its end). */
static void after_end(struct saf_reader *r)
{
	int64_t size = saf_rd_size(r);

	r->done = true;
	if (size < 0)
		saf_rd_warn(r, r->off, "read error after the end chunk");
	else if (r->off < (uint64_t)size)
		saf_rd_warn(r, r->off, "%llu bytes after the end chunk ignored",
			    (unsigned long long)((uint64_t)size - r->off));
}

static void commit(struct saf_reader *r, const struct saf_chunk_hdr *c, const uint8_t *content,
		   size_t len)
{
	r->chunk_type = c->type;
	r->chunk_off = r->off;
	r->cp = content;
	r->cend = len ? content + len : content; /* content is NULL when empty */
	r->info.chunks++;
	r->info.content_bytes += len;
	r->next_seq++;
	r->off += (uint64_t)c->hsize + c->psize;
	r->info.good_bytes = r->off;
	saf_rd_release(r, r->off);
	if (c->type != SAF_CHUNK_END)
		return;
	r->info.finished = true;
	if (r->concat && saf_rd_have(r, r->off, 1) != 0) /* a read error is met there */
		r->after_end = true; /* a second recording, or junk: load_chunk() sees */
	else
		after_end(r);
}

/* Hand out the records of the chunk saf_chunk_check() passed. */
static void commit_chunk(struct saf_reader *r, const struct saf_chunk_hdr *c,
			 const uint8_t *content)
{
	if (!content)
		r->info.skipped_chunks++;
	commit(r, c, content, content ? c->csize : 0);
}

/*
 * Validate the chunk at r->off (saf_chunk.c, or the prefetch thread's
 * result) and point r->cp at its records. @return 1 when a chunk was consumed (possibly skipped), 0
 * past the last chunk, SAF_READER_NEW_RECORDING at a second file header (opts.concat), or the
 * negative errno that stops reading.
 */
static int load_chunk(struct saf_reader *r)
{
	struct saf_chunk_hdr c = {0};
	const uint8_t *content;
	int64_t remain;
	int ret;

	r->pcur = r->pend = NULL;
	ret = r->pf ? saf_prefetch_take(r, &c, &content) : 0;
	if (ret > 0)
		goto done;
	/* after the take: the prefetch thread reads a stream only between start and take */
	remain = saf_rd_have(r, r->off, SAF_CHUNK_HEADER_SIZE);
	if (remain < 0)
		return saf_rd_fail(r, (int)remain, r->off, "chunk %u: read error", r->next_seq);
	if (!remain)
		return at_end(r);
	/* "Concatenated recordings": a file header where a chunk would start */
	if (r->after_end && next_recording(r))
		return SAF_READER_NEW_RECORDING;
	if (r->after_end) {
		after_end(r);
		return 0;
	}
	if (remain < SAF_CHUNK_HEADER_SIZE)
		return saf_rd_fail(r, -EBADMSG, r->off,
				   "chunk %u truncated: %llu of %d header bytes", r->next_seq,
				   (unsigned long long)remain, SAF_CHUNK_HEADER_SIZE);
	ret = saf_chunk_check(r, &c, &content);
	/* not a chunk: maybe the next recording's file header (probed only then) */
	if (ret < 0 && ret != -ENOMEM && ret != -EFBIG && next_recording(r))
		return SAF_READER_NEW_RECORDING;
	if (ret < 0)
		return ret;
done:
	commit_chunk(r, &c, content);
	if (r->pf && !r->done)
		saf_prefetch_start(r);
	return 1;
}

/* Hand out the next record of the current chunk; 0 when the chunk is used up. */
static int next_in_chunk(struct saf_reader *r, struct saf_record *rec)
{
	while (r->cp < r->cend) {
		uint64_t blen;
		int ret;

		/* The chunk validated whole (load_chunk()), so this cannot fail. */
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
		ret = load_chunk(r);
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
