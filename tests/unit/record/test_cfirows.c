// SPDX-License-Identifier: MIT
/*
 * test_cfirows.c - rec_cfirows__at() against libdw (dwarf_cfi_addrframe,
 * reduced by report/unwind/uwrows.c) at every byte of the executable segments of
 * the sample workloads, sa-record, dash, ld.so and zstd, and at every 7th
 * byte and every FDE's first and last byte of libc; again on copies whose
 * .eh_frame_hdr is renamed away (the FDE index instead of the table); clean
 * errors on non-ELF and foreign files; rec_cfirows__at_offset() at every
 * checked byte's file offset gives rec_cfirows__at()'s row, and NONE past
 * every segment; ld.so's resolvers' rows, whose CFA is rbx-based, are
 * evaluated by both; and no crash on a truncated or
 * scribbled-over .eh_frame (run it under ASan).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>
#include <gelf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <cmocka.h>
#include "cfiread.h"
#include "cfirows.h"
#include "uwrows.h"
#include "cfi_test.h"

struct tally {
	size_t addrs, in_fde, hard, dwfl, none;
	size_t plt;    /* of dwfl: PLT entries, evaluated at the address */
	size_t by_rbx; /* simple rows whose CFA is rbx-based, equal in both */
	double ns;     /* spent in rec_cfirows__at() */
};

static void fail_row(uint64_t a, const struct sac_cfi_row *w, const struct sac_cfi_row *g, int ret)
{
	fail_msg("%#" PRIx64 ": libdw cfa %u%+" PRId64 " rbx %u%+" PRId64 " rbp %u%+" PRId64
		 " rsp %u%+" PRId64 " ra %u%+" PRId64 " signal %d; cfirows %d: cfa %u%+" PRId64
		 " rbx %u%+" PRId64 " rbp %u%+" PRId64 " rsp %u%+" PRId64 " ra %u%+" PRId64
		 " signal %d",
		 a, w->cfa_reg, w->cfa_off, w->rbx, w->rbx_off, w->rbp, w->rbp_off, w->rsp,
		 w->rsp_off, w->ra, w->ra_off, w->signal, ret, g->cfa_reg, g->cfa_off, g->rbx,
		 g->rbx_off, g->rbp, g->rbp_off, g->rsp, g->rsp_off, g->ra, g->ra_off, g->signal);
}

static bool same_row(const struct sac_cfi_row *w, const struct sac_cfi_row *g)
{
	return w->cfa_reg == g->cfa_reg && w->cfa_off == g->cfa_off && w->rbx == g->rbx &&
	       w->rbx_off == g->rbx_off && w->rbp == g->rbp && w->rbp_off == g->rbp_off &&
	       w->rsp == g->rsp && w->rsp_off == g->rsp_off && w->ra == g->ra &&
	       w->ra_off == g->ra_off && w->signal == g->signal;
}

/*
 * A PLT entry's row at @a: libdw's expression (breg7 8, breg16 0, lit15,
 * and, litN, ge, lit3, shl, plus) evaluated at @a, the return address at
 * CFA - 8.
 */
static void check_plt(uint64_t a, Dwarf_Frame *frame, const struct sac_cfi_row *got,
		      struct tally *n)
{
	static const uint8_t ops_want[] = {DW_OP_breg7, DW_OP_breg16, DW_OP_lit15,
					   DW_OP_and,	DW_OP_lit0,   DW_OP_ge,
					   DW_OP_lit3,	DW_OP_shl,    DW_OP_plus};
	Dwarf_Op *ops;
	size_t nops, i;
	uint64_t lit;

	assert_int_equal(dwarf_frame_cfa(frame, &ops, &nops), 0);
	assert_int_equal(nops, sizeof(ops_want));
	for (i = 0; i < nops; i++)
		if (i != 4)
			assert_int_equal(ops[i].atom, ops_want[i]);
	assert_true(ops[4].atom >= DW_OP_lit0 && ops[4].atom <= DW_OP_lit31);
	assert_int_equal(ops[0].number, 8);
	lit = ops[4].atom - DW_OP_lit0;
	if (got->cfa_reg != SAC_DWARF_RSP || got->cfa_off != ((a & 15) >= lit ? 16 : 8) ||
	    got->ra != SAC_CFI_AT || got->ra_off != -8)
		fail_msg("%#" PRIx64 ": PLT entry (lit%" PRIu64 "): cfirows cfa %u%+" PRId64
			 " ra %u%+" PRId64,
			 a, lit, got->cfa_reg, got->cfa_off, got->ra, got->ra_off);
	n->plt++;
}

