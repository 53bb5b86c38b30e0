// SPDX-License-Identifier: MIT
/*
 * drain.c - takes one interval out of the kernel and into the file: flips
 * the map set, waits out the grace period, consumes the recovery ring
 * buffer, batch-drains the counts map, resolves and deletes the stack map
 * entries, then writes INTERVAL, COUNT, OFFCPU (offcpu.c) and LOSS records
 * (docs/format.md "Samples chunk"). docs/recording.md explains why.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpf_session.h"
#include "clock.h"
#include "deadline.h"
#include "drain.h"
#include "grow.h"
#include "htab.h"
#include "loss.h"
#include "mapdrain.h"
#include "offcpu.h"
#include "procs.h"
#include "python.h"
#include "record.h"
#include "selfcontained.h"
#include "share.h"
#include "stackdb.h"
#include "starve.h"
#include "throttle.h"
#include "ustacks.h"

struct agg_key {
	__u32 tgid, tid, gen, ufid, kfid;
};

struct agg_val {
	__u64 count, samples; /* periods, and the samples that hold them */
	char comm[SA_COMM_LEN];
};

struct kid_key {
	__s32 kid;
	__u32 kind;
	__u32 set; /* off-CPU periods may hold ids of the other set */
};

/* A stack new to the recording, to hand to rec_sc at the interval's end. */
struct new_stack {
	__u32 kind, fid, n;
	size_t off; /* its frames in rec_drain.new_ips */
};

struct rec_drain {
	struct rec_session *s;
	struct saf_writer *w;
	struct rec_procs *procs;
	struct rec_stackdb *db;
	struct ring_buffer *rb;
	struct rec_htab *agg[SA_NSETS]; /* agg_key -> agg_val, per set */
	struct rec_ustacks *us;		/* --call-graph dwarf captures, per set */
	__u64 lost_us[SA_NSETS];	/* samples sa-record itself dropped */
	struct rec_htab *kid2fid;	/* kid_key -> file id, per drain */
	struct rec_share *share;	/* each thread's periods by samples, per drain */
	struct sa_count_key *keys;
	struct sa_count_val *vals;
	__u32 batch;
	__u32 *stack_keys;
	size_t stack_keys_cap;
	__u64 ips[SA_MAX_DEPTH];
	struct rec_totals tot;
	int err;		/* sticky write error seen in the ring buffer callback */
	struct rec_sc *sc;	/* NULL, or symbols and mappings to capture */
	struct rec_py *py;	/* NULL, or CPython frames to name (docs/python.md) */
	struct new_stack *news; /* stacks new since the last interval's end */
	size_t nnews, news_cap;
	__u64 *new_ips;
	size_t nnew_ips, new_ips_cap;
	__u64 sb_lost_seen;	      /* side-band records lost, as of the last interval */
	__u64 unwritten_seen;	      /* maptab mappings dropped unwritten, as of then */
	struct rec_offcpu *off;	      /* --off-cpu, else NULL */
	uint64_t rb_until;	      /* the ring buffers' callbacks stop taking records then */
	volatile sig_atomic_t *abort; /* set: stop reading the rings at once */
	struct rec_deadline dl;	      /* this drain's deadlines (deadline.h) */
	uint64_t last_until;	      /* rec_drain__set_last() */
	bool no_deadline;	      /* SA_RECORD_TEST_NO_DEADLINE: none at all */
	bool late;		      /* resolve() refused a stack: the deadline passed */
	__u64 late_lost[SA_NSETS];    /* of lost_us: samples the deadlines dropped */
	unsigned long test_lose, test_reads; /* see lose_for_test() */
	unsigned long test_delay_us;	     /* see test_delay() */
	struct rec_starve *starve;	     /* NULL, or the drain thread's wait for a CPU */
};

