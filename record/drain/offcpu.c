// SPDX-License-Identifier: MIT
/*
 * offcpu.c - the off-CPU half of an interval's drain (--off-cpu): takes the
 * set's off-CPU counts out of the kernel, reads the stacks that threads
 * still off the CPU will need before their map is cleared, and writes
 * OFFCPU records
 * (docs/format.md "OFFCPU", docs/off-cpu.md), and matches the stacks and
 * times the recovery ring buffer carries for switch-outs that missed the
 * stack map.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "bpf_session.h"
#include "drain.h"
#include "htab.h"
#include "mapdrain.h"
#include "offcpu.h"
#include "procs.h"
#include "python.h"
#include "record.h"
#include "selfcontained.h"
#include "grow.h"

struct off_agg_key {
	__u32 tgid, tid, gen, ufid, kfid, flags;
};

struct off_agg_val {
	__u64 count, ns;
	char comm[SA_COMM_LEN];
};

/* A stack id of interval @epoch's stack map, read before the map was cleared. */
struct pin_key {
	__u32 epoch;
	__s32 id;
	__u32 kind;
};

/* A switch-out whose stacks came through offrb, until its end comes. */
struct pending_key {
	__u32 tid, pad;
	__u64 ts;
};

struct pending_val {
	__u32 ufid, kfid;
	bool done;
};

struct rec_offcpu {
	struct rec_session *s;
	rec_intern_fn intern;
	void *ictx;
	struct rec_htab *pending;	/* pending_key -> pending_val */
	size_t ndone;			/* of them, ended */
	struct rec_htab *agg[SA_NSETS]; /* off_agg_key -> off_agg_val, per set */
	__u64 lost_us[SA_NSETS];	/* periods sa-record itself dropped */
	__u32 batch;
	struct sa_off_key *keys;
	struct sa_off_val *vals;
	__u32 *tids;
	struct sa_off_start *starts;
	struct rec_htab *pinned; /* pin_key -> file stack id, of stays still open */
	rec_carry_fn carry;	 /* --rotate, else NULL */
	void *cctx;
};

struct rec_offcpu *rec_offcpu__new(struct rec_session *s, rec_intern_fn intern, void *ctx)
{
	struct rec_offcpu *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->s = s;
	o->intern = intern;
	o->ictx = ctx;
	o->pending = rec_htab__new(sizeof(struct pending_key), sizeof(struct pending_val));
	o->pinned = rec_htab__new(sizeof(struct pin_key), sizeof(__u32));
	o->batch = rec_session__counts_size(s) < 4096 ? rec_session__counts_size(s) : 4096;
	o->keys = calloc(o->batch, sizeof(*o->keys));
	o->vals = calloc(o->batch, sizeof(*o->vals));
	o->tids = calloc(o->batch, sizeof(*o->tids));
	o->starts = calloc(o->batch, sizeof(*o->starts));
	for (int i = 0; i < SA_NSETS; i++)
		o->agg[i] = rec_htab__new(sizeof(struct off_agg_key), sizeof(struct off_agg_val));
	if (!o->keys || !o->vals || !o->tids || !o->starts || !o->agg[0] || !o->agg[1] ||
	    !o->pending || !o->pinned) {
		rec_offcpu__free(o);
		errno = ENOMEM;
		return NULL;
	}
	return o;
}

/*
 * The file id of stack @id of interval @sepoch's map: from the map itself
 * when it is not cleared yet (the interval being drained, @epoch, or the
 * one after, for a switch-out that read the new epoch while its switch-in
 * read the old), else as pinned when its interval was drained.
 */
static __u32 stack_fid(struct rec_offcpu *o, __u32 epoch, __u32 sepoch, __s32 id, __u32 kind,
		       rec_resolve_fn resolve, void *ctx, int *err)
{
	struct pin_key pk = {sepoch, id, kind};
	__u32 *fid;

	*err = 0;
	if (id < 0)
		return 0;
	if (sepoch == epoch || sepoch == epoch + 1)
		return resolve(ctx, sepoch & 1, id, kind, err);
	fid = rec_htab__get(o->pinned, &pk);
	if (!fid || *fid == REC_FID_GONE) {
		*err = -ENOENT; /* counted lost by the caller */
		return 0;
	}
	return *fid;
}

