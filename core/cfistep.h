/* SPDX-License-Identifier: MIT */
/*
 * cfistep.h - one x86-64 CFI row (the CFA and the rules for rbx, rbp, rsp and
 * the return address) and the step from a frame to its caller by it, as libdwfl
 * takes it (elfutils 0.188 frame_unwind.c): sa-record's trim (record/drain/uwtrim.c)
 * and sa-report's unwinder (report/unwind/unwind.c) both step with this one code, so
 * the words the recorder keeps are those the report reads. docs/unwinding.md.
 */
#ifndef SAC_CFISTEP_H
#define SAC_CFISTEP_H

#include <stdbool.h>
#include <stdint.h>

/* x86-64 DWARF register numbers (System V psABI, figure 3.36). */
#define SAC_DWARF_RBX 3
#define SAC_DWARF_RBP 6
#define SAC_DWARF_RSP 7
#define SAC_DWARF_RA  16 /* the return address column */

#define SAC_CFI_NO_CFA 0xff /* cfa_reg where the CFA is unknown */

/* How to step from a frame at this address to its caller. */
enum sac_cfi_how {
	SAC_CFI_RULES, /* by the row's rules */
	SAC_CFI_FP,    /* no CFI here: libdwfl's frame-pointer fallback */
	SAC_CFI_DWFL,  /* a rule the row does not evaluate: let libdwfl walk */
};

/* Where a register of the caller is, given the CFA. */
enum sac_cfi_rule {
	SAC_CFI_UNSET, /* cannot be recovered ("undefined", or unreadable CFI) */
	SAC_CFI_SAME,  /* this frame did not change it */
	SAC_CFI_AT,    /* saved at CFA + off */
	SAC_CFI_VAL,   /* its value is CFA + off */
};

struct sac_cfi_row {
	uint8_t how;		   /* enum sac_cfi_how */
	uint8_t cfa_reg;	   /* SAC_DWARF_RBX, _RBP, _RSP or SAC_CFI_NO_CFA */
	uint8_t rbx, rbp, rsp, ra; /* enum sac_cfi_rule */
	bool signal; /* a signal frame (CIE augmentation 'S'): its caller's pc is exact */
	int64_t cfa_off, rbx_off, rbp_off, rsp_off, ra_off; /* 0 where unused */
};

/* A register of the frame being stepped from: its value, if known. */
struct sac_cfi_reg {
	uint64_t v;
	bool ok;
};

/*
 * The registers a walk tracks. A sample has rsp and rbp; rbx is unknown at
 * the leaf, and known in a caller whose callee saved it: libdw's x86-64 rules
 * leave rbx undefined where a row does not say, so it lasts one step unless
 * the row says same-value. ld.so's _dl_runtime_resolve keeps its CFA in rbx;
 * _dl_fixup, which it calls, pushes rbx. Where a rule saves rbx, the slot is
 * read only when a CFA by rbx needs it (@bx_at): every word read is a word
 * sa-record keeps, and almost no walk needs rbx.
 */
struct sac_cfi_regs {
	struct sac_cfi_reg sp, fp, bx;
	bool bx_at; /* bx.v is the address rbx is saved at, not read yet */
};

/*
 * Reads the stack word at @addr into @v (0 where it cannot): false where the
 * captured copy does not hold it. Each caller logs its reads here.
 */
typedef bool (*sac_cfi_read_fn)(void *ctx, uint64_t addr, uint64_t *v);

/* The caller's register by @rule, given the CFA and the callee's value @same. */
static inline struct sac_cfi_reg sac_cfi__caller_reg(uint8_t rule, int64_t off, uint64_t cfa,
						     struct sac_cfi_reg same, sac_cfi_read_fn read,
						     void *ctx)
{
	struct sac_cfi_reg r = {0, false};

	switch (rule) {
	case SAC_CFI_SAME:
		return same;
	case SAC_CFI_AT:
		r.ok = read(ctx, cfa + (uint64_t)off, &r.v);
		return r;
	case SAC_CFI_VAL:
		return (struct sac_cfi_reg){cfa + (uint64_t)off, true};
	}
	return r;
}

