// SPDX-License-Identifier: MIT
/*
 * test_unwind.c - the offline unwinder on a capture this test takes of its
 * own stack inside a chain of functions built without frame pointers: the
 * unwound return addresses must be the ones each function saw, in order,
 * by the walk over CFI rows and by libdwfl's (the same frames for every
 * length of the copy), a cache hit must give the same frames, and a short
 * copy or a binary with another build id must stop at the leaf instead of
 * guessing, many process images of the same binaries must map each binary
 * a bounded number of times, and a binary is found by its build id at any
 * path another image mapped it from.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "saf.h"
#include "session.h"
#include "unwind.h"
#include "uwpick.h"

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

/*
 * Copy live stack bytes as the recorder's BPF program does: below the
 * current frame they include other frames' redzones, which AddressSanitizer
 * would report, so this copy is not instrumented.
 */
static __attribute__((noinline, no_sanitize("address"))) void copy_stack(uint8_t *dst,
									  const uint8_t *src,
									  size_t len)
{
	for (size_t i = 0; i < len; i++)
		((volatile uint8_t *)dst)[i] = src[i];
}

/* Registers and stack bytes at the asm statement, which CFI describes. */
static __attribute__((noinline, optimize("omit-frame-pointer"))) void leaf(volatile int *sink)
{
	uint64_t sp, bp, ip;

	__asm__ volatile("mov %%rsp, %0\n\tmov %%rbp, %1\n\tlea 0(%%rip), %2"
			 : "=r"(sp), "=r"(bp), "=r"(ip));
	cap.regs = (struct rpt_unwind_regs){ ip, sp, bp };
	cap.len = cap.stack_end - sp < CAP_BYTES ? cap.stack_end - sp : CAP_BYTES;
	copy_stack(cap.stack, (const uint8_t *)sp, cap.len);
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
		if ((uint64_t)s <= (uint64_t)&line && (uint64_t)&line < e)
			cap.stack_end = e; /* the mapping holding this frame: the stack */
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

/* Unwind the contiguous copy @stack, @len (one run, as a USTACK record gives). */
static int unwind_copy(struct rpt_unwinder *u, uint64_t key, const struct rpt_unwind_module *m,
		       size_t n, const struct rpt_unwind_regs *regs, const uint8_t *stack,
		       uint32_t len, uint64_t *ips, uint32_t cap)
{
	struct saf_ustack copy = { .stack = { stack, len } };

	return rpt_unwinder__unwind(u, key, m, n, regs, &copy, ips, cap);
}

static int find(const uint64_t *ips, int n, uint64_t want)
{
	for (int i = 0; i < n; i++)
		if (ips[i] == want)
			return i;
	return -1;
}

/* @dwfl_only: libdwfl's walk, else the walk over CFI rows; both must pass. */
static void unwinds_through_frameless_code(bool dwfl_only)
{
	struct rpt_unwinder *u = rpt_unwinder__new();
	uint64_t ips[128], again[128];
	int n, i;

	assert_non_null(u);
	rpt_unwinder__dwfl_only(u, dwfl_only);
	n = unwind_copy(u, 1, mods, nmods, &cap.regs, cap.stack, cap.len, ips, 128);
	assert_true(n >= 4);
	assert_int_equal(ips[0], cap.regs.ip);
	i = find(ips, n, cap.ret[0]);
	assert_int_equal(i, 1);
	assert_int_equal(ips[2], cap.ret[1]);
	assert_int_equal(ips[3], cap.ret[2]);
	/* the same capture again: the same frames, from libdwfl's cache or not */
	assert_int_equal(unwind_copy(u, 1, mods, nmods, &cap.regs, cap.stack, cap.len,
					      again, 128), n);
	assert_memory_equal(ips, again, n * sizeof(*ips));
	assert_int_equal(rpt_unwinder__nunwinds(u), dwfl_only ? 1 : 2);
	rpt_unwinder__free(u);
}

static void test_unwinds_through_frameless_code(void **state)
{
	(void)state;
	unwinds_through_frameless_code(false);
}

static void test_libdwfl_unwinds_through_frameless_code(void **state)
{
	(void)state;
	unwinds_through_frameless_code(true);
}

/* Both walks give the same frames for every truncation of the copy. */
static void test_rows_walk_equals_libdwfl(void **state)
{
	struct rpt_unwinder *rows = rpt_unwinder__new(), *dwfl = rpt_unwinder__new();
	uint64_t a[128], b[128];

	(void)state;
	assert_non_null(rows);
	assert_non_null(dwfl);
	rpt_unwinder__dwfl_only(dwfl, true);
	for (uint32_t len = 0; len <= cap.len; len += len < 512 ? 8 : 256) {
		int na = unwind_copy(rows, 1, mods, nmods, &cap.regs, cap.stack, len, a,
					      128);
		int nb = unwind_copy(dwfl, 1, mods, nmods, &cap.regs, cap.stack, len, b,
					      128);

		assert_int_equal(na, nb);
		assert_memory_equal(a, b, na * sizeof(*a));
	}
	rpt_unwinder__free(rows);
	rpt_unwinder__free(dwfl);
}

/*
 * libdwfl's walks are cached: words the unwinder never read may differ and
 * the cached unwind still applies.
 */
static void test_cache_keyed_by_words_read(void **state)
{
	static uint8_t copy[CAP_BYTES];
	struct rpt_unwinder *u = rpt_unwinder__new();
	uint64_t ips[128], again[128];
	int n, i;

	(void)state;
	rpt_unwinder__dwfl_only(u, true);
	memcpy(copy, cap.stack, cap.len);
	n = unwind_copy(u, 1, mods, nmods, &cap.regs, copy, cap.len, ips, 128);
	copy[cap.len - 1] ^= 0xff; /* the top of the stack: never read */
	assert_int_equal(unwind_copy(u, 1, mods, nmods, &cap.regs, copy, cap.len, again,
					      128), n);
	assert_int_equal(rpt_unwinder__nunwinds(u), 1);
	/* the leaf's return address is read: changing it is a new unwind */
	for (i = 0; i + 8 <= (int)cap.len; i += 8)
		if (!memcmp(copy + i, &cap.ret[0], 8))
			break;
	assert_true(i + 8 <= (int)cap.len);
	copy[i] ^= 1;
	unwind_copy(u, 1, mods, nmods, &cap.regs, copy, cap.len, again, 128);
	assert_int_equal(rpt_unwinder__nunwinds(u), 2);
	rpt_unwinder__free(u);
}

static void test_short_copy_stops(void **state)
{
	struct rpt_unwinder *u = rpt_unwinder__new();
	uint64_t ips[128];
	int n;

	(void)state;
	n = unwind_copy(u, 1, mods, nmods, &cap.regs, cap.stack, 0, ips, 128);
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
	assert_int_equal(unwind_copy(u, 2, bad, nmods, &cap.regs, cap.stack, cap.len,
					      ips, 128), 1);
	assert_int_equal(ips[0], cap.regs.ip);
	rpt_unwinder__free(u);
}

/*
 * Frames sa-record walked (format 1.3) stand in only where a binary they run
 * through cannot be used (here: every build id differs); with the binaries
 * the report's own walk wins, even over recorded frames that disagree.
 */
static void test_recorded_frames_where_binary_missing(void **state)
{
	struct rpt_unwind_module bad[MAX_MODS];
	struct rpt_unwinder *u = rpt_unwinder__new();
	uint64_t ips[128], own[128], rec[4] = { cap.regs.ip, cap.ret[0], cap.ret[1], cap.ret[2] };
	struct saf_ustack copy = { .stack = { cap.stack, cap.len },
				   .walk = SAF_WALK_CUT,
				   .nwalked = 4,
				   .walked = rec };
	int n;

	(void)state;
	memcpy(bad, mods, nmods * sizeof(*bad));
	for (size_t i = 0; i < nmods; i++)
		bad[i].build_id = "0123456789abcdef0123456789abcdef01234567";
	assert_int_equal(rpt_unwinder__unwind(u, 3, bad, nmods, &cap.regs, &copy, ips, 128), 4);
	assert_memory_equal(ips, rec, sizeof(rec));
	assert_int_equal(rpt_unwinder__unwind(u, 3, bad, nmods, &cap.regs, &copy, ips, 2), 2);
	assert_int_equal(rpt_unwinder__pick(u)->nmissing, 0);
	/* no recorded frames: the walk stops at the leaf's binary, noted once with its build id */
	for (int i = 0; i < 2; i++)
		assert_int_equal(unwind_copy(u, 3, bad, nmods, &cap.regs, cap.stack, cap.len, ips,
					     128),
				 1);
	assert_int_equal(rpt_unwinder__pick(u)->nmissing, 1);
	assert_int_equal(rpt_unwinder__pick(u)->missing[0].walks, 2);
	assert_string_equal(rpt_unwinder__pick(u)->missing[0].build_id, bad[0].build_id);
	/* binaries here: the own walk, longer than the recorded frames */
	n = unwind_copy(u, 4, mods, nmods, &cap.regs, cap.stack, cap.len, own, 128);
	assert_true(n > 4);
	assert_int_equal(rpt_unwinder__unwind(u, 4, mods, nmods, &cap.regs, &copy, ips, 128), n);
	assert_memory_equal(ips, own, n * sizeof(*ips));
	rpt_unwinder__free(u);
}

/* Mappings in /proc/self/maps of the file at @path. */
static int mappings_of(const char *path)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	size_t len = strlen(path);
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *nl = strchr(line, '\n'), *at;

		if (nl)
			*nl = '\0';
		at = strstr(line, path);
		n += at && at[len] == '\0' && at > line && at[-1] == ' ';
	}
	fclose(f);
	return n;
}

