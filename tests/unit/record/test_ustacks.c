// SPDX-License-Identifier: MIT
/*
 * test_ustacks.c - pending dwarf captures: identical ones become one USTACK
 * record with their count, captures that differ anywhere (the last stack
 * byte, a register) stay apart, and the note callback sees each address of
 * a process image once per write, again in the next; with a trimmer, a copy
 * that agrees with an earlier one only in its first bytes does not keep
 * identical copies after it apart.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "maptab.h"
#include "procs.h"
#include "record.h"
#include "ustacks.h"
#include "uwtrim.h"

#define NBYTES 4096

struct noted {
	int calls;
	__u64 ips[64];
};

static int count_note(void *ctx, __u32 tgid, __u32 gen, __u64 ip)
{
	struct noted *n = ctx;

	(void)tgid;
	(void)gen;
	if (n->calls < 64)
		n->ips[n->calls] = ip;
	n->calls++;
	return 0;
}

/* A capture of this process: @ip, and NBYTES of stack from @seed. */
static struct sa_rb_ustack *capture(__u64 ip, unsigned int seed)
{
	struct sa_rb_ustack *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->tgid = r->tid = (__u32)getpid();
	r->ubytes = NBYTES;
	r->count = 1; /* one sample's worth (bpf/sa_clock.bpf.h) */
	snprintf(r->comm, sizeof(r->comm), "test");
	r->regs[0] = ip;
	r->regs[1] = 0x7ffd00001000;
	r->regs[2] = 0x7ffd00001100;
	for (int i = 0; i < NBYTES; i++)
		r->stack[i] = (__u8)(seed * 31 + i * 7);
	return r;
}

struct file {
	int fd;
	struct saf_writer *w;
	struct rec_procs *procs;
};

static void file_open(struct file *f)
{
	struct saf_meta m = {.writer = saf_str__from("test_ustacks"), .freq_hz = 99, .ncpus = 1};

	f->fd = memfd_create("ustacks", 0);
	assert_true(f->fd >= 0);
	f->w = saf_writer__open_fd(f->fd, NULL);
	assert_non_null(f->w);
	assert_int_equal(saf_writer__meta(f->w, &m), 0);
	f->procs = rec_procs__new(f->w, NULL, NULL);
	assert_non_null(f->procs);
}

/* Finish @f and read back the counts of its USTACK(_SPARSE) records, in file order. */
static int file_counts(struct file *f, __u64 *counts, int cap)
{
	struct saf_end end = {0};
	struct saf_reader *r;
	struct saf_record rec;
	char path[64];
	int n = 0;

	assert_int_equal(saf_writer__finish(f->w, &end), 0);
	saf_writer__free(f->w);
	rec_procs__free(f->procs);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", f->fd);
	r = saf_reader__open(path, NULL);
	assert_non_null(r);
	while (saf_reader__next(r, &rec) == 1)
		if ((rec.kind == SAF_REC_USTACK || rec.kind == SAF_REC_USTACK_SPARSE) && n < cap)
			counts[n++] = rec.ustack.count;
	saf_reader__free(r);
	close(f->fd);
	return n;
}

static void open_interval(struct file *f, __u64 seq)
{
	struct saf_interval iv = {.seq = seq, .start_ns = seq * 10, .end_ns = seq * 10 + 10};

	assert_int_equal(saf_writer__interval(f->w, &iv), 0);
}

static void test_identical_merge_others_stay_apart(void **state)
{
	struct rec_ustacks *u = rec_ustacks__new();
	struct sa_rb_ustack *a = capture(0x401000, 1), *b = capture(0x401000, 1);
	struct noted nt = {0};
	struct file f;
	__u64 counts[8];

	(void)state;
	assert_non_null(u);
	file_open(&f);
	open_interval(&f, 0);
	assert_int_equal(rec_ustacks__add(u, a, 0), 0);
	assert_int_equal(rec_ustacks__add(u, b, 0), 0); /* same: merged */
	b->stack[NBYTES - 1] ^= 1;			/* the last byte differs */
	assert_int_equal(rec_ustacks__add(u, b, 0), 0);
	b->stack[NBYTES - 1] ^= 1;
	b->regs[2]++; /* a register differs */
	assert_int_equal(rec_ustacks__add(u, b, 0), 0);
	assert_int_equal(rec_ustacks__add(u, a, 0), 0); /* the first again */
	assert_int_equal(rec_ustacks__add(u, b, 7), 0); /* another kernel stack */
	assert_true(rec_ustacks__pending(u, 0));
	assert_int_equal(rec_ustacks__write(u, 0, f.w, f.procs, count_note, &nt), 0);
	assert_false(rec_ustacks__pending(u, 0));
	assert_int_equal(file_counts(&f, counts, 8), 4);
	assert_int_equal(counts[0], 3);
	assert_int_equal(counts[1], 1);
	assert_int_equal(counts[2], 1);
	assert_int_equal(counts[3], 1);
	/* four captures, one leaf address: noted once */
	assert_int_equal(nt.calls, 1);
	assert_int_equal(nt.ips[0], 0x401000);
	rec_ustacks__free(u);
	free(a);
	free(b);
}

