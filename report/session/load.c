// SPDX-License-Identifier: MIT
/*
 * load.c - the records of one recording (read.c hands them over): metadata,
 * mapping timelines, stacks, carried symbols (KSYM, USYM, JITSYM), losses,
 * and COUNT records aggregated by (pid, tid, gen, stacks, comm) with the
 * record-level filters (filter.c) applied, so memory follows distinct keys,
 * not samples; USTACK records unwound as they come (ustack.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hash.h"
#include "session_int.h"

static int64_t intern(const struct rpt_stage_env *e, const struct saf_str *str)
{
	return rpt_strpool__intern(e->pool, str->str ? str->str : "", str->str ? str->len : 0);
}

/* A COUNT or OFFCPU record's comm: most are the one before. */
static int64_t intern_comm(const struct rpt_stage_env *e, struct rpt_loaded *l,
			   const struct saf_str *str)
{
	size_t len = str->str ? str->len : 0;

	if (l->last_comm > 0 && len == l->last_comm_len &&
	    !memcmp(str->str, rpt_strpool__str(e->pool, (uint32_t)l->last_comm), len))
		return l->last_comm;
	l->last_comm = intern(e, str);
	l->last_comm_len = len;
	return l->last_comm;
}

/*
 * "Limits" in docs/format.md: what a record keeps here (frames, mappings,
 * symbols, process images, distinct count keys), in bytes, is bounded by
 * RPT_KEEP_PER_BYTE times the file's size (and RPT_KEEP_FLOOR), so a small
 * file of records that compress well cannot take the memory of the host.
 */
static int keep(struct rpt_loaded *l, uint64_t bytes)
{
	l->kept += bytes;
	return l->kept > l->keep_max ? -EFBIG : 0;
}

static int on_meta(const struct rpt_stage_env *e, struct rpt_loaded *l, const struct saf_meta *m)
{
	struct rpt_file_stats *st = l->st;
	const struct saf_str *strs[] = {&m->hostname, &m->kernel_release, &m->target, &m->cmdline,
					&m->event,    &m->writer,	  &m->arch};
	uint32_t *dst[] = {&st->host,  &st->kernel, &st->target, &st->cmdline,
			   &st->event, &st->writer, &st->arch};

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		int64_t off = intern(e, strs[i]);

		if (off < 0)
			return -ENOMEM;
		*dst[i] = off;
	}
	st->freq_hz = m->freq_hz;
	st->ncpus = m->ncpus;
	st->start_realtime_ns = m->start_realtime_ns;
	st->start_mono_ns = m->start_mono_ns;
	st->meta_flags = m->flags;
	st->has_meta = true;
	return 0;
}

static int on_proc(const struct rpt_stage_env *e, struct rpt_loaded *l, const struct saf_proc *p)
{
	struct rpt_proc *pr = rpt_maps__proc(&l->maps, p->pid, p->gen);
	int64_t comm = intern(e, &p->comm), exe = intern(e, &p->exe);

	if (!pr || comm < 0 || exe < 0)
		return -ENOMEM;
	if (comm)
		pr->comm = comm;
	if (exe)
		pr->exe = exe;
	pr->time_ns = p->time_ns;
	l->st->procs++;
	return 0;
}

/* "[libfoo.so]" for a mapping's path; anonymous code gets "[anon]". */
static int64_t map_label(const struct rpt_stage_env *e, const struct saf_map *m)
{
	const char *path = m->path.len ? m->path.str : "anon";
	const char *base = strrchr(path, '/');
	char buf[SAF_MAX_STRING + 3];
	size_t len;

	if (path[0] == '[')
		return rpt_strpool__intern(e->pool, path, strlen(path));
	path = base && base[1] ? base + 1 : path;
	len = strlen(path);
	if (len > SAF_MAX_STRING) { /* not from a record: cut as printf cuts */
		snprintf(buf, sizeof(buf), "[%s]", path);
		return rpt_strpool__intern(e->pool, buf, strlen(buf));
	}
	buf[0] = '[';
	memcpy(buf + 1, path, len);
	buf[len + 1] = ']';
	return rpt_strpool__intern(e->pool, buf, len + 2);
}

