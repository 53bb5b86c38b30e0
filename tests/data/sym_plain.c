// SPDX-License-Identifier: MIT
/*
 * sym_plain.c - fixture for tests/unit/report/test_symbolize.c: functions
 * with known names (global and static) that the symbolizer must name exactly.
 */
#include <stdlib.h>

volatile unsigned long sink;

__attribute__((noinline)) void plain_alpha(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * 3;
}

__attribute__((noinline)) static void plain_static_beta(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink ^= i * 7;
	plain_alpha(n);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 10;

	plain_static_beta(n);
	return 0;
}
