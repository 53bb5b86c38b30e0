/* SPDX-License-Identifier: MIT */
/*
 * maptab_int.h - the insides of the mapping table, shared by maptab.c and
 * maptab_rotate.c (what a rotation forgets). Not for other modules.
 */
#ifndef REC_MAPTAB_INT_H
#define REC_MAPTAB_INT_H

#include <string.h>
#include "htab.h"
#include "maptab.h"

/* Drains an image outlives its process's exit or exec (its samples are noted first). */
#define EXIT_DRAINS 2

/*
 * Bounds on what the table keeps: exec mappings per image, bytes of
 * entries and paths over all images, and the time one read of
 * /proc/PID/maps may take (60,000 mappings at a 4,000-byte path take the
 * kernel 4.4 s to list). Past them mappings are not tracked, and counted.
 */
#define MAPTAB_MAX_PER_IMAGE 4096
#define MAPTAB_MAX_BYTES     (64ull << 20)
#define MAPTAB_PROC_NS	     100000000ull

struct mapent {
	struct saf_map m; /* path and build_id: use entry_map(), entries move */
	int file;	  /* elfsyms id, -1 none */
	bool emitted;	  /* its MAP record is in the output */
	bool written;	  /* its MAP record went to some file of the recording */
	bool own_path;	  /* path is this entry's, else an earlier one's (same_file()) */
	char *path;
	uint8_t bid[SAF_MAX_BUILD_ID];
};

struct image {
	uint32_t pid, gen;
	int expire;    /* drains left before removal; 0 = alive */
	uint32_t seen; /* mt->files when last found for a sample or emitted */
	struct mapent *maps;
	size_t n, cap;
};

struct devino {
	uint64_t dev, ino;
	int bid_len;   /* < 0: no build id readable */
	uint32_t kind; /* enum saf_id_kind of bid */
	uint8_t bid[SAF_MAX_BUILD_ID];
};

struct rec_maptab {
	struct rec_elfsyms *es;
	struct image *imgs;
	size_t nimgs, cap;
	int *hash; /* image indices, -1 empty */
	size_t hash_cap;
	struct devino *dis;
	size_t ndis, dis_cap;
	rec_maptab_map_fn on_map; /* the in-kernel unwinder's tables (record/cfi/uwtab.c) */
	void *on_map_arg;
	rec_maptab_want_fn on_map_want; /* NULL: every process */
	struct rec_htab *fed;		/* struct bidkey -> nothing: handed to es with an fd */
	const struct rec_vdso *vdso;	/* borrowed: the image every [vdso] maps, or NULL */
	uint32_t files;			/* rec_maptab__new_file() calls */
	uint64_t clipped;		/* paths over SAF_MAX_STRING bytes, clipped */
	uint64_t bytes;			/* of entries and their own paths, all images */
	uint64_t over;			/* mappings not tracked: past a bound above */
	uint64_t cut;			/* /proc/PID/maps reads stopped at MAPTAB_PROC_NS */
	bool defer;			/* rec_maptab__defer() */
	uint64_t unwritten;		/* with defer: entries dropped never written */
	uint64_t unwritten_imgs;	/* images dropped with such entries */
};

struct bidkey {
	uint32_t len;
	uint8_t bid[SAF_MAX_BUILD_ID];
};

static inline struct bidkey maptab_bid_key(const struct saf_map *m)
{
	struct bidkey k = {.len = m->build_id.len};

	memcpy(k.bid, m->build_id.data, k.len);
	return k;
}

/* maptab_rehash() - the hash over mt->imgs at @cap slots; -ENOMEM: unchanged. */
int maptab_rehash(struct rec_maptab *mt, size_t cap);

/* maptab_find() - the index of image (pid, gen) in mt->imgs, or -1. */
long maptab_find(const struct rec_maptab *mt, uint32_t pid, uint32_t gen);

/* maptab_free_img() - free @im's mappings (not @im), taken off mt->bytes. */
void maptab_free_img(struct rec_maptab *mt, struct image *im);

#endif /* REC_MAPTAB_INT_H */
