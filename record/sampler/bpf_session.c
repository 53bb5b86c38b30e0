// SPDX-License-Identifier: MIT
/*
 * bpf_session.c - the skeleton's lifecycle (open, size maps and set rodata,
 * load, attach), one frequency-mode perf event per CPU with
 * sa_on_cpu_sample attached, sa_on_switch with --off-cpu, the interval
 * epoch flip and the per-CPU counters of each map set. Each program's
 * variant is the one the running kernel runs (kfeatures.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpf_session.h"
#include "dither.h"
#include "hotplug.h"
#include "kfeatures.h"
#include "record.h"
#include "sa.skel.h"
#include "target.h"
#include "throttle.h"
#include "grow.h"

struct rec_session {
	struct sa *skel;
	struct bpf_link **links;
	int *pfds; /* links[i]'s perf event, owned by the link */
	int *cpus; /* links[i]'s CPU */
	int nlinks;
	struct rec_dither *dither; /* cpu-clock: random periods around 1/F */
	struct rec_throttle *thr;  /* what the kernel did not sample, throttling */
	struct rec_hotplug *hp;	   /* CPUs that go offline and back (hotplug.c) */
	int ncpus_possible;
	int cgroup_fd;
	__u32 stack_entries, counts_entries, rb_bytes, urb_bytes, off_entries, offrb_bytes;
	__u32 off_counts_entries;
	__u32 uw_rows, uw_procs; /* in-kernel unwinding, else 0 */
	__u32 filter;		 /* enum sa_filter_mode */
	bool python;		 /* CPython frames read (docs/python.md) */
	bool full;		 /* sa_on_cpu_sample, not _fp (bpf_loop: 5.13) */
	bool uw_off;		 /* sa_on_switch, not _fp: off-CPU stacks unwound here */
	struct sa_ctrs *percpu;	 /* ncpus_possible entries, for lookups */
	struct sa_ctrs *seen;	 /* per set, per CPU: the counters last read */
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static __u32 pow2_at_least(uint64_t v)
{
	__u32 p = 1;

	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

static __u32 clamp_u32(uint64_t v, __u32 lo, __u32 hi)
{
	return v < lo ? lo : v > hi ? hi : (__u32)v;
}

/*
 * Default sizes follow the samples one interval can hold: n = F x CPUs x
 * interval. Up to 2n distinct stacks (user + kernel) land in a stack map
 * whose clash rate is about distinct/(2 slots); 4n slots keep the clashes
 * (recovered through the ring buffer) rare. docs/recording.md.
 */
static void size_maps(struct rec_session *s, const struct rec_opts *o, int ncpus)
{
	uint64_t n = (uint64_t)(o->freq * (double)ncpus * o->interval) + 1;

	s->stack_entries = o->stack_map_size ? o->stack_map_size
					     : pow2_at_least(clamp_u32(4 * n, 1024, 32768));
	/*
	 * --off-cpu adds every target's blocking stacks: a clash sends a
	 * period's stacks through offrb (2 KiB each), so a hot stack that
	 * clashes costs a copy per context switch. 8192 slots per set take
	 * the kernel memory of bcc offcputime's one 16384-slot map.
	 */
	if (o->off_cpu && !o->stack_map_size && s->stack_entries < 8192)
		s->stack_entries = 8192;
	s->counts_entries = o->counts_map_size ? o->counts_map_size
					       : pow2_at_least(clamp_u32(2 * n, 1024, 65536));
	/*
	 * The off-CPU counts take a key per (thread, stacks) that left a CPU
	 * in an interval: switches, not samples, and a preempted busy thread
	 * brings a new key at nearly every tick. -a --off-cpu beside two busy
	 * loops switched 2,100 times a second per CPU here, and a 1,024-key
	 * map (99 Hz on 2 CPUs) lost 1,437 of 6,192 stays of a 1.5 s interval
	 * as map-full: 4,096 keys a second per CPU.
	 */
	s->off_counts_entries =
		o->counts_map_size ? o->counts_map_size
				   : pow2_at_least(clamp_u32(
					     (uint64_t)(4096 * (double)ncpus * o->interval) + 1,
					     4096, 262144));
	/* room for 0.2 s of samples that all miss the maps */
	s->rb_bytes = o->ringbuf_size ? pow2_at_least(o->ringbuf_size)
				      : pow2_at_least(clamp_u32(o->freq * (uint64_t)ncpus / 5 *
									sizeof(struct sa_rb_sample),
								256 << 10, 64 << 20));
	if (s->rb_bytes < (__u32)getpagesize())
		s->rb_bytes = getpagesize();
	/*
	 * --call-graph dwarf: 0.25 s of full-size captures (most are far
	 * smaller); auto copies only what the in-kernel tables do not cover
	 * yet, a quarter of that: allocating and clearing 16 MiB at each start
	 * was a tenth of what auto cost beyond fp (docs/unwinding.md, "Cost").
	 */
	s->urb_bytes = getpagesize();
	if (o->call_graph != SA_CG_FP)
		s->urb_bytes = pow2_at_least(clamp_u32(
			o->freq * (uint64_t)ncpus / (o->call_graph == SA_CG_AUTO ? 16 : 4) *
				(o->stack_size + 1024),
			1 << 20, 64 << 20));
}

/*
 * --off-cpu: sa_on_switch is loaded (and attached by sa__attach()) only
 * then. The off-CPU counts hold one key per (thread, stacks) that waited
 * in an interval, like the on-CPU counts; offstart one entry per target
 * thread off the CPU at once (~100 B each, preallocated).
 */
static int configure_off_cpu(struct rec_session *s, const struct rec_opts *o)
{
	struct sa *k = s->skel;
	int err;

	err = bpf_program__set_autoload(k->progs.sa_on_switch, o->off_cpu && s->uw_off);
	if (!err)
		err = bpf_program__set_autoload(k->progs.sa_on_switch_fp, o->off_cpu && !s->uw_off);
	if (err || !o->off_cpu)
		return err;
	s->off_entries = 32768;
	/* recovery: about 2,000 switch-outs' stacks (2 KiB each) between two polls */
	s->offrb_bytes = 4 << 20;
	err = bpf_map__set_max_entries(k->maps.offstart, s->off_entries);
	if (!err)
		err = bpf_map__set_max_entries(k->maps.offrb, s->offrb_bytes);
	if (!err)
		err = bpf_map__set_max_entries(k->maps.offcounts0, s->off_counts_entries);
	if (!err)
		err = bpf_map__set_max_entries(k->maps.offcounts1, s->off_counts_entries);
	k->rodata->sa_off_cpu = true;
	k->rodata->sa_off_min_ns = o->off_cpu_min_ns;
	/* tests (3162): a switch-in the program misses, every Nth of a stay */
	if (getenv("SA_RECORD_TEST_SKIP_SWITCH_IN"))
		k->rodata->sa_test_skip_in =
			(__u32)strtoul(getenv("SA_RECORD_TEST_SKIP_SWITCH_IN"), NULL, 10);
	k->rodata->sa_offrb_wake = s->offrb_bytes / 2;
	return err;
}

/*
 * In-kernel unwinding (--off-cpu, --call-graph auto; docs/unwinding.md):
 * a budget of rows for every table (8 bytes each, preallocated: 16 MiB),
 * tables of a few hundred binaries (libc 28k rows, python3 65k, cc1 479k);
 * ranges of up to 16384 processes, allocated as written; the walked stacks
 * of each set beside its stack-trace map, as many.
 */
#define UW_ROWS	 (2u << 20)
#define UW_PROCS 16384

static int configure_uw(struct rec_session *s, const struct rec_opts *o)
{
	struct sa *k = s->skel;
	const char *slots;
	int err;

	if (!(o->off_cpu && s->uw_off) && o->call_graph != SA_CG_AUTO)
		return 0;
	s->uw_rows = UW_ROWS;
	s->uw_procs = UW_PROCS;
	err = bpf_map__set_max_entries(k->maps.uwrows, s->uw_rows);
	if (!err)
		err = bpf_map__set_max_entries(k->maps.uwprocs, s->uw_procs);
	if (!err)
		err = bpf_map__set_max_entries(k->maps.uwstacks0, s->stack_entries);
	if (!err)
		err = bpf_map__set_max_entries(k->maps.uwstacks1, s->stack_entries);
	k->rodata->sa_uw = true;
	/* tests: walked stacks' ids confined to this many slots, so that clashes are forced */
	slots = getenv("SA_RECORD_TEST_UW_SLOTS");
	if (slots && strtoul(slots, NULL, 10))
		k->rodata->sa_uw_id_mask = (__u32)(strtoul(slots, NULL, 10) - 1) & SA_UW_ID_MASK;
	s->filter = o->filter;
	return err;
}

/*
 * CPython frames (--call-graph fp or auto, and the off-CPU stacks of every
 * mode, walked in the kernel; not --no-python): the stacks with them are
 * stored in the uwstacks maps, sized like the stack maps. dwarf's on-CPU
 * stack copies keep native frames only.
 */
static int configure_python(struct rec_session *s, const struct rec_opts *o)
{
	struct sa *k = s->skel;
	int err;

	if (o->no_python || (o->call_graph == SA_CG_DWARF && !o->off_cpu) || o->kernel_only ||
	    !s->full)
		return 0;
	s->python = true;
	k->rodata->sa_python = true;
	if (s->uw_rows)
		return 0; /* sized by configure_uw() */
	err = bpf_map__set_max_entries(k->maps.uwstacks0, s->stack_entries);
	if (!err)
		err = bpf_map__set_max_entries(k->maps.uwstacks1, s->stack_entries);
	return err;
}

/*
 * The variants the running kernel runs (sa.bpf.c): without bpf_loop() the
 * frame-pointer sampler; without prev_state (5.18) or bpf_task_pt_regs()
 * off-CPU user stacks by frame pointers; without bpf_task_from_pid() (6.2)
 * births kept at fork; without task storage (5.11) every sample counts one.
 */
static int choose_programs(struct rec_session *s, const struct rec_kfeatures *f)
{
	struct sa *k = s->skel;
	bool kf = rec_kfeatures__on(f, REC_KF_TASK_FROM_PID);
	int err;

	err = bpf_program__set_autoload(k->progs.sa_on_cpu_sample, s->full);
	if (!err)
		err = bpf_program__set_autoload(k->progs.sa_on_cpu_sample_fp, !s->full);
	if (!err)
		err = bpf_program__set_autoload(k->progs.sa_on_free, kf);
	if (!err)
		err = bpf_program__set_autoload(k->progs.sa_on_free_nokf, !kf);
	if (!err && !kf) /* one entry per task forked while recording, ~100 B */
		err = bpf_map__set_max_entries(k->maps.births, 65536);
	k->rodata->sa_births = !kf;
	k->rodata->sa_task_btf = rec_kfeatures__on(f, REC_KF_TASK_BTF);
	if (!rec_kfeatures__on(f, REC_KF_TASK_STORAGE) || !k->rodata->sa_task_btf)
		k->rodata->sa_period_ns = 0;
	/* weight() never reaches it then, but the map must exist: a plain hash */
	if (!err && !rec_kfeatures__on(f, REC_KF_TASK_STORAGE))
		err = bpf_map__set_type(k->maps.paid, BPF_MAP_TYPE_HASH);
	if (!err && !rec_kfeatures__on(f, REC_KF_TASK_STORAGE))
		err = bpf_map__set_max_entries(k->maps.paid, 1);
	/* before 5.13 a perf_event program may use only preallocated hashes */
	if (!err && !rec_kfeatures__on(f, REC_KF_TASK_STORAGE))
		err = bpf_map__set_map_flags(k->maps.paid, 0);
	return err;
}

static int configure(struct rec_session *s, const struct rec_opts *o, int ncpus)
{
	const struct rec_kfeatures *f = rec_kfeatures__get();
	struct sa *k = s->skel;
	struct bpf_map *m[] = {k->maps.stacks0, k->maps.stacks1, k->maps.counts0, k->maps.counts1};
	int i, err;

	s->full = rec_kfeatures__on(f, REC_KF_LOOP) && rec_kfeatures__on(f, REC_KF_TASK_BTF);
	s->uw_off = s->full && rec_kfeatures__on(f, REC_KF_TASK_PT_REGS) &&
		    rec_kfeatures__on(f, REC_KF_SWITCH_STATE);
	size_maps(s, o, ncpus);
	for (i = 0; i < 4; i++) {
		err = bpf_map__set_max_entries(m[i], i < 2 ? s->stack_entries : s->counts_entries);
		if (err)
			return err;
	}
	err = bpf_map__set_max_entries(k->maps.rb, s->rb_bytes);
	if (!err)
		err = bpf_map__set_max_entries(k->maps.urb, s->urb_bytes);
	if (!err && o->call_graph != SA_CG_FP)
		err = bpf_map__set_max_entries(k->maps.uscratch, libbpf_num_possible_cpus());
	if (!err)
		err = configure_off_cpu(s, o);
	if (!err)
		err = configure_uw(s, o);
	if (!err)
		err = configure_python(s, o);
	if (err)
		return err;
	k->rodata->sa_call_graph = o->call_graph;
	k->rodata->sa_stack_bytes = o->stack_size;
	k->rodata->sa_urb_wake = s->urb_bytes / 2;
	k->rodata->sa_filter = o->filter;
	k->rodata->sa_idle = o->idle;
	k->rodata->sa_user_only = o->user_only;
	k->rodata->sa_kernel_only = o->kernel_only;
	k->rodata->sa_follow = o->cmd && !o->all;
	k->rodata->sa_rb_wake = s->rb_bytes / 2;
	/* a sample counts the periods of its thread's CPU time (sa_clock.bpf.h) */
	if (!o->cycles && o->freq)
		k->rodata->sa_period_ns = 1000000000ull / o->freq;
	k->rodata->sa_count_runs = getenv("SA_COUNT_RUNS") != NULL;
	k->rodata->sa_diag = getenv("SA_DIAG") != NULL;
	err = choose_programs(s, f);
	if (err)
		return err;
	if (o->filter != SA_FILTER_ALL && o->filter != SA_FILTER_CGROUP) {
		/* only the targets map needs room for many ids */
		bpf_map__set_max_entries(k->maps.targets, o->nids > 16384 ? o->nids : 16384);
	}
	return 0;
}

static int fill_targets(struct rec_session *s, const struct rec_opts *o, pid_t child)
{
	int fd = bpf_map__fd(s->skel->maps.targets);
	__u8 one = 1;
	__u32 id, key = 0;
	int i, err;

	for (i = 0; i < o->nids; i++) {
		id = o->ids[i];
		err = bpf_map_update_elem(fd, &id, &one, BPF_ANY);
		if (err)
			return err;
	}
	if (child > 0 && !o->all) {
		id = child;
		err = bpf_map_update_elem(fd, &id, &one, BPF_ANY);
		if (err)
			return err;
	}
	if (s->cgroup_fd >= 0)
		return bpf_map_update_elem(bpf_map__fd(s->skel->maps.cgroups), &key, &s->cgroup_fd,
					   BPF_ANY);
	return 0;
}

static int open_event(const void *ctx, int cpu)
{
	const struct rec_opts *o = ctx;
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = o->cycles ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE,
		.config = o->cycles ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = o->freq,
		.freq = 1,
		/* THROTTLE records in CLOCK_MONOTONIC, the intervals' clock (throttle.c) */
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
	};
	int fd = syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int attach_cpu(struct rec_session *s, const struct rec_opts *o, int cpu, char *err,
		      size_t errsz)
{
	struct bpf_link *l;
	int fd, e;

	fd = open_event(o, cpu);
	if (fd == -ENODEV)
		return 0; /* offline CPU */
	if (fd < 0) {
		if (o->cycles && (fd == -ENOENT || fd == -EOPNOTSUPP || fd == -EINVAL))
			snprintf(err, errsz,
				 "event 'cycles' is not supported on this machine "
				 "(no hardware PMU, e.g. in a VM); use -e cpu-clock");
		else
			snprintf(err, errsz, "perf_event_open on CPU %d: %s", cpu, strerror(-fd));
		return fd;
	}
	l = bpf_program__attach_perf_event(
		s->full ? s->skel->progs.sa_on_cpu_sample : s->skel->progs.sa_on_cpu_sample_fp, fd);
	if (!l) {
		e = -errno;
		close(fd);
		snprintf(err, errsz, "attach to CPU %d: %s", cpu, strerror(-e));
		return e;
	}
	s->pfds[s->nlinks] = fd;
	s->cpus[s->nlinks] = cpu;
	s->links[s->nlinks++] = l; /* the link owns fd now */
	return 0;
}

static int attach_all(struct rec_session *s, const struct rec_opts *o, char *err, size_t errsz)
{
	int cpu, i, e;

	s->links = calloc(s->ncpus_possible, sizeof(*s->links));
	s->pfds = calloc(s->ncpus_possible, sizeof(*s->pfds));
	s->cpus = calloc(s->ncpus_possible, sizeof(*s->cpus));
	if (!s->links || !s->pfds || !s->cpus)
		return -ENOMEM;
	e = sa__attach(s->skel); /* the tp_btf programs */
	if (e) {
		snprintf(err, errsz, "attach tracepoints: %s", strerror(-e));
		return e;
	}
	for (i = 0; i < (o->cpus ? o->ncpus : s->ncpus_possible); i++) {
		cpu = o->cpus ? o->cpus[i] : i;
		if (cpu < 0 || cpu >= s->ncpus_possible) {
			snprintf(err, errsz, "CPU %d does not exist", cpu);
			return -EINVAL;
		}
		e = attach_cpu(s, o, cpu, err, errsz);
		if (e)
			return e;
	}
	if (!s->nlinks) {
		snprintf(err, errsz, "no online CPU to sample");
		return -ENODEV;
	}
	return 0;
}

/*
 * The kernel turns a cpu-clock frequency into a fixed hrtimer period
 * (perf_swevent_init_hrtimer) and re-arms it on the same grid
 * (hrtimer_forward_now): a loop whose iteration divides the period, once
 * the handler's cost is taken out, was sampled at one phase (issue 16).
 * -e cycles is left alone: the kernel's frequency feedback already
 * changes its period at every tick.
 */
static int start_dither(struct rec_session *s, const struct rec_opts *o, char *err, size_t errsz)
{
	int e;

	if (o->cycles || getenv("SA_NO_DITHER"))
		return 0;
	s->dither = rec_dither__start(s->pfds, s->cpus, s->nlinks, o->freq);
	if (!s->dither) {
		e = -errno;
		snprintf(err, errsz, "setting the sampling period: %s", strerror(-e));
		return e;
	}
	return 0;
}

static void load_error(int e, char *err, size_t errsz)
{
	if (e == -EPERM || (e == -EACCES && geteuid() != 0))
		snprintf(err, errsz,
			 "loading BPF: permission denied: run as root "
			 "(CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN are needed)");
	else
		snprintf(err, errsz,
			 "loading BPF: %s (BTF and BPF support needed; "
			 "SA_DEBUG_BPF=1 shows the verifier log)",
			 strerror(-e));
}

/*
 * A kernel without what @o needs gets one sentence, not a verifier log
 * (main() asked first, before any file was opened; the probe is kept).
 */
static int refuse_old_kernel(const struct rec_opts *o, char *err, size_t errsz)
{
	return rec_kfeatures__refusal(rec_kfeatures__get(), o, err, errsz) ? -ENOTSUP : 0;
}

/*
 * SA_RECORD_TEST_START_DELAY_US (docs/sa-record.1, ENVIRONMENT): a load
 * this much slower, whatever signal comes (a BPF load does not end early
 * either), so a test can stop sa-record during start-up at the times it
 * chooses on any host.
 */
static void test_start_delay(void)
{
	const char *v = getenv("SA_RECORD_TEST_START_DELAY_US");
	uint64_t until;
	struct timespec ts;

	if (!v || !*v)
		return;
	until = mono_ns() + strtoull(v, NULL, 10) * 1000;
	for (uint64_t now = mono_ns(); now < until; now = mono_ns()) {
		ts.tv_sec = (time_t)((until - now) / 1000000000ull);
		ts.tv_nsec = (long)((until - now) % 1000000000ull);
		nanosleep(&ts, NULL);
	}
}

struct rec_session *rec_session__open(const struct rec_opts *o, pid_t child, char *err,
				      size_t errsz)
{
	struct rec_session *s = NULL;
	int e, ncpus;

	if (!getenv("SA_DEBUG_BPF"))
		libbpf_set_print(NULL);
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->cgroup_fd = -1;
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		e = ncpus ? ncpus : -EINVAL;
		goto cleanup;
	}
	s->ncpus_possible = ncpus;
	s->percpu = calloc(ncpus, sizeof(*s->percpu));
	s->seen = calloc((size_t)SA_NSETS * ncpus, sizeof(*s->seen));
	if (!s->percpu || !s->seen) {
		e = -ENOMEM;
		snprintf(err, errsz, "opening BPF object: %s", strerror(-e));
		goto cleanup;
	}
	s->skel = sa__open();
	if (!s->skel) {
		e = -errno;
		if (!refuse_old_kernel(o, err, errsz))
			snprintf(err, errsz, "opening BPF object: %s", strerror(-e));
		else
			e = -ENOTSUP;
		goto cleanup;
	}
	if (refuse_old_kernel(o, err, errsz)) {
		e = -ENOTSUP;
		goto cleanup;
	}
	if (o->cgroup) {
		s->cgroup_fd = rec_cgroup_open(o->cgroup, NULL, 0);
		if (s->cgroup_fd < 0) {
			e = s->cgroup_fd;
			snprintf(err, errsz, "cgroup %s: %s", o->cgroup, strerror(-e));
			goto cleanup;
		}
	}
	e = configure(s, o, o->cpus ? o->ncpus : ncpus);
	if (e) {
		load_error(e, err, errsz);
		goto cleanup;
	}
	e = sa__load(s->skel);
	if (e) {
		if (refuse_old_kernel(o, err, errsz))
			e = -ENOTSUP;
		else
			load_error(e, err, errsz);
		goto cleanup;
	}
	test_start_delay();
	e = fill_targets(s, o, child);
	if (e) {
		snprintf(err, errsz, "filling target map: %s", strerror(-e));
		goto cleanup;
	}
	s->skel->bss->sa_t0 = mono_ns();
	e = attach_all(s, o, err, errsz);
	if (e)
		goto cleanup;
	e = start_dither(s, o, err, errsz);
	if (e)
		goto cleanup;
	s->thr = rec_throttle__new(s->pfds, s->nlinks, o->freq);
	if (!s->thr) {
		e = -errno;
		snprintf(err, errsz, "watching for throttling: %s", strerror(-e));
		goto cleanup;
	}
	s->hp = rec_hotplug__new(s->links, s->pfds, s->cpus, s->nlinks,
				 s->skel->progs.sa_on_cpu_sample, open_event, o, !o->cycles,
				 s->thr);
	if (!s->hp) {
		e = -ENOMEM;
		goto cleanup;
	}
	return s;
cleanup:
	rec_session__free(s);
	errno = -e;
	return NULL;
}

