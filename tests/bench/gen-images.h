/* SPDX-License-Identifier: MIT */
/*
 * gen-images.h - gen-synthetic's many-process-images case (gen-images.c).
 */
#ifndef SA_GEN_IMAGES_H
#define SA_GEN_IMAGES_H

#include <stdint.h>
#include <stdio.h>

#include "saf.h"

struct gen_images {
	uint64_t images;      /* process images, one capture each */
	unsigned nbins;	      /* distinct binaries (this host's) among them */
	unsigned intervals;   /* the images spread over these */
	uint64_t t0;	      /* CLOCK_MONOTONIC of the first interval */
	FILE *list;	      /* not NULL: gets the binaries' paths, one a line */
	struct saf_writer *w; /* open, META written */
	int (*add)(void *arg, struct saf_record *r);
	void *arg;
};

/**
 * gen_images__write() - the PROC, MAP and USTACK records of @g->images
 * images, in @g->intervals intervals. @return 0 or a negative errno.
 */
int gen_images__write(struct gen_images *g);

#endif /* SA_GEN_IMAGES_H */
