/* SPDX-License-Identifier: MIT */
/*
 * sa_shared.h - the one header shared by bpf/sa.bpf.c and record/: map keys
 * and values, ring buffer records, counter indices and fixed sizes. No
 * includes: the BPF side gets __u32 and friends from vmlinux.h, user space
 * from <linux/types.h>. User space checks the layout with _Static_assert.
 */
#ifndef SA_SHARED_H
#define SA_SHARED_H

/* kernel.perf_event_max_stack default; bpf_get_stackid() cuts stacks here. */
#define SA_MAX_DEPTH 127
#define SA_COMM_LEN  16
/* Two map sets: BPF fills set (epoch & 1) while user space drains the other. */
#define SA_NSETS 2
/* A stack id that means "no stack" (user-only, kernel-only or absent). */
#define SA_STACK_NONE (-1)

/* How sa_on_cpu_sample decides whether a sample belongs to the target. */
enum sa_filter_mode {
	SA_FILTER_ALL = 0,    /* every task (idle only with --idle) */
	SA_FILTER_TGID = 1,   /* tgid in the targets map */
	SA_FILTER_TID = 2,    /* tid in the targets map */
	SA_FILTER_CGROUP = 3, /* task under the cgroup in cgroups[0] */
};

/*
 * Per-CPU counters, one struct per map set. Every program run ends in
 * exactly one of KEPT, FILTERED or a LOST_* slot, so RUNS is their sum.
 * COLLISIONS and MAPFULL_RECOVERED count kept samples that went through
 * the ring buffer because a stack-map bucket clashed (-EEXIST) or a map was
 * full; they are already part of KEPT.
 */
enum sa_ctr_idx {
	SA_CTR_RUNS = 0,
	SA_CTR_KEPT,
	SA_CTR_FILTERED,
	SA_CTR_LOST_USTACK,
	SA_CTR_LOST_KSTACK,
	SA_CTR_LOST_RINGBUF,
	SA_CTR_LOST_MAPFULL,
	SA_CTR_LOST_OTHER,
	SA_CTR_COLLISIONS,
	SA_CTR_MAPFULL_RECOVERED,
	/*
	 * --off-cpu (sa_on_switch): every off-CPU period of a target thread
	 * that ends, or fails at its start, is one OFF_RUNS and exactly one
	 * of OFF_KEPT, OFF_SHORT or an OFF_LOST_* slot.
	 */
	SA_CTR_OFF_RUNS,
	SA_CTR_OFF_KEPT,
	SA_CTR_OFF_SHORT,
	SA_CTR_OFF_LOST_USTACK,
	SA_CTR_OFF_LOST_KSTACK,
	SA_CTR_OFF_LOST_COLLISION,
	SA_CTR_OFF_LOST_MAPFULL,
	SA_CTR_OFF_LOST_OTHER,
	SA_CTR_OFF_LOST_RINGBUF,
	SA_CTR_OFF_RECOVERED, /* of OFF_KEPT: stacks sent inline through offrb */
	/*
	 * In-kernel unwinding (sa_unwind.bpf.h), informational: of the runs
	 * above, samples whose user stack the CFI tables walked (UW) or that
	 * went as a stack copy instead (UW_COPY, --call-graph auto); of the
	 * switch-outs, walks by the tables (OFF_UW) or by frame pointers for
	 * want of tables or of a mapping in them (OFF_UW_FP), and walks that
	 * met a row the tables do not keep or an unreadable word and stopped
	 * early (OFF_UW_CUT).
	 */
	SA_CTR_UW,
	SA_CTR_UW_COPY,
	SA_CTR_OFF_UW,
	SA_CTR_OFF_UW_FP,
	SA_CTR_OFF_UW_CUT,
	SA_CTR__NR,
};

struct sa_ctrs {
	__u64 v[SA_CTR__NR];
};

