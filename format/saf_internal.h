/* SPDX-License-Identifier: MIT */
/*
 * saf_internal.h - helpers shared by the writer and the reader of format/:
 * the allocation hook, little-endian and varint codecs, a growable byte
 * buffer and the record codec. Not installed; other modules use saf.h only.
 */
#ifndef SAF_INTERNAL_H
#define SAF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_customMem, ZSTD_create?Ctx_advanced */
#include <zstd.h>
#include <zstd_errors.h>

#include "saf.h"

#define SAF_VARINT_MAX		 10 /* "Varints": 64 bits in 7-bit groups */
#define SAF_CHUNK_FLAG_ZSTD	 1u
#define SAF_DEFAULT_CHUNK_TARGET (1u << 20)
/* The writer refuses a larger target so one record more stays under the limit. */
#define SAF_MAX_CHUNK_TARGET (SAF_CHUNK_MAX_CONTENT / 2)
/* "Chunk header": slack allowed over ZSTD_compressBound(content_size). */
#define SAF_PAYLOAD_SLACK 64

/* saf_util.c: every allocation of format/ goes through these. */
void *saf_malloc(size_t size);
void *saf_realloc(void *ptr, size_t size);
void saf_free(void *ptr);
ZSTD_customMem saf_zstd_mem(void);

static inline void saf_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void saf_put_le32(uint8_t *p, uint32_t v)
{
	saf_put_le16(p, (uint16_t)v);
	saf_put_le16(p + 2, (uint16_t)(v >> 16));
}

static inline uint16_t saf_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t saf_get_le32(const uint8_t *p)
{
	return (uint32_t)saf_get_le16(p) | ((uint32_t)saf_get_le16(p + 2) << 16);
}

/* saf_urun.c: 0, or -EBADMSG / -EOVERFLOW for runs no writer may write */
int saf_urun_check(const struct saf_bytes *runs);

/* saf_varint.c */
size_t saf_varint_put(uint8_t *p, uint64_t v);
int saf_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v);
uint32_t saf_crc32(const uint8_t *hdr20, const uint8_t *rest, size_t rest_len);

/* A growable byte buffer; the owner releases it with saf_buf_release(). */
struct saf_buf {
	uint8_t *p;
	size_t len;
	size_t cap;
};

/* room for @more bytes past len, doubling from 256; 0 or -ENOMEM */
int saf_buf_reserve(struct saf_buf *b, size_t more);
/* capacity at least @cap exactly (no doubling: a bound stays a bound); 0 or -ENOMEM */
int saf_buf_grow_to(struct saf_buf *b, size_t cap);
int saf_buf_put_varint(struct saf_buf *b, uint64_t v);
void saf_buf_release(struct saf_buf *b);

/* saf_encode.c */
int saf_rec_check(const struct saf_record *rec);
int saf_rec_encode(struct saf_buf *b, const struct saf_record *rec);
uint32_t saf_rec_chunk_type(enum saf_rec_kind kind);

/*
 * saf_decode.c. Decoding runs twice per chunk: first with arena == NULL to
 * validate and measure (arena_len, max_frames grow), then with an arena of
 * at least that size and an ips array of max_frames entries, which cannot
 * fail. Strings are copied into the arena NUL-terminated.
 */
struct saf_arena {
	char *arena;
	size_t arena_len;
	size_t arena_cap;
	uint64_t *ips;
	uint32_t max_frames;
	const char *why; /* reason of the last decode failure */
	bool check;	 /* also the checks done once per chunk (a USTACK_SPARSE's runs) */
};

int saf_rec_decode(const uint8_t *body, size_t len, struct saf_record *rec, struct saf_arena *a);

/* Bytes of a record up to the end of union member @m. */
#define REC_BYTES(m) (offsetof(struct saf_record, m) + sizeof(((struct saf_record *)0)->m))

/** saf_rec_bytes() - the bytes of a record of kind @k: its kind and its member of the union. */
static inline size_t saf_rec_bytes(enum saf_rec_kind k)
{
	switch (k) {
	case SAF_REC_META:
		return REC_BYTES(meta);
	case SAF_REC_PROC:
		return REC_BYTES(proc);
	case SAF_REC_MAP:
		return REC_BYTES(map);
	case SAF_REC_COMM:
		return REC_BYTES(comm);
	case SAF_REC_EXIT:
		return REC_BYTES(exit);
	case SAF_REC_CPUGAP:
		return REC_BYTES(cpugap);
	case SAF_REC_STACK:
		return REC_BYTES(stack);
	case SAF_REC_INTERVAL:
		return REC_BYTES(interval);
	case SAF_REC_COUNT:
		return REC_BYTES(count);
	case SAF_REC_LOSS:
		return REC_BYTES(loss);
	case SAF_REC_KSYM:
		return REC_BYTES(ksym);
	case SAF_REC_SYMTAB:
		return REC_BYTES(symtab);
	case SAF_REC_USYM:
		return REC_BYTES(usym);
	case SAF_REC_JITSYM:
		return REC_BYTES(jitsym);
	case SAF_REC_END:
		return REC_BYTES(end);
	case SAF_REC_USTACK:
	case SAF_REC_USTACK_SPARSE:
		return REC_BYTES(ustack);
	case SAF_REC_OFFCPU:
		return REC_BYTES(offcpu);
	case SAF_REC_PYCODE:
		return REC_BYTES(pycode);
	case SAF_REC_ULINE:
		return REC_BYTES(uline);
	}
	return sizeof(enum saf_rec_kind); /* kind 0: a record of unknown kind, skipped */
}

#endif /* SAF_INTERNAL_H */
