/* SPDX-License-Identifier: MIT */
/*
 * clock.h - a clock's time in nanoseconds: the one helper for the
 * timestamps sa-record writes and the intervals it measures.
 */
#ifndef SAC_CLOCK_H
#define SAC_CLOCK_H

#include <stdint.h>
#include <time.h>

/**
 * sac_now_ns() - the time of @clock (CLOCK_MONOTONIC, CLOCK_REALTIME, ...)
 * in nanoseconds. @return the time, 0 where @clock is not one this system
 * has (its timespec stays zeroed). Thread-safe.
 */
static inline uint64_t sac_now_ns(clockid_t clock)
{
	struct timespec ts = {0, 0};

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* SAC_CLOCK_H */