/*
 * The frame-pointer fallback of elfutils' x86-64 backend; see sac_cfi__step().
 * It sets rsp and rbp only: the caller's rbx is unknown.
 */
static inline uint64_t sac_cfi__fp_step(struct sac_cfi_regs *g, sac_cfi_read_fn read, void *ctx)
{
	uint64_t old_sp = g->sp.ok ? g->sp.v : 0, fp = g->fp.v, ra;
	struct sac_cfi_reg prev = {0, true};

	if (!g->fp.ok || !fp)
		return 0;
	if (!read(ctx, fp, &prev.v))
		prev.v = 0;
	if (!read(ctx, fp + 8, &ra) || old_sp >= fp + 16)
		return 0;
	*g = (struct sac_cfi_regs){{fp + 16, true}, prev, {0, false}, false};
	return ra;
}

/* The frame's rbx, read from its slot if a rule saved it there. */
static inline struct sac_cfi_reg sac_cfi__bx(struct sac_cfi_regs *g, sac_cfi_read_fn read,
					     void *ctx)
{
	if (g->bx_at) {
		g->bx.ok = read(ctx, g->bx.v, &g->bx.v);
		g->bx_at = false;
	}
	return g->bx;
}

/**
 * sac_cfi__step() - step from a frame with registers @g to its caller as
 * libdwfl would: by @r's rules, or for a row of how SAC_CFI_FP the
 * frame-pointer fallback. Rows of how SAC_CFI_DWFL are the caller's to handle.
 * @r: the row at the frame's pc (pc - 1 for a caller's frame); borrowed.
 * @g: the frame's rsp, rbp and rbx, replaced by the caller's.
 * @read: reads a stack word, with @ctx. Inline so that each caller's reader
 * is called directly; thread-safe as @read is.
 * @return the caller's pc, 0 where the walk ends.
 */
static inline uint64_t sac_cfi__step(const struct sac_cfi_row *r, struct sac_cfi_regs *g,
				     sac_cfi_read_fn read, void *ctx)
{
	struct sac_cfi_reg cfa, ra, fp;

	if (r->how == SAC_CFI_FP)
		return sac_cfi__fp_step(g, read, ctx);
	cfa = r->cfa_reg == SAC_DWARF_RSP   ? g->sp
	      : r->cfa_reg == SAC_DWARF_RBP ? g->fp
	      : r->cfa_reg == SAC_DWARF_RBX ? sac_cfi__bx(g, read, ctx)
					    : (struct sac_cfi_reg){0, false};
	if (!cfa.ok)
		return 0; /* no rule can be evaluated: libdwfl ends here */
	cfa.v += (uint64_t)r->cfa_off;
	/*
	 * libdwfl reads every register's rule in DWARF order: rbx, rbp, rsp,
	 * then ra; rbx's slot is read later, if ever (struct sac_cfi_regs).
	 */
	if (r->rbx == SAC_CFI_AT) {
		g->bx = (struct sac_cfi_reg){cfa.v + (uint64_t)r->rbx_off, true};
		g->bx_at = true;
	} else if (r->rbx != SAC_CFI_SAME) {
		g->bx = sac_cfi__caller_reg(r->rbx, r->rbx_off, cfa.v, g->bx, read, ctx);
		g->bx_at = false;
	}
	fp = sac_cfi__caller_reg(r->rbp, r->rbp_off, cfa.v, g->fp, read, ctx);
	g->sp = sac_cfi__caller_reg(r->rsp, r->rsp_off, cfa.v, g->sp, read, ctx);
	g->fp = fp;
	ra = sac_cfi__caller_reg(r->ra, r->ra_off, cfa.v, (struct sac_cfi_reg){0, false}, read,
				 ctx);
	return ra.ok ? ra.v : 0;
}

#endif /* SAC_CFISTEP_H */
