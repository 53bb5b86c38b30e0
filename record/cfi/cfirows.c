// SPDX-License-Identifier: MIT
/*
 * cfirows.c - the CFI row at one address of an x86-64 ELF file's .eh_frame,
 * evaluated as libdw's dwarf_cfi_addrframe() does and reduced as
 * report/unwind/uwrows.c reduces it, so that sa-record can predict sa-report's
 * unwind. The FDE comes from .eh_frame_hdr's table, or from an index built
 * once; the reading is cfiread.c's.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include "cfiread.h"
#include "cfirows.h"
#include "grow.h"
#include "lowerbound.h"

#define RULE_HARD   4	  /* DW_CFA_register or an expression: no enum sac_cfi_rule */
#define STACK_MAX   16	  /* remember_state depth; gcc nests one or two */
#define MEMO_MIN    6	  /* rows remembered, by address: 2^6 at least, */
#define MEMO_MAX    12	  /* 2^12 at most, one per 8 FDEs between (memo_bits()) */
#define MAX_LOADS   8	  /* PT_LOAD segments kept for rec_cfirows__at_offset() */
#define MAX_INSNS   65536 /* CFA instructions per evaluation; real FDEs have tens */
#define RBX_INITIAL SAC_CFI_UNSET

/* libdw's cfa_undefined, cfa_offset, expr or invalid; and the PLT's expression
 * (rec_cfirows__each()) */
enum { CFA_UNDEF, CFA_OFF, CFA_BAD, CFA_PLT };

struct rule {
	uint8_t how; /* enum rec_rule or RULE_HARD */
	int64_t off;
};

/* The rules of one row that matter: the CFA, rbx, rbp, rsp and the return address. */
struct state {
	uint8_t cfa;
	uint64_t cfa_reg;
	int64_t cfa_off;
	struct rule r[4];
};

struct eval {
	struct state s;
	rec_cfirow_fn emit; /* rec_cfirows__each(): every row, e->pc unused */
	void *arg;
	int err;
	struct state stack[STACK_MAX];
	size_t depth;
	const struct state *cie; /* the CIE's row; NULL while running the CIE itself */
	const struct rec_cie *c;
	uint64_t loc, pc;
};

struct fdeix {
	uint64_t lo, off; /* an FDE's first address and its offset in .eh_frame */
};

struct slot {
	uint64_t vaddr;
	int ret; /* REC_CFIROW_* + 1; 0: empty (calloc()) */
	struct sac_cfi_row row;
};

struct load {
	uint64_t off, vaddr, size; /* a PT_LOAD's file bytes and where they go */
};

struct rec_cfirows {
	Elf *elf; /* owns the section bytes */
	struct load loads[MAX_LOADS];
	size_t nloads;
	struct rec_cfisec eh;
	const uint8_t *table; /* .eh_frame_hdr's (start, FDE) pairs, or NULL: ix */
	uint64_t table_va;    /* the address they are relative to */
	struct fdeix *ix;
	size_t n;	    /* entries of table or ix */
	struct rec_cie cie; /* the last one parsed */
	struct slot *memo;  /* direct-mapped by address: 2^memo_bits rows */
	unsigned memo_bits;
};

/*
 * x86-64 ABI initial rules (elfutils backends/x86_64_cfi.c); the CFA is unset.
 * That program marks DWARF register 0 same-value where its comment says
 * %rbx: rbx (3) is left unspecified, which libdw reads as undefined.
 */
static const struct state abi_state = {
	.cfa = CFA_UNDEF,
	.r = {{RBX_INITIAL, 0}, {SAC_CFI_SAME, 0}, {SAC_CFI_VAL, 0}, {SAC_CFI_SAME, 0}},
};

static int column(uint64_t reg)
{
	switch (reg) {
	case SAC_DWARF_RBX:
		return 0;
	case SAC_DWARF_RBP:
		return 1;
	case SAC_DWARF_RSP:
		return 2;
	case SAC_DWARF_RA:
		return 3;
	}
	return -1;
}

/* libdw keeps a register's offset in a 61-bit field (struct dwarf_frame_register). */
static int64_t sext61(uint64_t v)
{
	return (int64_t)(v << 3) >> 3;
}

static void set_rule(struct state *s, uint64_t reg, uint8_t how, uint64_t off)
{
	int k = column(reg);

	if (k >= 0) /* the callers pass 0 with UNSET, SAME and RULE_HARD */
		s->r[k] = (struct rule){how, sext61(off)};
}