/*
 * 300 process images mapping the same binaries (a fork loop): each binary
 * is opened once, not once per image, so libc's mappings in this process
 * grow by a few whatever the number of images. A Dwfl per image mapped libc
 * once more per image. @dwfl_only: by libdwfl's walk, which builds a Dwfl
 * of each image and keeps only the last few.
 */
static void binaries_mapped_once(bool dwfl_only)
{
	struct rpt_unwinder *u = rpt_unwinder__new();
	uint64_t ips[128], first[128];
	const char *libc = NULL;
	int before, n0 = 0;

	assert_non_null(u);
	rpt_unwinder__dwfl_only(u, dwfl_only);
	for (size_t i = 0; i < nmods; i++)
		if (strstr(mods[i].path, "/libc.so"))
			libc = mods[i].path;
	assert_non_null(libc);
	before = mappings_of(libc);
	for (uint64_t key = 100; key < 400; key++) {
		int n = unwind_copy(u, key, mods, nmods, &cap.regs, cap.stack, cap.len, ips, 128);

		if (!n0) {
			n0 = n;
			memcpy(first, ips, n * sizeof(*ips));
		}
		/* every image gives the frames the first did */
		assert_int_equal(n, n0);
		assert_memory_equal(ips, first, n * sizeof(*ips));
	}
	assert_true(n0 >= 4);
	/* the shared binary, and the last few images' Dwfls for libdwfl's walk */
	assert_in_range(mappings_of(libc) - before, 0, 8);
	rpt_unwinder__free(u);
	assert_int_equal(mappings_of(libc), before);
}

