// SPDX-License-Identifier: MIT
/*
 * units.c - what a profile's counts mean in words: samples, or the
 * microseconds of --off-cpu and --wall profiles shown as a readable time.
 */
#include <stdio.h>

#include "output.h"

void rpt_value__put(FILE *out, uint32_t value, double v)
{
	if (!rpt_value__is_time(value))
		fprintf(out, "%.0f samples", v);
	else if (v >= 1e6)
		fprintf(out, "%.3f s", v / 1e6);
	else if (v >= 1e3)
		fprintf(out, "%.1f ms", v / 1e3);
	else
		fprintf(out, "%.0f us", v);
}

const char *rpt_value__title(uint32_t value)
{
	switch (value) {
	case RPT_VALUE_OFF_CPU:
		return "Off-CPU Time Flame Graph";
	case RPT_VALUE_WALL:
		return "Wall-Clock Time Flame Graph";
	default:
		return "CPU flame graph";
	}
}
