/* SPDX-License-Identifier: MIT */
/*
 * target.h - what to record (target.c): -p/-t and -C lists, the cgroup of
 * -G, whether the targets still run, and the `-- CMD` child. Used by
 * main.c, loop.c and bpf_session.c.
 */
#ifndef REC_TARGET_H
#define REC_TARGET_H

#include <stddef.h>
#include <sys/types.h>

struct rec_opts;

/**
 * rec_parse_id_list() - parse "PID[,PID...]" (each > 0).
 * @out: gets a malloc()ed array the caller frees; @n its length.
 * @return 0, -EINVAL or -ENOMEM.
 */
int rec_parse_id_list(const char *s, pid_t **out, int *n);

/** rec_parse_cpu_list() - parse "0-3,6" as rec_parse_id_list() does. */
int rec_parse_cpu_list(const char *s, int **out, int *n);

/**
 * rec_cgroup_open() - open the cgroup v2 directory @path: absolute, or
 * relative to the cgroup2 mount (also tried for an absolute path that is
 * not itself on cgroup2, e.g. "/system.slice").
 * @resolved: if not NULL, gets the directory used.
 * @return an O_DIRECTORY fd the caller closes, or a negative errno.
 */
int rec_cgroup_open(const char *path, char *resolved, size_t sz);

typedef int (*rec_cgroup_pid_fn)(void *ctx, pid_t pid);

/**
 * rec_cgroup_pids() - @fn(@ctx, pid) for each process in the cgroup v2
 * @path (as rec_cgroup_open() takes it) and in its descendants 16 levels
 * deep, at most @max of them, symbolic links not followed.
 * @return 0, the first non-zero return of @fn, or a negative errno.
 */
int rec_cgroup_pids(const char *path, int max, rec_cgroup_pid_fn fn, void *ctx);

/**
 * rec_targets_alive() - how many -p/-t targets still run (zombies do not).
 * @return the count; for other modes 1.
 */
int rec_targets_alive(const struct rec_opts *o);

/**
 * rec_child__spawn() - fork a child that will exec @argv once started.
 * @go_fd: gets the write end the start byte goes to; closing it unstarted
 *         makes the child exit 125.
 * @status_fd: gets the read end where a failed exec reports its errno.
 * @return the child's pid, or a negative errno. The caller owns both fds.
 */
pid_t rec_child__spawn(char **argv, int *go_fd, int *status_fd);

/**
 * rec_child__start() - let the child exec, and wait for the outcome.
 * Consumes (closes) both fds.
 * @return 0 when exec succeeded, else the errno of the failed exec
 * (positive: the child then exits 126 or 127).
 */
int rec_child__start(int go_fd, int status_fd);

/** rec_exit_status() - shell-style exit code of a waitpid() status. */
int rec_exit_status(int wstatus);

#endif /* REC_TARGET_H */
