// SPDX-License-Identifier: MIT
/*
 * saf_decode.c - the record decoder: checks every varint, length and limit
 * of one record body and fills a struct saf_record ("Records", "Record
 * kinds", "Forward compatibility" in docs/format.md).
 */
#include <errno.h>
#include <string.h>

#include "saf_internal.h"

struct dec {
	const uint8_t *p;
	const uint8_t *end;
	struct saf_arena *a;
	int err;
};

static void fail(struct dec *d, int err, const char *why)
{
	if (!d->err) {
		d->err = err;
		d->a->why = why;
	}
}

/*
 * A field missing at the end of the body reads as 0 ("Forward
 * compatibility"). Inlined: the decoder's most frequent call.
 */
static inline __attribute__((always_inline)) uint64_t get_u64(struct dec *d)
{
	uint64_t v = 0;

	if (d->err || d->p == d->end)
		return 0;
	if (*d->p < 0x80) /* one byte: most fields */
		return *d->p++;
	if (saf_varint_get(&d->p, d->end, &v)) {
		fail(d, -EBADMSG, "bad varint");
		return 0;
	}
	return v;
}

static inline __attribute__((always_inline)) uint32_t get_u32(struct dec *d)
{
	uint64_t v = get_u64(d);

	if (v > UINT32_MAX) {
		fail(d, -EBADMSG, "32-bit field out of range");
		return 0;
	}
	return (uint32_t)v;
}

/* Length-prefixed bytes; returns a view into the body, or NULL if absent. */
static const uint8_t *get_raw(struct dec *d, uint32_t *len, uint32_t limit)
{
	const uint8_t *p;
	uint64_t n = get_u64(d);

	*len = 0;
	if (d->err || !n)
		return NULL;
	if (n > limit) {
		fail(d, -EOVERFLOW, "string or build id longer than its limit");
		return NULL;
	}
	if (n > (uint64_t)(d->end - d->p)) {
		fail(d, -EBADMSG, "string runs past the record");
		return NULL;
	}
	p = d->p;
	d->p += n;
	*len = (uint32_t)n;
	return p;
}

static struct saf_str get_str(struct dec *d)
{
	struct saf_str s = {"", 0};
	struct saf_arena *a = d->a;
	const uint8_t *p = get_raw(d, &s.len, SAF_MAX_STRING);

	if (a->arena) {
		char *dst = a->arena + a->arena_len;

		/* a missing string costs a byte too: more than a chunk's size may */
		if (a->arena_len + s.len + 1 > a->arena_cap) {
			fail(d, -ENOBUFS, "strings past the arena");
			s.len = 0;
			return s;
		}
		if (s.len)
			memcpy(dst, p, s.len);
		dst[s.len] = '\0';
		s.str = dst;
	}
	a->arena_len += s.len + 1;
	return s;
}

static struct saf_bytes get_bytes(struct dec *d)
{
	struct saf_bytes b = {NULL, 0};

	b.data = get_raw(d, &b.len, SAF_MAX_BUILD_ID);
	return b;
}

static void get_meta(struct dec *d, struct saf_meta *m)
{
	m->writer = get_str(d);
	m->hostname = get_str(d);
	m->kernel_release = get_str(d);
	m->boot_id = get_str(d);
	m->arch = get_str(d);
	m->cmdline = get_str(d);
	m->target = get_str(d);
	m->event = get_str(d);
	m->freq_hz = get_u64(d);
	m->ncpus = get_u64(d);
	m->start_realtime_ns = get_u64(d);
	m->start_mono_ns = get_u64(d);
	m->flags = get_u64(d);
	m->page_size = get_u64(d);
	m->off_cpu_min_ns = get_u64(d);
}

static void get_map(struct dec *d, struct saf_map *m)
{
	m->pid = get_u32(d);
	m->gen = get_u32(d);
	m->time_ns = get_u64(d);
	m->start = get_u64(d);
	m->end = get_u64(d);
	m->pgoff = get_u64(d);
	m->flags = get_u64(d);
	m->dev = get_u64(d);
	m->inode = get_u64(d);
	m->path = get_str(d);
	m->build_id = get_bytes(d);
	m->id_kind = get_u32(d);
}

/* "STACK record" frames (and a USTACK's walked pcs) into the arena's ips: a count and zigzag
 * deltas, one field group, all or nothing. @return the count (0 after a failure). */
