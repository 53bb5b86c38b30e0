// SPDX-License-Identifier: MIT
/*
 * symcache_dir.c - the cache directory of symcache.c: where it is, made and
 * checked to be the user's own, entry file identities, and the size bound
 * (least recently used entry files removed first; a use touches a file).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "symcache.h"

#define TMP_AGE_S 3600 /* a temporary file this old was left by a crash */

/* mkdir -p of @path's parents, then @path itself; all mode 0700. */
static int mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return mkdir(path, 0700) && errno != EEXIST ? -errno : 0;
}

/* The directory the default cache lives under: $XDG_CACHE_HOME, else $HOME/.cache. */
static int default_base(char *base, size_t cap, const char **rest)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	/* the XDG spec: a relative XDG_CACHE_HOME is invalid, ignore it */
	if (xdg && xdg[0] == '/') {
		n = snprintf(base, cap, "%s", xdg);
		*rest = "sa";
	} else if (home && home[0] == '/') {
		n = snprintf(base, cap, "%s", home);
		*rest = ".cache/sa";
	} else {
		return -ENOENT;
	}
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* Ours alone: owned by the effective user, not writable by group or others. */
static int ours(int fd)
{
	struct stat st;

	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* @base, made (0700) when missing inside a parent of ours ($XDG_CACHE_HOME need not exist). */
static int open_base(char *base)
{
	char *slash = strrchr(base, '/');
	int fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC), parent, err;

	if (fd >= 0 || errno != ENOENT || !slash || slash == base)
		return fd >= 0 ? ours(fd) : -errno;
	*slash = '\0';
	parent = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*slash = '/';
	if (parent < 0)
		return -errno;
	parent = ours(parent);
	if (parent < 0)
		return parent;
	err = mkdirat(parent, slash + 1, 0700) && errno != EEXIST ? -errno : 0;
	fd = err ? err : openat(parent, slash + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	err = -errno;
	close(parent);
	return fd >= 0 ? ours(fd) : err;
}

/* What -v says of the cache: the directory used, or "none: " and why. */
static void say(char *note, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *note, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (!note || !cap)
		return;
	va_start(ap, fmt);
	vsnprintf(note, cap, fmt, ap);
	va_end(ap);
}

/* Why @base (from $@var) cannot hold the default cache, into @note. */
static void say_base(char *note, size_t cap, const char *var, const char *base, int err)
{
	if (err == -EPERM)
		say(note, cap,
		    "none: $%s (%s) is not the effective user's (uid %u), nothing made in it", var,
		    base, (unsigned)geteuid());
	else
		say(note, cap, "none: $%s (%s): %s", var, base, strerror(-err));
}

/*
 * The default cache: @base must be the effective user's (so root with a
 * HOME that is not root's, as sudo keeping HOME gives, uses no cache and
 * creates nothing there); below it each component is opened without
 * following a symlink and made (0700) only inside a directory of ours.
 */
static int open_default(char *note, size_t cap)
{
	char base[PATH_MAX], part[NAME_MAX + 1];
	const char *rest, *all;
	int fd, err = default_base(base, sizeof(base), &rest);

	if (err) {
		say(note, cap, "none: neither $XDG_CACHE_HOME nor $HOME is an absolute path");
		return err;
	}
	all = rest;
	fd = open_base(base);
	if (fd < 0)
		say_base(note, cap, *rest == 's' ? "XDG_CACHE_HOME" : "HOME", base, fd);
	while (fd >= 0 && *rest) {
		size_t n = strcspn(rest, "/");
		int next;

		memcpy(part, rest, n);
		part[n] = '\0';
		rest += n + (rest[n] == '/');
		next = mkdirat(fd, part, 0700) && errno != EEXIST ? -errno : 0;
		if (!next) {
			next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			next = next < 0 ? (errno == ENOTDIR ? -ELOOP : -errno) : ours(next);
		}
		close(fd);
		fd = next; /* a symlink is not followed: -ELOOP */
		if (fd < 0)
			say(note, cap, "none: %s/%.*s: %s", base, (int)(rest - all) - (*rest != 0),
			    all, fd == -ELOOP ? "a symbolic link, not followed" : strerror(-fd));
	}
	if (fd >= 0)
		say(note, cap, "%s/%s", base, all);
	return fd;
}

/*
 * sa-report may run as root: the directory is used only if it is not a
 * symlink and belongs to the effective user alone, so that nobody can
 * point root's writes elsewhere or feed it names.
 */
static int open_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOTDIR ? -ELOOP : -errno;
	return ours(fd);
}

