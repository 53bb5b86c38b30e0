// SPDX-License-Identifier: MIT
/*
 * dwprefetch.c - a queue of debug files and one worker thread that builds
 * their DWARF (dwload.c), the most mapped (weighed by size) first. The main
 * thread, when it needs a file being built, fills the sections still
 * unclaimed but .debug_info itself, then takes the DWARF while the worker
 * still inflates .debug_info; later the worker also releases what the main
 * thread no longer needs (rpt_dwprefetch__drop()).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "dwprefetch.h"
#include "grow.h"
#include "strpool.h"

enum pf_state { PF_PENDING, PF_RUNNING, PF_DONE, PF_TAKEN };

struct pf_job {
	char *path;
	char *hex;
	unsigned long wants; /* atomic */
	uint64_t kib;	     /* the file's size: the work it takes */
	enum pf_state state;
	struct rpt_dwload_build *build; /* while RUNNING and fillable */
	int filled;			/* its sections filled so far */
	int helpers;			/* threads filling it besides the worker */
	struct rpt_dwload *dwl;		/* once DONE */
};

/* An object to release on the worker thread (rpt_dwprefetch__drop()). */
struct pf_drop {
	void (*fn)(void *);
	void *arg;
};

struct rpt_dwprefetch {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* a job queued, a section filled, a job done, or stop */
	pthread_t thread;
	bool started, failed, lines;
	bool held; /* start no job until the next one is queued */
	bool stop; /* atomic: read while inflating */
	struct pf_job *jobs;
	size_t n, cap;
	struct pf_drop *drops;
	size_t ndrops, drops_cap;
};

struct rpt_dwprefetch *rpt_dwprefetch__new(bool lines)
{
	struct rpt_dwprefetch *p;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return NULL; /* the worker would only take turns with the reader */
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->lines = lines;
	return p;
}

static bool stopping(struct rpt_dwprefetch *p)
{
	return __atomic_load_n(&p->stop, __ATOMIC_RELAXED);
}

static uint64_t worth(const struct pf_job *j)
{
	return __atomic_load_n(&j->wants, __ATOMIC_RELAXED) * j->kib;
}

/*
 * The pending job worth most, first queued on ties: uses times size, so
 * that the longest build (libc's), which the others can overlap, starts
 * first even when a process caught early mapped only ld.so. Called locked.
 */
static struct pf_job *pick(struct rpt_dwprefetch *p)
{
	struct pf_job *best = NULL;

	for (size_t i = 0; i < p->n; i++)
		if (p->jobs[i].state == PF_PENDING && !p->held &&
		    (!best || worth(&p->jobs[i]) > worth(best)))
			best = &p->jobs[i];
	return best;
}

/* Called locked; p->jobs may move while unlocked, so jobs are found by path. */
static struct pf_job *job_of(struct rpt_dwprefetch *p, const char *path)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->jobs[i].path == path || !strcmp(p->jobs[i].path, path))
			return &p->jobs[i];
	return NULL;
}

/*
 * Build @path's DWARF, unlocked, sharing its sections with a helper.
 * @return NULL when it failed or the helper took the DWARF early.
 */
static struct rpt_dwload *build(struct rpt_dwprefetch *p, const char *path, const char *hex)
{
	struct rpt_dwload_build *b = rpt_dwload__begin(path, p->lines, hex, &p->stop);
	int n;

	if (!b)
		return NULL;
	pthread_mutex_lock(&p->mu);
	job_of(p, path)->build = b;
	pthread_cond_broadcast(&p->cv); /* a taker waiting for b helps now */
	pthread_mutex_unlock(&p->mu);
	n = rpt_dwload__fill(b, true);
	pthread_mutex_lock(&p->mu);
	job_of(p, path)->filled += n;
	pthread_cond_broadcast(&p->cv);
	/* until the helper's last section is in and it no longer holds b */
	while (job_of(p, path)->filled < rpt_dwload__sections(b) || job_of(p, path)->helpers)
		pthread_cond_wait(&p->cv, &p->mu);
	job_of(p, path)->build = NULL;
	pthread_mutex_unlock(&p->mu);
	return rpt_dwload__end(b);
}

/* Run the drops queued so far, unlocked. Called locked. */
static void run_drops(struct rpt_dwprefetch *p)
{
	struct pf_drop *v = p->drops;
	size_t n = p->ndrops;

	p->drops = NULL;
	p->ndrops = p->drops_cap = 0;
	pthread_mutex_unlock(&p->mu);
	for (size_t i = 0; i < n; i++)
		v[i].fn(v[i].arg);
	free(v);
	pthread_mutex_lock(&p->mu);
}

