// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sa.bpf.c - the in-kernel half of sa-record. sa_on_cpu_sample runs on every
 * perf sample: it filters the task, stores the user and kernel stacks in a
 * stack-trace map and counts (tgid, tid, exec gen, stacks) in a hash map of
 * the current map set. Samples whose stacks cannot be stored go to a ring
 * buffer with their frames inline, so no stack is lost to a hash clash.
 * With --off-cpu, sa_on_switch times each target thread's stay off the CPU
 * and adds it to the set's off-CPU counts by the stacks it left with.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sa_shared.h"

#define EFAULT	   14
#define ENOMEM	   12
#define EEXIST	   17
#define E2BIG	   7
#define ENOENT	   2
#define PF_KTHREAD 0x00200000

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Set before load by user space. */
const volatile __u32 sa_filter = SA_FILTER_ALL;
const volatile bool sa_idle;
const volatile bool sa_user_only;
const volatile bool sa_kernel_only;
const volatile bool sa_follow;	 /* add forked children of targets */
const volatile __u32 sa_rb_wake; /* wake user space past this many bytes */

const volatile __u32 sa_call_graph = SA_CG_FP;
const volatile __u32 sa_stack_bytes = 16384; /* --stack-size, <= SA_USTACK_MAX */
const volatile __u32 sa_urb_wake;	     /* wake user space past this many bytes */
const volatile bool sa_off_cpu;		     /* sa_on_switch is attached */
const volatile __u64 sa_off_min_ns;	     /* --off-cpu-min */
const volatile __u32 sa_test_skip_in;	     /* tests: miss every Nth switch-in of a stay */
const volatile __u32 sa_offrb_wake;	     /* wake user space past this many bytes */
const volatile bool sa_uw;		     /* in-kernel unwinding: auto on-CPU, and off-CPU */
const volatile __u32 sa_uw_id_mask = SA_UW_ID_MASK; /* tests: fewer slots force clashes */
const volatile bool sa_task_btf; /* bpf_get_current_task_btf() (5.11): else probe reads */
const volatile bool sa_births;	 /* sa_on_free_nokf is loaded: sa_on_fork fills births */

/* Written by user space through the mmapped .bss: the current interval. */
volatile __u32 sa_epoch;

#define STACK_MAP(name)                                                                            \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);                                            \
		__uint(max_entries, 1024);                                                         \
		__type(key, __u32);                                                                \
		__uint(value_size, SA_MAX_DEPTH * sizeof(__u64));                                  \
	} name SEC(".maps")

/* A hash map of @n entries (user space may resize it before load). */
#define HASH_MAP(name, n, key_type, value_type)                                                    \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(max_entries, n);                                                            \
		__type(key, key_type);                                                             \
		__type(value, value_type);                                                         \
	} name SEC(".maps")

STACK_MAP(stacks0);
STACK_MAP(stacks1);
HASH_MAP(counts0, 1024, struct sa_count_key, struct sa_count_val);
HASH_MAP(counts1, 1024, struct sa_count_key, struct sa_count_val);
HASH_MAP(offcounts0, 1, struct sa_off_key, struct sa_off_val);
HASH_MAP(offcounts1, 1, struct sa_off_key, struct sa_off_val);

/* --off-cpu: stacks that missed the stack map, and their times (sa_rb_offstart, _offend) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} offrb SEC(".maps");

/* --off-cpu: tid -> its switch-out, while it is off the CPU (sized by user space) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sa_off_start);
} offstart SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SA_NSETS);
	__type(key, __u32);
	__type(value, struct sa_ctrs);
} ctrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} rb SEC(".maps");

/* --call-graph dwarf: raw user stacks, and the per-CPU record being built. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} urb SEC(".maps");

/*
 * One slot per possible CPU (a per-CPU array value is capped at 32 KiB);
 * perf_event programs do not nest on a CPU, so the slot is ours for the run.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sa_rb_ustack);
} uscratch SEC(".maps");

/* tgid or tid -> 1, for SA_FILTER_TGID and SA_FILTER_TID. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* tgid -> exec generation; absent means 0. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u32);
} gens SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroups SEC(".maps");

#include "sa_unwind.bpf.h"
#include "sa_clock.bpf.h"

static __always_inline bool in_user_mode(struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	/* the context allows only 8-byte loads of regs; cs shares its word */
	__u64 cs =
		*(__u64 *)((void *)ctx + __builtin_offsetof(struct bpf_perf_event_data, regs.cs));

	return (cs & 3) != 0;
#elif defined(__TARGET_ARCH_arm64)
	return (ctx->regs.pstate & 0xf) == 0;
#else
	return false;
#endif
}

/*
 * No user address space: a kernel thread, or a task past exit_mm() in
 * do_exit() (measured: all the -EFAULT user stacks of a busy system were
 * PF_EXITING tasks with mm == NULL). Its user stack is absent, not lost.
 */
static __always_inline bool no_user_mm(void)
{
	struct task_struct *t;

	if (!sa_task_btf) {
		t = (struct task_struct *)bpf_get_current_task();
		return (BPF_CORE_READ(t, flags) & PF_KTHREAD) || !BPF_CORE_READ(t, mm);
	}
	t = bpf_get_current_task_btf();
	return (t->flags & PF_KTHREAD) || !t->mm;
}