/*
 * A mapping costs its entry, and its path only when it names a binary or
 * a label not seen before: 15,000 mappings of one file at a 4,000-byte
 * path keep 1.4 MB, not 60 MB (docs/format.md, "Limits").
 */
static int on_map(const struct rpt_stage_env *e, struct rpt_loaded *l, const struct saf_map *m)
{
	struct rpt_map map = {m->start, m->end, m->pgoff, m->time_ns, m->flags, RPT_NO_DSO, 0};
	size_t pool0 = e->pool->len, ndsos0 = rpt_symbolizer__ndsos(e->sym);
	int64_t label = map_label(e, m);
	uint64_t extra;

	if (label < 0)
		return -ENOMEM;
	map.label = label;
	if (!(m->flags & SAF_MAP_ANON) && m->path.len) {
		int d = rpt_symbolizer__dso(e->sym, m->build_id.data, m->build_id.len, m->path.str,
					    l->file_idx);

		if (d < 0)
			return d;
		rpt_symbolizer__set_id_kind(e->sym, (uint32_t)d, m->id_kind);
		map.dso = d;
	}
	/* a new binary keeps its path twice (its key and its name) */
	extra = (e->pool->len - pool0) +
		(rpt_symbolizer__ndsos(e->sym) > ndsos0 ? 2 * (uint64_t)m->path.len : 0);
	l->meta_kept += extra;
	if (keep(l, extra))
		return -EFBIG;
	return rpt_maps__add(&l->maps, m->pid, m->gen, &map);
}

/*
 * Past half the bound on what records keep, mappings and symbols are not
 * kept but counted (and the first processes named): the samples and
 * intervals after them are still read. Their frames show as unknown.
 */
static int drop_meta(struct rpt_loaded *l, const struct saf_record *r)
{
	struct rpt_file_stats *st = l->st;
	size_t i;

	if (r->kind != SAF_REC_MAP) {
		st->meta_dropped++;
		return 0;
	}
	st->maps_dropped++;
	for (i = 0; i < st->ndropped && st->dropped[i].pid != r->map.pid; i++)
		;
	if (i == st->ndropped && i < sizeof(st->dropped) / sizeof(st->dropped[0])) {
		st->dropped[i].pid = r->map.pid;
		snprintf(st->dropped[i].path, sizeof(st->dropped[i].path), "%.*s",
			 (int)(r->map.path.len < 95 ? r->map.path.len : 95),
			 r->map.path.len ? r->map.path.str : "");
		st->ndropped++;
	}
	if (i < st->ndropped)
		st->dropped[i].n++;
	return 0;
}

/*
 * Stack @id is refs[@idx] (see rpt_loaded__stack()): in the dense array
 * when it lies within twice its size past the first id, else in the map.
 * The array holds at most four slots a stack (and 4096 more), so ids far
 * apart in a damaged or hostile file cost the map, not memory.
 */
static int stack_put(struct rpt_loaded *l, uint32_t id, uint32_t idx)
{
	uint64_t d;

	if (!l->stack_dense_cap)
		l->stack_base = id;
	d = (uint64_t)id - l->stack_base;
	if (d >= l->stack_dense_cap && d < 2 * l->stack_dense_cap + 4096) {
		size_t ncap = d < 2 * l->stack_dense_cap ? 2 * l->stack_dense_cap : d + 4096;
		uint32_t *n;

		if (ncap > 4 * (l->nrefs + 1) + 4096)
			return rpt_hmap__put(&l->stacks, id, idx);
		n = realloc(l->stack_dense, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + l->stack_dense_cap, 0, (ncap - l->stack_dense_cap) * sizeof(*n));
		l->stack_dense = n;
		l->stack_dense_cap = ncap;
	}
	if (d < l->stack_dense_cap && idx < UINT32_MAX) {
		l->stack_dense[d] = idx + 1;
		return 0;
	}
	return rpt_hmap__put(&l->stacks, id, idx);
}

