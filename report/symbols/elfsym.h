/* SPDX-License-Identifier: MIT */
/*
 * elfsym.h - one ELF file opened for symbolization: build id reading, file
 * offset -> ELF address, and address -> function frames (libdwfl's symbol
 * table) with DWARF inline expansion and source lines (dwload.h). Used only
 * by symbolize.c.
 */
#ifndef SA_REPORT_ELFSYM_H
#define SA_REPORT_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rpt_elfsym;

/* One frame of an address, innermost first. Strings borrowed from the file. */
struct rpt_elfsym_frame {
	const char *name; /* mangled when the file has a linkage name */
	const char *file; /* NULL when unknown */
	int line;
	bool inlined;
};

/**
 * rpt_elf__build_id() - read the GNU build id note of the ELF file at @path.
 * @buf, @cap: receives the id.
 * @return its length (0 when the file has none), or -errno (-ENOENT, and
 * -ENOEXEC when it is not ELF).
 */
int rpt_elf__build_id(const char *path, uint8_t *buf, size_t cap);

/**
 * rpt_elf__content_id() - the content hash of the file at @path
 * (core/contentid.h), what a recording names a file without a GNU build
 * id by ("MAP record" id_kind 1).
 * @buf, @cap: receives SAC_CONTENTID_LEN bytes.
 * @return SAC_CONTENTID_LEN, or -errno (rpt_bin_open()'s, -ENOSPC, read errors).
 */
int rpt_elf__content_id(const char *path, uint8_t *buf, size_t cap);

/**
 * rpt_elfsym__open() - open a binary for symbolization.
 * @sym_path: the file holding symbols and DWARF (a debug file, or the binary).
 * @bin_path: the binary itself when available (for its program headers,
 *            which debug files do not keep), or NULL.
 * @return an object released with rpt_elfsym__free(), or NULL with errno.
 */
struct rpt_elfsym *rpt_elfsym__open(const char *sym_path, const char *bin_path);

/** rpt_elfsym__free() - release it. Accepts NULL. */
void rpt_elfsym__free(struct rpt_elfsym *e);

struct rpt_dwload;

/**
 * rpt_elfsym__set_dwarf() - hand over the DWARF of the symbol file, opened
 * ahead of time by rpt_dwload__open() or the prefetcher; @d (may be NULL) is
 * owned by @e from now on. Without it, the DWARF is opened on first use.
 */
void rpt_elfsym__set_dwarf(struct rpt_elfsym *e, struct rpt_dwload *d);

/** rpt_elfsym__has_symtab() - whether a full .symtab exists (not stripped). */
bool rpt_elfsym__has_symtab(const struct rpt_elfsym *e);

/**
 * rpt_elfsym__vaddr() - ELF virtual address of file offset @off. @map_pgoff
 * is the file offset of the executable mapping holding it; it places the
 * segment when only a debug file (whose segment offsets are rewritten) is
 * at hand. @return 0, or -ENOENT when no loadable segment holds @off.
 */
int rpt_elfsym__vaddr(const struct rpt_elfsym *e, uint64_t off, uint64_t map_pgoff,
		      uint64_t *vaddr);

/**
 * rpt_elfsym__rank() - where the DWARF of ELF address @vaddr lies in a
 * .debug_info still being inflated (rpt_dwload__rank()), or 0 when its
 * lookup never waits for it (no DWARF, not opened yet, or all there).
 */
uint64_t rpt_elfsym__rank(const struct rpt_elfsym *e, uint64_t vaddr);

/**
 * rpt_elfsym__frames() - the function at ELF address @vaddr, preceded by the
 * functions inlined into it there (innermost first).
 * @out, @cap: caller's buffer; strings in it stay valid until rpt_elfsym__free().
 * @lines: also fill file and line.
 * @return the number of frames (0 when no symbol holds @vaddr).
 */
int rpt_elfsym__frames(struct rpt_elfsym *e, uint64_t vaddr, bool lines,
		       struct rpt_elfsym_frame *out, size_t cap);

#endif /* SA_REPORT_ELFSYM_H */
