// SPDX-License-Identifier: MIT
/*
 * starve.c - the drain's thread runs at the nice value it was given (the
 * systemd unit asks for 10) until it waits for a CPU more than a quarter
 * of the time: then it is raised to -20, and stays there. A user's
 * thousands of busy threads at nice 0 otherwise leave it a thousandth of
 * a CPU, and --duration, SIGTERM and every interval wait on that
 * (docs/reliability.md, "Thread storms").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "starve.h"

/* A window of this long, over which the wait is measured */
#define REC_STARVE_WINDOW_NS (250 * 1000000ull)
/*
 * The weight of nice -20 is 88,761 against 1,024 at nice 0: 10,000 busy
 * threads of one user leave it about 17 ms of each CPU second, against
 * 0.2 ms at nice 0; what a steady interval's drain needs fits in that.
 */
#define REC_STARVE_NICE (-20)
/*
 * At the start, before any wait can be measured: more runnable tasks than
 * this per CPU raise it at once (loading the BPF program and reading the
 * running processes' mappings took 70 s at nice 0 beside 400 busy threads).
 */
#define REC_STARVE_RUNNABLE_PER_CPU 8

struct rec_starve {
	int fd;
	uint64_t t0, wait0; /* the window's start: clock and run-queue wait */
	struct rec_starve_stats st;
};

/* The run-queue wait of the thread so far (ns), or 0 when unreadable. */
static uint64_t waited(int fd)
{
	char buf[128];
	unsigned long long run, wait;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	return sscanf(buf, "%llu %llu", &run, &wait) == 2 ? wait : 0;
}

/* Runnable tasks on the host now (/proc/stat procs_running), 0 if unknown. */
static long runnable(void)
{
	char line[256];
	long n = 0;
	FILE *f = fopen("/proc/stat", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "procs_running %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

static void raise_prio(struct rec_starve *s);

struct rec_starve *rec_starve__new(void)
{
	struct rec_starve *s = calloc(1, sizeof(*s));
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (!s)
		return NULL;
	s->st.runnable = runnable();
	if (ncpu > 0 && s->st.runnable > REC_STARVE_RUNNABLE_PER_CPU * ncpu)
		raise_prio(s);
	s->st.window_ns = REC_STARVE_WINDOW_NS;
	s->st.nice = REC_STARVE_NICE;
	s->fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	s->wait0 = s->fd >= 0 ? waited(s->fd) : 0;
	return s;
}

static void raise_prio(struct rec_starve *s)
{
	/* PRIO_PROCESS with the tid: this thread only (Linux nice is per thread) */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), REC_STARVE_NICE))
		s->st.raise_err = -errno;
	else
		s->st.raised = 1;
}

void rec_starve__check(struct rec_starve *s, uint64_t now_ns)
{
	uint64_t w, dw;

	if (!s || s->fd < 0 || s->st.raised || s->st.raise_err)
		return;
	if (!s->t0)
		s->t0 = now_ns;
	if (now_ns - s->t0 < REC_STARVE_WINDOW_NS)
		return;
	w = waited(s->fd);
	dw = w > s->wait0 ? w - s->wait0 : 0;
	if (dw > s->st.waited_ns) {
		s->st.waited_ns = dw;
		s->st.window_ns = now_ns - s->t0;
	}
	if (dw * 4 > now_ns - s->t0)
		raise_prio(s);
	s->t0 = now_ns;
	s->wait0 = w;
}

const struct rec_starve_stats *rec_starve__stats(const struct rec_starve *s)
{
	return &s->st;
}

void rec_starve__free(struct rec_starve *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}