static int on_stack(struct rpt_loaded *l, const struct saf_stack *st)
{
	if (SAC_GROW(l->refs, l->refs_cap, l->nrefs + 1, 1024) ||
	    SAC_GROW(l->ips, l->ips_cap, l->nips + st->nframes, 16384))
		return -ENOMEM;
	if (st->nframes) /* both arrays may be NULL for an empty stack */
		memcpy(l->ips + l->nips, st->ips, st->nframes * sizeof(*st->ips));
	l->refs[l->nrefs] = (struct rpt_stackref){l->nips, st->nframes, st->kind};
	l->nips += st->nframes;
	l->st->stacks++;
	return stack_put(l, st->id, (uint32_t)l->nrefs++);
}

/* A run of intervals missing after a damaged place (seq gap), from @from_ns to @to_ns. */
static void lost_run(struct rpt_file_stats *st, uint64_t first, uint64_t last, uint64_t from_ns,
		     uint64_t to_ns)
{
	st->lost_ivs += last - first + 1;
	if (st->nlost_runs < sizeof(st->lost_runs) / sizeof(st->lost_runs[0]))
		st->lost_runs[st->nlost_runs++] =
			(struct rpt_lost_ivs){first, last, from_ns, to_ns};
}

/* --time: an interval counts when its midpoint lies in [from, to). */
static void on_interval(const struct rpt_stage_env *e, struct rpt_loaded *l,
			const struct saf_interval *iv)
{
	struct rpt_file_stats *st = l->st;
	uint64_t base = st->has_meta ? st->start_mono_ns : st->first_ns;
	uint64_t next = l->have_iv ? l->iv_seq + 1 : 0;

	/* the writer repeats an open INTERVAL at the head of a continuation chunk */
	if (l->have_iv && iv->seq == l->iv_seq)
		return;
	if (l->damage_since_iv && iv->seq > next)
		lost_run(st, next, iv->seq - 1, l->have_iv ? l->iv_end : base, iv->start_ns);
	l->have_iv = l->iv_open = true;
	l->damage_since_iv = false;
	l->iv_seq = iv->seq;
	if (!st->intervals || iv->start_ns < st->first_ns)
		st->first_ns = iv->start_ns;
	if (!st->has_meta && !st->intervals)
		base = iv->start_ns;
	if (iv->end_ns > st->last_ns)
		st->last_ns = iv->end_ns;
	st->intervals++;
	st->iv_ns += iv->end_ns > iv->start_ns ? iv->end_ns - iv->start_ns : 0;
	l->iv_end = iv->end_ns;
	l->in_interval_ok = rpt_filter__time_ok(&e->o->filter, base, iv->start_ns, iv->end_ns) &&
			    rpt_filter__wall_ok(&e->o->filter, st->start_realtime_ns,
						st->start_mono_ns, iv->start_ns, iv->end_ns);
	st->iv_in_time += l->in_interval_ok;
}

/* The reader resynchronized past damage: the open interval lost its rest. */
void rpt_loaded__damage(struct rpt_loaded *l)
{
	if (l->iv_open)
		l->st->partial_ivs++;
	l->iv_open = false;
	l->damage_since_iv = true;
}

/* END read after damage: the intervals after the last one read are lost. */
static void on_end(struct rpt_loaded *l, const struct saf_end *e)
{
	struct rpt_file_stats *st = l->st;
	uint64_t next = l->have_iv ? l->iv_seq + 1 : 0;

	st->finished = true;
	st->end_ns = e->end_mono_ns;
	st->end_intervals = e->intervals;
	if (e->end_mono_ns > st->last_ns)
		st->last_ns = e->end_mono_ns;
	if (l->damage_since_iv && e->intervals > next)
		lost_run(st, next, e->intervals - 1,
			 l->have_iv ? l->iv_end : (st->has_meta ? st->start_mono_ns : 0),
			 e->end_mono_ns);
}

static int counts_grow(struct rpt_loaded *l)
{
	size_t ncap = l->counts_cap ? l->counts_cap * 2 : 1024;
	struct rpt_count *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < l->counts_cap; i++) {
		struct rpt_count *c = &l->counts[i];
		size_t j;

		if (!c->used)
			continue;
		j = c->hash & (ncap - 1);
		while (n[j].used)
			j = (j + 1) & (ncap - 1);
		n[j] = *c;
	}
	free(l->counts);
	l->counts = n;
	l->counts_cap = ncap;
	return 0;
}

