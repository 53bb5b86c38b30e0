// SPDX-License-Identifier: MIT
/*
 * kfeatures.c - probes the running kernel for what sa.bpf.c's programs need
 * (see kfeatures.h), words the refusal of a mode the kernel cannot run and
 * the report of what was found. Every mode needs BTF, its tracepoints and
 * the ring buffer (5.8); frame pointers and --off-cpu run from there
 * (sa_on_cpu_sample_fp, sa_on_switch_fp), the rest needs more.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kfeatures.h"
#include "record.h"

static const struct {
	const char *name, *what, *since;
} kf_names[REC_KF_N] = {
	[REC_KF_BTF] = {"btf", "BTF type information (/sys/kernel/btf/vmlinux)",
			"Linux 5.4 or later built with CONFIG_DEBUG_INFO_BTF=y"},
	[REC_KF_TP_BTF] = {"tp_btf", "BTF tracepoints of the scheduler (tp_btf/sched_process_exec)",
			   "Linux 5.5 or later with BTF"},
	[REC_KF_RINGBUF] = {"ringbuf", "the BPF ring buffer", "Linux 5.8 or later"},
	[REC_KF_TASK_BTF] = {"task_btf", "the bpf_get_current_task_btf helper",
			     "Linux 5.11 or later"},
	[REC_KF_TASK_STORAGE] = {"task_storage",
				 "task storage maps (samples weighed by their thread's CPU time)",
				 "Linux 5.11 or later"},
	[REC_KF_MMAP_BUILD_ID] = {"mmap_build_id",
				  "build ids in perf MMAP2 records (else read from the files)",
				  "Linux 5.12 or later"},
	[REC_KF_LOOP] = {"bpf_loop", "the bpf_loop helper (CPython frames)", "Linux 5.13 or later"},
	[REC_KF_TASK_PT_REGS] = {"task_pt_regs", "the bpf_task_pt_regs helper",
				 "Linux 5.15 or later"},
	[REC_KF_FIND_VMA] = {"find_vma", "the bpf_find_vma helper in perf_event programs",
			     "Linux 5.17 or later"},
	[REC_KF_SWITCH_STATE] = {"switch_prev_state",
				 "sched_switch's prev_state argument (off-CPU stacks unwound "
				 "in the kernel)",
				 "Linux 5.18 or later"},
	[REC_KF_TASK_FROM_PID] = {"task_from_pid",
				  "the bpf_task_from_pid kfunc (else births are tracked at fork)",
				  "Linux 6.2 or later"},
};

/* What every mode needs, then what --call-graph dwarf and auto need beyond it, oldest first. */
static const enum rec_kfeature kf_every[] = {REC_KF_BTF, REC_KF_TP_BTF, REC_KF_RINGBUF};
static const enum rec_kfeature kf_walk[] = {REC_KF_TASK_BTF, REC_KF_LOOP, REC_KF_TASK_PT_REGS,
					    REC_KF_FIND_VMA};

/* libbpf's answer (1, 0 or negative errno) as 1, 0 or -1. */
static signed char answer(int r)
{
	return r > 0 ? 1 : r == 0 ? 0 : -1;
}

static signed char helper(enum bpf_func_id id)
{
	return answer(libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, id, NULL));
}

/* A kernel before 5.12 refuses the attr bit it does not know with EINVAL. */
static signed char mmap_build_id(void)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.mmap2 = 1,
		.build_id = 1,
		.disabled = 1,
		.exclude_kernel = 1,
	};
	int fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == EINVAL ? 0 : -1;
}

/* sched_switch's arguments after the context: 4 since 5.18 (prev_state). */
static signed char switch_state(const struct btf *btf)
{
	int id = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	const struct btf_type *t;

	if (id <= 0)
		return 0;
	t = btf__type_by_id(btf, btf__resolve_type(btf, id));
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t))
		return -1;
	return btf_vlen(t) >= 5;
}

