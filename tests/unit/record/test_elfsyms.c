// SPDX-License-Identifier: MIT
/*
 * test_elfsyms.c - symbols embedded for sampled file offsets: the test's own
 * binary (.symtab), libc (.dynsym only on Debian), a deleted copy read
 * through a kept fd, a build-id mismatch, uncovered offsets and each symbol
 * emitted once; what a rotation drops (tables, fds).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <unistd.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "elfsyms.h"
#include "rec_test_sink.h"

/* A function with a known name; noinline so it has its own symbol. */
__attribute__((noinline)) int test_elfsyms_marker(int x)
{
	return x * 3 + 1;
}

/* File offset and path of code address @addr in this process. */
static int where(const void *addr, char *path, size_t cap, uint64_t *off)
{
	unsigned long lo, hi, pgoff;
	char line[1024], perm[8], p[900];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	while (f && fgets(line, sizeof(line), f)) {
		p[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %899s", &lo, &hi, perm, &pgoff, p) < 4)
			continue;
		if ((unsigned long)addr >= lo && (unsigned long)addr < hi) {
			snprintf(path, cap, "%s", p);
			*off = (unsigned long)addr - lo + pgoff;
			found = 1;
			break;
		}
	}
	if (f)
		fclose(f);
	return found ? 0 : -ENOENT;
}

static int bid_of(const char *path, uint8_t *bid)
{
	int fd = open(path, O_RDONLY), n;

	assert_true(fd >= 0);
	n = rec_elfsyms__read_build_id(fd, bid, SAF_MAX_BUILD_ID);
	close(fd);
	return n;
}

static void test_own_binary(void **state)
{
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_elfsyms_stats st;
	struct rec_elfsyms *es;
	uint8_t bid[SAF_MAX_BUILD_ID];
	char path[900];
	uint64_t off;
	int n, id;

	(void)state;
	assert_int_equal(test_elfsyms_marker(1), 4);
	assert_int_equal(where((void *)test_elfsyms_marker, path, sizeof(path), &off), 0);
	n = bid_of(path, bid);
	assert_true(n >= 16);
	es = rec_elfsyms__new(0);
	id = rec_elfsyms__file(es, bid, n, path, -1);
	assert_true(id >= 0);
	assert_int_equal(rec_elfsyms__file(es, bid, n, "/other/path", -1), id);
	assert_int_equal(rec_elfsyms__note(es, id, off + 2), 1);
	assert_int_equal(rec_elfsyms__note(es, id, off + 3), 0); /* same symbol */
	assert_int_equal(rec_elfsyms__flush(es, &sink), 1);
	assert_int_equal(ts.n, 2);
	assert_int_equal(ts.recs[0].rec.kind, SAF_REC_SYMTAB);
	assert_string_equal(ts.recs[0].s1, path);
	assert_memory_equal(ts.recs[0].bid, bid, n);
	assert_int_equal(ts.recs[1].rec.kind, SAF_REC_USYM);
	assert_string_equal(ts.recs[1].s1, "test_elfsyms_marker");
	assert_true(ts.recs[1].rec.usym.offset == off);
	assert_true(ts.recs[1].rec.usym.size > 0);
	/* Emitted once per file: no more records. */
	assert_int_equal(rec_elfsyms__note(es, id, off), 0);
	assert_int_equal(rec_elfsyms__flush(es, &sink), 0);
	assert_int_equal(ts.n, 2);
	/* An offset in the ELF header is covered by no function. */
	assert_int_equal(rec_elfsyms__note(es, id, 16), 0);
	assert_int_equal(rec_elfsyms__note(es, id + 1, 16), -EINVAL);
	rec_elfsyms__stats(es, &st);
	assert_int_equal(st.files, 1);
	assert_int_equal(st.loaded, 1);
	assert_int_equal(st.usyms, 1);
	test_sink_reset(&ts);
	rec_elfsyms__free(es);
}

/*
 * --rotate: a table no sample noted in the file just closed nor the one
 * before is dropped at the next rotation, and read again (same symbol, a
 * new SYMTAB + USYM) when a sample needs it; one noted in the file just
 * closed stays.
 */
static void test_rotation_drops_unused_table(void **state)
{
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_elfsyms_stats st;
	struct rec_elfsyms *es;
	uint8_t bid[SAF_MAX_BUILD_ID];
	char path[900];
	uint64_t off;
	int n, id, i;

	(void)state;
	assert_int_equal(where((void *)test_elfsyms_marker, path, sizeof(path), &off), 0);
	n = bid_of(path, bid);
	es = rec_elfsyms__new(0);
	id = rec_elfsyms__file(es, bid, n, path, -1);
	assert_int_equal(rec_elfsyms__note(es, id, off), 1);
	assert_int_equal(rec_elfsyms__flush(es, &sink), 1);
	rec_elfsyms__stats(es, &st);
	assert_true(st.tab_bytes > 0);
	for (i = 0; i < 2; i++) { /* noted in file 0: kept into files 1, 2 */
		rec_elfsyms__new_file(es);
		rec_elfsyms__stats(es, &st);
		assert_int_equal(st.evicted, 0);
	}
	rec_elfsyms__new_file(es); /* files 1 and 2 noted nothing */
	rec_elfsyms__stats(es, &st);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.tab_bytes, 0);
	test_sink_reset(&ts);
	assert_int_equal(rec_elfsyms__note(es, id, off), 1);
	assert_int_equal(rec_elfsyms__flush(es, &sink), 1);
	assert_int_equal(ts.n, 2);
	assert_string_equal(ts.recs[1].s1, "test_elfsyms_marker");
	rec_elfsyms__stats(es, &st);
	assert_int_equal(st.loaded, 2);
	rec_elfsyms__new_file(es); /* noted in the file just closed: kept */
	rec_elfsyms__stats(es, &st);
	assert_int_equal(st.evicted, 1);
	assert_true(st.tab_bytes > 0);
	test_sink_reset(&ts);
	rec_elfsyms__free(es);
}