static int count_add(struct rpt_loaded *l, const struct rpt_count_key *k, uint64_t count)
{
	uint32_t h;
	size_t j;

	if ((l->ncounts + 1) * 2 > l->counts_cap && counts_grow(l))
		return -ENOMEM;
	h = (uint32_t)sac_hash_fnv(k, sizeof(*k), 0);
	j = h & (l->counts_cap - 1);
	while (l->counts[j].used &&
	       (l->counts[j].hash != h || memcmp(&l->counts[j].k, k, sizeof(*k))))
		j = (j + 1) & (l->counts_cap - 1);
	if (!l->counts[j].used) {
		if (keep(l, 2 * sizeof(*l->counts)))
			return -EFBIG;
		l->counts[j].used = true;
		l->counts[j].hash = h;
		l->counts[j].k = *k;
		l->ncounts++;
	}
	l->counts[j].count += count;
	if (l->iv_end > l->counts[j].time_ns)
		l->counts[j].time_ns = l->iv_end;
	return 0;
}

/*
 * Count the process image and the process of a sample once each: the
 * target's processes, apart from every process the side band saw (--info).
 * @return 0 or -ENOMEM.
 */
static int note_sampled(struct rpt_loaded *l, uint32_t pid, uint32_t gen)
{
	uint64_t img = (uint64_t)pid << 32 | gen, v;

	if (rpt_hmap__get(&l->sampled, img, &v))
		return 0;
	if (rpt_hmap__put(&l->sampled, img, 1))
		return -ENOMEM;
	l->st->images_sampled++;
	if (rpt_hmap__get(&l->sampled, 1ULL << 63 | pid, &v))
		return 0;
	l->st->procs_sampled++;
	return rpt_hmap__put(&l->sampled, 1ULL << 63 | pid, 1);
}

/*
 * Does count @c pass the record-level filters? @k gets its key. Every
 * sample is counted in the file's total first.
 * @return 1 when it does, 0 when not, or -ENOMEM.
 */
static int count_filter(const struct rpt_stage_env *e, struct rpt_loaded *l,
			const struct saf_count *c, struct rpt_count_key *k)
{
	const struct rpt_filter *f = &e->o->filter;
	int64_t comm = intern_comm(e, l, &c->comm);

	if (comm < 0)
		return -ENOMEM;
	*k = (struct rpt_count_key){c->pid, c->tid, c->gen, c->ustack, c->kstack, 0};
	l->st->samples += c->count;
	if (note_sampled(l, c->pid, c->gen))
		return -ENOMEM;
	if (!l->in_interval_ok || !rpt_recfilter__task(e->flt, c->pid, c->tid))
		return 0;
	if (!comm) { /* no thread name: the process's */
		struct rpt_proc *p = rpt_maps__proc(&l->maps, c->pid, c->gen);

		if (!p)
			return -ENOMEM;
		comm = p->comm;
	}
	k->comm = comm;
	if (!rpt_recfilter__comm(e->flt, rpt_strpool__str(e->pool, comm)))
		return 0;
	if (f->user_only)
		k->kstack = 0;
	if (f->kernel_only)
		k->ustack = 0;
	return !(f->user_only && !k->ustack) && !(f->kernel_only && !k->kstack);
}

static int on_count(const struct rpt_stage_env *e, struct rpt_loaded *l, const struct saf_count *c)
{
	struct rpt_count_key k;
	int ret = count_filter(e, l, c, &k);

	if (ret <= 0)
		return ret;
	l->st->samples_used += c->count;
	return count_add(l, &k, c->count);
}

/*
 * A sample's value: as it is, none (--off-cpu), or microseconds (--wall):
 * each sample stands for the mean sampling period, 1 / freq_hz (sa-record
 * dithers the periods around it).
 * @return false when samples do not count in this profile.
 */
static bool sample_value(const struct rpt_stage_env *e, const struct rpt_loaded *l, uint64_t *n)
{
	if (e->o->value == RPT_VALUE_SAMPLES)
		return true;
	if (e->o->value == RPT_VALUE_OFF_CPU || !l->st->freq_hz)
		return false;
	*n = (uint64_t)(*n * 1e6 / l->st->freq_hz + 0.5);
	return true;
}