static void test_binaries_mapped_once(void **state)
{
	(void)state;
	binaries_mapped_once(false);
}

static void test_libdwfl_binaries_mapped_once(void **state)
{
	(void)state;
	binaries_mapped_once(true);
}

/* The build id of file @path in lower-case hex, into @hex (@cap bytes). */
static void build_id_of(const char *path, char *hex, size_t cap)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	const uint8_t *bid;
	ssize_t n;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	n = e ? dwelf_elf_gnu_build_id(e, (const void **)&bid) : -1;
	assert_true(n > 0 && (size_t)n * 2 < cap);
	for (ssize_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	elf_end(e);
	close(fd);
}

/*
 * One image maps every binary from a path that does not exist, another from
 * the real one, with the same build ids (a container's view and the
 * host's): both walk the whole chain, in either order, since a binary is
 * one per build id wherever it was mapped from.
 */
static void test_binary_shared_by_build_id(void **state)
{
	static char bids[MAX_MODS][2 * 64 + 1], gone[MAX_MODS][300];
	struct rpt_unwind_module real[MAX_MODS], moved[MAX_MODS];
	uint64_t ips[128], want[128];
	struct rpt_unwinder *u;
	int n;

	(void)state;
	for (size_t i = 0; i < nmods; i++) {
		build_id_of(mods[i].path, bids[i], sizeof(bids[i]));
		snprintf(gone[i], sizeof(gone[i]), "/nonexistent%s", mods[i].path);
		real[i] = mods[i];
		real[i].build_id = bids[i];
		moved[i] = real[i];
		moved[i].path = gone[i];
	}
	u = rpt_unwinder__new();
	n = unwind_copy(u, 1, real, nmods, &cap.regs, cap.stack, cap.len, want, 128);
	assert_true(n >= 4);
	assert_int_equal(unwind_copy(u, 2, moved, nmods, &cap.regs, cap.stack, cap.len, ips, 128),
			 n);
	assert_memory_equal(ips, want, n * sizeof(*ips));
	rpt_unwinder__free(u);
	/* the moved image first: nothing found yet, then found by the real one */
	u = rpt_unwinder__new();
	assert_int_equal(unwind_copy(u, 2, moved, nmods, &cap.regs, cap.stack, cap.len, ips, 128),
			 1);
	assert_int_equal(unwind_copy(u, 1, real, nmods, &cap.regs, cap.stack, cap.len, ips, 128),
			 n);
	assert_memory_equal(ips, want, n * sizeof(*ips));
	/* and the moved image's next capture has them too */
	assert_int_equal(unwind_copy(u, 2, moved, nmods, &cap.regs, cap.stack, cap.len, ips, 128),
			 n);
	rpt_unwinder__free(u);
}

