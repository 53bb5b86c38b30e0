// SPDX-License-Identifier: MIT
/*
 * folded_driver.c - a test and benchmark driver for report/'s writers that
 * needs no recording: folded text in, folded/--top/--svg/--diff out. Used by
 * tests/bench/bench-svg.sh and tests/browser/ so they do not depend on
 * sa-report's command line. Not installed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

static struct rpt_profile *load(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	struct rpt_profile *p;
	char err[256];

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(1);
	}
	p = rpt_folded__parse(f, err, sizeof(err));
	if (!p) {
		fprintf(stderr, "%s: %s\n", path, err[0] ? err : strerror(errno));
		exit(1);
	}
	if (f != stdin)
		fclose(f);
	return p;
}

static const struct option opts[] = {
	{"svg", no_argument, NULL, 's'},	  {"top", no_argument, NULL, 't'},
	{"diff", no_argument, NULL, 'd'},	  {"inverted", no_argument, NULL, 'i'},
	{"width", required_argument, NULL, 'w'},  {"min-width", required_argument, NULL, 'm'},
	{"negate", no_argument, NULL, 'n'},	  {"no-normalize", no_argument, NULL, 'N'},
	{"sort-total", no_argument, NULL, 'T'},	  {"rows", required_argument, NULL, 'r'},
	{"title", required_argument, NULL, 'x'},  {"focus", required_argument, NULL, 'f'},
	{"ignore", required_argument, NULL, 'g'}, {"min-percent", required_argument, NULL, 'p'},
	{"annotate", no_argument, NULL, 'a'},	  {NULL, 0, NULL, 0},
};

int main(int argc, char **argv)
{
	struct rpt_svg_opts so = {.min_width = -1};
	struct rpt_top_opts to = {0};
	struct rpt_folded_opts fo = {0};
	struct rpt_diff_opts dopt = {.svg = &so, .top = &to};
	const char *focus = NULL, *ignore = NULL;
	struct rpt_profile *p, *q = NULL;
	bool svg = false, top = false, diff = false;
	double minpct = 0;
	char err[256];
	int c, rc;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			svg = true;
			break;
		case 't':
			top = true;
			break;
		case 'd':
			diff = true;
			break;
		case 'i':
			so.inverted = true;
			break;
		case 'w':
			so.width = (uint32_t)atoi(optarg);
			break;
		case 'm':
			so.min_width = atof(optarg);
			break;
		case 'n':
			dopt.negate = true;
			break;
		case 'N':
			dopt.no_normalize = true;
			break;
		case 'T':
			to.sort_total = true;
			break;
		case 'r':
			to.rows = (uint32_t)atoi(optarg);
			break;
		case 'x':
			so.title = optarg;
			break;
		case 'f':
			focus = optarg;
			break;
		case 'g':
			ignore = optarg;
			break;
		case 'p':
			minpct = atof(optarg);
			break;
		case 'a':
			fo.annotate = true;
			break;
		default:
			return 2;
		}
	}
	if (optind + (diff ? 2 : 1) != argc) {
		fprintf(stderr, "usage: %s [--svg|--top] [--diff BEFORE] FILE\n", argv[0]);
		return 2;
	}
	p = load(argv[optind]);
	if (diff)
		q = load(argv[optind + 1]);
	rc = rpt_profile__filter(p, focus, ignore, minpct, err, sizeof(err));
	if (!rc && q)
		rc = rpt_profile__filter(q, focus, ignore, minpct, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "filter: %s\n", rc == -EINVAL ? err : strerror(-rc));
		return 2;
	}
	rpt_profile__sort(p);
	if (diff)
		rc = svg   ? rpt_diff__svg(p, q, stdout, &dopt)
		     : top ? rpt_diff__top(p, q, stdout, &dopt)
			   : rpt_diff__folded(p, q, stdout, &dopt);
	else
		rc = svg   ? rpt_svg__write(p, stdout, &so)
		     : top ? rpt_top__write(p, stdout, &to)
			   : rpt_folded__write(p, stdout, &fo);
	rpt_profile__free(p);
	rpt_profile__free(q);
	if (rc) {
		fprintf(stderr, "write: %s\n", strerror(-rc));
		return 1;
	}
	return 0;
}
