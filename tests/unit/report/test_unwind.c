// SPDX-License-Identifier: MIT
/*
 * test_unwind.c - the offline unwinder on a capture this test takes of its
 * own stack inside a chain of functions built without frame pointers: the
 * unwound return addresses must be the ones each function saw, in order,
 * a cache hit must give the same frames, and a short copy or a binary with
 * another build id must stop at the leaf instead of guessing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind.h"

#define CAP_BYTES 16384
#define MAX_MODS 64

static struct {
	struct rpt_unwind_regs regs;
	uint8_t stack[CAP_BYTES];
	uint32_t len;	    /* bytes copied: up to CAP_BYTES, never past the stack's end */
	uint64_t stack_end;
	uint64_t ret[3]; /* return addresses seen by leaf, mid, top */
} cap;

static struct rpt_unwind_module mods[MAX_MODS];
static char paths[MAX_MODS][256];
static size_t nmods;

/* Registers and stack bytes at the asm statement, which CFI describes. */
static __attribute__((noinline, optimize("omit-frame-pointer"))) void leaf(volatile int *sink)
{
	uint64_t sp, bp, ip;

	__asm__ volatile("mov %%rsp, %0\n\tmov %%rbp, %1\n\tlea 0(%%rip), %2"
			 : "=r"(sp), "=r"(bp), "=r"(ip));
	cap.regs = (struct rpt_unwind_regs){ ip, sp, bp };
	cap.len = cap.stack_end - sp < CAP_BYTES ? cap.stack_end - sp : CAP_BYTES;
	memcpy(cap.stack, (void *)sp, cap.len);
	cap.ret[0] = (uint64_t)__builtin_return_address(0);
	(*sink)++;
}

static __attribute__((noinline, optimize("omit-frame-pointer"))) void mid(volatile int *sink)
{
	volatile char pad[40];

	pad[0] = 1;
	leaf(sink);
	cap.ret[1] = (uint64_t)__builtin_return_address(0);
	(*sink) += pad[0];
}

static __attribute__((noinline, optimize("omit-frame-pointer"))) void top(volatile int *sink)
{
	mid(sink);
	cap.ret[2] = (uint64_t)__builtin_return_address(0);
	(*sink)++;
}

/* The executable, file-backed mappings of this process. */
static void load_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	assert_non_null(f);
	nmods = 0;
	while (fgets(line, sizeof(line), f) && nmods < MAX_MODS) {
		unsigned long long s, e, off;
		char perms[8], path[256] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %255s", &s, &e, perms, &off, path) < 4)
			continue;
		if (!strcmp(path, "[stack]"))
			cap.stack_end = e;
		if (perms[2] != 'x' || path[0] != '/')
			continue;
		snprintf(paths[nmods], sizeof(paths[0]), "%s", path);
		mods[nmods] = (struct rpt_unwind_module){ paths[nmods], NULL, s, e, off };
		nmods++;
	}
	fclose(f);
}

static int setup(void **state)
{
	volatile int sink = 0;

	(void)state;
	load_maps();
	top(&sink);
	return 0;
}

static int find(const uint64_t *ips, int n, uint64_t want)
{
	for (int i = 0; i < n; i++)
		if (ips[i] == want)
			return i;
	return -1;
}

static void test_unwinds_through_frameless_code(void **state)
{
	struct rpt_unwinder *u = rpt_unwinder__new();
	uint64_t ips[128], again[128], nun = 0;
	int n, i;

	(void)state;
	assert_non_null(u);
	n = rpt_unwinder__unwind(u, 1, mods, nmods, &cap.regs, cap.stack, cap.len, ips, 128);
	assert_true(n >= 4);
	assert_int_equal(ips[0], cap.regs.ip);
	i = find(ips, n, cap.ret[0]);
	assert_int_equal(i, 1);
	assert_int_equal(ips[2], cap.ret[1]);
	assert_int_equal(ips[3], cap.ret[2]);
	/* the same capture again comes from the cache */
	assert_int_equal(rpt_unwinder__unwind(u, 1, mods, nmods, &cap.regs, cap.stack, cap.len,
					      again, 128), n);
	assert_memory_equal(ips, again, n * sizeof(*ips));
	nun = rpt_unwinder__nunwinds(u);
	assert_int_equal(nun, 1);
	rpt_unwinder__free(u);
}

static void test_short_copy_stops(void **state)
{
	struct rpt_unwinder *u = rpt_unwinder__new();
	uint64_t ips[128];
	int n;

	(void)state;
	n = rpt_unwinder__unwind(u, 1, mods, nmods, &cap.regs, cap.stack, 0, ips, 128);
	assert_true(n >= 1 && n <= 2);
	assert_int_equal(ips[0], cap.regs.ip);
	rpt_unwinder__free(u);
}

static void test_build_id_mismatch_not_used(void **state)
{
	struct rpt_unwind_module bad[MAX_MODS];
	struct rpt_unwinder *u = rpt_unwinder__new();
	uint64_t ips[128];

	(void)state;
	memcpy(bad, mods, nmods * sizeof(*bad));
	for (size_t i = 0; i < nmods; i++)
		bad[i].build_id = "0123456789abcdef0123456789abcdef01234567";
	assert_int_equal(rpt_unwinder__unwind(u, 2, bad, nmods, &cap.regs, cap.stack, cap.len,
					      ips, 128), 1);
	assert_int_equal(ips[0], cap.regs.ip);
	rpt_unwinder__free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unwinds_through_frameless_code),
		cmocka_unit_test(test_short_copy_stops),
		cmocka_unit_test(test_build_id_mismatch_not_used),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
