// SPDX-License-Identifier: MIT
/*
 * saf_encode.c - record limits and the record encoder: a record is a varint
 * body length, then the body (kind, then the fields in saf.h struct order),
 * as docs/format.md "Records" and "Record kinds" specify.
 */
#include <errno.h>
#include <string.h>

#include "saf_internal.h"

static int str_ok(struct saf_str s)
{
	return s.len <= SAF_MAX_STRING && (s.str || !s.len);
}

static int bytes_ok(struct saf_bytes b)
{
	return b.len <= SAF_MAX_BUILD_ID && (b.data || !b.len);
}

static int check_meta(const struct saf_meta *m)
{
	return str_ok(m->writer) && str_ok(m->hostname) && str_ok(m->kernel_release) &&
	       str_ok(m->boot_id) && str_ok(m->arch) && str_ok(m->cmdline) && str_ok(m->target) &&
	       str_ok(m->event);
}

static int check_ustack(const struct saf_ustack *u, bool sparse)
{
	const struct saf_bytes *b = sparse ? &u->runs : &u->stack;

	return str_ok(u->comm) && u->nregs <= SAF_MAX_UREGS && b->len <= SAF_MAX_USTACK_BYTES &&
	       (b->data || !b->len) &&
	       (sparse ? !saf_urun_check(b) && !u->stack.len : !u->runs.len) &&
	       u->nwalked <= SAF_MAX_FRAMES && (u->walked || !u->nwalked) &&
	       (u->walk != SAF_WALK_NONE || !u->nwalked);
}

/** saf_rec_check() - 0 if @rec respects every "Limits" rule, else -EINVAL. */
int saf_rec_check(const struct saf_record *rec)
{
	int ok;

	switch (rec->kind) {
	case SAF_REC_META:
		ok = check_meta(&rec->meta);
		break;
	case SAF_REC_PROC:
		ok = str_ok(rec->proc.comm) && str_ok(rec->proc.exe);
		break;
	case SAF_REC_MAP:
		ok = str_ok(rec->map.path) && bytes_ok(rec->map.build_id);
		break;
	case SAF_REC_COMM:
		ok = str_ok(rec->comm.comm);
		break;
	case SAF_REC_STACK:
		ok = rec->stack.id != 0 && rec->stack.nframes <= SAF_MAX_FRAMES &&
		     (rec->stack.ips || !rec->stack.nframes);
		break;
	case SAF_REC_COUNT:
		ok = str_ok(rec->count.comm);
		break;
	case SAF_REC_OFFCPU:
		ok = str_ok(rec->offcpu.comm);
		break;
	case SAF_REC_LOSS:
		ok = rec->loss.ncounters <= SAF_MAX_COUNTERS;
		break;
	case SAF_REC_KSYM:
		ok = str_ok(rec->ksym.name) && str_ok(rec->ksym.module);
		break;
	case SAF_REC_SYMTAB:
		ok = bytes_ok(rec->symtab.build_id) && str_ok(rec->symtab.path);
		break;
	case SAF_REC_USYM:
		ok = str_ok(rec->usym.name);
		break;
	case SAF_REC_JITSYM:
		ok = str_ok(rec->jitsym.name);
		break;
	case SAF_REC_PYCODE:
		ok = str_ok(rec->pycode.name) && str_ok(rec->pycode.file);
		break;
	case SAF_REC_ULINE:
		ok = str_ok(rec->uline.file) && str_ok(rec->uline.name);
		break;
	case SAF_REC_USTACK:
	case SAF_REC_USTACK_SPARSE:
		ok = check_ustack(&rec->ustack, rec->kind == SAF_REC_USTACK_SPARSE);
		break;
	case SAF_REC_EXIT:
	case SAF_REC_CPUGAP:
	case SAF_REC_INTERVAL:
	case SAF_REC_END:
		ok = 1;
		break;
	default:
		ok = 0;
	}
	return ok ? 0 : -EINVAL;
}

/** saf_rec_chunk_type() - the chunk type the writer puts @kind in, or 0. */
uint32_t saf_rec_chunk_type(enum saf_rec_kind kind)
{
	switch (kind) {
	case SAF_REC_META:
		return SAF_CHUNK_META;
	case SAF_REC_PROC:
	case SAF_REC_MAP:
	case SAF_REC_COMM:
	case SAF_REC_EXIT:
	case SAF_REC_CPUGAP:
		return SAF_CHUNK_PROCS;
	case SAF_REC_STACK:
		return SAF_CHUNK_STACKS;
	case SAF_REC_INTERVAL:
	case SAF_REC_COUNT:
	case SAF_REC_USTACK:
	case SAF_REC_USTACK_SPARSE:
	case SAF_REC_OFFCPU:
	case SAF_REC_LOSS:
		return SAF_CHUNK_SAMPLES;
	case SAF_REC_KSYM:
		return SAF_CHUNK_KSYMS;
	case SAF_REC_SYMTAB:
	case SAF_REC_USYM:
	case SAF_REC_ULINE:
		return SAF_CHUNK_USYMS;
	case SAF_REC_JITSYM:
	case SAF_REC_PYCODE:
		return SAF_CHUNK_JIT;
	case SAF_REC_END:
		return SAF_CHUNK_END;
	}
	return 0;
}

