// SPDX-License-Identifier: MIT
/*
 * saf_prefetch.c - the reader's second thread (saf_reader_opts.prefetch):
 * while one chunk's records are handed out, the next chunk is read,
 * checksummed, decompressed, validated and decoded on a shadow reader with
 * buffers of its own. Its result is used only when it validated whole at
 * the offset and sequence number the reader reached; anything else (damage,
 * truncation, resync) is done again on the caller's thread, as without it.
 */
#include <stddef.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "saf_chunk.h"

enum pf_state { PF_IDLE, PF_QUEUED, PF_DONE };

/*
 * Decoded records of one chunk, at most: a 64 MiB chunk of 8-byte records
 * decodes to 8M records of about 56 bytes, twice over (this thread's and the
 * caller's), so a chunk past this is left to the caller's thread, which
 * decodes one record at a time ("Limits" in docs/format.md).
 */
#define PF_MAX_DECODED (16u << 20)

struct saf_prefetch {
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	enum pf_state state;
	bool quit;
	struct saf_reader sh; /* shadow: own buffers, zstd context and messages */
	struct saf_chunk_hdr c;
	const uint8_t *content;
	int ret;
	struct saf_buf precs, pstrs, pips; /* the chunk's records, decoded */
};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* pips moved from @old: the frames the records decoded so far point at move with it. */
static void rebase_frames(struct saf_prefetch *pf, const uint8_t *old)
{
	const uint64_t *base = (const uint64_t *)pf->pips.p, *was = (const uint64_t *)old;

	for (size_t at = 0; at < pf->precs.len;) {
		struct saf_record *rec = (struct saf_record *)(pf->precs.p + at);

		if (rec->kind == SAF_REC_STACK)
			rec->stack.ips = base + (rec->stack.ips - was);
		else if (rec->kind == SAF_REC_USTACK || rec->kind == SAF_REC_USTACK_SPARSE)
			rec->ustack.walked = base + (rec->ustack.walked - was);
		at += align8(saf_rec_bytes(rec->kind));
	}
}

/*
 * Room for the frames of a record of @blen bytes after @nips frames: a
 * frame takes a byte at least. Grown (and the records rebased) when a
 * chunk holds more frames than first reserved. @return 0 or -ENOMEM.
 */
static int reserve_frames(struct saf_prefetch *pf, size_t nips, uint64_t blen)
{
	const uint8_t *old = pf->pips.p;
	size_t need = (nips + (size_t)blen) * sizeof(uint64_t);

	if (need <= pf->pips.cap)
		return 0;
	pf->pips.len = nips * sizeof(uint64_t);
	if (saf_buf_reserve(&pf->pips, need - pf->pips.len))
		return -ENOMEM;
	if (pf->pips.p != old && old)
		rebase_frames(pf, old);
	return 0;
}

/*
 * Validate and decode every record of the chunk in one pass (the checks
 * check_records() makes, then the caller's thread's decoding): kind and
 * member into precs, strings and frames into pstrs and pips, whose
 * pointers the records keep. A string costs its bytes and a length byte
 * (the record that fails may add a few empty strings): csize bytes hold
 * them all. Frames are a byte at least, and far fewer than csize: pips
 * grows as needed. Any failure leaves the chunk to the caller's thread,
 * which reports it. @return 0, or -errno.
 */
static int predecode(struct saf_prefetch *pf, const uint8_t *p, const uint8_t *end)
{
	struct saf_arena a = {0};
	struct saf_record rec;
	size_t nips = 0;
	uint64_t blen;

	pf->precs.len = pf->pips.len = 0;
	if (saf_buf_reserve(&pf->pstrs, (size_t)(end - p) + 64))
		return -ENOMEM;
	a.arena = (char *)pf->pstrs.p;
	a.arena_cap = pf->pstrs.cap; /* past it (empty strings cost a byte): the caller's thread */
	a.check = true;
	while (p < end) {
		size_t n;
		int ret;

		if (saf_varint_get(&p, end, &blen) || blen > (uint64_t)(end - p))
			return -EBADMSG;
		if (reserve_frames(pf, nips, blen))
			return -ENOMEM;
		/* none yet when no record had a body: NULL + 0 is undefined */
		a.ips = pf->pips.p ? (uint64_t *)pf->pips.p + nips : NULL;
		ret = saf_rec_decode(p, blen, &rec, &a);
		p += blen;
		if (ret < 0)
			return ret;
		if (!ret)
			rec.kind = 0;
		else if (rec.kind == SAF_REC_STACK)
			nips += rec.stack.nframes;
		else if (rec.kind == SAF_REC_USTACK || rec.kind == SAF_REC_USTACK_SPARSE)
			nips += rec.ustack.nwalked;
		n = saf_rec_bytes(rec.kind);
		if (pf->precs.len + align8(n) > PF_MAX_DECODED || nips > PF_MAX_DECODED / 8)
			return -EFBIG;
		if (saf_buf_reserve(&pf->precs, align8(n)))
			return -ENOMEM;
		memcpy(pf->precs.p + pf->precs.len, &rec, n);
		pf->precs.len += align8(n);
	}
	return 0;
}

/**
 * saf_prefetch_next() - the next record the prefetch thread decoded.
 * @return 1, or 0 when the chunk is used up.
 */
int saf_prefetch_next(struct saf_reader *r, struct saf_record *rec)
{
	while (r->pcur < r->pend) {
		enum saf_rec_kind k;
		size_t n;

		memcpy(&k, r->pcur, sizeof(k));
		n = saf_rec_bytes(k);
		memcpy(rec, r->pcur, n);
		r->pcur += align8(n);
		if (k)
			return 1;
		r->info.skipped_records++;
	}
	r->pcur = r->pend = NULL;
	r->cp = r->cend; /* nothing left to decode */
	return 0;
}

