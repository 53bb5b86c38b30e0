/* SPDX-License-Identifier: MIT */
/*
 * symrank.h - which of several ELF symbols at one address names it, the
 * one rule for the names sa-record embeds and those sa-report reads from a
 * binary, so a report off the box shows what one beside the binary would.
 */
#ifndef SAC_SYMRANK_H
#define SAC_SYMRANK_H

/**
 * sac_sym__rank() - the rank of a symbol among those at its address
 * (docs/sa-report.1, SYMBOL NAMES): a global over a weak over a local one,
 * then a name without a compiler suffix (".localalias", ".part.0", ".cold")
 * over one with, then the fewer leading underscores (as perf does).
 * @bind: the symbol's STB_* binding.
 * @name: its name, not empty; borrowed.
 * @return a rank, lower is better. Thread-safe.
 */
unsigned sac_sym__rank(int bind, const char *name);

#endif /* SAC_SYMRANK_H */
