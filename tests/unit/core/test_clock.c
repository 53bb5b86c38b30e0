// SPDX-License-Identifier: MIT
/*
 * test_clock.c - sac_now_ns() against clock_gettime() read just before and
 * after it, for the monotonic and the real-time clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "clock.h"

static uint64_t ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void test_between(void **state)
{
	static const clockid_t clocks[] = {CLOCK_MONOTONIC, CLOCK_REALTIME};

	(void)state;
	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		uint64_t a = ns(clocks[i]), t = sac_now_ns(clocks[i]), b = ns(clocks[i]);

		assert_true(a <= t && t <= b);
	}
}

SA_TEST_MAIN(test_between)
