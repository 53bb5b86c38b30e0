// SPDX-License-Identifier: MIT
/*
 * symcache_img.c - the file image of a symbol cache entry (docs/symcache.md):
 * checked once when loaded (checksum, then every bound a lookup relies on)
 * and read in place after that; written with the records of the file and
 * of this run merged by offset, names as they are numbered.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "symcache_int.h"

#define SC_MAGIC "SASYMC\r\n"
/* 2: names without symbol versions, ranked anew; 3: units without .debug_aranges (Go) */
#define SC_VERSION 3
#define SC_HDR	   32
#define SC_IDW	   8 /* the u64 fields of struct rpt_symcache_id */

/*
 * The payload's checksum: FNV-1a's multiply on 8-byte little-endian words
 * (a shift folds the high bits back after each), the tail by bytes, then
 * sac_hash_mix64(). It finds damage, not tampering (the directory is the
 * user's own), at a fifth of the cost of a byte-wise hash.
 */
static uint64_t sc_sum(const uint8_t *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ len;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		h = (h ^ sc_le(p + i, 8)) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return sac_hash_mix64(h);
}

struct sc_cur {
	const uint8_t *p, *end;
	bool bad;
};

static const uint8_t *take(struct sc_cur *c, size_t n)
{
	const uint8_t *p = c->p;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	return p;
}

static uint64_t get_le(struct sc_cur *c, int bytes)
{
	const uint8_t *p = take(c, bytes);

	return p ? sc_le(p, bytes) : 0;
}

static uint8_t *put_le(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++, v >>= 8)
		*p++ = v & 0xff;
	return p;
}

static void id_words(const struct rpt_symcache_id *id, uint64_t w[SC_IDW])
{
	const uint64_t v[SC_IDW] = {id->sym_ino, id->sym_size, id->sym_mtime_ns, id->sym_ctime_ns,
				    id->bin_ino, id->bin_size, id->bin_mtime_ns, id->bin_ctime_ns};

	memcpy(w, v, sizeof(v));
}

/* The identity in the file equals @id. */
static bool id_check(struct sc_cur *c, const struct rpt_symcache_id *id)
{
	uint64_t w[SC_IDW];
	bool same = true;

	id_words(id, w);
	for (int i = 0; i < SC_IDW; i++)
		same &= get_le(c, 8) == w[i];
	same &= get_le(c, 4) == id->source;
	same &= get_le(c, 4) == id->variant;
	return same && !c->bad;
}

static uint8_t *id_write(uint8_t *p, const struct rpt_symcache_id *id)
{
	uint64_t w[SC_IDW];

	id_words(id, w);
	for (int i = 0; i < SC_IDW; i++)
		p = put_le(p, w[i], 8);
	p = put_le(p, id->source, 4);
	return put_le(p, id->variant, 4);
}

/*
 * Every bound a lookup relies on: records sorted by offset with their
 * frames inside the frame array, names starting a string of the blob.
 */
static int body_check(struct rpt_symcache_ent *e, struct sc_cur *c)
{
	uint32_t nrecs = get_le(c, 4), nframes = get_le(c, 4), nstr = get_le(c, 4);
	const uint8_t *recs = take(c, (uint64_t)nrecs * SC_REC);
	const uint8_t *frames = take(c, (uint64_t)nframes * SC_FRAME);
	const char *blob = (const char *)take(c, nstr);

	if (c->bad || c->p != c->end || !nstr || blob[0] || blob[nstr - 1])
		return -EBADMSG;
	e->frecs = recs;
	e->nfrecs = nrecs;
	for (uint32_t i = 0; i < nrecs; i++) {
		struct sc_rec r = sc_file_rec(e, i);

		if ((uint64_t)r.first + r.n > nframes ||
		    (i && r.off <= sc_le(recs + (size_t)(i - 1) * SC_REC, 8)))
			return -EBADMSG;
	}
	for (uint32_t i = 0; i < nframes; i++) {
		uint32_t name = sc_le(frames + (size_t)i * SC_FRAME, 4);

		if (name >= nstr || (name && blob[name - 1]))
			return -EBADMSG;
	}
	e->fframes = frames;
	e->nfframes = nframes;
	e->blob = blob;
	e->nblob = nstr;
	return 0;
}

int sc_image_read(struct rpt_symcache_ent *e, uint8_t *buf, size_t len)
{
	struct sc_cur c = {buf, buf + len, false};
	uint64_t plen, sum;
	uint32_t hexlen;
	const uint8_t *hex;
	int err;

	e->file = buf;
	if (len < SC_HDR || memcmp(buf, SC_MAGIC, 8))
		return -EBADMSG;
	take(&c, 8);
	if (get_le(&c, 4) != SC_VERSION)
		return -ENOTSUP;
	get_le(&c, 4); /* reserved */
	plen = get_le(&c, 8);
	sum = get_le(&c, 8);
	if (plen != len - SC_HDR || sc_sum(c.p, plen) != sum)
		return -EBADMSG;
	hexlen = get_le(&c, 4);
	hex = take(&c, hexlen);
	if (!hex || hexlen != strlen(e->hex) || memcmp(hex, e->hex, hexlen))
		return -EBADMSG;
	if (!id_check(&c, &e->id))
		return -ESTALE;
	e->facts = get_le(&c, 4);
	err = body_check(e, &c);
	if (err) { /* nothing of the file is used */
		e->nfrecs = e->nfframes = 0;
		e->facts = 0;
	}
	return err;
}

/* ---- writing -------------------------------------------------------------- */

/* A record to write: this run's (mem) or the file's, by index. */
struct sc_out {
	uint64_t off;
	uint32_t idx;
	bool mem;
};

