/* SPDX-License-Identifier: MIT */
/*
 * uwrows.h - what the call-frame information says at one code address,
 * boiled down to the x86-64 registers a captured sample has (rip, rsp,
 * rbp) and rbx, which callees save and ld.so's resolver keeps its CFA in,
 * and kept per (binary, address) so that libdw interprets an FDE once
 * per distinct address of a file instead of once per frame of every unwind
 * of every process image that maps it.
 * A row is core/cfistep.h's, stepped by its rules (libdwfl's, elfutils 0.188
 * frame_unwind.c), so the walk in unwind.c gives the frames libdwfl's would;
 * see docs/unwinding.md.
 */
#ifndef SA_REPORT_UWROWS_H
#define SA_REPORT_UWROWS_H

#include <stdbool.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

#include "cfistep.h"
#include "strpool.h"

#define RPT_UW_MAX_BID 64 /* bytes of a build id */

struct rpt_uwrows {
	struct rpt_hmap index; /* (binary << 48 | pc) -> index in rows */
	struct rpt_hmap files; /* hash of a binary's path -> has .debug_frame */
	struct sac_cfi_row *rows;
	size_t nrows, cap;
};

/**
 * rpt_uwrows__get() - the row for @pc in binary @img (an index below
 * 65536; uwbin.h) alone in @dwfl, @pc an address of that Dwfl.
 * @return a pointer valid until the next call, or NULL with errno = ENOMEM.
 */
const struct sac_cfi_row *rpt_uwrows__get(struct rpt_uwrows *t, Dwfl *dwfl, uint32_t img,
					  uint64_t pc);

/**
 * rpt_uwrows__compile() - @frame, from dwarf_cfi_addrframe(), as a row: how
 * SAC_CFI_RULES with its rules, or SAC_CFI_DWFL where a rule is not one of the simple
 * forms. @r's other fields are left as they are. Exported for
 * record/cfi/cfirows.c's unit test, which compares that code's rows with these.
 */
void rpt_uwrows__compile(Dwarf_Frame *frame, struct sac_cfi_row *r);

/** rpt_uwrows__fini() - release the table. Safe on a zeroed one. */
void rpt_uwrows__fini(struct rpt_uwrows *t);

#endif /* SA_REPORT_UWROWS_H */