static __always_inline bool wanted(__u32 tgid, __u32 tid)
{
	if (tid == 0)
		return sa_idle;
	switch (sa_filter) {
	case SA_FILTER_TGID:
		return bpf_map_lookup_elem(&targets, &tgid) != NULL;
	case SA_FILTER_TID:
		return bpf_map_lookup_elem(&targets, &tid) != NULL;
	case SA_FILTER_CGROUP:
		return bpf_current_task_under_cgroup(&cgroups, 0) == 1;
	default:
		return true;
	}
}

/*
 * Classify a bpf_get_stackid()/bpf_get_stack() error. A missing kernel stack
 * in a user-mode sample and a missing user stack of a kernel thread are
 * absent (SA_STACK_NONE), not lost. Returns 0 to go on, or the counter slot.
 */
static __always_inline int absent_or_lost(long *id, bool user, bool umode)
{
	if (*id != -EFAULT)
		return 0;
	if (user && !no_user_mm())
		return SA_CTR_LOST_USTACK;
	if (!user && !umode)
		return SA_CTR_LOST_KSTACK;
	*id = SA_STACK_NONE;
	return 0;
}

/*
 * A sample's ring-buffer record (struct sa_rb_sample or sa_rb_ustack):
 * its interval, the thread and image of @key, the periods it counts and
 * the thread's name.
 */
#define SAMPLE_HEAD(r, key, ep)                                                                    \
	do {                                                                                       \
		(r)->epoch = (ep);                                                                 \
		(r)->tgid = (key)->tgid;                                                           \
		(r)->tid = (key)->tid;                                                             \
		(r)->gen = (key)->gen;                                                             \
		(r)->count = run_weight();                                                         \
		bpf_get_current_comm((r)->comm, sizeof((r)->comm));                                \
	} while (0)

#define INLINE_NO_USER	 1
#define INLINE_NO_KERNEL 2

/*
 * A record's two stacks, inline: the user frames at @ips (@w's, or taken
 * here when @w is NULL), the kernel's at @ips + SA_MAX_DEPTH after
 * skipping @kskip frames; *@ubytes and *@kbytes their sizes, 0 where not
 * @user or not @kernel. @return 0, or INLINE_NO_USER / INLINE_NO_KERNEL
 * where a stack could not be taken (the caller discards the record).
 */
static __always_inline int inline_stacks(void *ctx, __u64 *ips, __s32 *ubytes, __s32 *kbytes,
					 bool user, bool kernel, __u64 kskip,
					 const struct uw_walk *w)
{
	long n;

	*ubytes = *kbytes = 0;
	if (user) {
		n = w ? uw_copy(ips, w)
		      : bpf_get_stack(ctx, ips, SA_MAX_DEPTH * sizeof(__u64), BPF_F_USER_STACK);
		if (n < 0)
			return INLINE_NO_USER;
		*ubytes = n;
	}
	if (kernel) {
		n = bpf_get_stack(ctx, &ips[SA_MAX_DEPTH], SA_MAX_DEPTH * sizeof(__u64),
				  kskip & BPF_F_SKIP_FIELD_MASK);
		if (n < 0)
			return INLINE_NO_KERNEL;
		*kbytes = n;
	}
	return 0;
}

/* The slow path: both stacks inline in the ring buffer. */
static __noinline int recover(struct bpf_perf_event_data *ctx, struct sa_count_key *key,
			      __u32 epoch, __u32 flags, const struct uw_walk *w)
{
	struct sa_rb_sample *r;
	long n;

	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r)
		return SA_CTR_LOST_RINGBUF;
	SAMPLE_HEAD(r, key, epoch);
	r->flags = flags;
	n = inline_stacks(ctx, r->ips, &r->ubytes, &r->kbytes, key->ustack != SA_STACK_NONE,
			  key->kstack != SA_STACK_NONE, 0, w);
	if (n) {
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
		return n == INLINE_NO_USER ? SA_CTR_LOST_USTACK : SA_CTR_LOST_KSTACK;
	}
	flags = BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) > sa_rb_wake)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(r, flags);
	return SA_CTR_KEPT;
}

static __always_inline int count(struct sa_count_key *key, void *counts)
{
	struct sa_count_val *v, nv = {.count = run_weight(), .samples = 1};
	long err;

	v = bpf_map_lookup_elem(counts, key);
	if (v) {
		__sync_fetch_and_add(&v->count, nv.count);
		__sync_fetch_and_add(&v->samples, 1);
		return 0;
	}
	bpf_get_current_comm(nv.comm, sizeof(nv.comm));
	err = bpf_map_update_elem(counts, key, &nv, BPF_NOEXIST);
	if (err == -EEXIST) {
		/* another CPU inserted the key meanwhile */
		v = bpf_map_lookup_elem(counts, key);
		if (v) {
			__sync_fetch_and_add(&v->count, nv.count);
			__sync_fetch_and_add(&v->samples, 1);
			return 0;
		}
	}
	return err;
}

