// SPDX-License-Identifier: MIT
/*
 * test_cfistep.c - sac_cfi__step() on a made-up stack: the CFA from rsp,
 * rbp or rbx, each rule (same, at, val, unset), reads in libdwfl's order
 * (rbp, rsp, ra; rbx's slot only when a CFA by rbx needs it), the end of a walk where the CFA or
 * the return address is unknown, and the frame-pointer fallback's bounds (rbx unknown after it).
 * Both unwinders step with this code.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "cfistep.h"

#define SP0 0x7ffc0000u

/* A 64-word stack at SP0 and the addresses read from it, in order. */
struct stack {
	uint64_t w[64];
	uint64_t reads[8];
	unsigned nreads;
};

static bool read_word(void *ctx, uint64_t addr, uint64_t *v)
{
	struct stack *s = ctx;

	*v = 0;
	if (s->nreads < 8)
		s->reads[s->nreads++] = addr;
	if (addr < SP0 || addr - SP0 > sizeof(s->w) - 8 || (addr & 7))
		return false;
	*v = s->w[(addr - SP0) / 8];
	return true;
}

/* A frame after `push rbp; mov rbp, rsp`: the CFA is rbp + 16. */
static void test_rbp_frame(void **state)
{
	struct sac_cfi_row r = {.cfa_reg = SAC_DWARF_RBP,
				.cfa_off = 16,
				.rbp = SAC_CFI_AT,
				.rbp_off = -16,
				.rsp = SAC_CFI_VAL,
				.ra = SAC_CFI_AT,
				.ra_off = -8};
	struct sac_cfi_regs g = {{SP0, true}, {SP0 + 32, true}, {0, false}, false};
	struct stack s = {0};

	(void)state;
	s.w[4] = 0xfeed;   /* the saved rbp at SP0 + 32 */
	s.w[5] = 0x401234; /* the return address at SP0 + 40 */
	assert_int_equal(sac_cfi__step(&r, &g, read_word, &s), 0x401234);
	assert_true(g.sp.ok && g.fp.ok && !g.bx.ok);
	assert_int_equal(g.sp.v, SP0 + 48);
	assert_int_equal(g.fp.v, 0xfeed);
	assert_int_equal(s.nreads, 2);
	assert_int_equal(s.reads[0], SP0 + 32); /* rbp's rule first, as libdwfl */
	assert_int_equal(s.reads[1], SP0 + 40);
}

/* A leaf by rsp: rbp unchanged (same), rsp the CFA, ra unset ends the walk. */
static void test_rsp_frame_and_unset(void **state)
{
	struct sac_cfi_row r = {.cfa_reg = SAC_DWARF_RSP,
				.cfa_off = 8,
				.rbx = SAC_CFI_SAME,
				.rbp = SAC_CFI_SAME,
				.rsp = SAC_CFI_VAL,
				.ra = SAC_CFI_AT,
				.ra_off = -8};
	struct sac_cfi_regs g = {{SP0, true}, {0x1234, true}, {0x77, true}, false};
	struct stack s = {0};

	(void)state;
	s.w[0] = 0x405000;
	assert_int_equal(sac_cfi__step(&r, &g, read_word, &s), 0x405000);
	assert_int_equal(g.sp.v, SP0 + 8);
	assert_int_equal(g.fp.v, 0x1234);
	assert_true(g.bx.ok && g.bx.v == 0x77); /* same */
	r.ra = SAC_CFI_UNSET;
	assert_int_equal(sac_cfi__step(&r, &g, read_word, &s), 0);
	r.ra = SAC_CFI_AT;
	r.ra_off = 4096; /* outside the copy */
	assert_int_equal(sac_cfi__step(&r, &g, read_word, &s), 0);
}

/* No CFA (unknown register, or an unknown rbp): the walk ends, nothing read. */
static void test_no_cfa(void **state)
{
	struct sac_cfi_row r = {.cfa_reg = SAC_CFI_NO_CFA, .ra = SAC_CFI_AT};
	struct sac_cfi_regs g = {{SP0, true}, {SP0, false}, {SP0, false}, false};
	struct stack s = {0};

	(void)state;
	assert_int_equal(sac_cfi__step(&r, &g, read_word, &s), 0);
	r.cfa_reg = SAC_DWARF_RBP;
	assert_int_equal(sac_cfi__step(&r, &g, read_word, &s), 0);
	r.cfa_reg = SAC_DWARF_RBX; /* rbx unknown, as at the leaf */
	assert_int_equal(sac_cfi__step(&r, &g, read_word, &s), 0);
	assert_int_equal(s.nreads, 0);
}

