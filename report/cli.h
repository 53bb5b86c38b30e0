/* SPDX-License-Identifier: MIT */
/*
 * cli.h - sa-report's command line as parsed by cli.c: the options, the
 * inputs and the one output mode, and the exit codes main.c returns.
 */
#ifndef RPT_CLI_H
#define RPT_CLI_H

#include <stdbool.h>
#include "session.h"

#define RPT_MAX_INPUTS	   256
#define RPT_MAX_DEBUG_DIRS 32

/* Exit codes (docs/style.md, "Errors and exit codes"; docs/sa-report.1). */
#define RPT_EXIT_OK	 0 /* a profile was shown, partial ones included */
#define RPT_EXIT_FAIL	 1 /* nothing usable was read, or a runtime failure */
#define RPT_EXIT_USAGE	 2 /* a usage error, or a --time range outside the recordings */
#define RPT_EXIT_SKIPPED 3 /* a profile of a set was shown, but an input could not be read */

/* The output mode; --diff combines with folded, --top or --svg. */
enum rpt_mode { RPT_M_FOLDED, RPT_M_TOP, RPT_M_INFO, RPT_M_SVG, RPT_M_PPROF, RPT_M_SPEEDSCOPE };

struct rpt_cli {
	struct rpt_session_opts so;
	const char *inputs[RPT_MAX_INPUTS], *debug_dirs[RPT_MAX_DEBUG_DIRS];
	int ninputs, nmodes, mode;
	int ntext, nfolded; /* inputs of text, of folded text read */
	int nempty;	    /* recordings read that held no interval */
	int nunread;	    /* inputs of a set skipped: they could not be read */
	bool diff, verbose, quiet, annotate, sort_total, inverted, no_normalize, negate,
		short_names;
	const char *out, *focus, *ignore, *title;
	double min_percent, min_width;
	unsigned rows, width;
};

/**
 * rpt_cli__parse() - parse sa-report's arguments into @c (zeroed by the
 * caller; it keeps pointers into @argv). Prints --help, --version and
 * usage errors itself.
 * @return 0 to run, 1 when --help or --version was answered, or -EINVAL
 * for a usage error.
 */
int rpt_cli__parse(struct rpt_cli *c, int argc, char **argv);

#endif
