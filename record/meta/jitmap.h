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
 * so it stays readable after the process is gone). Call at each drain:
 * each call reads at most 8 MiB in at most 50 ms over all files, the rest
 * waits for the next drain.
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

/** rec_jitmap__bytes() - bytes of map files read so far. */
uint64_t rec_jitmap__bytes(const struct rec_jitmap *jm);

/** rec_jitmap__free() - close every file, free everything. Accepts NULL. */
void rec_jitmap__free(struct rec_jitmap *jm);

#endif /* REC_JITMAP_H */