/* The row at @a: libdw's simple row or HARD; HARD where libdw's is not simple; NONE where it has
 * none. */
static void check_addr(struct rec_cfirows *t, Dwarf_CFI *cfi, uint64_t a, struct tally *n)
{
	struct sac_cfi_row want = {0};
	struct sac_cfi_row got, again;
	struct timespec t0, t1;
	Dwarf_Frame *frame;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = rec_cfirows__at(t, a, &got);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	n->ns += (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	assert_int_equal(rec_cfirows__at(t, a, &again), ret); /* from the cache */
	assert_memory_equal(&got, &again, sizeof(got));
	n->addrs++;
	if (dwarf_cfi_addrframe(cfi, a, &frame)) {
		if (ret != REC_CFIROW_NONE)
			fail_msg("%#" PRIx64 ": libdw: %s; cfirows %d", a, dwarf_errmsg(-1), ret);
		n->none++;
		return;
	}
	rpt_uwrows__compile(frame, &want);
	if (ret == REC_CFIROW_PLT)
		check_plt(a, frame, &got, n);
	free(frame);
	n->in_fde++;
	if (want.how != SAC_CFI_RULES) {
		if (ret != REC_CFIROW_HARD && ret != REC_CFIROW_PLT)
			fail_msg("%#" PRIx64 ": libdw's row is not simple; cfirows %d", a, ret);
		n->dwfl++;
	} else if (ret == REC_CFIROW_HARD) {
		n->hard++;
	} else if (ret != REC_CFIROW_OK || !same_row(&want, &got)) {
		fail_row(a, &want, &got, ret);
	} else {
		n->by_rbx += want.cfa_reg == SAC_DWARF_RBX;
	}
}

/* The byte at @a is at file offset @off: both lookups give the same row. */
static void check_offset(struct rec_cfirows *t, uint64_t a, uint64_t off)
{
	struct sac_cfi_row by_addr, by_off;
	int ret = rec_cfirows__at(t, a, &by_addr);

	assert_int_equal(rec_cfirows__at_offset(t, off, &by_off), ret);
	assert_memory_equal(&by_addr, &by_off, sizeof(by_off));
}

/* Every @stride-th byte of the executable segments, and each FDE's first, last and next byte. */
static void check_fd(int fd, unsigned stride, struct tally *n)
{
	struct rec_cie cie = {.off = UINT64_MAX};
	struct rec_cfirows *t = NULL;
	struct rec_cfisec eh;
	struct rec_fde f;
	struct sac_cfi_row row;
	uint64_t a, off = 0, fend = 0;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL), *own;
	Dwarf_CFI *cfi = dwarf_getcfi_elf(e);
	size_t i, nph;
	GElf_Phdr ph;
	int err;

	assert_non_null(cfi);
	assert_int_equal(rec_cfirows__open(fd, &t), 0);
	assert_int_equal(elf_getphdrnum(e, &nph), 0);
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		for (a = ph.p_vaddr; a < ph.p_vaddr + ph.p_filesz; a += stride) {
			check_addr(t, cfi, a, n);
			check_offset(t, a, a - ph.p_vaddr + ph.p_offset);
		}
	}
	for (i = 0; i < nph; i++)
		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_offset + ph.p_filesz > fend)
			fend = ph.p_offset + ph.p_filesz;
	assert_int_equal(rec_cfirows__at_offset(t, fend, &row), REC_CFIROW_NONE);
	own = rec_cfi_elf(fd, &err);
	assert_non_null(own);
	assert_int_equal(rec_cfi_section(own, ".eh_frame", &eh), 0);
	while ((err = rec_cfi_next(&eh, &off, &cie, &f)) > 0) {
		if (!f.len)
			continue;
		check_addr(t, cfi, f.lo, n);
		check_addr(t, cfi, f.lo + f.len - 1, n);
		check_addr(t, cfi, f.lo + f.len, n);
	}
	assert_int_equal(err, 0);
	elf_end(own);
	rec_cfirows__free(t);
	dwarf_cfi_end(cfi);
	elf_end(e);
}

