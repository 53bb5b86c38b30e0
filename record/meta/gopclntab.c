// SPDX-License-Identifier: MIT
/*
 * gopclntab.c - Go function names from a binary's .gopclntab, the table
 * Go's runtime names its own frames by: a stripped Go binary
 * (-ldflags=-s) has no .symtab and no .dynsym, but always this. Layouts
 * of Go 1.2, 1.16, 1.18 and 1.20 (the magic says which), 64-bit and
 * little-endian only; every offset is checked against the section.
 * Also an address's file:line and inline frames, from the same table's
 * line tables and the inline trees in go:func.* (Go 1.16 on; inline
 * frames from 1.18 on), as the runtime's own traceback reads them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gopclntab.h"
#include "grow.h"
#include "safeopen.h"

#define MAGIC_12  0xfffffffbu
#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u

/* What one layout's header says, in section offsets. */
struct pcln {
	const uint8_t *p;
	uint64_t size;
	uint32_t magic;
	uint64_t nfunc;
	uint64_t text;	   /* the entries' base (1.18 on), else 0 */
	uint64_t names;	   /* where name offsets count from */
	uint64_t functab;  /* the (entry, _func offset) pairs */
	uint64_t funcdata; /* where _func offsets count from */
	unsigned fsz;	   /* bytes of each pair's fields: 4 from 1.18 on, else 8 */
	uint64_t cutab;	   /* per compile unit, its files' offsets in filetab (1.16 on) */
	uint64_t filetab;  /* file names */
	uint64_t pctab;	   /* the pc-value tables */
	unsigned quantum;  /* bytes of an instruction step (1 on x86-64) */
};

static bool get(const struct pcln *t, uint64_t off, unsigned n, uint64_t *v)
{
	uint64_t x = 0;

	if (off > t->size || t->size - off < n)
		return false;
	for (unsigned i = 0; i < n; i++)
		x |= (uint64_t)t->p[off + i] << (8 * i);
	*v = x;
	return true;
}

/* The header's word @k (after the 8 bytes of magic and sizes). */
static bool word(const struct pcln *t, unsigned k, uint64_t *v)
{
	return get(t, 8 + 8ull * k, 8, v);
}

static int parse_header(struct pcln *t, uint64_t text_addr)
{
	uint64_t m, nameoff, pcln;

	if (!get(t, 0, 4, &m) || t->size < 16 || t->p[4] || t->p[5] || t->p[7] != 8)
		return -ENOENT;
	t->magic = (uint32_t)m;
	t->quantum = t->p[6] ? t->p[6] : 1;
	if (!word(t, 0, &t->nfunc))
		return -ENOENT;
	switch (t->magic) {
	case MAGIC_12:
		t->fsz = 8;
		t->functab = 16;
		t->funcdata = 0;
		t->names = 0;
		return 0;
	case MAGIC_116:
		if (!word(t, 2, &nameoff) || !word(t, 6, &pcln) || !word(t, 3, &t->cutab) ||
		    !word(t, 4, &t->filetab) || !word(t, 5, &t->pctab))
			return -ENOENT;
		t->fsz = 8;
		break;
	case MAGIC_118:
	case MAGIC_120:
		if (!word(t, 2, &t->text) || !word(t, 3, &nameoff) || !word(t, 7, &pcln) ||
		    !word(t, 4, &t->cutab) || !word(t, 5, &t->filetab) || !word(t, 6, &t->pctab))
			return -ENOENT;
		if (!t->text) /* relocated at load (PIE): runtime.text opens .text */
			t->text = text_addr;
		t->fsz = 4;
		break;
	default:
		return -ENOENT;
	}
	t->names = nameoff;
	t->functab = pcln;
	t->funcdata = pcln;
	return 0;
}