/* Key of the counts hash map: 20 bytes, no padding. */
struct sa_count_key {
	__u32 tgid;
	__u32 tid;
	__u32 gen;    /* exec generation of tgid, 0 before any exec seen */
	__s32 ustack; /* id in the set's stack map, or SA_STACK_NONE */
	__s32 kstack;
};

/*
 * @count: the periods of its thread's CPU time the samples pay for
 * (bpf/sa_clock.bpf.h); @samples: the samples. sa-record shares each
 * thread's periods among its stacks by their samples (record/drain/share.c).
 */
struct sa_count_val {
	__u64 count;
	__u64 samples;
	char comm[SA_COMM_LEN];
};

/*
 * --off-cpu: a target thread switched out at @ts with its stacks in the
 * stack map of set (epoch & 1); keyed by tid in the offstart map until it
 * switches in again. @rt and @born let its next switch-out (or its exit)
 * end the stay where the program did not see it switch in.
 */
struct sa_off_start {
	__u64 ts; /* bpf_ktime_get_ns() */
	__u32 epoch;
	__u32 gen;
	__s32 ustack, kstack; /* ids in set (epoch & 1)'s stack map, or SA_STACK_NONE */
	__u32 flags;	      /* SA_OFF_* */
	__u32 pad;
	__u64 rt;   /* the thread's se.sum_exec_runtime then */
	__u64 born; /* its start_time: which task of that tid */
};

#define SA_OFF_PREEMPTED (1u << 0) /* runnable at switch-out: preempted or yielded */
#define SA_OFF_INLINE	 (1u << 2) /* no ids: the stacks went to offrb (sa_rb_offstart) */

/*
 * Key of the off-CPU counts maps: the on-CPU key plus SA_OFF_* flags and
 * the interval of the switch-out, whose set's stack map the ids are of.
 */
struct sa_off_key {
	__u32 tgid;
	__u32 tid;
	__u32 gen;
	__s32 ustack;
	__s32 kstack;
	__u32 flags;
	__u32 sepoch;
};

struct sa_off_val {
	__u64 count; /* off-CPU periods */
	__u64 ns;    /* their total length */
	char comm[SA_COMM_LEN];
};

/*
 * --off-cpu recovery, in the offrb ring buffer: a switch-out whose stacks
 * the stack map could not hold (bucket clash, map full) sends them inline
 * in an OFF_START; the switch-in then sends an OFF_END with the time. Both
 * are matched by (tid, ts). offrb is one ring, so a START is read before
 * its END.
 */
#define SA_RB_OFF_START 1
#define SA_RB_OFF_END	2

struct sa_rb_offstart {
	__u32 kind; /* SA_RB_OFF_START */
	__u32 tid;
	__u64 ts;
	__s32 ubytes, kbytes; /* bytes of user frames in ips[0..], kernel in ips[SA_MAX_DEPTH..] */
	__u64 ips[2 * SA_MAX_DEPTH];
};

struct sa_rb_offend {
	__u32 kind; /* SA_RB_OFF_END */
	__u32 tid;
	__u64 ts; /* of the switch-out */
	__u64 ns;
	__u32 epoch, tgid, gen, flags; /* flags: SA_OFF_PREEMPTED */
	char comm[SA_COMM_LEN];
};

/*
 * Ring buffer record: a sample whose stacks could not be stored in the stack
 * map (bucket clash or map full) or whose key did not fit the counts map.
 * The frames are captured inline with bpf_get_stack(): user frames in
 * ips[0 .. ubytes/8), kernel frames in ips[SA_MAX_DEPTH .. + kbytes/8).
 */
#define SA_RB_COLLISION (1u << 0)
#define SA_RB_MAPFULL	(1u << 1)

struct sa_rb_sample {
	__u32 epoch; /* the sample's interval; set = epoch & 1 */
	__u32 tgid;
	__u32 tid;
	__u32 gen;
	__s32 ubytes; /* bytes of user frames, 0 = none */
	__s32 kbytes;
	__u32 flags; /* SA_RB_* */
	__u32 count; /* the samples it counts (sa_clock.bpf.h) */
	char comm[SA_COMM_LEN];
	__u64 ips[2 * SA_MAX_DEPTH];
};

