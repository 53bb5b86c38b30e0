/* SPDX-License-Identifier: MIT */
/*
 * bpf_session.h - the BPF side of a recording (bpf_session.c): sa.bpf.c
 * loaded and attached as the options say, its two map sets and their
 * counters, and the maps the drain reads. Used by loop.c and drain/.
 */
#ifndef REC_BPF_SESSION_H
#define REC_BPF_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "record.h"

struct bpf_map;

struct rec_session;

/** Sum over CPUs of one map set's counters. */
struct rec_ctrs {
	__u64 v[SA_CTR__NR];
};

/**
 * rec_session__open() - load sa.bpf.c configured by @o, fill the target map
 * (with @child for `-- CMD`, when > 0), open and attach one perf event per
 * CPU. Sampling has started when it returns.
 * @err: gets a one-line reason on failure.
 * @return a session released with rec_session__free(), or NULL with errno.
 */
struct rec_session *rec_session__open(const struct rec_opts *o, pid_t child, char *err,
				      size_t errsz);

/**
 * rec_session__flip() - make BPF count into the other map set from now on.
 * @old_epoch: gets the epoch that ended; its set is (old_epoch & 1) and may
 * be drained once every program run that read it has finished.
 * @return 0.
 */
int rec_session__flip(struct rec_session *s, __u32 *old_epoch);

/**
 * rec_session__take_ctrs() - what the per-CPU counters of map set @set grew
 * by since they were last taken, summed into @out. They are never reset: a
 * reset after the read would wipe an increment made in between (a run
 * that a stopped vCPU finishes late), which now shows at the next take.
 * Call only on the set BPF is not writing.
 * @return 0 or a negative errno.
 */
int rec_session__take_ctrs(struct rec_session *s, __u32 set, struct rec_ctrs *out);

/**
 * rec_session__diag() - SA_DIAG=1's counters (sa_clock.bpf.h), @n of them;
 * borrowed, valid until rec_session__free(). For experiments.
 */
const volatile __u64 *rec_session__diag(const struct rec_session *s, int *n);

/** rec_session__stack_fd() - fd of set @set's stack map, borrowed. */
int rec_session__stack_fd(const struct rec_session *s, __u32 set);

/** rec_session__counts_fd() - fd of set @set's counts map, borrowed. */
int rec_session__counts_fd(const struct rec_session *s, __u32 set);

/** rec_session__counts_size() - max entries of one counts map. */
__u32 rec_session__counts_size(const struct rec_session *s);

/** rec_session__off_cpu() - true when sa_on_switch records off-CPU time. */
bool rec_session__off_cpu(const struct rec_session *s);

/** rec_session__offcounts_fd() - fd of set @set's off-CPU counts map, borrowed. */
int rec_session__offcounts_fd(const struct rec_session *s, __u32 set);

/** rec_session__offstart_fd() - fd of the map of threads off the CPU, borrowed. */
int rec_session__offstart_fd(const struct rec_session *s);

/** rec_session__offrb() - the off-CPU recovery ring buffer map, borrowed. */
struct bpf_map *rec_session__offrb(const struct rec_session *s);

/** rec_session__gen() - current exec generation of @tgid (0 if none). */
__u32 rec_session__gen(const struct rec_session *s, __u32 tgid);

/** rec_session__ringbuf() - the recovery ring buffer map, borrowed. */
struct bpf_map *rec_session__ringbuf(const struct rec_session *s);

/** rec_session__ustack_ringbuf() - the --call-graph dwarf ring buffer map, borrowed. */
struct bpf_map *rec_session__ustack_ringbuf(const struct rec_session *s);

/**
 * rec_session__uw() - the in-kernel unwinder's maps: the rows array (fd
 * into @rows_fd) and the process ranges (@procs_fd), both borrowed.
 * @return the rows array's size, 0 when the unwinder is off.
 */
__u32 rec_session__uw(const struct rec_session *s, int *rows_fd, int *procs_fd);

/**
 * rec_session__is_target() - may @tgid be sampled? False only when the
 * targets are processes (-p, -- CMD) and @tgid is none of them (yet).
 */
bool rec_session__is_target(const struct rec_session *s, __u32 tgid);

/**
 * rec_session__pyprocs_fd() - fd of the map of processes' interpreters
 * (struct sa_py_proc by tgid), borrowed; -1 when CPython frames are off.
 */
int rec_session__pyprocs_fd(const struct rec_session *s);

/** rec_session__uwstacks_fd() - fd of set @set's walked-stack map, borrowed. */
int rec_session__uwstacks_fd(const struct rec_session *s, __u32 set);

/** rec_session__ncpus() - number of CPUs sampled. */
int rec_session__ncpus(const struct rec_session *s);

/**
 * rec_session__kernel_bytes() - approximate preallocated kernel memory of
 * the sampling maps: ~1040 B per stack slot (as measured on 6.x kernels), ~100 B per
 * counts entry, the ring buffer.
 */
uint64_t rec_session__kernel_bytes(const struct rec_session *s);

struct rec_throttle;
struct rec_hotplug;

/**
 * rec_session__hotplug() - the watch on CPUs that go offline and back
 * (hotplug.h); borrowed, valid until rec_session__free().
 */
struct rec_hotplug *rec_session__hotplug(const struct rec_session *s);

/**
 * rec_session__throttle() - the samples the kernel did not take because it
 * throttled the events (throttle.h; borrowed, valid until
 * rec_session__free()), or NULL when no event could be watched.
 */
struct rec_throttle *rec_session__throttle(const struct rec_session *s);

/** rec_session__free() - detach and unload. Accepts NULL. */
void rec_session__free(struct rec_session *s);

#endif /* REC_BPF_SESSION_H */
