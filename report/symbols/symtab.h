/* SPDX-License-Identifier: MIT */
/*
 * symtab.h - sorted address -> name tables for symbols carried in a
 * recording: kernel symbols (KSYM), JIT symbols per pid (JITSYM) and
 * embedded ELF symbols per binary (USYM), looked up by binary search.
 */
#ifndef SA_REPORT_SYMTAB_H
#define SA_REPORT_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rpt_symtab_ent {
	uint64_t key;	/* table-defined: pid, binary index, or 0 */
	uint64_t start; /* address or file offset of the first byte */
	uint64_t size;	/* 0 = unknown: extends to the next symbol */
	uint32_t name;	/* offset in the caller's string pool */
};

struct rpt_symtab {
	struct rpt_symtab_ent *ents;
	size_t n, cap;
	bool sorted;
};

/** rpt_symtab__add() - add a symbol (copied). @return 0 or -ENOMEM. */
int rpt_symtab__add(struct rpt_symtab *st, uint64_t key, uint64_t start, uint64_t size,
		    uint32_t name);

/**
 * rpt_symtab__lookup() - the symbol of @key holding @addr: the last one
 * starting at or below it, if its size covers @addr (or it has no size).
 * Sorts the table on first use after an add (not thread-safe).
 * @return a borrowed entry, valid until the next add, or NULL.
 */
const struct rpt_symtab_ent *rpt_symtab__lookup(struct rpt_symtab *st, uint64_t key, uint64_t addr);

/** rpt_symtab__fini() - release the table. Safe on a zeroed table. */
void rpt_symtab__fini(struct rpt_symtab *st);

#endif /* SA_REPORT_SYMTAB_H */
