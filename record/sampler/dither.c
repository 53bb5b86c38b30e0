// SPDX-License-Identifier: MIT
/*
 * dither.c - random sampling periods. cpu-clock samples on a fixed grid
 * of hrtimer expiries; this thread gives each CPU's event a new random
 * period at random times, so a loop whose iteration divides the period
 * cannot be sampled at one phase again and again (docs/recording.md
 * "Sampling period").
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <linux/perf_event.h>
#include "dither.h"

/* Rates are drawn uniformly within +-25% of the mean: periods from 0.8 to 1.33 of it. */
#define DITHER_SPREAD 0.25
/*
 * A new period every 12.5 to 37.5 ms, or 10 to 30 mean periods if those are
 * longer. Each window costs a wake-up and an ioctl per CPU, about 30 us of
 * CPU per CPU on a VM (the IPI to the event's CPU); 10 ms windows were a
 * tenth of the recorder's CPU at 999 Hz. Longer windows spread a periodic
 * loop's phases as evenly: the samples of one window are a fresh random
 * step apart, so the shares' spread stays binomial (docs/recording.md).
 */
#define DITHER_WINDOW_NS      25000000.0
#define DITHER_WINDOW_PERIODS 20.0

struct rec_dither {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop, running;
	const int *fds;
	int nfds;
	double rate; /* mean of the drawn rates, Hz */
	double window_ns;
	uint64_t rng;
	uint64_t windows; /* periods drawn by the thread, read atomically */
};

static double uniform01(struct rec_dither *d)
{
	/* xorshift64*: plenty for timing, not for secrets */
	d->rng ^= d->rng >> 12;
	d->rng ^= d->rng << 25;
	d->rng ^= d->rng >> 27;
	return ((d->rng * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}

/* Each event gets its own period; 0 or the -errno of the first refusal. */
static int set_periods(struct rec_dither *d)
{
	__u64 period;
	int i, err = 0;

	for (i = 0; i < d->nfds; i++) {
		period = 1e9 / (d->rate * (1 - DITHER_SPREAD + 2 * DITHER_SPREAD * uniform01(d)));
		if (ioctl(d->fds[i], PERF_EVENT_IOC_PERIOD, &period) && !err)
			err = -errno;
	}
	return err;
}

static void add_ns(struct timespec *ts, double ns)
{
	uint64_t t = (uint64_t)ts->tv_sec * 1000000000ull + ts->tv_nsec + (uint64_t)ns;

	ts->tv_sec = t / 1000000000ull;
	ts->tv_nsec = t % 1000000000ull;
}

/*
 * The new grid starts at the ioctl, and the part of the old period
 * already elapsed goes unsampled on that CPU. A thread of normal priority
 * runs when the scheduler lets it, at a task switch on its CPU more often
 * than not, so the unsampled stretch fell more on some tasks than others
 * (a busy workload got 3% too few samples at 999 Hz). At real-time
 * priority it runs at its random time, whatever runs then; it runs for
 * tens of microseconds per window. Without the privilege it stays normal.
 */
static void *dither_main(void *arg)
{
	struct sched_param sp = {.sched_priority = 1};
	struct rec_dither *d = arg;
	struct timespec next, now;

	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&d->lock);
	while (!d->stop) {
		/* absolute deadlines: a late wake-up shortens the next window */
		add_ns(&next, d->window_ns * (0.5 + uniform01(d)));
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > next.tv_sec + 1)
			next = now; /* stopped for a while (SIGSTOP, suspend) */
		while (!d->stop && pthread_cond_timedwait(&d->cond, &d->lock, &next) != ETIMEDOUT)
			;
		if (d->stop)
			break;
		pthread_mutex_unlock(&d->lock);
		/* refused only for a bad period or fd, which the first call ruled out */
		set_periods(d);
		__atomic_add_fetch(&d->windows, 1, __ATOMIC_RELAXED);
		pthread_mutex_lock(&d->lock);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

static int init_sync(struct rec_dither *d)
{
	pthread_condattr_t ca;
	int e;

	e = pthread_condattr_init(&ca);
	if (e)
		return -e;
	e = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!e)
		e = pthread_cond_init(&d->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (e)
		return -e;
	e = pthread_mutex_init(&d->lock, NULL);
	if (e) {
		pthread_cond_destroy(&d->cond);
		return -e;
	}
	return 0;
}

/*
 * PERF_EVENT_IOC_PERIOD restarts the event's hrtimer with the full new
 * period, dropping the part of the old one already elapsed: half a
 * period on average (the window's end falls anywhere in it). The drawn
 * rates are raised by that, half a sample per window, so that the
 * samples per CPU-second average @freq.
 */
struct rec_dither *rec_dither__start(const int *fds, int nfds, unsigned int freq)
{
	struct rec_dither *d;
	int e;

	if (!freq || nfds < 0) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->fds = fds;
	d->nfds = nfds;
	d->window_ns = DITHER_WINDOW_PERIODS * 1e9 / freq;
	if (d->window_ns < DITHER_WINDOW_NS)
		d->window_ns = DITHER_WINDOW_NS;
	d->rate = freq + 1e9 / (2 * d->window_ns);
	if (getrandom(&d->rng, sizeof(d->rng), GRND_NONBLOCK) != sizeof(d->rng))
		d->rng = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	d->rng |= 1;
	e = init_sync(d);
	if (e) {
		free(d);
		errno = -e;
		return NULL;
	}
	e = set_periods(d);
	if (e)
		goto fail;
	e = -pthread_create(&d->thread, NULL, dither_main, d);
	if (e)
		goto fail;
	d->running = true;
	return d;
fail:
	rec_dither__stop(d);
	errno = -e;
	return NULL;
}

uint64_t rec_dither__windows(const struct rec_dither *d)
{
	return __atomic_load_n(&d->windows, __ATOMIC_RELAXED);
}

void rec_dither__stop(struct rec_dither *d)
{
	if (!d)
		return;
	if (d->running) {
		pthread_mutex_lock(&d->lock);
		d->stop = true;
		pthread_cond_signal(&d->cond);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->thread, NULL);
	}
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
