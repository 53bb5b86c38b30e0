// SPDX-License-Identifier: MIT
/*
 * saf_writer.c - the streaming writer: file header, one buffer per chunk
 * type, zstd compression and the write loop ("File header", "Chunk header",
 * "Writer rules" in docs/format.md).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "saf_internal.h"

/* Buffered chunk types, in the order saf_writer__flush() writes them. */
static const uint32_t flush_order[] = {
	SAF_CHUNK_PROCS, SAF_CHUNK_KSYMS,  SAF_CHUNK_USYMS,
	SAF_CHUNK_JIT,	 SAF_CHUNK_STACKS, SAF_CHUNK_SAMPLES,
};
#define NBUF	    (sizeof(flush_order) / sizeof(flush_order[0]))
#define SAMPLES_BUF (NBUF - 1)
#define USYMS_BUF   2

struct saf_writer {
	int fd;
	int err; /* sticky: the first write failure */
	int level;
	size_t target;
	ZSTD_CCtx *cctx;
	struct saf_buf bufs[NBUF];
	struct saf_buf out; /* chunk header + payload of one write */
	struct saf_buf tmp; /* META and END records */
	uint32_t seq;	    /* next chunk's seq */
	uint64_t bytes;
	struct saf_interval iv;
	bool iv_open;
	bool iv_head_needed;   /* repeat INTERVAL at the head of the next SAMPLES chunk */
	struct saf_buf symtab; /* the last SYMTAB, encoded: USYMs after a split need it */
	bool finished;
};

static int buf_index(uint32_t chunk_type)
{
	size_t i;

	for (i = 0; i < NBUF; i++)
		if (flush_order[i] == chunk_type)
			return (int)i;
	return -1;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int zstd_err(size_t ret)
{
	return ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation ? -ENOMEM : -EIO;
}

/* Compress @len bytes (or store them raw when that is smaller) and write one chunk. */
static int write_chunk(struct saf_writer *w, uint32_t type, const uint8_t *content, size_t len)
{
	size_t bound = ZSTD_compressBound(len), plen;
	uint16_t flags = SAF_CHUNK_FLAG_ZSTD;
	uint8_t *hdr;
	int err;

	if (len > SAF_CHUNK_MAX_CONTENT)
		return -EINVAL;
	w->out.len = 0;
	err = saf_buf_reserve(&w->out, SAF_CHUNK_HEADER_SIZE + bound);
	if (err)
		return err;
	hdr = w->out.p;
	plen = ZSTD_compress2(w->cctx, hdr + SAF_CHUNK_HEADER_SIZE, bound, content, len);
	if (ZSTD_isError(plen))
		return zstd_err(plen);
	if (plen >= len) {
		memcpy(hdr + SAF_CHUNK_HEADER_SIZE, content, len);
		plen = len;
		flags = 0;
	}
	saf_put_le32(hdr, type);
	saf_put_le16(hdr + 4, SAF_CHUNK_HEADER_SIZE);
	saf_put_le16(hdr + 6, flags);
	saf_put_le32(hdr + 8, (uint32_t)plen);
	saf_put_le32(hdr + 12, (uint32_t)len);
	saf_put_le32(hdr + 16, w->seq);
	saf_put_le32(hdr + 20, saf_crc32(hdr, hdr + SAF_CHUNK_HEADER_SIZE, plen));
	err = write_all(w->fd, hdr, SAF_CHUNK_HEADER_SIZE + plen);
	if (err)
		return err;
	w->seq++;
	w->bytes += SAF_CHUNK_HEADER_SIZE + plen;
	return 0;
}

/* Write buffers 0..@last (flush order) that hold records; errors stick. */
static int write_bufs(struct saf_writer *w, size_t last)
{
	size_t i;

	for (i = 0; i <= last && !w->err; i++) {
		struct saf_buf *b = &w->bufs[i];

		if (!b->len)
			continue;
		w->err = write_chunk(w, flush_order[i], b->p, b->len);
		b->len = 0;
		if (i == SAMPLES_BUF && w->iv_open)
			w->iv_head_needed = true;
	}
	return w->err;
}

static int write_header(struct saf_writer *w)
{
	uint8_t h[SAF_FILE_HEADER_SIZE] = {0};
	int err;

	memcpy(h, SAF_MAGIC, SAF_MAGIC_LEN);
	saf_put_le16(h + 8, SAF_VERSION_MAJOR);
	saf_put_le16(h + 10, SAF_VERSION_MINOR);
	saf_put_le16(h + 12, SAF_FILE_HEADER_SIZE);
	saf_put_le16(h + 14, 0);
	saf_put_le32(h + 16, 0);
	saf_put_le32(h + 20, saf_crc32(h, NULL, 0));
	err = write_all(w->fd, h, sizeof(h));
	if (!err)
		w->bytes = sizeof(h);
	return err;
}

static int set_opts(struct saf_writer *w, const struct saf_writer_opts *opts)
{
	w->level = 3;
	w->target = SAF_DEFAULT_CHUNK_TARGET;
	if (!opts)
		return 0;
	if (opts->sz < offsetof(struct saf_writer_opts, zstd_level) + sizeof(int))
		return -EINVAL;
	if (opts->zstd_level)
		w->level = opts->zstd_level;
	if (w->level < ZSTD_minCLevel() || w->level > ZSTD_maxCLevel())
		return -EINVAL;
	if (opts->sz >= offsetof(struct saf_writer_opts, chunk_target) + sizeof(size_t) &&
	    opts->chunk_target)
		w->target = opts->chunk_target;
	return w->target > SAF_MAX_CHUNK_TARGET ? -EINVAL : 0;
}

struct saf_writer *saf_writer__open_fd(int fd, const struct saf_writer_opts *opts)
{
	struct saf_writer *w = NULL;
	int err;

	w = saf_malloc(sizeof(*w));
	if (!w) {
		err = -ENOMEM;
		goto cleanup;
	}
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	err = set_opts(w, opts);
	if (err)
		goto cleanup;
	w->cctx = ZSTD_createCCtx_advanced(saf_zstd_mem());
	if (!w->cctx) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->level))) {
		err = -EINVAL;
		goto cleanup;
	}
	err = write_header(w);
