// SPDX-License-Identifier: MIT
/*
 * target.c - what to record: PID/TID and CPU lists, the cgroup v2 directory
 * of -G (found through /proc/mounts, as hosts may be hybrid or pure v2),
 * liveness of -p/-t targets, and the `-- CMD` child, which waits on a pipe
 * until the BPF programs are attached and then execs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include "record.h"
#include "target.h"

#define CGROUP2_MAGIC 0x63677270

static int push(int **v, int *n, int x)
{
	int *p = realloc(*v, (*n + 1) * sizeof(**v));

	if (!p)
		return -ENOMEM;
	p[(*n)++] = x;
	*v = p;
	return 0;
}

static int parse_list(const char *s, int **out, int *n, bool ranges, long min)
{
	long a, b;
	char *end;
	int err;

	*out = NULL;
	*n = 0;
	do {
		errno = 0;
		a = strtol(s, &end, 10);
		b = a;
		if (ranges && end != s && *end == '-')
			b = strtol(end + 1, &end, 10);
		if (errno || end == s || a < min || b < a || b > INT_MAX || (*end && *end != ','))
			goto bad;
		for (; a <= b; a++)
			if ((err = push(out, n, (int)a)))
				return err;
		s = end + 1;
	} while (*end == ',');
	return 0;
bad:
	free(*out);
	*out = NULL;
	return -EINVAL;
}

int rec_parse_id_list(const char *s, pid_t **out, int *n)
{
	_Static_assert(sizeof(pid_t) == sizeof(int), "pid_t is int");
	return parse_list(s, (int **)out, n, false, 1);
}

int rec_parse_cpu_list(const char *s, int **out, int *n)
{
	return parse_list(s, out, n, true, 0);
}

static int cgroup2_mount(char *out, size_t sz)
{
	char dev[256], dir[PATH_MAX], type[64];
	FILE *f = fopen("/proc/mounts", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3) {
		if (!strcmp(type, "cgroup2")) {
			snprintf(out, sz, "%s", dir);
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

static int open_cgroup_dir(const char *path)
{
	struct statfs st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstatfs(fd, &st) || st.f_type != CGROUP2_MAGIC) {
		close(fd);
		return -ENOTDIR;
	}
	return fd;
}

int rec_cgroup_open(const char *path, char *resolved, size_t sz)
{
	char mnt[PATH_MAX], full[2 * PATH_MAX];
	int fd = -ENOENT, err;

	if (path[0] == '/') {
		fd = open_cgroup_dir(path);
		snprintf(full, sizeof(full), "%s", path);
	}
	if (fd < 0) {
		err = cgroup2_mount(mnt, sizeof(mnt));
		if (err)
			return err == -ENOENT ? -ENOTSUP : err;
		snprintf(full, sizeof(full), "%s/%s", mnt, path + (path[0] == '/'));
		fd = open_cgroup_dir(full);
	}
	if (fd >= 0 && resolved)
		snprintf(resolved, sz, "%s", full);
	return fd;
}

/* cgroup.procs of @dfd, then of its children to @depth more levels */
static int cgroup_walk(int dfd, int depth, rec_cgroup_pid_fn fn, void *ctx, int *left)
{
	int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW), err = 0;
	struct dirent *de;
	FILE *f;
	DIR *d;
	long v;

	if (fd >= 0 && (f = fdopen(fd, "re"))) {
		while (!err && *left > 0 && fscanf(f, "%ld", &v) == 1) {
			if (v <= 0 || v > INT32_MAX)
				continue;
			--*left;
			err = fn(ctx, (pid_t)v);
		}
		fclose(f);
	} else if (fd >= 0) {
		close(fd);
	}
	if (err || depth <= 0 || *left <= 0)
		return err;
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (!err && *left > 0 && (de = readdir(d))) {
		int sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		err = cgroup_walk(sub, depth - 1, fn, ctx, left);
		close(sub);
	}
	closedir(d);
	return err;
}

int rec_cgroup_pids(const char *path, int max, rec_cgroup_pid_fn fn, void *ctx)
{
	int fd = rec_cgroup_open(path, NULL, 0), err;

	if (fd < 0)
		return fd;
	err = cgroup_walk(fd, 16, fn, ctx, &max);
	close(fd);
	return err;
}

static bool id_alive(pid_t id)
{
	char path[64], buf[512], *p;
	FILE *f;
	bool alive = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", id);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		alive = p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	fclose(f);
	return alive;
}

int rec_targets_alive(const struct rec_opts *o)
{
	int i, n = 0;

	if (o->filter != SA_FILTER_TGID && o->filter != SA_FILTER_TID)
		return 1;
	for (i = 0; i < o->nids; i++)
		n += id_alive(o->ids[i]);
	return n;
}

static void child_main(char **argv, int go, int status)
{
	struct sigaction sa = {.sa_handler = SIG_DFL}, old;
	char c;
	int e;

	/* sa-record's handlers (rec_signals__install()) are not CMD's; nohup's ignore is */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	if (!sigaction(SIGHUP, NULL, &old) && old.sa_handler != SIG_IGN)
		sigaction(SIGHUP, &sa, NULL);
	if (read(go, &c, 1) != 1)
		_exit(REC_EXIT_CMD_FAIL); /* sa-record failed before attaching */
	close(go);
	execvp(argv[0], argv);
	e = errno;
	if (write(status, &e, sizeof(e)) < 0)
		e = errno;
	_exit(e == ENOENT ? REC_EXIT_CMD_NOTFOUND : REC_EXIT_CMD_NOEXEC);
}

pid_t rec_child__spawn(char **argv, int *go_fd, int *status_fd)
{
	int go[2] = {-1, -1}, st[2] = {-1, -1};
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(st, O_CLOEXEC))
		goto fail;
	pid = fork();
	if (pid < 0)
		goto fail;
	if (pid == 0) {
		close(go[1]);
		close(st[0]);
		child_main(argv, go[0], st[1]);
	}
	close(go[0]);
	close(st[1]);
	*go_fd = go[1];
	*status_fd = st[0];
	return pid;
fail:
	pid = -errno;
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (st[i] >= 0)
			close(st[i]);
	}
	return pid;
}

int rec_child__start(int go_fd, int status_fd)
{
	ssize_t n;
	int e = 0;

	if (write(go_fd, "g", 1) != 1)
		e = errno;
	close(go_fd);
	do
		n = read(status_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(status_fd);
	return n == sizeof(e) ? e : 0;
}

int rec_exit_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return REC_EXIT_CMD_FAIL;
}
