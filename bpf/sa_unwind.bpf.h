/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * sa_unwind.bpf.h - the in-kernel unwinder of sa.bpf.c (included by it
 * alone): user stacks of code without frame pointers walked from the CFI
 * rows user space put in uwrows and uwprocs (sa_shared.h), one frame per
 * bpf_loop() step, then given an id in the set's uwstacks map, so they are
 * counted in the kernel like stack-trace ids. docs/unwinding.md.
 */
#ifndef SA_UNWIND_BPF_H
#define SA_UNWIND_BPF_H

/* rows of every table, back to back; user space sizes it (its budget) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sa_uw_row);
} uwrows SEC(".maps");

/* tgid -> its executable mappings (sized by user space; 2 KiB each, allocated as written) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct sa_uw_proc);
} uwprocs SEC(".maps");

/*
 * Not preallocated: 2 x 8,192 entries of 1 KiB each were zeroed and put on
 * per-CPU free lists at every start, the largest part of what auto cost the
 * recorder beyond fp (htab_map_alloc, pcpu_freelist_populate); a stack
 * takes its entry when first walked, as the uwprocs entries do.
 */
#define UW_STACK_MAP(name)                                                                         \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(max_entries, 1);                                                            \
		__uint(map_flags, BPF_F_NO_PREALLOC);                                              \
		__type(key, __u32);                                                                \
		__uint(value_size, SA_MAX_DEPTH * sizeof(__u64));                                  \
	} name SEC(".maps")

UW_STACK_MAP(uwstacks0);
UW_STACK_MAP(uwstacks1);

/*
 * The frames being walked, per CPU: slot 0 for perf samples, slot 1 for
 * sched_switch (which runs with interrupts off, so a sample never lands
 * in the middle of it on the same CPU; the two slots are for safety).
 */
struct uw_frames {
	__u64 ips[SA_MAX_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct uw_frames);
} uwscratch SEC(".maps");

/* tgid -> when it last woke user space for its tables (uw_wake()) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} uwwoken SEC(".maps");

/* How a walk went. */
#define UW_NOPROC  (1u << 0) /* the process has no ranges (yet): frame pointers throughout */
#define UW_CUT	   (1u << 1) /* it stopped at a row not kept or a word not readable */
#define UW_NOTAB   (1u << 2) /* it met a file whose table was not built: frame pointers there */
#define UW_NORANGE (1u << 3) /* it met code in no range: JIT code, or a mapping not written yet */

struct uw_walk {
	__u64 ip, sp, bp;
	__u64 *ips;		       /* the per-CPU frames */
	const struct sa_uw_proc *proc; /* NULL: UW_NOPROC */
	__u32 n;		       /* frames in ips */
	__u32 flags;
};

/*
 * The index of the range of @proc holding @pc, or -1. Global functions
 * both, so that the verifier checks each search once: inline in the
 * bpf_loop() step, it followed the search bounds through every halving at
 * every step and gave up.
 */
__noinline int uw_find_range(const struct sa_uw_proc *proc, __u64 pc)
{
	__u32 lo = 0, hi, mid, k;

	if (!proc)
		return -1;
	/*
	 * User space writes at most SA_UW_RANGES ranges. Masked, not clamped:
	 * clamped, the bound was the constant 64 on one path, and the verifier
	 * followed every halving of it apart (42,258 of the 67,328 instructions
	 * it checked in the sampling program, most of what auto's start cost
	 * beyond fp's). A count past it would only index ranges modulo 64.
	 */
	hi = proc->n & (2 * SA_UW_RANGES - 1);
	for (k = 0; k < 7 && lo < hi; k++) { /* 2^7 > 2 * SA_UW_RANGES - 1 */
		mid = (lo + hi) / 2;
		if (pc < proc->r[mid & (SA_UW_RANGES - 1)].start)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!lo || pc >= proc->r[(lo - 1) & (SA_UW_RANGES - 1)].end)
		return -1;
	return (lo - 1) & (SA_UW_RANGES - 1);
}

