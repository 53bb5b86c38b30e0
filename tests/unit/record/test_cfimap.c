// SPDX-License-Identifier: MIT
/*
 * test_cfimap.c - the blocks that need CFI in the sample workloads built with
 * frame pointers, with frameless leaves and without frame pointers, in a
 * binary whose own code has only .debug_frame, in Debian's libc and zstd
 * (whole files), and clean errors on non-ELF files and on a truncated or
 * scribbled-over .eh_frame (run it under ASan: the section is read into a
 * buffer of its exact size).
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
#include <limits.h>
#include <time.h>
#include <unistd.h>
#include <gelf.h>
#include <cmocka.h>
#include "cfimap.h"
#include "elfread.h"
#include "cfi_test.h"

struct loaded {
	struct rec_cfimap m;
	struct rec_elftab t;
	GElf_Phdr x[4]; /* executable PT_LOADs */
	size_t nx;
};

static void exec_segments(int fd, struct loaded *l)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t i, n;
	GElf_Phdr ph;

	assert_non_null(e);
	assert_int_equal(elf_getphdrnum(e, &n), 0);
	for (i = 0; i < n; i++)
		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    l->nx < 4)
			l->x[l->nx++] = ph;
	elf_end(e);
	assert_true(l->nx > 0);
}

/* Classify @path and read its symbols and executable segments. */
static void load(const char *path, struct loaded *l)
{
	int fd = open(path, O_RDONLY), ret;

	memset(l, 0, sizeof(*l));
	if (fd < 0)
		fail_msg("%s: %s (run make all first)", path, strerror(errno));
	assert_int_equal(rec_cfimap__classify(fd, &l->m), 0);
	ret = rec_elftab__read(fd, NULL, 0, &l->t); /* stripped zstd has no function symbol */
	assert_true(ret == 0 || ret == -ENOENT);
	exec_segments(fd, l);
	close(fd);
}

static void unload(struct loaded *l)
{
	rec_cfimap__release(&l->m);
	rec_elftab__release(&l->t);
}

static const struct rec_elfsym *sym(const struct loaded *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->t.nsyms; i++)
		if (!strcmp(l->t.names + l->t.syms[i].name, name))
			return &l->t.syms[i];
	fail_msg("no symbol %s", name);
	return NULL;
}

/*
 * @set: every block the function touches is set. Clear: its middle block and
 * every block wholly inside it are clear (an edge block may be shared with a
 * frameless neighbour).
 */
static void assert_fn(const struct loaded *l, const char *name, int set)
{
	const struct rec_elfsym *s = sym(l, name);
	uint64_t b;

	assert_true(s->size >= 16);
	if (rec_cfimap__test(&l->m, s->off + s->size / 2) != set)
		fail_msg("%s: middle block at %#lx is %s", name,
			 (unsigned long)(s->off + s->size / 2), set ? "clear" : "set");
	for (b = s->off & ~63ULL; b < s->off + s->size; b += 64) {
		if (set)
			assert_int_equal(rec_cfimap__test(&l->m, b), 1);
		else if (b >= s->off && b + 64 <= s->off + s->size)
			assert_int_equal(rec_cfimap__test(&l->m, b), 0);
	}
}

static size_t popcount_all(const struct rec_cfimap *m)
{
	size_t i, n = 0;

	for (i = 0; i < m->npages; i++) {
		assert_true(m->pages[i].bits != 0);
		assert_true(i == 0 || m->pages[i - 1].page < m->pages[i].page);
		n += (size_t)__builtin_popcountll(m->pages[i].bits);
	}
	return n;
}