/* def_cfa_register and def_cfa_offset only modify an offset rule, as libdw's require_cfa_offset. */
static void set_cfa(struct state *s, int full, uint64_t reg, uint64_t off)
{
	if (full)
		s->cfa = CFA_OFF;
	else if (s->cfa != CFA_OFF)
		s->cfa = CFA_BAD;
	s->cfa_reg = reg;
	s->cfa_off = (int64_t)off;
}

/*
 * The expression of gcc's and binutils' PLT entries: CFA = rsp + 8, plus 8
 * once the entry's push has run ((rip & 15) >= N, N its DW_OP_litN).
 */
static bool plt_expr(const struct rec_cfainsn *in)
{
	static const uint8_t pat[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a,
				      0x30, 0x2a, 0x33, 0x24, 0x22};
	size_t i;

	if (in->arg[0] != sizeof(pat) || !in->block)
		return false;
	for (i = 0; i < sizeof(pat); i++)
		if (i != 6 && in->block[i] != pat[i])
			return false;
	return in->block[6] >= 0x30 && in->block[6] <= 0x3f;
}

static bool apply_state(struct eval *e, uint8_t op)
{
	if (op == REC_CFA_REMEMBER_STATE) {
		if (e->depth == STACK_MAX)
			return false;
		e->stack[e->depth++] = e->s;
	} else {
		if (!e->depth)
			return false; /* libdw: invalid CFI */
		e->s = e->stack[--e->depth];
	}
	return true;
}

/* Apply one instruction that does not move the location. @return false: HARD. */
static bool apply(struct eval *e, const struct rec_cfainsn *in)
{
	uint64_t da = (uint64_t)e->c->data_align, a0 = in->arg[0], a1 = in->arg[1];
	struct state *s = &e->s;
	int k;

	switch (in->op) {
	case REC_CFA_DEF_CFA:
	case REC_CFA_DEF_CFA_SF:
		set_cfa(s, 1, a0, in->op == REC_CFA_DEF_CFA ? a1 : a1 * da);
		break;
	case REC_CFA_DEF_CFA_REG:
		set_cfa(s, 0, a0, (uint64_t)s->cfa_off);
		break;
	case REC_CFA_DEF_CFA_OFF:
	case REC_CFA_DEF_CFA_OFF_SF:
		set_cfa(s, 0, s->cfa_reg, in->op == REC_CFA_DEF_CFA_OFF ? a0 : a0 * da);
		break;
	case REC_CFA_DEF_CFA_EXPR:
		s->cfa = plt_expr(in) ? CFA_PLT : CFA_BAD;
		s->cfa_off = s->cfa == CFA_PLT ? in->block[6] - 0x30 : 0;
		break;
	case REC_CFA_OFFSET:
	case REC_CFA_OFFSET_EXT:
	case REC_CFA_OFFSET_EXT_SF:
		set_rule(s, a0, SAC_CFI_AT, a1 * da);
		break;
	case REC_CFA_GNU_NEG_OFFSET:
		set_rule(s, a0, SAC_CFI_AT, -a1 * da);
		break;
	case REC_CFA_VAL_OFFSET:
	case REC_CFA_VAL_OFFSET_SF:
		set_rule(s, a0, SAC_CFI_VAL, a1 * da);
		break;
	case REC_CFA_UNDEFINED:
	case REC_CFA_SAME_VALUE:
		set_rule(s, a0, in->op == REC_CFA_UNDEFINED ? SAC_CFI_UNSET : SAC_CFI_SAME, 0);
		break;
	case REC_CFA_REGISTER:
	case REC_CFA_EXPR:
	case REC_CFA_VAL_EXPR:
		set_rule(s, a0, RULE_HARD, 0);
		break;
	case REC_CFA_RESTORE:
	case REC_CFA_RESTORE_EXT:
		if (!e->cie)
			return false; /* libdw refuses it in a CIE */
		k = column(a0);
		if (k >= 0) /* the CIE's row has the ABI's rules for all four */
			s->r[k] = e->cie->r[k];
		break;
	case REC_CFA_REMEMBER_STATE:
	case REC_CFA_RESTORE_STATE:
		return apply_state(e, in->op);
	case REC_CFA_NOP:
	case REC_CFA_GNU_ARGS_SIZE:
		break;
	default: /* GNU_window_save: libdw gives SPARC's rules */
		return false;
	}
	return true;
}

static int to_row(const struct state *s, bool signal, struct sac_cfi_row *row);

