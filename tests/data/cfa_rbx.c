// SPDX-License-Identifier: MIT
/*
 * cfa_rbx.c - a frame whose CFA is kept in rbx, as in ld.so's lazy-binding
 * resolver (_dl_runtime_resolve_xsavec: push %rbx; mov %rsp,%rbx; and
 * $-64,%rsp), between a caller and a spinning leaf that both save rbx, so
 * an unwinder that tracks rbx walks from the leaf to main. Built without
 * frame pointers for 6160. Usage: cfa_rbx [SECONDS] (of its own CPU time)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void cfa_rbx_frame(void);

volatile unsigned long cfa_rbx_sink;

/* The leaf: it clobbers rbx, so it pushes it and its CFI says where. */
__attribute__((noinline, used)) void cfa_rbx_leaf(void)
{
	for (unsigned long i = 0; i < 1000000; i++)
		cfa_rbx_sink += i;
	__asm__ volatile("" ::: "rbx");
}

/* The resolver's shape: its CFA is rbx + 16 from the mov on. */
__asm__(".text\n"
	".globl cfa_rbx_frame\n"
	".type cfa_rbx_frame, @function\n"
	"cfa_rbx_frame:\n"
	".cfi_startproc\n"
	"	push %rbx\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_rel_offset %rbx, 0\n"
	"	mov %rsp, %rbx\n"
	".cfi_def_cfa_register %rbx\n"
	"	and $-64, %rsp\n"
	"	sub $192, %rsp\n"
	"	call cfa_rbx_leaf\n"
	"	mov %rbx, %rsp\n"
	".cfi_def_cfa_register %rsp\n"
	"	pop %rbx\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_restore %rbx\n"
	"	ret\n"
	".cfi_endproc\n"
	".size cfa_rbx_frame, .-cfa_rbx_frame\n");

/* The caller keeps its count in rbx across the calls, so it saves rbx too. */
__attribute__((noinline)) unsigned long cfa_rbx_run(double seconds)
{
	struct timespec t0, t;
	unsigned long n = 0;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		cfa_rbx_frame();
		n++;
		__asm__ volatile("" : "+b"(n));
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	return n;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;

	printf("%lu\n", cfa_rbx_run(seconds));
	return 0;
}
