// SPDX-License-Identifier: MIT
/*
 * test_dither.c - the dither thread on real cpu-clock events: how often it
 * draws new periods (each draw costs a wake-up and an ioctl per CPU), and
 * that each draw keeps the events counting. Needs perf_event_open for
 * whole CPUs (root); skipped otherwise.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "dither.h"

static int open_cpu_clock(int cpu, uint64_t period)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = period;
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * Windows in 2 s at rate @freq (events on CPUs 0 and 1, or 0 twice), or -1
 * when cpu-clock events cannot be opened here.
 */
static long windows_in_2s(unsigned int freq)
{
	struct timespec ts = {.tv_sec = 2};
	struct rec_dither *d;
	uint64_t n;
	int fds[2], cpus[2];

	fds[0] = open_cpu_clock(0, 1001001);
	if (fds[0] < 0)
		return -1;
	cpus[0] = 0;
	cpus[1] = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0;
	fds[1] = open_cpu_clock(cpus[1], 1001001);
	assert_true(fds[1] >= 0);
	d = rec_dither__start(fds, cpus, 2, freq);
	assert_non_null(d);
	nanosleep(&ts, NULL);
	n = rec_dither__windows(d);
	rec_dither__stop(d);
	close(fds[0]);
	close(fds[1]);
	print_message("%llu windows in 2 s at %u Hz\n", (unsigned long long)n, freq);
	return (long)n;
}

/*
 * 9999 Hz: windows of 100 to 300 periods are 10 to 30 ms, under the floor
 * of 12.5 to 37.5 ms (25 ms on average): in 2 s, 80 on average; fewer than
 * 40 or more than 120 would need 40 windows to sum over 2 s (mean 1 s, sd
 * sqrt(40) x 7.2 ms = 46 ms: 22 sd) or 120 under 2 s (mean 3 s, sd 79 ms:
 * 12 sd). Wake-ups that come late shorten the next window (absolute
 * deadlines), so a loaded host moves the count little. 10 ms windows (the
 * earlier cost) give about 200.
 */
static void test_window_rate(void **state)
{
	long n = windows_in_2s(9999);

	(void)state;
	if (n < 0)
		SA_SKIP("cpu-clock events cannot be opened here (not root?)");
	assert_in_range(n, 40, 120);
}

/*
 * 999 Hz: 100 to 300 periods, 200 ms on average (each restart drops part
 * of a period: docs/recording.md): 10 in 2 s; fewer than 4 would need 4
 * windows over 2 s (mean 0.8 s, sd 2 x 58 ms: 10 sd), more than 20 would
 * need 20 under 2 s (mean 4 s, sd 258 ms: 7.7 sd). The 25 ms windows of
 * before gave 80.
 */
static void test_window_periods(void **state)
{
	long n = windows_in_2s(999);

	(void)state;
	if (n < 0)
		SA_SKIP("cpu-clock events cannot be opened here (not root?)");
	assert_in_range(n, 4, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_rate),
		cmocka_unit_test(test_window_periods),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