/* COUNT samples, valued by sample_value(). */
static int on_samples(const struct rpt_stage_env *e, struct rpt_loaded *l,
		      const struct saf_count *c)
{
	struct saf_count t = *c;

	return sample_value(e, l, &t.count) ? on_count(e, l, &t) : 0;
}

/* "OFFCPU record" (1.4): microseconds off the CPU, with --off-cpu and --wall. */
static int on_offcpu(const struct rpt_stage_env *e, struct rpt_loaded *l,
		     const struct saf_offcpu *o)
{
	struct saf_count c = {o->pid, o->tid, o->gen, o->ustack, o->kstack, 0, o->comm};
	bool runnable = o->flags & SAF_OFFCPU_PREEMPTED;

	if (e->o->value == RPT_VALUE_SAMPLES || (e->o->off_state == RPT_OFF_BLOCKED && runnable) ||
	    (e->o->off_state == RPT_OFF_RUNNABLE && !runnable))
		return 0;
	c.count = (o->time_ns + 500) / 1000;
	return on_count(e, l, &c);
}

/*
 * "USTACK record": unwound into an ordinary stack and counted (ustack.c),
 * once the filters kept it: --pid, --comm and --time spare the unwinding
 * (and the binaries it opens) of what they leave out.
 */
static int on_ustack(const struct rpt_stage_env *e, struct rpt_loaded *l,
		     const struct saf_ustack *u)
{
	uint64_t ips[RPT_USTACK_MAX_FRAMES];
	struct saf_stack st;
	bool user = u->nregs > SAF_UREG_IP && u->regs[SAF_UREG_IP];
	struct saf_count c = {u->pid, u->tid, u->gen, user, u->kstack, u->count, u->comm};
	struct rpt_count_key k;
	uint64_t n = u->count;
	int ret;

	if (!sample_value(e, l, &n))
		return 0;
	c.count = n;
	ret = count_filter(e, l, &c, &k);
	if (ret <= 0)
		return ret;
	if (k.ustack) {
		ret = rpt_loaded__ustack(e, l, u, ips, &st, &c);
		if (ret > 0)
			ret = keep(l, 32 + 8ull * st.nframes) ?: on_stack(l, &st);
		if (ret < 0)
			return ret;
		k.ustack = c.ustack;
	}
	l->st->samples_used += n;
	return count_add(l, &k, n);
}

static uint64_t record_cost(const struct saf_record *r)
{
	switch (r->kind) {
	case SAF_REC_STACK:
		return 32 + 8ull * r->stack.nframes;
	case SAF_REC_MAP:
		return 96; /* its path: on_map() */
	case SAF_REC_PROC:
		return 192 + r->proc.comm.len + r->proc.exe.len;
	case SAF_REC_KSYM:
		return 48 + r->ksym.name.len;
	case SAF_REC_USYM:
		return 48 + r->usym.name.len;
	case SAF_REC_JITSYM:
		return 48 + r->jitsym.name.len;
	case SAF_REC_PYCODE:
		return 48 + r->pycode.name.len + r->pycode.file.len;
	case SAF_REC_ULINE:
		return 48 + r->uline.name.len + r->uline.file.len;
	default:
		return 0; /* COUNT keys: count_add(); unwound stacks: on_stack() */
	}
}

