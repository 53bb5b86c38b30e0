// SPDX-License-Identifier: MIT
/*
 * test_uwbuild.c - the in-kernel unwinder's tables (record/cfi/uwbuild.c)
 * against the reader they come from: at every byte of the executable
 * segments of dash, zstd and ld.so (every 3rd of libc's, every 7th of
 * python3's), the row found in the
 * table by the BPF program's search (last row at or below) is
 * rec_uw_row() of rec_cfirows__at() at that byte, or SA_UW_NONE where no
 * FDE covers it, and its CFA and saved rbp are the reader's rules (so a
 * wrong offset in rec_uw_row() itself fails too); rows are sorted, and no
 * two neighbours are equal.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>
#include "cfirows.h"
#include "uwtab.h"

static const struct sa_uw_row *find(const struct rec_uwfile *f, uint64_t x)
{
	size_t lo = 0, hi = f->nrows, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (x < f->rows[mid].pc)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo ? &f->rows[lo - 1] : NULL;
}

/*
 * The table's row against the reader's rules themselves, not through
 * rec_uw_row() (which both sides of check_file()'s comparison use): the
 * CFA's register and offset, and where rbp was saved.
 */
static void check_rules(const char *path, uint64_t a, const struct sa_uw_row *got,
			const struct sac_cfi_row *row)
{
	int reg = got->kind == SA_UW_RSP ? SAC_DWARF_RSP : SAC_DWARF_RBP;

	if (got->kind != SA_UW_RSP && got->kind != SA_UW_RBP)
		return;
	if (row->cfa_reg != reg || (int64_t)got->cfa8 * 8 != row->cfa_off)
		fail_msg("%s at 0x%llx: table CFA reg %d + %d, reader reg %d + %lld", path,
			 (unsigned long long)a, reg, got->cfa8 * 8, row->cfa_reg,
			 (long long)row->cfa_off);
	if (row->rbp == SAC_CFI_AT ? (int64_t)got->rbp8 * 8 != row->rbp_off : got->rbp8 != 0)
		fail_msg("%s at 0x%llx: table rbp at CFA %d, reader rule %d at %lld", path,
			 (unsigned long long)a, got->rbp8 * 8, row->rbp, (long long)row->rbp_off);
}

static void check_file(const char *path, uint64_t step)
{
	struct rec_cfirows *t = NULL;
	struct rec_uwfile f;
	struct sac_cfi_row row;
	size_t i, checked = 0, kinds[6] = {0};
	int fd = open(path, O_RDONLY), ret;

	if (fd < 0) {
		print_message("# %s: not here, skipped\n", path);
		return;
	}
	assert_int_equal(rec_uw_build(fd, 10000000000ull, NULL, &f), 0);
	assert_int_equal(rec_cfirows__open(fd, &t), 0);
	close(fd);
	for (i = 1; i < f.nrows; i++) {
		assert_true(f.rows[i - 1].pc < f.rows[i].pc);
		assert_false(f.rows[i - 1].kind == f.rows[i].kind &&
			     f.rows[i - 1].cfa8 == f.rows[i].cfa8 &&
			     f.rows[i - 1].rbp8 == f.rows[i].rbp8);
	}
	for (i = 0; i < f.nloads; i++) {
		uint64_t a, end = f.loads[i][1] + f.loads[i][2];

		for (a = f.loads[i][1]; a < end; a += step) {
			static const struct sa_uw_row none = {.kind = SA_UW_NONE};
			const struct sa_uw_row *got = find(&f, a);
			struct sa_uw_row want = none;

			ret = rec_cfirows__at(t, a, &row);
			if (ret != REC_CFIROW_NONE)
				want = rec_uw_row(&row, ret, 0);
			if (!got)
				got = &none;
			/* the PLT's expression rows: rec_cfirows__at() calls them HARD */
			if (got->kind == SA_UW_PLT && want.kind == SA_UW_BAD)
				want = *got;
			if (got->kind != want.kind || got->cfa8 != want.cfa8 ||
			    got->rbp8 != want.rbp8)
				fail_msg("%s at 0x%llx: table kind %u cfa8 %u rbp8 %d, reader kind "
					 "%u "
					 "cfa8 %u rbp8 %d",
					 path, (unsigned long long)a, got->kind, got->cfa8,
					 got->rbp8, want.kind, want.cfa8, want.rbp8);
			if (ret == REC_CFIROW_OK)
				check_rules(path, a, got, &row);
			kinds[got->kind < 6 ? got->kind : 5]++;
			checked++;
		}
	}
	print_message("# %s: %zu rows, %zu bytes checked (none %zu rsp %zu rbp %zu plt %zu end "
		      "%zu bad %zu)\n",
		      path, f.nrows, checked, kinds[0], kinds[1], kinds[2], kinds[3], kinds[4],
		      kinds[5]);
	assert_true(checked > 0);
	rec_cfirows__free(t);
	free(f.rows);
}

static void test_tables_match_reader(void **state)
{
	(void)state;
	check_file("/bin/dash", 1);
	check_file("/usr/bin/zstd", 1);
	check_file("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", 1);
	check_file("/usr/lib/x86_64-linux-gnu/libc.so.6", 3);
	check_file("/usr/bin/python3.11", 7);
}

static void test_not_elf(void **state)
{
	struct rec_uwfile f;
	int fd = open("/proc/self/cmdline", O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_not_equal(rec_uw_build(fd, 1000000000ull, NULL, &f), 0);
	assert_null(f.rows);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_match_reader),
		cmocka_unit_test(test_not_elf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
