/* SPDX-License-Identifier: MIT */
/*
 * ksyms.h - the kernel's text symbols (/proc/kallsyms, modules and BPF
 * programs included), loaded once, and the KSYM records of only those
 * symbols that name kernel addresses seen in the recorded stacks.
 */
#ifndef REC_KSYMS_H
#define REC_KSYMS_H

#include <stddef.h>
#include <stdint.h>
#include "rec_sink.h"

struct rec_ksyms;

/**
 * rec_ksyms__load() - read a kallsyms file into a table sorted by address.
 * @path: NULL for "/proc/kallsyms".
 *
 * Keeps text symbols (types t, T, w, W) only.
 * @return a table released with rec_ksyms__free(), or NULL with errno:
 * EPERM when every address reads as 0 (kptr_restrict, not root), ENOENT
 * when the file holds no text symbol, ENOMEM, or the open/read error.
 * Not thread-safe.
 */
struct rec_ksyms *rec_ksyms__load(const char *path);

/**
 * rec_ksyms__note() - emit a KSYM record for each symbol covering one of
 * @ips that was not emitted before.
 * @ips, @n: kernel addresses, borrowed for the call. Each address is
 *           looked up as is and minus one (a return address can be the
 *           first byte after a call at the end of its function).
 * @sink: receives the KSYM records ("KSYM record" in docs/format.md).
 *
 * @return the number of records emitted, or the sink's negative errno.
 */
int rec_ksyms__note(struct rec_ksyms *ks, const uint64_t *ips, size_t n,
		    const struct rec_sink *sink);

/** rec_ksyms__count() - symbols in the table. */
size_t rec_ksyms__count(const struct rec_ksyms *ks);

/** rec_ksyms__new_file() - forget which symbols were emitted (--rotate). */
void rec_ksyms__new_file(struct rec_ksyms *ks);

/** rec_ksyms__emitted() - symbols emitted so far. */
size_t rec_ksyms__emitted(const struct rec_ksyms *ks);

/** rec_ksyms__free() - release the table. Accepts NULL. */
void rec_ksyms__free(struct rec_ksyms *ks);

#endif /* REC_KSYMS_H */
