// SPDX-License-Identifier: MIT
/*
 * test_input.c - report/input/input.c: kinds found by content (recording,
 * perf.data, folded text, perf script text with and without call chains,
 * binary), and a pipe read through the look-ahead without losing a byte.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "sa_cmocka.h"

#include "input.h"
#include "saf.h"

static enum rpt_input_kind sniff(const char *s)
{
	return rpt_input__sniff(s, strlen(s));
}

static void test_sniff(void **state)
{
	static const char sa[] = SAF_MAGIC "rest";

	(void)state;
	assert_int_equal(rpt_input__sniff(sa, sizeof(sa)), RPT_INPUT_SA);
	assert_int_equal(sniff("PERFILE2\x68\0\0\0"), RPT_INPUT_PERFDATA);
	assert_int_equal(rpt_input__sniff("a\0b", 3), RPT_INPUT_UNKNOWN);
	assert_int_equal(sniff(""), RPT_INPUT_FOLDED);
	assert_int_equal(sniff("# c\n\napp;main;f 12\r\napp;g 1\n"), RPT_INPUT_FOLDED);
	assert_int_equal(sniff("app;main;f 12"), RPT_INPUT_FOLDED);
	assert_int_equal(sniff("# perf\nworkload 29201 11619.514880:    1001001 cpu-clock: \n"
			       "\t  1cc7 sa_leaf_a+0x27 (/w)\n"),
			 RPT_INPUT_PERFSCRIPT);
	/* -F comm,pid: a header that ends in a number, then a frame line */
	assert_int_equal(sniff("workload 29201\n\t  1cc7 sa_leaf_a (/w)\n"), RPT_INPUT_PERFSCRIPT);
	/* a sample without frames, and perf script without -g */
	assert_int_equal(sniff("app 7/7 1.000001: cpu-clock: \n\n"), RPT_INPUT_PERFSCRIPT);
	assert_int_equal(sniff("app 7/7 100.000006: 250000 cpu-clock:  55aa fn+0x1 (/bin/app)\n"),
			 RPT_INPUT_PERFSCRIPT);
	assert_int_equal(sniff("hello world\n"), RPT_INPUT_UNKNOWN);
	assert_string_equal(rpt_input__kind_name(RPT_INPUT_PERFSCRIPT), "perf script text");
}

/* 200 KiB of folded text through a pipe on stdin: more than the look-ahead. */
static void test_pipe_loses_nothing(void **state)
{
	struct rpt_profile *p = rpt_profile__new();
	struct rpt_input *in;
	int fds[2], saved = dup(0), status;
	char err[128];
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE *w = fdopen(fds[1], "w");

		close(fds[0]);
		for (int i = 0; i < 10000; i++)
			fprintf(w, "app;main;function_number_%05d %d\n", i, i + 1);
		/* _exit: the parent's profile is not the child's to free (LSan) */
		_exit(fclose(w) ? 1 : 0);
	}
	close(fds[1]);
	dup2(fds[0], 0);
	close(fds[0]);
	in = rpt_input__open("-");
	assert_non_null(in);
	assert_int_equal(rpt_input__kind(in), RPT_INPUT_FOLDED);
	assert_int_equal(rpt_folded__read(p, rpt_input__stream(in), err, sizeof(err)), 0);
	rpt_input__close(in);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	dup2(saved, 0);
	close(saved);
	assert_int_equal(p->nstacks, 10000);
	assert_int_equal(p->total, 10000ull * 10001 / 2);
	rpt_profile__free(p);
}

static void test_open_missing(void **state)
{
	(void)state;
	errno = 0;
	assert_null(rpt_input__open("/nonexistent/x.folded"));
	assert_int_equal(errno, ENOENT);
	rpt_input__close(NULL);
}

SA_TEST_MAIN(test_sniff, test_pipe_loses_nothing, test_open_missing)