/* The row of @r covering @pc, as a struct sa_uw_row's bytes; kind SA_UW_NONE where none does. */
__noinline __u64 uw_find_row(const struct sa_uw_range *r, __u64 pc)
{
	__u32 lo = 0, hi, mid, k, i;
	const struct sa_uw_row *row;
	__u64 x, v = 0;

	if (!r)
		return 0;
	x = pc - r->bias;
	hi = r->nrows;
	if (x > 0xffffffffull)
		return 0;
	for (k = 0; k < SA_UW_SEARCH && lo < hi; k++) {
		mid = lo + (hi - lo) / 2;
		i = r->row0 + mid;
		row = bpf_map_lookup_elem(&uwrows, &i);
		if (!row)
			return 0;
		if (x < row->pc)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!lo || lo < hi)
		return 0;
	i = r->row0 + lo - 1;
	row = bpf_map_lookup_elem(&uwrows, &i);
	if (row)
		__builtin_memcpy(&v, row, sizeof(v));
	return v;
}

static __always_inline bool uw_read(__u64 addr, __u64 *v)
{
	return !bpf_probe_read_user(v, sizeof(*v), (void *)addr);
}

/* The frame-pointer step: @return 1 to stop. */
static __always_inline long uw_fp_step(struct uw_walk *w)
{
	__u64 bp = w->bp, nbp, ra;

	if (!bp || bp < w->sp || !uw_read(bp, &nbp) || !uw_read(bp + 8, &ra))
		return 1;
	w->sp = bp + 16;
	w->bp = nbp;
	w->ip = ra;
	return !ra;
}

/* One frame: record w->ip, then step to its caller. @return 1 to stop. */
static long uw_step(__u32 i, void *arg)
{
	struct uw_walk *w = arg;
	const struct sa_uw_range *r;
	const struct sa_uw_row *row;
	__u64 pc, cfa, ra, bp, rv;
	int k;
	__u64 n = i; /* the frame's depth: not a count kept in @w, which the verifier would
		      * follow value by value through every step */

	asm volatile("" : "+r"(n)); /* one register, bounded below and used */
	if (n >= SA_MAX_DEPTH || !w->ip)
		return 1;
	w->ips[n] = w->ip;
	w->n = n + 1;
	if (!w->proc)
		return uw_fp_step(w);
	/* a return address is past its call: look up the call */
	pc = n ? w->ip - 1 : w->ip;
	k = uw_find_range(w->proc, pc);
	if (k < 0) {
		w->flags |= UW_NORANGE;
		return uw_fp_step(w); /* anonymous (JIT) code */
	}
	r = &w->proc->r[k & (SA_UW_RANGES - 1)];
	if (!r->nrows) {
		if (r->row0 == SA_UW_NOTABLE)
			w->flags |= UW_NOTAB;
		return uw_fp_step(w); /* a file without CFI, or without a table */
	}
	rv = uw_find_row(r, pc);
	row = (const struct sa_uw_row *)&rv;
	if (row->kind == SA_UW_NONE)
		return uw_fp_step(w);
	switch (row->kind) {
	case SA_UW_RSP:
		cfa = w->sp + 8 * (__u64)row->cfa8;
		break;
	case SA_UW_RBP:
		cfa = w->bp + 8 * (__u64)row->cfa8;
		break;
	case SA_UW_PLT:
		cfa = w->sp + 8 + ((w->ip & 15) >= row->cfa8 ? 8 : 0);
		break;
	case SA_UW_END:
		return 1;
	default:
		w->flags |= UW_CUT;
		return 1;
	}
	if (cfa <= w->sp || !uw_read(cfa - 8, &ra)) {
		w->flags |= UW_CUT;
		return 1;
	}
	if (row->rbp8) {
		if (!uw_read(cfa + 8 * (__s64)row->rbp8, &bp)) {
			w->flags |= UW_CUT;
			return 1;
		}
		w->bp = bp;
	}
	w->sp = cfa;
	w->ip = ra;
	return !ra;
}

/*
 * Walk the user stack of @t (current) from the registers it entered the
 * kernel with, into the per-CPU frames of @slot. @return 0 with @w filled,
 * or -1 where there is no scratch.
 */
