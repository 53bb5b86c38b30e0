/* SPDX-License-Identifier: MIT */
/*
 * saf_test.h - shared by the format/ unit tests: a counting, failing
 * allocator hook, a sample recording that holds every record kind, and
 * helpers that read a file back and re-write what was read.
 */
#ifndef SAF_TEST_H
#define SAF_TEST_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "saf.h"
#include "saf_internal.h"
#include "../../tools/saf_rewrite.h"

/* ---- allocator hook: counts live blocks, fails the Nth call on request ---- */

struct tst_alloc {
	long calls;	 /* malloc/realloc calls so far */
	long fail_at;	 /* fail this call number (1-based); 0 = never */
	long live;	 /* blocks not freed */
	size_t largest;	 /* largest single request */
	int failed;	 /* an injected failure happened */
};

static struct tst_alloc ta;

/* Every block carries its size in front so realloc can track "largest". */
static __attribute__((unused)) void *tst_malloc(size_t n)
{
	size_t *p;

	ta.calls++;
	if (n > ta.largest)
		ta.largest = n;
	if (ta.fail_at && ta.calls == ta.fail_at) {
		ta.failed = 1;
		return NULL;
	}
	p = malloc(n + 16);
	if (!p)
		return NULL;
	ta.live++;
	*p = n;
	return (char *)p + 16;
}

static __attribute__((unused)) void tst_free(void *ptr)
{
	if (!ptr)
		return;
	ta.live--;
	free((char *)ptr - 16);
}

static __attribute__((unused)) void *tst_realloc(void *ptr, size_t n)
{
	size_t *p;

	if (!ptr)
		return tst_malloc(n);
	ta.calls++;
	if (n > ta.largest)
		ta.largest = n;
	if (ta.fail_at && ta.calls == ta.fail_at) {
		ta.failed = 1;
		return NULL;
	}
	p = realloc((char *)ptr - 16, n + 16);
	if (!p)
		return NULL;
	*p = n;
	return (char *)p + 16;
}

static __attribute__((unused)) void tst_alloc_start(long fail_at)
{
	memset(&ta, 0, sizeof(ta));
	ta.fail_at = fail_at;
	saf_set_allocator(tst_malloc, tst_realloc, tst_free);
}

static __attribute__((unused)) void tst_alloc_stop(void)
{
	saf_set_allocator(NULL, NULL, NULL);
}

/* ---- a sample recording holding every record kind ---- */

static __attribute__((unused)) const uint8_t tst_build_id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
					   7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static __attribute__((unused)) const uint64_t tst_uips[] = { 0x401000, 0x400ff0, 0, UINT64_MAX, 0x7f0000001234 };
static __attribute__((unused)) const uint64_t tst_kips[] = { 0xffffffff81000010ull, 0xffffffff81234560ull };

static __attribute__((unused)) struct saf_meta tst_meta(void)
{
	struct saf_meta m = {
		.writer = saf_str__from("sa-record test"),
		.hostname = saf_str__from("web01"),
		.kernel_release = saf_str__from("6.1.0-18-amd64"),
		.boot_id = saf_str__from("0f4c2d6e-1111-2222-3333-444455556666"),
		.arch = saf_str__from("x86_64"),
		.cmdline = saf_str__from("sa-record -F 99 -a"),
		.target = saf_str__from("-a"),
		.event = saf_str__from("cpu-clock"),
		.freq_hz = 99,
		.ncpus = 8,
		.start_realtime_ns = 1700000000123456789ull,
		.start_mono_ns = 123456789,
		.flags = SAF_META_IDLE,
		.page_size = 4096,
	};
	return m;
}