/*
 * What one poll may spend on the ring buffers. libbpf's consume runs until
 * the rings are empty, which at 50 kHz on two CPUs they never were: the
 * loop never got back to --duration or a signal (docs/reliability.md,
 * "The stop path"). A callback past the deadline ends the call after its
 * record (libbpf advances past a record before its callback, so returning
 * early loses nothing); what is left waits, and a full ring is counted as
 * lost by the BPF program. A record read after its interval was written
 * counts in its set's next interval, as one read late always did.
 */
#define RB_BUDGET_NS (50 * 1000000ull)
/* ... and the interval's own last look at the rings, after the grace period */
#define RB_LAST_BUDGET_NS (200 * 1000000ull)
#define RB_OVER		  (-EAGAIN)

static int rb_over(const struct rec_drain *d)
{
	if (d->abort && *d->abort)
		return RB_OVER;
	return sac_now_ns(CLOCK_MONOTONIC) >= d->rb_until ? RB_OVER : 0;
}

/* Consume the rings for at most @budget_ns; -errno of a callback's error. */
static int consume(struct rec_drain *d, uint64_t budget_ns)
{
	int n;

	d->rb_until = sac_now_ns(CLOCK_MONOTONIC) + budget_ns;
	n = ring_buffer__consume(d->rb);
	return n == -EINTR || n == RB_OVER ? 0 : n;
}

static int agg_add(struct rec_drain *d, __u32 set, const struct agg_key *k, __u64 count,
		   __u64 samples, const char *comm)
{
	bool is_new;
	struct agg_val *v = rec_htab__put(d->agg[set], k, &is_new);

	if (!v)
		return -ENOMEM;
	if (is_new)
		memcpy(v->comm, comm, SA_COMM_LEN);
	v->count += count;
	v->samples += samples;
	return 0;
}

/* Room for one more new stack of @n frames (doubling both arrays). */
static int reserve_news(struct rec_drain *d, __u32 n)
{
	if (SAC_GROW(d->news, d->news_cap, d->nnews + 1, 64) ||
	    SAC_GROW(d->new_ips, d->new_ips_cap, d->nnew_ips + n, 1024))
		return -ENOMEM;
	return 0;
}

/*
 * The file id of a stack, interned in the recording. A stack new to it is
 * kept for the self-contained part (kernel symbols, embedded ELF symbols),
 * whichever path it came by, and handed over by note_news() in the
 * interval's drain: the first kernel stack makes rec_sc read kallsyms
 * (0.1-0.5 s), which in the ring buffer's callback would hold up the
 * side band and, with --call-graph auto, the classification of new code.
 */
static __u32 intern(struct rec_drain *d, __u32 kind, const __u64 *ips, __u32 n, int *err)
{
	size_t before = rec_stackdb__count(d->db);
	__u32 fid = rec_stackdb__intern(d->db, kind, ips, n, d->w, err);

	if (!*err && fid && d->py && kind == SAF_STACK_USER && rec_stackdb__count(d->db) != before)
		*err = rec_py__stack(d->py, fid, (const uint64_t *)ips, n);

	if (*err || !fid || !d->sc || rec_stackdb__count(d->db) == before)
		return *err ? 0 : fid;
	*err = reserve_news(d, n);
	if (*err)
		return 0;
	memcpy(d->new_ips + d->nnew_ips, ips, n * sizeof(*ips));
	d->news[d->nnews++] = (struct new_stack){kind, fid, n, d->nnew_ips};
	d->nnew_ips += n;
	return fid;
}

static __u32 intern_cb(void *ctx, __u32 kind, const __u64 *ips, __u32 n, int *err)
{
	return intern(ctx, kind, ips, n, err);
}

/* Hand the stacks new since the last call to rec_sc, in the order they came. */
static int note_news(struct rec_drain *d)
{
	int err = 0;

	for (size_t i = 0; i < d->nnews && !err; i++)
		err = rec_sc__stack(d->sc, d->news[i].kind, d->news[i].fid,
				    (const uint64_t *)d->new_ips + d->news[i].off, d->news[i].n);
	d->nnews = d->nnew_ips = 0;
	return err;
}