static __always_inline int uw_walk(struct task_struct *t, __u32 tgid, __u32 gen, __u32 slot,
				   struct uw_walk *w)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	struct uw_frames *f = bpf_map_lookup_elem(&uwscratch, &slot);
	const struct sa_uw_proc *proc;

	if (!f)
		return -1;
	__builtin_memset(f->ips, 0, sizeof(f->ips));
	proc = bpf_map_lookup_elem(&uwprocs, &tgid);
	if (proc && proc->gen != gen)
		proc = NULL; /* an exec user space has not caught up with */
	*w = (struct uw_walk){
		.ip = BPF_CORE_READ(regs, ip),
		.sp = BPF_CORE_READ(regs, sp),
		.bp = BPF_CORE_READ(regs, bp),
		.ips = f->ips,
		.proc = proc,
		.flags = proc ? 0 : UW_NOPROC,
	};
	bpf_loop(SA_MAX_DEPTH, uw_step, w, 0);
	return 0;
}

/*
 * A 32-bit hash of the walk's frames (the id's low bits). Every slot is
 * hashed, the zeroes past the walk too: a trip count that depends on the
 * walk's depth makes the verifier check each depth apart. A global
 * function, verified once rather than at each of uw_store()'s call sites.
 */
__noinline __u32 uw_hash(const struct uw_frames *f)
{
	__u64 h = 0x9e3779b97f4a7c15ull;
	__u32 i;

	if (!f)
		return 0;
	for (i = 0; i < SA_MAX_DEPTH; i++) {
		h = (h ^ f->ips[i]) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (__u32)h;
}

/*
 * Whether two stacks are the same. A global function, verified once: inline
 * in uw_store()'s probes, each probe's paths multiplied the verifier's work
 * past its limit.
 */
__noinline int uw_same(const struct uw_frames *a, const struct uw_frames *b)
{
	__u64 diff = 0;
	__u32 i;

	if (!a || !b)
		return 0;
	for (i = 0; i < SA_MAX_DEPTH; i++)
		diff |= a->ips[i] ^ b->ips[i];
	return !diff;
}

/*
 * The id of the walk's frames in @stacks (a uwstacks map): the slot of its
 * hash, or one of the next SA_UW_PROBES - 1 when another stack holds it.
 * @return the id (SA_UW_ID_BIT set), -EEXIST when every slot tried holds
 * another stack, -E2BIG or -ENOMEM when the map is full.
 */
static __noinline long uw_store(void *stacks, const struct uw_walk *w)
{
	__u32 h = uw_hash((const struct uw_frames *)w->ips), p, id;
	const __u64 *v;
	long err;

	for (p = 0; p < SA_UW_PROBES; p++) {
		id = SA_UW_ID_BIT | ((h + p) & sa_uw_id_mask & SA_UW_ID_MASK);
		v = bpf_map_lookup_elem(stacks, &id);
		if (!v) {
			err = bpf_map_update_elem(stacks, &id, w->ips, BPF_NOEXIST);
			if (!err)
				return id;
			if (err != -EEXIST)
				return err;
			v = bpf_map_lookup_elem(stacks, &id); /* another CPU stored it meanwhile */
			if (!v)
				continue;
		}
		if (uw_same((const struct uw_frames *)v, (const struct uw_frames *)w->ips))
			return id;
	}
	return -EEXIST;
}

/*
 * A walk met code without a range (UW_NOPROC, UW_NORANGE): the process has
 * mapped files user space has not read from the side band yet. A short
 * record in the ring buffer @rb wakes it (on_rb_sample() skips it), at most
 * every 10 ms per process, so that the tables follow within a poll.
 */
static __always_inline void uw_wake(void *rb, __u32 tgid)
{
	__u64 now = bpf_ktime_get_ns(), *last = bpf_map_lookup_elem(&uwwoken, &tgid), *e;

	if (last && now - *last < 10000000)
		return;
	bpf_map_update_elem(&uwwoken, &tgid, &now, BPF_ANY);
	e = bpf_ringbuf_reserve(rb, sizeof(*e), 0);
	if (e) {
		*e = tgid;
		bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	}
}

/* The walk's frames into @dst (room for SA_MAX_DEPTH). @return their bytes. */
static __always_inline long uw_copy(__u64 *dst, const struct uw_walk *w)
{
	__u32 n = w->n;

	if (n > SA_MAX_DEPTH)
		n = SA_MAX_DEPTH;
	if (bpf_probe_read_kernel(dst, n * sizeof(__u64), w->ips))
		return -EFAULT;
	return n * sizeof(__u64);
}

#endif /* SA_UNWIND_BPF_H */