/* --call-graph: how user stacks are taken (docs/unwinding.md). */
enum sa_call_graph {
	SA_CG_FP = 0,	 /* bpf_get_stackid() frame-pointer walk, counted in the kernel */
	SA_CG_DWARF = 1, /* registers and a raw stack copy to the ustack ring buffer */
	SA_CG_AUTO = 2,	 /* walked in the kernel from CFI tables, a DWARF copy where they miss */
};

/* Largest --stack-size: bytes of user stack one sa_rb_ustack carries. */
#define SA_USTACK_MAX 32768
#define SA_UREGS      3 /* ip, sp, bp (x86-64) */

/*
 * Ring buffer record of --call-graph dwarf: user registers and the user
 * stack from sp, unwound offline by sa-report. Only the header and ubytes
 * of stack[] are submitted. Kernel frames (kernel-mode samples) are inline.
 */
struct sa_rb_ustack {
	__u32 epoch;
	__u32 tgid;
	__u32 tid;
	__u32 gen;
	__s32 kbytes; /* bytes of kernel frames in kips, 0 = none */
	__u32 ubytes; /* bytes of stack[] */
	__u32 count;  /* the samples it counts (sa_clock.bpf.h) */
	__u32 pad;
	char comm[SA_COMM_LEN];
	__u64 regs[SA_UREGS];
	__u64 kips[SA_MAX_DEPTH];
	__u8 stack[SA_USTACK_MAX];
};

/*
 * In-kernel unwinding from CFI tables (docs/unwinding.md "In the kernel").
 * User space turns each executable file's .eh_frame into rows sorted by
 * address, stored once in the uwrows array however many processes map the
 * file; per process, uwprocs gives the address ranges that map a table.
 * Stacks the BPF program walks get ids with SA_UW_ID_BIT set, in the set's
 * uwstacks hash map (same value layout as the stack-trace map: frames, then
 * zeroes); the counts maps key them like stack-trace ids.
 */
#define SA_UW_ID_BIT  0x40000000
#define SA_UW_ID_MASK 0x3fffffff
#define SA_UW_PROBES  4	 /* slots tried from a stack's hash before it counts as a clash */
#define SA_UW_RANGES  64 /* executable mappings with a table or frame pointers, per process */
#define SA_UW_SEARCH  23 /* binary-search steps: tables of up to 2^23 rows */

enum sa_uw_kind {
	SA_UW_NONE = 0, /* no CFI covers the address: a frame-pointer step */
	SA_UW_RSP = 1,	/* CFA = rsp + 8 * cfa8 */
	SA_UW_RBP = 2,	/* CFA = rbp + 8 * cfa8 */
	SA_UW_PLT = 3,	/* a PLT entry: CFA = rsp + 8, + 8 where (ip & 15) >= cfa8 */
	SA_UW_END = 4,	/* the return address is undefined: the outermost frame */
	SA_UW_BAD = 5,	/* a rule the tables do not keep (CFA by rbx, expressions) */
};

/* One row: from pc (a file address, p_vaddr based) until the next row's pc. */
struct sa_uw_row {
	__u32 pc;
	__u8 kind;  /* enum sa_uw_kind */
	__s8 rbp8;  /* the caller's rbp is saved at CFA + 8 * rbp8; 0: unchanged */
	__u16 cfa8; /* the CFA's offset / 8 (SA_UW_PLT: the threshold) */
};

/*
 * An executable mapping: its rows are uwrows[row0 .. row0 + nrows). No rows:
 * frame pointers (a file without CFI), or, with row0 SA_UW_NOTABLE, a file
 * whose table was not built (over the budget or the time bound).
 */
