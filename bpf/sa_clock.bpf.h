/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * sa_clock.bpf.h - what one on-CPU sample of a thread is worth, from the
 * thread's own CPU clock (issue 36, docs/recording.md "Counts at the
 * context switch"). The cpu-clock interrupt comes tens of microseconds
 * after its expiry here, later still on a halted vCPU, and a sample due
 * while a thread ran is then taken on whatever runs after it; where that
 * is the idle task, the thread's sample is gone. So a thread's sample
 * counts the periods of CPU time (se.sum_exec_runtime, the clock
 * CLOCK_THREAD_CPUTIME_ID reads) the thread used since its samples last
 * paid for them: 1 most of the time, 2 or more after samples that went
 * elsewhere, 0 when two came within one period of its CPU time. Each
 * thread's total is then its CPU time x F, and the stacks are those the
 * samples saw. Included by sa.bpf.c only; owns the paid, runw and lastexp maps.
 */
#ifndef SA_CLOCK_BPF_H
#define SA_CLOCK_BPF_H

/* NSEC_PER_SEC / -F for cpu-clock; 0: every sample counts one (-e cycles) */
const volatile __u64 sa_period_ns;
const volatile bool sa_diag;	   /* SA_DIAG=1: the counters below, for experiments */
const volatile bool sa_count_runs; /* SA_COUNT_RUNS=1: every sample counts one, as before */

/* CLOCK_MONOTONIC when the events were attached: threads born after it are paid from 0 */
volatile __u64 sa_t0;
volatile __u64 sa_diag_v[32];

/* task -> the CPU time (ns) its samples have counted; freed with the task */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} paid SEC(".maps");

/* The weight of this CPU's current run, read by count(), recover() and the copies. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} runw SEC(".maps");

static __always_inline __u32 run_weight(void)
{
	__u32 z = 0, *w = bpf_map_lookup_elem(&runw, &z);

	return w ? *w : 1;
}

/*
 * The current task's CPU time now, as task_sched_runtime() would give it:
 * what the scheduler last accounted, plus the rq clock since (the event's
 * prev_count is local_clock(), read by the cpu-clock handler just before
 * this program). @clk: that clock, for the diagnostics.
 */
static __always_inline __u64 cpu_now(struct bpf_perf_event_data *ctx, struct task_struct *t,
				     __u64 *clk, struct perf_event **evp)
{
	struct bpf_perf_event_data_kern *kc = (void *)ctx;
	struct perf_event *ev = NULL;
	__u64 rclk, rtask, start, rt;
	struct rq *rq;

	bpf_probe_read_kernel(&ev, sizeof(ev), &kc->event);
	*evp = ev;
	if (!ev)
		return 0;
	*clk = BPF_CORE_READ(ev, hw.prev_count.a.a.counter);
	rt = t->se.sum_exec_runtime;
	/*
	 * The task's run queue (runqueues is no symbol without KALLSYMS_ALL);
	 * se.cfs_rq is there only with CONFIG_FAIR_GROUP_SCHED. Without it,
	 * what the scheduler last accounted: up to a tick less.
	 */
	if (!bpf_core_field_exists(t->se.cfs_rq))
		return rt;
	rq = t->se.cfs_rq->rq; /* BTF pointer loads, no helper calls */
	rclk = rq->clock;
	rtask = rq->clock_task;
	start = t->se.exec_start;
	if (*clk > rclk)
		rtask += *clk - rclk;
	if (rtask > start)
		rt += rtask - start;
	return rt;
}

static __always_inline void diag_add(int i, __u64 v)
{
	__sync_fetch_and_add(&sa_diag_v[i & 31], v);
}

/*
 * SA_DIAG: 0 target samples, 1 their weights, 2-5 weight 0/1/2/3+,
 * 6-11 lateness (now - the hrtimer's expiry) < 10/20/50/100/200/more us,
 * 12 due before the thread's switch-in (sched_info.last_arrival);
 * --off-cpu (sa.bpf.c, end_unseen()): 20 stays ended by the thread's own
 * clock at its next switch-out or exit, 21 their nanoseconds.
 */
static __always_inline void diag(struct task_struct *t, struct perf_event *ev, __u64 clk, __u32 n)
{
	__u64 now = bpf_ktime_get_ns(), exp, late, arr;

	diag_add(0, 1);
	diag_add(1, n);
	if (n == 0)
		diag_add(2, 1);
	else if (n == 1)
		diag_add(3, 1);
	else if (n == 2)
		diag_add(4, 1);
	else
		diag_add(5, 1);
	if (!ev)
		return;
	exp = BPF_CORE_READ(ev, hw.hrtimer.node.expires);
	late = now > exp ? now - exp : 0;
	if (late < 10000)
		diag_add(6, 1);
	else if (late < 20000)
		diag_add(7, 1);
	else if (late < 50000)
		diag_add(8, 1);
	else if (late < 100000)
		diag_add(9, 1);
	else if (late < 200000)
		diag_add(10, 1);
	else
		diag_add(11, 1);
	arr = t->sched_info.last_arrival;
	if (clk > late && clk - late < arr)
		diag_add(12, 1);
}

/*
 * SA_DIAG, every run: 13 runs, 14 runs after a skipped expiry (the
 * hrtimer re-armed past periods it was late for), 15 the periods skipped,
 * 16 runs on the idle task.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lastexp SEC(".maps");

static __always_inline void diag_run(struct bpf_perf_event_data *ctx, __u32 tid)
{
	struct bpf_perf_event_data_kern *kc = (void *)ctx;
	struct perf_event *ev = NULL;
	__u32 z = 0;
	__u64 *last = bpf_map_lookup_elem(&lastexp, &z), exp, per, skip;

	diag_add(13, 1);
	if (!tid)
		diag_add(16, 1);
	bpf_probe_read_kernel(&ev, sizeof(ev), &kc->event);
	if (!ev || !last)
		return;
	exp = BPF_CORE_READ(ev, hw.hrtimer.node.expires);
	per = BPF_CORE_READ(ev, hw.sample_period);
	if (*last && exp > *last && per) {
		skip = (exp - *last + per / 2) / per;
		if (skip > 1 && skip < 100000) {
			diag_add(14, 1);
			diag_add(15, skip - 1);
		}
	}
	*last = exp;
}

/*
 * The periods of CPU time this sample of the current thread @tid pays
 * for. A thread first seen is paid from 0 when it was born while sampling
 * (its first sample counts every period it ran, plus one for the part
 * after its last sample that nothing pays), else the sample counts one.
 */
static __always_inline __u32 weight(struct bpf_perf_event_data *ctx, __u32 tid)
{
	struct task_struct *t;
	struct perf_event *ev = NULL;
	__u64 per = sa_period_ns, rt, n, clk = 0, *p;

	/* 0 also where task storage (5.11) is missing: no helper below is verified then */
	if (!per || !tid)
		return 1;
	t = bpf_get_current_task_btf();
	p = bpf_task_storage_get(&paid, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p)
		return 1;
	rt = cpu_now(ctx, t, &clk, &ev);
	if (!*p) { /* first seen: paid from 0 if born while sampling */
		n = t->start_time >= sa_t0 ? rt / per + 1 : 1;
		*p = t->start_time >= sa_t0 ? (n - 1) * per : rt;
		*p = *p ? *p : 1;
	} else {
		n = rt > *p ? (rt - *p) / per : 0;
		*p += n * per;
	}
	if (n > (1u << 20))
		n = 1u << 20;
	if (sa_diag)
		diag(t, ev, clk, (__u32)n);
	return sa_count_runs ? 1 : (__u32)n;
}

#endif