/* Hand the row of [e->loc, @hi) to e->emit. */
static void emit_row(struct eval *e, uint64_t hi)
{
	struct sac_cfi_row row = {0};
	int ret;

	if (hi <= e->loc || e->err)
		return;
	ret = to_row(&e->s, e->c->signal, &row);
	e->err = e->emit(e->arg, e->loc, hi, &row, ret,
			 e->s.cfa == CFA_PLT ? (unsigned)e->s.cfa_off : 0);
}

/* Move the location to @loc. @return false: the row of e->pc is known. */
static bool advance(struct eval *e, uint64_t loc)
{
	if (e->emit)
		emit_row(e, loc);
	e->loc = loc;
	return e->emit || e->pc >= e->loc;
}

/*
 * Run the program @r until the location passes e->pc (libdw: the row before
 * that advance applies) or the program ends. @return false: HARD.
 */
static bool run(struct eval *e, struct rec_cfird r)
{
	struct rec_cfainsn in;
	uint32_t left = MAX_INSNS;
	int ret;

	while ((ret = rec_cfi_insn(&r, e->c->fde_enc, &in)) > 0) {
		if (!left--)
			return false; /* a crafted program: every lookup would pay for it */
		switch (in.op) {
		case REC_CFA_SET_LOC:
		case REC_CFA_ADVANCE_LOC:
		case REC_CFA_ADVANCE_LOC1:
		case REC_CFA_ADVANCE_LOC2:
		case REC_CFA_ADVANCE_LOC4:
		case REC_CFA_ADVANCE_LOC8:
			if (!e->cie)
				return false; /* a CIE describes no addresses */
			if (!advance(e, in.op == REC_CFA_SET_LOC
						? in.arg[0]
						: e->loc + in.arg[0] * e->c->code_align))
				return true;
			break;
		default:
			if (!apply(e, &in))
				return false;
		}
	}
	return ret == 0;
}

static int to_row(const struct state *s, bool signal, struct sac_cfi_row *row)
{
	size_t k;

	if (s->cfa == CFA_BAD || s->cfa == CFA_PLT ||
	    (s->cfa == CFA_OFF && s->cfa_reg != SAC_DWARF_RBP && s->cfa_reg != SAC_DWARF_RSP &&
	     s->cfa_reg != SAC_DWARF_RBX))
		return REC_CFIROW_HARD;
	for (k = 0; k < 4; k++)
		if (s->r[k].how == RULE_HARD)
			return REC_CFIROW_HARD;
	row->how = SAC_CFI_RULES;
	row->cfa_reg = s->cfa == CFA_OFF ? (uint8_t)s->cfa_reg : SAC_CFI_NO_CFA;
	row->cfa_off = s->cfa == CFA_OFF ? s->cfa_off : 0;
	row->rbx = s->r[0].how;
	row->rbx_off = s->r[0].off;
	row->rbp = s->r[1].how;
	row->rbp_off = s->r[1].off;
	row->rsp = s->r[2].how;
	row->rsp_off = s->r[2].off;
	row->ra = s->r[3].how;
	row->ra_off = s->r[3].off;
	row->signal = signal;
	return REC_CFIROW_OK;
}

/* The row of @pc in the FDE @f of CIE @c. */
static int evaluate(const struct rec_cie *c, const struct rec_fde *f, uint64_t pc,
		    struct sac_cfi_row *row)
{
	struct eval e = {.s = abi_state, .c = c};
	struct state cie_row;

	if (!run(&e, c->init))
		return REC_CFIROW_HARD;
	cie_row = e.s;
	e.depth = 0; /* libdw drops what the CIE remembered */
	e.cie = &cie_row;
	e.loc = f->lo;
	e.pc = pc;
	if (!run(&e, f->insns))
		return REC_CFIROW_HARD;
	if (e.s.cfa == CFA_PLT) {
		/* the expression at this one address: rsp + 8, or + 16 once pushed */
		struct state s = e.s;
		int ret;

		s.cfa = CFA_OFF;
		s.cfa_reg = SAC_DWARF_RSP;
		s.cfa_off = (pc & 15) >= (uint64_t)e.s.cfa_off ? 16 : 8;
		ret = to_row(&s, c->signal, row);
		return ret == REC_CFIROW_OK ? REC_CFIROW_PLT : ret;
	}
	return to_row(&e.s, c->signal, row);
}

