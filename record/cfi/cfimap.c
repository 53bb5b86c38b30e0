// SPDX-License-Identifier: MIT
/*
 * cfimap.c - the code of one x86-64 ELF file where a frame-pointer walk lies:
 * FDEs whose CFA is never %rbp-based (frameless functions, PLT stubs), or the
 * whole executable segments when most functions with a stack frame are (a
 * -fomit-frame-pointer build).
 * The CFI reader (cfiread.c) is our own because record/ may not use libdw;
 * this needs only each FDE's range and whether a def_cfa* names register 6.
 */
#include <assert.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cfimap.h"
#include "cfiread.h"

#define DW_REG_RBP 6

struct ctx {
	GElf_Phdr *xl; /* executable PT_LOADs, p_filesz clipped to the file */
	size_t nxl;
	uint64_t pg0;	/* file page of bits[0] */
	size_t npg;	/* pages from the first to the last executable one */
	uint64_t *bits; /* dense; compacted into rec_cfimap.pages at the end */
	size_t nfuncs, nframeless, nflat;
};

#define CFA_RBP	  1 /* some row defines the CFA from %rbp */
#define CFA_MOVED 2 /* some row defines the CFA otherwise (an FDE's own rules) */

/*
 * What the CFA program @r does (CFA_*), or -EINVAL when it is truncated. An
 * opcode we do not know stops the scan as CFA_MOVED: its operands cannot be
 * skipped, and "frameless" only costs a stack copy where "framed" would cost
 * a wrong stack.
 */
static int cfa_rules(struct rec_cfird r, uint8_t enc)
{
	struct rec_cfainsn in;
	int moved = 0, ret;

	while ((ret = rec_cfi_insn(&r, enc, &in)) > 0) {
		if (in.cfa_reg && in.arg[0] == DW_REG_RBP)
			return CFA_RBP;
		if (in.cfa)
			moved = CFA_MOVED;
	}
	return ret == -ENOTSUP ? CFA_MOVED : ret ? ret : moved;
}

/* Set the blocks of file bytes [a, b), which lie inside cx's pages. */
static void mark_off(struct ctx *cx, uint64_t a, uint64_t b)
{
	uint64_t blk = a >> REC_CFI_BLOCK_SHIFT, last = (b - 1) >> REC_CFI_BLOCK_SHIFT, end;

	assert(a < b && a >> REC_CFI_PAGE_SHIFT >= cx->pg0 &&
	       (b - 1) >> REC_CFI_PAGE_SHIFT < cx->pg0 + cx->npg);
	while (blk <= last) {
		end = blk | 63;
		if (end > last)
			end = last;
		cx->bits[(blk >> 6) - cx->pg0] |=
			(~0ULL >> (63 - (end & 63))) & (~0ULL << (blk & 63));
		blk = end + 1;
	}
}

/* Set the blocks of addresses [lo, hi) that an executable segment maps. */
static void mark_va(struct ctx *cx, uint64_t lo, uint64_t hi)
{
	const GElf_Phdr *ph;
	uint64_t a, b;
	size_t i;

	for (i = 0; i < cx->nxl; i++) {
		ph = &cx->xl[i];
		a = lo > ph->p_vaddr ? lo : ph->p_vaddr;
		b = hi < ph->p_vaddr + ph->p_filesz ? hi : ph->p_vaddr + ph->p_filesz;
		if (a < b)
			mark_off(cx, a - ph->p_vaddr + ph->p_offset,
				 b - ph->p_vaddr + ph->p_offset);
	}
}

/* One FDE; a CIE whose own instructions define the CFA from %rbp frames them all. */
static int fde(struct ctx *cx, const struct rec_fde *f, const struct rec_cie *c)
{
	int rules = cfa_rules(c->init, c->fde_enc);

	if (rules >= 0 && !(rules & CFA_RBP))
		rules = cfa_rules(f->insns, c->fde_enc);
	if (rules < 0)
		return rules;
	if (!f->len)
		return 0;
	cx->nfuncs++;
	if (!(rules & CFA_RBP)) {
		cx->nframeless++;
		cx->nflat += !(rules & CFA_MOVED);
		mark_va(cx, f->lo, f->lo + f->len);
	}
	return 0;
}

static int scan(const struct rec_cfisec *s, struct ctx *cx)
{
	struct rec_cie cie = {.off = UINT64_MAX};
	uint64_t off = 0;
	struct rec_fde f;
	int ret;

	while ((ret = rec_cfi_next(s, &off, &cie, &f)) > 0) {
		ret = fde(cx, &f, &cie);
		if (ret)
			return ret;
	}
	return ret;
}