/* The non-META/END records of the sample, in the order they are added. */
static __attribute__((unused)) size_t tst_records(struct saf_record *out, size_t max)
{
	struct saf_record r[] = {
		{ .kind = SAF_REC_PROC, .proc = { 42, 1, 1, 1000, saf_str__from("bash"),
						  saf_str__from("/usr/bin/bash") } },
		{ .kind = SAF_REC_MAP, .map = { 42, 1, 1001, 0x400000, 0x4a0000, 0x1000,
						SAF_MAP_EXEC, 0x801, 1234567,
						saf_str__from("/usr/bin/bash"),
						{ tst_build_id, sizeof(tst_build_id) } } },
		{ .kind = SAF_REC_COMM, .comm = { 42, 43, 1002, saf_str__from("worker") } },
		{ .kind = SAF_REC_EXIT, .exit = { 41, 999 } },
		{ .kind = SAF_REC_CPUGAP, .cpugap = { 1, 5000000000ull, 10310000000ull } },
		{ .kind = SAF_REC_KSYM, .ksym = { 0xffffffff81000000ull,
						  saf_str__from("do_syscall_64"),
						  saf_str__from("") } },
		{ .kind = SAF_REC_KSYM, .ksym = { 0xffffffffc0000000ull,
						  saf_str__from("xfs_read"),
						  saf_str__from("xfs") } },
		{ .kind = SAF_REC_SYMTAB, .symtab = { { tst_build_id, sizeof(tst_build_id) },
						      saf_str__from("/usr/bin/bash") } },
		{ .kind = SAF_REC_USYM, .usym = { 0x1000, 0x40, saf_str__from("main") } },
		{ .kind = SAF_REC_ULINE, .uline = { 0x1010, 0x8, 1, 42, saf_str__from("/src/inl.go"),
						    saf_str__from("main.inl") } },
		{ .kind = SAF_REC_JITSYM, .jitsym = { 42, 0x7f0000001000, 0x300,
						      saf_str__from("LazyCompile:*f") } },
		{ .kind = SAF_REC_STACK, .stack = { 1, SAF_STACK_USER, 5, tst_uips } },
		{ .kind = SAF_REC_STACK, .stack = { 2, SAF_STACK_KERNEL, 2, tst_kips } },
		{ .kind = SAF_REC_STACK, .stack = { 3, SAF_STACK_USER, 0, NULL } },
	};
	size_t n = sizeof(r) / sizeof(r[0]);

	assert_true(n <= max);
	memcpy(out, r, sizeof(r));
	return n;
}

/* Write the sample; @target is the chunk target (0 = default). */
static __attribute__((unused)) int tst_write_sample(int fd, size_t target, struct saf_writer **wp)
{
	struct saf_writer_opts o = { .sz = sizeof(o), .chunk_target = target };
	struct saf_interval iv1 = { 0, 1000, 2000 }, iv2 = { 1, 2000, 3000 };
	struct saf_loss loss = { .ncounters = 3, .ids = { SAF_CTR_RUNS, SAF_CTR_KEPT,
							 SAF_CTR_LOST_USTACK },
				 .values = { 12, 10, 2 } };
	struct saf_end end = { 3000, 17, 2, 2, 0 };
	struct saf_meta m = tst_meta();
	struct saf_record recs[16], c = { .kind = SAF_REC_COUNT };
	size_t n = tst_records(recs, 16), i;
	struct saf_writer *w;
	int err;

	*wp = w = saf_writer__open_fd(fd, &o);
	if (!w)
		return -errno;
	if ((err = saf_writer__meta(w, &m)))
		return err;
	for (i = 0; i < n; i++)
		if ((err = saf_writer__add(w, &recs[i])))
			return err;
	if ((err = saf_writer__interval(w, &iv1)))
		return err;
	for (i = 0; i < 6; i++) {
		c.count = (struct saf_count){ 42, 43 + (uint32_t)i % 2, 1, 1, i % 3 ? 2 : 0,
					      i + 1, saf_str__from(i % 2 ? "bash" : "worker") };
		if ((err = saf_writer__add(w, &c)))
			return err;
	}
	if ((err = saf_writer__interval_end(w, &loss)))
		return err;
	if ((err = saf_writer__interval(w, &iv2)))
		return err;
	c.count = (struct saf_count){ 7, 7, 0, 3, 0, UINT64_MAX, saf_str__from("") };
	if ((err = saf_writer__add(w, &c)))
		return err;
	if ((err = saf_writer__interval_end(w, NULL)))
		return err;
	return saf_writer__finish(w, &end);
}