int rec_cfirows__each(struct rec_cfirows *t, rec_cfirow_fn fn, void *arg)
{
	struct rec_cie c = {.off = UINT64_MAX};
	struct eval e = {.emit = fn, .arg = arg};
	struct state cie_row;
	uint64_t off = 0;
	struct rec_fde f;
	int ret;

	while ((ret = rec_cfi_next(&t->eh, &off, &c, &f)) > 0) {
		if (!f.len)
			continue;
		e = (struct eval){
			.s = abi_state, .c = &c, .emit = fn, .arg = arg, .pc = UINT64_MAX};
		if (!run(&e, c.init)) {
			e.loc = f.lo;
			e.err = fn(arg, f.lo, f.lo + f.len, &(struct sac_cfi_row){0},
				   REC_CFIROW_HARD, 0);
		} else {
			cie_row = e.s;
			e.depth = 0;
			e.cie = &cie_row;
			e.loc = f.lo;
			if (run(&e, f.insns))
				emit_row(&e, f.lo + f.len);
			else if (!e.err)
				e.err = fn(arg, e.loc, f.lo + f.len, &(struct sac_cfi_row){0},
					   REC_CFIROW_HARD, 0);
		}
		if (e.err)
			return e.err;
	}
	return ret;
}

/* Word @k (0 the start, 1 the FDE) of entry @i of the .eh_frame_hdr table, as an address. */
static uint64_t table_word(const struct rec_cfirows *t, size_t i, int k)
{
	const uint8_t *p = t->table + 8 * i + 4 * k;
	uint32_t v = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;

	return t->table_va + (uint64_t)(int64_t)(int32_t)v;
}

static uint64_t start_of(const struct rec_cfirows *t, size_t i)
{
	return t->table ? table_word(t, i, 0) : t->ix[i].lo;
}

struct fde_key {
	const struct rec_cfirows *t;
	uint64_t vaddr;
};

static bool starts_at_or_below(const void *ctx, size_t i)
{
	const struct fde_key *k = ctx;

	return start_of(k->t, i) <= k->vaddr;
}

/* The .eh_frame offset of the last FDE starting at or below @vaddr; false: none. */
static bool find_fde(const struct rec_cfirows *t, uint64_t vaddr, uint64_t *off)
{
	size_t lo = sac_lower_bound(t->n, starts_at_or_below, &(struct fde_key){t, vaddr});

	if (!lo)
		return false;
	*off = t->table ? table_word(t, lo - 1, 1) - t->eh.va : t->ix[lo - 1].off;
	return true;
}

static int lookup(struct rec_cfirows *t, uint64_t vaddr, struct sac_cfi_row *row)
{
	struct rec_fde f;
	uint64_t off;

	if (!find_fde(t, vaddr, &off))
		return REC_CFIROW_NONE;
	if (rec_cfi_fde_at(&t->eh, off, &t->cie, &f))
		return REC_CFIROW_HARD;
	if (vaddr < f.lo || vaddr - f.lo >= f.len)
		return REC_CFIROW_NONE;
	return evaluate(&t->cie, &f, vaddr, row);
}

int rec_cfirows__at(struct rec_cfirows *t, uint64_t vaddr, struct sac_cfi_row *row)
{
	struct slot *sl = &t->memo[(vaddr * 0x9e3779b97f4a7c15ULL) >> (64 - t->memo_bits)];

	if (!sl->ret || sl->vaddr != vaddr) {
		sl->vaddr = vaddr;
		memset(&sl->row, 0, sizeof(sl->row));
		sl->ret = lookup(t, vaddr, &sl->row) + 1; /* writes the row only when OK */
	}
	*row = sl->row;
	return sl->ret - 1;
}

int rec_cfirows__at_offset(struct rec_cfirows *t, uint64_t off, struct sac_cfi_row *row)
{
	for (size_t i = 0; i < t->nloads; i++)
		if (off >= t->loads[i].off && off - t->loads[i].off < t->loads[i].size)
			return rec_cfirows__at(t, off - t->loads[i].off + t->loads[i].vaddr, row);
	memset(row, 0, sizeof(*row));
	return REC_CFIROW_NONE;
}