static __always_inline int sample(struct bpf_perf_event_data *ctx, struct sa_count_key *key,
				  __u32 epoch, void *stacks, void *counts, __u32 *rflagsp,
				  const struct uw_walk *w, long wid)
{
	bool umode = in_user_mode(ctx);
	long uid = SA_STACK_NONE, kid = SA_STACK_NONE;
	__u32 rflags = 0;
	int slot;

	if (w)
		uid = wid == -E2BIG ? -ENOMEM : wid; /* in-kernel unwind, stored already */
	else if (!sa_kernel_only)
		uid = bpf_get_stackid(ctx, stacks, BPF_F_USER_STACK);
	/*
	 * A sample taken in user mode has no kernel stack: asking for it
	 * anyway returned -EFAULT after about 1 us of callchain set-up per
	 * sample (bpf_stats, docs/performance.md).
	 */
	if (!sa_user_only && !umode)
		kid = bpf_get_stackid(ctx, stacks, 0);
	slot = absent_or_lost(&uid, true, umode);
	if (!slot)
		slot = absent_or_lost(&kid, false, umode);
	if (slot)
		return slot;
	if (uid == -EEXIST || kid == -EEXIST)
		rflags |= SA_RB_COLLISION;
	else if (uid == -ENOMEM || kid == -ENOMEM)
		rflags |= SA_RB_MAPFULL;
	else if (uid < SA_STACK_NONE || kid < SA_STACK_NONE)
		return SA_CTR_LOST_OTHER;
	/* recover() needs to know which stacks to capture, not their ids */
	key->ustack = uid < 0 && uid != SA_STACK_NONE ? 0 : uid;
	key->kstack = kid < 0 && kid != SA_STACK_NONE ? 0 : kid;
	if (!rflags) {
		long err = count(key, counts);

		if (!err)
			return SA_CTR_KEPT;
		if (err != -E2BIG && err != -ENOMEM)
			return SA_CTR_LOST_OTHER;
		rflags |= SA_RB_MAPFULL;
	}
	*rflagsp = rflags;
	return recover(ctx, key, epoch, rflags, w);
}

struct vma_end {
	__u64 end;
};

static long vma_end_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	((struct vma_end *)data)->end = vma->vm_end;
	return 0;
}

/*
 * Bytes of user stack to copy from @sp: --stack-size, cut at the end of the
 * stack's mapping (a read crossing it would fail whole). When the mapping
 * cannot be looked up, a main-thread stack is cut at the end of the
 * environment strings, the top of what it holds, and any other copy stops
 * at the first page that faults (present_len()). It must be the run's
 * only bpf_find_vma(): in interrupt context the mmap lock is released by
 * an irq_work, and until it ran a second one gets -EBUSY.
 */
static __always_inline __u64 stack_len(struct task_struct *t, __u64 sp)
{
	struct vma_end ve = {0};
	__u64 n = sa_stack_bytes;

	if (bpf_find_vma(t, sp, vma_end_cb, &ve, 0) || ve.end <= sp) {
		ve.end = BPF_CORE_READ(t, mm, env_end);
		if (ve.end <= sp || ve.end - sp >= (1ull << 30))
			return n; /* not the main thread's stack */
	}
	if (ve.end - sp < n)
		n = ve.end - sp;
	return n;
}

/*
 * Bytes from @sp up to the first page that faults. The kernel leaves a
 * random gap of up to 8 KiB, never touched, under the argument strings at
 * the top of the main stack (arch_align_stack()); a copy that reaches it
 * fails whole, while everything the unwinder needs lies below it.
 */
static __always_inline __u64 present_len(__u64 sp, __u64 n)
{
	__u64 page = (sp | 4095) + 1, w;
	int i;

	for (i = 0; i < SA_USTACK_MAX / 4096; i++) {
		if (page >= sp + n)
			break;
		if (bpf_probe_read_user(&w, sizeof(w), (void *)page))
			return page - sp;
		page += 4096;
	}
	return n;
}

/* --call-graph dwarf: registers and the stack copy go to user space whole. */
static __noinline int capture_ustack(struct bpf_perf_event_data *ctx, struct sa_count_key *key,
				     __u32 epoch)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *uregs = (struct pt_regs *)bpf_task_pt_regs(t);
	struct sa_rb_ustack *r;
	__u32 cpu = bpf_get_smp_processor_id(), flags;
	__u64 n, sp;
	long kb = 0;

	r = bpf_map_lookup_elem(&uscratch, &cpu);
	if (!r)
		return SA_CTR_LOST_OTHER;
	SAMPLE_HEAD(r, key, epoch);
	r->regs[0] = BPF_CORE_READ(uregs, ip);
	r->regs[1] = sp = BPF_CORE_READ(uregs, sp);
	r->regs[2] = BPF_CORE_READ(uregs, bp);
	if (!sa_user_only && !in_user_mode(ctx)) {
		kb = bpf_get_stack(ctx, r->kips, sizeof(r->kips), 0);
		if (kb < 0)
			return SA_CTR_LOST_KSTACK;
	}
	r->kbytes = kb;
	n = stack_len(t, sp);
	if (n > SA_USTACK_MAX)
		n = SA_USTACK_MAX;
	if (bpf_probe_read_user(r->stack, n, (void *)sp)) {
		n = present_len(sp, n);
		if (n > SA_USTACK_MAX)
			n = SA_USTACK_MAX;
		if (bpf_probe_read_user(r->stack, n, (void *)sp))
			n = 0; /* the leaf (ip) is still known */
	}
	r->ubytes = n;
	flags = BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_query(&urb, BPF_RB_AVAIL_DATA) > sa_urb_wake)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&urb, r, __builtin_offsetof(struct sa_rb_ustack, stack) + n, flags))
		return SA_CTR_LOST_RINGBUF;
	return SA_CTR_KEPT;