#define SA_UW_NOTABLE 0xffffffffu
struct sa_uw_range {
	__u64 start, end;
	__u64 bias; /* a row's pc = address - bias */
	__u32 row0, nrows;
};

/* uwprocs value, keyed by tgid: its ranges sorted by start, for generation gen. */
struct sa_uw_proc {
	__u32 gen;
	__u32 n;
	struct sa_uw_range r[SA_UW_RANGES];
};

/*
 * CPython frames (docs/python.md). A Python frame is one word of a user
 * stack, after the native frames: the tag in the top byte (no user or
 * kernel address has it), SA_PY_ENTRY on the first frame an eval-loop
 * call ran (where the next native _PyEval_EvalFrameDefault begins), and
 * the code object's address; address 0 marks a frame that could not be
 * read. sa-report puts them in place of the eval loop's native frames.
 */
#define SA_PY_TAG	(0x50ull << 56)
#define SA_PY_TAG_MASK	(0xffull << 56)
#define SA_PY_ENTRY	(1ull << 55)
#define SA_PY_ADDR_MASK ((1ull << 48) - 1)
#define SA_PY_FRAMES	32 /* Python frames walked per sample at most */
#define SA_PY_THREADS	32 /* thread states searched for a thread at most */

/* pyprocs value state: set pending by BPF, answered by user space */
enum sa_py_state {
	SA_PY_PENDING = 0, /* asked, not answered yet */
	SA_PY_NONE = 1,	   /* no CPython of a known version mapped */
	SA_PY_READ = 2,	   /* frames are read with the offsets below */
	SA_PY_REFUSED = 3, /* CPython whose layout could not be confirmed */
};

/*
 * sa_py_proc.flags, how a version's structures differ from 3.11's.
 * SHIM (3.12+): fr_is_entry is `owner`; a frame the C stack owns
 * (SA_PY_OWNER_CSTACK) is no Python frame, and the one before it began an
 * eval-loop call. NO_CFRAME (3.13): ts_cframe is current_frame itself.
 * ALL_ENTRY (3.8-3.10): each frame is an eval-loop call of its own.
 * PTHREAD (3.8-3.10): ts_native_tid is thread_id, pthread_self() (x86-64:
 * the fs base).
 */
#define SA_PY_F_SHIM	   1
#define SA_PY_F_NO_CFRAME  2
#define SA_PY_F_ALL_ENTRY  4
#define SA_PY_F_PTHREAD	   8
#define SA_PY_OWNER_CSTACK 3

/* pyprocs value, keyed by tgid: where the interpreter's state is, for image gen. */
struct sa_py_proc {
	__u32 gen;
	__u32 state;	      /* enum sa_py_state */
	__u64 runtime;	      /* address of _PyRuntime */
	__u16 rt_interp_head; /* _PyRuntimeState.interpreters.head */
	__u16 is_tstate_head; /* PyInterpreterState.threads.head (tstate_head) */
	__u16 ts_next;	      /* PyThreadState.next */
	__u16 ts_native_tid;  /* PyThreadState.native_thread_id (thread_id: SA_PY_F_PTHREAD) */
	__u16 ts_cframe;      /* PyThreadState.cframe (current_frame, frame: SA_PY_F_NO_CFRAME) */
	__u16 cf_frame;	      /* _PyCFrame.current_frame */
	__u16 fr_code;	      /* f_code (3.13: f_executable) */
	__u16 fr_previous;    /* previous (3.8-3.10: PyFrameObject.f_back) */
	__u16 fr_is_entry;    /* is_entry (3.12+: owner), a byte */
	__u16 flags;	      /* SA_PY_F_* */
	__u16 pad[2];
};

/* Ring buffer record asking user space about a process (pyprocs pending). */
#define SA_RB_PY_WAKE 0x50590001u
struct sa_rb_pywake {
	__u32 kind; /* SA_RB_PY_WAKE */
	__u32 tgid;
};

#endif /* SA_SHARED_H */
