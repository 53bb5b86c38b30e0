// SPDX-License-Identifier: MIT
/*
 * fuzz_roundtrip.c - libFuzzer harness: the input drives a sequence of
 * writer calls (records, intervals, flushes, chunk target), the file goes
 * to a memfd and is read back; per chunk type the records read must be the
 * records written, in order ("Writer rules" in docs/format.md).
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "saf.h"
#include "saf_internal.h"

struct in {
	const uint8_t *p;
	size_t n;
};

static uint8_t u8(struct in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

/* Mostly small values, sometimes full 64-bit ones, so varint edges appear. */
static uint64_t u64(struct in *in)
{
	uint8_t sel = u8(in);
	uint64_t v = 0;
	int i;

	if (sel < 128)
		return sel;
	for (i = 0; i < (sel & 7) + 1; i++)
		v = (v << 8) | u8(in);
	return sel & 8 ? ~v : v;
}

static struct saf_str str(struct in *in)
{
	size_t len = u8(in) % 24;
	struct saf_str s = { (const char *)in->p, 0 };

	if (len > in->n)
		len = in->n;
	s.len = (uint32_t)len;
	in->p += len;
	in->n -= len;
	return s;
}

static struct saf_bytes bytes(struct in *in)
{
	struct saf_str s = str(in);

	return (struct saf_bytes){ (const uint8_t *)s.str, s.len };
}

/* The records written, encoded, one stream per chunk type. */
static struct saf_buf want[16], got[16];
static uint64_t ips[SAF_MAX_FRAMES];

static void gen_record(struct in *in, struct saf_record *r, uint8_t op)
{
	uint32_t i;

	memset(r, 0, sizeof(*r));
	switch (op) {
	case 0: r->kind = SAF_REC_PROC;
		r->proc = (struct saf_proc){ (uint32_t)u64(in), u8(in), u8(in), u64(in), str(in), str(in) };
		break;
	case 1: r->kind = SAF_REC_MAP;
		r->map = (struct saf_map){ u8(in), u8(in), u64(in), u64(in), u64(in), u64(in), u8(in),
					   u64(in), u64(in), str(in), bytes(in), u8(in) & 3 };
		break;
	case 2: r->kind = SAF_REC_COMM;
		r->comm = (struct saf_comm){ u8(in), u8(in), u64(in), str(in) };
		break;
	case 3: r->kind = SAF_REC_EXIT; r->exit = (struct saf_exit){ u8(in), u64(in) }; break;
	case 4: r->kind = SAF_REC_STACK;
		r->stack.id = 1 + u8(in);
		r->stack.kind = u8(in) & 1;
		r->stack.nframes = u8(in) % 64;
		for (i = 0; i < r->stack.nframes; i++)
			ips[i] = u64(in) << (u8(in) & 32);
		r->stack.ips = ips;
		break;
	case 5: r->kind = SAF_REC_KSYM;
		r->ksym = (struct saf_ksym){ u64(in), str(in), str(in) };
		break;
	case 6: r->kind = SAF_REC_SYMTAB;
		r->symtab = (struct saf_symtab){ bytes(in), str(in), u8(in) & 3 };
		break;
	case 7: r->kind = SAF_REC_USYM;
		r->usym = (struct saf_usym){ u64(in), u64(in), str(in) };
		break;
	default: r->kind = SAF_REC_JITSYM;
		r->jitsym = (struct saf_jitsym){ u8(in), u64(in), u64(in), str(in) };
		break;
	}
}

static struct saf_buf want_symtab, got_symtab;

/*
 * Append @r to the model of its chunk type. USYMS is compared as (SYMTAB,
 * USYM) pairs: the writer may repeat a SYMTAB at a chunk head and drops
 * one that no USYM follows ("Writer rules"), so what must survive is which
 * table each USYM belongs to.
 */
static void model_add(struct saf_buf *dst, struct saf_buf *symtab, const struct saf_record *r)
{
	size_t type = saf_rec_chunk_type(r->kind);

	if (r->kind == SAF_REC_SYMTAB) {
		symtab->len = 0;
		assert(!saf_rec_encode(symtab, r));
		return;
	}
	if (r->kind == SAF_REC_USYM && symtab->len) {
		assert(!saf_buf_reserve(&dst[type], symtab->len));
		memcpy(dst[type].p + dst[type].len, symtab->p, symtab->len);
		dst[type].len += symtab->len;
	}
	assert(!saf_rec_encode(&dst[type], r));
}

static void expect(const struct saf_record *r)
{
	model_add(want, &want_symtab, r);
}

static void gen_sample(struct in *in, struct saf_writer *w, bool *iv_open, uint64_t *seq)
{
	struct saf_record r = { .kind = SAF_REC_COUNT };
	uint8_t op = u8(in) % 5;
	uint32_t i;

	if (op == 0 || !*iv_open) {
		r.kind = SAF_REC_INTERVAL;
		r.interval = (struct saf_interval){ (*seq)++, u64(in), u64(in) };
		assert(!saf_writer__interval(w, &r.interval));
		*iv_open = true;
	} else if (op == 1) {
		bool with_loss = u8(in) & 1;

		r.kind = SAF_REC_LOSS;
		r.loss.ncounters = u8(in) % (SAF_MAX_COUNTERS + 1);
		for (i = 0; i < r.loss.ncounters; i++) {
			r.loss.ids[i] = u8(in);
			r.loss.values[i] = u64(in);
		}
		assert(!saf_writer__interval_end(w, with_loss ? &r.loss : NULL));
		*iv_open = false;
		if (!with_loss)
			return;
		r.loss.seq = *seq - 1;
	} else if (op == 4) {
		r.kind = SAF_REC_USTACK;
		r.ustack.pid = u8(in);
		r.ustack.tid = u8(in);
		r.ustack.time_ns = u64(in);
		r.ustack.count = u64(in);
		r.ustack.comm = str(in);
		r.ustack.nregs = u8(in) % (SAF_MAX_UREGS + 1);
		for (i = 0; i < r.ustack.nregs; i++)
			r.ustack.regs[i] = u64(in);
		r.ustack.stack = bytes(in);
		assert(!saf_writer__add(w, &r));
	} else {
		r.count = (struct saf_count){ u8(in), u8(in), u8(in), u8(in), u8(in), u64(in), str(in) };
		assert(!saf_writer__add(w, &r));
	}
	expect(&r);
}