struct enc {
	struct saf_buf *b;
	int err;
};

static void put_u(struct enc *e, uint64_t v)
{
	if (!e->err)
		e->err = saf_buf_put_varint(e->b, v);
}

static void put_raw(struct enc *e, const void *p, uint32_t len)
{
	put_u(e, len);
	if (!e->err && len)
		e->err = saf_buf_reserve(e->b, len);
	if (!e->err && len) {
		memcpy(e->b->p + e->b->len, p, len);
		e->b->len += len;
	}
}

static void put_str(struct enc *e, struct saf_str s)
{
	put_raw(e, s.str, s.len);
}

static void put_meta(struct enc *e, const struct saf_meta *m)
{
	put_str(e, m->writer);
	put_str(e, m->hostname);
	put_str(e, m->kernel_release);
	put_str(e, m->boot_id);
	put_str(e, m->arch);
	put_str(e, m->cmdline);
	put_str(e, m->target);
	put_str(e, m->event);
	put_u(e, m->freq_hz);
	put_u(e, m->ncpus);
	put_u(e, m->start_realtime_ns);
	put_u(e, m->start_mono_ns);
	put_u(e, m->flags);
	put_u(e, m->page_size);
	if (m->flags & SAF_META_OFF_CPU) /* else a 1.3 body, byte for byte */
		put_u(e, m->off_cpu_min_ns);
}

static void put_map(struct enc *e, const struct saf_map *m)
{
	put_u(e, m->pid);
	put_u(e, m->gen);
	put_u(e, m->time_ns);
	put_u(e, m->start);
	put_u(e, m->end);
	put_u(e, m->pgoff);
	put_u(e, m->flags);
	put_u(e, m->dev);
	put_u(e, m->inode);
	put_str(e, m->path);
	put_raw(e, m->build_id.data, m->build_id.len);
	if (m->id_kind) /* else a 1.6 body, byte for byte */
		put_u(e, m->id_kind);
}

/* "STACK record" frames (and a USTACK's walked pcs): a count, then zigzag deltas, so nearby
 * addresses stay short. */
static void put_frames(struct enc *e, const uint64_t *ips, uint32_t n)
{
	uint64_t prev = 0;
	uint32_t i;

	put_u(e, n);
	for (i = 0; i < n; i++) {
		uint64_t d = ips[i] - prev;

		put_u(e, (d << 1) ^ (uint64_t)((int64_t)d >> 63));
		prev = ips[i];
	}
}

static void put_stack(struct enc *e, const struct saf_stack *s)
{
	put_u(e, s->id);
	put_u(e, s->kind);
	put_frames(e, s->ips, s->nframes);
}

static void put_count(struct enc *e, const struct saf_count *c)
{
	put_u(e, c->pid);
	put_u(e, c->tid);
	put_u(e, c->gen);
	put_u(e, c->ustack);
	put_u(e, c->kstack);
	put_u(e, c->count);
	put_str(e, c->comm);
}

static void put_offcpu(struct enc *e, const struct saf_offcpu *o)
{
	put_u(e, o->pid);
	put_u(e, o->tid);
	put_u(e, o->gen);
	put_u(e, o->ustack);
	put_u(e, o->kstack);
	put_u(e, o->count);
	put_u(e, o->time_ns);
	put_str(e, o->comm);
	put_u(e, o->flags);
}

/* "USTACK record" (stack) and "USTACK_SPARSE record" (runs): nregs and its registers are one field
 * group. */
static void put_ustack(struct enc *e, const struct saf_ustack *u)
{
	uint32_t i;

	put_u(e, u->pid);
	put_u(e, u->tid);
	put_u(e, u->gen);
	put_u(e, u->time_ns);
	put_u(e, u->kstack);
	put_u(e, u->count);
	put_str(e, u->comm);
	put_u(e, u->nregs);
	for (i = 0; i < u->nregs; i++)
		put_u(e, u->regs[i]);
	if (u->runs.len)
		put_raw(e, u->runs.data, u->runs.len);
	else
		put_raw(e, u->stack.data, u->stack.len);
	if (u->walk == SAF_WALK_NONE)
		return; /* a 1.2 body, byte for byte */
	put_u(e, u->walk);
	put_frames(e, u->walked, u->nwalked);
}

