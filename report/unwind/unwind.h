/* SPDX-License-Identifier: MIT */
/*
 * unwind.h - offline unwinding of raw user stacks (USTACK records,
 * docs/format.md) with the binaries' call-frame information (.eh_frame,
 * .debug_frame), as libdwfl's unwinder walks them. Each binary is opened
 * once for every process image that maps it (uwbin.h); captured registers
 * and stack bytes stand in for the live process. See docs/unwinding.md.
 */
#ifndef SA_REPORT_UNWIND_H
#define SA_REPORT_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "saf.h"

/* One executable mapping of a process image. */
struct rpt_unwind_module {
	const char *path;     /* file holding the code and its CFI; borrowed */
	const char *build_id; /* lower-case hex to check the file against, NULL = unchecked */
	uint64_t start, end;  /* [start, end) in the process */
	uint64_t pgoff;	      /* file offset of start */
};

/* The captured state of one sample (regs indexed by enum saf_ureg). */
struct rpt_unwind_regs {
	uint64_t ip, sp, fp;
};

struct rpt_unwinder;

/**
 * rpt_unwinder__new() - an unwinder with no process images yet.
 * @return an object released with rpt_unwinder__free(), or NULL with
 * errno = ENOMEM. Not thread-safe.
 */
struct rpt_unwinder *rpt_unwinder__new(void);

/** rpt_unwinder__free() - release every process image. Accepts NULL. */
void rpt_unwinder__free(struct rpt_unwinder *u);

/**
 * rpt_unwinder__unwind() - unwind one captured user stack.
 * @key: names the process image (e.g. pid << 32 | gen); its modules are
 *       loaded on first use and again whenever @nmods differs from the
 *       count it was built with (a process that mapped more code).
 * @mods, @nmods: the image's executable mappings; borrowed for the call.
 * @regs: registers at the sample.
 * @copy: the captured bytes near regs->sp (a USTACK's or USTACK_SPARSE's,
 *       saf_urun__next()); borrowed. A read outside them fails.
 * @ips, @cap: out: return addresses, leaf (regs->ip) first, as a
 *       frame-pointer walk gives them (callers are not adjusted by -1).
 *
 * The walk stops at the outermost frame, at code without CFI, or where it
 * would read outside the copy. Files whose build id differs are not used.
 * @return the number of frames (>= 1: the leaf is always known), or
 * -ENOMEM.
 */
int rpt_unwinder__unwind(struct rpt_unwinder *u, uint64_t key, const struct rpt_unwind_module *mods,
			 size_t nmods, const struct rpt_unwind_regs *regs,
			 const struct saf_ustack *copy, uint64_t *ips, uint32_t cap);

/**
 * rpt_unwinder__nunwinds() - unwinds really done (cache misses); the rest
 * of the calls were answered from the cache.
 */
uint64_t rpt_unwinder__nunwinds(const struct rpt_unwinder *u);

/**
 * rpt_unwinder__dwfl_only() - with @on, every unwind is libdwfl's own walk
 * instead of the walk over cached CFI rows (which gives the same frames
 * and falls back to libdwfl where a rule is a DWARF expression). For
 * cross-checks; SA_UNWIND=libdwfl in sa-report's environment sets it.
 */
void rpt_unwinder__dwfl_only(struct rpt_unwinder *u, bool on);

struct rpt_uwpick;
/**
 * rpt_unwinder__pick() - the binaries walks stopped at for want of them
 * (uwpick.h); borrowed, valid until rpt_unwinder__free().
 */
const struct rpt_uwpick *rpt_unwinder__pick(const struct rpt_unwinder *u);
#endif /* SA_REPORT_UNWIND_H */
