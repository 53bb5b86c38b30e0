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
 * A new period every 100 to 300 mean periods (200 ms at 999 Hz), or 12.5 to
 * 37.5 ms if those are longer. Each restart drops the elapsed part of a
 * period, and on a VM that part falls on the threads that switch often
 * more than on others: with 25 ms windows a ping-pong's threads got 1.2%
 * fewer samples than perf -a's on the same run at 4999 Hz (docs/
 * accuracy.md); the loss is half a sample a window, so windows of 200
 * periods bound it at 0.25%. Each window also costs a wake-up and an ioctl
 * per CPU, about 30 us of CPU on a VM (the IPI to the event's CPU). Longer
 * windows spread a periodic loop's phases as evenly: the samples of one
 * window are a fresh random step apart, so the shares' spread stays
 * binomial (docs/recording.md).
 */
#define DITHER_WINDOW_NS      25000000.0
#define DITHER_WINDOW_PERIODS 200.0

struct rec_dither;

/* One thread: the events it sets, and the CPU it runs on (-1: any). */
struct worker {
	struct rec_dither *d;
	pthread_t thread;
	bool running;
	int cpu;
	int *idx;  /* indexes into d->fds */
	double *u; /* per event in idx: the draw of the pair's first window */
	int nidx;
	bool second; /* the next window is the second of its pair */
	double len;  /* the pair's window length, in mean windows */
	uint64_t rng;
	uint64_t windows; /* periods drawn, read atomically */
};

struct rec_dither {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	const int *fds;
	int nfds;
	double rate; /* mean of the drawn rates, Hz */
	double window_ns;
	struct worker w[2];
	int nw;
};

static double uniform01(struct worker *w)
{
	/* xorshift64*: plenty for timing, not for secrets */
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return ((w->rng * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}

/*
 * Each of @w's events gets its own period; 0 or the -errno of the first
 * refusal. Windows come in pairs of one length, the second at the rate
 * mirrored about the mean (antithetic draws: u, then 1 - u), so a pair
 * samples at the mean rate exactly and a thread's count does not carry
 * the drawn rates' spread (+-14% a window; 1.6% over the 80 windows of 8 s
 * at 999 Hz when drawn independently).
 */
static int set_periods(struct worker *w)
{
	struct rec_dither *d = w->d;
	__u64 period;
	double x;
	int i, err = 0;

	for (i = 0; i < w->nidx; i++) {
		if (!w->second)
			w->u[i] = uniform01(w);
		x = w->second ? 1 - w->u[i] : w->u[i];
		period = 1e9 / (d->rate * (1 - DITHER_SPREAD + 2 * DITHER_SPREAD * x));
		if (ioctl(d->fds[w->idx[i]], PERF_EVENT_IOC_PERIOD, &period) && !err)
			err = -errno;
	}
	w->second = !w->second;
	return err;
}

/* The next window's length in ns: a new draw for the first of a pair. */
static double window_len(struct worker *w)
{
	if (w->second)
		w->len = 0.5 + uniform01(w);
	return w->d->window_ns * w->len;
}

static void add_ns(struct timespec *ts, double ns)
{
	uint64_t t = (uint64_t)ts->tv_sec * 1000000000ull + ts->tv_nsec + (uint64_t)ns;

	ts->tv_sec = t / 1000000000ull;
	ts->tv_nsec = t % 1000000000ull;
}

/*
 * The new grid starts at the ioctl, and the part of the old period
 * already elapsed goes unsampled on that CPU: the restart must fall at a
 * random point of what runs there. A thread of normal priority runs when
 * the scheduler lets it, at a task switch on its own CPU more often than
 * not, so an event it restarted on its own CPU lost its samples at the
 * end of the task before the switch (a busy workload got 3% too few at
 * 999 Hz). So no thread sets the event of the CPU it runs on: each is
 * pinned, and an event on another CPU restarts in the IPI that carries
 * the ioctl there, whatever runs then. That needs no real-time priority
 * (which let one thread stall a CPU at -F 100000, issue 29).
 */
static void *dither_main(void *arg)
{
	struct worker *w = arg;
	struct rec_dither *d = w->d;
	struct timespec next, now;
	cpu_set_t set;

	if (w->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&d->lock);
	while (!d->stop) {
		/* absolute deadlines: a late wake-up shortens the next window */
		add_ns(&next, window_len(w));
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > next.tv_sec + 1)
			next = now; /* stopped for a while (SIGSTOP, suspend) */
		while (!d->stop && pthread_cond_timedwait(&d->cond, &d->lock, &next) != ETIMEDOUT)
			;
		if (d->stop)
			break;
		pthread_mutex_unlock(&d->lock);
		/* refused only for a bad period or fd, which the first call ruled out */
		set_periods(w);
		__atomic_add_fetch(&w->windows, 1, __ATOMIC_RELAXED);
		pthread_mutex_lock(&d->lock);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/*
 * Two CPUs this process may run on, p[0] and p[1], or fewer: worker 0 sets
 * every event not on p[0], worker 1 (on p[1]) the one on p[0]. With one
 * CPU (or CPUs unknown) one unpinned worker sets them all.
 */
static int assign(struct rec_dither *d, const int *cpus)
{
	int p[2] = {-1, -1}, n = 0, c, i, k;
	cpu_set_t set;

	if (cpus && !sched_getaffinity(0, sizeof(set), &set))
		for (c = 0; c < CPU_SETSIZE && n < 2; c++)
			if (CPU_ISSET(c, &set))
				p[n++] = c;
	d->nw = n == 2 ? 2 : 1;
	for (k = 0; k < d->nw; k++) {
		d->w[k].d = d;
		d->w[k].cpu = n == 2 ? p[k] : -1;
		d->w[k].idx = calloc(d->nfds ? d->nfds : 1, sizeof(int));
		d->w[k].u = calloc(d->nfds ? d->nfds : 1, sizeof(double));
		if (!d->w[k].idx || !d->w[k].u)
			return -ENOMEM;
	}
	for (i = 0; i < d->nfds; i++) {
		k = n == 2 && cpus[i] == p[0];
		d->w[k].idx[d->w[k].nidx++] = i;
	}
	return 0;
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

static uint64_t seed(void)
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	return r | 1;
}

static int start_workers(struct rec_dither *d)
{
	int k, e;

	for (k = 0; k < d->nw; k++) {
		d->w[k].rng = seed();
		e = set_periods(&d->w[k]);
		if (e)
			return e;
	}
	for (k = 0; k < d->nw; k++) {
		if (!d->w[k].nidx && d->nfds)
			continue; /* -C without p[0]: nothing for the second worker */
		e = -pthread_create(&d->w[k].thread, NULL, dither_main, &d->w[k]);
		if (e)
			return e;
		d->w[k].running = true;
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
struct rec_dither *rec_dither__start(const int *fds, const int *cpus, int nfds, unsigned int freq)
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
	e = init_sync(d);
	if (e) {
		free(d);
		errno = -e;
		return NULL;
	}
	e = assign(d, cpus);
	if (!e)
		e = start_workers(d);
	if (e) {
		rec_dither__stop(d);
		errno = -e;
		return NULL;
	}
	return d;
}

uint64_t rec_dither__windows(const struct rec_dither *d)
{
	uint64_t a = __atomic_load_n(&d->w[0].windows, __ATOMIC_RELAXED);
	uint64_t b = __atomic_load_n(&d->w[1].windows, __ATOMIC_RELAXED);

	return a > b ? a : b;
}

void rec_dither__stop(struct rec_dither *d)
{
	int k;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	for (k = 0; k < d->nw; k++) {
		if (d->w[k].running)
			pthread_join(d->w[k].thread, NULL);
		free(d->w[k].idx);
		free(d->w[k].u);
	}
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