#else
	return SA_CTR_LOST_OTHER; /* user space refuses dwarf mode elsewhere */
#endif
}

#include "python.bpf.h"

/*
 * --call-graph auto: the user stack walked here from the CFI tables and
 * counted by id like a frame-pointer stack; a stack copy where the tables
 * do not cover the walk (a process not mapped yet, code in no mapping the
 * kernel has: a library mapped since the side band was read, or JIT code; a
 * file without a table, a row they do not keep). Code in no mapping is
 * stepped by frame pointers, which in code without them stopped the walk
 * at its first frame, uncounted: zstd's memset at its start-up.
 */
static __noinline int sample_uw(struct bpf_perf_event_data *ctx, struct sa_count_key *key,
				__u32 epoch, __u32 *rflags, struct sa_ctrs *c)
{
	const struct sa_py_proc *py = NULL;
	struct uw_walk w;
	long wid;

	if (uw_walk(bpf_get_current_task_btf(), key->tgid, key->gen, 0, &w))
		return SA_CTR_LOST_OTHER;
	if (w.flags & (UW_NOPROC | UW_NORANGE))
		uw_wake(&rb, key->tgid);
	if ((w.flags & (UW_NOPROC | UW_NORANGE | UW_CUT | UW_NOTAB)) || !w.n) {
		c->v[SA_CTR_UW_COPY]++;
		return capture_ustack(ctx, key, epoch);
	}
	c->v[SA_CTR_UW]++;
	if (sa_python)
		py = py_proc(key->tgid, key->gen, &rb);
	if (py) /* CPython frames after the native ones, as in sample_py() */
		w.n = py_walk(w.ips, w.n, py, key->tid);
	if (epoch & 1) {
		wid = uw_store(&uwstacks1, &w);
		return sample(ctx, key, epoch, &stacks1, &counts1, rflags, &w, wid);
	}
	wid = uw_store(&uwstacks0, &w);
	return sample(ctx, key, epoch, &stacks0, &counts0, rflags, &w, wid);
}

/*
 * The program's body, @full a constant: false leaves out every path that
 * needs bpf_loop() (5.13) or bpf_find_vma() (5.17): in-kernel unwinding,
 * CPython frames and dwarf's stack copies. A kernel before 5.13 rejects a
 * program that holds a bpf_loop() callback even where it is never reached.
 */
static __always_inline int on_cpu_sample(struct bpf_perf_event_data *ctx, const bool full)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct sa_count_key key = {
		.tgid = id >> 32,
		.tid = (__u32)id,
	};
	__u32 epoch = sa_epoch;
	__u32 set = epoch & 1;
	__u32 rflags = 0;
	const struct sa_py_proc *py = NULL;
	struct sa_ctrs *c;
	__u32 *gen, *w, n, zero = 0;
	int slot;

	c = bpf_map_lookup_elem(&ctrs, &set);
	if (!c)
		return 0;
	/*
	 * perf_event programs do not nest on one CPU: plain adds suffice. A run
	 * is counted next to its outcome, at the end: a vCPU stopped by the
	 * host mid-run past the drain's grace period then moves both to the
	 * set's next reading together, and runs == kept + filtered + lost
	 * holds in every interval (user space reads deltas, never resets).
	 */
	if (sa_diag)
		diag_run(ctx, key.tid);
	if (!wanted(key.tgid, key.tid)) {
		c->v[SA_CTR_RUNS]++;
		c->v[SA_CTR_FILTERED]++;
		return 0;
	}
	/*
	 * Counters and counts add the sample's weight: runs == kept + filtered
	 * + lost holds. A sample of weight 0 (its thread's CPU time since its
	 * last sample is under a period) is still walked and counted as a
	 * sample: sa-record shares the thread's periods by samples, and where
	 * a thread's samples fall is the unbiased part (record/drain/share.c).
	 */
	n = weight(ctx, key.tid);
	w = bpf_map_lookup_elem(&runw, &zero);
	if (w)
		*w = n;
	gen = bpf_map_lookup_elem(&gens, &key.tgid);
	key.gen = gen ? *gen : 0;
	if (full && sa_python && sa_call_graph == SA_CG_FP && !sa_kernel_only && !no_user_mm())
		py = py_proc(key.tgid, key.gen, &rb);
	if (full && sa_uw && sa_call_graph == SA_CG_AUTO && !sa_kernel_only && !no_user_mm())
		slot = sample_uw(ctx, &key, epoch, &rflags, c);
	else if (full && py)
		slot = sample_py(ctx, &key, epoch, &rflags, py);
	else if (full && sa_call_graph == SA_CG_DWARF && !sa_kernel_only && !no_user_mm())
		slot = capture_ustack(ctx, &key, epoch);
	else if (set)
		slot = sample(ctx, &key, epoch, &stacks1, &counts1, &rflags, NULL, 0);
	else
		slot = sample(ctx, &key, epoch, &stacks0, &counts0, &rflags, NULL, 0);
	if (slot < 0 || slot >= SA_CTR__NR)
		slot = SA_CTR_LOST_OTHER;
	c->v[SA_CTR_RUNS] += n;
	c->v[slot] += n;
	if (slot == SA_CTR_KEPT && (rflags & SA_RB_COLLISION))
		c->v[SA_CTR_COLLISIONS] += n;
	else if (slot == SA_CTR_KEPT && (rflags & SA_RB_MAPFULL))
		c->v[SA_CTR_MAPFULL_RECOVERED] += n;
	return 0;
}

