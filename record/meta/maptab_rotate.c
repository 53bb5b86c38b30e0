// SPDX-License-Identifier: MIT
/*
 * maptab_rotate.c - what the mapping table forgets: images two drains
 * after their process exited or exec'd; at a rotation (--rotate) the
 * images of processes gone, then the build ids no image left names, in the
 * elfsyms registry and the fed set; and the tables shrink. Its counts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "maptab_int.h"

/* Has the image's process gone? Its exit was seen, or /proc/PID is gone. */
static bool img_gone(const struct image *im)
{
	char path[32];

	if (im->expire)
		return true;
	snprintf(path, sizeof(path), "/proc/%u", im->pid);
	return access(path, F_OK) && errno == ENOENT;
}

/* The hash and the image array sized for the images left. */
static void refit(struct rec_maptab *mt)
{
	size_t cap = 512;

	while (mt->nimgs * 2 > cap)
		cap *= 2;
	if (cap > mt->hash_cap)
		cap = mt->hash_cap;
	if (maptab_rehash(mt, cap) && maptab_rehash(mt, mt->hash_cap))
		mt->hash_cap = 0; /* as rec_maptab__drained(): found again from /proc */
	cap = mt->nimgs * 2 > 256 ? mt->nimgs * 2 : 256;
	if (mt->cap > 4 * cap) {
		struct image *p = realloc(mt->imgs, cap * sizeof(*p));

		if (p) {
			mt->imgs = p;
			mt->cap = cap;
		}
	}
}

/* The build ids handed over with an fd that a kept file still has. */
static void refeed(struct rec_maptab *mt)
{
	struct rec_htab *fed = rec_htab__new(sizeof(struct bidkey), 0);
	size_t i, j;

	if (!fed)
		return; /* a superset: such a file is registered without an fd */
	for (i = 0; i < mt->nimgs; i++)
		for (j = 0; j < mt->imgs[i].n; j++) {
			const struct mapent *e = &mt->imgs[i].maps[j];
			struct bidkey k = {.len = e->m.build_id.len};

			if (e->file < 0)
				continue;
			/* e->bid: e->m.build_id.data is stale once the array moved */
			memcpy(k.bid, e->bid, k.len);
			/* out of memory: a later mapping opens the file again */
			if (rec_htab__get(mt->fed, &k))
				rec_htab__put(fed, &k, NULL);
		}
	rec_htab__free(mt->fed);
	mt->fed = fed;
}

/* Drop the elfsyms files no image names, and renumber the entries' ids. */
static void forget_files(struct rec_maptab *mt)
{
	size_t n = mt->es ? rec_elfsyms__count(mt->es) : 0, i, j;
	int *ids;

	if (!n || !(ids = calloc(n, sizeof(*ids))))
		return;
	for (i = 0; i < mt->nimgs; i++)
		for (j = 0; j < mt->imgs[i].n; j++)
			if (mt->imgs[i].maps[j].file >= 0)
				ids[mt->imgs[i].maps[j].file] = 1;
	if (!rec_elfsyms__forget(mt->es, ids, n)) {
		for (i = 0; i < mt->nimgs; i++)
			for (j = 0; j < mt->imgs[i].n; j++)
				if (mt->imgs[i].maps[j].file >= 0)
					mt->imgs[i].maps[j].file = ids[mt->imgs[i].maps[j].file];
		refeed(mt);
	}
	free(ids);
}

void rec_maptab__new_file(struct rec_maptab *mt)
{
	size_t i, k = 0;

	mt->files++;
	for (i = 0; i < mt->nimgs; i++) {
		struct image *im = &mt->imgs[i];

		/* named in neither the file just closed nor the one before */
		if (mt->files - im->seen > 2 && img_gone(im)) {
			maptab_free_img(mt, im);
			continue;
		}
		mt->imgs[k++] = *im;
	}
	mt->nimgs = k;
	if (mt->hash_cap)
		refit(mt);
	forget_files(mt);
}

size_t rec_maptab__entries(const struct rec_maptab *mt)
{
	size_t i, n = 0;

	for (i = 0; i < mt->nimgs; i++)
		n += mt->imgs[i].n;
	return n;
}

size_t rec_maptab__fed(const struct rec_maptab *mt)
{
	return rec_htab__len(mt->fed);
}

void rec_maptab__exit(struct rec_maptab *mt, uint32_t pid)
{
	size_t i;

	for (i = 0; i < mt->nimgs; i++)
		if (mt->imgs[i].pid == pid && !mt->imgs[i].expire)
			mt->imgs[i].expire = EXIT_DRAINS;
}

void rec_maptab__exec(struct rec_maptab *mt, uint32_t pid, uint32_t gen)
{
	size_t i;

	for (i = 0; i < mt->nimgs; i++)
		if (mt->imgs[i].pid == pid && mt->imgs[i].gen != gen && !mt->imgs[i].expire)
			mt->imgs[i].expire = EXIT_DRAINS;
}

uint64_t rec_maptab__over(const struct rec_maptab *mt, uint64_t *cut)
{
	*cut = mt->cut;
	return mt->over;
}

uint64_t rec_maptab__clipped(const struct rec_maptab *mt)
{
	return mt->clipped;
}

size_t rec_maptab__images(const struct rec_maptab *mt)
{
	return mt->nimgs;
}