/* Every set block lies in an executable segment; with whole, every such block is set. */
static void assert_exec_only(const struct loaded *l)
{
	size_t i, inside = 0, p, k;
	uint64_t b, off;

	for (i = 0; i < l->nx; i++)
		for (b = l->x[i].p_offset & ~63ULL; b < l->x[i].p_offset + l->x[i].p_filesz;
		     b += 64) {
			inside += (size_t)rec_cfimap__test(&l->m, b);
			if (l->m.whole)
				assert_int_equal(rec_cfimap__test(&l->m, b), 1);
		}
	assert_int_equal(inside, popcount_all(&l->m));
	for (p = 0; p < l->m.npages; p++)
		for (k = 0; k < 64; k++) {
			off = (l->m.pages[p].page << 12) + 64 * k;
			if (l->m.pages[p].bits >> k & 1)
				assert_int_equal(rec_cfimap__test(&l->m, off), 1);
		}
}

static const char *const framed_fns[] = {"main",	   "sa_run",	"sa_leaf_a",
					 "sa_leaf_b",	   "sa_leaf_c", "sa_shared_helper",
					 "sa_helper_inner"};

static void test_workload_frame_pointers(void **state)
{
	char path[PATH_MAX];
	struct loaded l;
	size_t i;

	(void)state;
	path_of(path, sizeof(path), "samples/workload");
	load(path, &l);
	assert_int_equal(l.m.whole, 0);
	assert_true(l.m.nfuncs >= 8);
	/* The PLT (a CFA expression) and _start are frameless here too. */
	assert_true(l.m.nframeless >= 2 && l.m.nframeless * 2 < l.m.nfuncs);
	for (i = 0; i < sizeof(framed_fns) / sizeof(*framed_fns); i++)
		assert_fn(&l, framed_fns[i], 0);
	assert_int_equal(rec_cfimap__test(&l.m, sym(&l, "_start")->off), 1);
	assert_exec_only(&l);
	unload(&l);
}

static void test_workload_frameless_leaves(void **state)
{
	char path[PATH_MAX];
	struct loaded l;

	(void)state;
	path_of(path, sizeof(path), "samples/workload-leaf");
	load(path, &l);
	assert_int_equal(l.m.whole, 0);
	/* Leaves that never move the CFA: frameless, but they do not vote for whole. */
	assert_true(l.m.nflat >= 2 && l.m.nflat <= l.m.nframeless);
	assert_fn(&l, "sa_leaf_a", 1);
	assert_fn(&l, "sa_helper_inner", 1);
	assert_fn(&l, "main", 0);
	assert_fn(&l, "sa_run", 0);
	assert_fn(&l, "sa_leaf_b", 0); /* calls the helper: keeps its frame */
	assert_exec_only(&l);
	unload(&l);
}

static void test_workload_no_frame_pointers(void **state)
{
	char path[PATH_MAX];
	struct loaded l;
	size_t i;

	(void)state;
	path_of(path, sizeof(path), "samples/workload-nofp");
	load(path, &l);
	assert_int_equal(l.m.whole, 1);
	assert_int_equal(l.m.nframeless, l.m.nfuncs);
	for (i = 0; i < sizeof(framed_fns) / sizeof(*framed_fns); i++)
		assert_fn(&l, framed_fns[i], 1);
	assert_exec_only(&l);
	unload(&l);
}

/* Own code built with -fno-asynchronous-unwind-tables: its FDEs are in .debug_frame. */
static void test_debug_frame(void **state)
{
	char path[PATH_MAX];
	struct loaded l;

	(void)state;
	path_of(path, sizeof(path), "tests/data/cfi_debug_frame");
	load(path, &l);
	assert_int_equal(l.m.whole, 0);
	assert_fn(&l, "sa_leaf_a", 1);
	assert_fn(&l, "sa_helper_inner", 1);
	assert_fn(&l, "main", 0);
	assert_fn(&l, "sa_run", 0);
	assert_exec_only(&l);
	unload(&l);
}

/*
 * Debian builds these without frame pointers. libc takes about 0.7 ms here
 * (3713 FDEs, 3619 frameless, 342 pages); zstd about 0.3 ms.
 */