int rec_session__flip(struct rec_session *s, __u32 *old_epoch)
{
	__u32 e = s->skel->bss->sa_epoch;

	*old_epoch = e;
	__atomic_store_n(&s->skel->bss->sa_epoch, e + 1, __ATOMIC_SEQ_CST);
	return 0;
}

int rec_session__take_ctrs(struct rec_session *s, __u32 set, struct rec_ctrs *out)
{
	int fd = bpf_map__fd(s->skel->maps.ctrs);
	struct sa_ctrs *seen;
	int i, j, err;

	memset(out, 0, sizeof(*out));
	if (set >= SA_NSETS)
		return -EINVAL;
	seen = &s->seen[(size_t)set * s->ncpus_possible];
	err = bpf_map_lookup_elem(fd, &set, s->percpu);
	if (err)
		return err;
	for (i = 0; i < s->ncpus_possible; i++)
		for (j = 0; j < SA_CTR__NR; j++) {
			out->v[j] += s->percpu[i].v[j] - seen[i].v[j];
			seen[i].v[j] = s->percpu[i].v[j];
		}
	return 0;
}

const volatile __u64 *rec_session__diag(const struct rec_session *s, int *n)
{
	*n = (int)(sizeof(s->skel->bss->sa_diag_v) / sizeof(s->skel->bss->sa_diag_v[0]));
	return s->skel->bss->sa_diag_v;
}

