/* SPDX-License-Identifier: MIT */
/*
 * Process helpers for the samples that re-execute themselves with a role
 * (forker, shortlived): the path of this binary and fork + exec + wait.
 */
#ifndef SA_PROC_H
#define SA_PROC_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The real path of this binary. Executing /proc/self/exe itself would name the
 * child "exe" (the comm comes from the executed file's name).
 */
static inline const char *sa_self_path(void)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n <= 0) {
		perror("readlink /proc/self/exe");
		exit(1);
	}
	path[n] = '\0';
	return path;
}

/* Forks and executes @argv (argv[0] is the file); returns the child's pid. */
static inline pid_t sa_spawn(char *const argv[])
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		execv(argv[0], argv);
		perror("execv");
		_exit(127);
	}
	return pid;
}

/* Waits for @pid; returns its exit status, or 128 + signal. */
static inline int sa_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

#endif /* SA_PROC_H */
