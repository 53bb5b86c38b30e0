// SPDX-License-Identifier: MIT
/*
 * rotate.c - the file set of sa-record --rotate: parse the boundary, name
 * each file by its start (UTC, milliseconds, so names sort by time), and
 * keep the set within --keep N files and --keep-size bytes, counting only
 * files whose content says a recorder of this host wrote them
 * (docs/reliability.md, "Never lose a recording"). A name someone else
 * took first is left alone: the file gets the same name with a random
 * suffix instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include "clock.h"
#include "grow.h"
#include "record.h"
#include "rotate.h"

/* "YYYYMMDDTHHMMSS.mmmZ" */
#define STAMP_LEN 20
/* "-xxxxxxxx": the random suffix of a name that was taken */
#define SUFFIX_LEN 9
/*
 * Names tried for one file: the due one, then random suffixes. Anyone who
 * can write the directory can plant every millisecond name ahead (10 s of
 * them is 10,000 links), but not a 32-bit random suffix: 15 collisions in
 * a row take 2^-480 by luck, so the recording never ends for a name.
 */
#define NAME_TRIES 16
/* Bytes read to find a file's META: the header and the META chunk (its two
 * clipped 4 KiB strings included) fit. */
#define HEAD_BYTES (32u << 10)

struct rec_rotate {
	const struct rec_opts *o;
	char *dir, *stem, *ext; /* output = dir/stem + ext */
	int dirfd;
	char *cur;		  /* the current file's name in dir */
	char *path;		  /* dir/cur */
	char stamp[32];		  /* the current file's start, as its name says it */
	char host[256], boot[64]; /* as META says them (output.c) */
	uint8_t *head;		  /* HEAD_BYTES, to read a file's META */
};

struct old_file {
	char *name;
	uint64_t size;
	int boot;    /* 1: recorded since this boot */
	uint64_t at; /* then its CLOCK_MONOTONIC start, else its CLOCK_REALTIME start */
};

int rec_rotate_parse(const char *arg, double *secs, uint64_t *bytes)
{
	char *end;
	double v = strtod(arg, &end);
	double mul = 0;

	*secs = 0;
	*bytes = 0;
	if (end == arg || !(v > 0) || v > 1e12)
		return -EINVAL;
	if (!strcmp(end, "") || !strcmp(end, "s"))
		*secs = v;
	else if (!strcmp(end, "m"))
		*secs = v * 60;
	else if (!strcmp(end, "h"))
		*secs = v * 3600;
	else if (!strcmp(end, "d"))
		*secs = v * 86400;
	else if (end[0] == 'K' || end[0] == 'M' || end[0] == 'G')
		mul = end[0] == 'K' ? 1 << 10 : end[0] == 'M' ? 1 << 20 : 1 << 30;
	else
		return -EINVAL;
	if (mul) {
		if (strcmp(end + 1, "") && strcmp(end + 1, "B") && strcmp(end + 1, "iB"))
			return -EINVAL;
		*bytes = (uint64_t)(v * mul);
	}
	return *secs >= 0.01 || *bytes >= 4096 ? 0 : -EINVAL;
}

static void read_boot_id(char *boot, size_t sz)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	boot[0] = 0;
	if (f) {
		if (!fgets(boot, (int)sz, f))
			boot[0] = 0;
		boot[strcspn(boot, "\n")] = 0;
		fclose(f);
	}
}

struct rec_rotate *rec_rotate__new(const struct rec_opts *o)
{
	struct rec_rotate *rt = calloc(1, sizeof(*rt));
	const char *base, *dot;