static uint32_t get_frames(struct dec *d)
{
	uint64_t prev = 0;
	uint32_t i, n = get_u32(d);

	if (n > SAF_MAX_FRAMES) {
		fail(d, -EOVERFLOW, "stack deeper than 4096 frames");
		return 0;
	}
	for (i = 0; i < n && !d->err; i++) {
		uint64_t z;

		if (d->p == d->end) {
			fail(d, -EBADMSG, "stack frames run past the record");
			break;
		}
		z = get_u64(d);
		prev += (z >> 1) ^ (0 - (z & 1));
		if (d->a->ips)
			d->a->ips[i] = prev;
	}
	if (n > d->a->max_frames)
		d->a->max_frames = n;
	return d->err ? 0 : n;
}

static void get_stack(struct dec *d, struct saf_stack *s)
{
	s->id = get_u32(d);
	s->kind = get_u32(d);
	s->nframes = get_frames(d);
	s->ips = d->a->ips;
}

static void get_count(struct dec *d, struct saf_count *c)
{
	c->pid = get_u32(d);
	c->tid = get_u32(d);
	c->gen = get_u32(d);
	c->ustack = get_u32(d);
	c->kstack = get_u32(d);
	c->count = get_u64(d);
	c->comm = get_str(d);
}

static void get_offcpu(struct dec *d, struct saf_offcpu *o)
{
	o->pid = get_u32(d);
	o->tid = get_u32(d);
	o->gen = get_u32(d);
	o->ustack = get_u32(d);
	o->kstack = get_u32(d);
	o->count = get_u64(d);
	o->time_ns = get_u64(d);
	o->comm = get_str(d);
	o->flags = get_u32(d);
}

/* "USTACK record" and "USTACK_SPARSE record": the bytes are a view into the body. */
static void get_ustack(struct dec *d, struct saf_ustack *u, bool sparse)
{
	uint32_t i;

	u->pid = get_u32(d);
	u->tid = get_u32(d);
	u->gen = get_u32(d);
	u->time_ns = get_u64(d);
	u->kstack = get_u32(d);
	u->count = get_u64(d);
	u->comm = get_str(d);
	u->nregs = get_u32(d);
	if (u->nregs > SAF_MAX_UREGS) {
		fail(d, -EOVERFLOW, "more than 16 registers");
		u->nregs = 0;
	}
	for (i = 0; i < u->nregs && !d->err; i++) {
		if (d->p == d->end) {
			fail(d, -EBADMSG, "registers run past the record");
			break;
		}
		u->regs[i] = get_u64(d);
	}
	if (!sparse) {
		u->stack.data = get_raw(d, &u->stack.len, SAF_MAX_USTACK_BYTES);
	} else {
		u->runs.data = get_raw(d, &u->runs.len, SAF_MAX_USTACK_BYTES);
		/* checked once, by the pass that validates the chunk (arena NULL or check) */
		if (!d->err && (!d->a->arena || d->a->check) && saf_urun_check(&u->runs))
			fail(d, -EBADMSG, "stack runs malformed");
	}
	u->walk = get_u32(d); /* 1.3 */
	u->nwalked = get_frames(d);
	u->walked = d->a->ips;
	if (u->walk == SAF_WALK_NONE && u->nwalked && !d->err)
		fail(d, -EBADMSG, "walked frames of a capture not walked");
}

static void get_loss(struct dec *d, struct saf_loss *l)
{
	uint32_t i;

	l->seq = get_u64(d);
	l->ncounters = get_u32(d);
	if (l->ncounters > SAF_MAX_COUNTERS) {
		fail(d, -EOVERFLOW, "more than 64 loss counters");
		l->ncounters = 0;
	}
	for (i = 0; i < l->ncounters && !d->err; i++) {
		if (d->p == d->end) {
			fail(d, -EBADMSG, "loss counters run past the record");
			break;
		}
		l->ids[i] = get_u32(d);
		if (d->p == d->end) {
			fail(d, -EBADMSG, "loss counters run past the record");
			break;
		}
		l->values[i] = get_u64(d);
	}
}

