/* SPDX-License-Identifier: MIT */
/*
 * dwinline.h - per compile unit index of DWARF inlined subroutines, so
 * that the inline chain of an address costs a binary search instead of a
 * walk of the whole unit (dwarf_getscopes walks it on every call). Each
 * unit is indexed once, on its first lookup. Used only by elfsym.c.
 */
#ifndef SA_REPORT_DWINLINE_H
#define SA_REPORT_DWINLINE_H

#include <stddef.h>
#include <elfutils/libdw.h>

struct rpt_dwinline;

/** rpt_dwinline__new() - an empty index. @return it, or NULL (ENOMEM). */
struct rpt_dwinline *rpt_dwinline__new(void);

/** rpt_dwinline__free() - release it. Accepts NULL. */
void rpt_dwinline__free(struct rpt_dwinline *x);

/**
 * rpt_dwinline__chain() - the inlined subroutines holding DWARF address
 * @addr in compile unit @cu, innermost first, up to (not including) the
 * enclosing subprogram: what dwarf_getscopes() gives, filtered to
 * DW_TAG_inlined_subroutine. @out: receives copies of the DIEs, valid as
 * long as the Dwarf of @cu. @return the number of DIEs stored (0 when
 * none, or when the unit could not be indexed for lack of memory).
 */
int rpt_dwinline__chain(struct rpt_dwinline *x, Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die *out,
			int cap);

#endif /* SA_REPORT_DWINLINE_H */