static int add_one(struct rec_offcpu *o, __u32 epoch, const struct sa_off_key *ck,
		   const struct sa_off_val *cv, rec_resolve_fn resolve, void *ctx)
{
	__u32 set = epoch & 1;
	struct off_agg_key k = {.tgid = ck->tgid,
				.tid = ck->tid,
				.gen = ck->gen,
				.flags = ck->flags & SA_OFF_PREEMPTED ? SAF_OFFCPU_PREEMPTED : 0};
	struct off_agg_val *v;
	int err;

	k.ufid = stack_fid(o, epoch, ck->sepoch, ck->ustack, SAF_STACK_USER, resolve, ctx, &err);
	if (!err)
		k.kfid = stack_fid(o, epoch, ck->sepoch, ck->kstack, SAF_STACK_KERNEL, resolve, ctx,
				   &err);
	if (!err) {
		v = rec_htab__put(o->agg[set], &k, NULL);
		if (!v)
			err = -ENOMEM;
	}
	if (err == -ENOENT || err == -ENOMEM) {
		o->lost_us[set] += cv->count;
		return 0;
	}
	if (err)
		return err;
	if (!v->count)
		memcpy(v->comm, cv->comm, SA_COMM_LEN);
	v->count += cv->count;
	v->ns += cv->ns;
	return 0;
}

static int on_start(struct rec_offcpu *o, const struct sa_rb_offstart *r)
{
	struct pending_key k = {.tid = r->tid, .ts = r->ts};
	struct pending_val *v;
	int err = 0;
	__u32 u, kf = 0;

	u = o->intern(o->ictx, SAF_STACK_USER, r->ips, r->ubytes / 8, &err);
	if (!err)
		kf = o->intern(o->ictx, SAF_STACK_KERNEL, &r->ips[SA_MAX_DEPTH], r->kbytes / 8,
			       &err);
	if (err)
		return err;
	v = rec_htab__put(o->pending, &k, NULL);
	if (!v)
		return -ENOMEM;
	*v = (struct pending_val){u, kf, false};
	return 0;
}

static int on_end(struct rec_offcpu *o, const struct sa_rb_offend *e)
{
	struct pending_key k = {.tid = e->tid, .ts = e->ts};
	struct pending_val *p = rec_htab__get(o->pending, &k);
	__u32 set = e->epoch & 1;
	struct off_agg_key ak;
	struct off_agg_val *v;

	if (!p || p->done) {
		o->lost_us[set]++; /* its start was not read: cannot happen in one ring */
		return 0;
	}
	p->done = true;
	o->ndone++;
	ak = (struct off_agg_key){e->tgid, e->tid,
				  e->gen,  p->ufid,
				  p->kfid, e->flags & SA_OFF_PREEMPTED ? SAF_OFFCPU_PREEMPTED : 0};
	v = rec_htab__put(o->agg[set], &ak, NULL);
	if (!v)
		return -ENOMEM;
	if (!v->count)
		memcpy(v->comm, e->comm, SA_COMM_LEN);
	v->count++;
	v->ns += e->ns;
	return 0;
}

int rec_offcpu__on_rb(void *ctx, void *data, size_t len)
{
	struct rec_offcpu *o = ctx;
	const __u32 *kind = data;
	int err = 0;

	if (len >= sizeof(struct sa_rb_offstart) && *kind == SA_RB_OFF_START) {
		err = on_start(o, data);
		if (err == -ENOMEM)
			err = 0; /* its end, unmatched, counts the loss */
	} else if (len >= sizeof(struct sa_rb_offend) && *kind == SA_RB_OFF_END) {
		err = on_end(o, data);
		if (err == -ENOMEM) {
			o->lost_us[((const struct sa_rb_offend *)data)->epoch & 1]++;
			err = 0;
		}
	}
	return err;
}

/* Forget the recovered periods that ended: copy the open ones to a new table. */
static int compact_pending(struct rec_offcpu *o)
{
	struct rec_htab *n;
	const struct pending_key *k;
	struct pending_val *v, *nv;
	size_t it = 0;

	if (o->ndone < 1024 || o->ndone < rec_htab__len(o->pending) / 2)
		return 0;
	n = rec_htab__new(sizeof(struct pending_key), sizeof(struct pending_val));
	if (!n)
		return -ENOMEM;
	while ((k = rec_htab__next(o->pending, &it, (void **)&v))) {
		if (v->done)
			continue;
		nv = rec_htab__put(n, k, NULL);
		if (!nv) {
			rec_htab__free(n);
			return -ENOMEM;
		}
		*nv = *v;
	}
	rec_htab__free(o->pending);
	o->pending = n;
	o->ndone = 0;
	return 0;
}

struct drain_ctx {
	struct rec_offcpu *o;
	__u32 epoch;
	rec_resolve_fn resolve;
	void *ctx;
};

static int drain_one(void *ctx, const void *key, const void *val)
{
	struct drain_ctx *c = ctx;

	return add_one(c->o, c->epoch, key, val, c->resolve, c->ctx);
}