/*
 * Sort @v by offset, keeping the order of equal ones (LSD radix sort, 8
 * bits a pass, passes where every key has the same byte skipped): a
 * first report writes tens of thousands of records, and qsort's calls of
 * a comparison cost more than the rest of the writing.
 */
static int out_sort(struct sc_out *v, size_t n)
{
	struct sc_out *tmp = malloc((n + 1) * sizeof(*tmp)), *src = v, *dst = tmp;

	if (!tmp)
		return -ENOMEM;
	for (int shift = 0; shift < 64; shift += 8) {
		size_t count[257] = {0};

		for (size_t i = 0; i < n; i++)
			count[(src[i].off >> shift & 0xff) + 1]++;
		if (n && count[(src[0].off >> shift & 0xff) + 1] == n)
			continue;
		for (int b = 0; b < 256; b++)
			count[b + 1] += count[b];
		for (size_t i = 0; i < n; i++)
			dst[count[src[i].off >> shift & 0xff]++] = src[i];
		src = dst;
		dst = src == v ? tmp : v;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	return 0;
}

/*
 * The records to write, sorted by offset; their frame count in @nframes.
 * Of records with the same offset the last added is kept: this run's
 * replace the file's.
 */
static struct sc_out *out_list(const struct rpt_symcache_ent *e, size_t *n, size_t *nframes)
{
	struct sc_out *v = malloc((e->nfrecs + e->nrecs + 1) * sizeof(*v));
	size_t k = 0;

	*n = *nframes = 0;
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < e->nfrecs; i++)
		v[k++] = (struct sc_out){sc_file_rec(e, i).off, i, false};
	for (size_t i = 0; i < e->nrecs; i++)
		v[k++] = (struct sc_out){e->recs[i].off, i, true};
	if (out_sort(v, k)) {
		free(v);
		return NULL;
	}
	for (size_t i = 0; i < k; i++) {
		if (i + 1 < k && v[i + 1].off == v[i].off)
			continue;
		v[*n] = v[i];
		*nframes += v[i].mem ? e->recs[v[i].idx].n : sc_file_rec(e, v[i].idx).n;
		(*n)++;
	}
	return v;
}

/* Frame @j of output record @o. */
static struct rpt_symcache_frame out_frame(const struct rpt_symcache_ent *e, const struct sc_out *o,
					   uint32_t j)
{
	const uint8_t *p;

	if (o->mem)
		return e->frames[e->recs[o->idx].first + j];
	p = e->fframes + (size_t)(sc_file_rec(e, o->idx).first + j) * SC_FRAME;
	return (struct rpt_symcache_frame){sc_le(p, 4), sc_le(p + 4, 4)};
}

/* Records and frames of @v into @p (records) and @p + nrecs * SC_REC (frames). */
static void body_write(const struct rpt_symcache_ent *e, const struct sc_out *v, size_t n,
		       uint8_t *p)
{
	uint8_t *fp = p + n * SC_REC;
	uint32_t first = 0;

	for (size_t i = 0; i < n; i++) {
		struct sc_rec r = v[i].mem ? e->recs[v[i].idx] : sc_file_rec(e, v[i].idx);

		p = put_le(p, r.off, 8);
		p = put_le(p, r.pgoff, 8);
		p = put_le(p, first, 4);
		p = put_le(p, r.n, 4);
		for (uint32_t j = 0; j < r.n; j++) {
			struct rpt_symcache_frame f = out_frame(e, &v[i], j);

			fp = put_le(fp, f.name, 4);
			fp = put_le(fp, f.kind, 4);
		}
		first += r.n;
	}
}

/*
 * The name blob is the file's followed by this run's pool past its empty
 * name: every name id is its offset in it, so nothing is renumbered (a
 * name both hold is kept twice; a later report of the same binaries adds
 * few).
 */
static uint8_t *image_build(const struct rpt_symcache_ent *e, const struct sc_out *v, size_t n,
			    size_t nframes, size_t *len)
{
	size_t hexlen = strlen(e->hex), body = n * SC_REC + nframes * SC_FRAME;
	size_t head = 4 + hexlen + SC_IDW * 8 + 4 * 2 + 4 + 3 * 4, plen;
	size_t nstr = e->nblob + e->pool.len - 1;
	uint8_t *buf, *p;

	if (nstr > UINT32_MAX)
		return NULL;
	plen = head + body + nstr;
	buf = malloc(SC_HDR + plen);
	if (!buf)
		return NULL;
	p = put_le(buf + SC_HDR, hexlen, 4);
	memcpy(p, e->hex, hexlen);
	p = id_write(p + hexlen, &e->id);
	p = put_le(p, e->facts, 4);
	p = put_le(p, n, 4);
	p = put_le(p, nframes, 4);
	p = put_le(p, nstr, 4);
	body_write(e, v, n, p);
	memcpy(p + body, e->blob, e->nblob);
	memcpy(p + body + e->nblob, e->pool.buf + 1, e->pool.len - 1);
	memcpy(buf, SC_MAGIC, 8);
	p = put_le(buf + 8, SC_VERSION, 4);
	p = put_le(p, 0, 4);
	p = put_le(p, plen, 8);
	put_le(p, sc_sum(buf + SC_HDR, plen), 8);
	*len = SC_HDR + plen;
	return buf;
}

uint8_t *sc_image_write(const struct rpt_symcache_ent *e, size_t *len)
{
	size_t n, nframes;
	struct sc_out *v = out_list(e, &n, &nframes);
	uint8_t *buf;

	if (!v || nframes > UINT32_MAX) {
		free(v);
		return NULL;
	}
	buf = image_build(e, v, n, nframes, len);
	free(v);
	return buf;
}
