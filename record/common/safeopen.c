// SPDX-License-Identifier: MIT
/*
 * safeopen.c - one way for the recorder to open what others control: resolve
 * to an O_PATH descriptor (which opens nothing), check what it is with
 * fstat(), and only then reopen it for reading (docs/security.md).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <linux/magic.h>
#include <pthread.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "fguard.h"
#include "filekind.h"
#include "safeopen.h"

static int open_now(const char *path, const struct rec_safeopen_opts *o, char *why, size_t whysz);

static int resolve(const char *path, const struct rec_safeopen_opts *o)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (o->follow ? 0 : O_NOFOLLOW),
		.resolve = o->in_root ? RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS : 0,
	};
	int dirfd = o->dirfd ? o->dirfd : AT_FDCWD;
	long fd;

	/* map_files entries are magic links: only those may be followed. */
	if (!o->follow)
		how.resolve |= RESOLVE_NO_MAGICLINKS;
	fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd >= 0)
		return (int)fd;
	if (errno != ENOSYS)
		return -errno;
	if (o->in_root)
		return -ENOSYS; /* a root without RESOLVE_IN_ROOT: not safe */
	fd = openat(dirfd, path, (int)how.flags);
	return fd < 0 ? -errno : (int)fd;
}

static bool owner_ok(const struct stat *st, const struct rec_safeopen_opts *o)
{
	int i;

	if (!o->nowners)
		return true;
	if (o->nowners < 0) /* the user is not known: only what anyone may read */
		return st->st_mode & S_IROTH;
	for (i = 0; i < o->nowners && i < 2; i++)
		if (st->st_uid == o->owners[i])
			return true;
	/* Root's file is fine when anyone could read it anyway (a hard link or
	 * a bind mount of /etc/shadow is root's too, but not world-readable). */
	return st->st_uid == 0 && (st->st_mode & S_IROTH);
}

static int check(const struct stat *st, const struct rec_safeopen_opts *o, char *why, size_t sz)
{
	if (!S_ISREG(st->st_mode)) {
		const char *k = sac_file_kind(st->st_mode);

		snprintf(why, sz, "%s", k ? k : "not a regular file");
		return S_ISLNK(st->st_mode) ? -ELOOP : -EPERM;
	}
	if (!owner_ok(st, o)) {
		snprintf(why, sz, "owned by uid %u, not by the process's user",
			 (unsigned)st->st_uid);
		return -EPERM;
	}
	if (o->max_size && (uint64_t)st->st_size > o->max_size) {
		snprintf(why, sz, "%lld bytes, over the cap of %llu", (long long)st->st_size,
			 (unsigned long long)o->max_size);
		return -EFBIG;
	}
	if (o->ino && (st->st_ino != o->ino || st->st_dev != o->dev)) {
		snprintf(why, sz, "not the mapped file (another inode at its path)");
		return -ESTALE;
	}
	return 0;
}

/* The device of @fd from what the kernel has cached (AT_STATX_DONT_SYNC asks
 * no FUSE or NFS server), told to the guard before anything that may ask. */
static int note_dev(int fd, char *why, size_t whysz)
{
	struct statx sx;
	int err;

	if (!rec_fguard_on() || statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, 0, &sx))
		return 0;
	err = rec_fguard_dev(makedev(sx.stx_dev_major, sx.stx_dev_minor));
	if (err)
		snprintf(why, whysz, "its file system did not answer before");
	return err;
}

/* "/proc/PID/root/REST": REST resolved inside PID's root, not through the
 * magic link (which RESOLVE_NO_MAGICLINKS would refuse). */
static int open_in_root(const char *path, const struct rec_safeopen_opts *o, char *why,
			size_t whysz)
{
	struct rec_safeopen_opts in = *o;
	char root[48];
	const char *rest;
	unsigned int pid;
	int n = 0, fd;

	if (o->dirfd || sscanf(path, "/proc/%u/root/%n", &pid, &n) != 1 || !n)
		return -EAGAIN;
	rest = path + n;
	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	in.dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (in.dirfd < 0)
		return -errno;
	in.in_root = true;
	fd = open_now(rest, &in, why, whysz);
	close(in.dirfd);
	return fd;
}

