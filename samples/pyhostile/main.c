// SPDX-License-Identifier: MIT
/*
 * pyhostile - a process whose memory lies to sa's Python reader (issue 33,
 * tests/cli/3330): it maps a libpython3.11.so (libpython.c) that the
 * recorder accepts as CPython 3.11, and fills the fake _PyRuntime with a
 * thread list and frame chains that no interpreter would hold. Each thread
 * spins in pyh_spin() called through the library's
 * _PyEval_EvalFrameDefault:
 *
 *   pyh-loop    its frame's previous is itself; its code object is a
 *               kernel address
 *   pyh-cycle   three frames in a cycle: code of garbage bytes, a code
 *               object whose co_qualname claims 2^40 bytes of 'A' with no
 *               NUL (64 KiB mapped, then a hole), a code object whose
 *               co_filename's UTF-8 copy points at a hole
 *   pyh-nostate no thread state of its own: the thread list ends in a
 *               state whose next is itself
 *
 * Usage: pyhostile [-d SECONDS] (default 4). Prints "ready PID" once set up.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../sa_sample.h"

/* The fake library's (libpython.c): its objects by their addresses there. */
void *pyh_runtime(void), *pyh_code_type(void), *pyh_unicode_type(void);
void _PyEval_EvalFrameDefault(void (*fn)(void *), void *arg);

/* CPython 3.11's offsets, as record/python/pyfind.c's table has them. */
#define RT_INTERP_HEAD 40
#define IS_TSTATE_HEAD 16
#define TS_NEXT	       8
#define TS_NATIVE_TID  160
#define TS_CFRAME      56
#define CF_FRAME       8
#define FR_CODE	       32
#define FR_PREVIOUS    48
#define CO_FIRSTLINENO 72
#define CO_FILENAME    112
#define CO_QUALNAME    128
#define STR_LENGTH     16
#define STR_STATE      32
#define STR_UTF8_LEN   48
#define STR_UTF8       56
#define STR_ASCII_DATA 48

#define HUGE_NAME (64u << 10) /* 'A' bytes mapped before the hole */

static double run_s = 4;
static volatile int go;
static pthread_barrier_t ready;

static void put(void *base, size_t off, uint64_t v)
{
	memcpy((char *)base + off, &v, sizeof(v));
}

static void *zalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p) {
		perror("pyhostile: calloc");
		exit(1);
	}
	return p;
}