SEC("perf_event")
int sa_on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	return on_cpu_sample(ctx, true);
}

/* Frame pointers only, for kernels without bpf_loop() (user space picks one of the two). */
SEC("perf_event")
int sa_on_cpu_sample_fp(struct bpf_perf_event_data *ctx)
{
	return on_cpu_sample(ctx, false);
}

/*
 * The generation changes at sched_process_exec, which fires after the user
 * registers switched to the new image (start_thread); a sample in between
 * carries the new image's ip under the old generation, and sa-report then
 * resolves it against the next generation (report/session/maps.c). A kprobe or
 * fentry on finalize_exec() would close the gap, but kernels without
 * CONFIG_KPROBES and ftrace (as measured here) have neither.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(sa_on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;
	__u32 *old = bpf_map_lookup_elem(&gens, &tgid);
	__u32 gen = old ? *old + 1 : 1;

	/* one exec per tgid at a time: exec kills the other threads first */
	bpf_map_update_elem(&gens, &tgid, &gen, BPF_ANY);
	return 0;
}

/* sa_births: tid -> start time of the task that took it last (sa_on_free_nokf) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u64);
} births SEC(".maps");

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sa_on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid, ctid = child->pid;
	__u64 born = child->start_time;
	__u8 one = 1;
	__u32 *gen;

	if (sa_births)
		bpf_map_update_elem(&births, &ctid, &born, BPF_ANY);
	if (ptgid == ctgid)
		return 0; /* a new thread */
	/*
	 * The child runs its parent's image until it execs. Whatever its pid
	 * left from a process freed after the pid came back (sa_on_free()) is
	 * not the child's: cleared.
	 */
	gen = bpf_map_lookup_elem(&gens, &ptgid);
	if (gen)
		bpf_map_update_elem(&gens, &ctgid, gen, BPF_ANY);
	else
		bpf_map_delete_elem(&gens, &ctgid);
	/*
	 * ... and its mappings, so its unwind ranges are its parent's until
	 * user space writes its own (rec_maptab__fork()): a child that blocks
	 * at once was walked by frame pointers, its stack stopping at the libc
	 * wrapper (3161's children: 2 of 20 sleeps reached main).
	 */
	if (sa_uw) {
		struct sa_uw_proc *up = bpf_map_lookup_elem(&uwprocs, &ptgid);

		if (up)
			bpf_map_update_elem(&uwprocs, &ctgid, up, BPF_ANY);
		else
			bpf_map_delete_elem(&uwprocs, &ctgid);
	}
	if (sa_follow && bpf_map_lookup_elem(&targets, &ptgid))
		bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY);
	else /* a -p target's pid, come back as another process: not the target */
		bpf_map_delete_elem(&targets, &ctgid);
	return 0;
}

/*
 * Forget a process when its task is freed, not at sched_process_exit: the
 * exiting task still runs (and is sampled) in do_exit, and those samples
 * must keep their generation and their target.
 */
#define TASK_RUNNING 0
#define TASK_DEAD    0x80

static __always_inline __u64 offrb_flags(void)
{
	return bpf_ringbuf_query(&offrb, BPF_RB_AVAIL_DATA) > sa_offrb_wake ? BPF_RB_FORCE_WAKEUP
									    : BPF_RB_NO_WAKEUP;
}

/* The switch-out's stacks, inline in offrb. @return 0 or a counter slot. */
#define OFF_USER   1
#define OFF_KERNEL 2

/* @which: OFF_USER and OFF_KERNEL; @w: the unwound user frames, or NULL to take them here. */
static __noinline int off_inline(void *ctx, struct sa_off_start *st, __u32 tid, __u32 which,
				 const struct uw_walk *w)
{
	struct sa_rb_offstart *r = bpf_ringbuf_reserve(&offrb, sizeof(*r), 0);
	long n;

	if (!r)
		return SA_CTR_OFF_LOST_RINGBUF;
	r->kind = SA_RB_OFF_START;
	r->tid = tid;
	r->ts = st->ts;
	/* skip this program and bpf_trace_run4(): the stack starts at __schedule */
	n = inline_stacks(ctx, r->ips, &r->ubytes, &r->kbytes, which & OFF_USER, which & OFF_KERNEL,
			  2, w);
	if (n) {
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
		return n == INLINE_NO_USER ? SA_CTR_OFF_LOST_USTACK : SA_CTR_OFF_LOST_KSTACK;
	}
	bpf_ringbuf_submit(r, offrb_flags());
	return 0;
}

