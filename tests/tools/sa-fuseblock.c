// SPDX-License-Identifier: MIT
/*
 * sa-fuseblock.c - a read-only FUSE file system that mirrors a directory, for
 * 5160: a test stops this server (SIGSTOP) and every later request on the
 * mount waits for an answer that never comes, as on a hung FUSE or hard NFS
 * mount. Requests wait unsent, so SIGKILL still ends their callers, and
 * killing this server aborts the connection and releases every one of them.
 *
 *   sa-fuseblock BACKING_DIR MOUNTPOINT [fuse options, e.g. -f -o allow_other]
 */
#define FUSE_USE_VERSION 31
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int backing = -1;

/* FUSE paths start with '/': below the backing directory without it. */
static const char *rel(const char *path)
{
	return path[1] ? path + 1 : ".";
}

static void *fb_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	/* Keep what exec faulted in: the test stops the server afterwards. */
	cfg->kernel_cache = 1;
	cfg->use_ino = 1;
	return NULL;
}

static int fb_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	return fstatat(backing, rel(path), st, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}

static int fb_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct dirent *de;
	DIR *d;
	int fd;

	(void)off, (void)fi, (void)flags;
	fd = openat(backing, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((de = readdir(d)))
		fill(buf, de->d_name, NULL, 0, 0);
	closedir(d);
	return 0;
}

static int fb_open(const char *path, struct fuse_file_info *fi)
{
	int fd;

	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		return -EROFS;
	fd = openat(backing, rel(path), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	fi->keep_cache = 1;
	return 0;
}

static int fb_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	ssize_t n = pread((int)fi->fh, buf, size, off);

	(void)path;
	return n < 0 ? -errno : (int)n;
}

static int fb_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	close((int)fi->fh);
	return 0;
}

static const struct fuse_operations ops = {
	.init = fb_init,
	.getattr = fb_getattr,
	.readdir = fb_readdir,
	.open = fb_open,
	.read = fb_read,
	.release = fb_release,
};

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: sa-fuseblock BACKING_DIR MOUNTPOINT [fuse options]\n");
		return 2;
	}
	backing = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (backing < 0) {
		perror(argv[1]);
		return 1;
	}
	argv[1] = argv[0];
	return fuse_main(argc - 1, argv + 1, &ops, NULL);
}
