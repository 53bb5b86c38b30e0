/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * python.bpf.h - CPython frames in the user stacks of sa.bpf.c (included by
 * it alone, after sa_unwind.bpf.h): the thread's PyThreadState found by its
 * native thread id, its frame chain walked (at most SA_PY_FRAMES) and one
 * word per frame appended to the native frames. docs/python.md.
 */
#ifndef SA_PYTHON_BPF_H
#define SA_PYTHON_BPF_H

const volatile bool sa_python; /* not --no-python */

/* tgid -> its interpreter, or that it has none (user space answers, sa_py_proc) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct sa_py_proc);
} pyprocs SEC(".maps");

/* tid -> its PyThreadState, as last found; checked by its native_thread_id at each use */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} pytids SEC(".maps");

static __always_inline bool py_read(__u64 addr, __u64 *v)
{
	return addr && !bpf_probe_read_user(v, sizeof(*v), (void *)addr);
}

/*
 * The interpreter of @tgid at image @gen, or NULL: not Python, or not known
 * yet. A process not seen before is marked pending and user space is asked
 * once through @rb (sa_rb_pywake), so a process costs one wake-up.
 */
static __always_inline const struct sa_py_proc *py_proc(__u32 tgid, __u32 gen, void *rb)
{
	struct sa_py_proc *p = bpf_map_lookup_elem(&pyprocs, &tgid), np = {.gen = gen};
	struct sa_rb_pywake *e;

	if (p && p->gen == gen)
		return p->state == SA_PY_READ ? p : NULL;
	if (bpf_map_update_elem(&pyprocs, &tgid, &np, p ? BPF_ANY : BPF_NOEXIST))
		return NULL; /* another CPU asked meanwhile */
	e = bpf_ringbuf_reserve(rb, sizeof(*e), 0);
	if (e) {
		e->kind = SA_RB_PY_WAKE;
		e->tgid = tgid;
		bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	}
	return NULL;
}

/*
 * What a PyThreadState of the current thread @tid holds to say it is its
 * own: native_thread_id (3.11+), or thread_id, its pthread_self(), which
 * glibc on x86-64 keeps in the fs base (3.8-3.10, SA_PY_F_PTHREAD; such a
 * layout is never answered on other architectures). The thread must be the
 * current task: the sampled one, or the one switching out.
 */
static __always_inline __u64 py_thread_key(const struct sa_py_proc *p, __u32 tid)
{
#ifdef __TARGET_ARCH_x86
	if (p->flags & SA_PY_F_PTHREAD) {
		struct task_struct *t = (struct task_struct *)bpf_get_current_task();

		return BPF_CORE_READ(t, thread.fsbase);
	}
#endif
	return tid;
}

/*
 * The PyThreadState of thread @tid: the one found last time while its
 * thread id still says @tid (py_thread_key()), else a search of the main
 * interpreter's thread list (bounded). Threads without the GIL are found
 * like the one holding it, which _PyRuntime.gilstate.tstate_current would
 * not do. @return its address, or 0.
 */
static __noinline __u64 py_tstate(const struct sa_py_proc *p, __u32 tid)
{
	__u64 *c = bpf_map_lookup_elem(&pytids, &tid), ts, v, want;
	int i;

	if (!p)
		return 0;
	want = py_thread_key(p, tid);
	if (c && py_read(*c + p->ts_native_tid, &v) && v == want)
		return *c;
	if (!py_read(p->runtime + p->rt_interp_head, &v) || !py_read(v + p->is_tstate_head, &ts))
		return 0;
	for (i = 0; i < SA_PY_THREADS && ts; i++) {
		if (!py_read(ts + p->ts_native_tid, &v))
			return 0;
		if (v == want) {
			bpf_map_update_elem(&pytids, &tid, &ts, BPF_ANY);
			return ts;
		}
		if (!py_read(ts + p->ts_next, &ts))
			return 0;
	}
	return 0;
}

/* A walk of one thread's Python frames, one bpf_loop() step per frame. */
struct py_walk {
	__u64 *ips; /* the per-CPU frames, native ones first */
	const struct sa_py_proc *p;
	__u64 frame; /* the next frame (_PyInterpreterFrame, PyFrameObject), 0 at the end */
	__u32 base;  /* native frames before the Python ones */
	__u32 n;     /* frames in ips */
};

/*
 * One frame: its word at ips[n], then its caller. A frame that cannot be
 * read gets a word with address 0 (a marked unknown frame) and ends the
 * walk. Which frames begin an eval-loop call (SA_PY_ENTRY): 3.11 says so
 * in is_entry; 3.12+ put a frame of the C stack (a shim, no word of its
 * own) after each such call's first frame; 3.8-3.10 call it once a frame.
 * In a bpf_loop() callback, verified once: a plain loop left a state per
 * depth for the rest of the program and went past the verifier's budget.
 * @return 1 to stop.
 */