/* The time of a period whose stacks went inline: an OFF_END to match its OFF_START. */
static __always_inline int off_inline_end(struct sa_off_start *st, struct task_struct *next,
					  __u64 ns)
{
	struct sa_rb_offend *e = bpf_ringbuf_reserve(&offrb, sizeof(*e), 0);

	if (!e)
		return SA_CTR_OFF_LOST_RINGBUF;
	e->kind = SA_RB_OFF_END;
	e->tid = next->pid;
	e->ts = st->ts;
	e->ns = ns;
	e->epoch = sa_epoch;
	e->tgid = next->tgid;
	e->gen = st->gen;
	e->flags = st->flags & SA_OFF_PREEMPTED;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), next->comm);
	bpf_ringbuf_submit(e, offrb_flags());
	return SA_CTR_OFF_RECOVERED;
}

/*
 * The user stack a thread leaves the CPU with (@prev is current), walked
 * from its saved user registers by the CFI tables, by frame pointers where
 * its process or the code met has none yet (counted), and a Python
 * thread's CPython frames after the native ones, as in sample_uw(): its
 * user memory is still the one mapped, so the same reads serve. @return
 * its id in the set's uwstacks map, or a negative errno as
 * bpf_get_stackid() gives them.
 */
static __noinline long off_ustack(struct task_struct *prev, __u32 gen, __u32 set, struct uw_walk *w,
				  struct sa_ctrs *c)
{
	const struct sa_py_proc *py = NULL;
	long id;

	if (uw_walk(prev, prev->tgid, gen, 1, w) || !w->n)
		return -EFAULT;
	if (sa_python)
		py = py_proc(prev->tgid, gen, &rb);
	if (py)
		w->n = py_walk(w->ips, w->n, py, prev->pid);
	if (w->flags & (UW_NOPROC | UW_NORANGE | UW_NOTAB))
		c->v[SA_CTR_OFF_UW_FP]++;
	else
		c->v[SA_CTR_OFF_UW]++;
	if (w->flags & UW_CUT)
		c->v[SA_CTR_OFF_UW_CUT]++;
	if (w->flags & (UW_NOPROC | UW_NORANGE))
		uw_wake(&rb, prev->tgid);
	id = set ? uw_store(&uwstacks1, w) : uw_store(&uwstacks0, w);
	return id == -E2BIG ? -ENOMEM : id;
}

/*
 * A target thread leaves the CPU (current is still @prev): keep the time
 * and its stacks, in the stack map of the current set. When that set is
 * drained, user space reads the stacks of the ids still needed before it
 * clears the map (record/drain/offcpu.c). @return a counter slot, or 0 when kept.
 */
static __always_inline int switch_out(void *ctx, struct task_struct *prev, bool preempt,
				      unsigned int state, struct sa_ctrs *c, const bool full)
{
	struct sa_off_start st = {.ts = bpf_ktime_get_ns(),
				  .epoch = sa_epoch,
				  .rt = prev->se.sum_exec_runtime,
				  .born = prev->start_time};
	__u32 tgid = prev->tgid, tid = prev->pid, *gen;
	void *stacks = st.epoch & 1 ? (void *)&stacks1 : (void *)&stacks0;
	long uid = SA_STACK_NONE, kid = SA_STACK_NONE;
	struct uw_walk w = {0}, *wp = NULL;

	gen = bpf_map_lookup_elem(&gens, &tgid);
	st.gen = gen ? *gen : 0;
	if (full && !sa_kernel_only && sa_uw && !no_user_mm()) {
		uid = off_ustack(prev, st.gen, st.epoch & 1, &w, c);
		wp = &w;
	} else if (!sa_kernel_only) {
		uid = bpf_get_stackid(ctx, stacks, BPF_F_USER_STACK);
	}
	/* skip this program and bpf_trace_run4(): the stack starts at __schedule */
	if (!sa_user_only)
		kid = bpf_get_stackid(ctx, stacks, 2 & BPF_F_SKIP_FIELD_MASK);
	if (uid == -EFAULT && no_user_mm())
		uid = SA_STACK_NONE;
	if (uid == -EFAULT)
		return SA_CTR_OFF_LOST_USTACK;
	if (kid == -EFAULT)
		return SA_CTR_OFF_LOST_KSTACK;
	st.flags = preempt || state == TASK_RUNNING ? SA_OFF_PREEMPTED : 0;
	if (uid == -EEXIST || kid == -EEXIST || uid == -ENOMEM || kid == -ENOMEM) {
		/* a bucket clash or a full map: the stacks go inline */
		int slot = off_inline(ctx, &st, tid,
				      (uid != SA_STACK_NONE ? OFF_USER : 0) |
					      (kid != SA_STACK_NONE ? OFF_KERNEL : 0),
				      wp);

		if (slot)
			return slot;
		uid = kid = SA_STACK_NONE;
		st.flags |= SA_OFF_INLINE;
	}
	if (uid < SA_STACK_NONE || kid < SA_STACK_NONE)
		return SA_CTR_OFF_LOST_OTHER;
	st.ustack = uid;
	st.kstack = kid;
	if (bpf_map_update_elem(&offstart, &tid, &st, BPF_ANY))
		return SA_CTR_OFF_LOST_MAPFULL;
	return 0;
}

