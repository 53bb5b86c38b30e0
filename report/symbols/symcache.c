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

#include "grow.h"
#include "lowerbound.h"
#include "symcache_int.h"

struct rpt_symcache {
	int dirfd;
	uint64_t max_bytes;
	unsigned int seq; /* temporary file names */
};

/* ---- directory ---------------------------------------------------------- */

struct rpt_symcache *rpt_symcache__open(const char *dir, uint64_t max_bytes)
{
	return rpt_symcache__open_note(dir, max_bytes, NULL, 0);
}

struct rpt_symcache *rpt_symcache__open_note(const char *dir, uint64_t max_bytes, char *note,
					     size_t cap)
{
	struct rpt_symcache *c = NULL;
	int fd;

	fd = rpt_symcache_dir__open_note(dir, note, cap);
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
	e->blob = "";
	e->nblob = 1;
	return e;
}

void rpt_symcache_ent__free(struct rpt_symcache_ent *e)
{
	if (!e)
		return;
	free(e->file);
	rpt_strpool__fini(&e->pool);
	rpt_hmap__fini(&e->index);
	SAC_FREE_ALL(e->recs, e->frames, e);
}

struct off_key {
	const struct rpt_symcache_ent *e;
	uint64_t off;
};

static uint64_t frec_off(const struct rpt_symcache_ent *e, size_t i)
{
	return sc_le(e->frecs + i * SC_REC, 8);
}

static bool frec_below(const void *ctx, size_t i)
{
	const struct off_key *k = ctx;

	return frec_off(k->e, i) < k->off;
}

/*
 * The file's record of @off: binary search, the records are sorted by
 * offset, each offset once (body_check()).
 */
static bool file_find(const struct rpt_symcache_ent *e, uint64_t off, struct sc_rec *r)
{
	size_t i = sac_lower_bound(e->nfrecs, frec_below, &(struct off_key){e, off});

	if (i == e->nfrecs || frec_off(e, i) != off)
		return false;
	*r = sc_file_rec(e, (uint32_t)i);
	return true;
}

int rpt_symcache_ent__get(const struct rpt_symcache_ent *e, uint64_t off, uint64_t pgoff,
			  struct rpt_symcache_frame *out, int cap)
{
	bool mem = false;
	struct sc_rec r;
	uint64_t i;
	int n;

	if (e->nrecs && rpt_hmap__get(&e->index, off, &i)) {
		r = e->recs[i];
		mem = true;
	} else if (!file_find(e, off, &r)) {
		return -ENOENT;
	}
	if (r.pgoff != pgoff)
		return -ENOENT;
	n = r.n < (uint32_t)cap ? (int)r.n : cap;
	for (int k = 0; k < n; k++) {
		const uint8_t *p = e->fframes + (size_t)(r.first + k) * SC_FRAME;

		if (mem)
			out[k] = e->frames[r.first + k];
		else
			out[k] = (struct rpt_symcache_frame){sc_le(p, 4), sc_le(p + 4, 4)};
	}
	return n;
}

int64_t rpt_symcache_ent__name(struct rpt_symcache_ent *e, const char *name)
{
	int64_t p = rpt_strpool__intern(&e->pool, name, strlen(name));

	if (p < 0 || (uint64_t)e->nblob - 1 + p > UINT32_MAX)
		return -ENOMEM;
	return p ? e->nblob - 1 + p : 0;
}

const char *rpt_symcache_ent__str(const struct rpt_symcache_ent *e, uint32_t name)
{
	if (name < e->nblob)
		return e->blob + name;
	return rpt_strpool__str(&e->pool, name - e->nblob + 1);
}

int rpt_symcache_ent__put_frames(struct rpt_symcache_ent *e, uint64_t off, uint64_t pgoff,
				 const struct rpt_symcache_frame *f, int n, bool last)
{
	uint64_t i;

	if (n < 0 || off == UINT64_MAX || SAC_GROW(e->frames, e->frames_cap, e->nframes + n, 64) ||
	    e->nframes + n > UINT32_MAX)
		return -ENOMEM;
	if (last) { /* no lookup follows: no index; the last of an offset is written */
		if (SAC_GROW(e->recs, e->recs_cap, e->nrecs + 1, 64))
			return -ENOMEM;
		i = e->nrecs++;
	} else if (!rpt_hmap__get(&e->index, off, &i)) {
		if (SAC_GROW(e->recs, e->recs_cap, e->nrecs + 1, 64) ||
		    rpt_hmap__put(&e->index, off, e->nrecs))
			return -ENOMEM;
		i = e->nrecs++;
	}
	e->recs[i] = (struct sc_rec){off, pgoff, e->nframes, n};
	if (n)
		memcpy(e->frames + e->nframes, f, n * sizeof(*f));
	e->nframes += n;
	e->dirty = true;
	return 0;
}

int rpt_symcache_ent__put(struct rpt_symcache_ent *e, uint64_t off, uint64_t pgoff,
			  const char *const *names, const uint32_t *kinds, int n)
{
	struct rpt_symcache_frame f[64];

	if (n < 0 || n > 64)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		int64_t name = rpt_symcache_ent__name(e, names[i]);

		if (name < 0)
			return -ENOMEM;
		f[i] = (struct rpt_symcache_frame){name, kinds[i]};
	}
	return rpt_symcache_ent__put_frames(e, off, pgoff, f, n, false);
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
	err = sc_image_read(e, buf, len); /* @e owns @buf */
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

	if (!e->dirty || (!e->nrecs && !e->nfrecs))
		return 0;
	buf = sc_image_write(e, &len);
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
