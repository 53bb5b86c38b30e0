/* SPDX-License-Identifier: MIT */
/*
 * dither.h - threads that give each CPU's sampling event a fresh random
 * period every few milliseconds, so that no periodic code can stay in phase
 * with the sampler, while the mean rate stays -F (docs/recording.md
 * "Sampling period").
 */
#ifndef REC_DITHER_H
#define REC_DITHER_H

#include <stdint.h>

struct rec_dither;

/**
 * rec_dither__start() - set a random period on each of @fds (cpu-clock
 * sampling events in period mode, borrowed: they must stay open until
 * rec_dither__stop()) and start the threads that draw new ones, at normal
 * priority, pinned so that none sets the event of its own CPU.
 * @cpus: the CPU of each event (borrowed for the call), or NULL if unknown
 * (then one unpinned thread sets them all).
 * @freq: the mean sampling rate to keep, in samples per second.
 * @return an object released with rec_dither__stop(), or NULL with errno
 * (from the first PERF_EVENT_IOC_PERIOD when the kernel refuses it).
 */
struct rec_dither *rec_dither__start(const int *fds, const int *cpus, int nfds, unsigned int freq);

/**
 * rec_dither__windows() - how many times the busier of the threads has
 * drawn new periods (each a wake-up and one ioctl per event it sets; the
 * other, when it runs, wakes as often). Safe while they run.
 */
uint64_t rec_dither__windows(const struct rec_dither *d);

/** rec_dither__stop() - stop and join the thread, then free. Accepts NULL. */
void rec_dither__stop(struct rec_dither *d);

#endif /* REC_DITHER_H */