static int on_rb_sample(void *ctx, void *data, size_t len)
{
	struct rec_drain *d = ctx;
	const struct sa_rb_sample *r = data;
	struct agg_key k;
	__u32 set;
	int err = 0;

	if (len == sizeof(struct sa_rb_pywake) && r->epoch == SA_RB_PY_WAKE) {
		err = d->py ? rec_py__wake(d->py, ((const struct sa_rb_pywake *)data)->tgid) : 0;
		if (err && !d->err)
			d->err = err;
		return rb_over(d);
	}
	if (len < sizeof(*r))
		return 0;
	set = r->epoch & 1;
	k = (struct agg_key){.tgid = r->tgid, .tid = r->tid, .gen = r->gen};
	k.ufid = intern(d, SAF_STACK_USER, r->ips, r->ubytes / 8, &err);
	if (!err)
		k.kfid = intern(d, SAF_STACK_KERNEL, &r->ips[SA_MAX_DEPTH], r->kbytes / 8, &err);
	if (!err)
		err = agg_add(d, set, &k, r->count, 1, r->comm);
	if (err == -ENOMEM) {
		d->lost_us[set] += r->count;
		err = 0;
	}
	if (err && !d->err)
		d->err = err;
	return rb_over(d);
}

/* --call-graph dwarf: kernel frames interned now, the rest kept for its interval. */
static int on_rb_ustack(void *ctx, void *data, size_t len)
{
	struct rec_drain *d = ctx;
	const struct sa_rb_ustack *r = data;
	int err = 0;
	__u32 kfid;

	if (len < offsetof(struct sa_rb_ustack, stack) ||
	    r->ubytes > len - offsetof(struct sa_rb_ustack, stack))
		return 0;
	kfid = intern(d, SAF_STACK_KERNEL, r->kips, r->kbytes / 8, &err);
	if (!err)
		err = rec_ustacks__add(d->us, r, kfid);
	if (err == -ENOMEM) {
		d->lost_us[r->epoch & 1] += r->count;
		err = 0;
	}
	if (err && !d->err)
		d->err = err;
	return rb_over(d);
}

/* --off-cpu's records, within the same budget */
static int on_rb_off(void *ctx, void *data, size_t len)
{
	struct rec_drain *d = ctx;
	int err = rec_offcpu__on_rb(d->off, data, len);

	return err ? err : rb_over(d);
}

static int note_ustack(void *ctx, __u32 tgid, __u32 gen, __u64 ip)
{
	struct rec_drain *d = ctx;

	return d->sc ? rec_sc__note_ip(d->sc, tgid, gen, ip) : 0;
}

/* Between stack copies of a long interval end: the rings keep filling. */
static void pump_rings(void *ctx)
{
	struct rec_drain *d = ctx;
	int n = consume(d, RB_BUDGET_NS);

	if (n < 0 && !d->err)
		d->err = n;
}

struct rec_drain *rec_drain__new(struct rec_session *s, struct saf_writer *w,
				 struct rec_procs *procs)
{
	struct rec_drain *d = calloc(1, sizeof(*d));
	int i;

