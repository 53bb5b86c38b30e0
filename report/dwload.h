/* SPDX-License-Identifier: MIT */
/*
 * dwload.h - the DWARF of one file opened for symbolization: only the
 * sections inline frames (and --lines) read, inflated by us instead of by
 * libdw, plus the address -> compile unit and line lookups libdwfl did.
 * Used by elfsym.c, and by dwprefetch.c to build on two threads.
 */
#ifndef SA_REPORT_DWLOAD_H
#define SA_REPORT_DWLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <elfutils/libdw.h>

struct rpt_dwload;

/**
 * rpt_dwload__open() - open the DWARF of the ELF file at @path. When its
 * debug sections are zlib-compressed, an in-memory ELF image is built with
 * only the sections needed (no location lists; the line table only when
 * @lines), inflated; otherwise libdw reads the file as it is.
 * Thread-safe for distinct files (elf_version() must have been called).
 * @return an object released with rpt_dwload__free(), or NULL with errno
 * (ENOENT, ENOEXEC, ENOMEM). An object without usable DWARF is not an
 * error: its lookups find nothing, as libdwfl's did.
 */
struct rpt_dwload *rpt_dwload__open(const char *path, bool lines);

/** rpt_dwload__free() - release it and every DIE borrowed from it. Accepts NULL. */
void rpt_dwload__free(struct rpt_dwload *d);

/**
 * rpt_dwload__cu() - the compile unit DIE holding ELF address @addr, found
 * the way libdwfl's dwfl_module_addrdie() does (runs of .debug_aranges per
 * unit; a gap between runs belongs to the run below it).
 * @return @cu, or NULL when no unit holds @addr.
 */
Dwarf_Die *rpt_dwload__cu(struct rpt_dwload *d, Dwarf_Addr addr, Dwarf_Die *cu);

/**
 * rpt_dwload__line() - source file and line of @addr in unit @cu, as
 * dwfl_module_getsrc() and dwfl_lineinfo() give them. @file: borrowed until
 * rpt_dwload__free(), NULL when unknown. @return 0 or -ENOENT.
 */
int rpt_dwload__line(struct rpt_dwload *d, Dwarf_Die *cu, Dwarf_Addr addr, const char **file,
		     int *line);

/*
 * Building in steps, for dwprefetch.c: rpt_dwload__begin() opens the file
 * and lays the image out; rpt_dwload__fill() may then run on several
 * threads at once, each claiming whole sections; rpt_dwload__end(), after
 * every fill returned, opens the DWARF and frees the build.
 */
struct rpt_dwload_build;

/**
 * rpt_dwload__begin() - start building the DWARF of @path, as
 * rpt_dwload__open(). @hex: the GNU build id it must have (lower-case), or
 * NULL. @stop: when it becomes true (read atomically), inflating stops and
 * rpt_dwload__end() fails with ECANCELED; may be NULL.
 * @return the build, or NULL with errno (ENOENT, ENOEXEC for a file that is
 * not ELF or has another build id, ENOMEM).
 */
struct rpt_dwload_build *rpt_dwload__begin(const char *path, bool lines, const char *hex,
					   const bool *stop);

/** rpt_dwload__sections() - how many sections the build fills (0: none). */
int rpt_dwload__sections(const struct rpt_dwload_build *b);

/**
 * rpt_dwload__fill() - inflate sections not claimed yet, until none is
 * left. Thread-safe against other fills of @b. @return how many it filled.
 */
int rpt_dwload__fill(struct rpt_dwload_build *b);

/**
 * rpt_dwload__end() - finish @b (freed): @return as rpt_dwload__open(), or
 * NULL with errno ECANCELED after @stop.
 */
struct rpt_dwload *rpt_dwload__end(struct rpt_dwload_build *b);

/** rpt_dwload__abort() - free an unfinished build. Accepts NULL. */
void rpt_dwload__abort(struct rpt_dwload_build *b);

#endif /* SA_REPORT_DWLOAD_H */