static struct saf_meta gen_meta(struct in *in)
{
	struct saf_meta m = { 0 };

	m.writer = str(in);
	m.hostname = str(in);
	m.kernel_release = str(in);
	m.boot_id = str(in);
	m.arch = str(in);
	m.cmdline = str(in);
	m.target = str(in);
	m.event = str(in);
	m.freq_hz = u64(in);
	m.ncpus = u64(in);
	m.start_realtime_ns = u64(in);
	m.start_mono_ns = u64(in);
	m.flags = u64(in);
	m.page_size = u64(in);
	return m;
}

/* Drive the writer from the input; returns whether END was written. */
static bool generate(struct in *in, int fd)
{
	struct saf_writer_opts o = { .sz = sizeof(o) };
	struct saf_record r = { .kind = SAF_REC_META };
	struct saf_writer *w;
	bool iv_open = false, finish;
	uint64_t seq = 0;
	uint8_t flags = u8(in);

	o.chunk_target = 1 + (size_t)u8(in) * 8;
	o.zstd_level = 1 + flags % 4;
	finish = !(flags & 0x80);
	w = saf_writer__open_fd(fd, &o);
	assert(w);
	if (flags & 0x40) {
		r.meta = gen_meta(in);
		assert(!saf_writer__meta(w, &r.meta));
		expect(&r);
	}
	while (in->n) {
		uint8_t op = u8(in) % 12;

		if (op < 9) {
			gen_record(in, &r, op);
			assert(!saf_writer__add(w, &r));
			expect(&r);
		} else if (op < 11) {
			gen_sample(in, w, &iv_open, &seq);
		} else {
			assert(!saf_writer__flush(w));
		}
	}
	if (finish) {
		struct saf_end end = { u64(in), u64(in), u64(in), u64(in), 0 };

		assert(!saf_writer__finish(w, &end));
	} else {
		/* Unflushed records die with the writer; flush them, leave END out. */
		assert(!saf_writer__flush(w));
	}
	saf_writer__free(w);
	return finish;
}

/* Read @len bytes back: per-type streams into got[], file order into @all. */
static int read_back(const uint8_t *buf, size_t len, struct saf_buf *all, bool per_type)
{
	struct saf_reader *r = saf_reader__open_mem(buf, len, NULL);
	uint64_t last_seq = UINT64_MAX;
	struct saf_record rec;
	uint32_t type;
	int ret;

	if (!r)
		return -errno;
	while ((ret = saf_reader__next(r, &rec)) == 1) {
		saf_reader__chunk(r, &type, NULL);
		assert(!saf_rec_encode(all, &rec));
		if (rec.kind == SAF_REC_END)
			assert(rec.end.chunks == saf_reader__info(r)->chunks - 1);
		if (!per_type || rec.kind == SAF_REC_END)
			continue;
		/* Seqs only grow here, so an INTERVAL seen again is a continuation head. */
		if (rec.kind == SAF_REC_INTERVAL && rec.interval.seq == last_seq)
			continue;
		if (rec.kind == SAF_REC_INTERVAL)
			last_seq = rec.interval.seq;
		model_add(got, &got_symtab, &rec);
	}
	saf_reader__free(r);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct saf_buf all = { 0 }, part = { 0 };
	int fd = memfd_create("roundtrip", 0), i;
	uint8_t *buf;
	size_t len, cut;
	bool finished;

	assert(fd >= 0);
	finished = generate(&in, fd);
	len = (size_t)lseek(fd, 0, SEEK_END);
	buf = malloc(len);
	assert(buf && pread(fd, buf, len, 0) == (ssize_t)len);
	close(fd);
	assert(read_back(buf, len, &all, true) == 0);
	for (i = 0; i < 16; i++) {
		if (got[i].len != want[i].len)
			fprintf(stderr, "type %d got %zu want %zu\n", i, got[i].len, want[i].len);
		assert(got[i].len == want[i].len);
		assert(!got[i].len || !memcmp(got[i].p, want[i].p, got[i].len));
		saf_buf_release(&got[i]);
		saf_buf_release(&want[i]);
	}
	want_symtab.len = 0;
	got_symtab.len = 0;
	/* A cut file gives a prefix of the records ("Reading a damaged ..."). */
	cut = size ? (len * data[size - 1]) / 256 : len / 2;
	(void)read_back(buf, cut, &part, false);
	assert(part.len <= all.len && (!part.len || !memcmp(part.p, all.p, part.len)));
	(void)finished;
	saf_buf_release(&all);
	saf_buf_release(&part);
	free(buf);
	return 0;
}
