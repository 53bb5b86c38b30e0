// SPDX-License-Identifier: MIT
/*
 * noise.c - whether a change between two profiles is beyond sampling noise
 * (--diff --svg colours, --diff --top's sig column): Fisher's exact test of
 * a/A against b/B (shares), the exact binomial test of a against b (raw
 * counts), both two-sided, and the Bonferroni threshold over many frames.
 */
#include <math.h>

#include "output_int.h"

/* Terms smaller than this share of the tail's sum end it: far below any
 * threshold sa uses (the family-wise rate over at most millions of frames). */
#define TAIL_EPS 1e-17

/* Under this |z| (two-sided normal p > 0.045, 45x the largest per-frame
 * threshold) the exact tail is not summed: it would take ~9 standard
 * deviations of terms per frame, for nothing. */
#define Z_EXACT 2.0

/* ln C(n, k) */
static double lchoose(double n, double k)
{
	int s;

	return lgamma_r(n + 1, &s) - lgamma_r(k + 1, &s) - lgamma_r(n - k + 1, &s);
}

/*
 * The tail of X ~ Hypergeom(N = A + B, K = B, n = a + b) from b away from the
 * mean: P(X >= b) when @up, else P(X <= b). Terms come from the ratio of
 * neighbouring probabilities, so the cost is the number of terms summed.
 */
static double hyper_tail(double a, double A, double b, double B, bool up)
{
	double N = A + B, K = B, n = a + b, M = N - K;
	double lo = fmax(0, n - M), hi = fmin(n, K);
	double t = exp(lchoose(K, b) + lchoose(M, n - b) - lchoose(N, n)), sum = t;

	for (double x = b; t > sum * TAIL_EPS;) {
		if (up ? x >= hi : x <= lo)
			break;
		if (up)
			t *= (K - x) * (n - x) / ((x + 1) * (M - n + x + 1)), x++;
		else
			t *= x * (M - n + x) / ((K - x + 1) * (n - x + 1)), x--;
		sum += t;
	}
	return sum;
}

/* The tail of X ~ Binomial(n = a + b, 1/2) from b away from n / 2. */
static double binom_tail(double a, double b, bool up)
{
	double n = a + b, t = exp(lchoose(n, b) - n * M_LN2), sum = t;

	for (double x = b; t > sum * TAIL_EPS;) {
		if (up ? x >= n : x <= 0)
			break;
		if (up)
			t *= (n - x) / (x + 1), x++;
		else
			t *= x / (n - x + 1), x--;
		sum += t;
	}
	return sum;
}

double rpt_noise__p(double a, double A, double b, double B, bool raw)
{
	double n, z, d, se;

	a = round(fmax(a, 0)), b = round(fmax(b, 0)), A = round(A), B = round(B);
	n = a + b;
	if (n == 0 || (!raw && (A < a || B < b || A == 0 || B == 0)))
		return 1;
	if (raw) {
		d = b - a;
		se = sqrt(n);
	} else {
		double p = n / (A + B);

		d = b / B - a / A;
		se = sqrt(p * (1 - p) * (1 / A + 1 / B));
	}
	if (d == 0)
		return 1;
	z = se > 0 ? fabs(d) / se : INFINITY;
	if (z < Z_EXACT)
		return erfc(z / M_SQRT2);
	return fmin(1, 2 * (raw ? binom_tail(a, b, d > 0) : hyper_tail(a, A, b, B, d > 0)));
}

double rpt_noise__threshold(double family, size_t tests)
{
	return tests ? family / (double)tests : family;
}
