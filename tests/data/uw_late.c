// SPDX-License-Identifier: MIT
/*
 * uw_late.c - code the in-kernel unwinder has no range for yet (a library
 * mapped since the recorder last read the side band, as zstd's memset at
 * start-up): a leaf with glibc's memset CFI shape (CFA = rsp + 8 from its
 * first instruction to its last, no frame) called from a frame that holds
 * data, not a frame pointer, in rbp (0 here, as -fomit-frame-pointer code
 * may). Built without frame pointers for 6180, which hides this binary's
 * mapping from the kernel (SA_RECORD_TEST_UW_UNMAPPED). Usage:
 * uw_late spin|sleep [SECONDS] (spin: of its own CPU time; sleep: 5 ms
 * usleeps, their count printed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

unsigned long uw_late_leaf(unsigned long n);
void uw_late_frame(unsigned long n);
void uw_late_block(void);

/* The leaf: a count down in registers; CFA = rsp + 8 throughout (the CIE's rule). */
__asm__(".text\n"
	".globl uw_late_leaf\n"
	".type uw_late_leaf, @function\n"
	"uw_late_leaf:\n"
	".cfi_startproc\n"
	"	mov %rdi, %rax\n"
	"1:	sub $1, %rax\n"
	"	jnz 1b\n"
	"	ret\n"
	".cfi_endproc\n"
	".size uw_late_leaf, .-uw_late_leaf\n");

/* Its caller: rbp saved (CFI says where), then 0 in it, as data. */
__asm__(".text\n"
	".globl uw_late_frame\n"
	".type uw_late_frame, @function\n"
	"uw_late_frame:\n"
	".cfi_startproc\n"
	"	push %rbp\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_rel_offset %rbp, 0\n"
	"	xor %ebp, %ebp\n"
	"	call uw_late_leaf\n"
	"	pop %rbp\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_restore %rbp\n"
	"	ret\n"
	".cfi_endproc\n"
	".size uw_late_frame, .-uw_late_frame\n");

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) void uw_late_spin(double seconds)
{
	double t0 = cpu_s();

	do
		uw_late_frame(1000000);
	while (cpu_s() - t0 < seconds);
}

/* A frame like uw_late_frame's that blocks in usleep(5000): rbp is 0 there. */
__asm__(".text\n"
	".globl uw_late_block\n"
	".type uw_late_block, @function\n"
	"uw_late_block:\n"
	".cfi_startproc\n"
	"	push %rbp\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_rel_offset %rbp, 0\n"
	"	xor %ebp, %ebp\n"
	"	mov $5000, %edi\n"
	"	call usleep@PLT\n"
	"	pop %rbp\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_restore %rbp\n"
	"	ret\n"
	".cfi_endproc\n"
	".size uw_late_block, .-uw_late_block\n");

__attribute__((noinline)) unsigned long uw_late_sleep(double seconds)
{
	unsigned long n, k = (unsigned long)(seconds / 0.005);

	for (n = 0; n < k; n++)
		uw_late_block();
	return n;
}

int main(int argc, char **argv)
{
	double s = argc > 2 ? atof(argv[2]) : 2.0;

	if (argc > 1 && !strcmp(argv[1], "sleep"))
		printf("%lu\n", uw_late_sleep(s));
	else
		uw_late_spin(s);
	return 0;
}