cleanup:
	if (err) {
		saf_writer__free(w);
		errno = -err;
		return NULL;
	}
	return w;
}

/* Append one record to its chunk buffer, writing chunks once past the target. */
static int append(struct saf_writer *w, const struct saf_record *rec)
{
	int idx = buf_index(saf_rec_chunk_type(rec->kind));
	struct saf_buf *b;
	int err;

	if (idx < 0)
		return -EINVAL;
	b = &w->bufs[idx];
	if ((size_t)idx == SAMPLES_BUF && !b->len && w->iv_head_needed &&
	    rec->kind != SAF_REC_INTERVAL) {
		struct saf_record head = {.kind = SAF_REC_INTERVAL, .interval = w->iv};

		err = saf_rec_encode(b, &head);
		if (err)
			return err;
	}
	/*
	 * "USYMS chunk": a USYM belongs to the SYMTAB before it in its chunk, so
	 * a SYMTAB is kept and written lazily ahead of the first USYM of every
	 * USYMS chunk (re-writing what a reader returned stays byte-identical).
	 */
	if (rec->kind == SAF_REC_SYMTAB) {
		w->symtab.len = 0;
		err = saf_rec_encode(&w->symtab, rec);
		if (err || !b->len)
			return err;
	}
	if ((size_t)idx == USYMS_BUF && !b->len &&
	    (rec->kind == SAF_REC_USYM || rec->kind == SAF_REC_ULINE) && w->symtab.len) {
		err = saf_buf_reserve(b, w->symtab.len);
		if (err)
			return err;
		memcpy(b->p, w->symtab.p, w->symtab.len);
		b->len = w->symtab.len;
	}
	err = saf_rec_encode(b, rec);
	if (err)
		return err;
	if ((size_t)idx == SAMPLES_BUF)
		w->iv_head_needed = false;
	/* Earlier types go first, so a chunk's references are already defined. */
	if (b->len >= w->target)
		return write_bufs(w, (size_t)idx);
	return 0;
}

static int usable(const struct saf_writer *w)
{
	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	return w->finished ? -EINVAL : 0;
}

