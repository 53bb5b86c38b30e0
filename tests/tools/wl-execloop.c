// SPDX-License-Identifier: MIT
/*
 * wl-execloop.c - one pid that execs itself as fast as it can, the
 * workload of 5110-exec-loop.t: wl-selfexec.c's loop without the C
 * library (x86-64 system calls, no dynamic loader, no libc start-up: one
 * page of code), so that an exec costs the kernel's work only. Built with
 * `cc -O2 -static -nostdlib -fno-stack-protector -fno-omit-frame-pointer`.
 * `wl-execloop END [K]`: spins about 20 us in its own function, then
 * execs itself with K + 1, until the epoch second END; then prints K, the
 * execs made. The count so far is argv[2], so /proc/PID/cmdline gives the
 * rate while it runs.
 */
#include <asm/unistd.h>
#include <linux/time.h>

static long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

static long now_ns(void)
{
	struct timespec t;

	sys3(__NR_clock_gettime, CLOCK_MONOTONIC, (long)&t, 0);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

static long atol10(const char *s)
{
	long v = 0;

	while (*s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	return v;
}

/* @v in decimal at the end of @buf[32]; returns its first byte */
static char *ltoa10(long v, char *buf)
{
	char *p = buf + 31;

	*p = 0;
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	return p;
}

volatile unsigned long wl_sink;

/* The image's own samples: a few cpu-clock ticks land here at high rates */
__attribute__((noinline)) static void execloop_spin(void)
{
	long t0 = now_ns();

	while (now_ns() - t0 < 20000)
		for (int i = 0; i < 100; i++)
			wl_sink++;
}

__attribute__((used)) static void wl_main(long *sp)
{
	long argc = sp[0], k;
	char **argv = (char **)(sp + 1), **envp = argv + argc + 1, buf[32], *n;
	char *args[] = {argv[0], argv[1], 0, 0};
	struct timespec t;

	k = argc > 2 ? atol10(argv[2]) : 0;
	sys3(__NR_clock_gettime, CLOCK_REALTIME, (long)&t, 0);
	if (argc < 2 || t.tv_sec >= atol10(argv[1])) {
		n = ltoa10(k, buf);
		buf[31] = '\n';
		sys3(__NR_write, 1, (long)n, buf + 32 - n);
		sys3(__NR_exit_group, 0, 0, 0);
	}
	execloop_spin();
	args[2] = ltoa10(k + 1, buf);
	sys3(__NR_execve, (long)"/proc/self/exe", (long)args, (long)envp);
	sys3(__NR_exit_group, 1, 0, 0);
}

/* The stack pointer at entry holds argc, then argv[], NULL, envp[] */
__asm__(".globl _start\n"
	"_start:\n"
	"	xor %rbp, %rbp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call wl_main\n"
	"	hlt\n");