static int open_now(const char *path, const struct rec_safeopen_opts *o, char *why, size_t whysz)
{
	char self[64];
	struct stat st, st2;
	int pfd, fd, err;

	pfd = open_in_root(path, o, why, whysz);
	if (pfd != -EAGAIN)
		return pfd;
	pfd = resolve(path, o);
	if (pfd == -ELOOP || pfd == -EXDEV)
		snprintf(why, whysz, "a symbolic link leads out of the process's view");
	if (pfd < 0)
		return pfd;
	err = note_dev(pfd, why, whysz);
	if (!err)
		err = fstat(pfd, &st) ? -errno : check(&st, o, why, whysz);
	if (err)
		goto cleanup;
	/* The O_PATH fd pins the inode: reopening it reaches nothing else. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	if (!err && (fstat(fd, &st2) || st2.st_ino != st.st_ino || st2.st_dev != st.st_dev)) {
		close(fd);
		err = -ESTALE;
	}
	if (!err)
		err = fd;
cleanup:
	close(pfd);
	return err;
}

/* File systems whose reads never wait for a server or another process: a
 * file elsewhere (FUSE, NFS, CIFS, 9p, ...) is copied whole by the worker. */
static bool local_fs(int fd)
{
	static const long local[] = {
		EXT4_SUPER_MAGIC,      XFS_SUPER_MAGIC,
		BTRFS_SUPER_MAGIC,     TMPFS_MAGIC,
		RAMFS_MAGIC,	       SQUASHFS_MAGIC,
		OVERLAYFS_SUPER_MAGIC, EROFS_SUPER_MAGIC_V1,
		F2FS_SUPER_MAGIC,      PROC_SUPER_MAGIC,
		ISOFS_SUPER_MAGIC,     MSDOS_SUPER_MAGIC,
		HUGETLBFS_MAGIC,       SYSFS_MAGIC,
		0x2fc12fc1 /* zfs */,  0xca451a4e /* bcachefs */,
	};
	struct statfs sf;
	size_t i;

	if (fstatfs(fd, &sf))
		return false;
	for (i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if ((long)sf.f_type == local[i])
			return true;
	return false;
}

/* Copies of files on other file systems: their callers key tables by the
 * original (dev, ino), which rec_safe_fstat() gives back. */
#define COPY_MAX   (256ull << 20)
#define COPY_SLOTS 64

static struct copy_slot {
	dev_t mdev;
	ino_t mino;
	struct stat orig;
} copies[COPY_SLOTS];
static unsigned int copies_next;
static pthread_mutex_t copies_lock = PTHREAD_MUTEX_INITIALIZER;

/* @fd's bytes into a memfd (@fd is closed either way). */
static int copy_whole(int fd, char *why, size_t whysz)
{
	struct stat st, mst;
	char buf[64 << 10];
	int m = -1, err = 0;
	off_t off = 0;
	ssize_t n;

	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if ((uint64_t)st.st_size > COPY_MAX) {
		snprintf(why, whysz, "%lld bytes on a file system that may not answer, over %llu",
			 (long long)st.st_size, COPY_MAX);
		err = -EFBIG;
		goto out;
	}
	m = memfd_create("sa-copy", MFD_CLOEXEC);
	if (m < 0) {
		err = -errno;
		goto out;
	}
	while ((uint64_t)off < COPY_MAX && (n = pread(fd, buf, sizeof(buf), off)) > 0) {
		if (write(m, buf, (size_t)n) != n) {
			err = -EIO;
			goto out;
		}
		off += n;
	}
	if (n < 0 || fstat(m, &mst)) {
		err = -errno;
		goto out;
	}
	pthread_mutex_lock(&copies_lock);
	copies[copies_next++ % COPY_SLOTS] =
		(struct copy_slot){.mdev = mst.st_dev, .mino = mst.st_ino, .orig = st};
	pthread_mutex_unlock(&copies_lock);
	rec_fguard_copied();
out:
	close(fd);
	if (err && m >= 0)
		close(m);
	return err ? err : m;
}

int rec_safe_fstat(int fd, struct stat *st)
{
	unsigned int i;

	if (fstat(fd, st))
		return -errno;
	pthread_mutex_lock(&copies_lock);
	for (i = 0; i < COPY_SLOTS; i++)
		if (copies[i].mino == st->st_ino && copies[i].mdev == st->st_dev && st->st_ino) {
			*st = copies[i].orig;
			break;
		}
	pthread_mutex_unlock(&copies_lock);
	return 0;
}

struct open_job {
	const char *path; /* the job's own copy, after the struct */
	struct rec_safeopen_opts o;
	char why[160];
};

/* The parent directory's device, before a lookup in it can wait. */
static int probe_parent(const struct open_job *j)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC};
	const char *slash = strrchr(j->path, '/');
	char *dir;
	long dfd;
	int err;

	if (!slash || slash == j->path)
		return 0;
	dir = strndup(j->path, (size_t)(slash - j->path));
	if (!dir)
		return 0;
	if (j->o.in_root)
		how.resolve = RESOLVE_IN_ROOT;
	dfd = syscall(SYS_openat2, j->o.dirfd ? j->o.dirfd : AT_FDCWD, dir, &how, sizeof(how));
	free(dir);
	if (dfd < 0)
		return 0;
	err = note_dev((int)dfd, (char *)j->why, sizeof(j->why));
	close((int)dfd);
	return err;
}

