/* SPDX-License-Identifier: MIT */
/*
 * cfirows.h - the CFI row of one x86-64 ELF file's .eh_frame at an address,
 * reduced as sa-report's unwinder reduces libdw's (report/unwind/uwrows.c) to a
 * core/cfistep.h row, so that sa-record can tell which stack words that
 * unwind will read.
 */
#ifndef REC_CFIROWS_H
#define REC_CFIROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfistep.h"

struct rec_cfirows;

enum {
	REC_CFIROW_OK,
	REC_CFIROW_NONE, /* no FDE of .eh_frame covers the address */
	REC_CFIROW_HARD, /* a form not evaluated: the caller must not trust a row */
	/*
	 * The CFA of gcc's and binutils' PLT entries, an expression of rsp and
	 * the pc: the row holds its value at this one address (rsp + 8, or
	 * rsp + 16 once the entry's push has run). Exact for the pc of a
	 * leaf or of a signal frame's caller only, not for a return address.
	 */
	REC_CFIROW_PLT,
};

/**
 * rec_cfirows__open() - read the .eh_frame (and .eh_frame_hdr) of an ELF file.
 * @fd: borrowed, and not used after the call: the sections are read into
 * memory the object owns.
 * @out: on success an object to release with rec_cfirows__free().
 *
 * Lookups binary-search .eh_frame_hdr's table when it is the usual one;
 * otherwise .eh_frame is scanned once here into a sorted index. Thread-safe
 * apart from libelf's global elf_version().
 *
 * @return 0; -ENOENT no .eh_frame data; -ENOEXEC not ELF; -ENOTSUP not
 * ELF64 x86-64; -EINVAL malformed; -ENOMEM.
 */
int rec_cfirows__open(int fd, struct rec_cfirows **out);

/**
 * rec_cfirows__at() - the row at @vaddr, an address as the file's own headers
 * give it (the caller subtracts the load bias).
 * @row: filled in on REC_CFIROW_OK, zeroed otherwise.
 *
 * The rules are libdw's (elfutils 0.188): the x86-64 ABI's initial rules, then
 * the CIE's instructions, then the FDE's up to @vaddr. A lookup is
 * remembered in @t (64 to 4096 rows by address, by the file's FDE count),
 * so calls on one object must not run concurrently.
 * @return REC_CFIROW_OK, REC_CFIROW_NONE, REC_CFIROW_PLT, or REC_CFIROW_HARD
 * (a rule this does not evaluate for the CFA, rbp, rsp or the return
 * address, or FDE data that does not parse).
 */
int rec_cfirows__at(struct rec_cfirows *t, uint64_t vaddr, struct sac_cfi_row *row);

/**
 * rec_cfirows__at_offset() - rec_cfirows__at() for the byte at offset @off
 * of the file (a mapping's pgoff plus its distance from the mapping's start),
 * turned into an address through the file's PT_LOAD segments.
 * @return as rec_cfirows__at(); REC_CFIROW_NONE where no segment holds @off.
 */
int rec_cfirows__at_offset(struct rec_cfirows *t, uint64_t off, struct sac_cfi_row *row);

/**
 * rec_cfirow_fn - one row of rec_cfirows__each(): addresses [@lo, @hi) of
 * one FDE, @ret REC_CFIROW_OK with @row, or REC_CFIROW_HARD; @plt, when
 * not 0, says the CFA is the PLT entries' expression (rsp + 8, + 8 where
 * (rip & 15) >= @plt), which rec_cfirows__at() evaluates for one address
 * (REC_CFIROW_PLT).
 * @return 0 to go on, or a negative errno that ends the walk with it.
 */
typedef int (*rec_cfirow_fn)(void *arg, uint64_t lo, uint64_t hi, const struct sac_cfi_row *row,
			     int ret, unsigned plt);

/**
 * rec_cfirows__each() - every row of every FDE of .eh_frame, in the
 * section's order, by the rules of rec_cfirows__at() (the in-kernel
 * unwinder's tables, record/cfi/uwtab.c).
 * @return 0, -EINVAL malformed, or @fn's error.
 */
int rec_cfirows__each(struct rec_cfirows *t, rec_cfirow_fn fn, void *arg);

/**
 * rec_cfirows__loads() - the file's PT_LOAD segments (file offset, address,
 * file size), at most @max into @seg. @return how many.
 */
size_t rec_cfirows__loads(const struct rec_cfirows *t, uint64_t (*seg)[3], size_t max);

/** rec_cfirows__free() - release @t. Accepts NULL. */
void rec_cfirows__free(struct rec_cfirows *t);

#endif /* REC_CFIROWS_H */