/* Function @i's entry address and name offset in the section. */
static bool func_at(const struct pcln *t, uint64_t i, uint64_t *entry, uint64_t *name)
{
	uint64_t foff, nameoff, fe;

	if (!get(t, t->functab + 2 * i * t->fsz, t->fsz, &fe) ||
	    !get(t, t->functab + (2 * i + 1) * t->fsz, t->fsz, &foff))
		return false;
	/* a _func starts with its entry (a word, or 4 bytes from 1.18 on), then nameoff */
	if (!get(t, t->funcdata + foff + t->fsz, 4, &nameoff) || nameoff > INT32_MAX)
		return false;
	*entry = t->text + fe;
	*name = t->names + nameoff; /* checked by add_func(): a bad name skips one function */
	return true;
}

/* The end of the last function: the entry after the pairs. */
static bool end_pc(const struct pcln *t, uint64_t *end)
{
	uint64_t e;

	if (!get(t, t->functab + 2 * t->nfunc * t->fsz, t->fsz, &e))
		return false;
	*end = t->text + e;
	return true;
}

static int add_name(struct rec_elftab *t, size_t *cap, const char *s, size_t len, uint32_t *at)
{
	int err = sac_grow_max((void **)&t->names, cap, t->names_len + len + 1, 1, 65536,
			       REC_BIN_MAX_SECTION);

	if (err)
		return err;
	memcpy(t->names + t->names_len, s, len);
	t->names[t->names_len + len] = '\0';
	*at = (uint32_t)t->names_len;
	t->names_len += len + 1;
	return 0;
}

/* One function: entry @va, size @size, name at section offset @name. */
static int add_func(const struct pcln *p, struct rec_elftab *t, size_t *cap, uint64_t va,
		    uint64_t size, uint64_t name, const rec_gopcln_off_fn to_off, const void *arg)
{
	struct rec_elfsym *sym = &t->syms[t->nsyms];
	const char *s;
	size_t len;
	int err;

	if (name >= p->size)
		return 0;
	s = (const char *)p->p + name;
	len = strnlen(s, p->size - name);
	if (!len || len == p->size - name || to_off(arg, va, &sym->off))
		return 0; /* unterminated, or outside every PT_LOAD */
	err = add_name(t, cap, s, len, &sym->name);
	if (err)
		return err;
	sym->size = size;
	sym->rank = 0;
	t->nsyms++;
	return 0;
}

int rec_gopclntab__collect(const void *data, uint64_t size, uint64_t text_addr,
			   rec_gopcln_off_fn to_off, const void *arg, struct rec_elftab *t)
{
	struct pcln p = {.p = data, .size = size};
	uint64_t i, va, name, next, nname = 0, end;
	size_t cap = 0;
	int err;

	err = parse_header(&p, text_addr);
	if (err)
		return err;
	if (!p.nfunc || p.nfunc > REC_BIN_MAX_SYMS || !end_pc(&p, &end))
		return p.nfunc > REC_BIN_MAX_SYMS ? -EFBIG : -ENOENT;
	t->syms = calloc(p.nfunc, sizeof(*t->syms));
	if (!t->syms)
		return -ENOMEM;
	if (!func_at(&p, 0, &va, &name))
		return -ENOENT;
	for (i = 0; i < p.nfunc; i++) {
		if (i + 1 < p.nfunc) {
			if (!func_at(&p, i + 1, &next, &nname))
				return -ENOENT;
		} else {
			next = end;
		}
		if (next > va) {
			err = add_func(&p, t, &cap, va, next - va, name, to_off, arg);
			if (err)
				return err;
		}
		va = next;
		name = nname;
	}
	return t->nsyms ? 0 : -ENOENT;
}

/* ---- lines and inline frames -------------------------------------------- */

struct rec_gopcln {
	struct pcln t;	 /* over copy */
	uint8_t *copy;	 /* the .gopclntab */
	uint8_t *gofunc; /* go:func.* to the end of .rodata, NULL: no inline trees */
	uint64_t gofunc_size;
	unsigned fnsize;		      /* bytes of a _func before its pcdata */
	unsigned inl_size, inl_name, inl_ppc; /* an inlinedCall: size, nameOff, parentPc */
};

