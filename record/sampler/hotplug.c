// SPDX-License-Identifier: MIT
/*
 * hotplug.c - a CPU that goes offline takes its per-CPU perf events with
 * it: the kernel drops a cpu-clock event's timer and never arms it again,
 * so threads on that CPU would go unsampled for the rest of the recording
 * (measured on 6.18: PERF_EVENT_IOC_ENABLE does not revive it; a new event
 * samples). Once an interval this file notices each dead event, opens a
 * new one once its CPU is back, attaches the BPF program to it, and writes
 * the gap as a CPUGAP record (docs/format.md, "CPUGAP").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "hotplug.h"
#include "saf.h"
#include "throttle.h"

struct hp_ev {
	uint64_t count, at; /* the event's count at the last check, and when */
	uint64_t gap_from;  /* not sampled since then, 0: sampled */
};

struct rec_hotplug {
	struct bpf_link **links;
	int *pfds;
	const int *cpus;
	int n;
	struct bpf_program *prog;
	rec_hotplug_open_fn open;
	const void *ctx;
	struct rec_throttle *thr;
	bool cpu_clock;
	uint64_t gaps;
	struct hp_ev ev[];
};

/* The event's count (cpu-clock: nanoseconds it ran), or 0 when unread. */
static uint64_t ev_count(int fd)
{
	uint64_t v = 0;

	return read(fd, &v, sizeof(v)) == sizeof(v) ? v : 0;
}

/* Is @cpu offline? cpu0 often has no online file: it is online. */
static bool offline(int cpu)
{
	char p[64], c = '1';
	int fd;

	snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '1';
		close(fd);
	}
	return c == '0';
}

struct rec_hotplug *rec_hotplug__new(struct bpf_link **links, int *pfds, const int *cpus, int n,
				     struct bpf_program *prog, rec_hotplug_open_fn open,
				     const void *ctx, bool cpu_clock, struct rec_throttle *thr)
{
	struct rec_hotplug *h = calloc(1, sizeof(*h) + (size_t)(n > 0 ? n : 0) * sizeof(h->ev[0]));
	uint64_t now = sac_now_ns(CLOCK_MONOTONIC);
	int i;

	if (!h)
		return NULL;
	*h = (struct rec_hotplug){.links = links,
				  .pfds = pfds,
				  .cpus = cpus,
				  .n = n,
				  .prog = prog,
				  .open = open,
				  .ctx = ctx,
				  .thr = thr,
				  .cpu_clock = cpu_clock};
	for (i = 0; i < n; i++)
		h->ev[i] = (struct hp_ev){.count = cpu_clock ? ev_count(pfds[i]) : 0, .at = now};
	return h;
}

/* A cpu-clock event behind the clock by this much may have stopped. */
#define HP_LAG_NS 50000000ull

/* Does cpu-clock event @fd, at count @c, still run? Its count moves in 5 ms. */
static bool runs(int fd, uint64_t c)
{
	struct timespec ts = {0, 5000000};

	nanosleep(&ts, NULL);
	return ev_count(fd) > c;
}

/*
 * Is event @i dead, as seen at @now? A live cpu-clock count keeps up with
 * CLOCK_MONOTONIC (the kernel's sched clock, the same to ppm); one that
 * fell behind and does not move has stopped, and its gap starts where it
 * stopped: the last check's time plus what it ran since. Throttling also
 * holds a count for up to a tick: such an event moves again within 5 ms.
 */
static bool stopped(struct rec_hotplug *h, int i, uint64_t now)
{
	struct hp_ev *e = &h->ev[i];
	uint64_t c, ran;

	if (e->gap_from)
		return true;
	if (!h->cpu_clock) {
		if (offline(h->cpus[i]))
			e->gap_from = now;
		return e->gap_from;
	}
	if (now - e->at < 1000000)
		return false;
	c = ev_count(h->pfds[i]);
	ran = c > e->count ? c - e->count : 0;
	if (ran + HP_LAG_NS >= now - e->at || runs(h->pfds[i], c)) {
		e->count = c;
		e->at = now;
		return false;
	}
	e->gap_from = e->at + ran;
	return true;
}

/* A new event for @i's CPU, attached: 0, or -errno (-ENODEV: still offline). */
static int reopen(struct rec_hotplug *h, int i)
{
	struct bpf_link *l, *old = h->links[i];
	int fd = h->open(h->ctx, h->cpus[i]);

	if (fd < 0)
		return fd;
	l = bpf_program__attach_perf_event(h->prog, fd);
	if (!l) {
		int e = -errno;

		close(fd);
		return e;
	}
	/* the dither reads pfds[i] for its next period: the new event's from now on */
	__atomic_store_n(&h->pfds[i], fd, __ATOMIC_RELEASE);
	h->links[i] = l;
	rec_throttle__rewatch(h->thr, i, fd);
	bpf_link__destroy(old); /* closes the dead event's fd */
	h->ev[i].count = h->cpu_clock ? ev_count(fd) : 0;
	return 0;
}

static int write_gap(struct rec_hotplug *h, struct saf_writer *w, int i, uint64_t to)
{
	struct saf_record rec = {.kind = SAF_REC_CPUGAP};

	rec.cpugap = (struct saf_cpugap){
		.cpu = (uint32_t)h->cpus[i], .from_ns = h->ev[i].gap_from, .to_ns = to};
	h->ev[i].gap_from = 0;
	h->gaps++;
	return saf_writer__add(w, &rec);
}

int rec_hotplug__check(struct rec_hotplug *h, struct saf_writer *w, bool last)
{
	uint64_t now;
	int i, e, n = 0;

	if (!h)
		return 0;
	now = sac_now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < h->n; i++) {
		if (!stopped(h, i, now))
			continue;
		if (!last && reopen(h, i))
			continue; /* offline yet: the next check tries again */
		now = sac_now_ns(CLOCK_MONOTONIC);
		e = write_gap(h, w, i, now);
		h->ev[i].at = now;
		if (e)
			return e;
		n += !last;
	}
	return n;
}

uint64_t rec_hotplug__gaps(const struct rec_hotplug *h)
{
	return h ? h->gaps : 0;
}

void rec_hotplug__free(struct rec_hotplug *h)
{
	free(h);
}