/* The whole content of @fd, malloc'd; the caller frees it. */
static __attribute__((unused)) uint8_t *tst_slurp(int fd, size_t *len)
{
	off_t n = lseek(fd, 0, SEEK_END);
	uint8_t *p = malloc(n > 0 ? (size_t)n : 1);

	assert_non_null(p);
	assert_int_equal(pread(fd, p, (size_t)n, 0), n);
	*len = (size_t)n;
	return p;
}

static __attribute__((unused)) uint8_t *tst_sample(size_t target, size_t *len)
{
	int fd = memfd_create("sample", 0);
	struct saf_writer *w = NULL;
	uint8_t *p;

	assert_true(fd >= 0);
	assert_int_equal(tst_write_sample(fd, target, &w), 0);
	saf_writer__free(w);
	p = tst_slurp(fd, len);
	close(fd);
	return p;
}

/* ---- reading back: each record in its canonical encoding ---- */

struct tst_read {
	struct saf_buf recs;	/* encoded records, back to back */
	size_t nrecs;
	int ret;		/* last saf_reader__next() result */
	char msg[256];
	struct saf_file_info info;
};

static __attribute__((unused)) void tst_read_mem(const void *buf, size_t len, struct tst_read *out)
{
	char eb[256] = "";
	struct saf_reader_opts o = { .sz = sizeof(o), .errbuf = eb, .errbuf_sz = sizeof(eb) };
	struct saf_reader *r = saf_reader__open_mem(buf, len, &o);
	struct saf_record rec;

	memset(out, 0, sizeof(*out));
	if (!r) {
		out->ret = -errno;
		snprintf(out->msg, sizeof(out->msg), "%s", eb);
		return;
	}
	while ((out->ret = saf_reader__next(r, &rec)) == 1) {
		assert_int_equal(saf_rec_encode(&out->recs, &rec), 0);
		out->nrecs++;
	}
	assert_int_equal(saf_reader__next(r, &rec), out->ret);
	snprintf(out->msg, sizeof(out->msg), "%s", saf_reader__errmsg(r));
	out->info = *saf_reader__info(r);
	saf_reader__free(r);
}

static __attribute__((unused)) void tst_read_free(struct tst_read *t)
{
	saf_buf_release(&t->recs);
}

/* ---- field-by-field comparison, independent of the encoder ---- */

static __attribute__((unused)) int tst_str_eq(struct saf_str a, struct saf_str b)
{
	return a.len == b.len && (!a.len || !memcmp(a.str, b.str, a.len));
}

static __attribute__((unused)) int tst_bytes_eq(struct saf_bytes a, struct saf_bytes b)
{
	return a.len == b.len && (!a.len || !memcmp(a.data, b.data, a.len));
}

static __attribute__((unused)) int tst_meta_eq(const struct saf_meta *a, const struct saf_meta *b)
{
	return tst_str_eq(a->writer, b->writer) && tst_str_eq(a->hostname, b->hostname) &&
	       tst_str_eq(a->kernel_release, b->kernel_release) &&
	       tst_str_eq(a->boot_id, b->boot_id) && tst_str_eq(a->arch, b->arch) &&
	       tst_str_eq(a->cmdline, b->cmdline) && tst_str_eq(a->target, b->target) &&
	       tst_str_eq(a->event, b->event) && a->freq_hz == b->freq_hz &&
	       a->ncpus == b->ncpus && a->start_realtime_ns == b->start_realtime_ns &&
	       a->start_mono_ns == b->start_mono_ns && a->flags == b->flags &&
	       a->page_size == b->page_size && a->off_cpu_min_ns == b->off_cpu_min_ns;
}

