/* SPDX-License-Identifier: MIT */
/*
 * kfeatures.h - what the running kernel offers sa.bpf.c, probed once before
 * the object is loaded: it decides which of the object's program variants
 * load, and a mode the kernel cannot run is refused with one sentence
 * naming what it needs and the Linux version that brought it, not with a
 * verifier log.
 */
#ifndef REC_KFEATURES_H
#define REC_KFEATURES_H

#include <stddef.h>

struct rec_opts;

/* One kernel feature; the table in kfeatures.c names each and its version. */
enum rec_kfeature {
	REC_KF_BTF,	      /* /sys/kernel/btf/vmlinux (CO-RE, BTF tracepoints) */
	REC_KF_TP_BTF,	      /* BTF tracepoints of the scheduler (sched_process_*) */
	REC_KF_RINGBUF,	      /* BPF_MAP_TYPE_RINGBUF and bpf_ringbuf_query */
	REC_KF_TASK_BTF,      /* bpf_get_current_task_btf */
	REC_KF_TASK_STORAGE,  /* BPF_MAP_TYPE_TASK_STORAGE: samples weighed by CPU time */
	REC_KF_MMAP_BUILD_ID, /* perf_event_attr.build_id: MMAP2 records carry build ids */
	REC_KF_LOOP,	      /* bpf_loop */
	REC_KF_TASK_PT_REGS,  /* bpf_task_pt_regs */
	REC_KF_FIND_VMA,      /* bpf_find_vma from perf_event programs */
	REC_KF_SWITCH_STATE,  /* sched_switch's prev_state argument */
	REC_KF_TASK_FROM_PID, /* the kfunc bpf_task_from_pid */
	REC_KF_N
};

/* Probe results: 1 present, 0 absent, -1 not known (the probe itself failed,
 * for example without privileges: then loading says why). */
struct rec_kfeatures {
	signed char has[REC_KF_N];
};

/**
 * rec_kfeatures__get() - the running kernel's features, probed at the first
 * call (libbpf's feature probes, vmlinux BTF, one perf event; ~10 ms) and
 * kept. Needs the privileges loading BPF needs; without them the answers
 * are -1. Not thread-safe at the first call.
 */
const struct rec_kfeatures *rec_kfeatures__get(void);

/** rec_kfeatures__on() - true when feature @k is present or not known. */
_Bool rec_kfeatures__on(const struct rec_kfeatures *f, enum rec_kfeature k);

/**
 * rec_kfeatures__refusal() - the sentence refusing what @o asks of a kernel
 * without a feature it needs (every mode's first, then the mode's own).
 * @f: probe results; a feature not known (-1) is not refused.
 * @o: the options, or NULL for what every mode needs.
 * @buf: gets the sentence (first missing feature, what brought it).
 * @return true when the kernel must be refused (@buf filled), else false.
 */
_Bool rec_kfeatures__refusal(const struct rec_kfeatures *f, const struct rec_opts *o, char *buf,
			     size_t len);

/**
 * rec_kfeatures__describe() - line @i (from 0) of the features' report:
 * "name: yes|no|unknown (what it serves; since Linux X)".
 * @return false past the last line.
 */
_Bool rec_kfeatures__describe(const struct rec_kfeatures *f, int i, char *buf, size_t len);

#endif