static void *worker(void *arg)
{
	struct rpt_dwprefetch *p = arg;

	pthread_mutex_lock(&p->mu);
	while (!stopping(p)) {
		struct pf_job *j = pick(p);
		char *path, *hex;
		struct rpt_dwload *d;

		if (p->ndrops) {
			run_drops(p);
			continue;
		}
		if (!j) {
			pthread_cond_wait(&p->cv, &p->mu);
			continue;
		}
		j->state = PF_RUNNING;
		path = j->path; /* the strings do not move */
		hex = j->hex;
		pthread_mutex_unlock(&p->mu);
		d = build(p, path, hex);
		pthread_mutex_lock(&p->mu);
		j = job_of(p, path);
		if (j->state == PF_RUNNING) {
			j->dwl = d;
			j->state = PF_DONE;
		} else { /* taken early, or the early take failed */
			rpt_dwload__free(d);
		}
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Start the worker with every signal blocked: they stay the main thread's. */
static void start(struct rpt_dwprefetch *p)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	p->started = !pthread_create(&p->thread, NULL, worker, p);
	p->failed = !p->started;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int rpt_dwprefetch__want(struct rpt_dwprefetch *p, const char *path, const char *hex)
{
	struct pf_job *j;
	struct stat st;
	int ret = -EAGAIN;

	pthread_mutex_lock(&p->mu);
	j = job_of(p, path);
	if (j) {
		ret = j - p->jobs;
		goto out;
	}
	if (p->failed)
		goto out;
	ret = -ENOMEM;
	if (SAC_GROW(p->jobs, p->cap, p->n + 1, 8))
		goto out;
	j = &p->jobs[p->n];
	*j = (struct pf_job){.path = strdup(path), .hex = strdup(hex), .wants = 1, .kib = 1};
	if (!stat(path, &st))
		j->kib += st.st_size >> 10;
	if (!j->path || !j->hex) {
		free(j->path);
		free(j->hex);
		ret = -ENOMEM;
		goto out;
	}
	ret = p->n++;
	p->held = false;
	if (!p->started)
		start(p);
	pthread_cond_broadcast(&p->cv);
out:
	pthread_mutex_unlock(&p->mu);
	return ret;
}

bool rpt_dwprefetch__busy(struct rpt_dwprefetch *p)
{
	bool busy = false;

	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < p->n && !busy; i++)
		busy = p->jobs[i].state == PF_PENDING || p->jobs[i].state == PF_RUNNING;
	pthread_mutex_unlock(&p->mu);
	return busy;
}

void rpt_dwprefetch__hold(struct rpt_dwprefetch *p)
{
	pthread_mutex_lock(&p->mu);
	p->held = true;
	pthread_mutex_unlock(&p->mu);
}

int rpt_dwprefetch__drop(struct rpt_dwprefetch *p, void (*fn)(void *), void *arg)
{
	int ret = -EAGAIN;

	pthread_mutex_lock(&p->mu);
	if (p->started && !SAC_GROW(p->drops, p->drops_cap, p->ndrops + 1, 16)) {
		p->drops[p->ndrops++] = (struct pf_drop){fn, arg};
		pthread_cond_broadcast(&p->cv);
		ret = 0;
	}
	pthread_mutex_unlock(&p->mu);
	return ret;
}

void rpt_dwprefetch__bump(struct rpt_dwprefetch *p, int job)
{
	/* only the caller's thread moves p->jobs */
	if (job >= 0 && (size_t)job < p->n)
		__atomic_fetch_add(&p->jobs[job].wants, 1, __ATOMIC_RELAXED);
}

/* Fill what is unclaimed of job @path's build @b, unlocked. Called locked. */
static void help(struct rpt_dwprefetch *p, const char *path, struct rpt_dwload_build *b)
{
	struct pf_job *j = job_of(p, path);
	int n;

	j->helpers++; /* the worker ends b only once we let go of it */
	pthread_mutex_unlock(&p->mu);
	n = rpt_dwload__fill(b, false);
	pthread_mutex_lock(&p->mu);
	j = job_of(p, path);
	j->filled += n;
	j->helpers--;
	pthread_cond_broadcast(&p->cv);
}

/* The DWARF of job @path's build @b while its .debug_info may still come. Called locked. */
static struct rpt_dwload *take_early(struct rpt_dwprefetch *p, const char *path,
				     struct rpt_dwload_build *b)
{
	struct pf_job *j = job_of(p, path);
	struct rpt_dwload *d;

	j->helpers++;
	j->state = PF_TAKEN; /* the worker leaves the DWARF to us */
	pthread_mutex_unlock(&p->mu);
	d = rpt_dwload__dwarf(b);
	pthread_mutex_lock(&p->mu);
	j = job_of(p, path);
	j->helpers--;
	pthread_cond_broadcast(&p->cv);
	return d;
}

struct rpt_dwload *rpt_dwprefetch__take(struct rpt_dwprefetch *p, const char *path)
{
	struct rpt_dwload *d = NULL;
	struct pf_job *j;
	bool helped = false;

	pthread_mutex_lock(&p->mu);
	j = job_of(p, path);
	while (j && j->state == PF_RUNNING) {
		struct rpt_dwload_build *b = j->build;

		if (b && !helped) {
			helped = true;
			help(p, path, b);
		} else if (b && rpt_dwload__ready(b)) {
			d = take_early(p, path, b);
			pthread_mutex_unlock(&p->mu);
			return d;
		} else {
			pthread_cond_wait(&p->cv, &p->mu);
		}
		j = job_of(p, path);
	}
	if (j) {
		d = j->dwl;
		j->dwl = NULL;
		j->state = PF_TAKEN;
	}
	pthread_mutex_unlock(&p->mu);
	return d;
}

void rpt_dwprefetch__free(struct rpt_dwprefetch *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	__atomic_store_n(&p->stop, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->started)
		pthread_join(p->thread, NULL);
	pthread_mutex_lock(&p->mu);
	run_drops(p); /* what the worker did not get to */
	pthread_mutex_unlock(&p->mu);
	for (size_t i = 0; i < p->n; i++) {
		rpt_dwload__free(p->jobs[i].dwl);
		free(p->jobs[i].path);
		free(p->jobs[i].hex);
	}
	free(p->jobs);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