/* moduledata's word that holds gofunc: 1.20 added covctrs and ecovctrs before it */
#define MODDATA_GOFUNC_118 38
#define MODDATA_GOFUNC_120 40

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/*
 * go:func.*, where a function's funcdata offsets count from: moduledata
 * (in .noptrdata) begins with the address of the pcHeader, then
 * funcnametab's; its word @k is gofunc. 0 when not found (a PIE's words
 * are relocated at load and read 0 in the file).
 */
static uint64_t find_gofunc(const struct pcln *t, const struct rec_gopcln_src *s, unsigned k)
{
	const uint8_t *nd = s->noptrdata;

	if (!nd || s->noptrdata_size < 8ull * (k + 1))
		return 0;
	for (uint64_t i = 0; i + 8ull * (k + 1) <= s->noptrdata_size; i += 8) {
		uint64_t g;

		if (le64(nd + i) != s->pcln_va || le64(nd + i + 8) != s->pcln_va + t->names)
			continue;
		g = le64(nd + i + 8ull * k);
		/* rodata, the word before it, opens the section; gofunc lies in it */
		if (le64(nd + i + 8ull * (k - 1)) <= g && g >= s->rodata_va &&
		    g - s->rodata_va < s->rodata_size)
			return g;
	}
	return 0;
}

static int copy_gofunc(struct rec_gopcln *g, const struct rec_gopcln_src *s)
{
	unsigned k = g->t.magic == MAGIC_118 ? MODDATA_GOFUNC_118 : MODDATA_GOFUNC_120;
	uint64_t at;

	if (g->t.magic != MAGIC_118 && g->t.magic != MAGIC_120)
		return 0; /* 1.16's funcdata are pointers: lines without inline frames */
	at = find_gofunc(&g->t, s, k);
	if (!at || !s->rodata)
		return 0;
	g->gofunc_size = s->rodata_size - (at - s->rodata_va);
	g->gofunc = malloc(g->gofunc_size);
	if (!g->gofunc)
		return -ENOMEM;
	memcpy(g->gofunc, (const uint8_t *)s->rodata + (at - s->rodata_va), g->gofunc_size);
	if (g->t.magic == MAGIC_118) {
		g->inl_size = 20; /* parent, funcID, _, file, line, func_, parentPc */
		g->inl_name = 12;
		g->inl_ppc = 16;
	} else {
		g->inl_size = 16; /* funcID, _[3], nameOff, parentPc, startLine */
		g->inl_name = 4;
		g->inl_ppc = 8;
	}
	return 0;
}

struct rec_gopcln *rec_gopcln__new(const struct rec_gopcln_src *s)
{
	struct rec_gopcln *g;
	int err = -ENOENT;

	if (!s->pcln || s->pcln_size < 16 || s->pcln_size > REC_BIN_MAX_SECTION) {
		errno = ENOENT;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g || !(g->copy = malloc(s->pcln_size))) {
		free(g);
		errno = ENOMEM;
		return NULL;
	}
	memcpy(g->copy, s->pcln, s->pcln_size);
	g->t.p = g->copy;
	g->t.size = s->pcln_size;
	if (parse_header(&g->t, s->text_addr) || g->t.magic == MAGIC_12 || !g->t.nfunc ||
	    g->t.nfunc > REC_BIN_MAX_SYMS)
		goto fail;
	/* a _func's fields before its pcdata: 1.16 a word of entry, 1.20 startLine */
	g->fnsize = g->t.magic == MAGIC_118 ? 40 : 44;
	err = copy_gofunc(g, s);
	if (!err)
		return g;
fail:
	rec_gopcln__free(g);
	errno = -err;
	return NULL;
}

uint64_t rec_gopcln__bytes(const struct rec_gopcln *g)
{
	return g ? sizeof(*g) + g->t.size + g->gofunc_size : 0;
}

