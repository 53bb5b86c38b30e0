/* SPDX-License-Identifier: MIT */
/*
 * vdso.h - the kernel's vDSO image, read once per recording from sa-record's
 * own address space: every x86-64 process of one kernel maps the same image,
 * so its symbols name the [vdso] frames of all of them ("__vdso_clock_gettime"
 * where a report showed "[vdso]"), and its .eh_frame lets an unwinder pass it.
 */
#ifndef REC_VDSO_H
#define REC_VDSO_H

#include <stddef.h>
#include <stdint.h>
#include "saf.h"

struct rec_vdso {
	int fd;		  /* a memfd holding the image, read-only; -1 when none */
	uint64_t size;	  /* bytes of the image */
	uint64_t map_len; /* bytes of its mapping (whole pages) */
	uint8_t bid[20];
	size_t bid_len;
};

/**
 * rec_vdso__open() - copy this process's vDSO (AT_SYSINFO_EHDR) into a memfd
 * and read its build id.
 * @v: filled in; release with rec_vdso__close() (also on failure).
 * @return 0, -ENOENT when there is no vDSO or it has no build id, or -errno.
 */
int rec_vdso__open(struct rec_vdso *v);

/**
 * rec_vdso__claim() - when @m (path @path) maps this image, a "[vdso]" of the
 * same length (a 32-bit process's vDSO is another image), give it the
 * image's build id (into @bid, SAF_MAX_BUILD_ID bytes, which @m's build id
 * points to) and clear SAF_MAP_ANON, so that its symbols are embedded and
 * its CFI read like a file's.
 * @v: NULL, or the image.
 * @return an fd of the image the caller owns, or -1 (not the vDSO, or dup failed).
 */
int rec_vdso__claim(const struct rec_vdso *v, struct saf_map *m, uint8_t *bid, const char *path);

/** rec_vdso__close() - close the memfd. Accepts a closed @v (fd -1). */
void rec_vdso__close(struct rec_vdso *v);

#endif /* REC_VDSO_H */