static int open_job_run(void *arg)
{
	struct open_job *j = arg;
	int fd, err;

	err = probe_parent(j);
	if (err)
		return err;
	fd = open_now(j->path, &j->o, j->why, sizeof(j->why));
	if (fd < 0 || !rec_fguard_on())
		return fd;
	if (local_fs(fd)) {
		rec_fguard_local();
		return fd;
	}
	return copy_whole(fd, j->why, sizeof(j->why));
}

static void open_job_release(void *arg, int ret)
{
	struct open_job *j = arg;

	if (ret >= 0)
		close(ret);
	if (j->o.dirfd)
		close(j->o.dirfd);
	free(j);
}

int rec_safe_open(const char *path, const struct rec_safeopen_opts *o, char *why, size_t whysz)
{
	static const struct rec_safeopen_opts none = {.sz = sizeof(none)};
	size_t len = strlen(path) + 1;
	struct open_job *j;
	char scratch[8];
	int ret;

	if (!o)
		o = &none;
	if (!why || !whysz)
		why = scratch, whysz = sizeof(scratch);
	why[0] = '\0';
	/* A mapping on a local file system through map_files: no lookup, no server. */
	if (!rec_fguard_on() || (o->follow && o->dev_hint && rec_fguard_is_local(o->dev_hint)))
		return open_now(path, o, why, whysz);
	if ((o->ino && rec_fguard_blocked(o->dev)) ||
	    (o->dev_hint && rec_fguard_blocked(o->dev_hint))) {
		snprintf(why, whysz, "its file system did not answer before");
		return -ETIMEDOUT;
	}
	j = calloc(1, sizeof(*j) + len);
	if (!j)
		return -ENOMEM;
	j->path = memcpy(j + 1, path, len);
	j->o = *o;
	/* The worker may outlive this call: it gets its own directory fd. */
	if (o->dirfd && (j->o.dirfd = fcntl(o->dirfd, F_DUPFD_CLOEXEC, 3)) < 0) {
		free(j);
		return -errno;
	}
	ret = rec_fguard_run(open_job_run, j, open_job_release);
	if (ret == -ETIMEDOUT || ret == -EAGAIN) { /* @j is the worker's now */
		snprintf(why, whysz, "%s within %u ms",
			 ret == -EAGAIN ? "its local disk did not answer"
					: "its file system did not answer",
			 REC_FGUARD_DEADLINE_MS);
		return ret;
	}
	snprintf(why, whysz, "%s", ret == -EDEADLK ? "no reader was free in time" : j->why);
	if (ret == -EDEADLK)
		ret = -ETIMEDOUT;
	open_job_release(j, -1);
	return ret;
}

int rec_safe_open_mapped(uint32_t pid, uint64_t start, uint64_t end, const char *path, uint64_t dev,
			 uint64_t ino)
{
	struct rec_safeopen_opts o = {
		.sz = sizeof(o), .follow = true, .max_size = REC_BIN_MAX_SIZE, .dev_hint = dev};
	char p[96];
	int fd;

	snprintf(p, sizeof(p), "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)start,
		 (unsigned long long)end);
	fd = rec_safe_open(p, &o, NULL, 0);
	if (fd >= 0 || fd == -EPERM || fd == -EFBIG || !path || !path[0])
		return fd;
	/* The mapping is gone (or map_files is not ours): its path, which must
	 * still hold the mapped inode; inside the process's root while it lives. */
	o = (struct rec_safeopen_opts){
		.sz = sizeof(o), .max_size = REC_BIN_MAX_SIZE, .dev = dev, .ino = ino};
	if (path[0] == '/') {
		char *rp;

		if (asprintf(&rp, "/proc/%u/root%s", pid, path) < 0)
			return -ENOMEM;
		fd = rec_safe_open(rp, &o, NULL, 0);
		free(rp);
		if (fd != -ENOENT)
			return fd;
	}
	return rec_safe_open(path, &o, NULL, 0);
}

/* Section and program header counts, extended numbering resolved (ELF64). */
static bool counts_ok(int fd)
{
	Elf64_Ehdr eh;
	Elf64_Shdr s0;
	uint64_t nsh, nph;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return true; /* not ELF64: libelf's own checks (ELF32 counts are 16-bit) */
	nsh = eh.e_shnum;
	nph = eh.e_phnum;
	if ((!nsh || nph == PN_XNUM) && eh.e_shoff) {
		if (pread(fd, &s0, sizeof(s0), (off_t)eh.e_shoff) != (ssize_t)sizeof(s0))
			return false;
		if (!nsh)
			nsh = s0.sh_size;
		if (nph == PN_XNUM)
			nph = s0.sh_info;
	}
	return nsh <= REC_BIN_MAX_SECTIONS && nph <= REC_BIN_MAX_SECTIONS;
}

struct Elf *rec_safe_elf_begin(int fd, int cmd)
{
	if (elf_version(EV_CURRENT) == EV_NONE || !counts_ok(fd))
		return NULL;
	return elf_begin(fd, (Elf_Cmd)cmd, NULL);
}
