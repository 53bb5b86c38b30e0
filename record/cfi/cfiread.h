/* SPDX-License-Identifier: MIT */
/*
 * cfiread.h - the reader of x86-64 call-frame information under cfirows.c
 * (record/ may not use libdw): bounded little-endian reads,
 * DW_EH_PE pointer encodings, CIE and FDE headers, and CFA instructions
 * decoded one at a time. Internal to record/.
 */
#ifndef REC_CFIREAD_H
#define REC_CFIREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

/* DW_EH_PE_* pointer encodings (LSB, "Exception Frames"): format | application. */
#define REC_PE_ABSPTR	0x00
#define REC_PE_ULEB128	0x01
#define REC_PE_UDATA2	0x02
#define REC_PE_UDATA4	0x03
#define REC_PE_UDATA8	0x04
#define REC_PE_SLEB128	0x09
#define REC_PE_SDATA2	0x0a
#define REC_PE_SDATA4	0x0b
#define REC_PE_SDATA8	0x0c
#define REC_PE_FORMAT	0x0f
#define REC_PE_PCREL	0x10
#define REC_PE_DATAREL	0x30
#define REC_PE_APPLY	0x70
#define REC_PE_INDIRECT 0x80

/* DW_CFA_* opcodes (DWARF 5, 6.4.2, with the GNU and MIPS ones). */
#define REC_CFA_NOP	       0x00
#define REC_CFA_SET_LOC	       0x01
#define REC_CFA_ADVANCE_LOC1   0x02
#define REC_CFA_ADVANCE_LOC2   0x03
#define REC_CFA_ADVANCE_LOC4   0x04
#define REC_CFA_OFFSET_EXT     0x05
#define REC_CFA_RESTORE_EXT    0x06
#define REC_CFA_UNDEFINED      0x07
#define REC_CFA_SAME_VALUE     0x08
#define REC_CFA_REGISTER       0x09
#define REC_CFA_REMEMBER_STATE 0x0a
#define REC_CFA_RESTORE_STATE  0x0b
#define REC_CFA_DEF_CFA	       0x0c
#define REC_CFA_DEF_CFA_REG    0x0d
#define REC_CFA_DEF_CFA_OFF    0x0e
#define REC_CFA_DEF_CFA_EXPR   0x0f
#define REC_CFA_EXPR	       0x10
#define REC_CFA_OFFSET_EXT_SF  0x11
#define REC_CFA_DEF_CFA_SF     0x12
#define REC_CFA_DEF_CFA_OFF_SF 0x13
#define REC_CFA_VAL_OFFSET     0x14
#define REC_CFA_VAL_OFFSET_SF  0x15
#define REC_CFA_VAL_EXPR       0x16
#define REC_CFA_ADVANCE_LOC8   0x1d /* DW_CFA_MIPS_advance_loc8 */
#define REC_CFA_GNU_ARGS_SIZE  0x2e
#define REC_CFA_GNU_NEG_OFFSET 0x2f
#define REC_CFA_ADVANCE_LOC    0x40 /* the delta in the low six bits */
#define REC_CFA_OFFSET	       0x80 /* the register in the low six bits */
#define REC_CFA_RESTORE	       0xc0 /* the register in the low six bits */

/* A cursor in one section: a read past @end sets @bad and yields 0. */
struct rec_cfird {
	const uint8_t *sec, *p, *end;
	uint64_t va; /* address of sec[0], for pc-relative pointers */
	int bad;
};

/* One CFI section's bytes, borrowed from libelf. */
struct rec_cfisec {
	const uint8_t *buf;
	size_t size;
	uint64_t va;
	int eh; /* .eh_frame (CIE id 0, relative CIE pointers) or .debug_frame */
};

struct rec_cie {
	uint64_t off; /* where it starts in its section; UINT64_MAX: none read yet */
	uint8_t fde_enc;
	bool aug_z;  /* FDEs carry a length-prefixed augmentation */
	bool signal; /* augmentation 'S': its FDEs describe signal frames */
	uint64_t code_align;
	int64_t data_align;
	struct rec_cfird init; /* the initial instructions */
};

struct rec_fde {
	uint64_t off; /* where it starts in its section */
	uint64_t lo, len;
	struct rec_cfird insns;
};

/* One decoded CFA instruction. */
struct rec_cfainsn {
	uint8_t op;	 /* REC_CFA_*; the three with operand bits have them cleared */
	bool cfa;	 /* it defines the CFA */
	bool cfa_reg;	 /* arg[0] is the CFA's new register */
	uint64_t arg[2]; /* operands in order; signed ones sign-extended; a block's length */
	const uint8_t *block;
};

/** rec_cfird__u() - the next @n-byte little-endian value at @r, or 0 past its end. */
static inline uint64_t rec_cfird__u(struct rec_cfird *r, size_t n)
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

/** rec_cfird__skip() - step @r over @n bytes, or mark it bad past its end. */
static inline void rec_cfird__skip(struct rec_cfird *r, uint64_t n)
{
	if (r->bad || (uint64_t)(r->end - r->p) < n) {
		r->bad = 1;
		return;
	}
	r->p += n;
}

/* An address: only absolute and pc-relative ones occur in x86-64 CFI. */
uint64_t rec_cfi_addr(struct rec_cfird *r, uint8_t enc);

/**
 * rec_cfi_elf() - libelf's view of @fd when it is an ELF64 x86-64 file.
 * @fd: borrowed; read with pread (ELF_C_READ: each section asked for is read
 * into a buffer of its exact size, so ASan checks the parser's bounds).
 * @return the handle, to be released with elf_end(); NULL with *@err set to
 * -ENOEXEC (not ELF) or -ENOTSUP (not ELF64 x86-64).
 */
Elf *rec_cfi_elf(int fd, int *err);

/**
 * rec_cfi_section() - the bytes of section @name of @e (decompressed when
 * compressed), borrowed from @e until elf_end().
 * @return 0; -ENOENT no such section with data; -EINVAL unreadable; -EFBIG
 * over REC_BIN_MAX_SECTION bytes (safeopen.h), compressed or not.
 */
int rec_cfi_section(Elf *e, const char *name, struct rec_cfisec *s);

/**
 * rec_cfi_next() - the next FDE of @s from offset *@off, CIEs skipped.
 * @c: the CIE of the last FDE (off UINT64_MAX at first), parsed again only
 * when the FDE names another one.
 * @return 1 an FDE in @f, *@off past it; 0 the end of the section; -EINVAL.
 */
int rec_cfi_next(const struct rec_cfisec *s, uint64_t *off, struct rec_cie *c, struct rec_fde *f);

/** rec_cfi_fde_at() - the FDE at @off, as rec_cfi_next(). @return 0 or -EINVAL. */
int rec_cfi_fde_at(const struct rec_cfisec *s, uint64_t off, struct rec_cie *c, struct rec_fde *f);

/**
 * rec_cfi_insn() - decode the instruction at @r, @enc the FDE pointer encoding.
 * @return 1 one in @in; 0 the end of the program; -EINVAL truncated;
 * -ENOTSUP an opcode we do not know (its operands cannot be skipped).
 */
int rec_cfi_insn(struct rec_cfird *r, uint8_t enc, struct rec_cfainsn *in);

#endif /* REC_CFIREAD_H */
