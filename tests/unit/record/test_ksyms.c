// SPDX-License-Identifier: MIT
/*
 * test_ksyms.c - kallsyms parsing, lookup at symbol boundaries, each symbol
 * emitted once, module names, and the kptr_restrict (all zero) case.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <errno.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "ksyms.h"
#include "rec_test_sink.h"

static char fixture[64];

static void write_fixture(const char *text)
{
	int fd;

	strcpy(fixture, "/tmp/test_ksyms.XXXXXX");
	fd = mkstemp(fixture);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static const char *kallsyms_text = "ffffffff81000000 T _text\n"
				   "ffffffff81001000 t read_zero\n"
				   "ffffffff81001000 T read_zero_alias\n"
				   "ffffffff81002000 D some_data\n"
				   "ffffffff81003000 T vfs_read\n"
				   "ffffffff81004000 W weak_fn\n"
				   "ffffffffc0001000 t mod_fn\t[e1000]\n"
				   "ffffffffc0000000 t mod_first\t[e1000]\n"
				   "ffffffffc0100000 t bpf_prog_abc_sa_on_cpu\t[bpf]\n";

static void test_load_and_note(void **state)
{
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	uint64_t ips[] = {0xffffffff81001010, 0xffffffff81003005, 0xffffffff81001fff,
			  0xffffffffc0001004, 0xffffffffc0100010, 0x1000};
	struct rec_ksyms *ks;

	(void)state;
	write_fixture(kallsyms_text);
	ks = rec_ksyms__load(fixture);
	unlink(fixture);
	assert_non_null(ks);
	assert_int_equal(rec_ksyms__count(ks), 8); /* some_data is not text */
	/* 0x1000 is below every symbol: nothing. 0xffffffff81003005 - 1 is
	 * still vfs_read; 0xffffffff81001010 and ...1fff share read_zero. */
	assert_int_equal(rec_ksyms__note(ks, ips, 6, &sink), 4);
	assert_int_equal(ts.n, 4);
	assert_string_equal(ts.recs[0].s1, "read_zero");
	assert_true(ts.recs[0].rec.ksym.addr == 0xffffffff81001000);
	assert_string_equal(ts.recs[0].s2, "");
	assert_string_equal(ts.recs[1].s1, "vfs_read");
	assert_string_equal(ts.recs[2].s1, "mod_fn");
	assert_string_equal(ts.recs[2].s2, "e1000");
	assert_string_equal(ts.recs[3].s2, "bpf");
	/* Again: nothing new. */
	assert_int_equal(rec_ksyms__note(ks, ips, 6, &sink), 0);
	assert_int_equal(rec_ksyms__emitted(ks), 4);
	test_sink_reset(&ts);
	rec_ksyms__free(ks);
}

static void test_return_address_at_next_function(void **state)
{
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	uint64_t ip = 0xffffffff81003000; /* first byte of vfs_read */
	struct rec_ksyms *ks;

	(void)state;
	write_fixture(kallsyms_text);
	ks = rec_ksyms__load(fixture);
	unlink(fixture);
	assert_non_null(ks);
	/* Both vfs_read (ip) and the function before it (ip - 1) are carried. */
	assert_int_equal(rec_ksyms__note(ks, &ip, 1, &sink), 2);
	test_sink_reset(&ts);
	rec_ksyms__free(ks);
}

static void test_sink_error_is_returned(void **state)
{
	struct test_sink ts = {.fail_with = -ENOSPC};
	struct rec_sink sink = TEST_SINK(&ts);
	uint64_t ip = 0xffffffff81003004;
	struct rec_ksyms *ks;

	(void)state;
	write_fixture(kallsyms_text);
	ks = rec_ksyms__load(fixture);
	unlink(fixture);
	assert_int_equal(rec_ksyms__note(ks, &ip, 1, &sink), -ENOSPC);
	ts.fail_with = 0;
	/* Not marked emitted after a failure: it is retried. */
	assert_int_equal(rec_ksyms__note(ks, &ip, 1, &sink), 1);
	test_sink_reset(&ts);
	rec_ksyms__free(ks);
}

static void test_restricted(void **state)
{
	(void)state;
	write_fixture("0000000000000000 T _text\n0000000000000000 t read_zero\n");
	assert_null(rec_ksyms__load(fixture));
	assert_int_equal(errno, EPERM);
	unlink(fixture);
	write_fixture("garbage\n");
	assert_null(rec_ksyms__load(fixture));
	assert_int_equal(errno, ENOENT);
	unlink(fixture);
	assert_null(rec_ksyms__load("/nonexistent/kallsyms"));
	assert_int_equal(errno, ENOENT);
}

static void test_real_kallsyms(void **state)
{
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_ksyms *ks;
	uint64_t ip;
	FILE *f;
	char line[512], name[256];
	int found = 0;

	(void)state;
	ks = rec_ksyms__load(NULL);
	if (!ks)
		SA_SKIP("no kernel symbols: not root, or kptr_restrict");
	f = fopen("/proc/kallsyms", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char type;

		if (sscanf(line, "%lx %c %255s", &ip, &type, name) == 3 &&
		    !strcmp(name, "vfs_read")) {
			found = 1;
			break;
		}
	}
	if (f)
		fclose(f);
	if (found) {
		ip += 4;
		assert_int_equal(rec_ksyms__note(ks, &ip, 1, &sink), 1);
		assert_string_equal(ts.recs[0].s1, "vfs_read");
	}
	test_sink_reset(&ts);
	rec_ksyms__free(ks);
}

/*
 * The kernel's symbols come sorted, the rest of the file (modules, BPF)
 * does not: a module symbol below _text, aliases of one address in vmlinux
 * and a module, a line without its newline. Each must be found.
 */
static void test_unsorted_tail(void **state)
{
	static const struct {
		uint64_t ip;
		const char *name, *module;
	} want[] = {
		{0xffffffff81000150, "a1", ""},
		{0xffffffffc0000010, "m0", "moda"},
		{0xffffffffc0001fff, "m1", "moda"},
		{0xffffffffc0002001, "m2", "modb"},
		{0xffffffff80ffff10, "early", "x"},
		{0xffffffff81000201, "b1", ""},
		{0xffffffffc0003005, "last_no_nl", "bpf"},
	};
	struct test_sink ts = {0};
	struct rec_sink sink = TEST_SINK(&ts);
	struct rec_ksyms *ks;
	size_t i;

	(void)state;
	write_fixture("ffffffff81000000 T _text\n"
		      "ffffffff81000100 t a1\n"
		      "ffffffff81000200 t b1\n"
		      "ffffffffc0002000 t m2\t[modb]\n"
		      "ffffffffc0000000 t m0\t[moda]\n"
		      "ffffffff81000100 t a1_mod\t[modc]\n"
		      "ffffffffc0001000 t m1\t[moda]\n"
		      "ffffffff80ffff00 t early\t[x]\n"
		      "ffffffffc0003000 t last_no_nl\t[bpf]");
	ks = rec_ksyms__load(fixture);
	unlink(fixture);
	assert_non_null(ks);
	assert_int_equal(rec_ksyms__count(ks), 9);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(rec_ksyms__note(ks, &want[i].ip, 1, &sink), 1);
		assert_string_equal(ts.recs[i].s1, want[i].name);
		assert_string_equal(ts.recs[i].s2, want[i].module);
	}
	rec_ksyms__free(ks);
	test_sink_reset(&ts);
}

SA_TEST_MAIN(test_load_and_note, test_return_address_at_next_function, test_sink_error_is_returned, test_restricted, test_unsorted_tail, test_real_kallsyms)