static __always_inline long off_add(void *counts, struct sa_off_key *key, __u64 ns,
				    struct task_struct *next)
{
	struct sa_off_val *v, nv = {.count = 1, .ns = ns};
	long err;

	v = bpf_map_lookup_elem(counts, key);
	if (!v) {
		bpf_probe_read_kernel_str(nv.comm, sizeof(nv.comm), next->comm);
		err = bpf_map_update_elem(counts, key, &nv, BPF_NOEXIST);
		if (err != -EEXIST)
			return err;
		v = bpf_map_lookup_elem(counts, key); /* another CPU added it meanwhile */
		if (!v)
			return -ENOENT;
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->ns, ns);
	return 0;
}

/*
 * The stay @st of thread @t ends, @ns long: to the current set's off-CPU
 * counts, or as an OFF_END to match its stacks in offrb. The caller
 * deletes the start entry after (user space's scan of the stack ids still
 * needed relies on that order). @return a counter slot.
 */
static __noinline int end_stay(struct sa_off_start *st, struct task_struct *t, __u64 ns, __u32 set)
{
	__u32 tid = t->pid;
	struct sa_off_key key;
	long err;
	int slot = SA_CTR_OFF_KEPT;

	if (!st)
		return SA_CTR_OFF_LOST_OTHER;
	if (ns < sa_off_min_ns) {
		slot = SA_CTR_OFF_SHORT;
	} else if (st->flags & SA_OFF_INLINE) {
		slot = off_inline_end(st, t, ns);
	} else {
		key = (struct sa_off_key){.tgid = t->tgid,
					  .tid = tid,
					  .gen = st->gen,
					  .ustack = st->ustack,
					  .kstack = st->kstack,
					  .flags = st->flags,
					  .sepoch = st->epoch};
		err = off_add(set ? (void *)&offcounts1 : (void *)&offcounts0, &key, ns, t);
		if (err == -E2BIG || err == -ENOMEM)
			slot = SA_CTR_OFF_LOST_MAPFULL;
		else if (err)
			slot = SA_CTR_OFF_LOST_OTHER;
	}
	return slot;
}

__u64 sa_test_ins; /* switch-ins of stays, with sa_test_skip_in */

/* A thread comes back on the CPU: the time since its switch-out. */
static __always_inline int switch_in(struct task_struct *next, __u32 set, const bool full)
{
	__u32 tid = next->pid;
	struct sa_off_start *st = bpf_map_lookup_elem(&offstart, &tid);
	int slot;

	if (!st)
		return -1; /* not a target, or off the CPU since before the recording */
	/* a fetching atomic (5.12): 5.10 rejects it even where it is never reached */
	if (full && sa_test_skip_in &&
	    __sync_fetch_and_add(&sa_test_ins, 1) % sa_test_skip_in == sa_test_skip_in - 1)
		return -1; /* as if unseen (end_unseen()) */
	slot = end_stay(st, next, bpf_ktime_get_ns() - st->ts, set);
	bpf_map_delete_elem(&offstart, &tid);
	return slot;
}

/*
 * Thread @t leaves the CPU at @now (it may be its exit) with a stay still
 * open: the program did not see it come back on a CPU (0.2-1.1% of the
 * switches of a loaded 2-CPU machine here, docs/off-cpu.md; the kernel's
 * bpf_prog_info counting no recursion miss). The stay ends by the thread's own clock:
 * the time since its switch-out less what it ran since (se.sum_exec_runtime,
 * the scheduler's clock). An entry of another task of that tid (a freed
 * thread whose tid came back) is dropped, counted lost. @return a counter
 * slot, or -1 when no stay was open.
 */
static __always_inline int end_unseen(struct task_struct *t, __u64 now, __u32 set)
{
	__u32 tid = t->pid;
	struct sa_off_start *st = bpf_map_lookup_elem(&offstart, &tid);
	__u64 wall, ran;
	int slot;

	if (!st)
		return -1;
	if (st->born != t->start_time) {
		slot = SA_CTR_OFF_LOST_OTHER;
	} else {
		wall = now > st->ts ? now - st->ts : 0;
		ran = t->se.sum_exec_runtime - st->rt;
		slot = end_stay(st, t, ran < wall ? wall - ran : 0, set);
		if (sa_diag) {
			diag_add(20, 1);
			diag_add(21, ran < wall ? wall - ran : 0);
		}
	}
	bpf_map_delete_elem(&offstart, &tid);
	return slot;
}

