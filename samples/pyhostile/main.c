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
 * Usage: pyhostile [-d SECONDS] [-V 3.X] (default 4 s, 3.11): -V picks the
 * layout (3.8 to 3.13) and the libpython3.X.so beside the program, loaded
 * with dlopen(). Prints "ready PID" once set up.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
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
static void *(*pyh_runtime)(void), *(*pyh_code_type)(void), *(*pyh_unicode_type)(void);
static void (*eval_frame)(void (*fn)(void *), void *arg);

/* Each version's offsets, as record/python/pyfind.c's table has them. */
struct lay {
	int minor;
	unsigned rt_interp_head, is_tstate_head, ts_next, ts_tid, ts_frame, cf_frame;
	unsigned fr_code, fr_previous, co_firstlineno, co_filename, co_qualname;
	unsigned str_ascii_data, str_utf8_len, str_utf8;
	int cframe, pthread; /* a _PyCFrame between state and frame; thread_id = pthread_self() */
};
static const struct lay lays[] = {
	{8, 32, 8, 8, 176, 24, 0, 32, 24, 40, 104, 112, 48, 48, 56, 0, 1},
	{9, 32, 8, 8, 176, 24, 0, 32, 24, 40, 104, 112, 48, 48, 56, 0, 1},
	{10, 32, 8, 8, 176, 24, 0, 32, 24, 40, 104, 112, 48, 48, 56, 0, 1},
	{11, 40, 16, 8, 160, 56, 8, 32, 48, 72, 112, 128, 48, 48, 56, 1, 0},
	{12, 40, 72, 8, 144, 56, 0, 0, 8, 68, 112, 128, 40, 40, 48, 1, 0},
	{13, 632, 7344, 8, 160, 72, 0, 0, 8, 68, 112, 128, 40, 40, 48, 0, 0},
};
static const struct lay *L = &lays[3];

#define RT_INTERP_HEAD L->rt_interp_head
#define IS_TSTATE_HEAD L->is_tstate_head
#define TS_NEXT	       L->ts_next
#define TS_NATIVE_TID  L->ts_tid
#define FR_CODE	       L->fr_code
#define FR_PREVIOUS    L->fr_previous
#define CO_FIRSTLINENO L->co_firstlineno
#define CO_FILENAME    L->co_filename
#define CO_QUALNAME    L->co_qualname
#define STR_LENGTH     16
#define STR_STATE      32
#define STR_UTF8_LEN   L->str_utf8_len
#define STR_UTF8       L->str_utf8
#define STR_ASCII_DATA L->str_ascii_data

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

/* A thread state for thread @tid (the calling one) whose current frame is @frame. */
static void *tstate(uint64_t tid, void *frame)
{
	char *ts = zalloc(512), *cf = zalloc(64);

	put(ts, TS_NATIVE_TID, L->pthread ? (uint64_t)pthread_self() : tid);
	if (L->cframe) {
		put(ts, L->ts_frame, (uintptr_t)cf);
		put(cf, L->cf_frame, (uintptr_t)frame);
	} else {
		put(ts, L->ts_frame, (uintptr_t)frame);
	}
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
	eval_frame(pyh_spin, t);
	return NULL;
}

static int pick(int minor)
{
	for (size_t i = 0; i < sizeof(lays) / sizeof(lays[0]); i++)
		if (lays[i].minor == minor)
			return !!(L = &lays[i]);
	return 0;
}

/* libpython3.X.so from the program's own directory, and its functions. */
static void load_lib(void)
{
	char exe[4096], path[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	void *h;

	if (n <= 0) {
		perror("pyhostile: /proc/self/exe");
		exit(1);
	}
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/libpython3.%d.so", dirname(exe), L->minor);
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "pyhostile: %s\n", dlerror());
		exit(1);
	}
	pyh_runtime = (void *(*)(void))dlsym(h, "pyh_runtime");
	pyh_code_type = (void *(*)(void))dlsym(h, "pyh_code_type");
	pyh_unicode_type = (void *(*)(void))dlsym(h, "pyh_unicode_type");
	eval_frame = (void (*)(void (*)(void *), void *))dlsym(h, "_PyEval_EvalFrameDefault");
	if (!pyh_runtime || !pyh_code_type || !pyh_unicode_type || !eval_frame) {
		fprintf(stderr, "pyhostile: %s lacks a symbol\n", path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct thr t[] = {
		{"pyh-loop", setup_loop, NULL},
		{"pyh-cycle", setup_cycle, NULL},
		{"pyh-nostate", NULL, NULL},
	};
	pthread_t th[3];
	char *interp = zalloc(8192), *last = zalloc(512);
	int opt;

	while ((opt = getopt(argc, argv, "d:V:")) != -1) {
		if (opt == 'd') {
			run_s = sa_parse_double("pyhostile", "-d", optarg);
		} else if (opt == 'V' && !strncmp(optarg, "3.", 2) && pick(atoi(optarg + 2))) {
			continue;
		} else {
			fprintf(stderr, "usage: pyhostile [-d SECONDS] [-V 3.8 ... 3.13]\n");
			return 2;
		}
	}
	load_lib();
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
