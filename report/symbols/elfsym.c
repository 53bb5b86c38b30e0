// SPDX-License-Identifier: MIT
/*
 * elfsym.c - symbolization of one ELF file: build ids, file offset ->
 * address through the program headers, and address -> symbol (libdwfl's
 * symbol table) plus DWARF inline chain and source lines (dwload.c, opened
 * on first use or handed over by the prefetcher).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>

#include "binopen.h"
#include "contentid.h"
#include "dwinline.h"
#include "dwload.h"
#include "elfplt.h"
#include "elfsym.h"
#include "lowerbound.h"
#include "symrank.h"

#define ELFSYM_MAX_LOADS	 16
#define RPT_ELFSYM_MAX_INLINE	 64
#define ELFSYM_SCANS_BEFORE_SORT 8

struct elfsym_load {
	uint64_t offset, vaddr, filesz;
	bool exec;
};

/* libdwfl's address -> symbol search is linear in the symbol count; ours is sorted. */
struct elfsym_sym {
	uint64_t start, size;
	const char *name; /* borrowed from the ELF file (valid while dwfl is) or plt.names */
	unsigned rank;	  /* sac_sym__rank(): among aliases, the lowest is shown */
};

struct rpt_elfsym {
	struct elfsym_sym *syms;
	size_t nsyms;
	bool sorted;	 /* syms sorted, on the first lookup that pays for it */
	unsigned nscans; /* lookups answered by a linear scan */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	char *sym_path;
	struct rpt_dwload *dwl; /* on first use: NULL before, and when it failed */
	bool dwl_tried;
	struct rpt_dwinline *inl; /* inline chains per compile unit */
	bool has_symtab, has_dwarf;
	bool has_debug;	  /* any .debug_* or .zdebug_* section with contents */
	bool loads_exact; /* program headers from the binary, not a debug file */
	struct elfsym_load loads[ELFSYM_MAX_LOADS];
	int nloads;
	struct sac_plt plt; /* `func@plt` entries, from the binary (a debug file has no code) */
};

static Elf *elf_open_path(const char *path, int *fd)
{
	Elf *elf;

	elf_version(EV_CURRENT);
	*fd = rpt_bin_open(path);
	if (*fd < 0) {
		errno = -*fd;
		*fd = -1;
		return NULL;
	}
	elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		close(*fd);
		*fd = -1;
		errno = ENOEXEC;
		return NULL;
	}
	return elf;
}

int rpt_elf__build_id(const char *path, uint8_t *buf, size_t cap)
{
	const void *id = NULL;
	ssize_t len;
	int fd = -1;
	Elf *elf = elf_open_path(path, &fd);

	if (!elf)
		return -errno;
	len = dwelf_elf_gnu_build_id(elf, &id);
	if (len < 0)
		len = 0;
	if ((size_t)len > cap)
		len = cap;
	if (len)
		memcpy(buf, id, len);
	elf_end(elf);
	close(fd);
	return len;
}

int rpt_elf__content_id(const char *path, uint8_t *buf, size_t cap)
{
	int fd, err;

	if (cap < SAC_CONTENTID_LEN)
		return -ENOSPC;
	fd = rpt_bin_open(path);
	if (fd < 0)
		return fd;
	err = sac_contentid__fd(fd, buf);
	close(fd);
	return err ? err : SAC_CONTENTID_LEN;
}

/* Program headers and section facts of @path into @e. */
static int elfsym_scan(struct rpt_elfsym *e, const char *path, bool loads)
{
	size_t nph = 0;
	Elf_Scn *scn = NULL;
	int fd = -1;
	Elf *elf = elf_open_path(path, &fd);

	if (!elf)
		return -errno;
	if (loads && !elf_getphdrnum(elf, &nph)) {
		e->nloads = 0;
		for (size_t i = 0; i < nph && e->nloads < ELFSYM_MAX_LOADS; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
				continue;
			e->loads[e->nloads++] = (struct elfsym_load){
				ph.p_offset, ph.p_vaddr, ph.p_filesz, !!(ph.p_flags & PF_X)};
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		size_t shstrndx;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || elf_getshdrstrndx(elf, &shstrndx))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB)
			e->has_symtab = true;
		if (!name || sh.sh_type == SHT_NOBITS)
			continue;
		if (!strcmp(name, ".debug_info"))
			e->has_dwarf = true;
		if (!strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8))
			e->has_debug = true;
	}
	if (!e->plt.nsyms && sac_plt__read(elf, &e->plt) < 0) {
		sac_plt__release(&e->plt);
		elf_end(elf);
		close(fd);
		return -ENOMEM;
	}
	elf_end(elf);
	close(fd);
	return 0;
}

/* By start, then the largest first, then the preferred name. */
static bool sym_before(const struct elfsym_sym *x, const struct elfsym_sym *y)
{
	if (x->start != y->start)
		return x->start < y->start;
	return x->size > y->size || (x->size == y->size && x->rank < y->rank);
}

/*
 * Stable merge sort of the symbols by sym_before(): the order qsort() gave
 * (glibc's is a stable merge sort), without a call per comparison; libc's
 * thousands of symbols took a millisecond that way. @return 0 or -ENOMEM.
 */
