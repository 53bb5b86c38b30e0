/* SPDX-License-Identifier: MIT */
/*
 * mapdrain.h - take every entry out of a BPF hash map: batches where the
 * kernel has them, one key at a time where not. The counts of drain.c and
 * the off-CPU counts of offcpu.c are both drained this way.
 */
#ifndef REC_MAPDRAIN_H
#define REC_MAPDRAIN_H

#include <stddef.h>
#include <linux/types.h>

/* One entry taken out of the map; non-zero stops the drain with that value. */
typedef int (*rec_map_entry_fn)(void *ctx, const void *key, const void *val);

/**
 * rec_map__drain() - look up and delete every entry of hash map @fd,
 * calling @fn(@ctx, key, value) for each.
 * @keys, @vals: caller's buffers of @batch keys of @ksz bytes and values of
 * @vsz bytes (batch >= 1).
 * @return 0, what @fn returned, or a negative errno of the map operations.
 */
int rec_map__drain(int fd, void *keys, void *vals, size_t ksz, size_t vsz, __u32 batch,
		   rec_map_entry_fn fn, void *ctx);

#endif
