/* SPDX-License-Identifier: MIT */
/*
 * cfimap.h - which code of one x86-64 ELF file a frame-pointer walk would
 * get wrong, for `--call-graph auto`: a bitmap per 4 KiB file page, one bit
 * per 64-byte block, set where the BPF program must copy the stack for a
 * CFI unwind instead of trusting %rbp.
 */
#ifndef REC_CFIMAP_H
#define REC_CFIMAP_H

#include <stddef.h>
#include <stdint.h>

#define REC_CFI_PAGE_SHIFT  12
#define REC_CFI_BLOCK_SHIFT 6

struct rec_cfipage {
	uint64_t page; /* file offset >> 12 */
	uint64_t bits; /* bit i: bytes [page * 4096 + 64 * i, + 64) need CFI */
};

struct rec_cfimap {
	struct rec_cfipage *pages; /* sorted by page; only pages with bits != 0 */
	size_t npages;
	size_t nfuncs;	   /* FDEs with a non-empty range */
	size_t nframeless; /* of those, FDEs whose CFA is never %rbp-based */
	size_t nflat;	   /* of those, FDEs that never move the CFA (no stack frame) */
	int whole;	   /* 1: built without frame pointers, every executable byte is set */
};

/**
 * rec_cfimap__classify() - compute the blocks of an ELF file that need CFI.
 * @fd: borrowed; read with pread (libelf ELF_C_READ), the offset is untouched.
 * @m: filled in on success (zeroed first); release with rec_cfimap__release().
 *
 * Parses .eh_frame and .debug_frame of the same file (gcc writes a function's
 * FDE to one of them; one in both would be counted twice). An FDE whose CFA
 * is never defined from DWARF register 6 (%rbp) is frameless, and all its
 * bytes are set. The file counts as built without frame pointers (@m->whole,
 * every byte of its executable PT_LOAD segments set) when most FDEs that move
 * the CFA at all do it without %rbp: flat leaves are frameless in
 * frame-pointer builds too (gcc 12), so they do not vote. Addresses become
 * file offsets through the executable PT_LOAD segment holding them.
 * Thread-safe apart from libelf's global elf_version().
 *
 * @return 0; -ENOEXEC not ELF or no executable PT_LOAD; -ENOTSUP not ELF64
 * x86-64; -ENOENT neither .eh_frame nor .debug_frame has data (a separate
 * debug file has .eh_frame as NOBITS); -EINVAL the CFI is malformed (reads
 * never pass a section's end); -ENOMEM. On failure @m holds nothing.
 */
int rec_cfimap__classify(int fd, struct rec_cfimap *m);

/**
 * rec_cfimap__test() - whether the block holding file offset @off is set.
 * @return 1 set, 0 not. Binary search; @m is only read.
 */
int rec_cfimap__test(const struct rec_cfimap *m, uint64_t off);

/** rec_cfimap__release() - free what classify filled and zero @m. Accepts NULL and zeroes. */
void rec_cfimap__release(struct rec_cfimap *m);

#endif /* REC_CFIMAP_H */