	if (!d)
		return NULL;
	d->s = s;
	d->w = w;
	d->procs = procs;
	d->batch = rec_session__counts_size(s) < 4096 ? rec_session__counts_size(s) : 4096;
	d->keys = calloc(d->batch, sizeof(*d->keys));
	d->vals = calloc(d->batch, sizeof(*d->vals));
	d->db = rec_stackdb__new();
	d->kid2fid = rec_htab__new(sizeof(struct kid_key), sizeof(__u32));
	for (i = 0; i < SA_NSETS; i++)
		d->agg[i] = rec_htab__new(sizeof(struct agg_key), sizeof(struct agg_val));
	d->us = rec_ustacks__new();
	d->share = rec_share__new();
	if (getenv("SA_RECORD_TEST_LOSE_STACKS"))
		d->test_lose = strtoul(getenv("SA_RECORD_TEST_LOSE_STACKS"), NULL, 10);
	if (getenv("SA_RECORD_TEST_DRAIN_DELAY_US"))
		d->test_delay_us = strtoul(getenv("SA_RECORD_TEST_DRAIN_DELAY_US"), NULL, 10);
	if (rec_session__off_cpu(s) && !(d->off = rec_offcpu__new(s, intern_cb, d))) {
		rec_drain__free(d);
		return NULL;
	}
	d->rb = ring_buffer__new(bpf_map__fd(rec_session__ringbuf(s)), on_rb_sample, d, NULL);
	if (d->rb && (ring_buffer__add(d->rb, bpf_map__fd(rec_session__ustack_ringbuf(s)),
				       on_rb_ustack, d) ||
		      (d->off && ring_buffer__add(d->rb, bpf_map__fd(rec_session__offrb(s)),
						  on_rb_off, d)))) {
		ring_buffer__free(d->rb);
		d->rb = NULL;
	}
	if (!d->keys || !d->vals || !d->db || !d->kid2fid || !d->agg[0] || !d->agg[1] || !d->rb ||
	    !d->us || !d->share) {
		rec_drain__free(d);
		errno = ENOMEM;
		return NULL;
	}
	rec_ustacks__set_pump(d->us, pump_rings, d);
	return d;
}

int rec_drain__poll(struct rec_drain *d, int timeout_ms)
{
	uint64_t now = sac_now_ns(CLOCK_MONOTONIC);
	int n;

	rec_starve__check(d->starve, now);
	rec_throttle__read(rec_session__throttle(d->s));
	d->rb_until = now + (uint64_t)timeout_ms * 1000000 + RB_BUDGET_NS;
	n = ring_buffer__poll(d->rb, timeout_ms);
	if (n == -EINTR || n == RB_OVER)
		n = 0;
	if (n >= 0 && !rb_over(d))
		n = consume(d, d->rb_until - sac_now_ns(CLOCK_MONOTONIC));
	return d->err ? d->err : n < 0 ? n : 0;
}

/*
 * SA_RECORD_TEST_LOSE_STACKS=N (tests only): every Nth stack read fails,
 * as a stack gone from its map would, to show each use of it is counted.
 */
static bool lose_for_test(struct rec_drain *d)
{
	return d->test_lose && ++d->test_reads % d->test_lose == 0;
}

/*
 * SA_RECORD_TEST_DRAIN_DELAY_US=N (tests only): each stack read and each
 * count written first waits N us, as they do when a storm of busy threads
 * leaves the drain a sliver of a CPU (5200-storm-deadline.t).
 */
static void test_delay(const struct rec_drain *d)
{
	struct timespec ts = {.tv_sec = d->test_delay_us / 1000000,
			      .tv_nsec = (long)(d->test_delay_us % 1000000) * 1000};

	if (d->test_delay_us)
		nanosleep(&ts, NULL);
}

/* Past @until (0: no deadline)? */
static bool deadline_passed(uint64_t until)
{
	return rec_deadline__passed(until, sac_now_ns(CLOCK_MONOTONIC));
}

/*
 * kernel stack id of set @set -> file stack id, reading the stack map on
 * first use: the stack-trace map, or for ids with SA_UW_ID_BIT the stacks
 * the in-kernel unwinder walked (same value layout).
 */
