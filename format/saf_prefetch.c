// SPDX-License-Identifier: MIT
/*
 * saf_prefetch.c - the reader's second thread (saf_reader_opts.prefetch):
 * while one chunk's records are handed out, the next chunk is read,
 * checksummed, decompressed and validated on a shadow reader with buffers
 * of its own. Its result is used only when it validated whole at the
 * offset and sequence number the reader reached; anything else (damage,
 * truncation, resync) is done again on the caller's thread, as without it.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "saf_chunk.h"

enum pf_state { PF_IDLE, PF_QUEUED, PF_DONE };

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
};

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

	if (r->info.file_size - r->off < SAF_CHUNK_HEADER_SIZE)
		return;
	pthread_mutex_lock(&pf->mu);
	if (pf->state == PF_IDLE) {
		pf->sh.off = r->off;
		pf->sh.next_seq = r->next_seq;
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
	saf_buf_release(&pf->sh.payload);
	saf_buf_release(&pf->sh.content);
	saf_free(pf->sh.arena.arena);
	saf_free(pf->sh.arena.ips);
	ZSTD_freeDCtx(pf->sh.dctx);
	saf_free(pf);
	r->pf = NULL;
}