/* The executable PT_LOADs clipped to the file, and the page range they span. */
static int exec_loads(Elf *e, uint64_t fsize, struct ctx *cx)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i, n, k = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (ph.p_offset >= fsize || !ph.p_filesz || ph.p_vaddr + ph.p_filesz < ph.p_vaddr)
			continue;
		if (ph.p_filesz > fsize - ph.p_offset)
			ph.p_filesz = fsize - ph.p_offset;
		if (k == cx->nxl) {
			GElf_Phdr *t = realloc(cx->xl, (k * 2 + 2) * sizeof(*t));

			if (!t)
				return -ENOMEM;
			cx->xl = t;
			cx->nxl = k * 2 + 2;
		}
		cx->xl[k++] = ph;
		if (ph.p_offset >> REC_CFI_PAGE_SHIFT < lo)
			lo = ph.p_offset >> REC_CFI_PAGE_SHIFT;
		if ((ph.p_offset + ph.p_filesz - 1) >> REC_CFI_PAGE_SHIFT >= hi)
			hi = ((ph.p_offset + ph.p_filesz - 1) >> REC_CFI_PAGE_SHIFT) + 1;
	}
	cx->nxl = k;
	if (!k)
		return -ENOEXEC;
	cx->pg0 = lo;
	cx->npg = hi - lo;
	cx->bits = calloc(cx->npg, sizeof(*cx->bits));
	return cx->bits ? 0 : -ENOMEM;
}

/*
 * Scan .eh_frame and .debug_frame (decompressed in place when compressed).
 * Both, as libdwfl does: code built with -fno-asynchronous-unwind-tables has
 * its FDEs in .debug_frame while the C runtime's sit in .eh_frame.
 */
static int scan_cfi(Elf *e, struct ctx *cx)
{
	static const char *const names[] = {".eh_frame", ".debug_frame"};
	struct rec_cfisec s;
	int err, found = 0;
	size_t i;

	for (i = 0; i < 2; i++) {
		err = rec_cfi_section(e, names[i], &s);
		if (err == -ENOENT)
			continue;
		if (!err)
			err = scan(&s, cx);
		if (err)
			return err;
		found = 1;
	}
	return found ? 0 : -ENOENT;
}

static int compact(const struct ctx *cx, struct rec_cfimap *m)
{
	size_t i, n = 0;

	for (i = 0; i < cx->npg; i++)
		n += cx->bits[i] != 0;
	m->pages = calloc(n ? n : 1, sizeof(*m->pages));
	if (!m->pages)
		return -ENOMEM;
	for (i = 0; i < cx->npg; i++)
		if (cx->bits[i])
			m->pages[m->npages++] = (struct rec_cfipage){cx->pg0 + i, cx->bits[i]};
	return 0;
}

static int classify_elf(Elf *e, uint64_t fsize, struct rec_cfimap *m)
{
	struct ctx cx = {0};
	size_t i;
	int err;

	err = exec_loads(e, fsize, &cx);
	if (!err)
		err = scan_cfi(e, &cx);
	if (err)
		goto cleanup;
	m->nfuncs = cx.nfuncs;
	m->nframeless = cx.nframeless;
	m->nflat = cx.nflat;
	/*
	 * Flat functions (leaves that never move the CFA) are frameless in
	 * frame-pointer builds too, so they do not vote: the file was built
	 * without frame pointers when most functions that do set up a stack
	 * frame do it without %rbp. Then even its framed functions (alloca,
	 * realignment) run under frameless callers.
	 */
	m->whole = cx.nframeless - cx.nflat > cx.nfuncs - cx.nframeless;
	for (i = 0; m->whole && i < cx.nxl; i++)
		mark_off(&cx, cx.xl[i].p_offset, cx.xl[i].p_offset + cx.xl[i].p_filesz);
	err = compact(&cx, m);
cleanup:
	free(cx.bits);
	free(cx.xl);
	return err;
}

int rec_cfimap__classify(int fd, struct rec_cfimap *m)
{
	struct stat st;
	Elf *e = NULL;
	int err;

	memset(m, 0, sizeof(*m));
	if (fstat(fd, &st))
		return -errno;
	/* Only the headers and the CFI sections are read (rec_cfi_elf()). */
	e = rec_cfi_elf(fd, &err);
	if (!e)
		return err;
	err = classify_elf(e, (uint64_t)st.st_size, m);
	if (err)
		rec_cfimap__release(m);
	elf_end(e);
	return err;
}

int rec_cfimap__test(const struct rec_cfimap *m, uint64_t off)
{
	uint64_t pg = off >> REC_CFI_PAGE_SHIFT;
	size_t lo = 0, hi = m->npages, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->pages[mid].page < pg)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->npages || m->pages[lo].page != pg)
		return 0;
	return (int)(m->pages[lo].bits >> ((off >> REC_CFI_BLOCK_SHIFT) & 63) & 1);
}

void rec_cfimap__release(struct rec_cfimap *m)
{
	if (!m)
		return;
	free(m->pages);
	memset(m, 0, sizeof(*m));
}