static long py_step(__u32 i, void *arg)
{
	struct py_walk *c = arg;
	const struct sa_py_proc *p = c->p;
	__u64 code, flag = 0, w = SA_PY_TAG, n = c->n, next = 0;
	__u8 b;

	asm volatile("" : "+r"(n)); /* one register, bounded below and used */
	if (n >= SA_MAX_DEPTH || !c->frame || !p || !c->ips)
		return 1;
	if (py_read(c->frame + p->fr_code, &code) &&
	    ((p->flags & SA_PY_F_ALL_ENTRY) || py_read(c->frame + (p->fr_is_entry & ~7u), &flag))) {
		b = flag >> ((p->fr_is_entry & 7) * 8);
		if (!py_read(c->frame + p->fr_previous, &next))
			next = 0;
		if ((p->flags & SA_PY_F_SHIM) && b == SA_PY_OWNER_CSTACK) {
			if (n > c->base)
				c->ips[n - 1] |= SA_PY_ENTRY;
			c->frame = next;
			return !next;
		}
		w |= code & SA_PY_ADDR_MASK;
		if ((p->flags & SA_PY_F_ALL_ENTRY) || (!(p->flags & SA_PY_F_SHIM) && b))
			w |= SA_PY_ENTRY;
	}
	c->ips[n] = w;
	c->n = n + 1;
	c->frame = next;
	return !next;
}

/*
 * Append the Python frames of thread @tid after the @n native frames in
 * @ips (SA_MAX_DEPTH slots, zero past @n), at most SA_PY_FRAMES. @return
 * the new count.
 */
static __noinline __u32 py_walk(__u64 *ips, __u32 n, const struct sa_py_proc *p, __u32 tid)
{
	struct py_walk c = {.ips = ips, .p = p, .base = n, .n = n};
	__u64 ts, cf;

	if (!p || !ips)
		return n;
	/*
	 * sa-report reads the last run of words tagged as Python frames as
	 * this walk's: a native word before them that carries the tag (a
	 * frame-pointer walk through garbage reads any 8 bytes) must not join
	 * it. Its top byte makes it no user address; 0x51 keeps it none.
	 */
	if (n >= 1 && n <= SA_MAX_DEPTH && (ips[n - 1] & SA_PY_TAG_MASK) == SA_PY_TAG)
		ips[n - 1] ^= 1ull << 56;
	ts = py_tstate(p, tid);
	if (!ts || !py_read(ts + p->ts_cframe, &cf))
		return n;
	if (p->flags & SA_PY_F_NO_CFRAME)
		c.frame = cf;
	else if (!py_read(cf + p->cf_frame, &c.frame))
		return n;
	bpf_loop(SA_PY_FRAMES, py_step, &c, 0);
	return c.n;
}

/* The native words of a frame-pointer walk, cut at their first zero. */
struct py_cut {
	__u64 *ips;
	__u32 n; /* words before the first zero so far */
	bool cut;
};

/*
 * Word @i: the first zero ends the native frames (user space reads a
 * stack up to its first zero word, so Python frames after one were lost:
 * a walk through a binary without frame pointers stores whatever 8 bytes
 * it meets, 0 among them); every word after it is cleared, so no native
 * garbage follows the Python frames. In a bpf_loop() callback, verified
 * once. @return 1 to stop.
 */
static long py_cut_step(__u32 i, void *arg)
{
	struct py_cut *c = arg;
	__u64 k = i;

	asm volatile("" : "+r"(k)); /* one register, bounded below and used */
	if (k >= SA_MAX_DEPTH || !c->ips)
		return 1;
	if (c->cut)
		c->ips[k] = 0;
	else if (!c->ips[k])
		c->cut = true;
	else
		c->n = k + 1;
	return 0;
}

/*
 * A sample of a Python thread (--call-graph fp): the native frames by
 * frame pointers, the Python frames after them, counted by id from the
 * set's uwstacks map like an in-kernel unwind. A native stack that cannot
 * be taken goes the ordinary way, whose errors are counted; a native
 * walk is cut at its first zero word (py_cut_step()).
 */
static __noinline int sample_py(struct bpf_perf_event_data *ctx, struct sa_count_key *key,
				__u32 epoch, __u32 *rflags, const struct sa_py_proc *p)
{
	struct uw_walk w = {0};
	struct py_cut cut = {0};
	struct uw_frames *f;
	__u32 zero = 0;
	long nb, wid;

	f = bpf_map_lookup_elem(&uwscratch, &zero);
	if (!f)
		return SA_CTR_LOST_OTHER;
	nb = bpf_get_stack(ctx, f->ips, sizeof(f->ips), BPF_F_USER_STACK);
	if (nb <= 0) {
		if (epoch & 1)
			return sample(ctx, key, epoch, &stacks1, &counts1, rflags, NULL, 0);
		return sample(ctx, key, epoch, &stacks0, &counts0, rflags, NULL, 0);
	}
	w.ips = f->ips;
	cut.ips = f->ips;
	bpf_loop(nb / 8, py_cut_step, &cut, 0);
	w.n = py_walk(f->ips, cut.n, p, key->tid);
	if (epoch & 1) {
		wid = uw_store(&uwstacks1, &w);
		return sample(ctx, key, epoch, &stacks1, &counts1, rflags, &w, wid);
	}
	wid = uw_store(&uwstacks0, &w);
	return sample(ctx, key, epoch, &stacks0, &counts0, rflags, &w, wid);
}

#endif /* SA_PYTHON_BPF_H */
