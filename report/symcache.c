// SPDX-License-Identifier: MIT
/*
 * symcache.c - the on-disk symbolization cache: one file per (build id,
 * name variant), a checksummed little-endian image of the entry (layout in
 * docs/symcache.md), read whole and checked, written to a temporary file
 * and renamed. The directory and its bound are symcache_dir.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symcache.h"

#define SC_MAGIC   "SASYMC\r\n"
#define SC_VERSION 1
#define SC_HDR	   32
#define SC_REC	   24
#define SC_FRAME   8

struct sc_rec {
	uint64_t off, pgoff;
	uint32_t first, n;
};

struct rpt_symcache {
	int dirfd;
	uint64_t max_bytes;
	unsigned int seq; /* temporary file names */
};

struct rpt_symcache_ent {
	char hex[RPT_SYMCACHE_HEX_MAX + 1];
	struct rpt_symcache_id id;
	uint32_t facts;
	struct rpt_strpool pool;
	struct rpt_hmap index; /* off -> index in recs */
	struct sc_rec *recs;
	size_t nrecs, recs_cap;
	struct rpt_symcache_frame *frames;
	size_t nframes, frames_cap;
	bool dirty;
};

/* ---- directory ---------------------------------------------------------- */

struct rpt_symcache *rpt_symcache__open(const char *dir, uint64_t max_bytes)
{
	struct rpt_symcache *c = NULL;
	int fd;

	fd = rpt_symcache_dir__open(dir);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	c->dirfd = fd;
	c->max_bytes = max_bytes ? max_bytes : RPT_SYMCACHE_MAX_BYTES;
	return c;
}

void rpt_symcache__free(struct rpt_symcache *c)
{
	if (!c)
		return;
	close(c->dirfd);
	free(c);
}

int rpt_symcache__dirfd(const struct rpt_symcache *c)
{
	return c->dirfd;
}

static void file_name(char *buf, size_t cap, const char *hex, uint32_t variant)
{
	snprintf(buf, cap, "%s-%u" RPT_SYMCACHE_SUFFIX, hex, variant);
}

bool rpt_symcache__has(struct rpt_symcache *c, const char *hex, uint32_t variant)
{
	char name[RPT_SYMCACHE_HEX_MAX + 32];
	struct stat st;

	file_name(name, sizeof(name), hex, variant);
	return !fstatat(c->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode);
}

/* ---- entries ------------------------------------------------------------ */

static struct rpt_symcache_ent *ent_new(const char *hex, const struct rpt_symcache_id *id)
{
	struct rpt_symcache_ent *e = calloc(1, sizeof(*e));

	if (!e || rpt_strpool__init(&e->pool)) {
		free(e);
		errno = ENOMEM;
		return NULL;
	}
	snprintf(e->hex, sizeof(e->hex), "%s", hex);
	e->id = *id;
	return e;
}

void rpt_symcache_ent__free(struct rpt_symcache_ent *e)
{
	if (!e)
		return;
	rpt_strpool__fini(&e->pool);
	rpt_hmap__fini(&e->index);
	free(e->recs);
	free(e->frames);
	free(e);
}

int rpt_symcache_ent__get(const struct rpt_symcache_ent *e, uint64_t off, uint64_t pgoff,
			  const struct rpt_symcache_frame **frames)
{
	const struct sc_rec *r;
	uint64_t i;

	if (!rpt_hmap__get(&e->index, off, &i))
		return -ENOENT;
	r = &e->recs[i];
	if (r->pgoff != pgoff)
		return -ENOENT;
	*frames = e->frames + r->first;
	return r->n;
}

