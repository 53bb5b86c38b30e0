// SPDX-License-Identifier: MIT
/*
 * mapdrain.c - rec_map__drain() (mapdrain.h): lookup_and_delete_batch, and
 * get_next_key + lookup_and_delete on kernels without it.
 */
#include <errno.h>
#include <stdbool.h>
#include <bpf/bpf.h>

#include "mapdrain.h"

int rec_map__drain(int fd, void *keys, void *vals, size_t ksz, size_t vsz, __u32 batch,
		   rec_map_entry_fn fn, void *ctx)
{
	__u64 in = 0, out = 0;
	__u32 i, n;
	int err, err2;

	for (bool first = true;; first = false) {
		n = batch;
		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, keys, vals, &n,
						      NULL);
		if (err && err != -ENOENT) {
			if (first &&
			    (err == -EINVAL || err == -EOPNOTSUPP || err == -524 /* ENOTSUPP */))
				break;
			return err;
		}
		for (i = 0; i < n; i++) {
			err2 = fn(ctx, (const char *)keys + i * ksz, (const char *)vals + i * vsz);
			if (err2)
				return err2;
		}
		if (err == -ENOENT)
			return 0;
		in = out;
	}
	while (!bpf_map_get_next_key(fd, NULL, keys)) {
		if (bpf_map_lookup_and_delete_elem(fd, keys, vals))
			return -errno;
		err = fn(ctx, keys, vals);
		if (err)
			return err;
	}
	return 0;
}