/*
 * Over the budget in the middle of a file, the least recently used table
 * goes; read again in the same file, its symbols already written are not
 * written twice.
 */
static void test_budget_within_a_file(void **state)
{
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_elfsyms_stats st;
	struct rec_elfsyms *es;
	uint8_t bid[SAF_MAX_BUILD_ID], lbid[SAF_MAX_BUILD_ID];
	char path[900], lpath[900];
	uint64_t off, loff;
	int n, ln, id, lid;

	(void)state;
	assert_int_equal(where((void *)test_elfsyms_marker, path, sizeof(path), &off), 0);
	assert_int_equal(where((void *)fopen, lpath, sizeof(lpath), &loff), 0);
	n = bid_of(path, bid);
	ln = bid_of(lpath, lbid);
	es = rec_elfsyms__new(0);
	rec_elfsyms__set_budget(es, 1); /* one table at a time */
	id = rec_elfsyms__file(es, bid, n, path, -1);
	lid = rec_elfsyms__file(es, lbid, ln, lpath, -1);
	assert_int_equal(rec_elfsyms__note(es, id, off), 1);
	assert_int_equal(rec_elfsyms__flush(es, &sink), 1);
	assert_int_equal(rec_elfsyms__note(es, lid, loff), 1); /* the first goes */
	assert_int_equal(rec_elfsyms__flush(es, &sink), 1);
	rec_elfsyms__stats(es, &st);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(rec_elfsyms__note(es, id, off), 0); /* read again, not re-emitted */
	assert_int_equal(rec_elfsyms__flush(es, &sink), 0);
	rec_elfsyms__stats(es, &st);
	assert_int_equal(st.loaded, 3);
	assert_int_equal(st.evicted, 2);
	assert_int_equal(st.usyms, 2);
	rec_elfsyms__new_file(es); /* a new file: emitted again */
	assert_int_equal(rec_elfsyms__note(es, lid, loff), 1);
	test_sink_reset(&ts);
	rec_elfsyms__free(es);
}

static void test_dynsym_only(void **state)
{
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_elfsyms *es;
	uint8_t bid[SAF_MAX_BUILD_ID];
	char path[900];
	uint64_t off;
	int n, id;

	(void)state;
	assert_int_equal(where((void *)getppid, path, sizeof(path), &off), 0);
	n = bid_of(path, bid);
	if (n <= 0)
		SA_SKIP("the C library has no build id");
	es = rec_elfsyms__new(0);
	id = rec_elfsyms__file(es, bid, n, path, -1);
	assert_int_equal(rec_elfsyms__note(es, id, off), 1);
	assert_int_equal(rec_elfsyms__flush(es, &sink), 1);
	assert_non_null(strstr(ts.recs[1].s1, "getppid"));
	test_sink_reset(&ts);
	rec_elfsyms__free(es);
}

