/* SPDX-License-Identifier: MIT */
/*
 * rec_output.h - the output file and its META record (output.c). Used by
 * loop.c.
 */
#ifndef REC_OUTPUT_H
#define REC_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rec_opts;
struct saf_writer;

/**
 * rec_output_open() - create the recording under a temporary name beside
 * @path ("@path.tmp-PID", O_EXCL | O_NOFOLLOW, mode 0600), so that a start
 * that fails (no privileges, no BPF) leaves @path and @path.old as they were.
 * @tmp: gets the temporary name (the caller frees it) on success.
 * @return a writable fd the caller closes, or a negative errno.
 */
int rec_output_open(const char *path, char **tmp);

/**
 * rec_output_lock() - make sure no other sa-record writes @path or its
 * --rotate set while this one runs: an exclusive flock(2) on "@path.lock"
 * (created 0600 beside it and left empty, never through a symbolic link;
 * one that is not a regular file of this user is refused).
 * With @keep_old, also refuse a @path.old that a rename of an existing
 * @path could not replace (a directory, a FIFO, a socket, a device), so
 * that it is said before sampling starts, not after the first interval.
 * @err: gets the message on failure.
 * @return the lock's fd for rec_output_unlock(), or a negative errno
 * (-EBUSY: another recorder holds it).
 */
int rec_output_lock(const char *path, bool keep_old, char *err, size_t errsz);

/**
 * rec_output_unlock() - remove "@path.lock" (if it is still the one @fd
 * holds) and release it. Accepts a negative @fd.
 */
void rec_output_unlock(const char *path, int fd);

/** rec_output_lock_name() - "@path.lock", malloc'd; NULL without memory. */
char *rec_output_lock_name(const char *path);

/**
 * rec_output_unlink_lock() - remove @lock (rec_output_lock_name()) if it
 * is still the file @fd holds; @fd stays open. Async-signal-safe (fstat,
 * lstat, unlink): a second stop signal during start-up calls it.
 */
void rec_output_unlink_lock(const char *lock, int fd);

/**
 * rec_output_commit() - the first interval is written: once @fd (the
 * temporary file's) is on disk (fdatasync), move an existing @path (a
 * link is moved, not followed) to @path.old, then @tmp to @path. Nothing
 * is renamed when the data cannot reach the disk.
 * @sync: false once stopping: no fdatasync(), the write-back is left to
 * the kernel, so the stop's budget holds on a busy disk.
 * @err: gets the message, naming the rename that failed.
 * @return 0 or a negative errno (@tmp then still holds the recording).
 */
int rec_output_commit(const char *path, const char *tmp, int fd, bool sync, char *err,
		      size_t errsz);

/**
 * rec_output_realtime_ns() - CLOCK_REALTIME as the recorder uses it for
 * file names and META: plus SA_RECORD_TEST_CLOCK_OFFSET seconds when that
 * is set (tests step the recorder's clock with it, never the system's).
 */
uint64_t rec_output_realtime_ns(void);

/**
 * rec_privilege_hint() - after perf_event_open() or bpf() refused with
 * EPERM or EACCES: say on stderr what sa-record needs and what this
 * host's two sysctls that decide it are (docs/reliability.md,
 * "Least privilege").
 */
void rec_privilege_hint(void);

/**
 * rec_write_meta() - write the META record: host, kernel, boot id, the
 * options of @o, and the start times (@mono_ns is CLOCK_MONOTONIC, the
 * clock of bpf_ktime_get_ns() and of every time in the file). A command
 * line or target over SAF_MAX_STRING bytes is clipped (strclip.h) and
 * counted in *@clipped (@clipped may be NULL).
 * @return 0 or a negative errno from the writer.
 */
int rec_write_meta(struct saf_writer *w, const struct rec_opts *o, uint64_t real_ns,
		   uint64_t mono_ns, int ncpus, uint64_t *clipped);

#endif /* REC_OUTPUT_H */
