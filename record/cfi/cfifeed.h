/* SPDX-License-Identifier: MIT */
/*
 * cfifeed.h - --call-graph auto: classify each executable file the first
 * time a process maps it (cfimap.h) and tell the BPF program, through its
 * cfipages map, which 64-byte blocks of code lack frame pointers. Files
 * seen before the BPF program is loaded are kept and written at attach.
 */
#ifndef REC_CFIFEED_H
#define REC_CFIFEED_H

#include <stdint.h>

struct rec_cfifeed;

struct rec_cfifeed_stats {
	uint64_t files;	 /* distinct files classified */
	uint64_t whole;	 /* of which built without frame pointers as a whole */
	uint64_t pages;	 /* map entries with blocks needing CFI */
	uint64_t failed; /* files whose CFI could not be read: frame pointers assumed */
	uint64_t full;	 /* files left unclassified, the map being full: always copied */
};

/** rec_cfifeed__new() - an empty feed; NULL with errno on failure. */
struct rec_cfifeed *rec_cfifeed__new(void);

/**
 * rec_cfifeed__file() - an executable mapping of the file @path (@fd: an
 * open fd of it, borrowed, or -1) was seen: classify the file unless its
 * (device, inode) was seen before. The signature is maptab's file hook
 * (rec_maptab__on_file()); @arg is the feed.
 */
void rec_cfifeed__file(void *arg, int fd, const char *path);

/**
 * rec_cfifeed__attach() - from now on write to the BPF hash map @map_fd
 * (struct sa_cfi_key -> u64), starting with the files seen so far.
 * @return 0 or a negative errno.
 */
int rec_cfifeed__attach(struct rec_cfifeed *f, int map_fd);

/** rec_cfifeed__stats() - what was classified and written so far. */
const struct rec_cfifeed_stats *rec_cfifeed__stats(const struct rec_cfifeed *f);

/** rec_cfifeed__free() - release the feed. Accepts NULL. */
void rec_cfifeed__free(struct rec_cfifeed *f);

#endif /* REC_CFIFEED_H */
