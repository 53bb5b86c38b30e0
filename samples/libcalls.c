// SPDX-License-Identifier: MIT
/*
 * libcalls: a program's own functions calling libc wrappers that have
 * several names at one address (writev/__writev, sendfile/sendfile64,
 * open64/__libc_open64, pthread_mutex_trylock and its versioned names) and
 * the vDSO (clock_gettime), from main and from a thread, so that glibc's
 * internal frames (__libc_start_call_main, start_thread, clone3) and the
 * vDSO's functions are on the stacks.
 * usage: libcalls [-c CPU_S] [-o vdso|io|all]; runs until the process used
 * CPU_S (2) seconds of CPU, then prints each part's loop count.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "sa_sample.h"

static double cpu_s = 2;
static volatile unsigned long n_vdso, n_io;

static uint64_t proc_cpu_ns(void)
{
	return sa_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/* clock_gettime(CLOCK_MONOTONIC) is answered in the vDSO, no system call. */
static __attribute__((noipa)) void sa_lc_clock(void)
{
	volatile uint64_t sink = 0;
	struct timespec ts;

	for (int i = 0; i < 256; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += (uint64_t)ts.tv_nsec;
	}
	n_vdso++;
}

static __attribute__((noipa)) void sa_lc_writev(int fd)
{
	static char buf[64];
	struct iovec iov[2] = {{buf, sizeof(buf)}, {buf, sizeof(buf)}};

	for (int i = 0; i < 16; i++)
		if (writev(fd, iov, 2) < 0)
			perror("writev");
}

static __attribute__((noipa)) void sa_lc_sendfile(int out, int in)
{
	for (int i = 0; i < 16; i++)
		if (sendfile(out, in, NULL, 64) < 0)
			perror("sendfile");
}

static __attribute__((noipa)) void sa_lc_open(void)
{
	for (int i = 0; i < 16; i++) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd >= 0)
			close(fd);
	}
}

/* glibc names it pthread_mutex_trylock@@GLIBC_2.34 and 3 more. */
static __attribute__((noipa)) void sa_lc_lock(void)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

	for (int i = 0; i < 1024; i++)
		if (!pthread_mutex_trylock(&m))
			pthread_mutex_unlock(&m);
}

static void *io_main(void *arg)
{
	int out = open("/dev/null", O_WRONLY), in = open("/dev/zero", O_RDONLY);

	(void)arg;
	if (out < 0 || in < 0) {
		perror("open");
		return NULL;
	}
	while (proc_cpu_ns() < cpu_s * 1e9) {
		sa_lc_writev(out);
		sa_lc_sendfile(out, in);
		sa_lc_open();
		sa_lc_lock();
		n_io++;
	}
	close(out);
	close(in);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *only = "all";
	pthread_t t;
	int c;

	while ((c = getopt(argc, argv, "c:o:")) != -1) {
		if (c == 'c')
			cpu_s = sa_parse_double(argv[0], "-c", optarg);
		else if (c == 'o')
			only = optarg;
		else
			return 2;
	}
	if (strcmp(only, "vdso") && pthread_create(&t, NULL, io_main, NULL))
		return 1;
	if (strcmp(only, "io"))
		while (proc_cpu_ns() < cpu_s * 1e9)
			sa_lc_clock();
	if (strcmp(only, "vdso"))
		pthread_join(t, NULL);
	printf("vdso_loops %lu io_loops %lu\n", n_vdso, n_io);
	return 0;
}
