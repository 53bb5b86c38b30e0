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
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "filekind.h"
#include "safeopen.h"

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
	fd = rec_safe_open(rest, &in, why, whysz);
	close(in.dirfd);
	return fd;
}

int rec_safe_open(const char *path, const struct rec_safeopen_opts *o, char *why, size_t whysz)
{
	static const struct rec_safeopen_opts none = {.sz = sizeof(none)};
	char self[64], scratch[8];
	struct stat st, st2;
	int pfd, fd, err;

	if (!o)
		o = &none;
	if (!why || !whysz)
		why = scratch, whysz = sizeof(scratch);
	why[0] = '\0';
	pfd = open_in_root(path, o, why, whysz);
	if (pfd != -EAGAIN)
		return pfd;
	pfd = resolve(path, o);
	if (pfd == -ELOOP || pfd == -EXDEV)
		snprintf(why, whysz, "a symbolic link leads out of the process's view");
	if (pfd < 0)
		return pfd;
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

int rec_safe_open_mapped(uint32_t pid, uint64_t start, uint64_t end, const char *path, uint64_t dev,
			 uint64_t ino)
{
	struct rec_safeopen_opts o = {
		.sz = sizeof(o), .follow = true, .max_size = REC_BIN_MAX_SIZE};
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
