// SPDX-License-Identifier: MIT
/*
 * test_noise.c - report/output/noise.c: Fisher's exact test and the exact
 * binomial test against values summed exactly (mpmath, 60 digits, from
 * log-gamma terms), from 3 samples to a million, no change, no samples,
 * the normal tail under |z| 2, and the Bonferroni threshold.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>
#include "sa_cmocka.h"

#include "output_int.h"

/* @got within a relative 1e-6 of @want */
static void near(double got, double want)
{
	if (fabs(got - want) > 1e-6 * want)
		fail_msg("p %.12g, want %.12g", got, want);
}

static void test_fisher(void **state)
{
	(void)state;
	/* 60% -> 30% of twice the samples: far beyond noise, both directions */
	near(rpt_noise__p(600, 1000, 600, 2000, false), 9.85112024336e-56);
	/* 3 samples after, none before although BEFORE is 10x larger */
	near(rpt_noise__p(0, 10000, 3, 1000, false), 0.00149853338441);
	near(rpt_noise__p(30, 1000, 60, 1000, false), 0.00162061901874);
	near(rpt_noise__p(100, 1000, 140, 1000, false), 0.00718542810408);
	/* 45.00% -> 45.25% of a million samples each */
	near(rpt_noise__p(450000, 1e6, 452500, 1e6, false), 0.000383711642241);
	/* a frame that vanished: 5 of 20 before, 0 of 2000 after */
	near(rpt_noise__p(5, 20, 0, 2000, false), 1.11185902381e-10);
	/* symmetric: swapping the sides gives the same p */
	near(rpt_noise__p(60, 1000, 30, 1000, false), 0.00162061901874);
}

static void test_binomial(void **state)
{
	(void)state;
	near(rpt_noise__p(10, 100, 30, 999, true), 0.00222143377323); /* totals unused */
	near(rpt_noise__p(0, 1, 21, 1, true), 9.53674316406e-7);
	near(rpt_noise__p(1000, 0, 1150, 0, true), 0.00130635413652);
}

static void test_edges(void **state)
{
	(void)state;
	assert_true(rpt_noise__p(100, 1000, 200, 2000, false) == 1);   /* same share */
	assert_true(rpt_noise__p(0, 1000, 0, 2000, false) == 1);       /* no samples */
	assert_true(rpt_noise__p(1000, 1000, 2000, 2000, false) == 1); /* all samples */
	assert_true(rpt_noise__p(5, 0, 5, 10, false) == 1);	       /* empty BEFORE */
	assert_true(rpt_noise__p(7, 0, 7, 0, true) == 1);
	/* |z| under 2: the normal tail (z = 1 exactly: 25 -> 25 + 5 of raw counts ~ sqrt(25)) */
	near(rpt_noise__p(10, 0, 15, 0, true), erfc(1 / M_SQRT2));
	assert_true(rpt_noise__p(10, 0, 15, 0, true) > 0.045);
	near(rpt_noise__threshold(0.001, 200), 5e-6);
	near(rpt_noise__threshold(0.001, 0), 0.001);
}

SA_TEST_MAIN(test_fisher, test_binomial, test_edges)
