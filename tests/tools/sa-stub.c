// SPDX-License-Identifier: MIT
/*
 * sa-stub.c - rewrite a recording so that the samples of a loop calling a
 * PLT stub are samples in the stub. Whether a timer interrupt ever lands in
 * a stub is the CPU's choice; test 6130 checks sa's naming and unwinding of
 * stub samples on samples made here. Two kinds of capture move:
 *  - a leaf at file offset [LO, HI) of BINARY (the caller, past its
 *    prologue) becomes the stub's first instruction (STUB) called from RET,
 *    as if the `call` had just run: a walked stack gains the frames STUB,
 *    RET; a copied stack (dwarf) gains the return address below its stack
 *    pointer;
 *  - a leaf outside BINARY whose return address is RET (the callee, before
 *    it touched the stack, as a frameless abs() is) becomes STUB, whose
 *    stack and registers are the same.
 * A copied stack loses the recorder's walk, so sa-report unwinds it
 * through the stub's CFI, and the symbols the recorder embedded (SYMTAB,
 * USYM) are left out, so sa-report names every frame from the binary, as
 * it would for samples the CPU never put in the stub. Test tool only.
 * usage: sa-stub IN.sa OUT.sa BINARY LO HI STUB RET (file offsets, hex);
 * prints "stacks captures" moved.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "saf.h"
#include "saf_rewrite.h"

#define MAX_MAPS 64

struct stub {
	struct tst_rewriter rw;
	const char *binary;
	uint64_t lo, hi, stub, ret; /* file offsets in binary */
	struct {
		uint32_t pid;
		uint64_t start, end, pgoff;
	} maps[MAX_MAPS];
	int nmaps;
	unsigned long stacks, captures;
	uint64_t ips[SAF_MAX_FRAMES + 2];
	uint8_t bytes[SAF_MAX_USTACK_BYTES + 64];
};

/* The map of @binary holding @addr (for @pid unless it is 0), or -1. */
static int map_at(const struct stub *s, uint32_t pid, uint64_t addr)
{
	for (int i = 0; i < s->nmaps; i++)
		if ((!pid || s->maps[i].pid == pid) && addr >= s->maps[i].start &&
		    addr < s->maps[i].end)
			return i;
	return -1;
}

/* The address of file offset @off in map @i. */
static uint64_t at(const struct stub *s, int i, uint64_t off)
{
	return s->maps[i].start + off - s->maps[i].pgoff;
}

/* The map of a leaf in the caller's range, or -1. */
static int in_caller(const struct stub *s, uint32_t pid, uint64_t leaf)
{
	int i = map_at(s, pid, leaf);
	uint64_t off;

	if (i < 0)
		return -1;
	off = leaf - s->maps[i].start + s->maps[i].pgoff;
	return off >= s->lo && off < s->hi ? i : -1;
}

/* The map of @ret when it is RET and the @leaf above it is in no map of BINARY, or -1. */
static int in_callee(const struct stub *s, uint32_t pid, uint64_t leaf, uint64_t ret)
{
	int i = map_at(s, pid, ret);

	if (i < 0 || map_at(s, pid, leaf) >= 0)
		return -1;
	return ret == at(s, i, s->ret) ? i : -1;
}

static int on_stack(struct stub *s, const struct saf_record *rec, uint64_t off)
{
	const struct saf_stack *st = &rec->stack;
	struct saf_record out = *rec;
	uint32_t n = st->nframes < SAF_MAX_FRAMES - 1 ? st->nframes : SAF_MAX_FRAMES - 1;
	int i;

	if (st->kind != SAF_STACK_USER || !n)
		return tst_rewrite_one(&s->rw, rec, off);
	if (n > 1 && (i = in_callee(s, 0, st->ips[0], st->ips[1])) >= 0) {
		memcpy(s->ips, st->ips, n * sizeof(*s->ips));
		s->ips[0] = at(s, i, s->stub);
		out.stack.ips = s->ips;
		s->stacks++;
		return tst_rewrite_one(&s->rw, &out, off);
	}
	if ((i = in_caller(s, 0, st->ips[0])) < 0)
		return tst_rewrite_one(&s->rw, rec, off);
	s->ips[0] = at(s, i, s->stub);
	s->ips[1] = at(s, i, s->ret);
	memcpy(s->ips + 2, st->ips + 1, (n - 1) * sizeof(*s->ips));
	out.stack.ips = s->ips;
	out.stack.nframes = n + 1;
	s->stacks++;
	return tst_rewrite_one(&s->rw, &out, off);
}

/* The 8 bytes at the stack pointer of a copied stack, or 0. */
static uint64_t top(const struct saf_ustack *u, int sparse)
{
	struct saf_urun r = {0};
	uint64_t v = 0;
	size_t pos = 0;

	if (!sparse && u->stack.len >= 8)
		memcpy(&v, u->stack.data, 8);
	else if (sparse && saf_urun__next(u, &pos, &r) && r.off == 0 && r.len >= 8)
		memcpy(&v, r.data, 8);
	return v;
}