/* Append a record; the frames are the caller's to add at e->frames[first]. */
static int rec_add(struct rpt_symcache_ent *e, uint64_t off, uint64_t pgoff, uint32_t n)
{
	uint64_t i;

	if (rpt_grow((void **)&e->frames, &e->frames_cap, e->nframes + n, sizeof(*e->frames), 64) ||
	    e->nframes + n > UINT32_MAX)
		return -ENOMEM;
	if (!rpt_hmap__get(&e->index, off, &i)) {
		if (rpt_grow((void **)&e->recs, &e->recs_cap, e->nrecs + 1, sizeof(*e->recs), 64) ||
		    rpt_hmap__put(&e->index, off, e->nrecs))
			return -ENOMEM;
		i = e->nrecs++;
	}
	e->recs[i] = (struct sc_rec){off, pgoff, e->nframes, n};
	return 0;
}

int rpt_symcache_ent__put(struct rpt_symcache_ent *e, uint64_t off, uint64_t pgoff,
			  const char *const *names, const uint32_t *kinds, int n)
{
	if (n < 0 || off == UINT64_MAX || rec_add(e, off, pgoff, n))
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		int64_t name = rpt_strpool__intern(&e->pool, names[i], strlen(names[i]));

		if (name < 0)
			return -ENOMEM;
		e->frames[e->nframes++] = (struct rpt_symcache_frame){name, kinds[i]};
	}
	e->dirty = true;
	return 0;
}

const char *rpt_symcache_ent__str(const struct rpt_symcache_ent *e, uint32_t name)
{
	return rpt_strpool__str(&e->pool, name);
}

uint32_t rpt_symcache_ent__facts(const struct rpt_symcache_ent *e)
{
	return e->facts;
}

void rpt_symcache_ent__set_facts(struct rpt_symcache_ent *e, uint32_t facts)
{
	if (e->facts != facts)
		e->dirty = true;
	e->facts = facts;
}

/* ---- the file image ------------------------------------------------------- */

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
	uint64_t v = 0;

	for (int i = bytes - 1; p && i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint8_t *put_le(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++, v >>= 8)
		*p++ = v & 0xff;
	return p;
}

static const size_t id_words = 8; /* the u64 fields of struct rpt_symcache_id */

static void id_words_of(const struct rpt_symcache_id *id, uint64_t *w)
{
	const uint64_t v[] = {id->sym_ino, id->sym_size, id->sym_mtime_ns, id->sym_ctime_ns,
			      id->bin_ino, id->bin_size, id->bin_mtime_ns, id->bin_ctime_ns};

	memcpy(w, v, sizeof(v));
}

/* The identity in the file equals @id. */
static bool id_check(struct sc_cur *c, const struct rpt_symcache_id *id)
{
	uint64_t w[8];
	bool same = true;

	id_words_of(id, w);
	for (size_t i = 0; i < id_words; i++)
		same &= get_le(c, 8) == w[i];
	same &= get_le(c, 4) == id->source;
	same &= get_le(c, 4) == id->variant;
	return same && !c->bad;
}

static uint8_t *id_write(uint8_t *p, const struct rpt_symcache_id *id)
{
	uint64_t w[8];

	id_words_of(id, w);
	for (size_t i = 0; i < id_words; i++)
		p = put_le(p, w[i], 8);
	p = put_le(p, id->source, 4);
	return put_le(p, id->variant, 4);
}

/*
 * The string blob is the pool of the entry that wrote it: interning its
 * strings in order rebuilds the same offsets, unless the blob is damaged
 * (then the lengths differ, or a name does not start a string).
 */
static int blob_read(struct rpt_symcache_ent *e, const uint8_t *blob, size_t len)
{
	if (!len || blob[0] || blob[len - 1])
		return -EBADMSG;
	for (size_t i = 1; i < len;) {
		size_t n = strlen((const char *)blob + i);

		if (rpt_strpool__intern(&e->pool, (const char *)blob + i, n) != (int64_t)i)
			return -EBADMSG;
		i += n + 1;
	}
	return e->pool.len == len ? 0 : -EBADMSG;
}

