/* SPDX-License-Identifier: MIT */
/*
 * saf_chunk.h - the reader's state, shared by the files of the reader:
 * saf_reader.c (file header, chunk after chunk, records), saf_chunk.c
 * (checking one chunk), saf_prefetch.c, saf_resync.c, saf_rdio.c and
 * saf_stream.c. Not installed; other modules use saf.h only.
 */
#ifndef SAF_CHUNK_H
#define SAF_CHUNK_H

#include "saf_internal.h"

struct saf_prefetch;

struct saf_chunk_hdr {
	uint32_t type;
	uint16_t hsize;
	uint16_t flags;
	uint32_t psize;
	uint32_t csize;
	uint32_t seq;
};

/*
 * open_stream(): the bytes [base, base + win.len) read and not yet passed;
 * shared by the reader and its prefetch shadow, which take turns.
 */
struct saf_stream {
	saf_read_fn read;
	void *cookie;
	struct saf_buf win;
	uint64_t base;
	bool eof;
	int err; /* the read error that ended it, -errno */
};

struct saf_reader {
	const uint8_t *mem;    /* open_mem() buffer, or NULL */
	int fd;		       /* open() file, or -1 */
	struct saf_stream *st; /* open_stream(), or NULL (file_size unknown till its end) */
	struct saf_file_info info;
	uint64_t off; /* next chunk's offset */
	uint32_t next_seq;
	int err;		 /* sticky: the error that stopped reading */
	bool done;		 /* no chunk left to load */
	bool resync;		 /* saf_reader_opts.resync: read on after damage */
	bool seq_ahead;		 /* the failing chunk is whole, after a sequence gap */
	bool scan_gave_up;	 /* saf_resync.c spent its checksum budget */
	bool concat;		 /* saf_reader_opts.concat */
	bool after_end;		 /* concat: END read, bytes follow (a header, or junk) */
	bool at_header;		 /* resync stopped at a file header (concat) */
	uint64_t content_budget; /* "Limits": decompressed bytes allowed; 0 = no bound */
	uint32_t max_expand;	 /* ... as opts gave it, for a stream's bound as it is read */
	uint64_t expand_floor;
	struct saf_buf scan; /* saf_resync.c's window */
	ZSTD_DCtx *dctx;
	struct saf_buf payload; /* the chunk read with pread() */
	struct saf_buf content; /* the decompressed payload */
	const uint8_t *cp;	/* next record of the current chunk */
	const uint8_t *cend;
	uint32_t chunk_type;
	uint64_t chunk_off;
	struct saf_arena arena; /* strings and frames of the current record */
	char errmsg[256];
	struct saf_prefetch *pf; /* opts.prefetch: the next chunk, checked ahead */
	bool defer_records;	 /* the prefetch shadow: records checked as they are decoded */
	/* the prefetch thread's records, decoded: handed out from pcur when set */
	struct saf_buf precs, pstrs, pips;
	const uint8_t *pcur, *pend;
};

/*
 * The reader's files call one way: saf_reader.c (open, header, records)
 * -> saf_prefetch.c -> saf_chunk.c; saf_reader.c -> saf_chunk.c and
 * saf_resync.c; saf_reader.c, saf_chunk.c and saf_resync.c -> saf_rdio.c
 * -> saf_stream.c, which they call directly too (docs/design.md draws it;
 * `make check-deps` fails on a circle).
 */

/* saf_chunk.c: check the chunk at r->off; only r's buffers and messages change */
int saf_chunk_check(struct saf_reader *r, struct saf_chunk_hdr *c, const uint8_t **content);

/* saf_prefetch.c: the chunk at r->off checked on a second thread */
int saf_prefetch_new(struct saf_reader *r);
void saf_prefetch_start(struct saf_reader *r);
int saf_prefetch_take(struct saf_reader *r, struct saf_chunk_hdr *c, const uint8_t **content);
void saf_prefetch_free(struct saf_reader *r);
int saf_prefetch_next(struct saf_reader *r, struct saf_record *rec);

/* saf_resync.c: after a damaged chunk, stop or read on at the next valid one */
int saf_chunk_damaged(struct saf_reader *r, int err);

/* saf_rdio.c: bytes, messages and the expansion bound, for every stage */
int saf_rd_fail(struct saf_reader *r, int err, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void saf_rd_warn(struct saf_reader *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const uint8_t *saf_rd_fetch(struct saf_reader *r, uint64_t off, size_t len, struct saf_buf *b,
			    int *err);
void saf_rd_set_budget(struct saf_reader *r, uint32_t ratio, uint64_t floor);
uint64_t saf_rd_budget(const struct saf_reader *r, uint64_t end);

/* saf_stream.c: a file's or a stream's bytes, asked the same way */
int64_t saf_rd_have(struct saf_reader *r, uint64_t off, uint64_t want);
const uint8_t *saf_rd_stream_fetch(struct saf_reader *r, uint64_t off, size_t len,
				   struct saf_buf *b, int *err);
void saf_rd_release(struct saf_reader *r, uint64_t off);
int64_t saf_rd_size(struct saf_reader *r);
uint64_t saf_rd_bound_base(const struct saf_reader *r, uint64_t end);

#endif /* SAF_CHUNK_H */
