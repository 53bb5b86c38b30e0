// SPDX-License-Identifier: MIT
/*
 * uwwork.c - one worker thread that turns files' CFI into the in-kernel
 * unwinder's rows, so that the recorder's main thread keeps draining the
 * ring buffer meanwhile (a compile loop's new binaries took 6-8 s of a 30 s
 * recording there). Jobs go in and come out through two lists under one
 * mutex; the object is freed by whichever of the main thread and the
 * worker lets go of it last.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "uwwork.h"

struct rec_uwwork {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t work, ended; /* ended: on CLOCK_MONOTONIC */
	struct rec_uwjob *todo, **todo_tail;
	struct rec_uwjob *done, **done_tail;
	uint64_t queued;
	uint64_t max_ns, delay_ns;
	int nice;      /* the worker's */
	int stop;      /* read without the lock by rec_uw_build() (__atomic) */
	bool exited;   /* the worker returned */
	bool orphaned; /* the main thread let go first: the worker frees it */
};

void rec_uwjob__free(struct rec_uwjob *j)
{
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);
	free(j->f.rows);
	free(j);
}

static void free_all(struct rec_uwwork *w)
{
	struct rec_uwjob *j;

	while ((j = w->todo)) {
		w->todo = j->next;
		rec_uwjob__free(j);
	}
	while ((j = w->done)) {
		w->done = j->next;
		rec_uwjob__free(j);
	}
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->ended);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* One build, with the lock not held. */
static void run(struct rec_uwwork *w, struct rec_uwjob *j)
{
	uint64_t t0;

	if (w->delay_ns) {
		struct timespec ts = {(time_t)(w->delay_ns / 1000000000ull),
				      (long)(w->delay_ns % 1000000000ull)};

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	t0 = sac_now_ns(CLOCK_THREAD_CPUTIME_ID);
	/* a short process's file, queued behind others while it ran and ended */
	if (__atomic_load_n(&j->skip, __ATOMIC_RELAXED))
		j->err = -ECANCELED;
	else
		j->err = rec_uw_build(j->fd, w->max_ns, &w->stop, &j->f);
	j->cpu_ns = sac_now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	close(j->fd);
	j->fd = -1;
}

static void *worker(void *arg)
{
	struct rec_uwwork *w = arg;
	struct rec_uwjob *j;
	bool orphaned;

	/* normal priority, whatever the main thread was raised to (drain/starve.c) */
	setpriority(PRIO_PROCESS, (id_t)gettid(), w->nice);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED) && !w->todo)
			pthread_cond_wait(&w->work, &w->lock);
		if (__atomic_load_n(&w->stop, __ATOMIC_RELAXED))
			break;
		j = w->todo;
		w->todo = j->next;
		if (!w->todo)
			w->todo_tail = &w->todo;
		pthread_mutex_unlock(&w->lock);
		run(w, j);
		pthread_mutex_lock(&w->lock);
		j->next = NULL;
		*w->done_tail = j;
		w->done_tail = &j->next;
		if (!w->todo) {
			/*
			 * Nothing left to build: hand back the pages a build's
			 * scratch took (16 bytes per row before merging)
			 * rather than keep them for the next file, which may
			 * come minutes later or never.
			 */
			pthread_mutex_unlock(&w->lock);
			malloc_trim(0);
			pthread_mutex_lock(&w->lock);
		}
	}
	w->exited = true;
	orphaned = w->orphaned;
	pthread_cond_signal(&w->ended);
	pthread_mutex_unlock(&w->lock);
	if (orphaned)
		free_all(w);
	return NULL;
}

/* The worker's nice value: the process's, but never below 0 (raised). */
static int worker_nice(void)
{
	int n;

	errno = 0;
	n = getpriority(PRIO_PROCESS, 0);
	return errno || n < 0 ? 0 : n;
}

static int start(struct rec_uwwork *w)
{
	struct sched_param sp = {.sched_priority = 0};
	pthread_attr_t a;
	sigset_t all, old;
	int err;

	if (pthread_attr_init(&a))
		return -ENOMEM;
	pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&a, SCHED_OTHER);
	pthread_attr_setschedparam(&a, &sp);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* stop signals go to the main thread */
	err = -pthread_create(&w->th, &a, worker, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	return err;
}

struct rec_uwwork *rec_uwwork__new(uint64_t max_ns)
{
	struct rec_uwwork *w = calloc(1, sizeof(*w));
	const char *delay = getenv("SA_RECORD_TEST_UW_DELAY_MS");
	pthread_condattr_t ca;
	int err;

	if (!w)
		return NULL;
	w->todo_tail = &w->todo;
	w->done_tail = &w->done;
	w->max_ns = max_ns;
	w->nice = worker_nice();
	if (delay)
		w->delay_ns = strtoull(delay, NULL, 10) * 1000000ull;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->ended, &ca);
	pthread_condattr_destroy(&ca);
	err = start(w);
	if (err) {
		w->exited = true;
		free_all(w);
		errno = -err;
		return NULL;
	}
	return w;
}

void rec_uwwork__post(struct rec_uwwork *w, struct rec_uwjob *j)
{
	j->next = NULL;
	j->posted_ns = sac_now_ns(CLOCK_MONOTONIC);
	pthread_mutex_lock(&w->lock);
	*w->todo_tail = j;
	w->todo_tail = &j->next;
	w->queued++;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->lock);
}

struct rec_uwjob *rec_uwwork__done(struct rec_uwwork *w)
{
	struct rec_uwjob *j;

	pthread_mutex_lock(&w->lock);
	j = w->done;
	if (j) {
		w->done = j->next;
		if (!w->done)
			w->done_tail = &w->done;
		j->next = NULL;
		w->queued--;
	}
	pthread_mutex_unlock(&w->lock);
	return j;
}

uint64_t rec_uwwork__queued(struct rec_uwwork *w)
{
	uint64_t n;

	pthread_mutex_lock(&w->lock);
	n = w->queued;
	pthread_mutex_unlock(&w->lock);
	return n;
}

void rec_uwwork__free(struct rec_uwwork *w, uint64_t wait_ns)
{
	uint64_t until = sac_now_ns(CLOCK_MONOTONIC) + wait_ns;
	struct timespec ts = {(time_t)(until / 1000000000ull), (long)(until % 1000000000ull)};
	pthread_t th;
	bool exited;

	if (!w)
		return;
	th = w->th; /* w is the worker's once orphaned and unlocked */
	pthread_mutex_lock(&w->lock);
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
	pthread_cond_signal(&w->work);
	while (!w->exited && pthread_cond_timedwait(&w->ended, &w->lock, &ts) != ETIMEDOUT)
		;
	exited = w->exited;
	w->orphaned = !exited;
	pthread_mutex_unlock(&w->lock);
	if (exited) {
		pthread_join(th, NULL);
		free_all(w);
	} else {
		pthread_detach(th); /* a build stuck in a read: it frees w when it ends */
	}
}