static void put_loss(struct enc *e, const struct saf_loss *l)
{
	uint32_t i;

	put_u(e, l->seq);
	put_u(e, l->ncounters);
	for (i = 0; i < l->ncounters; i++) {
		put_u(e, l->ids[i]);
		put_u(e, l->values[i]);
	}
}

static void put_body(struct enc *e, const struct saf_record *r)
{
	put_u(e, r->kind);
	switch (r->kind) {
	case SAF_REC_META:
		put_meta(e, &r->meta);
		break;
	case SAF_REC_PROC:
		put_u(e, r->proc.pid);
		put_u(e, r->proc.gen);
		put_u(e, r->proc.ppid);
		put_u(e, r->proc.time_ns);
		put_str(e, r->proc.comm);
		put_str(e, r->proc.exe);
		break;
	case SAF_REC_MAP:
		put_map(e, &r->map);
		break;
	case SAF_REC_COMM:
		put_u(e, r->comm.pid);
		put_u(e, r->comm.tid);
		put_u(e, r->comm.time_ns);
		put_str(e, r->comm.comm);
		break;
	case SAF_REC_EXIT:
		put_u(e, r->exit.pid);
		put_u(e, r->exit.time_ns);
		break;
	case SAF_REC_CPUGAP:
		put_u(e, r->cpugap.cpu);
		put_u(e, r->cpugap.from_ns);
		put_u(e, r->cpugap.to_ns);
		break;
	case SAF_REC_STACK:
		put_stack(e, &r->stack);
		break;
	case SAF_REC_INTERVAL:
		put_u(e, r->interval.seq);
		put_u(e, r->interval.start_ns);
		put_u(e, r->interval.end_ns);
		break;
	case SAF_REC_COUNT:
		put_count(e, &r->count);
		break;
	case SAF_REC_OFFCPU:
		put_offcpu(e, &r->offcpu);
		break;
	case SAF_REC_LOSS:
		put_loss(e, &r->loss);
		break;
	case SAF_REC_USTACK:
	case SAF_REC_USTACK_SPARSE:
		put_ustack(e, &r->ustack);
		break;
	case SAF_REC_KSYM:
		put_u(e, r->ksym.addr);
		put_str(e, r->ksym.name);
		put_str(e, r->ksym.module);
		break;
	case SAF_REC_SYMTAB:
		put_raw(e, r->symtab.build_id.data, r->symtab.build_id.len);
		put_str(e, r->symtab.path);
		if (r->symtab.id_kind) /* else a 1.6 body, byte for byte */
			put_u(e, r->symtab.id_kind);
		break;
	case SAF_REC_USYM:
		put_u(e, r->usym.offset);
		put_u(e, r->usym.size);
		put_str(e, r->usym.name);
		break;
	case SAF_REC_JITSYM:
		put_u(e, r->jitsym.pid);
		put_u(e, r->jitsym.start);
		put_u(e, r->jitsym.size);
		put_str(e, r->jitsym.name);
		break;
	case SAF_REC_PYCODE:
		put_u(e, r->pycode.pid);
		put_u(e, r->pycode.code);
		put_u(e, r->pycode.line);
		put_str(e, r->pycode.name);
		put_str(e, r->pycode.file);
		break;
	case SAF_REC_ULINE:
		put_u(e, r->uline.offset);
		put_u(e, r->uline.size);
		put_u(e, r->uline.depth);
		put_u(e, r->uline.line);
		put_str(e, r->uline.file);
		put_str(e, r->uline.name);
		break;
	case SAF_REC_END:
		put_u(e, r->end.end_mono_ns);
		put_u(e, r->end.samples);
		put_u(e, r->end.lost);
		put_u(e, r->end.intervals);
		put_u(e, r->end.chunks);
		break;
	}
}

/**
 * saf_rec_encode() - append @rec (checked with saf_rec_check() first) to
 * @b as body length + body. On failure @b is as it was.
 * @return 0, -EINVAL or -ENOMEM.
 */
int saf_rec_encode(struct saf_buf *b, const struct saf_record *rec)
{
	struct enc e = {b, saf_rec_check(rec)};
	size_t start = b->len, body_len;
	uint8_t len[SAF_VARINT_MAX];
	size_t n;

	if (!e.err)
		e.err = saf_buf_reserve(b, SAF_VARINT_MAX);
	if (e.err)
		return e.err;
	/* Encode after a maximal length slot, then slide the body down. */
	b->len += SAF_VARINT_MAX;
	put_body(&e, rec);
	if (e.err) {
		b->len = start;
		return e.err;
	}
	body_len = b->len - start - SAF_VARINT_MAX;
	n = saf_varint_put(len, body_len);
	memmove(b->p + start + n, b->p + start + SAF_VARINT_MAX, body_len);
	memcpy(b->p + start, len, n);
	b->len = start + n + body_len;
	return 0;
}
