/* SPDX-License-Identifier: MIT */
/*
 * elfread.h - reading one ELF file for elfsyms.c: its GNU build id, and its
 * function symbols as (file offset, size, name), sorted by offset.
 */
#ifndef REC_ELFREAD_H
#define REC_ELFREAD_H

#include <stddef.h>
#include <stdint.h>

struct rec_golines;

struct rec_elfsym {
	uint64_t off;  /* file offset of the first byte */
	uint64_t size; /* bytes; a zero st_size becomes the gap to the next symbol */
	uint32_t name; /* offset in rec_elftab.names */
	uint32_t rank; /* among symbols at one offset the lowest is kept (elfread.c) */
};

struct rec_elftab {
	struct rec_elfsym *syms; /* sorted by off, one symbol per offset */
	size_t nsyms;
	char *names; /* the string table, copied */
	size_t names_len;
	int from_dynsym;	     /* 1 when .symtab was absent */
	int from_debug;		     /* 1 when the symbols came from a debug file's .symtab */
	int from_gopclntab;	     /* 1 when they came from Go's .gopclntab (no .symtab) */
	struct rec_golines *golines; /* a Go binary's line tables (golines.h), or NULL */
};

/**
 * rec_elftab__read() - read the function symbols of an ELF file.
 * @fd: borrowed, read through libelf (mmap).
 * @build_id, @bid_len: when @bid_len > 0, the file must have this build id.
 * @t: filled in; release with rec_elftab__release() on success.
 * @return 0; -ENOEXEC not ELF; -ESTALE build id differs; -ENOENT neither
 * .symtab nor .dynsym holds a function; -EFBIG over REC_BIN_MAX_SYMS symbols
 * or a string table over REC_BIN_MAX_SECTION (safeopen.h); -ENOMEM.
 */
int rec_elftab__read(int fd, const uint8_t *build_id, size_t bid_len, struct rec_elftab *t);

/**
 * rec_elftab__read_debug() - as rec_elftab__read(), with the symbols of a
 * debug file (@dbg_fd, borrowed, or -1) when it has @build_id and a .symtab
 * of functions; else (or when @bid_len is 0) the binary's own. The PLT
 * entries and the file offsets come from the binary (@fd) either way.
 */
int rec_elftab__read_debug(int fd, int dbg_fd, const uint8_t *build_id, size_t bid_len,
			   struct rec_elftab *t);

/**
 * rec_elftab__lookup() - index of the symbol covering file offset @off (the
 * highest start at or below it whose size reaches it, sa-report's rule), or -1
 * when none does.
 */
long rec_elftab__lookup(const struct rec_elftab *t, uint64_t off);

/** rec_elftab__release() - free what rec_elftab__read() filled (golines too). Accepts zeroes. */
void rec_elftab__release(struct rec_elftab *t);

/**
 * rec_elf__build_id_fd() - the GNU build id of the ELF file on @fd (borrowed).
 * @return its length, -ENOENT without one, -ENOEXEC not ELF, -ENOSPC.
 */
int rec_elf__build_id_fd(int fd, uint8_t *buf, size_t cap);

/**
 * rec_elf__identity_fd() - what names the ELF file on @fd (borrowed): its
 * GNU build id (*@kind SAF_ID_GNU), else its content hash (SAF_ID_CONTENT,
 * core/contentid.h: Go's default build has no build id).
 * @return the identity's length, -ENOEXEC not ELF, -ENOSPC, or the content
 * hash's errors.
 */
int rec_elf__identity_fd(int fd, uint8_t *buf, size_t cap, uint32_t *kind);

#endif /* REC_ELFREAD_H */