static void get_small(struct dec *d, struct saf_record *r)
{
	switch (r->kind) {
	case SAF_REC_PROC:
		r->proc.pid = get_u32(d);
		r->proc.gen = get_u32(d);
		r->proc.ppid = get_u32(d);
		r->proc.time_ns = get_u64(d);
		r->proc.comm = get_str(d);
		r->proc.exe = get_str(d);
		break;
	case SAF_REC_COMM:
		r->comm.pid = get_u32(d);
		r->comm.tid = get_u32(d);
		r->comm.time_ns = get_u64(d);
		r->comm.comm = get_str(d);
		break;
	case SAF_REC_EXIT:
		r->exit.pid = get_u32(d);
		r->exit.time_ns = get_u64(d);
		break;
	case SAF_REC_CPUGAP:
		r->cpugap.cpu = get_u32(d);
		r->cpugap.from_ns = get_u64(d);
		r->cpugap.to_ns = get_u64(d);
		break;
	case SAF_REC_INTERVAL:
		r->interval.seq = get_u64(d);
		r->interval.start_ns = get_u64(d);
		r->interval.end_ns = get_u64(d);
		break;
	case SAF_REC_END:
		r->end.end_mono_ns = get_u64(d);
		r->end.samples = get_u64(d);
		r->end.lost = get_u64(d);
		r->end.intervals = get_u64(d);
		r->end.chunks = get_u64(d);
		break;
	default:
		break;
	}
}

static void get_sym(struct dec *d, struct saf_record *r)
{
	switch (r->kind) {
	case SAF_REC_KSYM:
		r->ksym.addr = get_u64(d);
		r->ksym.name = get_str(d);
		r->ksym.module = get_str(d);
		break;
	case SAF_REC_SYMTAB:
		r->symtab.build_id = get_bytes(d);
		r->symtab.path = get_str(d);
		r->symtab.id_kind = get_u32(d);
		break;
	case SAF_REC_USYM:
		r->usym.offset = get_u64(d);
		r->usym.size = get_u64(d);
		r->usym.name = get_str(d);
		break;
	case SAF_REC_JITSYM:
		r->jitsym.pid = get_u32(d);
		r->jitsym.start = get_u64(d);
		r->jitsym.size = get_u64(d);
		r->jitsym.name = get_str(d);
		break;
	case SAF_REC_PYCODE:
		r->pycode.pid = get_u32(d);
		r->pycode.code = get_u64(d);
		r->pycode.line = get_u32(d);
		r->pycode.name = get_str(d);
		r->pycode.file = get_str(d);
		break;
	case SAF_REC_ULINE:
		r->uline.offset = get_u64(d);
		r->uline.size = get_u64(d);
		r->uline.depth = get_u32(d);
		r->uline.line = get_u32(d);
		r->uline.file = get_str(d);
		r->uline.name = get_str(d);
		break;
	default:
		break;
	}
}

/**
 * saf_rec_decode() - decode one record body of @len bytes into @rec.
 * @a: see struct saf_arena; a->arena_len and a->max_frames only grow.
 * @return 1 for a known kind, 0 for an unknown kind (to be skipped),
 * -EBADMSG or -EOVERFLOW with a->why set.
 */
int saf_rec_decode(const uint8_t *body, size_t len, struct saf_record *rec, struct saf_arena *a)
{
	struct dec d = {body, body + len, a, 0};
	uint64_t kind;

	if (!len) {
		a->why = "empty record";
		return -EBADMSG;
	}
	kind = get_u64(&d);
	if (d.err)
		return d.err;
	if (kind < SAF_REC_META || kind > SAF_REC_CPUGAP)
		return 0;
	/* the member read, not the whole union (LOSS's is 800 bytes) */
	memset(rec, 0, saf_rec_bytes((enum saf_rec_kind)kind));
	rec->kind = (enum saf_rec_kind)kind;
	switch (rec->kind) {
	case SAF_REC_META:
		get_meta(&d, &rec->meta);
		break;
	case SAF_REC_MAP:
		get_map(&d, &rec->map);
		break;
	case SAF_REC_STACK:
		get_stack(&d, &rec->stack);
		break;
	case SAF_REC_COUNT:
		get_count(&d, &rec->count);
		break;
	case SAF_REC_OFFCPU:
		get_offcpu(&d, &rec->offcpu);
		break;
	case SAF_REC_LOSS:
		get_loss(&d, &rec->loss);
		break;
	case SAF_REC_USTACK:
	case SAF_REC_USTACK_SPARSE:
		get_ustack(&d, &rec->ustack, rec->kind == SAF_REC_USTACK_SPARSE);
		break;
	case SAF_REC_KSYM:
	case SAF_REC_SYMTAB:
	case SAF_REC_USYM:
	case SAF_REC_JITSYM:
	case SAF_REC_PYCODE:
	case SAF_REC_ULINE:
		get_sym(&d, rec);
		break;
	default:
		get_small(&d, rec);
		break;
	}
	return d.err ? d.err : 1;
}
