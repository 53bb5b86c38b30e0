/* SPDX-License-Identifier: MIT */
/*
 * hotplug.h - CPUs that go offline and come back (hotplug.c): their
 * sampling events, which the kernel stops for good, reopened and attached
 * again, and the time each was not sampled written as a CPUGAP record
 * (docs/format.md, "CPUGAP").
 */
#ifndef REC_HOTPLUG_H
#define REC_HOTPLUG_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_link;
struct bpf_program;
struct rec_throttle;
struct saf_writer;
struct rec_hotplug;

/** Opens CPU @cpu's sampling event as the session first did: an fd or -errno. */
typedef int (*rec_hotplug_open_fn)(const void *ctx, int cpu);

/**
 * rec_hotplug__new() - watch the @n sampling events @pfds (on CPUs @cpus),
 * attached to @prog by @links. The three arrays are borrowed and stay the
 * session's; rec_hotplug__check() replaces a dead event's entries in
 * @links and @pfds in place (a reader of @pfds, the period dither, sees
 * the new fd). @open(@ctx, cpu) opens a new event; @ctx is borrowed.
 * @cpu_clock: the events are cpu-clock, whose count runs whenever the CPU
 * is online: a count that stops says the event is dead. Other events are
 * checked by the CPU's online file only. @thr (borrowed, or NULL) watches
 * the events' throttling: a new event is watched in place of the old.
 * @return a watcher released with rec_hotplug__free(), or NULL with errno.
 */
struct rec_hotplug *rec_hotplug__new(struct bpf_link **links, int *pfds, const int *cpus, int n,
				     struct bpf_program *prog, rec_hotplug_open_fn open,
				     const void *ctx, bool cpu_clock, struct rec_throttle *thr);

/**
 * rec_hotplug__check() - at an interval's end: notice events that stopped
 * since the last check (the CPU went offline) and reopen those whose CPU
 * is back; each gap that ends (reopened, or @last: the recording ends) is
 * written to @w as a CPUGAP record. Not thread-safe: the loop's thread.
 * @h: NULL does nothing.
 * @return the number of events reopened, or a negative errno from @w (a
 * CPU that cannot be reopened yet is tried again at the next check).
 */
int rec_hotplug__check(struct rec_hotplug *h, struct saf_writer *w, bool last);

/** rec_hotplug__gaps() - gaps written so far (for the summary). */
uint64_t rec_hotplug__gaps(const struct rec_hotplug *h);

/** rec_hotplug__free() - release @h (not the events). Accepts NULL. */
void rec_hotplug__free(struct rec_hotplug *h);

#endif /* REC_HOTPLUG_H */