static __u32 resolve(void *ctx, __u32 set, __s32 kid, __u32 kind, int *err)
{
	struct rec_drain *d = ctx;
	int stack_fd = kid >= 0 && (kid & SA_UW_ID_BIT) ? rec_session__uwstacks_fd(d->s, set)
							: rec_session__stack_fd(d->s, set);
	struct kid_key k = {.kid = kid, .kind = kind, .set = set};
	__u32 *fid, n;

	*err = 0;
	if (kid < 0)
		return 0;
	fid = rec_htab__get(d->kid2fid, &k);
	if (fid && *fid == REC_FID_GONE)
		*err = -ENOENT;
	if (fid)
		return *err ? 0 : *fid;
	/*
	 * Past the drain's deadline a stack not read yet is not read: its
	 * samples are counted as lost, and the interval keeps its length
	 * (10,000 busy threads' stacks took the drain 20 s).
	 */
	if (deadline_passed(rec_deadline__stacks(&d->dl))) {
		d->late = true;
		*err = -ENOENT; /* as a stack gone from the map: counted lost by the caller */
		return 0;
	}
	fid = rec_htab__put(d->kid2fid, &k, NULL);
	if (!fid) {
		*err = -ENOMEM;
		return 0;
	}
	*fid = REC_FID_GONE; /* until its stack is read: a second use is lost too */
	test_delay(d);
	if (lose_for_test(d) || bpf_map_lookup_elem(stack_fd, &kid, d->ips)) {
		*err = -ENOENT;
		return 0;
	}
	for (n = 0; n < SA_MAX_DEPTH && d->ips[n]; n++)
		;
	n = intern(d, kind, d->ips, n, err);
	if (*err)
		return 0;
	*fid = n;
	return n;
}

static int add_count(struct rec_drain *d, __u32 set, const struct sa_count_key *ck,
		     const struct sa_count_val *cv)
{
	struct agg_key k = {.tgid = ck->tgid, .tid = ck->tid, .gen = ck->gen};
	int err;

	d->late = false;
	k.ufid = resolve(d, set, ck->ustack, SAF_STACK_USER, &err);
	if (!err)
		k.kfid = resolve(d, set, ck->kstack, SAF_STACK_KERNEL, &err);
	if (!err)
		err = agg_add(d, set, &k, cv->count, cv->samples, cv->comm);
	if (err == -ENOENT || err == -ENOMEM) {
		d->lost_us[set] += cv->count;
		d->late_lost[set] += d->late ? cv->count : 0;
		return 0;
	}
	return err;
}

struct count_ctx {
	struct rec_drain *d;
	__u32 set;
};

static int count_one(void *ctx, const void *key, const void *val)
{
	struct count_ctx *c = ctx;

	return add_count(c->d, c->set, key, val);
}

static int drain_counts(struct rec_drain *d, __u32 set)
{
	struct count_ctx c = {d, set};

	return rec_map__drain(rec_session__counts_fd(d->s, set), d->keys, d->vals, sizeof(*d->keys),
			      sizeof(*d->vals), d->batch, count_one, &c);
}

/*
 * Delete every entry of the set's stack map, referenced or not (a sample
 * recovered through the ring buffer can leave one of its stacks behind).
 * Keys are collected first: get_next_key on a deleted id restarts at 0.
 */
static int clear_map(struct rec_drain *d, int fd)
{
	size_t n = 0, i;
	__u32 key;

	for (__u32 *prev = NULL; !bpf_map_get_next_key(fd, prev, &key);
	     prev = &d->stack_keys[n - 1]) {
		if (SAC_GROW(d->stack_keys, d->stack_keys_cap, n + 1, 1024))
			return -ENOMEM;
		d->stack_keys[n++] = key;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &d->stack_keys[i]);
	return 0;
}

static int clear_stacks(struct rec_drain *d, __u32 set)
{
	int rows_fd, procs_fd, err = clear_map(d, rec_session__stack_fd(d->s, set));

	if (!err &&
	    (rec_session__uw(d->s, &rows_fd, &procs_fd) || rec_session__pyprocs_fd(d->s) >= 0))
		err = clear_map(d, rec_session__uwstacks_fd(d->s, set));
	return err;
}

