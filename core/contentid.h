/* SPDX-License-Identifier: MIT */
/*
 * contentid.h - the identity of an ELF file without a GNU build id (Go's
 * default build has none): a 16-byte hash of its bytes, computed the same
 * way by sa-record (MAP and SYMTAB records, docs/format.md "MAP") and by
 * sa-report (is the binary found the one recorded?). Shared by both.
 */
#ifndef SAC_CONTENTID_H
#define SAC_CONTENTID_H

#include <stdint.h>

#define SAC_CONTENTID_LEN   16
#define SAC_CONTENTID_WHOLE (64ull << 20) /* files up to this size are hashed whole */
#define SAC_CONTENTID_PART  (32ull << 20) /* larger: this much of the head and of the tail */

/**
 * sac_contentid__fd() - the content id of the file open on @fd (borrowed;
 * read with pread(), its offset unchanged): two 64-bit hashes of its bytes
 * (all of them up to SAC_CONTENTID_WHOLE; past that the first and the last
 * SAC_CONTENTID_PART bytes), and its size, little-endian into @out.
 * Reads at most 64 MiB. Thread-safe.
 * @return 0; -errno of fstat() or pread(); -EIO when the file shrank while
 * read; -ENOMEM.
 */
int sac_contentid__fd(int fd, uint8_t out[SAC_CONTENTID_LEN]);

#endif /* SAC_CONTENTID_H */