int saf_writer__add(struct saf_writer *w, const struct saf_record *rec)
{
	int err = usable(w);

	if (err)
		return err;
	if (!rec)
		return -EINVAL;
	switch (rec->kind) {
	case SAF_REC_META:
	case SAF_REC_END:
		return -EINVAL;
	case SAF_REC_INTERVAL:
		return saf_writer__interval(w, &rec->interval);
	case SAF_REC_LOSS:
		return saf_writer__interval_end(w, &rec->loss);
	case SAF_REC_COUNT:
	case SAF_REC_USTACK:
	case SAF_REC_USTACK_SPARSE:
	case SAF_REC_OFFCPU:
		if (!w->iv_open)
			return -EINVAL;
		break;
	default:
		break;
	}
	return append(w, rec);
}

static bool buffers_empty(const struct saf_writer *w)
{
	size_t i;

	for (i = 0; i < NBUF; i++)
		if (w->bufs[i].len)
			return false;
	return true;
}

/* META and END chunks hold one record each and are written at once. */
static int write_single(struct saf_writer *w, const struct saf_record *rec, uint32_t type)
{
	int err;

	w->tmp.len = 0;
	err = saf_rec_encode(&w->tmp, rec);
	if (err)
		return err;
	err = write_chunk(w, type, w->tmp.p, w->tmp.len);
	if (err && err != -ENOMEM && err != -EINVAL)
		w->err = err;
	return err;
}

int saf_writer__meta(struct saf_writer *w, const struct saf_meta *meta)
{
	struct saf_record rec = {.kind = SAF_REC_META};
	int err = usable(w);

	if (err)
		return err;
	if (!meta || w->seq || !buffers_empty(w) || w->iv_open)
		return -EINVAL;
	rec.meta = *meta;
	return write_single(w, &rec, SAF_CHUNK_META);
}

int saf_writer__interval(struct saf_writer *w, const struct saf_interval *iv)
{
	struct saf_record rec = {.kind = SAF_REC_INTERVAL};
	int err = usable(w);

	if (err)
		return err;
	if (!iv)
		return -EINVAL;
	rec.interval = *iv;
	err = append(w, &rec);
	if (err)
		return err;
	w->iv = *iv;
	w->iv_open = true;
	w->iv_head_needed = !w->bufs[SAMPLES_BUF].len;
	return 0;
}

int saf_writer__interval_end(struct saf_writer *w, const struct saf_loss *loss)
{
	struct saf_record rec = {.kind = SAF_REC_LOSS};
	int err = usable(w);

	if (err)
		return err;
	if (!w->iv_open)
		return -EINVAL;
	if (loss) {
		rec.loss = *loss;
		rec.loss.seq = w->iv.seq;
		err = append(w, &rec);
		if (err)
			return err;
	}
	w->iv_open = false;
	w->iv_head_needed = false;
	return saf_writer__flush(w);
}

int saf_writer__flush(struct saf_writer *w)
{
	int err = usable(w);

	if (err)
		return err;
	return write_bufs(w, NBUF - 1);
}

int saf_writer__finish(struct saf_writer *w, const struct saf_end *end)
{
	struct saf_record rec = {.kind = SAF_REC_END};
	int err = saf_writer__flush(w);

	if (err)
		return err;
	if (end)
		rec.end = *end;
	rec.end.chunks = w->seq;
	err = write_single(w, &rec, SAF_CHUNK_END);
	if (!err)
		w->finished = true;
	return err;
}

int saf_writer__next_file(struct saf_writer *w, int fd)
{
	int err;

	if (!w->finished)
		return -EINVAL;
	/* finish() flushed every buffer: only the per-file state is reset */
	w->fd = fd;
	w->err = 0;
	w->seq = 0;
	w->bytes = 0;
	w->iv_open = false;
	w->iv_head_needed = false;
	w->symtab.len = 0;
	w->finished = false;
	err = write_header(w);
	if (err)
		w->err = err;
	return err;
}

uint64_t saf_writer__bytes(const struct saf_writer *w)
{
	return w ? w->bytes : 0;
}

void saf_writer__free(struct saf_writer *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < NBUF; i++)
		saf_buf_release(&w->bufs[i]);
	saf_buf_release(&w->out);
	saf_buf_release(&w->tmp);
	saf_buf_release(&w->symtab);
	ZSTD_freeCCtx(w->cctx);
	saf_free(w);
}