/* A copied stack: push the return address, as the call does. */
static int on_ustack(struct stub *s, const struct saf_record *rec, uint64_t off)
{
	const struct saf_ustack *u = &rec->ustack;
	int sparse = rec->kind == SAF_REC_USTACK_SPARSE;
	struct saf_record out = *rec;
	uint64_t ret, ip = u->regs[SAF_UREG_IP];
	int i;

	if (u->nregs < 2)
		return tst_rewrite_one(&s->rw, rec, off);
	out.ustack.walk = SAF_WALK_NONE;
	out.ustack.nwalked = 0;
	out.ustack.walked = NULL;
	if ((i = in_callee(s, u->pid, ip, top(u, sparse))) >= 0) {
		out.ustack.regs[SAF_UREG_IP] = at(s, i, s->stub);
		s->captures += u->count;
		return tst_rewrite_one(&s->rw, &out, off);
	}
	if ((i = in_caller(s, u->pid, ip)) < 0)
		return tst_rewrite_one(&s->rw, rec, off);
	ret = at(s, i, s->ret);
	out.ustack.regs[SAF_UREG_IP] = at(s, i, s->stub);
	out.ustack.regs[SAF_UREG_SP] -= 8;
	if (!sparse) {
		uint32_t len = u->stack.len;

		if (len > SAF_MAX_USTACK_BYTES - 8)
			len = SAF_MAX_USTACK_BYTES - 8;
		memcpy(s->bytes, &ret, 8);
		memcpy(s->bytes + 8, u->stack.data, len);
		out.ustack.stack = (struct saf_bytes){s->bytes, len + 8};
	} else {
		size_t k = saf_urun__put(s->bytes, 0, &ret, 8);

		if (k + u->runs.len > SAF_MAX_USTACK_BYTES)
			return -E2BIG;
		memcpy(s->bytes + k, u->runs.data, u->runs.len);
		out.ustack.runs = (struct saf_bytes){s->bytes, (uint32_t)(k + u->runs.len)};
	}
	s->captures += u->count;
	return tst_rewrite_one(&s->rw, &out, off);
}

static int on_record(struct stub *s, const struct saf_record *rec, uint64_t off)
{
	switch (rec->kind) {
	case SAF_REC_STACK:
		return on_stack(s, rec, off);
	case SAF_REC_USTACK:
	case SAF_REC_USTACK_SPARSE:
		return on_ustack(s, rec, off);
	case SAF_REC_SYMTAB:
	case SAF_REC_USYM:
	case SAF_REC_ULINE:
		return 0;
	default:
		return tst_rewrite_one(&s->rw, rec, off);
	}
}

/* First pass: the mappings of the binary, whichever chunk holds them. */
static int read_maps(struct stub *s, const char *path)
{
	struct saf_reader *r = saf_reader__open(path, NULL);
	struct saf_record rec;
	int ret;

	if (!r)
		return -errno;
	while ((ret = saf_reader__next(r, &rec)) == 1) {
		const struct saf_map *m = &rec.map;

		if (rec.kind != SAF_REC_MAP || m->path.len != strlen(s->binary) ||
		    memcmp(m->path.str, s->binary, m->path.len) || s->nmaps == MAX_MAPS)
			continue;
		s->maps[s->nmaps].pid = m->pid;
		s->maps[s->nmaps].start = m->start;
		s->maps[s->nmaps].end = m->end;
		s->maps[s->nmaps].pgoff = m->pgoff;
		s->nmaps++;
	}
	saf_reader__free(r);
	return ret < 0 ? -EBADMSG : s->nmaps ? 0 : -ENOENT;
}

int main(int argc, char **argv)
{
	static struct stub s;
	struct saf_reader *r = NULL;
	struct saf_record rec;
	uint64_t off;
	int fd, ret = 0, err;

	if (argc != 8) {
		fprintf(stderr, "usage: sa-stub IN.sa OUT.sa BINARY LO HI STUB RET\n");
		return 2;
	}
	s.binary = argv[3];
	s.lo = strtoull(argv[4], NULL, 16);
	s.hi = strtoull(argv[5], NULL, 16);
	s.stub = strtoull(argv[6], NULL, 16);
	s.ret = strtoull(argv[7], NULL, 16);
	err = read_maps(&s, argv[1]);
	if (err) {
		fprintf(stderr, "sa-stub: no mapping of %s in %s: %s\n", argv[3], argv[1],
			strerror(-err));
		return 1;
	}
	r = saf_reader__open(argv[1], NULL);
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	s.rw.w = fd >= 0 ? saf_writer__open_fd(fd, NULL) : NULL;
	if (!r || !s.rw.w) {
		fprintf(stderr, "sa-stub: cannot open %s or %s\n", argv[1], argv[2]);
		return 1;
	}
	while (!err && (ret = saf_reader__next(r, &rec)) == 1) {
		saf_reader__chunk(r, NULL, &off);
		err = on_record(&s, &rec, off);
	}
	if (err || ret < 0) {
		fprintf(stderr, "sa-stub: %s\n", err ? strerror(-err) : "read error");
		return 1;
	}
	printf("%lu %lu\n", s.stacks, s.captures);
	saf_writer__free(s.rw.w);
	saf_reader__free(r);
	return close(fd) ? 1 : 0;
}