/* @return the addresses whose row has an rbx-based CFA, or 0 where @path is absent. */
static size_t check_binary(const char *path, unsigned stride, bool index_too)
{
	char real[PATH_MAX], name[64];
	struct tally n = {0}, ix = {0};
	int fd;

	if (!realpath(path, real) || access(real, R_OK)) {
		print_message("# %s: absent (%s), not checked\n", path, strerror(errno));
		return 0;
	}
	fd = open(real, O_RDONLY);
	assert_true(fd >= 0);
	check_fd(fd, stride, &n);
	close(fd);
	print_message(
		"# %s: %zu addresses, %zu in FDEs (%zu not simple, %zu of them PLT entries, %zu "
		"HARD, %zu CFA by rbx), %zu none; %.0f ns a lookup\n",
		real, n.addrs, n.in_fde, n.dwfl, n.plt, n.hard, n.by_rbx, n.none,
		n.ns / (double)n.addrs);
	assert_true(n.in_fde > 0 && n.hard * 100 < n.in_fde);
	if (!index_too)
		return n.by_rbx;
	fd = tmp_copy(real, name, sizeof(name));
	rename_section(fd, ".eh_frame_hdr");
	check_fd(fd, stride, &ix);
	print_message("#   without .eh_frame_hdr: %zu addresses, %zu in FDEs, %zu HARD\n", ix.addrs,
		      ix.in_fde, ix.hard);
	assert_int_equal(ix.in_fde, n.in_fde);
	assert_int_equal(ix.hard, n.hard);
	assert_int_equal(ix.by_rbx, n.by_rbx);
	close(fd);
	unlink(name);
	return n.by_rbx;
}

static void test_samples(void **state)
{
	static const char *const rel[] = {"samples/workload-nofp", "samples/workload-leaf",
					  "samples/workload", "bin/sa-record"};
	char path[PATH_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
		path_of(path, sizeof(path), rel[i]);
		if (access(path, R_OK))
			fail_msg("%s: %s (run make all first)", path, strerror(errno));
		check_binary(path, 1, true);
	}
}

static void test_system(void **state)
{
	(void)state;
	check_binary("/bin/dash", 1, true);
	/*
	 * _dl_runtime_resolve_xsavec and its kin keep the CFA in rbx
	 * (push %rbx; mov %rsp,%rbx; and $-64,%rsp): both compilers evaluate
	 * those rows by rules, and give the same ones.
	 */
	if (!access("/lib64/ld-linux-x86-64.so.2", R_OK))
		assert_true(check_binary("/lib64/ld-linux-x86-64.so.2", 1, false) > 0);
	check_binary("/usr/bin/zstd", 1, false);
}

static void test_libc(void **state)
{
	(void)state;
	check_binary("/lib/x86_64-linux-gnu/libc.so.6", 7, false);
	check_binary("/lib/x86_64-linux-gnu/libc.so.6", 61, true);
}

static void test_not_elf(void **state)
{
	struct rec_cfirows *t = (void *)1;
	char name[64];
	int fd;

	(void)state;
	fd = tmp_file(name, sizeof(name));
	assert_int_equal(rec_cfirows__open(fd, &t), -ENOEXEC); /* empty */
	assert_null(t);
	assert_int_equal(write(fd, "#!/bin/sh\necho hello\n", 21), 21);
	assert_int_equal(rec_cfirows__open(fd, &t), -ENOEXEC);
	assert_int_equal(rec_cfirows__open(-1, &t), -ENOEXEC);
	assert_null(t);
	rec_cfirows__free(NULL);
	close(fd);
	unlink(name);
}

