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
#include <stdint.h>
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

/**
 * rpt_dwload__free() - release it and every DIE borrowed from it; a fill
 * of its .debug_info still running on another thread is stopped first.
 * Accepts NULL.
 */
void rpt_dwload__free(struct rpt_dwload *d);

/**
 * rpt_dwload__cu() - the compile unit DIE holding ELF address @addr, found
 * the way libdwfl's dwfl_module_addrdie() does (runs of .debug_aranges per
 * unit; a gap between runs belongs to the run below it). While another
 * thread still inflates .debug_info, waits until the unit is in.
 * @return @cu, or NULL when no unit holds @addr.
 */
Dwarf_Die *rpt_dwload__cu(struct rpt_dwload *d, Dwarf_Addr addr, Dwarf_Die *cu);

/**
 * rpt_dwload__rank() - where the unit of @addr lies in .debug_info, plus
 * one, or 0 when its lookup never waits: looking addresses up in rank
 * order reads the units as they arrive.
 */
uint64_t rpt_dwload__rank(struct rpt_dwload *d, Dwarf_Addr addr);

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
 * threads at once, each claiming whole sections; once every section but
 * .debug_info is in (rpt_dwload__ready()), rpt_dwload__dwarf() may hand
 * the DWARF out while .debug_info is still being inflated; rpt_dwload__end(),
 * after every fill returned, frees the build (and opens the DWARF, if
 * nobody took it early).
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
 * left; with @info, .debug_info (the largest by far) first, else never:
 * a helper that only wants the DWARF handed out early (rpt_dwload__dwarf())
 * must not take it on. Thread-safe against other fills of @b.
 * @return how many it filled.
 */
int rpt_dwload__fill(struct rpt_dwload_build *b, bool info);

/**
 * rpt_dwload__ready() - every section of @b but .debug_info is filled.
 * Thread-safe against fills of @b.
 */
bool rpt_dwload__ready(const struct rpt_dwload_build *b);

/**
 * rpt_dwload__dwarf() - open the DWARF of @b, which must be ready, and give
 * it to the caller (release with rpt_dwload__free()); fills of @b may still
 * be inflating .debug_info: rpt_dwload__cu() waits for the units it needs.
 * At most once per build, and not concurrently with rpt_dwload__end().
 * @return as rpt_dwload__open(), or NULL with errno ECANCELED after @stop.
 */
struct rpt_dwload *rpt_dwload__dwarf(struct rpt_dwload_build *b);

/**
 * rpt_dwload__end() - finish @b (freed) once every fill returned: @return
 * rpt_dwload__dwarf(b), or NULL with errno 0 when it was called already.
 */
struct rpt_dwload *rpt_dwload__end(struct rpt_dwload_build *b);

#endif /* SA_REPORT_DWLOAD_H */