/* libdwfl's x86-64 frame-pointer fallback: [rbp] and [rbp + 8], rsp = rbp + 16. */
static void test_fp_fallback(void **state)
{
	struct sac_cfi_row r = {.how = SAC_CFI_FP};
	struct sac_cfi_regs g = {{SP0, true}, {SP0 + 16, true}, {0x99, true}, false};
	struct stack s = {0};

	(void)state;
	s.w[2] = SP0 + 64;
	s.w[3] = 0x407000;
	assert_int_equal(sac_cfi__step(&r, &g, read_word, &s), 0x407000);
	assert_int_equal(g.sp.v, SP0 + 32);
	assert_int_equal(g.fp.v, SP0 + 64);
	assert_false(g.bx.ok); /* elfutils' fallback sets rsp and rbp only */
	/* a caller's rsp not above the old one ends the walk */
	g.sp = (struct sac_cfi_reg){SP0 + 200, true};
	g.fp = (struct sac_cfi_reg){SP0 + 16, true};
	assert_int_equal(sac_cfi__step(&r, &g, read_word, &s), 0);
	g.fp.v = 0;
	assert_int_equal(sac_cfi__fp_step(&g, read_word, &s), 0);
}

/*
 * ld.so's _dl_runtime_resolve_xsavec: `push %rbx; mov %rsp,%rbx; and
 * $-64,%rsp`, so the CFA is rbx + 16 and rbx is saved at CFA - 16. Its rbx
 * is known where the callee saved it: the leaf's step (AT) recovers it, and
 * then the rbx frame steps by it, reading that slot only then.
 */
static void test_rbx_frame(void **state)
{
	struct sac_cfi_row leaf = {.cfa_reg = SAC_DWARF_RSP,
				   .cfa_off = 16,
				   .rbx = SAC_CFI_AT,
				   .rbx_off = -16,
				   .rbp = SAC_CFI_SAME,
				   .rsp = SAC_CFI_VAL,
				   .ra = SAC_CFI_AT,
				   .ra_off = -8};
	struct sac_cfi_row rbx = {.cfa_reg = SAC_DWARF_RBX,
				  .cfa_off = 16,
				  .rbx = SAC_CFI_AT,
				  .rbx_off = -16,
				  .rbp = SAC_CFI_SAME,
				  .rsp = SAC_CFI_VAL,
				  .ra = SAC_CFI_AT,
				  .ra_off = -8};
	struct sac_cfi_regs g = {{SP0, true}, {0x5, true}, {0, false}, false};
	struct stack s = {0};

	(void)state;
	s.w[0] = SP0 + 256; /* the leaf saved rbx: the resolver's, SP0 + 256 */
	s.w[1] = 0x401000;
	s.w[32] = 0xb0b;    /* the resolver's caller's rbx, at its CFA - 16 */
	s.w[33] = 0x402000; /* its return address */
	assert_int_equal(sac_cfi__step(&rbx, &g, read_word, &s), 0); /* rbx unknown */
	assert_int_equal(sac_cfi__step(&leaf, &g, read_word, &s), 0x401000);
	assert_true(g.bx.ok && g.bx_at && g.bx.v == SP0); /* its slot, not read yet */
	assert_int_equal(s.nreads, 1);
	assert_int_equal(sac_cfi__step(&rbx, &g, read_word, &s), 0x402000);
	assert_true(g.bx.ok && g.sp.ok && g.fp.ok);
	assert_true(g.bx_at && g.bx.v == SP0 + 256);
	assert_true(sac_cfi__bx(&g, read_word, &s).v == 0xb0b && !g.bx_at);
	assert_int_equal(g.sp.v, SP0 + 256 + 16);
	assert_int_equal(g.fp.v, 0x5); /* same */
	assert_int_equal(s.nreads, 4);
	assert_int_equal(s.reads[1], SP0); /* the saved rbx, as the CFA needs it */
	assert_int_equal(s.reads[2], SP0 + 264);
	assert_int_equal(s.reads[3], SP0 + 256);
}

SA_TEST_MAIN(test_rbp_frame, test_rbx_frame, test_rsp_frame_and_unset, test_no_cfa,
	     test_fp_fallback)