/* A deleted file still read through the fd given at registration. */
static void test_deleted_file(void **state)
{
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_elfsyms *es;
	uint8_t bid[SAF_MAX_BUILD_ID];
	char path[900], tmp[] = "/tmp/test_elfsyms.XXXXXX";
	struct stat sb;
	uint64_t off;
	int n, id, in, out;

	(void)state;
	assert_int_equal(where((void *)test_elfsyms_marker, path, sizeof(path), &off), 0);
	n = bid_of(path, bid);
	in = open(path, O_RDONLY);
	out = mkstemp(tmp);
	assert_true(in >= 0 && out >= 0);
	assert_int_equal(fstat(in, &sb), 0);
	assert_int_equal(sendfile(out, in, NULL, sb.st_size), sb.st_size);
	close(in);
	unlink(tmp);
	es = rec_elfsyms__new(4);
	id = rec_elfsyms__file(es, bid, n, tmp, out);
	assert_true(id >= 0);
	assert_int_equal(rec_elfsyms__note(es, id, off), 1);
	assert_int_equal(rec_elfsyms__flush(es, &sink), 1);
	assert_string_equal(ts.recs[1].s1, "test_elfsyms_marker");
	assert_string_equal(ts.recs[0].s1, tmp);
	test_sink_reset(&ts);
	rec_elfsyms__free(es);
}

/*
 * --rotate: the fd kept for a file not read yet is closed at the rotation
 * after two files that neither mapped nor sampled it (it would keep a
 * deleted binary on disk); one mapped again in the meantime keeps its fd.
 */
static void test_rotation_closes_idle_fd(void **state)
{
	struct rec_elfsyms_stats st;
	struct rec_elfsyms *es;
	uint8_t bid[SAF_MAX_BUILD_ID];
	char path[900];
	uint64_t off;
	int n, id, i;

	(void)state;
	assert_int_equal(where((void *)test_elfsyms_marker, path, sizeof(path), &off), 0);
	n = bid_of(path, bid);
	es = rec_elfsyms__new(4);
	id = rec_elfsyms__file(es, bid, n, path, open(path, O_RDONLY));
	for (i = 0; i < 4; i++) { /* mapped again in each of files 0..3 */
		rec_elfsyms__new_file(es);
		assert_int_equal(rec_elfsyms__file(es, bid, n, path, -1), id);
	}
	rec_elfsyms__stats(es, &st);
	assert_int_equal(st.fds_held, 1);
	for (i = 0; i < 3; i++) {
		rec_elfsyms__stats(es, &st);
		assert_int_equal(st.fds_held, 1);
		rec_elfsyms__new_file(es);
	}
	rec_elfsyms__stats(es, &st);
	assert_int_equal(st.fds_held, 0);
	rec_elfsyms__free(es);
}

static void test_build_id_mismatch(void **state)
{
	struct rec_elfsyms_stats st;
	struct rec_elfsyms *es;
	uint8_t bid[20] = {1, 2, 3};
	char path[900];
	uint64_t off;
	int id;

	(void)state;
	assert_int_equal(where((void *)test_elfsyms_marker, path, sizeof(path), &off), 0);
	es = rec_elfsyms__new(0);
	id = rec_elfsyms__file(es, bid, sizeof(bid), path, -1);
	assert_int_equal(rec_elfsyms__note(es, id, off), 0);
	rec_elfsyms__stats(es, &st);
	assert_int_equal(st.failed, 1);
	assert_int_equal(rec_elfsyms__file(es, bid, 0, path, -1), -EINVAL);
	rec_elfsyms__free(es);
}

static void test_sink_failure_keeps_pending(void **state)
{
	struct test_sink ts = {.fail_with = -ENOSPC};
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_elfsyms *es;
	uint8_t bid[SAF_MAX_BUILD_ID];
	char path[900];
	uint64_t off;
	int n, id;

	(void)state;
	assert_int_equal(where((void *)test_elfsyms_marker, path, sizeof(path), &off), 0);
	n = bid_of(path, bid);
	es = rec_elfsyms__new(0);
	id = rec_elfsyms__file(es, bid, n, path, -1);
	assert_int_equal(rec_elfsyms__note(es, id, off), 1);
	assert_int_equal(rec_elfsyms__flush(es, &sink), -ENOSPC);
	ts.fail_with = 0;
	assert_int_equal(rec_elfsyms__flush(es, &sink), 1);
	assert_string_equal(ts.recs[1].s1, "test_elfsyms_marker");
	test_sink_reset(&ts);
	rec_elfsyms__free(es);
}

/*
 * Of the symbols at one offset the embedded name is the global one, not its
 * ".localalias" twin, so a report off the box names it as one beside the
 * binary does (fixture built by tests/rules.mk).
 */