/* Another machine, then no .eh_frame at all. */
static void test_foreign_and_bare(void **state)
{
	uint16_t aarch64 = EM_AARCH64, x86_64 = EM_X86_64;
	struct rec_cfirows *t;
	struct shloc eh;
	char name[64];
	int fd;

	(void)state;
	fd = tmp_build_copy("samples/workload-leaf", name, sizeof(name), &eh);
	assert_int_equal(pwrite(fd, &aarch64, 2, offsetof(Elf64_Ehdr, e_machine)), 2);
	assert_int_equal(rec_cfirows__open(fd, &t), -ENOTSUP);
	assert_int_equal(pwrite(fd, &x86_64, 2, offsetof(Elf64_Ehdr, e_machine)), 2);
	assert_int_equal(rec_cfirows__open(fd, &t), 0);
	rec_cfirows__free(t);
	rename_section(fd, ".eh_frame");
	assert_int_equal(rec_cfirows__open(fd, &t), -ENOENT);
	close(fd);
	unlink(name);
}

/* Lookups over the executable bytes of @fd give one of the four answers and no crash. */
static int probe(int fd, size_t *ok)
{
	struct rec_cfirows *t;
	struct sac_cfi_row row;
	Elf *e;
	size_t i, nph;
	GElf_Phdr ph;
	uint64_t a;
	int ret = rec_cfirows__open(fd, &t), r;

	if (ret)
		return ret;
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_int_equal(elf_getphdrnum(e, &nph), 0);
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		for (a = ph.p_vaddr; a < ph.p_vaddr + ph.p_filesz; a += 3) {
			r = rec_cfirows__at(t, a, &row);
			assert_true(r == REC_CFIROW_OK || r == REC_CFIROW_NONE ||
				    r == REC_CFIROW_HARD || r == REC_CFIROW_PLT);
			*ok += r == REC_CFIROW_OK;
		}
	}
	elf_end(e);
	rec_cfirows__free(t);
	return 0;
}

/*
 * Every length of .eh_frame, with the table (lookups meet the cut) and
 * without (the index scan meets it): 0 or -EINVAL, never a read past the end.
 */
static void test_truncated_eh_frame(void **state)
{
	char name[64];
	size_t ok, full = 0, einval = 0;
	struct shloc eh;
	uint64_t k;
	int fd, pass, ret;

	(void)state;
	fd = tmp_build_copy("samples/workload-leaf", name, sizeof(name), &eh);
	assert_int_equal(probe(fd, &full), 0);
	for (pass = 0; pass < 2; pass++) {
		for (k = 0; k <= eh.size; k++) {
			assert_int_equal(pwrite(fd, &k, 8, eh.size_at), 8);
			ok = 0;
			ret = probe(fd, &ok);
			if (k == 0)
				assert_int_equal(ret, -ENOENT);
			else if (ret)
				assert_int_equal(ret, -EINVAL);
			einval += ret == -EINVAL;
			assert_true(ok <= full);
		}
		assert_int_equal(pwrite(fd, &eh.size, 8, eh.size_at), 8);
		if (!pass)
			rename_section(fd, ".eh_frame_hdr"); /* the second pass builds the index */
	}
	assert_true(einval > eh.size / 2); /* only the scan of the second pass fails */
	close(fd);
	unlink(name);
}

/* Random bytes over .eh_frame, a few at a time, with and without the table. */
static void test_scribbled_eh_frame(void **state)
{
	char name[64];
	size_t ok = 0, opened = 0;
	unsigned seed = 12345, i;
	struct shloc eh;
	uint8_t orig[8];
	off_t pos;
	int fd, ret;

	(void)state;
	fd = tmp_build_copy("samples/workload-leaf", name, sizeof(name), &eh);
	for (i = 0; i < 1000; i++) {
		if (i == 500)
			rename_section(fd, ".eh_frame_hdr");
		pos = scribble(fd, &eh, i, &seed, orig);
		ret = probe(fd, &ok);
		if (ret)
			assert_int_equal(ret, -EINVAL);
		opened += !ret;
		unscribble(fd, pos, orig);
	}
	assert_true(opened > 500 && ok > 0);
	close(fd);
	unlink(name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_system),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_foreign_and_bare),
		cmocka_unit_test(test_truncated_eh_frame),
		cmocka_unit_test(test_scribbled_eh_frame),
	};

	elf_version(EV_CURRENT);
	set_build_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
