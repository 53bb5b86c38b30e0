// SPDX-License-Identifier: MIT
/*
 * saf_util.c - the one allocation hook of format/ (zstd's contexts use it
 * too, through ZSTD_customMem) and the small name helpers of saf.h.
 */
#include <stdlib.h>
#include <string.h>

#include "saf_internal.h"

static void *(*hook_malloc)(size_t) = malloc;
static void *(*hook_realloc)(void *, size_t) = realloc;
static void (*hook_free)(void *) = free;

void saf_set_allocator(void *(*malloc_fn)(size_t), void *(*realloc_fn)(void *, size_t),
		       void (*free_fn)(void *))
{
	hook_malloc = malloc_fn ? malloc_fn : malloc;
	hook_realloc = realloc_fn ? realloc_fn : realloc;
	hook_free = free_fn ? free_fn : free;
}

void *saf_malloc(size_t size)
{
	return hook_malloc(size ? size : 1);
}

void *saf_realloc(void *ptr, size_t size)
{
	return hook_realloc(ptr, size ? size : 1);
}

void saf_free(void *ptr)
{
	if (ptr)
		hook_free(ptr);
}

static void *zstd_alloc(void *opaque, size_t size)
{
	(void)opaque;
	return saf_malloc(size);
}

static void zstd_free(void *opaque, void *ptr)
{
	(void)opaque;
	saf_free(ptr);
}

ZSTD_customMem saf_zstd_mem(void)
{
	ZSTD_customMem mem = {zstd_alloc, zstd_free, NULL};

	return mem;
}

const char *saf_counter__name(uint32_t id)
{
	static const char *const names[] = {
		[SAF_CTR_RUNS] = "runs",
		[SAF_CTR_KEPT] = "kept",
		[SAF_CTR_FILTERED] = "filtered",
		[SAF_CTR_LOST_USTACK] = "lost_ustack",
		[SAF_CTR_LOST_KSTACK] = "lost_kstack",
		[SAF_CTR_LOST_RINGBUF] = "lost_ringbuf",
		[SAF_CTR_LOST_MAPFULL] = "lost_mapfull",
		[SAF_CTR_LOST_OTHER] = "lost_other",
		[SAF_CTR_TRUNCATED] = "truncated",
		[SAF_CTR_COLLISIONS] = "collisions",
		[SAF_CTR_LOST_USERSPACE] = "lost_userspace",
		[SAF_CTR_MAPFULL_RECOVERED] = "mapfull_recovered",
		[SAF_CTR_SIDEBAND_LOST] = "sideband_lost",
		[SAF_CTR_OFF_RUNS] = "off_runs",
		[SAF_CTR_OFF_KEPT] = "off_kept",
		[SAF_CTR_OFF_SHORT] = "off_short",
		[SAF_CTR_OFF_LOST_USTACK] = "off_lost_ustack",
		[SAF_CTR_OFF_LOST_KSTACK] = "off_lost_kstack",
		[SAF_CTR_OFF_LOST_COLLISION] = "off_lost_collision",
		[SAF_CTR_OFF_LOST_MAPFULL] = "off_lost_mapfull",
		[SAF_CTR_OFF_LOST_OTHER] = "off_lost_other",
		[SAF_CTR_OFF_LOST_USERSPACE] = "off_lost_userspace",
		[SAF_CTR_OFF_LOST_RINGBUF] = "off_lost_ringbuf",
		[SAF_CTR_OFF_RECOVERED] = "off_recovered",
		[SAF_CTR_UW_WALKED] = "uw_walked",
		[SAF_CTR_UW_COPIED] = "uw_copied",
		[SAF_CTR_OFF_UW_WALKED] = "off_uw_walked",
		[SAF_CTR_OFF_UW_FP] = "off_uw_fp",
		[SAF_CTR_OFF_UW_CUT] = "off_uw_cut",
		[SAF_CTR_FILES_SKIPPED] = "files_skipped",
		[SAF_CTR_THROTTLED] = "throttled",
		[SAF_CTR_MAPS_UNWRITTEN] = "maps_unwritten",
	};

	if (id >= sizeof(names) / sizeof(names[0]))
		return NULL;
	return names[id];
}

const char *saf_chunk_type__name(uint32_t type)
{
	switch (type) {
	case SAF_CHUNK_META:
		return "meta";
	case SAF_CHUNK_PROCS:
		return "procs";
	case SAF_CHUNK_STACKS:
		return "stacks";
	case SAF_CHUNK_SAMPLES:
		return "samples";
	case SAF_CHUNK_KSYMS:
		return "ksyms";
	case SAF_CHUNK_USYMS:
		return "usyms";
	case SAF_CHUNK_JIT:
		return "jit";
	case SAF_CHUNK_END:
		return "end";
	}
	return NULL;
}

struct saf_str saf_str__from(const char *s)
{
	struct saf_str str = {s, s ? (uint32_t)strnlen(s, SAF_MAX_STRING + 1) : 0};

	return str;
}
