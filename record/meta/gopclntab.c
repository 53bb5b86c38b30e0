// SPDX-License-Identifier: MIT
/*
 * gopclntab.c - Go function names from a binary's .gopclntab, the table
 * Go's runtime names its own frames by: a stripped Go binary
 * (-ldflags=-s) has no .symtab and no .dynsym, but always this. Layouts
 * of Go 1.2, 1.16, 1.18 and 1.20 (the magic says which), 64-bit and
 * little-endian only; every offset is checked against the section.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gopclntab.h"
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
		if (!word(t, 2, &nameoff) || !word(t, 6, &pcln))
			return -ENOENT;
		t->fsz = 8;
		break;
	case MAGIC_118:
	case MAGIC_120:
		if (!word(t, 2, &t->text) || !word(t, 3, &nameoff) || !word(t, 7, &pcln))
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
	if (t->names_len + len + 1 > *cap) {
		size_t c = *cap ? *cap * 2 : 65536;
		char *p;

		while (c < t->names_len + len + 1)
			c *= 2;
		if (c > REC_BIN_MAX_SECTION)
			return -EFBIG;
		p = realloc(t->names, c);
		if (!p)
			return -ENOMEM;
		t->names = p;
		*cap = c;
	}
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