static int sort_syms(struct elfsym_sym *v, size_t n)
{
	struct elfsym_sym *tmp = malloc((n ? n : 1) * sizeof(*tmp)), *src = v, *dst = tmp, *t;

	if (!tmp)
		return -ENOMEM;
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi)
				dst[k++] = sym_before(&src[j], &src[i]) ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		t = src, src = dst, dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	return 0;
}

/*
 * Every sized function symbol (symtab, else dynsym) and every named PLT
 * entry, sorted by address on the first lookup that pays for it.
 */
static int load_syms(struct rpt_elfsym *e)
{
	int n = dwfl_module_getsymtab(e->mod);

	if (n < 0)
		n = 0;
	if (!n && !e->plt.nsyms)
		return 0;
	e->syms = calloc((size_t)n + e->plt.nsyms, sizeof(*e->syms));
	if (!e->syms)
		return -ENOMEM;
	for (size_t i = 0; i < e->plt.nsyms; i++) {
		const struct sac_pltsym *p = &e->plt.syms[i];

		e->syms[e->nsyms++] =
			(struct elfsym_sym){p->vaddr + e->bias, p->size, e->plt.names + p->name, 0};
	}
	for (int i = 1; i < n; i++) {
		GElf_Addr addr;
		GElf_Sym sym;
		const char *name =
			dwfl_module_getsym_info(e->mod, i, &sym, &addr, NULL, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !*name || sym.st_shndx == SHN_UNDEF || !sym.st_size ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		e->syms[e->nsyms++] = (struct elfsym_sym){
			addr, sym.st_size, name, sac_sym__rank(GELF_ST_BIND(sym.st_info), name)};
	}
	return 0;
}

/*
 * Before sorting pays off: the symbol holding @addr with the highest start
 * (then the largest size, the preferred name, and the first in the table,
 * as the stable sort orders them). A binary with a handful of sampled
 * addresses never sorts.
 */
static const char *sym_scan(const struct rpt_elfsym *e, uint64_t addr)
{
	const struct elfsym_sym *best = NULL;

	for (size_t i = 0; i < e->nsyms; i++) {
		const struct elfsym_sym *y = &e->syms[i];

		if (addr - y->start >= y->size)
			continue;
		if (!best || y->start > best->start ||
		    (y->start == best->start && sym_before(y, best)))
			best = y;
	}
	return best ? best->name : NULL;
}

static const char *sym_find(struct rpt_elfsym *e, uint64_t addr)
{
	ssize_t best;

	if (!e->sorted && e->nscans < ELFSYM_SCANS_BEFORE_SORT) {
		e->nscans++;
		return sym_scan(e, addr);
	}
	if (!e->sorted && sort_syms(e->syms, e->nsyms)) /* out of memory: scan */
		return sym_scan(e, addr);
	e->sorted = true;
	best = (ssize_t)SAC_FIRST_ABOVE(e->syms, e->nsyms, start, addr) - 1;
	/* the nearest start below may be a small symbol inside a larger one */
	for (ssize_t i = best; i >= 0 && best - i < 8; i--)
		if (addr - e->syms[i].start < e->syms[i].size) {
			while (i > 0 && e->syms[i - 1].start == e->syms[i].start)
				i--;
			return e->syms[i].name;
		}
	return NULL;
}

static int no_debuginfo(Dwfl_Module *mod, void **ud, const char *modname, Dwarf_Addr base,
			const char *file, const char *link, GElf_Word crc, char **name)
{
	(void)mod, (void)ud, (void)modname, (void)base, (void)file, (void)link, (void)crc;
	(void)name;
	return -1;
}

static const Dwfl_Callbacks elfsym_callbacks = {
	.find_debuginfo = no_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct rpt_elfsym *rpt_elfsym__open(const char *sym_path, const char *bin_path)
{
	struct rpt_elfsym *e = calloc(1, sizeof(*e));
	int err = 0;

	if (!e)
		return NULL;
	e->loads_exact = bin_path != NULL;
	e->sym_path = strdup(sym_path);
	err = e->sym_path ? elfsym_scan(e, sym_path, true) : -ENOMEM;
	if (!err && bin_path && strcmp(bin_path, sym_path)) {
		struct rpt_elfsym tmp = {0};

		err = elfsym_scan(&tmp, bin_path, true);
		memcpy(e->loads, tmp.loads, sizeof(e->loads));
		e->nloads = tmp.nloads;
		if (!e->plt.nsyms) {
			sac_plt__release(&e->plt);
			e->plt = tmp.plt;
		} else {
			sac_plt__release(&tmp.plt);
		}
	}
	if (err)
		goto cleanup;
	e->dwfl = dwfl_begin(&elfsym_callbacks);
	if (!e->dwfl) {
		err = -ENOMEM;
		goto cleanup;
	}
	e->mod = dwfl_report_elf(e->dwfl, "sym", sym_path, -1, 0, false);
	dwfl_report_end(e->dwfl, NULL, NULL);
	if (!e->mod) {
		err = -ENOEXEC;
		goto cleanup;
	}
	dwfl_module_getelf(e->mod, &e->bias);
	if (e->has_dwarf && !(e->inl = rpt_dwinline__new())) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = load_syms(e);
	if (err)
		goto cleanup;
	return e;
cleanup:
	rpt_elfsym__free(e);
	errno = -err;
	return NULL;
}

void rpt_elfsym__free(struct rpt_elfsym *e)
{
	if (!e)
		return;
	if (e->dwfl)
		dwfl_end(e->dwfl);
	rpt_dwinline__free(e->inl);
	rpt_dwload__free(e->dwl);
	free(e->sym_path);
	free(e->syms);
	sac_plt__release(&e->plt);
	free(e);
}

void rpt_elfsym__set_dwarf(struct rpt_elfsym *e, struct rpt_dwload *d)
{
	if (e->dwl_tried || !e->has_debug) {
		rpt_dwload__free(d);
		return;
	}
	e->dwl = d;
	e->dwl_tried = d != NULL;
}

/* The file's DWARF, opened on first use as libdwfl did. */
static struct rpt_dwload *dwarf_of(struct rpt_elfsym *e, bool lines)
{
	if (!e->dwl_tried && e->has_debug) {
		e->dwl_tried = true;
		e->dwl = rpt_dwload__open(e->sym_path, lines);
	}
	return e->dwl;
}

bool rpt_elfsym__has_symtab(const struct rpt_elfsym *e)
{
	return e->has_symtab;
}

int rpt_elfsym__vaddr(const struct rpt_elfsym *e, uint64_t off, uint64_t map_pgoff, uint64_t *vaddr)
{
	for (int i = 0; i < e->nloads; i++) {
		const struct elfsym_load *l = &e->loads[i];

		if (e->loads_exact) {
			if (off >= l->offset && off - l->offset < l->filesz) {
				*vaddr = l->vaddr + (off - l->offset);
				return 0;
			}
			continue;
		}
		/*
		 * A debug file keeps p_vaddr but not p_offset. The mapping's page
		 * offset is the segment's offset rounded down to a page, and
		 * p_offset == p_vaddr modulo the page size, which places it.
		 */
		if (l->exec && off >= map_pgoff) {
			*vaddr = l->vaddr - (l->vaddr & 4095) + (off - map_pgoff);
			return 0;
		}
	}
	return -ENOENT;
}

uint64_t rpt_elfsym__rank(const struct rpt_elfsym *e, uint64_t vaddr)
{
	return e->dwl && e->has_dwarf ? rpt_dwload__rank(e->dwl, vaddr) : 0;
}

/* Linkage name (mangled, qualified) when present, else the plain name. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *s;

	s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!s)
		s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!s)
		s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return s;
}

static void call_site(Dwarf_Die *cu, Dwarf_Die *inl, const char **file, int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word w;
	Dwarf_Files *files;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (!dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &attr), &w))
		*line = (int)w;
	if (!dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &attr), &w) &&
	    !dwarf_getsrcfiles(cu, &files, &nfiles) && w < nfiles)
		*file = dwarf_filesrc(files, w, NULL, NULL);
}

/* Inlined frames at @addr (ELF address) in @cu, innermost first; their lines too. */
static int inline_frames(struct rpt_elfsym *e, Dwarf_Die *cu, Dwarf_Addr addr,
			 struct rpt_elfsym_frame *out, size_t cap, bool lines, const char **file,
			 int *line)
{
	Dwarf_Die scopes[RPT_ELFSYM_MAX_INLINE];
	int nscopes, n = 0;

	if (!e->inl)
		return 0;
	nscopes = rpt_dwinline__chain(e->inl, cu, addr, scopes, RPT_ELFSYM_MAX_INLINE);
	for (int i = 0; i < nscopes && (size_t)n + 1 < cap; i++) {
		out[n] = (struct rpt_elfsym_frame){die_name(&scopes[i]), *file, *line, true};
		if (!out[n].name)
			out[n].name = "[inlined]";
		n++;
		/* the next outer frame is at this one's call site */
		if (lines) /* decoding the unit's line table is costly */
			call_site(cu, &scopes[i], file, line);
	}
	return n;
}

int rpt_elfsym__frames(struct rpt_elfsym *e, uint64_t vaddr, bool lines,
		       struct rpt_elfsym_frame *out, size_t cap)
{
	const char *file = NULL, *sym;
	struct rpt_dwload *dw = NULL;
	Dwarf_Die cu_mem, *cu = NULL;
	int line = 0, n = 0;

	if (!cap)
		return 0;
	sym = sym_find(e, vaddr + e->bias);
	if (!sym)
		return 0;
	if (lines || e->has_dwarf)
		dw = dwarf_of(e, lines);
	if (dw)
		cu = rpt_dwload__cu(dw, vaddr, &cu_mem);
	if (cu && lines)
		rpt_dwload__line(dw, cu, vaddr, &file, &line);
	if (cu && e->has_dwarf)
		n = inline_frames(e, cu, vaddr, out, cap, lines, &file, &line);
	out[n++] = (struct rpt_elfsym_frame){sym, file, line, false};
	return n;
}
