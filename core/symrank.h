/* SPDX-License-Identifier: MIT */
/*
 * symrank.h - which of several ELF symbols at one address names it, the
 * one rule for the names sa-record embeds and those sa-report reads from a
 * binary, so a report off the box shows what one beside the binary would.
 */
#ifndef SAC_SYMRANK_H
#define SAC_SYMRANK_H

#include <stddef.h>

/**
 * sac_sym__rank() - the rank of a symbol among those at its address
 * (docs/sa-report.1, SYMBOL NAMES): a name without a compiler suffix
 * (".localalias", ".part.0", ".cold") over one with; then the fewer leading
 * underscores, so the name a program calls (writev, close, clone3) wins
 * over glibc's internal ones (__writev, __GI___writev, __close); then a
 * global over a weak over a local one ("__vdso_" counts as no underscore:
 * __vdso_clock_gettime over clock_gettime); then the longer name (open64 over
 * open, as perf). A symbol version ("@@GLIBC_2.17") counts for none of these.
 * @bind: the symbol's STB_* binding.
 * @name: its name, not empty; borrowed.
 * @return a rank, lower is better. Thread-safe.
 */
unsigned sac_sym__rank(int bind, const char *name);

/**
 * sac_sym__name_len() - the length of @name without its symbol version:
 * "clock_gettime@@GLIBC_2.17" and "clock_gettime@GLIBC_2.2.5" are
 * "clock_gettime"; "strcmp@plt" (a PLT entry's name) is kept whole.
 * @name: borrowed. Thread-safe.
 */
size_t sac_sym__name_len(const char *name);

#endif /* SAC_SYMRANK_H */
