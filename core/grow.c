// SPDX-License-Identifier: MIT
/*
 * grow.c - the realloc behind sac_grow(), with its overflow check.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"

int sac_grow_realloc(void **buf, size_t *cap, size_t need, size_t elem, size_t init, size_t max)
{
	size_t ncap = *cap ? *cap : init;
	void *nbuf;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > max)
		return -EFBIG;
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	nbuf = realloc(*buf, ncap * elem);
	if (!nbuf)
		return -ENOMEM;
	*buf = nbuf;
	*cap = ncap;
	return 0;
}
