/* SPDX-License-Identifier: MIT */
/*
 * safeopen.h - opening files that other users control (perf maps, mapped
 * binaries) from a recorder that runs as root: no symlinks, no FIFOs or
 * devices, an owner and a size checked before a byte is read
 * (docs/security.md).
 */
#ifndef REC_SAFEOPEN_H
#define REC_SAFEOPEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * What one mapped binary may cost (docs/security.md, "Mapped binaries"). Real
 * files fit with room to spare (libLLVM-14.so.1, 105 MiB: 5 MiB of .eh_frame,
 * 45,000 dynamic symbols); a crafted file past any cap is used without what
 * it would cost (no symbols, no CFI), never read whole.
 */
#define REC_BIN_MAX_SIZE     (8ull << 30)   /* bytes of the file */
#define REC_BIN_MAX_SECTION  (128ull << 20) /* bytes of one section read or copied */
#define REC_BIN_MAX_NOTE     (64u << 10)    /* bytes of a note segment */
#define REC_BIN_MAX_SYMS     (4u << 20)	    /* entries of one symbol table */
#define REC_BIN_MAX_SECTIONS 65536u	    /* section headers (libelf allocates per header) */

struct rec_safeopen_opts {
	size_t sz;	   /* sizeof(struct rec_safeopen_opts) */
	int dirfd;	   /* resolve @path below this directory (0: AT_FDCWD) */
	bool in_root;	   /* @dirfd is a process's root: RESOLVE_IN_ROOT */
	bool follow;	   /* follow a last component that is a (magic) link */
	int nowners;	   /* 0: any owner; -1: world-readable only; else one of owners[] */
	uid_t owners[2];   /* ... or root, if the file is world-readable */
	uint64_t max_size; /* 0: no cap */
	uint64_t dev, ino; /* ino != 0: the file must be this one (makedev() dev) */
	uint64_t dev_hint; /* the file's device, if known: skipped at once if it timed out */
};

/**
 * rec_safe_open() - open @path read-only for a root process, refusing what
 * another user could use against it. The path is resolved with openat2()
 * (RESOLVE_NO_MAGICLINKS, and RESOLVE_IN_ROOT below a process's root) to an
 * O_PATH descriptor, which opens no device and no FIFO; it must be a regular
 * file (a symbolic link last component is refused unless @o->follow), owned
 * as @o->owners says, at most @o->max_size bytes, and the (dev, ino) given.
 * Only then is it reopened O_RDONLY | O_NONBLOCK | O_CLOEXEC through
 * /proc/self/fd, which cannot reach another file.
 * Once rec_fguard_enable() was called, all of this runs on fguard.c's worker
 * and waits at most its deadline (-ETIMEDOUT after it, and at once for a
 * device that timed out before); a file on a file system that may wait for
 * a server (not a local disk or memory one) is then returned as a memfd copy
 * of at most 256 MiB, so later reads cannot wait: fstat() it with
 * rec_safe_fstat().
 * @path: absolute, or relative to @o->dirfd; "/proc/PID/root/REST" is REST
 * resolved inside PID's root (RESOLVE_IN_ROOT).
 * @o: NULL for the defaults (no owner, size or inode check, no symlinks).
 * @why, @whysz: on a refusal (not on -ENOENT), why, for one line on stderr.
 * @return an fd the caller closes, or -errno: -ENOENT and the like when the
 * file is not there; -ELOOP a symlink; -EPERM wrong type or owner; -EFBIG
 * over the size cap; -ESTALE another file than (dev, ino); -ETIMEDOUT its
 * file system did not answer in time.
 * Thread-safe.
 */
int rec_safe_open(const char *path, const struct rec_safeopen_opts *o, char *why, size_t whysz);

/**
 * rec_safe_open_mapped() - open the file mapped at [@start, @end) in @pid:
 * /proc/PID/map_files/START-END while the mapping exists (the mapped inode
 * itself, whatever has been renamed over its path since), else @path below
 * /proc/PID/root when @path is absolute, else @path itself; in each case a
 * regular file of at most REC_BIN_MAX_SIZE bytes, and when @ino is not 0,
 * the inode (@dev, @ino) of the mapping.
 * @return an fd the caller closes, or -errno as rec_safe_open().
 */
int rec_safe_open_mapped(uint32_t pid, uint64_t start, uint64_t end, const char *path, uint64_t dev,
			 uint64_t ino);

/**
 * rec_safe_fstat() - fstat(@fd), but for a copy made by rec_safe_open() the
 * original file's stat (device, inode, size), which tables are keyed by.
 * @return 0 or -errno.
 */
int rec_safe_fstat(int fd, struct stat *st);

struct Elf;

/**
 * rec_safe_elf_begin() - elf_begin(@fd, @cmd) after checking the counts that
 * make libelf allocate (section and program headers, extended numbering
 * included) against REC_BIN_MAX_SECTIONS, so a crafted header of a sparse
 * file cannot cost gigabytes before the caller's own caps apply.
 * @fd: borrowed; must stay open while the Elf is used (as for elf_begin()).
 * @return the handle (elf_end() it), or NULL: libelf's failure, or over a cap.
 */
struct Elf *rec_safe_elf_begin(int fd, int cmd);

#endif /* REC_SAFEOPEN_H */
