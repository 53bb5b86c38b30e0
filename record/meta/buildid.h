/* SPDX-License-Identifier: MIT */
/*
 * buildid.h - GNU build ids of mapped files, cached by (device, inode)
 * (buildid.c). Used by procmaps.c and uwtrim.c.
 */
#ifndef REC_BUILDID_H
#define REC_BUILDID_H

#include <stddef.h>
#include <stdint.h>

struct rec_buildids;

/**
 * rec_buildids__new() - an empty cache.
 * @return a cache released with rec_buildids__free(), or NULL with errno.
 */
struct rec_buildids *rec_buildids__new(void);

/**
 * rec_buildids__get() - the build id of the file (@dev, @ino), reading
 * @path (e.g. /proc/PID/map_files/...) or else @alt_path (may be NULL) the
 * first time.
 * @id: set to the cached bytes, borrowed until the next call.
 * @return the length (0 = none or unreadable), or -ENOMEM.
 */
int rec_buildids__get(struct rec_buildids *c, const char *path, const char *alt_path, uint64_t dev,
		      uint64_t ino, const uint8_t **id);

/** rec_buildids__free() - release the cache. Accepts NULL. */
void rec_buildids__free(struct rec_buildids *c);

/**
 * rec_buildid_read_fd() - the GNU build id of the ELF file open on @fd.
 * @out, @cap: caller's buffer.
 * @return its length (0 when the file has none or is not ELF).
 */
int rec_buildid_read_fd(int fd, uint8_t *out, size_t cap);

#endif /* REC_BUILDID_H */
