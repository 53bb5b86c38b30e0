// SPDX-License-Identifier: MIT
/*
 * cfimap.c - the code of one x86-64 ELF file where a frame-pointer walk lies:
 * FDEs whose CFA is never %rbp-based (frameless functions, PLT stubs), or the
 * whole executable segments when most functions with a stack frame are (a
 * -fomit-frame-pointer build).
 * The CFI parser is our own because record/ may not use libdw; it needs only
 * each FDE's range and whether a def_cfa* names register 6.
 */
#include <assert.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cfimap.h"

#define DW_REG_RBP 6

/* DW_EH_PE_* pointer encodings (LSB, "Exception Frames"): format | application. */
#define PE_ABSPTR   0x00
#define PE_ULEB128  0x01
#define PE_UDATA2   0x02
#define PE_UDATA4   0x03
#define PE_UDATA8   0x04
#define PE_SLEB128  0x09
#define PE_SDATA2   0x0a
#define PE_SDATA4   0x0b
#define PE_SDATA8   0x0c
#define PE_FORMAT   0x0f
#define PE_PCREL    0x10
#define PE_APPLY    0x70
#define PE_INDIRECT 0x80

/*
 * Operands of the DW_CFA_* opcodes below 0x40 (DWARF 5, 6.4.2, with the GNU
 * and MIPS ones), a letter each: u a LEB128, 1/2/4/8 fixed bytes, a an
 * address, b a LEB128-sized block; upper case where the opcode defines the
 * CFA: R its register, O its offset, E its expression. NULL: unknown.
 */
static const char *const cfa_operands[0x30] = {
	/* 0x00: nop, set_loc, advance_loc1/2/4, offset_extended, restore_extended, undefined */
	"", "a", "1", "2", "4", "uu", "u", "u",
	/* 0x08: same_value, register, remember_state, restore_state, def_cfa, */
	/* def_cfa_register, def_cfa_offset, def_cfa_expression */
	"u", "uu", "", "", "RO", "R", "O", "E",
	/* 0x10: expression, offset_extended_sf, def_cfa_sf, def_cfa_offset_sf, */
	/* val_offset, val_offset_sf, val_expression */
	"ub", "uu", "RO", "O", "uu", "uu", "ub",
	/* MIPS_advance_loc8; GNU_window_save, GNU_args_size, GNU_negative_offset_extended */
	[0x1d] = "8", [0x2d] = "", "u", "uu"};

/* A cursor in one section: a read past @end sets @bad and yields 0. */
struct rd {
	const uint8_t *sec, *p, *end;
	uint64_t va; /* address of sec[0], for pc-relative pointers */
	int bad;
};

struct sec {
	const uint8_t *buf;
	size_t size;
	uint64_t va;
	int eh; /* .eh_frame (CIE id 0, relative CIE pointers) or .debug_frame */
};

struct cie {
	uint8_t fde_enc; /* how FDE addresses are encoded */
	int aug_z;	 /* FDEs carry a length-prefixed augmentation */
	int framed;	 /* its initial instructions define the CFA from %rbp */
};

struct ctx {
	GElf_Phdr *xl; /* executable PT_LOADs, p_filesz clipped to the file */
	size_t nxl;
	uint64_t pg0;	/* file page of bits[0] */
	size_t npg;	/* pages from the first to the last executable one */
	uint64_t *bits; /* dense; compacted into rec_cfimap.pages at the end */
	size_t nfuncs, nframeless, nflat;
};

static uint64_t rd_u(struct rd *r, size_t n)
{
	uint64_t v = 0;
	size_t i;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t rd_leb(struct rd *r, int is_signed)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (r->bad || r->p >= r->end) {
			r->bad = 1;
			return 0;
		}
		b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (is_signed && shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	return v;
}

static void rd_skip(struct rd *r, uint64_t n)
{
	if (r->bad || (uint64_t)(r->end - r->p) < n) {
		r->bad = 1;
		return;
	}
	r->p += n;
}

/* A value in DW_EH_PE format @fmt, sign-extended for the sdata ones. */
static uint64_t rd_raw(struct rd *r, uint8_t fmt)
{
	switch (fmt) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		return rd_u(r, 8);
	case PE_UDATA4:
		return rd_u(r, 4);
	case PE_SDATA4:
		return (uint64_t)(int64_t)(int32_t)rd_u(r, 4);
	case PE_UDATA2:
		return rd_u(r, 2);
	case PE_SDATA2:
		return (uint64_t)(int64_t)(int16_t)rd_u(r, 2);
	case PE_ULEB128:
		return rd_leb(r, 0);
	case PE_SLEB128:
		return rd_leb(r, 1);
	}
	r->bad = 1;
	return 0;
}

