// SPDX-License-Identifier: MIT
/*
 * golines.c - the ranges of a Go binary that samples hit, each with its
 * frames (gopclntab.c), kept sorted by file offset, and their ULINE
 * records. An offset seen once is not looked up again in the same file.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "golines.h"
#include "grow.h"
#include "htab.h"
#include "lowerbound.h"

struct range {
	uint64_t lo, hi; /* file offsets */
	uint32_t first;	 /* its frames in gl->fr, outermost first */
	uint8_t n;
	bool pending;
};

struct rec_golines {
	struct rec_gopcln *pcln;
	struct rec_golines_load loads[REC_GOLINES_MAX_LOADS];
	size_t nloads;
	struct rec_htab *seen; /* offsets noted in this file */
	struct range *r;       /* sorted by lo, not overlapping */
	size_t nr, rcap;
	struct rec_goframe *fr;
	size_t nfr, frcap;
	size_t npending;
};

struct rec_golines *rec_golines__new(struct rec_gopcln *pcln, const struct rec_golines_load *loads,
				     size_t nloads)
{
	struct rec_golines *gl = calloc(1, sizeof(*gl));

	if (!gl || !(gl->seen = rec_htab__new(sizeof(uint64_t), 1))) {
		free(gl);
		rec_gopcln__free(pcln);
		errno = ENOMEM;
		return NULL;
	}
	gl->pcln = pcln;
	gl->nloads = nloads < REC_GOLINES_MAX_LOADS ? nloads : REC_GOLINES_MAX_LOADS;
	memcpy(gl->loads, loads, gl->nloads * sizeof(*loads));
	return gl;
}

void rec_golines__free(struct rec_golines *gl)
{
	if (!gl)
		return;
	rec_gopcln__free(gl->pcln);
	rec_htab__free(gl->seen);
	SAC_FREE_ALL(gl->r, gl->fr, gl);
}

uint64_t rec_golines__bytes(const struct rec_golines *gl)
{
	return gl ? rec_gopcln__bytes(gl->pcln) : 0;
}

/* The segment holding file offset @off, or NULL. */
static const struct rec_golines_load *load_of(const struct rec_golines *gl, uint64_t off)
{
	for (size_t i = 0; i < gl->nloads; i++)
		if (off >= gl->loads[i].off && off - gl->loads[i].off < gl->loads[i].filesz)
			return &gl->loads[i];
	return NULL;
}

/* Index of the first range whose lo is above @off. */
static size_t upper(const struct rec_golines *gl, uint64_t off)
{
	return SAC_FIRST_ABOVE(gl->r, gl->nr, lo, off);
}

/*
 * The range of @off, looked up and kept as wanted.
 * @return 1 when added, 0 when known or without a line, -ENOMEM.
 */
static int add_range(struct rec_golines *gl, uint64_t off)
{
	struct rec_goframe tmp[REC_GOLINES_MAX_DEPTH];
	const struct rec_golines_load *ld = load_of(gl, off);
	size_t at = upper(gl, off);
	uint64_t va, lo, hi, seg_end;
	int n;

	if (at && off < gl->r[at - 1].hi)
		return 0;
	if (!ld)
		return 0;
	va = off - ld->off + ld->vaddr;
	n = rec_gopcln__frames(gl->pcln, va, tmp, REC_GOLINES_MAX_DEPTH, &lo, &hi);
	if (n <= 0)
		return 0;
	if (gl->nr >= REC_GOLINES_MAX_RANGES)
		return 0; /* dropped: no ULINE record */
	if (SAC_GROW(gl->r, gl->rcap, gl->nr + 1, 256) ||
	    SAC_GROW(gl->fr, gl->frcap, gl->nfr + n, 1024))
		return -ENOMEM;
	/* in file offsets, within the segment and between the known neighbours */
	seg_end = ld->vaddr + ld->filesz;
	lo = lo < ld->vaddr ? ld->off : lo - ld->vaddr + ld->off;
	hi = (hi > seg_end ? seg_end : hi) - ld->vaddr + ld->off;
	if (at && lo < gl->r[at - 1].hi)
		lo = gl->r[at - 1].hi;
	if (at < gl->nr && hi > gl->r[at].lo)
		hi = gl->r[at].lo;
	memmove(&gl->r[at + 1], &gl->r[at], (gl->nr - at) * sizeof(*gl->r));
	gl->r[at] = (struct range){lo, hi, (uint32_t)gl->nfr, (uint8_t)n, true};
	gl->nr++;
	memcpy(&gl->fr[gl->nfr], tmp, n * sizeof(*tmp));
	gl->nfr += n;
	gl->npending++;
	return 1;
}

int rec_golines__note(struct rec_golines *gl, uint64_t off)
{
	bool is_new = false;
	int a, b = 0;

	if (!gl)
		return 0;
	if (rec_htab__get(gl->seen, &off))
		return 0;
	if (rec_htab__len(gl->seen) >= REC_GOLINES_MAX_SEEN)
		return 0; /* dropped: no ULINE record */
	if (!rec_htab__put(gl->seen, &off, &is_new))
		return -ENOMEM;
	a = add_range(gl, off);
	if (a >= 0 && off)
		b = add_range(gl, off - 1);
	if (a < 0 || b < 0)
		return -ENOMEM;
	return a || b;
}

int rec_golines__flush(struct rec_golines *gl, const struct rec_sink *sink)
{
	struct saf_record rec = {.kind = SAF_REC_ULINE};
	int total = 0, err;

	for (size_t i = 0; gl && gl->npending && i < gl->nr; i++) {
		struct range *r = &gl->r[i];

		if (!r->pending)
			continue;
		for (unsigned k = 0; k < r->n; k++) {
			const struct rec_goframe *f = &gl->fr[r->first + k];

			rec.uline = (struct saf_uline){.offset = r->lo,
						       .size = r->hi - r->lo,
						       .depth = k,
						       .line = f->line,
						       .file = rec_str(f->file),
						       .name = rec_str(f->name)};
			err = rec_sink__emit(sink, &rec);
			if (err)
				return err;
			total++;
		}
		r->pending = false;
		gl->npending--;
	}
	return total;
}

void rec_golines__new_file(struct rec_golines *gl)
{
	if (!gl)
		return;
	rec_htab__clear(gl->seen);
	gl->nr = 0;
	gl->nfr = 0;
	gl->npending = 0;
}
