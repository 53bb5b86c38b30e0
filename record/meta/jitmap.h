/* SPDX-License-Identifier: MIT */
/*
 * jitmap.h - JIT symbol maps (/tmp/perf-PID.map, written by node
 * --perf-basic-prof, the JVM's perf agents, LuaJIT ...) of recorded
 * processes, copied into the recording incrementally as JITSYM records.
 */
#ifndef REC_JITMAP_H
#define REC_JITMAP_H

#include <stdint.h>
#include "rec_sink.h"

struct rec_jitmap;

/**
 * rec_jitmap__new() - an empty set of tracked processes.
 * @proc: the procfs root, NULL for "/proc" (tests point it elsewhere).
 * @return a set released with rec_jitmap__free(), or NULL with errno.
 */
struct rec_jitmap *rec_jitmap__new(const char *proc);

/**
 * rec_jitmap__note() - @pid has samples: track its map file. The file is
 * PROC/PID/root/tmp/perf-NSPID.map, NSPID being the pid in the process's
 * own pid namespace (the last NSpid of PROC/PID/status), so a process in a
 * container is read inside its mount namespace (RESOLVE_IN_ROOT). The file
 * must be a regular file, not a symlink, owned by the process's real or
 * effective uid (or root's and world-readable), at most 256 MiB; a refused
 * file is named once on stderr and never read (docs/security.md).
 * Idempotent and cheap.
 * @return 0 or -ENOMEM.
 */
int rec_jitmap__note(struct rec_jitmap *jm, uint32_t pid);

/**
 * rec_jitmap__poll() - emit a JITSYM record for every complete line added
 * to a tracked map file since the last poll (an open fd is kept per file,
 * so it stays readable after the process is gone). A map truncated or
 * rewritten in place (the bytes before the offset read changed) is read
 * again from its start; one replaced by another file (the open one has no
 * link left) is reopened by its path. Lines read before stay in the
 * recording. Call at each drain: each call reads at most 8 MiB in at most
 * 50 ms over all files, the rest waits for the next drain; over the run,
 * each process, each file (device, inode) and each owner uid reads within
 * a budget that refills in an hour (jitmap.c), rotations included.
 * @return records emitted, or the sink's negative errno.
 */
int rec_jitmap__poll(struct rec_jitmap *jm, const struct rec_sink *sink);

/**
 * rec_jitmap__exit() - @pid exited: copy what its map file still holds,
 * then stop tracking it. Does nothing for a pid not tracked.
 */
int rec_jitmap__exit(struct rec_jitmap *jm, uint32_t pid, const struct rec_sink *sink);

/**
 * rec_jitmap__new_file() - the writer moved to a new file (--rotate): each
 * map is read again from its start, so the new file has every line.
 */
void rec_jitmap__new_file(struct rec_jitmap *jm);

struct rec_jitmap_stats {
	uint64_t bytes;	    /* bytes of map files read */
	uint64_t rewritten; /* maps truncated or rewritten in place, read again */
	uint64_t replaced;  /* maps replaced by another file (rename), reopened */
	/* times a map's reading stopped at its process's, file's, owner's budget */
	uint64_t over_proc, over_file, over_user;
};

/** rec_jitmap__stats() - copy the counters into @st. */
void rec_jitmap__stats(const struct rec_jitmap *jm, struct rec_jitmap_stats *st);

/** rec_jitmap__free() - close every file, free everything. Accepts NULL. */
void rec_jitmap__free(struct rec_jitmap *jm);

#endif /* REC_JITMAP_H */