static void probe_btf(struct rec_kfeatures *f)
{
	struct btf *btf = btf__load_vmlinux_btf();

	if (!btf) {
		/* absent, or present but unreadable to us: only ENOENT is sure */
		f->has[REC_KF_BTF] =
			access("/sys/kernel/btf/vmlinux", F_OK) && errno == ENOENT ? 0 : -1;
		return;
	}
	f->has[REC_KF_BTF] = 1;
	f->has[REC_KF_TP_BTF] =
		btf__find_by_name_kind(btf, "btf_trace_sched_process_exec", BTF_KIND_TYPEDEF) > 0;
	f->has[REC_KF_SWITCH_STATE] = switch_state(btf);
	f->has[REC_KF_TASK_FROM_PID] =
		btf__find_by_name_kind(btf, "bpf_task_from_pid", BTF_KIND_FUNC) > 0;
	btf__free(btf);
}

static void probe(struct rec_kfeatures *f)
{
	int i;

	if (!getenv("SA_DEBUG_BPF"))
		libbpf_set_print(NULL);
	for (i = 0; i < REC_KF_N; i++)
		f->has[i] = -1;
	probe_btf(f);
	/* without the privileges to load BPF every probe says absent: not known then */
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_ARRAY, NULL) != 1)
		return;
	f->has[REC_KF_RINGBUF] = answer(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL));
	f->has[REC_KF_TASK_STORAGE] =
		answer(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL));
	f->has[REC_KF_TASK_BTF] = helper(BPF_FUNC_get_current_task_btf);
	f->has[REC_KF_LOOP] = helper(BPF_FUNC_loop);
	f->has[REC_KF_TASK_PT_REGS] = helper(BPF_FUNC_task_pt_regs);
	f->has[REC_KF_FIND_VMA] = helper(BPF_FUNC_find_vma);
	f->has[REC_KF_MMAP_BUILD_ID] = mmap_build_id();
}

/*
 * SA_RECORD_TEST_NO_KFEATURES=name,...: those features taken as absent, so
 * that the older kernels' program variants run on this one (tests).
 */
static void test_off(struct rec_kfeatures *f)
{
	const char *v = getenv("SA_RECORD_TEST_NO_KFEATURES"), *p;
	size_t n;
	int i;

	for (p = v; p && *p; p += n + (p[n] == ',')) {
		n = strcspn(p, ",");
		for (i = 0; i < REC_KF_N; i++)
			if (strlen(kf_names[i].name) == n && !strncmp(p, kf_names[i].name, n))
				f->has[i] = 0;
	}
}

const struct rec_kfeatures *rec_kfeatures__get(void)
{
	static struct rec_kfeatures f;
	static bool done;

	if (!done) {
		probe(&f);
		test_off(&f);
	}
	done = true;
	return &f;
}

bool rec_kfeatures__on(const struct rec_kfeatures *f, enum rec_kfeature k)
{
	return f->has[k] != 0;
}

/* The first (@last: the last, the newest) of @ks[@n] that @f lacks, or -1. */
static int missing(const struct rec_kfeatures *f, const enum rec_kfeature *ks, int n, bool last)
{
	int i, k = -1;

	for (i = 0; i < n; i++)
		if (!f->has[ks[i]] && (k = ks[i]) >= 0 && !last)
			break;
	return k;
}

bool rec_kfeatures__refusal(const struct rec_kfeatures *f, const struct rec_opts *o, char *buf,
			    size_t len)
{
	int k = missing(f, kf_every, sizeof(kf_every) / sizeof(kf_every[0]), false);
	const char *mode =
		o && o->call_graph == SA_CG_AUTO ? "--call-graph auto" : "--call-graph dwarf";

	if (k >= 0) {
		snprintf(buf, len,
			 "this kernel lacks %s, which sa-record needs in every mode: it needs %s",
			 kf_names[k].what, kf_names[k].since);
		return true;
	}
	if (!o || o->call_graph == SA_CG_FP)
		return false;
	k = missing(f, kf_walk, sizeof(kf_walk) / sizeof(kf_walk[0]), true);
	if (k < 0)
		return false;
	snprintf(buf, len,
		 "this kernel lacks %s, which %s needs: it needs %s (--call-graph fp runs here)",
		 kf_names[k].what, mode, kf_names[k].since);
	return true;
}

bool rec_kfeatures__describe(const struct rec_kfeatures *f, int i, char *buf, size_t len)
{
	if (i < 0 || i >= REC_KF_N)
		return false;
	snprintf(buf, len, "%s: %s (%s; %s)", kf_names[i].name,
		 f->has[i] > 0	 ? "yes"
		 : f->has[i] < 0 ? "unknown"
				 : "no",
		 kf_names[i].what, kf_names[i].since);
	return true;
}
