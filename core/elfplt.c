// SPDX-License-Identifier: MIT
/*
 * elfplt.c - PLT entries named from the relocations of the GOT slots they
 * jump through: the x86-64 psABI's lazy .plt (PLT0, then `jmp *slot`), the
 * IBT layout (.plt.sec's `endbr64; bnd jmp *slot`, .plt's `endbr64; push n`)
 * and .plt.got (`jmp *slot` for functions also taken by address).
 */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elfplt.h"
#include "grow.h"
#include "lowerbound.h"

#define R_JUMP_SLOT 7 /* R_X86_64_JUMP_SLOT */
#define R_GLOB_DAT  6 /* R_X86_64_GLOB_DAT */

struct slot {
	uint64_t got;
	const char *name; /* in the ELF's string table: valid while it is open */
};

struct ctx {
	Elf *e;
	struct slot *slots; /* every named JUMP_SLOT and GLOB_DAT, sorted by got */
	size_t nslots;
	const char **jump; /* .rela.plt in order (the lazy entries push its index) */
	size_t njump;
	size_t cap_syms, cap_names;
};

static const char *section_name(Elf *e, const GElf_Shdr *sh)
{
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	return elf_strptr(e, shstrndx, sh->sh_name);
}

/* The named JUMP_SLOT and GLOB_DAT relocations of the RELA section @scn. */
static int add_relocs(struct ctx *c, Elf_Scn *scn, const GElf_Shdr *sh, size_t *cap)
{
	Elf_Scn *symscn = elf_getscn(c->e, sh->sh_link);
	Elf_Data *d = elf_getdata(scn, NULL), *sd;
	const char *sname = section_name(c->e, sh);
	/* the lazy entries' indices are into the first .rela.plt */
	bool plt = sname && !strcmp(sname, ".rela.plt") && !c->jump;
	GElf_Shdr symsh;
	size_t n;

	if (!d || !d->d_buf || !symscn || !gelf_getshdr(symscn, &symsh) || !sh->sh_entsize ||
	    (symsh.sh_type != SHT_DYNSYM && symsh.sh_type != SHT_SYMTAB))
		return 0;
	sd = elf_getdata(symscn, NULL);
	n = d->d_size / sh->sh_entsize;
	if (!sd || !sd->d_buf || n > SAC_PLT_MAX_ENTRIES)
		return 0;
	if (plt && !(c->jump = calloc(n ? n : 1, sizeof(*c->jump))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *name = NULL;
		GElf_Rela r;
		GElf_Sym sym;
		unsigned type;

		if (!gelf_getrela(d, i, &r))
			continue;
		type = GELF_R_TYPE(r.r_info);
		if ((type == R_JUMP_SLOT || type == R_GLOB_DAT) &&
		    gelf_getsym(sd, GELF_R_SYM(r.r_info), &sym))
			name = elf_strptr(c->e, symsh.sh_link, sym.st_name);
		if (name && !*name)
			name = NULL;
		if (plt)
			c->jump[c->njump++] = name;
		if (!name)
			continue;
		if (sac_grow((void **)&c->slots, cap, c->nslots + 1, sizeof(*c->slots), 64))
			return -ENOMEM;
		c->slots[c->nslots++] = (struct slot){r.r_offset, name};
	}
	return 0;
}

static int cmp_slot(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

static const char *slot_name(const struct ctx *c, uint64_t got)
{
	size_t lo = SAC_FIRST_NOT_BELOW(c->slots, c->nslots, got, got);

	return lo < c->nslots && c->slots[lo].got == got ? c->slots[lo].name : NULL;
}

static uint32_t le32(const uint8_t *b)
{
	return b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
}

/*
 * The name of the entry at @va, bytes @b[0..@len): `[endbr64] [prefixes]
 * jmp *disp32(%rip)` names it by its slot; `endbr64; push imm32` (IBT's lazy
 * .plt) by its .rela.plt index. Anything else (PLT0's `push *disp(%rip)`)
 * stays unnamed.
 */
static const char *entry_name(const struct ctx *c, uint64_t va, const uint8_t *b, size_t len)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	size_t j = 0;

	if (len >= 4 && !memcmp(b, endbr64, 4))
		j = 4;
	if (j && j + 5 <= len && b[j] == 0x68) {
		uint32_t idx = le32(b + j + 1);

		return idx < c->njump ? c->jump[idx] : NULL;
	}
	while (j < len && j < 6 && (b[j] == 0xf2 || b[j] == 0x3e || b[j] == 0x66))
		j++; /* bnd, notrack, operand size */
	if (j + 6 > len || b[j] != 0xff || b[j + 1] != 0x25)
		return NULL;
	return slot_name(c, va + j + 6 + (uint64_t)(int64_t)(int32_t)le32(b + j + 2));
}

static int add_sym(struct ctx *c, struct sac_plt *p, uint64_t va, uint64_t size, const char *name)
{
	size_t len = strlen(name), need = p->names_len + len + sizeof("@plt");

	if (SAC_GROW(p->syms, c->cap_syms, p->nsyms + 1, 64) ||
	    SAC_GROW(p->names, c->cap_names, need, 64))
		return -ENOMEM;
	p->syms[p->nsyms++] = (struct sac_pltsym){va, size, (uint32_t)p->names_len};
	memcpy(p->names + p->names_len, name, len);
	memcpy(p->names + p->names_len + len, "@plt", sizeof("@plt"));
	p->names_len = need;
	return 0;
}

static bool is_plt(const char *name)
{
	return name &&
	       (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") || !strcmp(name, ".plt.got"));
}

static int add_entries(struct ctx *c, struct sac_plt *p, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	uint64_t es = sh->sh_entsize == 8 || sh->sh_entsize == 16 ? sh->sh_entsize : 16;

	if (!d || !d->d_buf || d->d_size / es > SAC_PLT_MAX_ENTRIES - p->nsyms)
		return 0;
	for (size_t off = 0; off + es <= d->d_size; off += es) {
		const char *name =
			entry_name(c, sh->sh_addr + off, (const uint8_t *)d->d_buf + off, es);

		if (name && add_sym(c, p, sh->sh_addr + off, es, name))
			return -ENOMEM;
	}
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sac_pltsym *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

int sac_plt__read(Elf *e, struct sac_plt *p)
{
	struct ctx c = {.e = e};
	size_t cap_slots = 0;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	int err = 0;

	memset(p, 0, sizeof(*p));
	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64)
		return 0;
	while (!err && (scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA && (sh.sh_flags & SHF_ALLOC))
			err = add_relocs(&c, scn, &sh, &cap_slots);
	if (!err && c.nslots)
		qsort(c.slots, c.nslots, sizeof(*c.slots), cmp_slot);
	while (!err && (scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (sh.sh_flags & SHF_EXECINSTR) && is_plt(section_name(e, &sh)))
			err = add_entries(&c, p, scn, &sh);
	free(c.slots);
	free(c.jump);
	if (err)
		return err;
	if (p->nsyms)
		qsort(p->syms, p->nsyms, sizeof(*p->syms), cmp_sym);
	return (int)p->nsyms;
}

void sac_plt__release(struct sac_plt *p)
{
	free(p->syms);
	free(p->names);
	memset(p, 0, sizeof(*p));
}
