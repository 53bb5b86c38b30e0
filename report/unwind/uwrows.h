/* SPDX-License-Identifier: MIT */
/*
 * uwrows.h - what the call-frame information says at one code address,
 * boiled down to the three x86-64 registers a captured sample has (rip, rsp,
 * rbp), and kept per (binary, address) so that libdw interprets an FDE once
 * per distinct address of a file instead of once per frame of every unwind
 * of every process image that maps it.
 * The step rules follow libdwfl's (elfutils 0.188 frame_unwind.c), so the
 * walk in unwind.c gives the frames libdwfl's would; see docs/unwinding.md.
 */
#ifndef SA_REPORT_UWROWS_H
#define SA_REPORT_UWROWS_H

#include <stdbool.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

#include "strpool.h"

/* x86-64 DWARF register numbers (System V psABI, figure 3.36). */
#define UW_X86_RBP 6
#define UW_X86_RSP 7
#define UW_X86_RA  16 /* the return address column */

#define UW_MAX_BID 64 /* bytes of a build id */

/* How to step from a frame at this address to its caller. */
enum uw_how {
	UW_CFI,	 /* by the rules below */
	UW_FP,	 /* no CFI here: libdwfl's frame-pointer fallback */
	UW_DWFL, /* a rule this table does not evaluate: let libdwfl walk */
};

/* Where a register of the caller is, given the CFA. */
enum uw_rule {
	UW_UNSET, /* cannot be recovered ("undefined", or unreadable CFI) */
	UW_SAME,  /* this frame did not change it */
	UW_AT,	  /* saved at CFA + off */
	UW_VAL,	  /* its value is CFA + off */
};

struct uw_row {
	uint8_t how;	      /* enum uw_how */
	uint8_t cfa_reg;      /* DWARF 6 (rbp) or 7 (rsp); 0xff: the CFA is unknown */
	uint8_t rbp, rsp, ra; /* enum uw_rule */
	bool signal;	      /* a signal frame: its caller's pc is exact */
	int64_t cfa_off, rbp_off, rsp_off, ra_off;
};

#define UW_NO_CFA 0xff

struct rpt_uwrows {
	struct rpt_hmap index; /* (binary << 48 | pc) -> index in rows */
	struct rpt_hmap files; /* hash of a binary's path -> has .debug_frame */
	struct uw_row *rows;
	size_t nrows, cap;
};

/**
 * rpt_uwrows__get() - the row for @pc in binary @img (an index below
 * 65536; uwbin.h) alone in @dwfl, @pc an address of that Dwfl.
 * @return a pointer valid until the next call, or NULL with errno = ENOMEM.
 */
const struct uw_row *rpt_uwrows__get(struct rpt_uwrows *t, Dwfl *dwfl, uint32_t img, uint64_t pc);

/**
 * rpt_uwrows__compile() - @frame, from dwarf_cfi_addrframe(), as a row: how
 * UW_CFI with its rules, or UW_DWFL where a rule is not one of the simple
 * forms. @r's other fields are left as they are. Exported for
 * record/cfirows.c's unit test, which compares that code's rows with these.
 */
void rpt_uwrows__compile(Dwarf_Frame *frame, struct uw_row *r);

/** rpt_uwrows__fini() - release the table. Safe on a zeroed one. */
void rpt_uwrows__fini(struct rpt_uwrows *t);

#endif /* SA_REPORT_UWROWS_H */