/* Side-band records the kernel dropped since the last interval. */
static __u64 sideband_lost(struct rec_drain *d)
{
	struct rec_sc_stats st;
	__u64 n;

	if (!d->sc)
		return 0;
	rec_sc__stats(d->sc, &st);
	n = st.sb.lost - d->sb_lost_seen;
	d->sb_lost_seen = st.sb.lost;
	return n;
}

/* Mappings dropped unwritten since the last interval (meta/maptab.h). */
static __u64 maps_unwritten(struct rec_drain *d)
{
	__u64 n;

	if (!d->sc)
		return 0;
	n = rec_maptab__unwritten_dropped(rec_sc__maptab(d->sc));
	n -= d->unwritten_seen;
	d->unwritten_seen += n;
	return n;
}

/* --rotate: a stack interned before the rotation is written again in this file. */
static int carry(void *ctx, __u32 fid)
{
	struct rec_drain *d = ctx;
	const __u64 *ips;
	__u32 kind, n;
	int ret = rec_stackdb__ensure(d->db, fid, d->w, &kind, &ips, &n);

	if (ret <= 0 || !d->sc)
		return ret;
	return rec_sc__stack(d->sc, kind, fid, (const uint64_t *)ips, n);
}

/*
 * Each thread's periods of the interval, kept in the kernel's counts and in
 * the stack copies, given to its stacks by their samples (share.h).
 */
static void share(struct rec_drain *d, __u32 set)
{
	const struct agg_key *k;
	struct agg_val *v;
	size_t it;

	rec_share__clear(d->share);
	for (it = 0; (k = rec_htab__next(d->agg[set], &it, (void **)&v));)
		rec_share__add(d->share, k->tgid, k->tid, v->count, v->samples);
	rec_ustacks__share(d->us, set, d->share, false);
	for (it = 0; (k = rec_htab__next(d->agg[set], &it, (void **)&v));)
		v->count = rec_share__take(d->share, k->tgid, k->tid, v->count, v->samples);
	rec_ustacks__share(d->us, set, d->share, true);
}

static int write_counts(struct rec_drain *d, __u32 set, __u64 *truncated)
{
	struct saf_record rec = {.kind = SAF_REC_COUNT};
	const struct agg_key *k;
	struct agg_val *v;
	size_t it = 0;
	int err;

	*truncated = 0;
	while ((k = rec_htab__next(d->agg[set], &it, (void **)&v))) {
		if (!v->count) /* its samples' thread gave it no period */
			continue;
		/*
		 * Past the second deadline the rest is not written: counted as
		 * lost, and the stop path waits for no more than an interval.
		 * What describes a count is done after all are written (describe()).
		 */
		if (deadline_passed(rec_deadline__counts(&d->dl))) {
			d->lost_us[set] += v->count;
			d->late_lost[set] += v->count;
			v->count = 0; /* nothing to describe() */
			continue;
		}
		test_delay(d);
		err = carry(d, k->ufid);
		if (!err)
			err = carry(d, k->kfid);
		if (err)
			return err;
		rec.count = (struct saf_count){REC_SAF_THREAD_FIELDS(k, v)};
		err = saf_writer__add(d->w, &rec);
		if (err)
			return err;
		if (rec_stackdb__nframes(d->db, k->ufid) >= SA_MAX_DEPTH ||
		    rec_stackdb__nframes(d->db, k->kfid) >= SA_MAX_DEPTH)
			*truncated += v->count;
	}
	return 0;
}

/*
 * What the samples of each count written need besides their COUNT: the
 * process image's PROC and mappings at its first sample, a thread's new
 * name, the offsets its user stack hits in each binary (the symbols to
 * embed: a binary's table is read at its first use), its JIT map and its
 * CPython names. This is done once all COUNTs are written: on a busy
 * host the first interval's drain reads every sampled process's /proc
 * files and binaries, 167 of 584 samples were dropped at the count
 * deadline while that ran (docs/reliability.md, "The stop path"). It has
 * its own deadline: the count deadline, or half a budget after it starts
 * if later; the samples of counts not described by then are kept, their
 * frames maybe unnamed, and counted (rec_totals.bare).
 */
