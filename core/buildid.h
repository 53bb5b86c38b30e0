/* SPDX-License-Identifier: MIT */
/*
 * buildid.h - the GNU build id of an ELF file, from its PT_NOTE segments as
 * the kernel reads it for MMAP2 records, else from its SHT_NOTE sections (a
 * file whose program headers hold no note). Shared by record/ and report/.
 */
#ifndef SAC_BUILDID_H
#define SAC_BUILDID_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

/* Notes larger than this (a segment or section) are skipped, not read. */
#define SAC_BUILDID_MAX_NOTE (64u << 10)

/**
 * sac_buildid__read() - the GNU build id of @e.
 * @e: borrowed, an ELF file opened by the caller (who checks its headers).
 * @buf, @cap: the caller's buffer; 20 bytes hold a SHA-1 build id.
 * The first non-empty NT_GNU_BUILD_ID note named "GNU" wins, PT_NOTE
 * segments before SHT_NOTE sections. Thread-safe for distinct @e.
 * @return its length; -ENOENT without one; -ENOEXEC when @e is not ELF;
 * -ENOSPC when it is longer than @cap.
 */
int sac_buildid__read(Elf *e, uint8_t *buf, size_t cap);

#endif /* SAC_BUILDID_H */