/* The file's PT_LOAD segments (the first MAX_LOADS), for rec_cfirows__at_offset(). */
static void read_loads(struct rec_cfirows *t)
{
	size_t n = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(t->elf, &n))
		return;
	for (size_t i = 0; i < n && t->nloads < MAX_LOADS; i++)
		if (gelf_getphdr(t->elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			t->loads[t->nloads++] = (struct load){ph.p_offset, ph.p_vaddr, ph.p_filesz};
}

/*
 * Use .eh_frame_hdr's search table when it is the usual one: version 1,
 * pointing at this .eh_frame, pairs that fit the section and are datarel
 * sdata4, which is what GNU ld, gold and lld write.
 */
static void use_hdr(struct rec_cfirows *t, const struct rec_cfisec *h)
{
	struct rec_cfird r = {h->buf, h->buf, h->buf + h->size, h->va, 0};
	uint8_t ver, ptr_enc, cnt_enc, tab_enc;
	uint64_t eh, n;

	ver = (uint8_t)rec_cfird__u(&r, 1);
	ptr_enc = (uint8_t)rec_cfird__u(&r, 1);
	cnt_enc = (uint8_t)rec_cfird__u(&r, 1);
	tab_enc = (uint8_t)rec_cfird__u(&r, 1);
	eh = rec_cfi_addr(&r, ptr_enc);
	n = rec_cfi_addr(&r, cnt_enc);
	if (r.bad || ver != 1 || tab_enc != (REC_PE_DATAREL | REC_PE_SDATA4) || eh != t->eh.va ||
	    !n || n > (uint64_t)(r.end - r.p) / 8)
		return;
	t->table = r.p;
	t->table_va = h->va;
	t->n = n;
}

static int by_lo(const void *a, const void *b)
{
	const struct fdeix *x = a, *y = b;

	return SAC_CMP(x->lo, y->lo) ?: SAC_CMP(x->off, y->off);
}

/*
 * The memo's size for @n FDEs. A stack walk's addresses are mostly return
 * addresses, and they repeat from capture to capture; a lookup that is not
 * remembered searches the table and runs the CIE's and FDE's programs, some
 * microseconds in a large function. 64 rows for every file kept a quarter
 * of the lookups of a compile loop's walks (cc1, 45k FDEs) in that path;
 * one row per 8 FDEs, at most 4096 (256 KiB, against the 8 bytes an FDE
 * takes in .eh_frame_hdr's table alone), kept a tenth, most of them
 * addresses seen for the first time.
 */
static unsigned memo_bits(size_t n)
{
	unsigned b = MEMO_MIN;

	while (b < MEMO_MAX && (size_t)1 << b < n / 8)
		b++;
	return b;
}

/* No usable .eh_frame_hdr: every FDE with a range, sorted by its first address. */
static int build_index(struct rec_cfirows *t)
{
	struct rec_cie c = {.off = UINT64_MAX};
	uint64_t off = 0;
	struct rec_fde f;
	size_t cap = 0;
	int ret;

	while ((ret = rec_cfi_next(&t->eh, &off, &c, &f)) > 0) {
		if (!f.len)
			continue;
		if (SAC_GROW(t->ix, cap, t->n + 1, 64))
			return -ENOMEM;
		t->ix[t->n++] = (struct fdeix){f.lo, f.off};
	}
	if (ret)
		return ret;
	if (t->n)
		qsort(t->ix, t->n, sizeof(*t->ix), by_lo);
	return 0;
}

int rec_cfirows__open(int fd, struct rec_cfirows **out)
{
	struct rec_cfirows *t = NULL;
	struct rec_cfisec hdr;
	int err;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->cie.off = UINT64_MAX;
	t->elf = rec_cfi_elf(fd, &err);
	if (!t->elf)
		goto cleanup;
	err = rec_cfi_section(t->elf, ".eh_frame", &t->eh);
	if (err)
		goto cleanup;
	read_loads(t);
	if (!rec_cfi_section(t->elf, ".eh_frame_hdr", &hdr))
		use_hdr(t, &hdr);
	if (!t->table)
		err = build_index(t);
	if (err)
		goto cleanup;
	t->memo_bits = memo_bits(t->n);
	t->memo = calloc((size_t)1 << t->memo_bits, sizeof(*t->memo));
	if (!t->memo) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* All that is needed is read: the fd is the caller's again. */
	elf_cntl(t->elf, ELF_C_FDDONE);
	*out = t;
	return 0;
cleanup:
	rec_cfirows__free(t);
	return err;
}

void rec_cfirows__free(struct rec_cfirows *t)
{
	if (!t)
		return;
	elf_end(t->elf);
	SAC_FREE_ALL(t->memo, t->ix, t);
}

size_t rec_cfirows__loads(const struct rec_cfirows *t, uint64_t (*seg)[3], size_t max)
{
	size_t i;

	for (i = 0; i < t->nloads && i < max; i++) {
		seg[i][0] = t->loads[i].off;
		seg[i][1] = t->loads[i].vaddr;
		seg[i][2] = t->loads[i].size;
	}
	return i;
}
