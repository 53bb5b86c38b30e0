// SPDX-License-Identifier: MIT
/*
 * maptab_defer.c - with rec_maptab__defer(), the MAP records a recording
 * writes are those of the mappings its samples hit, not of every mapping
 * seen: the side band's mappings are tracked (they must be caught while
 * the process lives) and written at the drain, when a sampled user stack
 * falls in one. A `nobody` loop of short processes mapping 5,000 files
 * each wrote 0.5 MB/s of MAP records at -F 19 before (tests/cli/5212).
 */
#include <errno.h>
#include "maptab_int.h"

void rec_maptab__defer(struct rec_maptab *mt, bool on)
{
	mt->defer = on;
}

bool rec_maptab__deferred(const struct rec_maptab *mt)
{
	return mt->defer;
}

/* The entry's MAP record, at its own time (the mmap's, before any sample in it). */
static int emit_entry(struct mapent *e, uint64_t now, const struct rec_sink *sink)
{
	struct saf_record rec = {.kind = SAF_REC_MAP};

	e->emitted = e->written = true;
	rec.map = e->m;
	rec.map.path = rec_str(e->path);
	rec.map.build_id.data = e->bid;
	if (!rec.map.time_ns || rec.map.time_ns > now)
		rec.map.time_ns = now;
	return rec_sink__emit(sink, &rec);
}

/* The image (pid, gen), read from /proc when unknown and @may_load; NULL: none. */
static struct image *image_of(struct rec_maptab *mt, uint32_t pid, uint32_t gen, bool may_load)
{
	long k;

	if (may_load && maptab_find(mt, pid, gen) < 0)
		rec_maptab__load_proc(mt, pid, gen);
	k = maptab_find(mt, pid, gen);
	if (k < 0)
		return NULL;
	mt->imgs[k].seen = mt->files;
	return &mt->imgs[k];
}

int rec_maptab__emit_hits(struct rec_maptab *mt, uint32_t pid, uint32_t gen, const uint64_t *ips,
			  size_t n, bool may_load, uint64_t now, const struct rec_sink *sink)
{
	struct image *im;
	int err, total = 0;

	if (!mt->defer || !n)
		return 0;
	im = image_of(mt, pid, gen, may_load);
	for (size_t i = 0; im && i < n; i++)
		for (size_t j = 0; j < im->n; j++) {
			struct mapent *e = &im->maps[j];

			if (e->emitted || ips[i] < e->m.start || ips[i] >= e->m.end)
				continue;
			if ((err = emit_entry(e, now, sink)))
				return err;
			total++;
		}
	return total;
}

int rec_maptab__emit_pending(struct rec_maptab *mt, uint32_t pid, uint32_t gen, uint64_t now,
			     const struct rec_sink *sink)
{
	struct image *im;
	int err, total = 0;

	if (!mt->defer)
		return 0;
	im = image_of(mt, pid, gen, true);
	for (size_t j = 0; im && j < im->n; j++) {
		if (im->maps[j].emitted)
			continue;
		if ((err = emit_entry(&im->maps[j], now, sink)))
			return err;
		total++;
	}
	return total;
}

uint64_t rec_maptab__unwritten_dropped(const struct rec_maptab *mt)
{
	return mt->unwritten;
}

uint64_t rec_maptab__unwritten(const struct rec_maptab *mt, uint64_t *imgs)
{
	uint64_t n = mt->unwritten, k = mt->unwritten_imgs;
	size_t i, j, left;

	for (i = 0; mt->defer && i < mt->nimgs; i++) {
		for (j = 0, left = 0; j < mt->imgs[i].n; j++)
			left += !mt->imgs[i].maps[j].written;
		n += left;
		k += left > 0;
	}
	if (imgs)
		*imgs = k;
	return n;
}