	if (!rt)
		return NULL;
	rt->o = o;
	rt->dirfd = -1;
	base = strrchr(o->output, '/');
	base = base ? base + 1 : o->output;
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		dot = base + strlen(base);
	rt->dir = base == o->output	  ? strdup(".")
		  : base == o->output + 1 ? strdup("/")
					  : strndup(o->output, base - o->output - 1);
	rt->stem = strndup(base, dot - base);
	rt->ext = strdup(dot);
	if (!rt->dir || !rt->stem || !rt->ext || !rt->stem[0]) {
		int e = rt->stem && !rt->stem[0] ? EINVAL : ENOMEM;

		rec_rotate__free(rt);
		errno = e;
		return NULL;
	}
	rt->head = malloc(HEAD_BYTES);
	gethostname(rt->host, sizeof(rt->host) - 1);
	read_boot_id(rt->boot, sizeof(rt->boot));
	rt->dirfd = rt->head ? open(rt->dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	if (rt->dirfd < 0) {
		int e = rt->head ? errno : ENOMEM;

		rec_rotate__free(rt);
		errno = e;
		return NULL;
	}
	return rt;
}

/* "YYYYMMDDTHHMMSS.mmmZ" of @real_ns into @stamp (32 bytes). */
static void stamp_of(uint64_t real_ns, char *stamp)
{
	time_t sec = (time_t)(real_ns / 1000000000ull);
	char s[24];
	struct tm tm;

	gmtime_r(&sec, &tm);
	strftime(s, sizeof(s), "%Y%m%dT%H%M%S", &tm);
	snprintf(stamp, 32, "%.15s.%03uZ", s, (unsigned int)(real_ns / 1000000ull % 1000));
}

/* cur and path: STEM-STAMP.EXT, or with @suffix (8 hex digits) STEM-STAMP-SUFFIX.EXT. */
static void set_name(struct rec_rotate *rt, const char *suffix)
{
	free(rt->cur);
	free(rt->path);
	rt->path = NULL;
	if (asprintf(&rt->cur, "%s-%s%s%s%s", rt->stem, rt->stamp, suffix ? "-" : "",
		     suffix ? suffix : "", rt->ext) < 0)
		rt->cur = NULL;
	if (rt->cur &&
	    asprintf(&rt->path, "%s%s%s", rt->dir, strcmp(rt->dir, "/") ? "/" : "", rt->cur) < 0)
		rt->path = NULL;
}

/* The current file's name taken by someone else: the same with a new random suffix. */
static void retry_name(struct rec_rotate *rt)
{
	uint32_t v;
	char suffix[16];

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		v = (uint32_t)(sac_now_ns(CLOCK_MONOTONIC) * 2654435761u); /* no entropy yet */
	snprintf(suffix, sizeof(suffix), "%08x", v);
	set_name(rt, suffix);
}

const char *rec_rotate__name(struct rec_rotate *rt, uint64_t real_ns)
{
	stamp_of(real_ns, rt->stamp);
	set_name(rt, NULL);
	return rt->path ? rt->path : rt->o->output;
}

const char *rec_rotate__path(const struct rec_rotate *rt)
{
	return rt->path ? rt->path : rt->o->output;
}

int rec_rotate__open(struct rec_rotate *rt)
{
	int fd = -EEXIST, i;

	for (i = 0; i < NAME_TRIES && fd == -EEXIST; i++) {
		if (i)
			retry_name(rt);
		if (!rt->cur)
			return -ENOMEM;
		fd = openat(rt->dirfd, rt->cur,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		fd = fd < 0 ? -errno : fd;
	}
	return fd;
}

/* @tmp to the current name, never over what is there: 0 or a negative errno. */
static int link_noreplace(struct rec_rotate *rt, const char *tmp)
{
	if (!renameat2(AT_FDCWD, tmp, rt->dirfd, rt->cur, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* a file system without RENAME_NOREPLACE: a hard link fails on any name too */
	if (linkat(AT_FDCWD, tmp, rt->dirfd, rt->cur, 0))
		return -errno;
	return unlink(tmp) && errno != ENOENT ? -errno : 0;
}

int rec_rotate__commit(struct rec_rotate *rt, const char *tmp, int fd, bool sync, char *err,
		       size_t errsz)
{
	int e = -EEXIST, i;

	if (fd >= 0 && sync && fdatasync(fd) && errno != EINVAL) {
		e = -errno;
		snprintf(err, errsz, "writing %s: %s", tmp, strerror(-e));
		return e;
	}
	for (i = 0; i < NAME_TRIES && e == -EEXIST; i++) {
		if (i)
			retry_name(rt);
		e = rt->cur ? link_noreplace(rt, tmp) : -ENOMEM;
	}
	if (e)
		snprintf(err, errsz, "cannot rename %s to %s: %s", tmp, rec_rotate__path(rt),
			 strerror(-e));
	return e;
}

void rec_rotate__discard(struct rec_rotate *rt)
{
	if (rt->cur)
		unlinkat(rt->dirfd, rt->cur, 0);
}

bool rec_rotate__due(const struct rec_rotate *rt, uint64_t start_ns, uint64_t now_ns,
		     uint64_t bytes)
{
	const struct rec_opts *o = rt->o;

	if (o->rotate_secs > 0 && now_ns - start_ns >= (uint64_t)(o->rotate_secs * 1e9))
		return true;
	return o->rotate_bytes && bytes >= o->rotate_bytes;
}

/* Is @name STEM-YYYYMMDDTHHMMSS.mmmZ.EXT, or STEM-YYYYMMDDTHHMMSS.mmmZ-xxxxxxxx.EXT? */
static bool ours(const struct rec_rotate *rt, const char *name)
{
	size_t ls = strlen(rt->stem), le = strlen(rt->ext), n = strlen(name), i, sfx;
	const char *p = name + ls + 1;

	if (n == ls + 1 + STAMP_LEN + le)
		sfx = 0;
	else if (n == ls + 1 + STAMP_LEN + SUFFIX_LEN + le)
		sfx = SUFFIX_LEN;
	else
		return false;
	if (strncmp(name, rt->stem, ls) || name[ls] != '-' || strcmp(p + STAMP_LEN + sfx, rt->ext))
		return false;
	for (i = 0; i < STAMP_LEN + sfx; i++) {
		char c = p[i];
		bool ok = i == 8	   ? c == 'T'
			  : i == 15	   ? c == '.'
			  : i == 19	   ? c == 'Z'
			  : i == STAMP_LEN ? c == '-'
			  : i > STAMP_LEN  ? (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')
					   : c >= '0' && c <= '9';

		if (!ok)
			return false;
	}
	return true;
}

static bool str_is(struct saf_str s, const char *c)
{
	return s.len == strlen(c) && !memcmp(s.str, c, s.len);
}

/*
 * Is the file @name a recording of this set, by what it holds and who owns
 * it, not by its name (anyone who can write the directory can make a
 * name)? A regular file of this user (no link followed), whose first
 * record is a META of sa-record, of this host, whose start is the time in
 * its name. Fills @f's order: since this boot by CLOCK_MONOTONIC, which
 * no clock step moves; files of earlier boots come first, by their start.
 */
static bool verify(struct rec_rotate *rt, const char *name, struct old_file *f)
{
	struct saf_record rec;
	struct saf_reader *r;
	struct stat st;
	char stamp[32];
	bool ok = false;
	ssize_t n = -1;
	int fd = openat(rt->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid())
		n = pread(fd, rt->head, HEAD_BYTES, 0);
	close(fd);
	r = n > 0 ? saf_reader__open_mem(rt->head, (size_t)n, NULL) : NULL;
	if (r && saf_reader__next(r, &rec) == 1 && rec.kind == SAF_REC_META &&
	    rec.meta.writer.len >= 9 && !memcmp(rec.meta.writer.str, "sa-record", 9) &&
	    str_is(rec.meta.hostname, rt->host)) {
		stamp_of(rec.meta.start_realtime_ns, stamp);
		ok = !memcmp(name + strlen(rt->stem) + 1, stamp, STAMP_LEN);
		f->boot = rt->boot[0] && str_is(rec.meta.boot_id, rt->boot);
		f->at = f->boot ? rec.meta.start_mono_ns : rec.meta.start_realtime_ns;
		f->size = (uint64_t)st.st_size;
	}
	saf_reader__free(r);
	return ok;
}

/* Oldest first: earlier boots, then by start (see verify()); the name breaks ties. */
static int cmp_age(const void *a, const void *b)
{
	const struct old_file *x = a, *y = b;

	if (x->boot != y->boot)
		return x->boot - y->boot;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The closed files of the set, oldest first. */
static int list_set(struct rec_rotate *rt, struct old_file **out, size_t *n)
{
	struct old_file *v = NULL;
	size_t cap = 0;
	struct old_file f;
	struct dirent *de;
	DIR *d;
	int fd = openat(rt->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	*n = 0;
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (!ours(rt, de->d_name) || (rt->cur && !strcmp(de->d_name, rt->cur)) ||
		    !verify(rt, de->d_name, &f))
			continue;
		if (SAC_GROW(v, cap, *n + 1, 64))
			break;
		f.name = strdup(de->d_name);
		if (f.name)
			v[(*n)++] = f;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_age);
	*out = v;
	return 0;
}

int rec_rotate__prune(struct rec_rotate *rt)
{
	const struct rec_opts *o = rt->o;
	struct old_file *v = NULL;
	uint64_t total = 0;
	size_t n, i, del = 0;
	int err, gone = 0;

	if (!o->keep && !o->keep_size)
		return 0;
	err = list_set(rt, &v, &n);
	if (err)
		return err;
	if (o->keep && n > o->keep)
		del = n - o->keep;
	for (i = del; i < n; i++)
		total += v[i].size;
	while (o->keep_size && del < n && total > o->keep_size)
		total -= v[del++].size;
	for (i = 0; i < del; i++) {
		/* unlink removes a name, never what a link points to */
		if (!unlinkat(rt->dirfd, v[i].name, 0))
			gone++;
		else if (errno != ENOENT && !err)
			err = -errno;
	}
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	return err ? err : gone;
}

void rec_rotate__free(struct rec_rotate *rt)
{
	if (!rt)
		return;
	if (rt->dirfd >= 0)
		close(rt->dirfd);
	SAC_FREE_ALL(rt->dir, rt->stem, rt->ext, rt->cur, rt->path, rt->head, rt);
}