static int body_read(struct rpt_symcache_ent *e, struct sc_cur *c)
{
	uint32_t nrecs = get_le(c, 4), nframes = get_le(c, 4), nstr = get_le(c, 4);
	const uint8_t *recs = take(c, (uint64_t)nrecs * SC_REC);
	const uint8_t *frames = take(c, (uint64_t)nframes * SC_FRAME);
	const uint8_t *blob = take(c, nstr);
	struct sc_cur rc = {recs, frames, false}, fc = {frames, blob, false};

	if (c->bad || c->p != c->end || blob_read(e, blob, nstr))
		return -EBADMSG;
	for (uint32_t i = 0; i < nrecs; i++) {
		uint64_t off = get_le(&rc, 8), pgoff = get_le(&rc, 8);
		uint32_t first = get_le(&rc, 4), n = get_le(&rc, 4);

		if ((uint64_t)first + n > nframes || first != e->nframes)
			return -EBADMSG;
		if (rec_add(e, off, pgoff, n))
			return -ENOMEM;
		for (uint32_t j = 0; j < n; j++) {
			uint32_t name = get_le(&fc, 4), kind = get_le(&fc, 4);

			if (name >= nstr || (name && blob[name - 1]))
				return -EBADMSG;
			e->frames[e->nframes++] = (struct rpt_symcache_frame){name, kind};
		}
	}
	return e->nframes == nframes ? 0 : -EBADMSG;
}

/* Parse file bytes @buf[0..len) into @e, checking them against @hex and @id. */
static int image_read(struct rpt_symcache_ent *e, const uint8_t *buf, size_t len)
{
	struct sc_cur c = {buf, buf + len, false};
	uint64_t plen, sum;
	uint32_t hexlen;
	const uint8_t *hex;

	if (len < SC_HDR || memcmp(buf, SC_MAGIC, 8))
		return -EBADMSG;
	take(&c, 8);
	if (get_le(&c, 4) != SC_VERSION)
		return -ENOTSUP;
	get_le(&c, 4); /* reserved */
	plen = get_le(&c, 8);
	sum = get_le(&c, 8);
	if (plen != len - SC_HDR || rpt_hash_bytes(c.p, plen, SC_VERSION) != sum)
		return -EBADMSG;
	hexlen = get_le(&c, 4);
	hex = take(&c, hexlen);
	if (!hex || hexlen != strlen(e->hex) || memcmp(hex, e->hex, hexlen))
		return -EBADMSG;
	if (!id_check(&c, &e->id))
		return -ESTALE;
	e->facts = get_le(&c, 4);
	return body_read(e, &c);
}

static uint8_t *image_write_body(const struct rpt_symcache_ent *e, uint8_t *p)
{
	uint8_t *frames = p + e->nrecs * SC_REC;
	uint32_t first = 0;

	/* records' frames in record order: replaced frames are dropped */
	for (size_t i = 0; i < e->nrecs; i++) {
		const struct sc_rec *r = &e->recs[i];

		p = put_le(p, r->off, 8);
		p = put_le(p, r->pgoff, 8);
		p = put_le(p, first, 4);
		p = put_le(p, r->n, 4);
		for (uint32_t j = 0; j < r->n; j++) {
			frames = put_le(frames, e->frames[r->first + j].name, 4);
			frames = put_le(frames, e->frames[r->first + j].kind, 4);
		}
		first += r->n;
	}
	memcpy(frames, e->pool.buf, e->pool.len);
	return frames + e->pool.len;
}

/* The file image of @e, malloc()ed, its length in @len; NULL for ENOMEM. */
static uint8_t *image_write(const struct rpt_symcache_ent *e, size_t *len)
{
	size_t hexlen = strlen(e->hex), nframes = 0, plen;
	uint8_t *buf, *p;

	for (size_t i = 0; i < e->nrecs; i++)
		nframes += e->recs[i].n;
	plen = 4 + hexlen + id_words * 8 + 4 * 3 + 3 * 4 + e->nrecs * SC_REC + nframes * SC_FRAME +
	       e->pool.len;
	buf = malloc(SC_HDR + plen);
	if (!buf)
		return NULL;
	p = put_le(buf + SC_HDR, hexlen, 4);
	memcpy(p, e->hex, hexlen);
	p += hexlen;
	p = id_write(p, &e->id);
	p = put_le(p, e->facts, 4);
	p = put_le(p, e->nrecs, 4);
	p = put_le(p, nframes, 4);
	p = put_le(p, e->pool.len, 4);
	p = image_write_body(e, p);
	memcpy(buf, SC_MAGIC, 8);
	p = put_le(buf + 8, SC_VERSION, 4);
	p = put_le(p, 0, 4);
	p = put_le(p, plen, 8);
	put_le(p, rpt_hash_bytes(buf + SC_HDR, plen, SC_VERSION), 8);
	*len = SC_HDR + plen;
	return buf;
}

