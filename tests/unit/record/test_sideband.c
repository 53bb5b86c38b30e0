// SPDX-License-Identifier: MIT
/*
 * test_sideband.c - the side-band rings on the real kernel: a child that
 * forks and execs /bin/true gives PROC (fork, gen 0), PROC (exec, gen 1),
 * MAP records of gen 1 with build ids, and EXIT, in that order. Needs
 * perf_event_open for all processes (root): skipped otherwise.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "sideband.h"
#include "rec_test_sink.h"

static void test_fork_exec_exit(void **state)
{
	struct test_sink ts = { 0 };
	struct rec_elfsyms *es = rec_elfsyms__new(0);
	struct rec_maptab *mt = rec_maptab__new(es);
	struct rec_sideband_opts o = { .sz = sizeof(o), .sink = TEST_SINK(&ts), .maptab = mt,
				       .ring_pages = 8 };
	struct rec_sideband_stats st;
	struct rec_sideband *sb;
	int fork_at = -1, exec_at = -1, map_at = -1, exit_at = -1, i, n, wst;
	pid_t pid;

	(void)state;
	sb = rec_sideband__open(&o);
	if (!sb) {
		rec_maptab__free(mt);
		rec_elfsyms__free(es);
		SA_SKIP("no perf_event_open for every process: not root");
	}
	/* Many records with a ring of 8 pages: some wrap past the end. */
	for (n = 0; n < 20; n++) {
		pid = fork();
		if (!pid) {
			execl("/bin/true", "true", NULL);
			_exit(127);
		}
		waitpid(pid, &wst, 0);
		assert_true(rec_sideband__poll(sb, false) >= 0);
	}
	usleep(10000);
	assert_true(rec_sideband__poll(sb, true) >= 0);
	for (i = 0; i < (int)ts.n; i++) {
		const struct saf_record *r = &ts.recs[i].rec;

		if (r->kind == SAF_REC_PROC && r->proc.pid == (uint32_t)pid && r->proc.gen == 0)
			fork_at = i;
		if (r->kind == SAF_REC_PROC && r->proc.pid == (uint32_t)pid && r->proc.gen == 1)
			exec_at = i;
		if (r->kind == SAF_REC_MAP && r->map.pid == (uint32_t)pid && r->map.gen == 1 &&
		    strstr(ts.recs[i].s1, "/true") && map_at < 0) {
			map_at = i;
			assert_int_equal(r->map.build_id.len, 20);
		}
		if (r->kind == SAF_REC_EXIT && r->exit.pid == (uint32_t)pid)
			exit_at = i;
	}
	assert_true(fork_at >= 0);
	assert_true(exec_at > fork_at);
	assert_true(map_at > exec_at);
	assert_true(exit_at > map_at);
	assert_string_equal(ts.recs[exec_at].s1, "true");
	assert_int_equal(rec_sideband__gen(sb, pid), 0); /* forgotten at exit */
	rec_sideband__stats(sb, &st);
	assert_true(st.exec >= 20);
	assert_int_equal(st.lost, 0);
	test_sink_reset(&ts);
	rec_sideband__free(sb);
	rec_maptab__free(mt);
	rec_elfsyms__free(es);
}

SA_TEST_MAIN(test_fork_exec_exit)
