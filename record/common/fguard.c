// SPDX-License-Identifier: MIT
/*
 * fguard.c - one worker thread runs the recorder's reads of files others
 * control; a caller waits for it at most a deadline. A worker that misses
 * it is left waiting (it owns its job from then on; process exit ends it)
 * and the next job gets a new worker, at most REC_FGUARD_MAX_STUCK of them.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "fguard.h"

#define MAX_BLOCKED 64
#define MAX_LOCAL   256
/* A worker that is runnable at its deadline is starved of CPU, not waiting
 * for a file system: it gets more time, up to this much in all. */
#define HARD_LIMIT_MS 10000u

struct fjob {
	int (*fn)(void *arg);
	void *arg;
	void (*release)(void *arg, int ret);
	uint64_t dev; /* the device the job touches, once known (0: not yet) */
	bool local;   /* ... and it is a local disk or memory file system: a timeout there
		       * was the machine's load, not a server that does not answer */
	int ret;
	bool done, abandoned;
};

static struct {
	pthread_mutex_t lock, calls;
	pthread_cond_t work, done;
	struct fjob *next; /* posted, not taken yet */
	bool on, worker;   /* the guard is on; an idle-or-busy worker that is not stuck exists */
	pid_t tid;	   /* the worker's thread id */
	unsigned int deadline_ms;
	uint64_t blocked[MAX_BLOCKED];
	uint64_t local[MAX_LOCAL]; /* devices of local disk and memory file systems */
	uint32_t nlocal;
	struct rec_fguard_stats st;
} g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.calls = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
};

static __thread struct fjob *cur; /* the job this thread runs (the worker only) */
static __thread bool is_worker;

static bool is_local_locked(uint64_t dev)
{
	uint32_t i;

	for (i = 0; i < g.nlocal; i++)
		if (g.local[i] == dev)
			return true;
	return false;
}

static void add_local_locked(uint64_t dev)
{
	if (!is_local_locked(dev) && g.nlocal < MAX_LOCAL)
		g.local[g.nlocal++] = dev;
}

/* The devices of our own mounts of local file systems, known before any job. */
static void seed_local(void)
{
	static const char *const types[] = {
		"ext2",	     "ext3",	"ext4",	 "xfs",	     "btrfs",	 "tmpfs",   "ramfs",
		"squashfs",  "overlay", "erofs", "f2fs",     "proc",	 "iso9660", "vfat",
		"hugetlbfs", "sysfs",	"zfs",	 "bcachefs", "devtmpfs",
	};
	char line[4096], type[64];
	unsigned int maj, min;
	const char *dash;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	size_t i;

	while (f && fgets(line, sizeof(line), f)) {
		dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2 ||
		    sscanf(dash + 3, "%63s", type) != 1)
			continue;
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (!strcmp(type, types[i]))
				add_local_locked(makedev(maj, min));
	}
	if (f)
		fclose(f);
}

void rec_fguard_enable(unsigned int deadline_ms)
{
	pthread_condattr_t ca;

	if (g.on)
		return;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g.done, &ca);
	pthread_condattr_destroy(&ca);
	g.deadline_ms = deadline_ms ? deadline_ms : REC_FGUARD_DEADLINE_MS;
	seed_local();
	g.on = true;
}

bool rec_fguard_on(void)
{
	return g.on;
}

static bool blocked_locked(uint64_t dev)
{
	uint32_t i;

	for (i = 0; i < g.st.blocked && i < MAX_BLOCKED; i++)
		if (g.blocked[i] == dev)
			return true;
	return false;
}

bool rec_fguard_blocked(uint64_t dev)
{
	bool b;

	if (!g.on)
		return false;
	pthread_mutex_lock(&g.lock);
	b = blocked_locked(dev);
	g.st.skipped += b;
	pthread_mutex_unlock(&g.lock);
	return b;
}

void rec_fguard_local(void)
{
	pthread_mutex_lock(&g.lock);
	if (cur) {
		cur->local = true;
		if (cur->dev)
			add_local_locked(cur->dev);
	}
	pthread_mutex_unlock(&g.lock);
}

bool rec_fguard_is_local(uint64_t dev)
{
	bool l;

	pthread_mutex_lock(&g.lock);
	l = is_local_locked(dev);
	pthread_mutex_unlock(&g.lock);
	return l;
}

int rec_fguard_dev(uint64_t dev)
{
	int err = 0;

	if (!g.on)
		return 0;
	pthread_mutex_lock(&g.lock);
	if (blocked_locked(dev)) {
		g.st.skipped++;
		err = -ETIMEDOUT;
	} else if (cur) {
		cur->dev = dev;
		cur->local = is_local_locked(dev);
	}
	pthread_mutex_unlock(&g.lock);
	return err;
}