static void test_debian_without_frame_pointers(void **state)
{
	static const char *const paths[] = {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/zstd"};
	struct timespec t0, t1;
	struct loaded l;
	size_t i, seen = 0;

	(void)state;
	for (i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
		if (access(paths[i], R_OK)) {
			print_message("# %s: absent, not checked\n", paths[i]);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		load(paths[i], &l);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		print_message("# %s: %zu FDEs, %zu frameless, whole %d, %zu pages, %.2f ms with "
			      "symbols\n",
			      paths[i], l.m.nfuncs, l.m.nframeless, l.m.whole, l.m.npages,
			      (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
		assert_true(l.m.nfuncs > 500);
		assert_int_equal(l.m.whole, 1);
		assert_exec_only(&l);
		unload(&l);
		seen++;
	}
	if (!seen)
		skip();
}

static void test_not_elf(void **state)
{
	struct rec_cfimap m;
	char name[64];
	int fd;

	(void)state;
	fd = tmp_file(name, sizeof(name));
	assert_int_equal(rec_cfimap__classify(fd, &m), -ENOEXEC); /* empty */
	assert_int_equal(write(fd, "#!/bin/sh\necho hello\n", 21), 21);
	assert_int_equal(rec_cfimap__classify(fd, &m), -ENOEXEC);
	assert_null(m.pages);
	assert_int_equal(m.npages, 0);
	rec_cfimap__release(&m);
	rec_cfimap__release(NULL);
	close(fd);
	unlink(name);
}

static int classify_fd(int fd, size_t *nfuncs)
{
	struct rec_cfimap m;
	int ret = rec_cfimap__classify(fd, &m);

	*nfuncs = m.nfuncs;
	rec_cfimap__release(&m);
	return ret;
}

/* Every length of .eh_frame: a clean 0 or -EINVAL, never a read past its end. */
static void test_truncated_eh_frame(void **state)
{
	char name[64];
	size_t nfuncs, full, einval = 0;
	struct shloc eh;
	uint64_t k;
	int fd, ret;

	(void)state;
	fd = tmp_build_copy("samples/workload", name, sizeof(name), &eh);
	assert_int_equal(classify_fd(fd, &full), 0);
	for (k = 0; k <= eh.size; k++) {
		assert_int_equal(pwrite(fd, &k, 8, eh.size_at), 8);
		ret = classify_fd(fd, &nfuncs);
		if (k == 0)
			assert_int_equal(ret, -ENOENT); /* no .debug_frame either */
		else if (ret)
			assert_int_equal(ret, -EINVAL);
		einval += ret == -EINVAL;
		assert_true(ret || nfuncs <= full);
	}
	/* Without the 4-byte terminator the last entry still ends the section. */
	k = eh.size - 4;
	assert_int_equal(pwrite(fd, &k, 8, eh.size_at), 8);
	assert_int_equal(classify_fd(fd, &nfuncs), 0);
	assert_int_equal(nfuncs, full);
	assert_true(einval > eh.size / 2);
	close(fd);
	unlink(name);
}

/* Random bytes over .eh_frame, a few at a time: 0 or -EINVAL, no crash. */
static void test_scribbled_eh_frame(void **state)
{
	char name[64];
	unsigned seed = 12345, i;
	size_t nfuncs, ok = 0;
	struct shloc eh;
	uint8_t orig[8];
	off_t pos;
	int fd, ret;

	(void)state;
	fd = tmp_build_copy("samples/workload", name, sizeof(name), &eh);
	for (i = 0; i < 3000; i++) {
		pos = scribble(fd, &eh, i, &seed, orig);
		ret = classify_fd(fd, &nfuncs);
		if (ret)
			assert_int_equal(ret, -EINVAL);
		ok += !ret;
		unscribble(fd, pos, orig);
	}
	/* Most single bytes land in instructions or addresses and still parse. */
	assert_true(ok > 0 && ok < 3000);
	close(fd);
	unlink(name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workload_frame_pointers),
		cmocka_unit_test(test_workload_frameless_leaves),
		cmocka_unit_test(test_workload_no_frame_pointers),
		cmocka_unit_test(test_debug_frame),
		cmocka_unit_test(test_debian_without_frame_pointers),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_truncated_eh_frame),
		cmocka_unit_test(test_scribbled_eh_frame),
	};

	elf_version(EV_CURRENT);
	set_build_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