int rec_offcpu__drain(struct rec_offcpu *o, __u32 epoch, rec_resolve_fn resolve, void *ctx)
{
	struct drain_ctx c = {o, epoch, resolve, ctx};

	return rec_map__drain(rec_session__offcounts_fd(o->s, epoch & 1), o->keys, o->vals,
			      sizeof(*o->keys), sizeof(*o->vals), o->batch, drain_one, &c);
}

struct pin_ctx {
	struct rec_offcpu *o;
	__u32 epoch;
	__u32 oldest; /* the oldest switch-out interval still needed */
	rec_resolve_fn resolve;
	void *ctx;
};

/* Pin stacks @uid and @kid of interval @sepoch when it is the one ending. */
static int pin_pair(struct pin_ctx *c, __u32 sepoch, __s32 uid, __s32 kid)
{
	__s32 ids[2] = {uid, kid};
	struct pin_key pk = {.epoch = sepoch};
	__u32 *fid;
	int err = 0;

	if ((__s32)(sepoch - c->oldest) < 0)
		c->oldest = sepoch;
	if (sepoch != c->epoch)
		return 0;
	for (int i = 0; i < 2 && !err; i++) {
		if (ids[i] < 0)
			continue;
		pk.id = ids[i];
		pk.kind = i ? SAF_STACK_KERNEL : SAF_STACK_USER;
		fid = rec_htab__put(c->o->pinned, &pk, NULL);
		if (!fid)
			return -ENOMEM;
		*fid = c->resolve(c->ctx, sepoch & 1, ids[i], pk.kind, &err);
		if (err == -ENOENT) {
			*fid = REC_FID_GONE; /* counted lost when drained */
			err = 0;
		}
	}
	return err;
}

/*
 * Every entry of hash map @fd, looked up a batch at a time into @keys and
 * @vals (not deleted: user space only reads it), @each(@c, i) for entry i.
 */
static int pin_map(struct pin_ctx *c, int fd, void *keys, void *vals,
		   int (*each)(struct pin_ctx *c, __u32 i))
{
	__u64 in = 0, out = 0; /* a hash map's batch token is a 32-bit bucket */
	__u32 i, n;
	int err = 0;

	for (bool first = true; err != -ENOENT; first = false) {
		n = c->o->batch;
		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &n, NULL);
		if (err && err != -ENOENT)
			return err;
		for (i = 0; i < n; i++) {
			int e = each(c, i);

			if (e)
				return e;
		}
		in = out;
	}
	return 0;
}

/* A thread still off the CPU. */
static int pin_start(struct pin_ctx *c, __u32 i)
{
	const struct sa_off_start *st = &c->o->starts[i];

	return pin_pair(c, st->epoch, st->ustack, st->kstack);
}

/* A stay counted in the next interval's map since the flip, not drained yet. */
static int pin_counted(struct pin_ctx *c, __u32 i)
{
	const struct sa_off_key *k = &c->o->keys[i];

	return pin_pair(c, k->sepoch, k->ustack, k->kstack);
}

/* Forget the pins of intervals older than any stay still open or counted. */
static int unpin_old(struct rec_offcpu *o, __u32 oldest)
{
	struct rec_htab *n = rec_htab__new(sizeof(struct pin_key), sizeof(__u32));
	const struct pin_key *k;
	__u32 *v, *nv;
	size_t it = 0;

	if (!n)
		return -ENOMEM;
	while ((k = rec_htab__next(o->pinned, &it, (void **)&v))) {
		if ((__s32)(k->epoch - oldest) < 0)
			continue;
		nv = rec_htab__put(n, k, NULL);
		if (!nv) {
			rec_htab__free(n);
			return -ENOMEM;
		}
		*nv = *v;
	}
	rec_htab__free(o->pinned);
	o->pinned = n;
	return 0;
}

int rec_offcpu__pin(struct rec_offcpu *o, __u32 epoch, rec_resolve_fn resolve, void *ctx)
{
	struct pin_ctx c = {o, epoch, epoch, resolve, ctx};
	int err = pin_map(&c, rec_session__offstart_fd(o->s), o->tids, o->starts, pin_start);

	if (!err)
		err = pin_map(&c, rec_session__offcounts_fd(o->s, !(epoch & 1)), o->keys, o->vals,
			      pin_counted);
	if (!err && rec_htab__len(o->pinned))
		err = unpin_old(o, c.oldest);
	return err;
}

void rec_offcpu__set_carry(struct rec_offcpu *o, rec_carry_fn carry, void *ctx)
{
	if (!o)
		return;
	o->carry = carry;
	o->cctx = ctx;
}