/* @n bytes followed by a page that is not mapped. */
static void *before_hole(size_t n)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t len = (n + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	char *p = mmap(NULL, len + (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED || munmap(p + len, (size_t)pg)) {
		perror("pyhostile: mmap");
		exit(1);
	}
	return p + len - n;
}

/* A thread state for @tid whose current frame is @frame. */
static void *tstate(uint64_t tid, void *frame)
{
	char *ts = zalloc(512), *cf = zalloc(64);

	put(ts, TS_NATIVE_TID, tid);
	put(ts, TS_CFRAME, (uintptr_t)cf);
	put(cf, CF_FRAME, (uintptr_t)frame);
	return ts;
}

static void *frame(void)
{
	return zalloc(128);
}

static void *code(void)
{
	char *c = zalloc(256);

	put(c, 8, (uintptr_t)pyh_code_type());
	put(c, CO_FIRSTLINENO, 7);
	return c;
}

/* A compact ASCII str of @len claimed bytes at @data (its header just before). */
static void *ascii_str(char *hdr, uint64_t len)
{
	put(hdr, 8, (uintptr_t)pyh_unicode_type());
	put(hdr, STR_LENGTH, len);
	put(hdr, STR_STATE, 4 | 32 | 64 | 128); /* kind 1, compact, ascii, ready */
	return hdr;
}

__attribute__((noinline)) static void pyh_spin(void *arg)
{
	(void)arg;
	while (go)
		SA_SPIN(20000);
}

struct thr {
	const char *name;
	void *(*setup)(uint64_t tid);
	void *ts;
};

/* pyh-loop: one frame whose previous is itself, its code a kernel address. */
static void *setup_loop(uint64_t tid)
{
	char *f = frame();

	put(f, FR_CODE, 0xffffffff81000000ull);
	put(f, FR_PREVIOUS, (uintptr_t)f);
	return tstate(tid, f);
}

/* pyh-cycle: frames a -> b -> c -> a. */
static void *setup_cycle(uint64_t tid)
{
	char *a = frame(), *b = frame(), *c = frame(), *garbage = zalloc(256);
	char *cb = code(), *cc = code(), *file = zalloc(128), *nm = zalloc(128);
	char *huge = before_hole(STR_ASCII_DATA + HUGE_NAME), *bad = zalloc(128);

	for (int i = 0; i < 256; i++)
		garbage[i] = (char)(i * 37 + 11);
	memset(huge + STR_ASCII_DATA, 'A', HUGE_NAME);
	ascii_str(huge, 1ull << 40);
	memcpy(ascii_str(file, 10) + STR_ASCII_DATA, "hostile.py", 10);
	put(cb, CO_QUALNAME, (uintptr_t)huge);
	put(cb, CO_FILENAME, (uintptr_t)file);
	/* c: a name in a UTF-8 copy that points at a hole (kind 2, not compact ASCII) */
	put(bad, 8, (uintptr_t)pyh_unicode_type());
	put(bad, STR_LENGTH, 4);
	put(bad, STR_STATE, 8 | 32 | 128);
	put(bad, STR_UTF8_LEN, 4);
	put(bad, STR_UTF8, (uintptr_t)before_hole(0));
	memcpy(ascii_str(nm, 1) + STR_ASCII_DATA, "c", 1);
	put(cc, CO_QUALNAME, (uintptr_t)nm);
	put(cc, CO_FILENAME, (uintptr_t)bad);
	put(a, FR_CODE, (uintptr_t)garbage);
	put(b, FR_CODE, (uintptr_t)cb);
	put(c, FR_CODE, (uintptr_t)cc);
	put(a, FR_PREVIOUS, (uintptr_t)b);
	put(b, FR_PREVIOUS, (uintptr_t)c);
	put(c, FR_PREVIOUS, (uintptr_t)a);
	return tstate(tid, a);
}

static void *thread_main(void *arg)
{
	struct thr *t = arg;

	pthread_setname_np(pthread_self(), t->name);
	if (t->setup)
		t->ts = t->setup((uint64_t)syscall(SYS_gettid));
	pthread_barrier_wait(&ready); /* the list is linked */
	pthread_barrier_wait(&ready); /* go */
	_PyEval_EvalFrameDefault(pyh_spin, t);
	return NULL;
}

int main(int argc, char **argv)
{
	struct thr t[] = {
		{"pyh-loop", setup_loop, NULL},
		{"pyh-cycle", setup_cycle, NULL},
		{"pyh-nostate", NULL, NULL},
	};
	pthread_t th[3];
	char *interp = zalloc(256), *last = zalloc(512);
	int opt;

	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd') {
			fprintf(stderr, "usage: pyhostile [-d SECONDS]\n");
			return 2;
		}
		run_s = sa_parse_double("pyhostile", "-d", optarg);
	}
	pthread_barrier_init(&ready, NULL, 4);
	go = 1;
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, thread_main, &t[i]);
	pthread_barrier_wait(&ready);
	/* interp -> loop's state -> cycle's -> a state of no thread whose next is itself */
	put(last, TS_NATIVE_TID, 0);
	put(last, TS_NEXT, (uintptr_t)last);
	put(t[0].ts, TS_NEXT, (uintptr_t)t[1].ts);
	put(t[1].ts, TS_NEXT, (uintptr_t)last);
	put(interp, IS_TSTATE_HEAD, (uintptr_t)t[0].ts);
	put(pyh_runtime(), RT_INTERP_HEAD, (uintptr_t)interp);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	pthread_barrier_wait(&ready);
	{
		struct timespec d = {(time_t)run_s, (long)((run_s - (time_t)run_s) * 1e9)};

		nanosleep(&d, NULL);
	}
	go = 0;
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	return 0;
}