static void test_prefers_global_name(void **state)
{
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_elfsyms *es;
	uint8_t bid[SAF_MAX_BUILD_ID];
	char path[PATH_MAX], exe[PATH_MAX];
	char cmd[PATH_MAX + 64];
	unsigned long long vaddr = 0, off;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *nm;
	int n, id;

	(void)state;
	exe[len > 0 ? len : 0] = '\0';
	/* build/tests/unit/record/test_elfsyms -> build/tests/data/cxx_clone */
	snprintf(path, sizeof(path), "%s/../../data/cxx_clone", dirname(exe));
	if (access(path, R_OK))
		SA_SKIP("no build/tests/data/cxx_clone (make check-extra)");
	snprintf(cmd, sizeof(cmd), "nm %s | awk '/shared_entryEl$/ { print $1 }'", path);
	nm = popen(cmd, "r");
	assert_non_null(nm);
	assert_int_equal(fscanf(nm, "%llx", &vaddr), 1);
	pclose(nm);
	off = vaddr; /* a PIE from ld: its text segment has p_offset == p_vaddr */
	n = bid_of(path, bid);
	es = rec_elfsyms__new(0);
	id = rec_elfsyms__file(es, bid, n, path, -1);
	assert_int_equal(rec_elfsyms__note(es, id, off + 1), 1);
	assert_int_equal(rec_elfsyms__flush(es, &sink), 1);
	assert_string_equal(ts.recs[1].s1, "_ZN5outer5inner12shared_entryEl");
	test_sink_reset(&ts);
	rec_elfsyms__free(es);
}

static void test_not_elf(void **state)
{
	uint8_t bid[SAF_MAX_BUILD_ID];
	int fd = open("/proc/self/status", O_RDONLY);

	(void)state;
	assert_int_equal(rec_elfsyms__read_build_id(fd, bid, sizeof(bid)), -ENOEXEC);
	close(fd);
}

/*
 * --rotate: files no process image names any more are dropped with their
 * table and fd; the rest are numbered again, one with symbols not flushed
 * yet (a failed flush) stays, and a dropped build id registers anew.
 */
static void test_forget_unnamed(void **state)
{
	struct test_sink ts = {.fail_with = -ENOSPC};
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_elfsyms_stats st;
	struct rec_elfsyms *es;
	uint8_t bid[SAF_MAX_BUILD_ID], other[SAF_MAX_BUILD_ID];
	int ids[200], all[201] = {0}, two[2] = {1, 0}, n, own, i;
	char path[900];
	uint64_t off;

	(void)state;
	assert_int_equal(where((void *)test_elfsyms_marker, path, sizeof(path), &off), 0);
	n = bid_of(path, bid);
	es = rec_elfsyms__new(0);
	memcpy(other, bid, sizeof(other));
	for (i = 0; i < 200; i++) { /* 200 others, each with an fd held */
		memcpy(other, &i, sizeof(i));
		assert_int_equal(rec_elfsyms__file(es, other, n, "/nonexistent",
						   open("/dev/null", O_RDONLY)),
				 i);
	}
	own = rec_elfsyms__file(es, bid, n, path, -1);
	assert_int_equal(own, 200);
	assert_int_equal(rec_elfsyms__note(es, own, off), 1);
	assert_int_equal(rec_elfsyms__forget(es, ids, 3), -EINVAL);
	assert_int_equal(rec_elfsyms__count(es), 201);
	all[7] = 1; /* still named; 200 has symbols pending */
	assert_int_equal(rec_elfsyms__forget(es, all, 201), 0);
	assert_int_equal(all[0], -1);
	assert_int_equal(all[7], 0);
	assert_int_equal(all[200], 1);
	assert_int_equal(rec_elfsyms__count(es), 2);
	rec_elfsyms__stats(es, &st);
	assert_int_equal(st.fds_held, 1);
	assert_int_equal(st.forgotten, 199);
	assert_true(st.tab_bytes > 0);
	/* the pending file moved to id 1: its flush still names the marker */
	ts.fail_with = 0;
	assert_int_equal(rec_elfsyms__flush(es, &sink), 1);
	assert_string_equal(ts.recs[1].s1, "test_elfsyms_marker");
	/* dropped once flushed and unnamed; known ones keep their id */
	assert_int_equal(rec_elfsyms__forget(es, two, 2), 0);
	rec_elfsyms__stats(es, &st);
	assert_int_equal(st.tab_bytes, 0);
	memcpy(other, &(int){7}, sizeof(int));
	assert_int_equal(rec_elfsyms__file(es, other, n, "/nonexistent", -1), 0);
	assert_int_equal(rec_elfsyms__file(es, bid, n, path, -1), 1);
	test_sink_reset(&ts);
	rec_elfsyms__free(es);
}

SA_TEST_MAIN(test_forget_unnamed, test_own_binary, test_rotation_drops_unused_table, test_budget_within_a_file, test_dynsym_only, test_deleted_file, test_rotation_closes_idle_fd, test_build_id_mismatch, test_sink_failure_keeps_pending, test_prefers_global_name, test_not_elf)