/* --rotate: carry the stacks that open stays hold into the current file. */
static int carry_open(struct rec_offcpu *o)
{
	const struct pending_val *pv;
	const void *k;
	__u32 *fid;
	size_t it = 0;
	int err = 0;

	while (!err && (k = rec_htab__next(o->pinned, &it, (void **)&fid)))
		err = o->carry(o->cctx, *fid);
	it = 0;
	while (!err && (k = rec_htab__next(o->pending, &it, (void **)&pv)))
		if (!pv->done && !(err = o->carry(o->cctx, pv->ufid)))
			err = o->carry(o->cctx, pv->kfid);
	return err < 0 ? err : 0;
}

int rec_offcpu__write(struct rec_offcpu *o, __u32 set, struct saf_writer *w,
		      struct rec_procs *procs, struct rec_sc *sc, struct rec_py *py)
{
	struct saf_record rec = {.kind = SAF_REC_OFFCPU};
	const struct off_agg_key *k;
	struct off_agg_val *v;
	size_t it = 0;
	int err = 0;

	while (!err && (k = rec_htab__next(o->agg[set], &it, (void **)&v))) {
		if (o->carry && (err = o->carry(o->cctx, k->ufid)) >= 0)
			err = o->carry(o->cctx, k->kfid);
		if (err < 0)
			break;
		err = rec_procs__note(procs, k->tgid, k->gen, k->tid, v->comm);
		if (!err && sc)
			err = rec_sc__count(sc, k->tgid, k->gen, k->ufid);
		if (!err && py)
			err = rec_py__count(py, k->tgid, k->ufid);
		if (err)
			break;
		rec.offcpu = (struct saf_offcpu){REC_SAF_THREAD_FIELDS(k, v), .time_ns = v->ns,
						 .flags = k->flags};
		err = saf_writer__add(w, &rec);
	}
	rec_htab__clear(o->agg[set]);
	if (!err && o->carry)
		err = carry_open(o);
	return err ? err : compact_pending(o);
}

void rec_offcpu__fill_loss(struct rec_offcpu *o, __u32 set, struct saf_loss *l,
			   const struct rec_ctrs *c)
{
	__u64 kept = c->v[SA_CTR_OFF_KEPT], lost = o->lost_us[set];
	__u32 i;

	/* enum sa_ctr_idx and enum saf_counter list the off-CPU slots in one order */
	for (i = 0; i <= SA_CTR_OFF_LOST_OTHER - SA_CTR_OFF_RUNS; i++) {
		l->ids[l->ncounters] = SAF_CTR_OFF_RUNS + i;
		l->values[l->ncounters] = c->v[SA_CTR_OFF_RUNS + i];
		if (l->ids[l->ncounters] == SAF_CTR_OFF_KEPT)
			l->values[l->ncounters] = kept - (lost < kept ? lost : kept);
		l->ncounters++;
	}
	l->ids[l->ncounters] = SAF_CTR_OFF_LOST_USERSPACE;
	l->values[l->ncounters++] = lost;
	l->ids[l->ncounters] = SAF_CTR_OFF_LOST_RINGBUF;
	l->values[l->ncounters++] = c->v[SA_CTR_OFF_LOST_RINGBUF];
	l->ids[l->ncounters] = SAF_CTR_OFF_RECOVERED;
	l->values[l->ncounters++] = c->v[SA_CTR_OFF_RECOVERED];
	l->ids[l->ncounters] = SAF_CTR_OFF_UW_WALKED;
	l->values[l->ncounters++] = c->v[SA_CTR_OFF_UW];
	l->ids[l->ncounters] = SAF_CTR_OFF_UW_FP;
	l->values[l->ncounters++] = c->v[SA_CTR_OFF_UW_FP];
	l->ids[l->ncounters] = SAF_CTR_OFF_UW_CUT;
	l->values[l->ncounters++] = c->v[SA_CTR_OFF_UW_CUT];
	o->lost_us[set] = 0;
}

void rec_offcpu__add_total(struct rec_totals *t, __u32 id, __u64 v)
{
	if (id == SAF_CTR_OFF_RUNS)
		t->off_runs += v;
	else if (id == SAF_CTR_OFF_KEPT)
		t->off_kept += v;
	else if (id == SAF_CTR_OFF_SHORT)
		t->off_short += v;
	else if (id == SAF_CTR_OFF_RECOVERED)
		t->off_recovered += v;
	else
		t->off_lost += v;
}

void rec_offcpu__free(struct rec_offcpu *o)
{
	if (!o)
		return;
	for (int i = 0; i < SA_NSETS; i++)
		rec_htab__free(o->agg[i]);
	rec_htab__free(o->pending);
	rec_htab__free(o->pinned);
	SAC_FREE_ALL(o->keys, o->vals, o->tids, o->starts, o);
}
