/* SPDX-License-Identifier: MIT */
/*
 * rec_output.h - the output file and its META record (output.c). Used by
 * loop.c.
 */
#ifndef REC_OUTPUT_H
#define REC_OUTPUT_H

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
 * rec_output_commit() - the recording really started: move an existing
 * @path (a link is moved, not followed) to @path.old, then @tmp to @path.
 * @return 0 or a negative errno (@tmp then still holds the recording).
 */
int rec_output_commit(const char *path, const char *tmp);

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
 * clock of bpf_ktime_get_ns() and of every time in the file).
 * @return 0 or a negative errno from the writer.
 */
int rec_write_meta(struct saf_writer *w, const struct rec_opts *o, uint64_t real_ns,
		   uint64_t mono_ns, int ncpus);

#endif /* REC_OUTPUT_H */
