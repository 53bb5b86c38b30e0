/* SPDX-License-Identifier: MIT */
/*
 * loop.h - one recording from start to END (loop.c). Used by main.c.
 */
#ifndef REC_LOOP_H
#define REC_LOOP_H

#include <sys/types.h>

struct rec_opts;

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