int rec_session__stack_fd(const struct rec_session *s, __u32 set)
{
	return bpf_map__fd(set ? s->skel->maps.stacks1 : s->skel->maps.stacks0);
}

int rec_session__counts_fd(const struct rec_session *s, __u32 set)
{
	return bpf_map__fd(set ? s->skel->maps.counts1 : s->skel->maps.counts0);
}

bool rec_session__off_cpu(const struct rec_session *s)
{
	return s->off_entries != 0;
}

int rec_session__offcounts_fd(const struct rec_session *s, __u32 set)
{
	return bpf_map__fd(set ? s->skel->maps.offcounts1 : s->skel->maps.offcounts0);
}

struct bpf_map *rec_session__offrb(const struct rec_session *s)
{
	return s->skel->maps.offrb;
}

int rec_session__offstart_fd(const struct rec_session *s)
{
	return bpf_map__fd(s->skel->maps.offstart);
}

__u32 rec_session__counts_size(const struct rec_session *s)
{
	return s->counts_entries;
}

__u32 rec_session__gen(const struct rec_session *s, __u32 tgid)
{
	__u32 gen = 0;

	bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.gens), &tgid, &gen);
	return gen;
}

struct bpf_map *rec_session__ringbuf(const struct rec_session *s)
{
	return s->skel->maps.rb;
}

