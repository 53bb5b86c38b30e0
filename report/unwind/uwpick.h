/* SPDX-License-Identifier: MIT */
/*
 * uwpick.h - which walk a capture gets: sa-report's own from the binaries,
 * or the one sa-record wrote (format 1.3 walked frames) where a binary the
 * capture runs through is not here (docs/unwinding.md).
 */
#ifndef SA_REPORT_UWPICK_H
#define SA_REPORT_UWPICK_H
#include <stdbool.h>
#include <stddef.h>
#include "saf.h"
#include "unwind.h"
#include "uwbin.h"

/**
 * rpt_uwpick__recorded() - should the recorder's frames of @copy stand in
 * for this report's walk? True when the recorder walked the capture and one
 * of its frames (the leaf's pc, each caller's pc - 1) lies in a mapped file
 * of @mods (@nmods, borrowed) that the image's table @t has no module for:
 * the binary is missing or has another build id, so this report's walk
 * would stop there. With every binary here the report walks itself, so its
 * stacks stay comparable with libdwfl's.
 */
bool rpt_uwpick__recorded(const struct rpt_uwmods *t, const struct rpt_unwind_module *mods,
			  size_t nmods, const struct saf_ustack *copy);

/* The binaries walks stopped at for want of them, each once (rpt_uwpick__note()). */
struct rpt_uwpick {
	struct rpt_uwmissing {
		char *path, *build_id; /* owned */
		uint64_t walks;	       /* walks that stopped there */
	} * missing;
	size_t nmissing, missing_cap;
};

/**
 * rpt_uwpick__copy() - the recorder's frames of @copy into @ips (@cap).
 * @return how many.
 */
int rpt_uwpick__copy(const struct saf_ustack *copy, uint64_t *ips, uint32_t cap);

/**
 * rpt_uwpick__note() - note in @p the binary a walk of @n frames @ips
 * stopped at for want of it, if any: the outermost frame's (pc - 1 for a
 * caller) when @t has no module there.
 * @return 0 or -ENOMEM.
 */
int rpt_uwpick__note(struct rpt_uwpick *p, const struct rpt_uwmods *t,
		     const struct rpt_unwind_module *mods, size_t nmods, const uint64_t *ips,
		     size_t n);

/** rpt_uwpick__fini() - release what @p holds. */
void rpt_uwpick__fini(struct rpt_uwpick *p);
#endif /* SA_REPORT_UWPICK_H */
