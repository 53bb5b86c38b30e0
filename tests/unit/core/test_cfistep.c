// SPDX-License-Identifier: MIT
/*
 * test_cfistep.c - sac_cfi__step() on a made-up stack: the CFA from rsp or
 * rbp, each rule (same, at, val, unset), reads in libdwfl's order (rbp, rsp,
 * ra), the end of a walk where the CFA or the return address is unknown, and
 * the frame-pointer fallback's bounds. Both unwinders step with this code.
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
	struct sac_cfi_reg sp = {SP0, true}, fp = {SP0 + 32, true};
	struct stack s = {0};

	(void)state;
	s.w[4] = 0xfeed;   /* the saved rbp at SP0 + 32 */
	s.w[5] = 0x401234; /* the return address at SP0 + 40 */
	assert_int_equal(sac_cfi__step(&r, &sp, &fp, read_word, &s), 0x401234);
	assert_true(sp.ok && fp.ok);
	assert_int_equal(sp.v, SP0 + 48);
	assert_int_equal(fp.v, 0xfeed);
	assert_int_equal(s.nreads, 2);
	assert_int_equal(s.reads[0], SP0 + 32); /* rbp's rule first, as libdwfl */
	assert_int_equal(s.reads[1], SP0 + 40);
}

/* A leaf by rsp: rbp unchanged (same), rsp the CFA, ra unset ends the walk. */
static void test_rsp_frame_and_unset(void **state)
{
	struct sac_cfi_row r = {.cfa_reg = SAC_DWARF_RSP,
				.cfa_off = 8,
				.rbp = SAC_CFI_SAME,
				.rsp = SAC_CFI_VAL,
				.ra = SAC_CFI_AT,
				.ra_off = -8};
	struct sac_cfi_reg sp = {SP0, true}, fp = {0x1234, true};
	struct stack s = {0};

	(void)state;
	s.w[0] = 0x405000;
	assert_int_equal(sac_cfi__step(&r, &sp, &fp, read_word, &s), 0x405000);
	assert_int_equal(sp.v, SP0 + 8);
	assert_int_equal(fp.v, 0x1234);
	r.ra = SAC_CFI_UNSET;
	assert_int_equal(sac_cfi__step(&r, &sp, &fp, read_word, &s), 0);
	r.ra = SAC_CFI_AT;
	r.ra_off = 4096; /* outside the copy */
	assert_int_equal(sac_cfi__step(&r, &sp, &fp, read_word, &s), 0);
}

/* No CFA (unknown register, or an unknown rbp): the walk ends, nothing read. */
static void test_no_cfa(void **state)
{
	struct sac_cfi_row r = {.cfa_reg = SAC_CFI_NO_CFA, .ra = SAC_CFI_AT};
	struct sac_cfi_reg sp = {SP0, true}, fp = {SP0, false};
	struct stack s = {0};

	(void)state;
	assert_int_equal(sac_cfi__step(&r, &sp, &fp, read_word, &s), 0);
	r.cfa_reg = SAC_DWARF_RBP;
	assert_int_equal(sac_cfi__step(&r, &sp, &fp, read_word, &s), 0);
	assert_int_equal(s.nreads, 0);
}

/* libdwfl's x86-64 frame-pointer fallback: [rbp] and [rbp + 8], rsp = rbp + 16. */
static void test_fp_fallback(void **state)
{
	struct sac_cfi_row r = {.how = SAC_CFI_FP};
	struct sac_cfi_reg sp = {SP0, true}, fp = {SP0 + 16, true};
	struct stack s = {0};

	(void)state;
	s.w[2] = SP0 + 64;
	s.w[3] = 0x407000;
	assert_int_equal(sac_cfi__step(&r, &sp, &fp, read_word, &s), 0x407000);
	assert_int_equal(sp.v, SP0 + 32);
	assert_int_equal(fp.v, SP0 + 64);
	/* a caller's rsp not above the old one ends the walk */
	sp = (struct sac_cfi_reg){SP0 + 200, true};
	fp = (struct sac_cfi_reg){SP0 + 16, true};
	assert_int_equal(sac_cfi__step(&r, &sp, &fp, read_word, &s), 0);
	fp.v = 0;
	assert_int_equal(sac_cfi__fp_step(&sp, &fp, read_word, &s), 0);
}

SA_TEST_MAIN(test_rbp_frame, test_rsp_frame_and_unset, test_no_cfa, test_fp_fallback)