int rpt_symcache_dir__open_note(const char *dir, char *note, size_t cap)
{
	char path[PATH_MAX];
	int err;

	if (!dir)
		return open_default(note, cap);
	err = snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path) ? -ENAMETOOLONG : 0;
	if (!err)
		err = mkdirs(path);
	err = err ? err : open_dir(path);
	if (err < 0)
		say(note, cap, "none: %s: %s", dir,
		    err == -EPERM ? "not the effective user's alone" : strerror(-err));
	else
		say(note, cap, "%s", dir);
	return err;
}

struct sc_file {
	int64_t mtime_ns;
	uint64_t size;
	char name[RPT_SYMCACHE_HEX_MAX + 32];
};

static int file_cmp(const void *a, const void *b)
{
	const struct sc_file *x = a, *y = b;

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/*
 * Collect the entry files of the directory in *@v (malloc()ed) and their
 * total size in @total; remove temporary files a crash left behind.
 */
static int files_list(int dirfd, struct sc_file **v, size_t *n, uint64_t *total)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	size_t cap = 0;
	struct dirent *de;
	int err = 0;

	if (!d) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	while (!err && (de = readdir(d))) {
		struct stat st;
		int64_t mt;
		size_t len;

		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		if (!strncmp(de->d_name, RPT_SYMCACHE_TMP, strlen(RPT_SYMCACHE_TMP)) &&
		    st.st_mtim.tv_sec + TMP_AGE_S < time(NULL))
			unlinkat(dirfd, de->d_name, 0);
		len = strlen(de->d_name);
		if (!ends_with(de->d_name, RPT_SYMCACHE_SUFFIX) || len >= sizeof((*v)->name))
			continue;
		err = sac_grow((void **)v, &cap, *n + 1, sizeof(**v), 64);
		if (err)
			break;
		(*v)[*n].mtime_ns = mt;
		(*v)[*n].size = st.st_size;
		memcpy((*v)[*n].name, de->d_name, len + 1);
		*total += st.st_size;
		(*n)++;
	}
	closedir(d);
	return err;
}

int rpt_symcache_dir__trim(int dirfd, uint64_t max_bytes)
{
	struct sc_file *v = NULL;
	uint64_t total = 0;
	size_t n = 0;
	int err = files_list(dirfd, &v, &n, &total);

	if (!err && total > max_bytes) {
		qsort(v, n, sizeof(*v), file_cmp);
		for (size_t i = 0; i < n && total > max_bytes; i++) {
			if (!unlinkat(dirfd, v[i].name, 0) || errno == ENOENT)
				total -= v[i].size;
		}
	}
	free(v);
	return err;
}

static uint64_t ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

void rpt_symcache_id__init(struct rpt_symcache_id *id, const char *sym, const char *bin,
			   uint32_t source, uint32_t variant)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (sym && !stat(sym, &st)) {
		id->sym_ino = st.st_ino;
		id->sym_size = st.st_size;
		id->sym_mtime_ns = ns(&st.st_mtim);
		id->sym_ctime_ns = ns(&st.st_ctim);
	}
	if (bin && !stat(bin, &st)) {
		id->bin_ino = st.st_ino;
		id->bin_size = st.st_size;
		id->bin_mtime_ns = ns(&st.st_mtim);
		id->bin_ctime_ns = ns(&st.st_ctim);
	}
	id->source = source;
	id->variant = variant;
}