static void *worker(void *arg)
{
	struct saf_prefetch *pf = arg;

	pthread_mutex_lock(&pf->mu);
	for (;;) {
		while (pf->state != PF_QUEUED && !pf->quit)
			pthread_cond_wait(&pf->cv, &pf->mu);
		if (pf->quit)
			break;
		pthread_mutex_unlock(&pf->mu);
		pf->sh.err = 0;
		pf->ret = saf_chunk_check(&pf->sh, &pf->c, &pf->content);
		if (pf->ret > 0 && pf->content &&
		    predecode(pf, pf->content, pf->content + pf->c.csize))
			pf->ret = 0; /* damage or no memory: the caller's thread does it */
		pthread_mutex_lock(&pf->mu);
		pf->state = PF_DONE;
		pthread_cond_broadcast(&pf->cv);
	}
	pthread_mutex_unlock(&pf->mu);
	return NULL;
}

/**
 * saf_prefetch_new() - start the thread and its first chunk. @return 0, or
 * -errno (the reader then reads on its own thread only).
 */
int saf_prefetch_new(struct saf_reader *r)
{
	struct saf_prefetch *pf = saf_malloc(sizeof(*pf));

	if (!pf)
		return -ENOMEM;
	memset(pf, 0, sizeof(*pf));
	pf->sh.fd = r->fd;
	pf->sh.mem = r->mem;
	pf->sh.info.file_size = r->info.file_size;
	pf->sh.st = r->st; /* read by one thread at a time: start to take, or the caller */
	pf->sh.content_budget = r->content_budget;
	pf->sh.max_expand = r->max_expand;
	pf->sh.expand_floor = r->expand_floor;
	pf->sh.defer_records = true;
	pthread_mutex_init(&pf->mu, NULL);
	pthread_cond_init(&pf->cv, NULL);
	if (pthread_create(&pf->tid, NULL, worker, pf)) {
		pthread_mutex_destroy(&pf->mu);
		pthread_cond_destroy(&pf->cv);
		saf_free(pf);
		return -EAGAIN;
	}
	r->pf = pf;
	saf_prefetch_start(r);
	return 0;
}

/** saf_prefetch_start() - check the chunk at r->off ahead, if the thread is free. */
void saf_prefetch_start(struct saf_reader *r)
{
	struct saf_prefetch *pf = r->pf;

	if (r->st ? r->st->eof && r->st->base + r->st->win.len - r->off < SAF_CHUNK_HEADER_SIZE
		  : r->info.file_size - r->off < SAF_CHUNK_HEADER_SIZE)
		return;
	pthread_mutex_lock(&pf->mu);
	if (pf->state == PF_IDLE) {
		pf->sh.off = r->off;
		pf->sh.next_seq = r->next_seq;
		pf->sh.info.content_bytes = r->info.content_bytes;
		pf->state = PF_QUEUED;
		pthread_cond_broadcast(&pf->cv);
	}
	pthread_mutex_unlock(&pf->mu);
}

static void swap_buf(struct saf_buf *a, struct saf_buf *b)
{
	struct saf_buf t = *a;

	*a = *b;
	*b = t;
}

/**
 * saf_prefetch_take() - the chunk at r->off, if the thread validated it:
 * its buffers and arena become @r's. @return 1 with *@c and *@content set
 * as saf_chunk_check() sets them, or 0: check it on this thread.
 */
int saf_prefetch_take(struct saf_reader *r, struct saf_chunk_hdr *c, const uint8_t **content)
{
	struct saf_prefetch *pf = r->pf;
	struct saf_arena a;
	bool had;

	pthread_mutex_lock(&pf->mu);
	while (pf->state == PF_QUEUED)
		pthread_cond_wait(&pf->cv, &pf->mu);
	had = pf->state == PF_DONE;
	pf->state = PF_IDLE;
	pthread_mutex_unlock(&pf->mu);
	if (!had || pf->ret <= 0 || pf->sh.off != r->off || pf->sh.next_seq != r->next_seq)
		return 0;
	swap_buf(&r->payload, &pf->sh.payload);
	swap_buf(&r->content, &pf->sh.content);
	a = r->arena;
	r->arena = pf->sh.arena;
	pf->sh.arena = a;
	swap_buf(&r->precs, &pf->precs);
	swap_buf(&r->pstrs, &pf->pstrs);
	swap_buf(&r->pips, &pf->pips);
	r->pcur = pf->content ? r->precs.p : NULL;
	r->pend = r->pcur ? r->precs.p + r->precs.len : NULL;
	r->seq_ahead = false;
	*c = pf->c;
	*content = pf->content;
	return 1;
}

/** saf_prefetch_free() - stop the thread and release its buffers. */
void saf_prefetch_free(struct saf_reader *r)
{
	struct saf_prefetch *pf = r->pf;

	if (!pf)
		return;
	pthread_mutex_lock(&pf->mu);
	pf->quit = true;
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
	pthread_join(pf->tid, NULL);
	pthread_mutex_destroy(&pf->mu);
	pthread_cond_destroy(&pf->cv);
	saf_buf_release(&pf->precs);
	saf_buf_release(&pf->pstrs);
	saf_buf_release(&pf->pips);
	saf_buf_release(&r->precs);
	saf_buf_release(&r->pstrs);
	saf_buf_release(&r->pips);
	saf_buf_release(&pf->sh.payload);
	saf_buf_release(&pf->sh.content);
	saf_free(pf->sh.arena.arena);
	saf_free(pf->sh.arena.ips);
	ZSTD_freeDCtx(pf->sh.dctx);
	saf_free(pf);
	r->pf = NULL;
}
