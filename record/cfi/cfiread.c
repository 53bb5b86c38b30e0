// SPDX-License-Identifier: MIT
/*
 * cfiread.c - the CFI reader under cfirows.c: pointer encodings,
 * CIE and FDE headers of .eh_frame and .debug_frame, and CFA instructions
 * decoded one at a time. Every read is bounded by its entry's length.
 */
#include <errno.h>
#include <gelf.h>
#include <string.h>
#include "cfiread.h"
#include "safeopen.h"

/*
 * Operands of the DW_CFA_* opcodes below 0x40, a letter each: u and s an
 * unsigned and a signed LEB128, 1/2/4/8 fixed bytes, a an address, b a
 * LEB128-sized block; upper case where the opcode defines the CFA: R its
 * register, U and S its offset, E its expression. NULL: unknown.
 */
static const char *const cfa_operands[0x30] = {
	/* 0x00: nop, set_loc, advance_loc1/2/4, offset_extended, restore_extended, undefined */
	"", "a", "1", "2", "4", "uu", "u", "u",
	/* 0x08: same_value, register, remember_state, restore_state, def_cfa, */
	/* def_cfa_register, def_cfa_offset, def_cfa_expression */
	"u", "uu", "", "", "RU", "R", "U", "E",
	/* 0x10: expression, offset_extended_sf, def_cfa_sf, def_cfa_offset_sf, */
	/* val_offset, val_offset_sf, val_expression */
	"ub", "us", "RS", "S", "uu", "us", "ub",
	/* MIPS_advance_loc8; GNU_window_save, GNU_args_size, GNU_negative_offset_extended */
	[0x1d] = "8", [0x2d] = "", "u", "uu"};

/*
 * The next LEB128 number at @r (signed if @is_signed, its value
 * sign-extended), or 0 with @r marked bad past its end.
 */
static uint64_t leb(struct rec_cfird *r, int is_signed)
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

/* A value in DW_EH_PE format @fmt, sign-extended for the sdata ones. */
static uint64_t raw(struct rec_cfird *r, uint8_t fmt)
{
	switch (fmt) {
	case REC_PE_ABSPTR:
	case REC_PE_UDATA8:
	case REC_PE_SDATA8:
		return rec_cfird__u(r, 8);
	case REC_PE_UDATA4:
		return rec_cfird__u(r, 4);
	case REC_PE_SDATA4:
		return (uint64_t)(int64_t)(int32_t)rec_cfird__u(r, 4);
	case REC_PE_UDATA2:
		return rec_cfird__u(r, 2);
	case REC_PE_SDATA2:
		return (uint64_t)(int64_t)(int16_t)rec_cfird__u(r, 2);
	case REC_PE_ULEB128:
		return leb(r, 0);
	case REC_PE_SLEB128:
		return leb(r, 1);
	}
	r->bad = 1;
	return 0;
}

uint64_t rec_cfi_addr(struct rec_cfird *r, uint8_t enc)
{
	uint64_t here = r->va + (uint64_t)(r->p - r->sec);
	uint64_t v = raw(r, enc & REC_PE_FORMAT);

	if (enc & REC_PE_INDIRECT)
		r->bad = 1;
	if ((enc & REC_PE_APPLY) == REC_PE_PCREL)
		return here + v;
	if (enc & REC_PE_APPLY)
		r->bad = 1;
	return v;
}

Elf *rec_cfi_elf(int fd, int *err)
{
	Elf *e = NULL;
	GElf_Ehdr eh;

	*err = -ENOEXEC;
	e = rec_safe_elf_begin(fd, ELF_C_READ);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		goto fail;
	*err = -ENOTSUP;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		goto fail;
	*err = 0;
	return e;
fail:
	elf_end(e);
	return NULL;
}

