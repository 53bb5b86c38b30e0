/* SPDX-License-Identifier: MIT */
/*
 * dwunits.h - address -> compile unit of one file's DWARF, the way libdwfl
 * finds it (runs of .debug_aranges per unit), with .debug_info allowed to
 * arrive while it is used: a unit is handed out once all of its bytes are
 * in, so symbolization can start before a large debug file is inflated.
 * Used only by dwload.c.
 */
#ifndef SA_REPORT_DWUNITS_H
#define SA_REPORT_DWUNITS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>

struct dwu_run;

/*
 * Zero it, then rpt_dwunits__init(); release with rpt_dwunits__fini().
 * Fields are private to dwunits.c.
 */
struct rpt_dwunits {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* more of .debug_info arrived, or no more will */
	size_t ready;	   /* bytes of .debug_info in place (under mu) */
	bool filling;	   /* a thread may still write .debug_info (under mu) */
	bool inited;
	struct dwu_run *runs;
	size_t nruns;
	bool hdr_runs;	     /* runs hold unit header offsets, not CU DIE offsets */
	Dwarf_Addr last_end; /* end of the last arange, as libdwfl checks it */
	const uint8_t *info, *abbrev;
	size_t info_size, abbrev_size;
	Dwarf_Off safe_hdr; /* last unit found to refer only inside itself, + 1 */
};

/**
 * rpt_dwunits__init() - set @u up for a .debug_info of @info_size bytes at
 * @info (NULL when libdw reads the file itself: then every unit is in
 * place). When @filling, the bytes arrive later through
 * rpt_dwunits__arrived(). @return 0.
 */
int rpt_dwunits__init(struct rpt_dwunits *u, const uint8_t *info, size_t info_size, bool filling);

/**
 * rpt_dwunits__arrived() - .debug_info holds its first @ready bytes; @last:
 * no more will come (the section is whole, failed, or was cancelled).
 * Thread-safe; wakes rpt_dwunits__cu() waiters.
 */
void rpt_dwunits__arrived(struct rpt_dwunits *u, size_t ready, bool last);

/** rpt_dwunits__filling() - a writer may still add bytes (for cancelling it). */
bool rpt_dwunits__filling(struct rpt_dwunits *u);

/** rpt_dwunits__wait_done() - wait until no writer is left. */
void rpt_dwunits__wait_done(struct rpt_dwunits *u);

/**
 * rpt_dwunits__load() - the address runs, from the bytes of .debug_aranges
 * (@ar, @ar_size, parsed as dwarf_getaranges() does, units by header
 * offset) when @ar is not NULL, else from dwarf_getaranges() on @dw (which
 * needs all of .debug_info). @abbrev: .debug_abbrev, to tell which units
 * refer only inside themselves. Malformed aranges give no runs, as libdw's
 * failure does. @return 0 or -ENOMEM.
 */
int rpt_dwunits__load(struct rpt_dwunits *u, Dwarf *dw, const uint8_t *ar, size_t ar_size,
		      const uint8_t *abbrev, size_t abbrev_size);

/**
 * rpt_dwunits__cu() - the DIE offset of the compile unit holding ELF
 * address @addr, waiting until the unit's bytes are in (all of
 * .debug_info when the unit may refer to another). Main reader thread
 * only. @return it, or 0 when no unit holds @addr or its bytes never came.
 */
Dwarf_Off rpt_dwunits__cu(struct rpt_dwunits *u, Dwarf *dw, Dwarf_Addr addr);

/**
 * rpt_dwunits__rank() - where the unit holding @addr lies in .debug_info,
 * plus one, without waiting; 0 when the file's units need no waiting.
 * Lookups in rank order wait the least.
 */
uint64_t rpt_dwunits__rank(struct rpt_dwunits *u, Dwarf_Addr addr);

/** rpt_dwunits__fini() - release it; no writer may be left. */
void rpt_dwunits__fini(struct rpt_dwunits *u);

#endif /* SA_REPORT_DWUNITS_H */