void rec_gopcln__free(struct rec_gopcln *g)
{
	if (!g)
		return;
	SAC_FREE_ALL(g->copy, g->gofunc, g);
}

/* A varint of the tables at *@at, which it passes; false past the section. */
static bool uvarint(const struct pcln *t, uint64_t *at, uint32_t *v)
{
	uint32_t x = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (*at >= t->size)
			return false;
		x |= (uint32_t)(t->p[*at] & 0x7f) << shift;
		if (!(t->p[(*at)++] & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/*
 * The value of pc-value table @off (in pctab) of the function at @entry
 * at @pc, and the addresses [*@lo, *@hi) that have it; the runtime's
 * pcvalue(). Pairs of a zigzag value delta and a pc delta, from value -1.
 */
static bool pcvalue(const struct pcln *t, uint32_t off, uint64_t entry, uint64_t pc, int32_t *val,
		    uint64_t *lo, uint64_t *hi)
{
	uint64_t at = t->pctab + off, cur = entry, prev = entry;
	int32_t v = -1;

	if (!off)
		return false;
	for (unsigned steps = 0; steps < (1u << 20); steps++) {
		uint32_t dv, dpc;

		if (!uvarint(t, &at, &dv) || (!dv && cur != entry) || !uvarint(t, &at, &dpc))
			return false;
		v += (int32_t)(-(dv & 1) ^ (dv >> 1));
		cur += (uint64_t)dpc * t->quantum;
		if (pc < cur) {
			*val = v;
			*lo = prev > *lo ? prev : *lo;
			*hi = cur < *hi ? cur : *hi;
			return pc >= prev;
		}
		prev = cur;
	}
	return false;
}

/* The NUL-terminated string at section offset @off, or NULL. */
static const char *cstr(const struct pcln *t, uint64_t off)
{
	if (off >= t->size || !memchr(t->p + off, '\0', t->size - off))
		return NULL;
	return (const char *)t->p + off;
}

/* What frames() needs of one _func. */
struct gofn {
	uint64_t entry, end, off; /* off: the _func's, in the section */
	uint32_t pcfile, pcln, inl, cu, name;
	uint64_t tree; /* its inline tree in gofunc, ~0: none */
};

static bool get32(const struct pcln *t, uint64_t off, uint32_t *v)
{
	uint64_t x;

	if (!get(t, off, 4, &x))
		return false;
	*v = (uint32_t)x;
	return true;
}

/* The functab's entry holding @va (a binary search): its bounds and _func. */
static bool find_fn(const struct pcln *t, uint64_t va, struct gofn *f)
{
	uint64_t lo = 0, hi = t->nfunc, e;

	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (!get(t, t->functab + 2 * mid * t->fsz, t->fsz, &e))
			return false;
		if (t->text + e <= va)
			lo = mid;
		else
			hi = mid;
	}
	if (!get(t, t->functab + 2 * lo * t->fsz, t->fsz, &e) ||
	    !get(t, t->functab + (2 * lo + 1) * t->fsz, t->fsz, &f->off) ||
	    !get(t, t->functab + 2 * (lo + 1) * t->fsz, t->fsz, &f->end))
		return false;
	f->entry = t->text + e;
	f->end += t->text;
	f->off += t->funcdata;
	return va >= f->entry && va < f->end;
}

/* @f's tables: name, pcfile, pcln, its unit, PCDATA_InlTreeIndex, FUNCDATA_InlTree. */
static bool read_fn(const struct rec_gopcln *g, struct gofn *f)
{
	const struct pcln *t = &g->t;
	uint64_t d = t->fsz == 8 ? 4 : 0, nf; /* 1.16's entry is a word */
	uint32_t np, tree;

	if (!get32(t, f->off + t->fsz, &f->name) || !get32(t, f->off + 20 + d, &f->pcfile) ||
	    !get32(t, f->off + 24 + d, &f->pcln) || !get32(t, f->off + 28 + d, &np) ||
	    !get32(t, f->off + 32 + d, &f->cu) || !get(t, f->off + g->fnsize - 1, 1, &nf))
		return false;
	f->inl = 0;
	f->tree = ~0ull;
	if (np > 2 && !get32(t, f->off + g->fnsize + 8, &f->inl))
		return false;
	if (g->gofunc && nf > 3 && get32(t, f->off + g->fnsize + 4ull * np + 12, &tree) &&
	    tree != 0xffffffffu)
		f->tree = tree;
	return true;
}

/* The file and line of @pc in @f, narrowing [*@lo, *@hi) to where they hold. */
static bool position(const struct pcln *t, const struct gofn *f, uint64_t pc,
		     struct rec_goframe *fr, uint64_t *lo, uint64_t *hi)
{
	int32_t fileno, line;
	uint32_t foff;

	if (!pcvalue(t, f->pcfile, f->entry, pc, &fileno, lo, hi) ||
	    !pcvalue(t, f->pcln, f->entry, pc, &line, lo, hi) || fileno < 0 || line < 0 ||
	    !get32(t, t->cutab + 4 * ((uint64_t)f->cu + (uint32_t)fileno), &foff))
		return false;
	fr->file = foff == 0xffffffffu ? "?" : cstr(t, t->filetab + foff);
	fr->line = (uint32_t)line;
	return fr->file;
}

/* Inline tree node @idx of @f: the inlined function's name and the call's pc. */
static bool inl_node(const struct rec_gopcln *g, const struct gofn *f, int32_t idx,
		     const char **name, uint64_t *pc)
{
	uint64_t at = f->tree + (uint64_t)idx * g->inl_size;
	const uint8_t *n;
	int32_t nameoff, ppc;

	/* the node's address only once it is known inside go:func.* (no tree: none) */
	if (f->tree == ~0ull || idx < 0 || !g->gofunc || at + g->inl_size > g->gofunc_size)
		return false;
	n = g->gofunc + at;
	memcpy(&nameoff, n + g->inl_name, 4); /* little-endian host (x86-64) */
	memcpy(&ppc, n + g->inl_ppc, 4);
	*name = nameoff >= 0 ? cstr(&g->t, g->t.names + (uint32_t)nameoff) : NULL;
	*pc = f->entry + (uint32_t)ppc;
	return *name && ppc >= 0 && *pc < f->end;
}

static void reverse(struct rec_goframe *v, unsigned n)
{
	for (unsigned i = 0; i < n / 2; i++) {
		struct rec_goframe x = v[i];

		v[i] = v[n - 1 - i];
		v[n - 1 - i] = x;
	}
}

int rec_gopcln__frames(const struct rec_gopcln *g, uint64_t va, struct rec_goframe *out,
		       unsigned cap, uint64_t *lo, uint64_t *hi)
{
	const struct pcln *t = &g->t;
	uint64_t pc = va, l, h;
	struct gofn f;
	unsigned n = 0;

	if (!find_fn(t, va, &f) || !read_fn(g, &f))
		return 0;
	*lo = f.entry;
	*hi = f.end;
	/* innermost first: each inlined call's site is a pc of its caller */
	while (n < cap) {
		int32_t idx = -1;
		bool first = pc == va;

		l = first ? *lo : f.entry;
		h = first ? *hi : f.end;
		if (f.inl && !pcvalue(t, f.inl, f.entry, pc, &idx, &l, &h))
			return 0;
		if (!position(t, &f, pc, &out[n], &l, &h))
			return 0;
		if (first) {
			*lo = l;
			*hi = h;
		}
		if (idx < 0) {
			out[n].name = cstr(t, t->names + f.name);
			if (!out[n].name)
				return 0;
			reverse(out, ++n);
			return (int)n;
		}
		if (!inl_node(g, &f, idx, &out[n].name, &pc))
			return 0; /* inlined, but no tree names it */
		n++;
	}
	return 0;
}
