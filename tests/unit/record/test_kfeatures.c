// SPDX-License-Identifier: MIT
/*
 * test_kfeatures.c - the refusal of what a kernel cannot run: nothing
 * refused when all is there or not known; a feature every mode needs named
 * with the Linux version that brought it, in every mode; one that only
 * --call-graph dwarf and auto need refused there, by the newest missing
 * (the version that makes the mode run), and never for fp; the features
 * that only choose a program variant never refused. As root, every probe
 * of the running kernel answers (present or absent, never unknown), and
 * SA_RECORD_TEST_NO_KFEATURES takes the named ones as absent.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "kfeatures.h"
#include "record.h"

static const struct rec_opts fp = {.call_graph = SA_CG_FP};
static const struct rec_opts dwarf = {.call_graph = SA_CG_DWARF};
static const struct rec_opts autom = {.call_graph = SA_CG_AUTO};

static void all(struct rec_kfeatures *f, signed char v)
{
	memset(f->has, v, sizeof(f->has));
}

static void test_all_present(void **state)
{
	struct rec_kfeatures f;
	char buf[256] = "";

	(void)state;
	all(&f, 1);
	assert_false(rec_kfeatures__refusal(&f, NULL, buf, sizeof(buf)));
	assert_false(rec_kfeatures__refusal(&f, &autom, buf, sizeof(buf)));
	assert_false(rec_kfeatures__refusal(&f, &dwarf, buf, sizeof(buf)));
	assert_string_equal(buf, "");
}

static void test_unknown_is_not_refused(void **state)
{
	struct rec_kfeatures f;
	char buf[256] = "";

	(void)state;
	all(&f, -1);
	assert_false(rec_kfeatures__refusal(&f, &autom, buf, sizeof(buf)));
}

static void test_each_missing(void **state)
{
	/* what the refusal names; NULL: never refused (a variant is chosen) */
	static const char *const want[REC_KF_N] = {
		[REC_KF_BTF] = "CONFIG_DEBUG_INFO_BTF=y",
		[REC_KF_TP_BTF] = "Linux 5.5 or later",
		[REC_KF_RINGBUF] = "Linux 5.8 or later",
		[REC_KF_TASK_BTF] = "Linux 5.11 or later",
		[REC_KF_LOOP] = "Linux 5.13 or later",
		[REC_KF_TASK_PT_REGS] = "Linux 5.15 or later",
		[REC_KF_FIND_VMA] = "Linux 5.17 or later",
	};
	const bool every[REC_KF_N] = {[REC_KF_BTF] = 1, [REC_KF_TP_BTF] = 1, [REC_KF_RINGBUF] = 1};
	struct rec_kfeatures f;
	char buf[256];
	int i;

	(void)state;
	for (i = 0; i < REC_KF_N; i++) {
		all(&f, 1);
		f.has[i] = 0;
		buf[0] = 0;
		assert_int_equal(rec_kfeatures__refusal(&f, &fp, buf, sizeof(buf)), every[i]);
		assert_int_equal(rec_kfeatures__refusal(&f, &autom, buf, sizeof(buf)), !!want[i]);
		assert_int_equal(rec_kfeatures__refusal(&f, &dwarf, buf, sizeof(buf)), !!want[i]);
		if (!want[i])
			continue;
		assert_non_null(strstr(buf, "this kernel lacks "));
		assert_non_null(strstr(buf, want[i]));
		assert_non_null(strstr(buf, every[i] ? "every mode" : "--call-graph dwarf"));
	}
}

static void test_missing_named(void **state)
{
	struct rec_kfeatures f;
	char buf[256];

	(void)state;
	all(&f, 1);
	f.has[REC_KF_RINGBUF] = 0;
	f.has[REC_KF_FIND_VMA] = 0;
	assert_true(rec_kfeatures__refusal(&f, &autom, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "ring buffer"));
	assert_null(strstr(buf, "find_vma"));
	/* a short buffer is cut, not overrun */
	assert_true(rec_kfeatures__refusal(&f, NULL, buf, 8));
	assert_int_equal(strlen(buf), 7);
	/* 5.10: the newest of what auto needs is named, the version it runs from */
	all(&f, 1);
	f.has[REC_KF_TASK_BTF] = f.has[REC_KF_LOOP] = 0;
	f.has[REC_KF_TASK_PT_REGS] = f.has[REC_KF_FIND_VMA] = 0;
	assert_true(rec_kfeatures__refusal(&f, &autom, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "--call-graph auto needs"));
	assert_non_null(strstr(buf, "Linux 5.17 or later"));
	assert_false(rec_kfeatures__refusal(&f, &fp, buf, sizeof(buf)));
}

static void test_describe(void **state)
{
	struct rec_kfeatures f;
	char buf[256];
	int i;

	(void)state;
	all(&f, 1);
	f.has[REC_KF_LOOP] = 0;
	f.has[REC_KF_TASK_FROM_PID] = -1;
	for (i = 0; rec_kfeatures__describe(&f, i, buf, sizeof(buf)); i++) {
		assert_non_null(strstr(buf, "Linux "));
		assert_null(strchr(buf, '\n'));
	}
	assert_int_equal(i, REC_KF_N);
	assert_true(rec_kfeatures__describe(&f, REC_KF_LOOP, buf, sizeof(buf)));
	assert_true(!strncmp(buf, "bpf_loop: no (", 14));
	assert_true(rec_kfeatures__describe(&f, REC_KF_TASK_FROM_PID, buf, sizeof(buf)));
	assert_true(!strncmp(buf, "task_from_pid: unknown (", 24));
	assert_true(rec_kfeatures__describe(&f, REC_KF_BTF, buf, sizeof(buf)));
	assert_true(!strncmp(buf, "btf: yes (", 10));
}

static void test_probe_answers(void **state)
{
	const struct rec_kfeatures *f;
	int i;

	(void)state;
	setenv("SA_RECORD_TEST_NO_KFEATURES", "bpf_loop,nonesuch,task_from_pid", 1);
	f = rec_kfeatures__get();
	assert_ptr_equal(f, rec_kfeatures__get()); /* probed once */
	assert_int_equal(f->has[REC_KF_LOOP], 0);
	assert_int_equal(f->has[REC_KF_TASK_FROM_PID], 0);
	for (i = 0; i < REC_KF_N; i++) {
		assert_true(f->has[i] >= -1 && f->has[i] <= 1);
		if (geteuid() == 0)
			assert_int_not_equal(f->has[i], -1);
	}
}

SA_TEST_MAIN(test_all_present, test_unknown_is_not_refused, test_each_missing, test_missing_named,
	     test_describe, test_probe_answers)
