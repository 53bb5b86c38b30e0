/* SPDX-License-Identifier: MIT */
/*
 * symcache_int.h - an entry of the symbol cache as symcache.c (lookups,
 * load, store) and symcache_img.c (the file image, docs/symcache.md) share
 * it. Not for other files.
 */
#ifndef SA_REPORT_SYMCACHE_INT_H
#define SA_REPORT_SYMCACHE_INT_H

#include <endian.h>
#include <string.h>

#include "symcache.h"

#define SC_REC	 24 /* bytes of a record in the file: off, pgoff, first, n */
#define SC_FRAME 8  /* bytes of a frame: name, kind */

struct sc_rec {
	uint64_t off, pgoff;
	uint32_t first, n;
};

/*
 * Names are ids: below nblob an offset in the file's string blob, else
 * nblob - 1 + an offset in pool (the names this run added).
 */
struct rpt_symcache_ent {
	char hex[RPT_SYMCACHE_HEX_MAX + 1];
	struct rpt_symcache_id id;
	uint32_t facts;
	/* what the file held, checked and read in place: records sorted by offset */
	uint8_t *file;
	const uint8_t *frecs, *fframes;
	uint32_t nfrecs, nfframes;
	const char *blob; /* "" when there was no file */
	uint32_t nblob;
	/* what this run added; a record here replaces the file's of its offset */
	struct rpt_strpool pool;
	struct rpt_hmap index; /* off -> index in recs */
	struct sc_rec *recs;
	size_t nrecs, recs_cap;
	struct rpt_symcache_frame *frames;
	size_t nframes, frames_cap;
	bool dirty;
};

/** sc_le() - the little-endian value of @bytes (4 or 8) bytes at @p. */
static inline uint64_t sc_le(const uint8_t *p, int bytes)
{
	uint32_t v4;
	uint64_t v8;

	if (bytes == 4) {
		memcpy(&v4, p, 4);
		return le32toh(v4);
	}
	memcpy(&v8, p, 8);
	return le64toh(v8);
}

/** sc_file_rec() - record @i of the file's records. */
static inline struct sc_rec sc_file_rec(const struct rpt_symcache_ent *e, uint32_t i)
{
	const uint8_t *p = e->frecs + (size_t)i * SC_REC;

	return (struct sc_rec){sc_le(p, 8), sc_le(p + 8, 8), sc_le(p + 16, 4), sc_le(p + 20, 4)};
}

/**
 * sc_image_read() - check the file bytes @buf[0..@len) (owned by @e from
 * now on, also on failure) against @e's build id and identity and point
 * @e's file fields into them. @return 0, -EBADMSG (damaged), -ENOTSUP
 * (another version) or -ESTALE (made from other files).
 */
int sc_image_read(struct rpt_symcache_ent *e, uint8_t *buf, size_t len);

/**
 * sc_image_write() - the file image of @e: the file's records and this
 * run's merged by offset, names deduplicated. @return it (malloc()ed, its
 * length in @len), or NULL (ENOMEM).
 */
uint8_t *sc_image_write(const struct rpt_symcache_ent *e, size_t *len);

#endif /* SA_REPORT_SYMCACHE_INT_H */