__u32 rec_session__uw(const struct rec_session *s, int *rows_fd, int *procs_fd)
{
	*rows_fd = bpf_map__fd(s->skel->maps.uwrows);
	*procs_fd = bpf_map__fd(s->skel->maps.uwprocs);
	return s->uw_rows;
}

bool rec_session__is_target(const struct rec_session *s, __u32 tgid)
{
	__u8 one;

	if (s->filter != SA_FILTER_TGID)
		return true;
	return !bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.targets), &tgid, &one);
}

int rec_session__pyprocs_fd(const struct rec_session *s)
{
	return s->python ? bpf_map__fd(s->skel->maps.pyprocs) : -1;
}

int rec_session__uwstacks_fd(const struct rec_session *s, __u32 set)
{
	return bpf_map__fd(set ? s->skel->maps.uwstacks1 : s->skel->maps.uwstacks0);
}

struct bpf_map *rec_session__ustack_ringbuf(const struct rec_session *s)
{
	return s->skel->maps.urb;
}

int rec_session__ncpus(const struct rec_session *s)
{
	return s->nlinks;
}

uint64_t rec_session__kernel_bytes(const struct rec_session *s)
{
	uint64_t b = 2 * ((uint64_t)s->stack_entries * 1040 + (uint64_t)s->counts_entries * 100) +
		     s->rb_bytes + s->urb_bytes;

	if (s->uw_rows) /* tables, and two walked-stack maps of ~1.1 KB an entry */
		b += (uint64_t)s->uw_rows * sizeof(struct sa_uw_row) +
		     2 * (uint64_t)s->stack_entries * 1100;
	if (s->off_entries) /* offstart, and two off-CPU counts maps of ~110 B a key */
		b += (uint64_t)s->off_entries * 100 + 2 * (uint64_t)s->off_counts_entries * 110 +
		     s->offrb_bytes;
	return b;
}

struct rec_throttle *rec_session__throttle(const struct rec_session *s)
{
	return s->thr;
}

struct rec_hotplug *rec_session__hotplug(const struct rec_session *s)
{
	return s->hp;
}

void rec_session__free(struct rec_session *s)
{
	int i;

	if (!s)
		return;
	rec_dither__stop(s->dither); /* before the links close its fds */
	rec_throttle__free(s->thr);
	rec_hotplug__free(s->hp);
	for (i = 0; i < s->nlinks; i++)
		bpf_link__destroy(s->links[i]);
	free(s->links);
	free(s->pfds);
	free(s->cpus);
	sa__destroy(s->skel);
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
	SAC_FREE_ALL(s->percpu, s->seen, s);
}