/* A recording holding this process's mappings and the capture as a USTACK. */
static void write_recording(int fd)
{
	struct saf_meta m = { .writer = saf_str__from("test_unwind"), .freq_hz = 99, .ncpus = 1 };
	struct saf_record r = { .kind = SAF_REC_PROC };
	struct saf_interval iv = { 0, 1, 2 };
	struct saf_end end = { 2, 3, 0, 1, 0 };
	struct saf_writer *w = saf_writer__open_fd(fd, NULL);

	assert_non_null(w);
	assert_int_equal(saf_writer__meta(w, &m), 0);
	r.proc = (struct saf_proc){ 42, 0, 1, 0, saf_str__from("unw"), saf_str__from(paths[0]) };
	assert_int_equal(saf_writer__add(w, &r), 0);
	for (size_t i = 0; i < nmods; i++) {
		r = (struct saf_record){ .kind = SAF_REC_MAP };
		r.map = (struct saf_map){ .pid = 42, .start = mods[i].start, .end = mods[i].end,
					  .pgoff = mods[i].pgoff, .flags = SAF_MAP_EXEC,
					  .path = saf_str__from(paths[i]) };
		assert_int_equal(saf_writer__add(w, &r), 0);
	}
	assert_int_equal(saf_writer__interval(w, &iv), 0);
	r = (struct saf_record){ .kind = SAF_REC_USTACK };
	r.ustack = (struct saf_ustack){ .pid = 42, .tid = 42, .time_ns = 1, .count = 3,
					.comm = saf_str__from("unw"), .nregs = 3,
					.regs = { cap.regs.ip, cap.regs.sp, cap.regs.fp },
					.stack = { cap.stack, cap.len } };
	assert_int_equal(saf_writer__add(w, &r), 0);
	assert_int_equal(saf_writer__interval_end(w, NULL), 0);
	assert_int_equal(saf_writer__finish(w, &end), 0);
	saf_writer__free(w);
}

/* sa-report's pipeline: a USTACK comes out as a named chain, caller first. */
static void test_report_names_unwound_chain(void **state)
{
	struct rpt_session_opts o = { .sym = { .no_system_debug = true } };
	struct rpt_profile *prof = rpt_profile__new();
	struct rpt_session *s = rpt_session__new(&o);
	char path[] = "/tmp/test_unwind.XXXXXX";
	int fd = mkstemp(path), found = 0;

	(void)state;
	assert_true(fd >= 0);
	write_recording(fd);
	close(fd);
	assert_int_equal(rpt_session__add_file(s, path, path, prof), 0);
	unlink(path);
	assert_int_equal(prof->total, 3);
	assert_int_equal(prof->nstacks, 1);
	for (uint32_t i = 0; i + 2 < prof->stacks[0].nframes; i++) {
		const struct rpt_frame *f = rpt_profile__stack_frames(prof, &prof->stacks[0]) + i;

		if (!strcmp(rpt_profile__name(prof, f[0].name), "top") &&
		    !strcmp(rpt_profile__name(prof, f[1].name), "mid") &&
		    !strcmp(rpt_profile__name(prof, f[2].name), "leaf"))
			found = 1;
	}
	assert_true(found);
	rpt_session__free(s);
	rpt_profile__free(prof);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unwinds_through_frameless_code),
		cmocka_unit_test(test_libdwfl_unwinds_through_frameless_code),
		cmocka_unit_test(test_rows_walk_equals_libdwfl),
		cmocka_unit_test(test_cache_keyed_by_words_read),
		cmocka_unit_test(test_short_copy_stops),
		cmocka_unit_test(test_build_id_mismatch_not_used),
		cmocka_unit_test(test_recorded_frames_where_binary_missing),
		cmocka_unit_test(test_report_names_unwound_chain),
		cmocka_unit_test(test_binaries_mapped_once),
		cmocka_unit_test(test_libdwfl_binaries_mapped_once),
		cmocka_unit_test(test_binary_shared_by_build_id),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