static int describe(struct rec_drain *d, __u32 set)
{
	uint64_t until = rec_deadline__describe(&d->dl, sac_now_ns(CLOCK_MONOTONIC));
	const struct agg_key *k;
	struct agg_val *v;
	size_t it = 0;
	int err = 0;

	while (!err && (k = rec_htab__next(d->agg[set], &it, (void **)&v))) {
		if (!v->count) /* dropped at the count deadline */
			continue;
		if (deadline_passed(until)) {
			d->tot.bare += v->count;
			err = d->sc ? rec_sc__count_bare(d->sc, k->tgid, k->gen, k->ufid) : 0;
			continue;
		}
		err = rec_procs__note(d->procs, k->tgid, k->gen, k->tid, v->comm);
		if (!err && d->sc)
			err = rec_sc__count(d->sc, k->tgid, k->gen, k->ufid);
		if (!err && d->py)
			err = rec_py__count(d->py, k->tgid, k->ufid);
	}
	return err;
}

static void wait_grace(struct rec_drain *d, uint64_t grace_ns)
{
	uint64_t until = sac_now_ns(CLOCK_MONOTONIC) + grace_ns, now;

	while ((now = sac_now_ns(CLOCK_MONOTONIC)) < until && !(d->abort && *d->abort))
		rec_drain__poll(d, (int)((until - now) / 1000000) + 1);
}

/* The interval's last look at the rings: RB_LAST_BUDGET_NS, less once stopping. */
static uint64_t last_look_ns(const struct rec_drain *d)
{
	uint64_t now = sac_now_ns(CLOCK_MONOTONIC), until = rec_deadline__stacks(&d->dl);

	if (!until || until >= now + RB_LAST_BUDGET_NS)
		return RB_LAST_BUDGET_NS;
	return until > now ? until - now : 0;
}

int rec_drain__interval(struct rec_drain *d, uint64_t start_ns, uint64_t grace_ns, uint64_t *end_ns)
{
	struct saf_interval iv = {.start_ns = start_ns};
	struct rec_ctrs c;
	struct saf_loss loss;
	__u64 truncated;
	__u32 epoch, set;
	bool last;
	int err;

	if (d->sc && (err = rec_sc__poll(d->sc)))
		return err;
	rec_session__flip(d->s, &epoch);
	iv.end_ns = sac_now_ns(CLOCK_MONOTONIC);
	last = d->last_until != 0;
	rec_deadline__begin(&d->dl, iv.end_ns + grace_ns);
	if (last)
		rec_deadline__last(&d->dl, iv.end_ns, d->last_until);
	*end_ns = iv.end_ns;
	iv.seq = epoch;
	set = epoch & 1;
	wait_grace(d, grace_ns);
	err = consume(d, last_look_ns(d));
	if (err < 0)
		return err;
	if (d->err)
		return d->err;
	err = rec_session__take_ctrs(d->s, set, &c);
	if (!err)
		err = drain_counts(d, set);
	if (!err && d->off)
		err = rec_offcpu__drain(d->off, epoch, resolve, d);
	if (!err && d->off)
		err = rec_offcpu__pin(d->off, epoch, resolve, d);
	if (!err && !last) /* after the last, the maps go with the program */
		err = clear_stacks(d, set);
	if (!err)
		err = note_news(d);
	rec_htab__clear(d->kid2fid);
	if (!err)
		err = saf_writer__interval(d->w, &iv);
	if (!err)
		share(d, set);
	if (!err)
		err = write_counts(d, set, &truncated);
	if (!err)
		err = describe(d, set);
	if (!err && d->off)
		err = rec_offcpu__write(d->off, set, d->w, d->procs, d->sc, d->py);
	/* the mappings made before the last sample, for the stack trimmer */
	if (!err && d->sc && rec_ustacks__pending(d->us, set))
		err = rec_sc__poll(d->sc);
	if (!err)
		err = rec_ustacks__write(d->us, set, d->w, d->procs, note_ustack, d);
	if (err)
		return err;
	rec_loss__fill(&loss, &c, truncated, d->lost_us[set], sideband_lost(d));
	if (d->off)
		rec_offcpu__fill_loss(d->off, set, &loss, &c);
	rec_loss__add_files(&loss);
	rec_loss__add_throttled(&loss, rec_throttle__take(rec_session__throttle(d->s), iv.end_ns));
	rec_loss__add_unwritten(&loss, maps_unwritten(d));
	rec_totals__add(&d->tot, &loss);
	for (int i = SA_CTR_UW; i < SA_CTR__NR; i++)
		d->tot.uw[i - SA_CTR_UW] += c.v[i];
	d->tot.late += d->late_lost[set];
	rec_htab__clear(d->agg[set]);
	d->lost_us[set] = d->late_lost[set] = 0;
	if (d->sc && (err = rec_sc__interval_end(d->sc)))
		return err;
	return saf_writer__interval_end(d->w, &loss);
}

