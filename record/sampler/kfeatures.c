// SPDX-License-Identifier: MIT
/*
 * kfeatures.c - probes the running kernel for what sa.bpf.c needs (see
 * kfeatures.h) and words the refusal. Every call-graph mode loads the same
 * object, so every mode needs all of it: Linux 5.17 or later with BTF.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kfeatures.h"

static const struct {
	const char *what;
	const char *since;
} kf_names[REC_KF_N] = {
	[REC_KF_BTF] = {"BTF type information (/sys/kernel/btf/vmlinux)",
			"Linux 5.4 or later built with CONFIG_DEBUG_INFO_BTF=y"},
	[REC_KF_TP_BTF] = {"BTF tracepoints of the scheduler (tp_btf/sched_process_exec)",
			   "Linux 5.5 or later with BTF"},
	[REC_KF_RINGBUF] = {"the BPF ring buffer", "Linux 5.8 or later"},
	[REC_KF_TASK_BTF] = {"the bpf_get_current_task_btf helper", "Linux 5.11 or later"},
	[REC_KF_TASK_PT_REGS] = {"the bpf_task_pt_regs helper", "Linux 5.15 or later"},
	[REC_KF_FIND_VMA] = {"the bpf_find_vma helper in perf_event programs",
			     "Linux 5.17 or later"},
};

/* libbpf's answer (1, 0 or negative errno) as 1, 0 or -1. */
static signed char answer(int r)
{
	return r > 0 ? 1 : r == 0 ? 0 : -1;
}

static signed char helper(enum bpf_func_id id)
{
	return answer(libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, id, NULL));
}

void rec_kfeatures__probe(struct rec_kfeatures *f)
{
	struct btf *btf;
	int i;

	for (i = 0; i < REC_KF_N; i++)
		f->has[i] = -1;
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		/* absent, or present but unreadable to us: only ENOENT is sure */
		f->has[REC_KF_BTF] =
			access("/sys/kernel/btf/vmlinux", F_OK) && errno == ENOENT ? 0 : -1;
	} else {
		f->has[REC_KF_BTF] = 1;
		f->has[REC_KF_TP_BTF] = btf__find_by_name_kind(btf, "btf_trace_sched_process_exec",
							       BTF_KIND_TYPEDEF) > 0;
		btf__free(btf);
	}
	f->has[REC_KF_RINGBUF] = answer(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL));
	f->has[REC_KF_TASK_BTF] = helper(BPF_FUNC_get_current_task_btf);
	f->has[REC_KF_TASK_PT_REGS] = helper(BPF_FUNC_task_pt_regs);
	f->has[REC_KF_FIND_VMA] = helper(BPF_FUNC_find_vma);
}

bool rec_kfeatures__refusal(const struct rec_kfeatures *f, char *buf, size_t len)
{
	int i;

	for (i = 0; i < REC_KF_N; i++) {
		if (f->has[i])
			continue;
		snprintf(buf, len,
			 "this kernel lacks %s, which sa-record needs in every mode: "
			 "it needs %s",
			 kf_names[i].what, kf_names[i].since);
		return true;
	}
	return false;
}