/* An address: only absolute and pc-relative ones occur in x86-64 CFI. */
static uint64_t rd_addr(struct rd *r, uint8_t enc)
{
	uint64_t here = r->va + (uint64_t)(r->p - r->sec);
	uint64_t v = rd_raw(r, enc & PE_FORMAT);

	if (enc & PE_INDIRECT)
		r->bad = 1;
	if ((enc & PE_APPLY) == PE_PCREL)
		return here + v;
	if (enc & PE_APPLY)
		r->bad = 1;
	return v;
}

/* The body of the entry at @off (after its length); empty for a terminator. */
static int entry_at(const struct sec *s, uint64_t off, struct rd *body, int *dwarf64)
{
	struct rd r = {s->buf, s->buf, s->buf + s->size, s->va, 0};
	uint64_t len;

	if (off > s->size)
		return -EINVAL;
	r.p += off;
	len = rd_u(&r, 4);
	*dwarf64 = len == 0xffffffff;
	if (*dwarf64)
		len = rd_u(&r, 8);
	if (r.bad || len > (uint64_t)(r.end - r.p))
		return -EINVAL;
	r.end = r.p + len;
	*body = r;
	return 0;
}

static int is_cie_id(const struct sec *s, uint64_t id, int dwarf64)
{
	return s->eh ? id == 0 : id == (dwarf64 ? ~0ULL : 0xffffffffULL);
}

#define CFA_RBP	  1 /* some row defines the CFA from %rbp */
#define CFA_MOVED 2 /* some row defines the CFA otherwise (an FDE's own rules) */

/*
 * What the CFA program @r does (CFA_*), or -EINVAL when it is truncated. An
 * opcode we do not know stops the scan as CFA_MOVED: its operands cannot be
 * skipped, and "frameless" only costs a stack copy where "framed" would cost
 * a wrong stack.
 */
static int cfa_rules(struct rd r, uint8_t enc)
{
	const char *ops;
	int moved = 0;
	uint8_t op;

	while (r.p < r.end && !r.bad) {
		op = *r.p++;
		if (op >> 6 == 2) /* DW_CFA_offset: register in the opcode, offset */
			rd_leb(&r, 0);
		if (op >> 6) /* DW_CFA_advance_loc, DW_CFA_restore: no operand either */
			continue;
		ops = op < 0x30 ? cfa_operands[op] : NULL;
		if (!ops)
			return CFA_MOVED;
		for (; *ops && !r.bad; ops++) {
			if (*ops >= 'A' && *ops <= 'Z')
				moved = CFA_MOVED;
			if (*ops == 'a')
				rd_raw(&r, enc & PE_FORMAT);
			else if (*ops >= '1' && *ops <= '8')
				rd_skip(&r, (uint64_t)(*ops - '0'));
			else if (*ops == 'b' || *ops == 'E')
				rd_skip(&r, rd_leb(&r, 0));
			else if (*ops == 'R' && rd_leb(&r, 0) == DW_REG_RBP && !r.bad)
				return CFA_RBP;
			else if (*ops != 'R') /* a signed LEB128 skips as an unsigned one */
				rd_leb(&r, 0);
		}
	}
	return r.bad ? -EINVAL : moved;
}

/* The CIE augmentation: only 'R' matters; 'z' lets us skip what we do not know. */
static void cie_aug(struct rd *r, const char *aug, size_t alen, struct cie *c)
{
	uint64_t n = rd_leb(r, 0);
	struct rd a = *r;
	size_t i;

	rd_skip(r, n);
	a.end = r->p;
	for (i = 1; i < alen && !r->bad; i++) {
		if (aug[i] == 'R')
			c->fde_enc = (uint8_t)rd_u(&a, 1);
		else if (aug[i] == 'L')
			rd_u(&a, 1);
		else if (aug[i] == 'P')
			rd_raw(&a, (uint8_t)rd_u(&a, 1) & PE_FORMAT);
		else if (aug[i] != 'S' && aug[i] != 'B')
			break; /* unknown: the rest of the data is skipped by length */
	}
	r->bad |= a.bad;
}

