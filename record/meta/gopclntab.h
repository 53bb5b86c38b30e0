/* SPDX-License-Identifier: MIT */
/*
 * gopclntab.h - Go function names from .gopclntab (gopclntab.c), for a
 * stripped Go binary, which has no other symbols: elfread.c's last resort.
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

#endif /* REC_GOPCLNTAB_H */