void rec_drain__set_sc(struct rec_drain *d, struct rec_sc *sc)
{
	d->sc = sc;
}

void rec_drain__set_py(struct rec_drain *d, struct rec_py *py)
{
	d->py = py;
}

void rec_drain__set_abort(struct rec_drain *d, volatile sig_atomic_t *abort)
{
	d->abort = abort;
}

void rec_drain__set_budget(struct rec_drain *d, uint64_t budget_ns)
{
	/* SA_RECORD_TEST_NO_DEADLINE (tests only): what 5200 shows without them */
	d->no_deadline = getenv("SA_RECORD_TEST_NO_DEADLINE");
	d->dl.budget_ns = d->no_deadline ? 0 : budget_ns;
}

void rec_drain__set_stop(struct rec_drain *d, const volatile uint64_t *signal_ns, uint64_t end_at,
			 uint64_t stacks_ns, uint64_t counts_ns)
{
	if (!d->no_deadline)
		rec_deadline__set_stop(&d->dl, signal_ns, end_at, stacks_ns, counts_ns);
}

void rec_drain__set_last(struct rec_drain *d, uint64_t until_ns)
{
	if (!d->no_deadline)
		d->last_until = until_ns ? until_ns : 1;
}

void rec_drain__set_trim(struct rec_drain *d, struct rec_uwtrim *trim)
{
	rec_ustacks__set_trim(d->us, trim);
}

const struct rec_totals *rec_drain__totals(const struct rec_drain *d)
{
	return &d->tot;
}

void rec_drain__set_starve(struct rec_drain *d, struct rec_starve *starve)
{
	d->starve = starve;
}

size_t rec_drain__unique_stacks(const struct rec_drain *d)
{
	return rec_stackdb__count(d->db);
}

int rec_drain__keep_frames(struct rec_drain *d)
{
	rec_ustacks__set_ensure(d->us, carry, d);
	rec_offcpu__set_carry(d->off, carry, d);
	return rec_stackdb__keep_frames(d->db);
}

__u32 rec_drain__new_file(struct rec_drain *d)
{
	return rec_stackdb__new_file(d->db);
}

void rec_drain__free(struct rec_drain *d)
{
	int i;

	if (!d)
		return;
	ring_buffer__free(d->rb);
	rec_ustacks__free(d->us);
	rec_offcpu__free(d->off);
	for (i = 0; i < SA_NSETS; i++)
		rec_htab__free(d->agg[i]);
	rec_htab__free(d->kid2fid);
	rec_share__free(d->share);
	rec_stackdb__free(d->db);
	SAC_FREE_ALL(d->news, d->new_ips, d->stack_keys, d->keys, d->vals, d);
}