int rec_cfi_section(Elf *e, const char *name, struct rec_cfisec *s)
{
	Elf_Scn *scn = NULL, *found = NULL;
	const char *n;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf_Data *d;

	if (elf_getshdrstrndx(e, &shstrndx))
		return -ENOENT;
	while (!found && (scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			found = scn;
	}
	if (!found)
		return -ENOENT;
	/* ELF_C_READ copies what is asked for: a size is a cost (safeopen.h). */
	if (sh.sh_size > REC_BIN_MAX_SECTION)
		return -EFBIG;
	if (sh.sh_flags & SHF_COMPRESSED) {
		GElf_Chdr ch;

		if (!gelf_getchdr(found, &ch))
			return -EINVAL;
		if (ch.ch_size > REC_BIN_MAX_SECTION)
			return -EFBIG;
		if (elf_compress(found, 0, 0) < 0 || !gelf_getshdr(found, &sh))
			return -EINVAL;
	}
	d = elf_rawdata(found, NULL);
	if (!d || !d->d_buf) /* libelf refuses a section past the end of the file */
		return -EINVAL;
	*s = (struct rec_cfisec){d->d_buf, d->d_size, sh.sh_addr, !strcmp(name, ".eh_frame")};
	return 0;
}

/* The body of the entry at @off (after its length); empty for a terminator. */
static int entry_at(const struct rec_cfisec *s, uint64_t off, struct rec_cfird *body, int *dwarf64)
{
	struct rec_cfird r = {s->buf, s->buf, s->buf + s->size, s->va, 0};
	uint64_t len;

	if (off > s->size)
		return -EINVAL;
	r.p += off;
	len = rec_cfird__u(&r, 4);
	*dwarf64 = len == 0xffffffff;
	if (*dwarf64)
		len = rec_cfird__u(&r, 8);
	if (r.bad || len > (uint64_t)(r.end - r.p))
		return -EINVAL;
	r.end = r.p + len;
	*body = r;
	return 0;
}

static int is_cie_id(const struct rec_cfisec *s, uint64_t id, int dwarf64)
{
	return s->eh ? id == 0 : id == (dwarf64 ? ~0ULL : 0xffffffffULL);
}

/* The CIE augmentation: 'R' and 'S' matter; 'z' lets us skip what we do not know. */
static void cie_aug(struct rec_cfird *r, const char *aug, size_t alen, struct rec_cie *c)
{
	uint64_t n = leb(r, 0);
	struct rec_cfird a = *r;
	size_t i;

	rec_cfird__skip(r, n);
	a.end = r->p;
	for (i = 1; i < alen && !r->bad; i++) {
		if (aug[i] == 'R')
			c->fde_enc = (uint8_t)rec_cfird__u(&a, 1);
		else if (aug[i] == 'L')
			rec_cfird__u(&a, 1);
		else if (aug[i] == 'P')
			raw(&a, (uint8_t)rec_cfird__u(&a, 1) & REC_PE_FORMAT);
		else if (aug[i] == 'S')
			c->signal = true;
		else if (aug[i] != 'B')
			break; /* unknown: the rest of the data is skipped by length */
	}
	r->bad |= a.bad;
}

static int parse_cie(const struct rec_cfisec *s, uint64_t off, struct rec_cie *c)
{
	const char *aug;
	size_t alen;
	struct rec_cfird r;
	int d64, ver, err;

	err = entry_at(s, off, &r, &d64);
	if (err)
		return err;
	if (!is_cie_id(s, rec_cfird__u(&r, !s->eh && d64 ? 8 : 4), d64) || r.bad)
		return -EINVAL;
	*c = (struct rec_cie){.off = UINT64_MAX, .fde_enc = s->eh ? REC_PE_ABSPTR : REC_PE_UDATA8};
	ver = (int)rec_cfird__u(&r, 1);
	aug = (const char *)r.p;
	alen = strnlen(aug, (size_t)(r.end - r.p));
	rec_cfird__skip(&r, alen + 1);
	if (ver >= 4 && rec_cfird__u(&r, 1) == 4) /* address size, then segment selector size */
		c->fde_enc = REC_PE_UDATA4;
	if (ver >= 4)
		rec_cfird__u(&r, 1);
	c->code_align = leb(&r, 0);
	c->data_align = (int64_t)leb(&r, 1);
	if (ver == 1)
		rec_cfird__u(&r, 1); /* return address register */
	else
		leb(&r, 0);
	c->aug_z = !r.bad && aug[0] == 'z';
	if (c->aug_z)
		cie_aug(&r, aug, alen, c);
	else if (!r.bad && aug[0])
		return -EINVAL; /* pre-'z' augmentations: the layout is unknown */
	if (r.bad)
		return -EINVAL;
	c->init = r;
	c->off = off;
	return 0;
}

/*
 * The entry whose body @r starts at its CIE id or pointer: 1 an FDE (its
 * CIE in @c), 0 a CIE, or -EINVAL.
 */
static int entry(const struct rec_cfisec *s, struct rec_cfird r, int d64, struct rec_cie *c,
		 struct rec_fde *f)
{
	uint64_t id_off = (uint64_t)(r.p - s->buf), id, cie_off;
	int err;

	id = rec_cfird__u(&r, !s->eh && d64 ? 8 : 4);
	if (r.bad || (s->eh && id > id_off))
		return -EINVAL;
	if (is_cie_id(s, id, d64))
		return 0;
	/* Most files have a handful of CIEs, FDEs in runs under each. */
	cie_off = s->eh ? id_off - id : id;
	if (cie_off != c->off) {
		err = parse_cie(s, cie_off, c);
		if (err)
			return err;
	}
	f->lo = rec_cfi_addr(&r, c->fde_enc);
	f->len = raw(&r, c->fde_enc & REC_PE_FORMAT);
	if (c->aug_z)
		rec_cfird__skip(&r, leb(&r, 0));
	if (r.bad || f->lo + f->len < f->lo)
		return -EINVAL;
	f->insns = r;
	return 1;
}

int rec_cfi_next(const struct rec_cfisec *s, uint64_t *off, struct rec_cie *c, struct rec_fde *f)
{
	struct rec_cfird r;
	int d64, ret;

	while (*off < s->size) {
		ret = entry_at(s, *off, &r, &d64);
		if (ret)
			return ret;
		f->off = *off;
		*off = (uint64_t)(r.end - s->buf);
		if (r.p == r.end) {
			if (s->eh) /* the terminator */
				break;
			continue;
		}
		ret = entry(s, r, d64, c, f);
		if (ret)
			return ret;
	}
	return 0;
}

int rec_cfi_fde_at(const struct rec_cfisec *s, uint64_t off, struct rec_cie *c, struct rec_fde *f)
{
	struct rec_cfird r;
	int d64, ret;

	ret = entry_at(s, off, &r, &d64);
	if (!ret && r.p == r.end)
		ret = -EINVAL;
	if (!ret)
		ret = entry(s, r, d64, c, f);
	f->off = off;
	return ret == 1 ? 0 : ret ? ret : -EINVAL;
}

static void operand(struct rec_cfird *r, char kind, uint8_t enc, struct rec_cfainsn *in,
		    uint64_t *v)
{
	if (kind == 'a')
		*v = rec_cfi_addr(r, enc);
	else if (kind >= '1' && kind <= '8')
		*v = rec_cfird__u(r, (size_t)(kind - '0'));
	else if (kind == 's' || kind == 'S')
		*v = leb(r, 1);
	else
		*v = leb(r, 0);
	if (kind == 'b' || kind == 'E') {
		in->block = r->p;
		rec_cfird__skip(r, *v);
	}
	in->cfa |= kind >= 'A' && kind <= 'Z';
	in->cfa_reg |= kind == 'R';
}

int rec_cfi_insn(struct rec_cfird *r, uint8_t enc, struct rec_cfainsn *in)
{
	const char *ops;
	size_t n;

	if (r->bad)
		return -EINVAL;
	if (r->p >= r->end)
		return 0;
	*in = (struct rec_cfainsn){.op = *r->p++};
	if (in->op >> 6) {
		in->arg[0] = in->op & 0x3f;
		in->op &= 0xc0;
		if (in->op == REC_CFA_OFFSET)
			in->arg[1] = leb(r, 0);
		return r->bad ? -EINVAL : 1;
	}
	ops = in->op < 0x30 ? cfa_operands[in->op] : NULL;
	if (!ops)
		return -ENOTSUP;
	for (n = 0; ops[n]; n++)
		operand(r, ops[n], enc, in, &in->arg[n]);
	return r->bad ? -EINVAL : 1;
}
