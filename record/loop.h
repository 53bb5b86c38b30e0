/* SPDX-License-Identifier: MIT */
/*
 * loop.h - one recording from start to END (loop.c). Used by main.c.
 */
#ifndef REC_LOOP_H
#define REC_LOOP_H

#include <sys/types.h>

struct rec_opts;

/**
 * rec_signals__install() - SIGINT, SIGTERM and SIGHUP (an ssh session that
 * drops) end the recording from now on: during start-up nothing is kept,
 * later it ends cleanly, a second one at once (docs/reliability.md,
 * "Signals"). SIGHUP ignored at the exec (nohup) stays ignored. The stop
 * signals and SIGCHLD are unblocked, whatever mask the exec passed on.
 * Called first in main(), before the `-- CMD` child is forked (which
 * puts back the defaults: rec_child__spawn()). Not thread-safe: call it
 * before any thread starts.
 */
void rec_signals__install(void);

/**
 * rec_start__hold() - tests only: when $SA_RECORD_TEST_HOLD is @step
 * (a string literal; docs/sa-record.1, ENVIRONMENT), say
 * "sa-record: test hold: STEP" on stderr and wait there 5 s, once. On the
 * main thread the wait ends at a stop signal this thread takes; on another
 * (the BPF load) it does not, as the verifier does not.
 */
void rec_start__hold(const char *step);

/**
 * rec_run() - record as @o says until the end condition, then write END.
 * @child, @go, @status: the `-- CMD` child from rec_child__spawn() (child
 * 0 when there is none); the fds are consumed.
 * @child_wstatus: gets the child's waitpid() status.
 * @return the process exit code: 0, the child's status with `-- CMD`, or
 * 1 (125 with `-- CMD`) after printing a one-line error.
 */
int rec_run(const struct rec_opts *o, pid_t child, int child_go, int child_status,
	    int *child_wstatus);

#endif /* REC_LOOP_H */
