// SPDX-License-Identifier: MIT
/*
 * uwpick.c - the recorder's walk (USTACK walked frames, format 1.3) where
 * sa-report cannot walk a capture itself for want of a binary, so a dwarf
 * recording reads off the box as a frame-pointer one does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "uwpick.h"

/*
 * The mapping of @mods holding @addr when it is an ELF binary the recorder
 * saw (it has a build id), or -1: no mapping, anonymous code, or a named
 * mapping that is no binary (V8's code space, a memfd), where sa-report's
 * own walk (frame pointers through JIT code) goes further than the
 * recorder's, which stops at code without CFI.
 */
static int mod_at(const struct rpt_unwind_module *mods, size_t nmods, uint64_t addr)
{
	for (size_t i = 0; i < nmods; i++)
		if (addr >= mods[i].start && addr < mods[i].end)
			return mods[i].path && *mods[i].path && mods[i].build_id ? (int)i : -1;
	return -1;
}

/*
 * Is the binary of the mapping at @addr one sa-report could not load? Not
 * when another mapping of the same file has a module: node, for one, copies
 * its text to a second, anonymous-looking mapping (for huge pages) that
 * /proc names after the binary, and which no module covers.
 */
static bool missing(const struct rpt_uwmods *t, const struct rpt_unwind_module *mods, size_t nmods,
		    uint64_t addr)
{
	int k = mod_at(mods, nmods, addr);

	if (k < 0)
		return false;
	if (rpt_uwmods__at(t, addr))
		return false;
	for (size_t i = 0; i < nmods; i++)
		if ((int)i != k && mods[i].path && !strcmp(mods[i].path, mods[k].path) &&
		    rpt_uwmods__at(t, mods[i].start))
			return false;
	return true;
}

bool rpt_uwpick__recorded(const struct rpt_uwmods *t, const struct rpt_unwind_module *mods,
			  size_t nmods, const struct saf_ustack *copy)
{
	if (copy->walk == SAF_WALK_NONE || !copy->nwalked)
		return false;
	for (uint32_t i = 0; i < copy->nwalked; i++)
		if (missing(t, mods, nmods, copy->walked[i] - (i ? 1 : 0)))
			return true;
	return false;
}

/*
 * The mapping of @mods where a walk of @n frames @ips stopped for want of
 * its binary: the outermost frame's (pc - 1 for a caller) when @t has no
 * module there. @return its index, or -1 when the walk did not stop at a
 * missing binary.
 */
static int walk_stop(const struct rpt_uwmods *t, const struct rpt_unwind_module *mods, size_t nmods,
		     const uint64_t *ips, size_t n)
{
	uint64_t addr;

	if (!n)
		return -1;
	addr = ips[n - 1] - (n > 1 ? 1 : 0);
	return missing(t, mods, nmods, addr) ? mod_at(mods, nmods, addr) : -1;
}

int rpt_uwpick__copy(const struct saf_ustack *copy, uint64_t *ips, uint32_t cap)
{
	uint32_t n = copy->nwalked < cap ? copy->nwalked : cap;

	memcpy(ips, copy->walked, n * sizeof(*ips));
	return (int)n;
}

int rpt_uwpick__note(struct rpt_uwpick *p, const struct rpt_uwmods *t,
		     const struct rpt_unwind_module *mods, size_t nmods, const uint64_t *ips,
		     size_t n)
{
	int k = walk_stop(t, mods, nmods, ips, n);
	const char *bid;
	struct rpt_uwmissing *m;

	if (k < 0)
		return 0;
	bid = mods[k].build_id ? mods[k].build_id : "";
	for (size_t i = 0; i < p->nmissing; i++)
		if (!strcmp(p->missing[i].path, mods[k].path) &&
		    !strcmp(p->missing[i].build_id, bid)) {
			p->missing[i].walks++;
			return 0;
		}
	if (SAC_GROW(p->missing, p->missing_cap, p->nmissing + 1, 4))
		return -ENOMEM;
	m = &p->missing[p->nmissing];
	*m = (struct rpt_uwmissing){strdup(mods[k].path), strdup(bid), 1};
	if (!m->path || !m->build_id) {
		free(m->path);
		free(m->build_id);
		return -ENOMEM;
	}
	p->nmissing++;
	return 0;
}

void rpt_uwpick__fini(struct rpt_uwpick *p)
{
	for (size_t i = 0; i < p->nmissing; i++) {
		free(p->missing[i].path);
		free(p->missing[i].build_id);
	}
	free(p->missing);
	*p = (struct rpt_uwpick){NULL, 0, 0};
}
