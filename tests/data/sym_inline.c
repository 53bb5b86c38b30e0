// SPDX-License-Identifier: MIT
/*
 * sym_inline.c - fixture: inl_leaf() is always inlined into inl_outer(), so
 * its code carries a DWARF inline frame with inl_outer() as the caller.
 */
#include <stdlib.h>

volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long inl_leaf(unsigned long n)
{
	unsigned long s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += sink * i + (i >> 3);
	return s;
}

__attribute__((noinline)) unsigned long inl_outer(unsigned long n)
{
	sink = n;
	return inl_leaf(n) + 1;
}

int main(int argc, char **argv)
{
	return (int)inl_outer(argc > 1 ? strtoul(argv[1], NULL, 0) : 10);
}