static int parse_cie(const struct sec *s, uint64_t off, struct cie *c)
{
	const char *aug;
	size_t alen;
	struct rd r;
	int d64, ver, err;

	err = entry_at(s, off, &r, &d64);
	if (err)
		return err;
	if (!is_cie_id(s, rd_u(&r, !s->eh && d64 ? 8 : 4), d64) || r.bad)
		return -EINVAL;
	ver = (int)rd_u(&r, 1);
	aug = (const char *)r.p;
	alen = strnlen(aug, (size_t)(r.end - r.p));
	rd_skip(&r, alen + 1);
	c->fde_enc = s->eh ? PE_ABSPTR : PE_UDATA8;
	if (ver >= 4 && rd_u(&r, 1) == 4) /* address size, then segment selector size */
		c->fde_enc = PE_UDATA4;
	if (ver >= 4)
		rd_u(&r, 1);
	rd_leb(&r, 0); /* code alignment */
	rd_leb(&r, 1); /* data alignment */
	if (ver == 1)
		rd_u(&r, 1); /* return address register */
	else
		rd_leb(&r, 0);
	c->aug_z = !r.bad && aug[0] == 'z';
	if (c->aug_z)
		cie_aug(&r, aug, alen, c);
	else if (!r.bad && aug[0])
		return -EINVAL; /* pre-'z' augmentations: the layout is unknown */
	if (r.bad)
		return -EINVAL;
	err = cfa_rules(r, c->fde_enc);
	c->framed = err > 0 && (err & CFA_RBP);
	return err < 0 ? err : 0;
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

/* One FDE whose body @r starts after the CIE pointer. */
static int fde(struct ctx *cx, struct rd r, const struct cie *c)
{
	uint64_t lo = rd_addr(&r, c->fde_enc);
	uint64_t len = rd_raw(&r, c->fde_enc & PE_FORMAT);
	int rules;

	if (c->aug_z)
		rd_skip(&r, rd_leb(&r, 0));
	if (r.bad || lo + len < lo)
		return -EINVAL;
	rules = c->framed ? CFA_RBP : cfa_rules(r, c->fde_enc);
	if (rules < 0)
		return rules;
	if (!len)
		return 0;
	cx->nfuncs++;
	if (!(rules & CFA_RBP)) {
		cx->nframeless++;
		cx->nflat += !(rules & CFA_MOVED);
		mark_va(cx, lo, lo + len);
	}
	return 0;
}

static int scan(const struct sec *s, struct ctx *cx)
{
	uint64_t off = 0, id_off, id, cie_off = UINT64_MAX;
	struct cie cie = {0};
	struct rd r;
	int d64, err;

	while (off < s->size) {
		err = entry_at(s, off, &r, &d64);
		if (err)
			return err;
		off = (uint64_t)(r.end - s->buf);
		if (r.p == r.end) {
			if (s->eh) /* the terminator */
				break;
			continue;
		}
		id_off = (uint64_t)(r.p - s->buf);
		id = rd_u(&r, !s->eh && d64 ? 8 : 4);
		if (r.bad || (s->eh && id > id_off))
			return -EINVAL;
		if (is_cie_id(s, id, d64))
			continue;
		/* Most files have a handful of CIEs, FDEs in runs under each. */
		if ((s->eh ? id_off - id : id) != cie_off) {
			cie_off = s->eh ? id_off - id : id;
			err = parse_cie(s, cie_off, &cie);
			if (err)
				return err;
		}
		err = fde(cx, r, &cie);
		if (err)
			return err;
	}
	return 0;
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
	Elf_Scn *scn = NULL, *found[2] = {NULL, NULL};
	struct sec s;
	const char *name;
	Elf_Data *d;
	size_t shstrndx, i;
	GElf_Shdr sh;
	int err;

	if (elf_getshdrstrndx(e, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".eh_frame") || !strcmp(name, ".debug_frame")))
			found[name[1] == 'd'] = scn;
	}
	if (!found[0] && !found[1])
		return -ENOENT;
	for (i = 0; i < 2; i++) {
		if (!found[i])
			continue;
		if (!gelf_getshdr(found[i], &sh) ||
		    ((sh.sh_flags & SHF_COMPRESSED) &&
		     (elf_compress(found[i], 0, 0) < 0 || !gelf_getshdr(found[i], &sh))))
			return -EINVAL;
		d = elf_rawdata(found[i], NULL);
		if (!d || !d->d_buf) /* libelf refuses a section past the end of the file */
			return -EINVAL;
		s = (struct sec){d->d_buf, d->d_size, sh.sh_addr, i == 0};
		err = scan(&s, cx);
		if (err)
			return err;
	}
	return 0;
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
	GElf_Ehdr eh;
	size_t i;
	int err;

	if (!gelf_getehdr(e, &eh))
		return -ENOEXEC;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		return -ENOTSUP;
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
	/*
	 * ELF_C_READ, not the mmap variant: libelf then preads the headers and
	 * the one CFI section into buffers of their exact size, so the parser's
	 * bounds are checked by ASan and the rest of the file is never read.
	 */
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto cleanup;
	}
	err = classify_elf(e, (uint64_t)st.st_size, m);
	if (err)
		rec_cfimap__release(m);
cleanup:
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