static __attribute__((unused)) int tst_rec_eq(const struct saf_record *a, const struct saf_record *b)
{
	if (a->kind != b->kind)
		return 0;
	switch (a->kind) {
	case SAF_REC_META:
		return tst_meta_eq(&a->meta, &b->meta);
	case SAF_REC_PROC:
		return a->proc.pid == b->proc.pid && a->proc.gen == b->proc.gen &&
		       a->proc.ppid == b->proc.ppid && a->proc.time_ns == b->proc.time_ns &&
		       tst_str_eq(a->proc.comm, b->proc.comm) && tst_str_eq(a->proc.exe, b->proc.exe);
	case SAF_REC_MAP:
		return a->map.pid == b->map.pid && a->map.gen == b->map.gen &&
		       a->map.time_ns == b->map.time_ns && a->map.start == b->map.start &&
		       a->map.end == b->map.end && a->map.pgoff == b->map.pgoff &&
		       a->map.flags == b->map.flags && a->map.dev == b->map.dev &&
		       a->map.inode == b->map.inode && tst_str_eq(a->map.path, b->map.path) &&
		       tst_bytes_eq(a->map.build_id, b->map.build_id);
	case SAF_REC_COMM:
		return a->comm.pid == b->comm.pid && a->comm.tid == b->comm.tid &&
		       a->comm.time_ns == b->comm.time_ns && tst_str_eq(a->comm.comm, b->comm.comm);
	case SAF_REC_EXIT:
		return a->exit.pid == b->exit.pid && a->exit.time_ns == b->exit.time_ns;
	case SAF_REC_CPUGAP:
		return !memcmp(&a->cpugap, &b->cpugap, sizeof(a->cpugap));
	case SAF_REC_STACK:
		return a->stack.id == b->stack.id && a->stack.kind == b->stack.kind &&
		       a->stack.nframes == b->stack.nframes &&
		       (!a->stack.nframes ||
			!memcmp(a->stack.ips, b->stack.ips, a->stack.nframes * sizeof(uint64_t)));
	case SAF_REC_INTERVAL:
		return !memcmp(&a->interval, &b->interval, sizeof(a->interval));
	case SAF_REC_COUNT:
		return a->count.pid == b->count.pid && a->count.tid == b->count.tid &&
		       a->count.gen == b->count.gen && a->count.ustack == b->count.ustack &&
		       a->count.kstack == b->count.kstack && a->count.count == b->count.count &&
		       tst_str_eq(a->count.comm, b->count.comm);
	case SAF_REC_OFFCPU:
		return a->offcpu.pid == b->offcpu.pid && a->offcpu.tid == b->offcpu.tid &&
		       a->offcpu.gen == b->offcpu.gen && a->offcpu.ustack == b->offcpu.ustack &&
		       a->offcpu.kstack == b->offcpu.kstack && a->offcpu.count == b->offcpu.count &&
		       a->offcpu.time_ns == b->offcpu.time_ns && a->offcpu.flags == b->offcpu.flags &&
		       tst_str_eq(a->offcpu.comm, b->offcpu.comm);
	case SAF_REC_LOSS:
		return a->loss.seq == b->loss.seq && a->loss.ncounters == b->loss.ncounters &&
		       !memcmp(a->loss.ids, b->loss.ids, a->loss.ncounters * sizeof(uint32_t)) &&
		       !memcmp(a->loss.values, b->loss.values,
			       a->loss.ncounters * sizeof(uint64_t));
	case SAF_REC_KSYM:
		return a->ksym.addr == b->ksym.addr && tst_str_eq(a->ksym.name, b->ksym.name) &&
		       tst_str_eq(a->ksym.module, b->ksym.module);
	case SAF_REC_SYMTAB:
		return tst_bytes_eq(a->symtab.build_id, b->symtab.build_id) &&
		       tst_str_eq(a->symtab.path, b->symtab.path);
	case SAF_REC_USYM:
		return a->usym.offset == b->usym.offset && a->usym.size == b->usym.size &&
		       tst_str_eq(a->usym.name, b->usym.name);
	case SAF_REC_JITSYM:
		return a->jitsym.pid == b->jitsym.pid && a->jitsym.start == b->jitsym.start &&
		       a->jitsym.size == b->jitsym.size && tst_str_eq(a->jitsym.name, b->jitsym.name);
	case SAF_REC_PYCODE:
		return a->pycode.pid == b->pycode.pid && a->pycode.code == b->pycode.code &&
		       a->pycode.line == b->pycode.line && tst_str_eq(a->pycode.name, b->pycode.name) &&
		       tst_str_eq(a->pycode.file, b->pycode.file);
	case SAF_REC_ULINE:
		return a->uline.offset == b->uline.offset && a->uline.size == b->uline.size &&
		       a->uline.depth == b->uline.depth && a->uline.line == b->uline.line &&
		       tst_str_eq(a->uline.file, b->uline.file) &&
		       tst_str_eq(a->uline.name, b->uline.name);
	case SAF_REC_END:
		return !memcmp(&a->end, &b->end, sizeof(a->end));
	case SAF_REC_USTACK:
	case SAF_REC_USTACK_SPARSE:
		return a->ustack.pid == b->ustack.pid && a->ustack.tid == b->ustack.tid &&
		       a->ustack.gen == b->ustack.gen && a->ustack.time_ns == b->ustack.time_ns &&
		       a->ustack.kstack == b->ustack.kstack && a->ustack.count == b->ustack.count &&
		       tst_str_eq(a->ustack.comm, b->ustack.comm) &&
		       a->ustack.nregs == b->ustack.nregs &&
		       !memcmp(a->ustack.regs, b->ustack.regs, a->ustack.nregs * sizeof(uint64_t)) &&
		       a->ustack.stack.len == b->ustack.stack.len &&
		       (!a->ustack.stack.len ||
			!memcmp(a->ustack.stack.data, b->ustack.stack.data, a->ustack.stack.len)) &&
		       tst_bytes_eq(a->ustack.runs, b->ustack.runs) &&
		       a->ustack.walk == b->ustack.walk && a->ustack.nwalked == b->ustack.nwalked &&
		       (!a->ustack.nwalked ||
			!memcmp(a->ustack.walked, b->ustack.walked,
				a->ustack.nwalked * sizeof(uint64_t)));
	}
	return 0;
}