/* A capture counts its weight (a thread's CPU periods, bpf/sa_clock.bpf.h); merges add them. */
static void test_weights_add(void **state)
{
	struct rec_ustacks *u = rec_ustacks__new();
	struct sa_rb_ustack *a = capture(0x401000, 1), *b = capture(0x401000, 1);
	struct noted nt = {0};
	struct file f;
	__u64 counts[8];

	(void)state;
	assert_non_null(u);
	file_open(&f);
	open_interval(&f, 0);
	a->count = 3;
	b->count = 2;
	assert_int_equal(rec_ustacks__add(u, a, 0), 0);
	assert_int_equal(rec_ustacks__add(u, b, 0), 0); /* same: merged */
	assert_int_equal(rec_ustacks__add(u, b, 7), 0); /* another kernel stack */
	assert_int_equal(rec_ustacks__write(u, 0, f.w, f.procs, count_note, &nt), 0);
	assert_int_equal(file_counts(&f, counts, 8), 2);
	assert_int_equal(counts[0], 5);
	assert_int_equal(counts[1], 2);
	rec_ustacks__free(u);
	free(a);
	free(b);
}

static void test_noted_once_per_write(void **state)
{
	struct rec_ustacks *u = rec_ustacks__new();
	struct sa_rb_ustack *a = capture(0x401000, 1), *b = capture(0x402000, 2);
	struct noted nt = {0};
	struct file f;
	__u64 counts[8];

	(void)state;
	assert_non_null(u);
	file_open(&f);
	for (__u64 iv = 0; iv < 2; iv++) {
		open_interval(&f, iv);
		a->epoch = b->epoch = (__u32)iv;
		assert_int_equal(rec_ustacks__add(u, a, 0), 0);
		assert_int_equal(rec_ustacks__add(u, b, 0), 0);
		a->stack[0]++; /* a different capture at the same address */
		assert_int_equal(rec_ustacks__add(u, a, 0), 0);
		assert_int_equal(
			rec_ustacks__write(u, (__u32)iv & 1, f.w, f.procs, count_note, &nt), 0);
	}
	assert_int_equal(file_counts(&f, counts, 8), 6);
	/* two addresses in each of two writes */
	assert_int_equal(nt.calls, 4);
	assert_int_equal(nt.ips[0], 0x401000);
	assert_int_equal(nt.ips[1], 0x402000);
	assert_int_equal(nt.ips[2], 0x401000);
	assert_int_equal(nt.ips[3], 0x402000);
	rec_ustacks__free(u);
	free(a);
	free(b);
}

/*
 * With a trimmer, over no known mapping: the walk takes the frame-pointer
 * step, reading the saved rbp and return address at rbp (offset 0x100 of
 * the copy). a, then b (the same first bytes and registers, another return
 * address), then a again: two records, a's with count 2, first.
 */
static void test_trimmed_merge_after_a_near_miss(void **state)
{
	struct rec_maptab *mt = rec_maptab__new(NULL);
	struct rec_uwtrim *trim = rec_uwtrim__new(mt);
	struct rec_ustacks *u = rec_ustacks__new();
	struct sa_rb_ustack *a = capture(0x401000, 1), *b = capture(0x401000, 1);
	struct file f;
	__u64 counts[8];

	(void)state;
	assert_non_null(mt);
	assert_non_null(trim);
	assert_non_null(u);
	rec_ustacks__set_trim(u, trim);
	b->stack[0x108] ^= 1; /* the return address the walk reads */
	file_open(&f);
	open_interval(&f, 0);
	assert_int_equal(rec_ustacks__add(u, a, 0), 0);
	assert_int_equal(rec_ustacks__add(u, b, 0), 0);
	assert_int_equal(rec_ustacks__add(u, a, 0), 0);
	assert_int_equal(rec_ustacks__write(u, 0, f.w, f.procs, NULL, NULL), 0);
	assert_int_equal(file_counts(&f, counts, 8), 2);
	assert_int_equal(counts[0], 2);
	assert_int_equal(counts[1], 1);
	assert_int_equal(rec_uwtrim__stats(trim)->trimmed, 3);
	rec_ustacks__free(u);
	rec_uwtrim__free(trim);
	rec_maptab__free(mt);
	free(a);
	free(b);
}

SA_TEST_MAIN(test_identical_merge_others_stay_apart, test_weights_add, test_noted_once_per_write,
	     test_trimmed_merge_after_a_near_miss)
