/* SPDX-License-Identifier: MIT */
/*
 * throttle.h - the samples the kernel did not take because it throttled
 * a sampling event (throttle.c): each event gets a small ring of its own,
 * where the kernel writes PERF_RECORD_THROTTLE and UNTHROTTLE (the BPF
 * program returns 0, so no sample is ever written there). Used by
 * bpf_session.c; docs/reliability.md, "Kernel throttling".
 */
#ifndef REC_THROTTLE_H
#define REC_THROTTLE_H

#include <stdint.h>

struct rec_throttle;

/**
 * rec_throttle__new() - map a ring on each of @fds (sampling events
 * opened with use_clockid and CLOCK_MONOTONIC, borrowed: they must stay
 * open until rec_throttle__free()). An event whose ring cannot be mapped
 * (perf_event_mlock_kb spent) is left unwatched and counted in
 * rec_throttle__unwatched().
 * @freq: the events' mean rate, samples per second, per CPU.
 * @return an object released with rec_throttle__free(), or NULL with errno.
 */
struct rec_throttle *rec_throttle__new(const int *fds, int nfds, double freq);

/**
 * rec_throttle__read() - read what the kernel wrote since the last call.
 * Cheap (a few loads per event when nothing came); call it at every poll
 * so that a ring never fills. Not thread-safe.
 */
void rec_throttle__read(struct rec_throttle *t);

/**
 * rec_throttle__take() - samples not taken while an event was throttled,
 * from the last call up to @now_ns (CLOCK_MONOTONIC): a throttled span
 * times the rate. An event still throttled at @now_ns counts up to it,
 * and the rest in a later call. Accepts NULL (0).
 */
uint64_t rec_throttle__take(struct rec_throttle *t, uint64_t now_ns);

/** rec_throttle__spans() - throttled spans seen so far (THROTTLE records). */
uint64_t rec_throttle__spans(const struct rec_throttle *t);

/** rec_throttle__unwatched() - events without a ring. */
int rec_throttle__unwatched(const struct rec_throttle *t);

/**
 * rec_throttle__rewatch() - event @i was replaced by @fd (hotplug.c): read
 * the old ring's last records, unmap it, and map one on @fd (borrowed).
 * @t: NULL does nothing. Not thread-safe with rec_throttle__read().
 */
void rec_throttle__rewatch(struct rec_throttle *t, int i, int fd);

/** rec_throttle__free() - unmap the rings and free. Accepts NULL. */
void rec_throttle__free(struct rec_throttle *t);

#endif /* REC_THROTTLE_H */