void rec_fguard_copied(void)
{
	pthread_mutex_lock(&g.lock);
	g.st.copies++;
	pthread_mutex_unlock(&g.lock);
}

void rec_fguard_stats(struct rec_fguard_stats *st)
{
	pthread_mutex_lock(&g.lock);
	*st = g.st;
	pthread_mutex_unlock(&g.lock);
}

/* Runs jobs until one outlives its caller's deadline; then finishes that one
 * alone (if the file system ever answers) and ends. */
static void *worker(void *unused)
{
	sigset_t all;
	struct fjob *j;
	bool stuck = false;

	(void)unused;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals are the control loop's */
	is_worker = true;
	pthread_mutex_lock(&g.lock);
	g.tid = gettid();
	while (!stuck) {
		while (!g.next)
			pthread_cond_wait(&g.work, &g.lock);
		j = cur = g.next;
		g.next = NULL;
		pthread_cond_broadcast(&g.done); /* taken: its deadline starts */
		pthread_mutex_unlock(&g.lock);
		j->ret = j->fn(j->arg);
		pthread_mutex_lock(&g.lock);
		cur = NULL;
		j->done = true;
		stuck = j->abandoned;
		if (!stuck)
			pthread_cond_broadcast(&g.done);
	}
	g.st.stuck--;
	pthread_mutex_unlock(&g.lock);
	if (j->release)
		j->release(j->arg, j->ret);
	free(j);
	return NULL;
}

static int start_worker(void)
{
	sigset_t all, old;
	pthread_attr_t a;
	pthread_t t;
	int err;

	if (g.worker)
		return 0;
	if (g.st.stuck >= REC_FGUARD_MAX_STUCK)
		return -EDEADLK;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 256u << 10);
	/*
	 * Blocked from its first instruction: until the worker blocked them
	 * itself, the kernel could hand it a stop signal the main thread
	 * blocked for a moment, and the main thread's wait went on.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&t, &a, worker, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	g.worker = !err;
	return err;
}

static void add_ms(struct timespec *t, unsigned int ms)
{
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L)
		t->tv_sec++, t->tv_nsec -= 1000000000L;
}

/* Whether thread @tid is runnable: starved of CPU rather than waiting. */
static bool runnable(pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = (ssize_t)fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'R';
}

/*
 * Called with g.lock held: wait for @j until the deadline, counted from when
 * the worker took it, and extended while the worker is runnable (a loaded
 * host) up to HARD_LIMIT_MS.
 */
static int wait_job(struct fjob *j)
{
	struct timespec dl, hard;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &hard);
	add_ms(&hard, HARD_LIMIT_MS);
	while (g.next == j && pthread_cond_timedwait(&g.done, &g.lock, &hard) != ETIMEDOUT)
		;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	add_ms(&dl, g.deadline_ms);
	for (;;) {
		while (!j->done && pthread_cond_timedwait(&g.done, &g.lock, &dl) != ETIMEDOUT)
			;
		if (j->done || g.next == j || !runnable(g.tid) ||
		    (dl.tv_sec > hard.tv_sec ||
		     (dl.tv_sec == hard.tv_sec && dl.tv_nsec >= hard.tv_nsec)))
			break;
		add_ms(&dl, g.deadline_ms);
	}
	if (j->done) {
		ret = j->ret;
		free(j);
		return ret;
	}
	if (g.next == j) { /* never taken: the worker was not scheduled in time */
		g.next = NULL;
		free(j);
		g.st.skipped++;
		return -EDEADLK;
	}
	/* The worker is inside @j: it keeps the job and stays with it. */
	j->abandoned = true;
	g.worker = false;
	g.st.stuck++;
	g.st.timeouts++;
	if (j->local)
		return -EAGAIN; /* a slow local disk: try again later */
	if (j->dev && !blocked_locked(j->dev) && g.st.blocked < MAX_BLOCKED)
		g.blocked[g.st.blocked++] = j->dev;
	return -ETIMEDOUT;
}

int rec_fguard_run(int (*fn)(void *arg), void *arg, void (*release)(void *arg, int ret))
{
	struct fjob *j;
	int ret;

	if (!g.on || is_worker)
		return fn(arg);
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	*j = (struct fjob){.fn = fn, .arg = arg, .release = release};
	pthread_mutex_lock(&g.calls);
	pthread_mutex_lock(&g.lock);
	ret = start_worker();
	if (ret) {
		g.st.skipped++;
		free(j);
	} else {
		g.next = j;
		pthread_cond_signal(&g.work);
		ret = wait_job(j);
	}
	pthread_mutex_unlock(&g.lock);
	pthread_mutex_unlock(&g.calls);
	return ret;
}
