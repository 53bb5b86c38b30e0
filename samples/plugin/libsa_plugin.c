// SPDX-License-Identifier: MIT
/*
 * The library samples/dlopen_host loads mid-run: sa_plugin_run burns the
 * requested seconds of thread CPU time in sa_plugin_hot. Built by
 * samples/rules.mk as build/samples/libsa_plugin.so.
 */
#include "../sa_sample.h"

double sa_plugin_run(double seconds);

__attribute__((noipa)) void sa_plugin_hot(uint64_t ns, unsigned long iters)
{
	SA_BURN_CPU_NS(ns, iters);
}

/* Returns the thread CPU seconds it spent. */
double sa_plugin_run(double seconds)
{
	uint64_t c0 = sa_thread_cpu_ns();

	sa_plugin_hot((uint64_t)(seconds * 1e9), sa_calibrate(500000));
	return (sa_thread_cpu_ns() - c0) / 1e9;
}
