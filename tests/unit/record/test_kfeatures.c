// SPDX-License-Identifier: MIT
/*
 * test_kfeatures.c - the refusal of a kernel without a feature sa.bpf.c
 * needs: nothing refused when all is there or not known, the first missing
 * feature named with the Linux version that brought it, and, as root, every
 * probe of the running kernel answering (present or absent, never unknown).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "kfeatures.h"

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
	assert_false(rec_kfeatures__refusal(&f, buf, sizeof(buf)));
	assert_string_equal(buf, "");
}

static void test_unknown_is_not_refused(void **state)
{
	struct rec_kfeatures f;
	char buf[256] = "";

	(void)state;
	all(&f, -1);
	assert_false(rec_kfeatures__refusal(&f, buf, sizeof(buf)));
}

static void test_each_missing(void **state)
{
	static const char *const want[REC_KF_N] = {
		[REC_KF_BTF] = "CONFIG_DEBUG_INFO_BTF=y",
		[REC_KF_TP_BTF] = "Linux 5.5 or later",
		[REC_KF_RINGBUF] = "Linux 5.8 or later",
		[REC_KF_TASK_BTF] = "Linux 5.11 or later",
		[REC_KF_TASK_PT_REGS] = "Linux 5.15 or later",
		[REC_KF_FIND_VMA] = "Linux 5.17 or later",
	};
	struct rec_kfeatures f;
	char buf[256];
	int i;

	(void)state;
	for (i = 0; i < REC_KF_N; i++) {
		all(&f, 1);
		f.has[i] = 0;
		buf[0] = 0;
		assert_true(rec_kfeatures__refusal(&f, buf, sizeof(buf)));
		assert_non_null(strstr(buf, "this kernel lacks "));
		assert_non_null(strstr(buf, want[i]));
	}
}

static void test_first_missing_named(void **state)
{
	struct rec_kfeatures f;
	char buf[256];

	(void)state;
	all(&f, 1);
	f.has[REC_KF_RINGBUF] = 0;
	f.has[REC_KF_FIND_VMA] = 0;
	assert_true(rec_kfeatures__refusal(&f, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "ring buffer"));
	assert_null(strstr(buf, "find_vma"));
	/* a short buffer is cut, not overrun */
	assert_true(rec_kfeatures__refusal(&f, buf, 8));
	assert_int_equal(strlen(buf), 7);
}

static void test_probe_answers(void **state)
{
	struct rec_kfeatures f;
	int i;

	(void)state;
	rec_kfeatures__probe(&f);
	for (i = 0; i < REC_KF_N; i++) {
		assert_true(f.has[i] >= -1 && f.has[i] <= 1);
		if (geteuid() == 0)
			assert_int_not_equal(f.has[i], -1);
	}
}

SA_TEST_MAIN(test_all_present, test_unknown_is_not_refused, test_each_missing, test_first_missing_named, test_probe_answers)