/* Read @buf and write every record again to a memfd; returns its bytes. */
static __attribute__((unused)) uint8_t *tst_rewrite(const void *buf, size_t len, size_t target, size_t *outlen)
{
	struct saf_writer_opts o = { .sz = sizeof(o), .chunk_target = target };
	struct saf_reader *r = saf_reader__open_mem(buf, len, NULL);
	struct tst_rewriter t = { 0 };
	struct saf_record rec;
	uint64_t off;
	uint8_t *p;
	int fd = memfd_create("rewrite", 0), ret;

	assert_non_null(r);
	assert_true(fd >= 0);
	t.w = saf_writer__open_fd(fd, &o);
	assert_non_null(t.w);
	while ((ret = saf_reader__next(r, &rec)) == 1) {
		saf_reader__chunk(r, NULL, &off);
		assert_int_equal(tst_rewrite_one(&t, &rec, off), 0);
	}
	assert_int_equal(ret, 0);
	saf_writer__free(t.w);
	saf_reader__free(r);
	p = tst_slurp(fd, outlen);
	close(fd);
	return p;
}

/* ---- hand-made chunks, for files the writer would never produce ---- */

static __attribute__((unused)) void tst_put_chunk(struct saf_buf *b, uint32_t type, uint16_t flags, const void *payload,
			  uint32_t psize, uint32_t csize, uint32_t seq)
{
	uint8_t *h;

	assert_int_equal(saf_buf_reserve(b, SAF_CHUNK_HEADER_SIZE + psize), 0);
	h = b->p + b->len;
	saf_put_le32(h, type);
	saf_put_le16(h + 4, SAF_CHUNK_HEADER_SIZE);
	saf_put_le16(h + 6, flags);
	saf_put_le32(h + 8, psize);
	saf_put_le32(h + 12, csize);
	saf_put_le32(h + 16, seq);
	if (psize)
		memcpy(h + SAF_CHUNK_HEADER_SIZE, payload, psize);
	saf_put_le32(h + 20, saf_crc32(h, h + SAF_CHUNK_HEADER_SIZE, psize));
	b->len += SAF_CHUNK_HEADER_SIZE + psize;
}

static __attribute__((unused)) void tst_put_header(struct saf_buf *b, uint16_t major, uint16_t minor, uint16_t hsize)
{
	uint8_t *h;

	assert_int_equal(saf_buf_reserve(b, hsize), 0);
	h = b->p + b->len;
	memset(h, 0, hsize);
	memcpy(h, SAF_MAGIC, SAF_MAGIC_LEN);
	saf_put_le16(h + 8, major);
	saf_put_le16(h + 10, minor);
	saf_put_le16(h + 12, hsize);
	saf_put_le32(h + 20, saf_crc32(h, NULL, 0));
	b->len += hsize;
}

#endif /* SAF_TEST_H */
