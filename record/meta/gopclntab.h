/* SPDX-License-Identifier: MIT */
/*
 * gopclntab.h - Go function names from .gopclntab (gopclntab.c), for a
 * stripped Go binary, which has no other symbols: elfread.c's last resort;
 * and the file:line and inline frames of an address, which golines.c
 * embeds for any Go binary.
 */
#ifndef REC_GOPCLNTAB_H
#define REC_GOPCLNTAB_H

#include <stdint.h>
#include "elfread.h"

/* Turn virtual address @va into a file offset; 0, or nonzero when no PT_LOAD holds it. */
typedef int (*rec_gopcln_off_fn)(const void *arg, uint64_t va, uint64_t *off);

/**
 * rec_gopclntab__collect() - every function of the .gopclntab at @data
 * (@size bytes, borrowed), as symbols of @t: file offset (@to_off with
 * @arg), size (to the next function's entry) and name (copied into
 * t->names). @text_addr: the .text section's address, the entries' base
 * when the table leaves it to relocation (a PIE).
 * @t: empty on entry; on failure the caller releases what it holds.
 * @return 0; -ENOENT not a table this reader knows (or no function in a
 * PT_LOAD); -EFBIG over REC_BIN_MAX_SYMS functions or names over
 * REC_BIN_MAX_SECTION; -ENOMEM.
 */
int rec_gopclntab__collect(const void *data, uint64_t size, uint64_t text_addr,
			   rec_gopcln_off_fn to_off, const void *arg, struct rec_elftab *t);

/* Where a Go binary's line tables are, borrowed from its ELF file. */
struct rec_gopcln_src {
	const void *pcln; /* .gopclntab */
	uint64_t pcln_size, pcln_va;
	uint64_t text_addr;    /* .text's address, as for rec_gopclntab__collect() */
	const void *noptrdata; /* .noptrdata, where moduledata says where go:func.* is; or NULL */
	uint64_t noptrdata_size;
	const void *rodata; /* .rodata, which holds go:func.*; or NULL */
	uint64_t rodata_size, rodata_va;
};

/* A .gopclntab and the inline trees of go:func.*, copied. */
struct rec_gopcln;

/* One frame of an address; the strings are the table's, valid while it lives. */
struct rec_goframe {
	const char *name;
	const char *file;
	uint32_t line;
};

/**
 * rec_gopcln__new() - copy the tables @s points to (Go 1.16 on; inline
 * trees of 1.18 on, when moduledata is found: not in a PIE).
 * @return an object released with rec_gopcln__free(), or NULL with errno
 * ENOENT (no layout this reader knows lines of) or ENOMEM.
 */
struct rec_gopcln *rec_gopcln__new(const struct rec_gopcln_src *s);

/**
 * rec_gopcln__frames() - the frames of address @va, outermost first: the
 * function that holds it, then each function inlined into it, every one
 * at its position (the call site of the next, the last at @va), as Go's
 * traceback names them.
 * @out: room for @cap frames. *@lo, *@hi: set to the addresses around @va
 * that have the same frames.
 * @return their number; 0 when no function or line table holds @va, when
 * an inlined frame has no tree to name it, or past @cap.
 */
int rec_gopcln__frames(const struct rec_gopcln *g, uint64_t va, struct rec_goframe *out,
		       unsigned cap, uint64_t *lo, uint64_t *hi);

/** rec_gopcln__bytes() - heap bytes it holds (0 for NULL). */
uint64_t rec_gopcln__bytes(const struct rec_gopcln *g);

/** rec_gopcln__free() - release it. Accepts NULL. */
void rec_gopcln__free(struct rec_gopcln *g);

#endif /* REC_GOPCLNTAB_H */