/* ---- load and store ------------------------------------------------------- */

/* The bytes of cache file @name, malloc()ed; NULL when missing or not ours. */
static uint8_t *file_read(struct rpt_symcache *c, const char *name, size_t *len)
{
	int fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	uint8_t *buf = NULL;
	struct stat st;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size > c->max_bytes || !(buf = malloc(st.st_size + 1)))
		goto cleanup;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, st.st_size - got);

		if (n <= 0)
			break;
		got += n;
	}
	*len = got;
	futimens(fd, NULL); /* used now: the last file eviction takes */
cleanup:
	close(fd);
	return buf;
}

struct rpt_symcache_ent *rpt_symcache__load(struct rpt_symcache *c, const char *hex,
					    const struct rpt_symcache_id *id, bool *hit)
{
	struct rpt_symcache_ent *e;
	char name[RPT_SYMCACHE_HEX_MAX + 32];
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;

	*hit = false;
	if (strlen(hex) > RPT_SYMCACHE_HEX_MAX || !(e = ent_new(hex, id)))
		return NULL;
	file_name(name, sizeof(name), hex, id->variant);
	buf = file_read(c, name, &len);
	if (!buf)
		return e;
	err = image_read(e, buf, len);
	free(buf);
	if (!err) {
		*hit = true;
		return e;
	}
	/* damaged or stale: start empty, and store it again once used */
	rpt_symcache_ent__free(e);
	e = ent_new(hex, id);
	if (e)
		e->dirty = true;
	return e;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

/* A fresh temporary file in the directory; its name in @tmp. */
static int tmp_open(struct rpt_symcache *c, char *tmp, size_t cap)
{
	for (int tries = 0; tries < 8; tries++) {
		int fd;

		snprintf(tmp, cap, RPT_SYMCACHE_TMP "%d-%u-%lx", (int)getpid(), c->seq++,
			 (unsigned long)time(NULL));
		fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd >= 0 || errno != EEXIST)
			return fd < 0 ? -errno : fd;
	}
	return -EEXIST;
}

int rpt_symcache__store(struct rpt_symcache *c, struct rpt_symcache_ent *e)
{
	char name[RPT_SYMCACHE_HEX_MAX + 32], tmp[64];
	uint8_t *buf = NULL;
	size_t len;
	int fd = -1, err;

	if (!e->dirty || !e->nrecs)
		return 0;
	buf = image_write(e, &len);
	if (!buf)
		return -ENOMEM;
	err = len > c->max_bytes ? -EFBIG : 0;
	fd = err ? -1 : tmp_open(c, tmp, sizeof(tmp));
	if (fd < 0) {
		err = err ? err : fd;
		goto cleanup;
	}
	err = write_all(fd, buf, len);
	if (close(fd) && !err)
		err = -errno;
	file_name(name, sizeof(name), e->hex, e->id.variant);
	if (!err && renameat(c->dirfd, tmp, c->dirfd, name))
		err = -errno;
	if (err)
		unlinkat(c->dirfd, tmp, 0);
	else
		e->dirty = false;
cleanup:
	free(buf);
	return err ? err : 1;
}

int rpt_symcache__trim(struct rpt_symcache *c)
{
	return rpt_symcache_dir__trim(c->dirfd, c->max_bytes);
}
