/* SPDX-License-Identifier: MIT */
/*
 * kfeatures.h - what the running kernel offers sa.bpf.c, probed before the
 * object is loaded, so that a kernel too old for it is refused with one
 * sentence naming the feature and the Linux version that brought it, not
 * with a verifier log.
 */
#ifndef REC_KFEATURES_H
#define REC_KFEATURES_H

#include <stddef.h>

/* One kernel feature sa.bpf.c needs; the table in kfeatures.c names each. */
enum rec_kfeature {
	REC_KF_BTF,	     /* /sys/kernel/btf/vmlinux (CO-RE, BTF tracepoints) */
	REC_KF_TP_BTF,	     /* BTF tracepoints of the scheduler (sched_process_*) */
	REC_KF_RINGBUF,	     /* BPF_MAP_TYPE_RINGBUF and bpf_ringbuf_query */
	REC_KF_TASK_BTF,     /* bpf_get_current_task_btf */
	REC_KF_TASK_PT_REGS, /* bpf_task_pt_regs */
	REC_KF_FIND_VMA,     /* bpf_find_vma from perf_event programs */
	REC_KF_N
};

/* Probe results: 1 present, 0 absent, -1 not known (the probe itself failed,
 * for example without privileges: then loading says why). */
struct rec_kfeatures {
	signed char has[REC_KF_N];
};

/**
 * rec_kfeatures__probe() - probe the running kernel (libbpf's feature
 * probes and vmlinux BTF). Needs the privileges loading BPF needs; without
 * them the answers are -1.
 * @f: filled.
 */
void rec_kfeatures__probe(struct rec_kfeatures *f);

/**
 * rec_kfeatures__refusal() - the sentence refusing a kernel without a
 * feature sa.bpf.c needs.
 * @f: probe results; a feature not known (-1) is not refused.
 * @buf: gets the sentence (first missing feature, what brought it).
 * @return true when the kernel must be refused (@buf filled), else false.
 */
_Bool rec_kfeatures__refusal(const struct rec_kfeatures *f, char *buf, size_t len);

#endif