/* Count a stay's end in @slot of @c (the current set's counters). */
static __always_inline void count_end(struct sa_ctrs *c, int slot)
{
	if (slot == SA_CTR_OFF_RECOVERED) {
		c->v[SA_CTR_OFF_RUNS]++;
		c->v[SA_CTR_OFF_KEPT]++;
		c->v[SA_CTR_OFF_RECOVERED]++;
	} else if (slot >= SA_CTR_OFF_KEPT && slot < SA_CTR__NR) {
		c->v[SA_CTR_OFF_RUNS]++;
		c->v[slot]++;
	}
}

/* sa_on_switch's body; @full as in on_cpu_sample(): false walks no user stack here. */
static __always_inline int on_switch(void *ctx, bool preempt, struct task_struct *prev,
				     struct task_struct *next, unsigned int prev_state,
				     const bool full)
{
	__u32 set = sa_epoch & 1;
	struct sa_ctrs *c = bpf_map_lookup_elem(&ctrs, &set);
	int slot;

	if (!c)
		return 0;
	/* sched_switch runs with interrupts off and does not nest: plain adds */
	if (prev->pid && (prev_state & TASK_DEAD))
		count_end(c, end_unseen(prev, bpf_ktime_get_ns(), set));
	if (prev->pid && !(prev_state & TASK_DEAD) && wanted(prev->tgid, prev->pid)) {
		count_end(c, end_unseen(prev, bpf_ktime_get_ns(), set));
		slot = switch_out(ctx, prev, preempt, prev_state, c, full);
		if (slot >= SA_CTR_OFF_LOST_USTACK && slot < SA_CTR__NR) {
			c->v[SA_CTR_OFF_RUNS]++;
			c->v[slot]++;
		}
	}
	if (next->pid)
		count_end(c, switch_in(next, set, full));
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sa_on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return on_switch(ctx, preempt, prev, next, prev_state, true);
}

/* Before 5.18 the tracepoint had no prev_state: the task's own, read as 5.18 does it. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

SEC("tp_btf/sched_switch")
int BPF_PROG(sa_on_switch_fp, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	unsigned int state;

	if (bpf_core_field_exists(prev->__state))
		state = BPF_CORE_READ(prev, __state);
	else
		state = BPF_CORE_READ((struct task_struct___pre514 *)prev, state);
	return on_switch(ctx, preempt, prev, next, state, false);
}

/* kfuncs of 6.2: weak, so that libbpf opens the object on kernels without them */
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

/*
 * Whether the pid of @p, being freed, now names another task. With the
 * kfuncs of 6.2 (@kf a constant) the kernel says it; before, births says
 * when the pid's last holder started, as sa_on_fork() saw it: another
 * start time is a task forked onto the pid since. A pid no fork took
 * during the recording is still @p's (a fork between its pid allocation
 * and its sched_process_fork sets its own entries after this).
 */
static __always_inline bool pid_reused(struct task_struct *p, const bool kf)
{
	__u32 tid = p->pid;
	struct task_struct *now;
	__u64 *born;

	if (kf) {
		now = bpf_task_from_pid(tid);
		if (now)
			bpf_task_release(now);
		return now != NULL;
	}
	born = bpf_map_lookup_elem(&births, &tid);
	if (born && *born != p->start_time)
		return true;
	bpf_map_delete_elem(&births, &tid);
	return false;
}

static __always_inline int on_free(struct task_struct *p, const bool kf)
{
	__u32 tgid = p->tgid, tid = p->pid;

	/*
	 * The free comes an RCU grace period after the pid was released, and
	 * a new task may hold the pid by then (pids come back at once when
	 * the cyclic allocator reaches them). An open stay is the task's own
	 * only by its start time (another's was lost uncounted: one per reused
	 * pid in a test that forks onto a thread's tid just freed); its own is
	 * one whose end no program saw, not even its exit's switch-out.
	 */
	if (sa_off_cpu) {
		struct sa_off_start *st = bpf_map_lookup_elem(&offstart, &tid);
		__u32 set = sa_epoch & 1;
		struct sa_ctrs *c = bpf_map_lookup_elem(&ctrs, &set);

		if (st && st->born == p->start_time) {
			bpf_map_delete_elem(&offstart, &tid);
			if (c) {
				__sync_fetch_and_add(&c->v[SA_CTR_OFF_RUNS], 1);
				__sync_fetch_and_add(&c->v[SA_CTR_OFF_LOST_OTHER], 1);
			}
		}
	}
	/* the other entries of a tid or tgid held by a new task are the new task's */
	if (pid_reused(p, kf))
		return 0;
	if (sa_python)
		bpf_map_delete_elem(&pytids, &tid);
	if (p->pid != p->tgid)
		return 0;
	bpf_map_delete_elem(&gens, &tgid);
	if (sa_python)
		bpf_map_delete_elem(&pyprocs, &tgid);
	if (sa_uw)
		bpf_map_delete_elem(&uwprocs, &tgid);
	if (sa_follow)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

SEC("tp_btf/sched_process_free")
int BPF_PROG(sa_on_free, struct task_struct *p)
{
	return on_free(p, true);
}

/* Before 6.2 (no bpf_task_from_pid()): with births, which sa_on_fork() fills. */
SEC("tp_btf/sched_process_free")
int BPF_PROG(sa_on_free_nokf, struct task_struct *p)
{
	return on_free(p, false);
}