int rpt_loaded__record(const struct rpt_stage_env *e, struct rpt_loaded *l,
		       const struct saf_record *r)
{
	struct rpt_strpool *pool = e->pool;
	uint64_t cost = record_cost(r);
	int64_t name;
	int d;

	/* every record that costs is a mapping or a symbol, but a STACK */
	if (cost && r->kind != SAF_REC_STACK) {
		if (l->meta_kept + cost > l->keep_max / 2)
			return drop_meta(l, r);
		l->meta_kept += cost;
	}
	if (keep(l, cost))
		return -EFBIG;
	switch (r->kind) {
	case SAF_REC_META:
		return on_meta(e, l, &r->meta);
	case SAF_REC_PROC:
		return on_proc(e, l, &r->proc);
	case SAF_REC_MAP:
		return on_map(e, l, &r->map);
	case SAF_REC_STACK:
		return on_stack(l, &r->stack);
	case SAF_REC_INTERVAL:
		on_interval(e, l, &r->interval);
		return 0;
	case SAF_REC_COUNT:
		return on_samples(e, l, &r->count);
	case SAF_REC_OFFCPU:
		return on_offcpu(e, l, &r->offcpu);
	case SAF_REC_LOSS:
		l->iv_open = false;
		for (uint32_t i = 0; i < r->loss.ncounters && i < SAF_MAX_COUNTERS; i++)
			if (r->loss.ids[i] <= SAF_MAX_COUNTERS)
				l->st->lost[r->loss.ids[i]] += r->loss.values[i];
		return 0;
	case SAF_REC_KSYM:
		name = intern(e, &r->ksym.name);
		l->st->ksyms++;
		l->st->has_ksyms = true;
		return name < 0 ? -ENOMEM : rpt_symtab__add(&l->ksyms, 0, r->ksym.addr, 0, name);
	case SAF_REC_SYMTAB:
		d = rpt_symbolizer__dso(e->sym, r->symtab.build_id.data, r->symtab.build_id.len,
					r->symtab.path.str, l->file_idx);
		l->cur_symtab = d < 0 ? RPT_NO_DSO : (uint32_t)d;
		if (d >= 0)
			rpt_symbolizer__set_id_kind(e->sym, (uint32_t)d, r->symtab.id_kind);
		return d < 0 ? d : 0;
	case SAF_REC_USYM:
		l->st->usyms++;
		if (l->cur_symtab == RPT_NO_DSO)
			return 0;
		return rpt_symbolizer__add_usym(e->sym, l->cur_symtab, r->usym.offset, r->usym.size,
						r->usym.name.str ? r->usym.name.str : "");
	case SAF_REC_ULINE:
		if (l->cur_symtab == RPT_NO_DSO)
			return 0;
		return rpt_symbolizer__add_uline(e->sym, l->cur_symtab, r->uline.offset,
						 r->uline.size, r->uline.depth, r->uline.line,
						 r->uline.file.str ? r->uline.file.str : "",
						 r->uline.name.str ? r->uline.name.str : "");
	case SAF_REC_JITSYM:
		name = rpt_strpool__intern(pool, r->jitsym.name.str ? r->jitsym.name.str : "",
					   r->jitsym.name.len);
		l->st->jitsyms++;
		return name < 0 ? -ENOMEM
				: rpt_symtab__add(&l->jit, r->jitsym.pid, r->jitsym.start,
						  r->jitsym.size, name);
	case SAF_REC_PYCODE:
		return rpt_loaded__pycode(e, l, &r->pycode);
	case SAF_REC_USTACK:
	case SAF_REC_USTACK_SPARSE:
		return on_ustack(e, l, &r->ustack);
	case SAF_REC_END:
		on_end(l, &r->end);
		return 0;
	case SAF_REC_CPUGAP:
		if (l->st->ncpugaps < sizeof(l->st->cpugaps) / sizeof(l->st->cpugaps[0]))
			l->st->cpugaps[l->st->ncpugaps] = (struct rpt_cpugap){
				r->cpugap.cpu, r->cpugap.from_ns, r->cpugap.to_ns};
		l->st->ncpugaps++;
		if (r->cpugap.to_ns > r->cpugap.from_ns)
			l->st->cpugap_ns += r->cpugap.to_ns - r->cpugap.from_ns;
		return 0;
	default:
		return 0;
	}
}

void rpt_loaded__fini(struct rpt_loaded *l)
{
	rpt_loaded__ustack_fini(l);
	rpt_maps__fini(&l->maps);
	rpt_symtab__fini(&l->ksyms);
	rpt_symtab__fini(&l->jit);
	rpt_symtab__fini(&l->py);
	rpt_hmap__fini(&l->stacks);
	rpt_hmap__fini(&l->sampled);
	free(l->stack_dense);
	rpt_hmap__fini(&l->stitch);
	SAC_FREE_ALL(l->ips, l->refs, l->counts);
	memset(l, 0, sizeof(*l));
}
