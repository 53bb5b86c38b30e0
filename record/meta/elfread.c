// SPDX-License-Identifier: MIT
/*
 * elfread.c - the ELF side of symbol embedding: build ids (read by
 * core/buildid.c), and function symbols converted from virtual addresses to
 * file offsets through the PT_LOAD segment that holds them (off = st_value -
 * p_vaddr + p_offset), the key sa-report looks symbols up by ("USYM record").
 */
#include <errno.h>
#include <stdbool.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include "buildid.h"
#include "contentid.h"
#include "elfplt.h"
#include "elfread.h"
#include "golines.h"
#include "gopclntab.h"
#include "lowerbound.h"
#include "safeopen.h"
#include "saf.h"
#include "symrank.h"

static Elf *elf_open(int fd)
{
	Elf *e;

	e = rec_safe_elf_begin(fd, ELF_C_READ_MMAP);
	if (e && elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return NULL;
	}
	return e;
}

int rec_elf__build_id_fd(int fd, uint8_t *buf, size_t cap)
{
	Elf *e = elf_open(fd);
	int ret;

	if (!e)
		return -ENOEXEC;
	ret = sac_buildid__read(e, buf, cap);
	elf_end(e);
	return ret;
}

int rec_elf__identity_fd(int fd, uint8_t *buf, size_t cap, uint32_t *kind)
{
	int ret = rec_elf__build_id_fd(fd, buf, cap);

	*kind = SAF_ID_GNU;
	if (ret != -ENOENT)
		return ret;
	if (cap < SAC_CONTENTID_LEN)
		return -ENOSPC;
	ret = sac_contentid__fd(fd, buf);
	if (ret)
		return ret;
	*kind = SAF_ID_CONTENT;
	return SAC_CONTENTID_LEN;
}

/* Function symbols live in a PT_LOAD segment; map st_value to a file offset. */
static int vaddr_to_off(const GElf_Phdr *loads, size_t nloads, uint64_t va, uint64_t *off)
{
	size_t i;

	for (i = 0; i < nloads; i++) {
		if (va >= loads[i].p_vaddr && va < loads[i].p_vaddr + loads[i].p_filesz) {
			*off = va - loads[i].p_vaddr + loads[i].p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

static int read_loads(Elf *e, GElf_Phdr **out, size_t *nout)
{
	GElf_Phdr *loads;
	size_t i, n, k = 0;

	if (elf_getphdrnum(e, &n) || !n)
		return -ENOEXEC;
	loads = calloc(n, sizeof(*loads));
	if (!loads)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(e, i, &loads[k]) && loads[k].p_type == PT_LOAD)
			k++;
	*out = loads;
	*nout = k;
	return 0;
}

static Elf_Scn *find_symtab(Elf *e, int *from_dynsym)
{
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && sh.sh_size)
			return *from_dynsym = 0, scn;
		if (sh.sh_type == SHT_DYNSYM && sh.sh_size)
			dyn = scn;
	}
	*from_dynsym = 1;
	return dyn;
}

/*
 * Among symbols at one offset, keep the sized, then the preferred one
 * (sac_sym__rank(), the rule sa-report applies to a binary's symbols, so
 * a report off the box shows the name one beside the binary would).
 */
static int cmp_sym(const void *a, const void *b)
{
	const struct rec_elfsym *x = a, *y = b;

	return SAC_CMP(x->off, y->off) ?: SAC_CMP(y->size, x->size) ?:
	       SAC_CMP(x->rank, y->rank) ?: SAC_CMP(x->name, y->name);
}

/*
 * Sort @n symbols at @a by cmp_sym(), through @tmp (room for @n): a merge
 * sort calling the comparator directly, where qsort() took a call per
 * comparison, 3-5% of sa-record's CPU in a compile loop's first seconds
 * (cc1 and the libraries it loads: 27k to 90k symbols each). Symbols that
 * compare equal are equal in every field, so the order is qsort()'s.
 */
static void merge_sort(struct rec_elfsym *a, struct rec_elfsym *tmp, size_t n)
{
	size_t h = n / 2, i = 0, j = h, k = 0;

	if (n < 2)
		return;
	merge_sort(a, tmp, h);
	merge_sort(a + h, tmp, n - h);
	if (cmp_sym(&a[h - 1], &a[h]) <= 0)
		return; /* in order already */
	while (i < h && j < n)
		tmp[k++] = cmp_sym(&a[j], &a[i]) < 0 ? a[j++] : a[i++];
	while (i < h)
		tmp[k++] = a[i++];
	memcpy(a, tmp, k * sizeof(*a)); /* a[j..n) stays where it is */
}

static void sort_and_dedup(struct rec_elftab *t)
{
	struct rec_elfsym *tmp = malloc(t->nsyms * sizeof(*tmp));
	size_t i, k = 0;

	if (tmp)
		merge_sort(t->syms, tmp, t->nsyms);
	else
		qsort(t->syms, t->nsyms, sizeof(*t->syms), cmp_sym);
	free(tmp);
	for (i = 0; i < t->nsyms; i++)
		if (!k || t->syms[k - 1].off != t->syms[i].off)
			t->syms[k++] = t->syms[i];
	t->nsyms = k;
	for (i = 0; i < k; i++)
		if (!t->syms[i].size && i + 1 < k)
			t->syms[i].size = t->syms[i + 1].off - t->syms[i].off;
}

static int collect(Elf *e, Elf_Scn *scn, const GElf_Phdr *loads, size_t nloads,
		   struct rec_elftab *t)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Shdr sh;
	GElf_Sym sym;
	size_t i, n;
	Elf_Scn *str;
	Elf_Data *sd;

	/* a section without contents (SHT_NOBITS, as in a debug file) has no d_buf */
	if (!d || !d->d_buf || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return -ENOENT;
	n = sh.sh_size / sh.sh_entsize;
	if (n > REC_BIN_MAX_SYMS)
		return -EFBIG;
	str = elf_getscn(e, sh.sh_link);
	sd = str ? elf_getdata(str, NULL) : NULL;
	if (!sd || !sd->d_size || !sd->d_buf)
		return -ENOENT;
	if (sd->d_size > REC_BIN_MAX_SECTION)
		return -EFBIG;
	t->syms = calloc(n ? n : 1, sizeof(*t->syms));
	t->names = malloc(sd->d_size + 1);
	if (!t->syms || !t->names)
		return -ENOMEM;
	memcpy(t->names, sd->d_buf, sd->d_size);
	t->names[sd->d_size] = '\0';
	t->names_len = sd->d_size;
	for (i = 0; i < n; i++) {
		struct rec_elfsym *s = &t->syms[t->nsyms];
		int type;

		if (!gelf_getsym(d, i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_name >= sd->d_size ||
		    !t->names[sym.st_name])
			continue;
		if (vaddr_to_off(loads, nloads, sym.st_value, &s->off))
			continue;
		s->size = sym.st_size;
		s->name = sym.st_name;
		s->rank = sac_sym__rank(GELF_ST_BIND(sym.st_info), t->names + sym.st_name);
		t->nsyms++;
	}
	return t->nsyms ? 0 : -ENOENT;
}

/*
 * The named PLT entries of @e (`strcmp@plt`: they have no symbols of their
 * own, and the nearest symbol before them is _init) added to @t.
 * @return 0 or -ENOMEM.
 */
static int add_plt(Elf *e, const GElf_Phdr *loads, size_t nloads, struct rec_elftab *t)
{
	size_t base = t->names ? t->names_len + 1 : 0;
	struct sac_plt p;
	int n = sac_plt__read(e, &p), err = -ENOMEM;
	struct rec_elfsym *syms;
	char *names;

	if (n <= 0) {
		sac_plt__release(&p);
		return n;
	}
	syms = realloc(t->syms, (t->nsyms + p.nsyms) * sizeof(*syms));
	if (!syms)
		goto cleanup;
	t->syms = syms;
	names = realloc(t->names, base + p.names_len + 1);
	if (!names)
		goto cleanup;
	t->names = names;
	memcpy(names + base, p.names, p.names_len);
	names[base + p.names_len] = '\0';
	t->names_len = base + p.names_len;
	for (size_t i = 0; i < p.nsyms; i++) {
		struct rec_elfsym *s = &t->syms[t->nsyms];

		if (vaddr_to_off(loads, nloads, p.syms[i].vaddr, &s->off))
			continue;
		s->size = p.syms[i].size;
		s->name = (uint32_t)(base + p.syms[i].name);
		s->rank = 0;
		t->nsyms++;
	}
	err = 0;
cleanup:
	sac_plt__release(&p);
	return err;
}

/* @e's build id is @build_id (or @bid_len is 0). */
static bool bid_matches(Elf *e, const uint8_t *build_id, size_t bid_len)
{
	uint8_t bid[64];
	int n;

	if (!bid_len)
		return true;
	n = sac_buildid__read(e, bid, sizeof(bid));
	return n > 0 && (size_t)n == bid_len && !memcmp(bid, build_id, bid_len);
}

/*
 * The function symbols of @dbg, a debug file of the same build id: its
 * .symtab holds the local functions a stripped binary lost (glibc's
 * __libc_start_call_main, start_thread, clone3). Its segments keep their
 * addresses but not their file offsets, so @loads are the binary's.
 * @return 0, or -ENOENT when it has none (the binary's own are read then).
 */
static int collect_debug(Elf *dbg, const GElf_Phdr *loads, size_t nloads, struct rec_elftab *t)
{
	Elf_Scn *scn;
	int err, dyn;

	scn = find_symtab(dbg, &dyn);
	if (!scn || dyn)
		return -ENOENT;
	err = collect(dbg, scn, loads, nloads, t);
	if (err)
		rec_elftab__release(t);
	else
		t->from_debug = 1;
	return err == -ENOMEM ? err : err ? -ENOENT : 0;
}

/* The binary's ELF symbols: .symtab, else (or when it has only labels) .dynsym. */
static int collect_elf(Elf *e, const GElf_Phdr *loads, size_t nloads, struct rec_elftab *t)
{
	Elf_Scn *scn, *dyn = NULL, *s = NULL;
	GElf_Shdr sh;
	int err = -ENOENT;

	scn = find_symtab(e, &t->from_dynsym);
	if (scn)
		err = collect(e, scn, loads, nloads, t);
	if (err != -ENOENT || !scn || t->from_dynsym)
		return err;
	/* A .symtab of only local labels: fall back to .dynsym. */
	while ((s = elf_nextscn(e, s)))
		if (gelf_getshdr(s, &sh) && sh.sh_type == SHT_DYNSYM)
			dyn = s;
	rec_elftab__release(t);
	t->from_dynsym = 1;
	return dyn ? collect(e, dyn, loads, nloads, t) : -ENOENT;
}

struct loadset {
	const GElf_Phdr *loads;
	size_t n;
};

static int loadset_off(const void *arg, uint64_t va, uint64_t *off)
{
	const struct loadset *l = arg;

	return vaddr_to_off(l->loads, l->n, va, off);
}

/* A section's contents by name, its header in @out; NULL (@out untouched) when absent or empty. */
static Elf_Data *section(Elf *e, const char *name, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (!n || strcmp(n, name))
			continue;
		*out = sh;
		return sh.sh_size <= REC_BIN_MAX_SECTION ? elf_getdata(scn, NULL) : NULL;
	}
	return NULL;
}

/*
 * A Go binary without .symtab (-ldflags=-s): its functions from
 * .gopclntab (a PIE's is .data.rel.ro.gopclntab), gopclntab.c.
 */
static int collect_go(Elf *e, const GElf_Phdr *loads, size_t nloads, struct rec_elftab *t)
{
	struct loadset l = {loads, nloads};
	GElf_Shdr sh, text = {0};
	Elf_Data *d;
	int err;

	d = section(e, ".gopclntab", &sh);
	if (!d)
		d = section(e, ".data.rel.ro.gopclntab", &sh);
	if (!d || !d->d_buf)
		return -ENOENT;
	section(e, ".text", &text);
	err = rec_gopclntab__collect(d->d_buf, d->d_size, text.sh_addr, loadset_off, &l, t);
	if (!err)
		t->from_gopclntab = 1;
	return err;
}

/*
 * A Go binary's line tables and inline trees, for the ULINE records of
 * the addresses sampled (golines.h); NULL when it has none this reader
 * knows, or no memory: its frames then have names only.
 */
static struct rec_golines *read_golines(Elf *e, const GElf_Phdr *loads, size_t nloads)
{
	struct rec_golines_load ld[REC_GOLINES_MAX_LOADS];
	GElf_Shdr sh, text = {0}, nd = {0}, ro = {0};
	Elf_Data *d, *ndd, *rod;
	struct rec_gopcln *p;
	size_t n = 0;

	d = section(e, ".gopclntab", &sh);
	if (!d)
		d = section(e, ".data.rel.ro.gopclntab", &sh);
	if (!d || !d->d_buf)
		return NULL;
	section(e, ".text", &text);
	ndd = section(e, ".noptrdata", &nd);
	rod = section(e, ".rodata", &ro);
	p = rec_gopcln__new(&(struct rec_gopcln_src){
		.pcln = d->d_buf,
		.pcln_size = d->d_size,
		.pcln_va = sh.sh_addr,
		.text_addr = text.sh_addr,
		.noptrdata = ndd ? ndd->d_buf : NULL,
		.noptrdata_size = ndd && ndd->d_buf ? ndd->d_size : 0,
		.rodata = rod ? rod->d_buf : NULL,
		.rodata_size = rod && rod->d_buf ? rod->d_size : 0,
		.rodata_va = ro.sh_addr,
	});
	if (!p)
		return NULL;
	for (size_t i = 0; i < nloads && n < REC_GOLINES_MAX_LOADS; i++)
		ld[n++] = (struct rec_golines_load){loads[i].p_vaddr, loads[i].p_offset,
						    loads[i].p_filesz};
	return rec_golines__new(p, ld, n);
}

/* The binary's own symbols: .symtab, else (or when it has only labels) .dynsym, else Go's. */
static int collect_own(Elf *e, const GElf_Phdr *loads, size_t nloads, struct rec_elftab *t)
{
	int err = collect_elf(e, loads, nloads, t);

	if (err != -ENOENT)
		return err;
	rec_elftab__release(t);
	t->from_dynsym = 0;
	return collect_go(e, loads, nloads, t);
}

int rec_elftab__read(int fd, const uint8_t *build_id, size_t bid_len, struct rec_elftab *t)
{
	return rec_elftab__read_debug(fd, -1, build_id, bid_len, t);
}

int rec_elftab__read_debug(int fd, int dbg_fd, const uint8_t *build_id, size_t bid_len,
			   struct rec_elftab *t)
{
	GElf_Phdr *loads = NULL;
	size_t nloads = 0;
	Elf *e, *dbg = NULL;
	int err;

	memset(t, 0, sizeof(*t));
	e = elf_open(fd);
	if (!e)
		return -ENOEXEC;
	err = -ESTALE;
	if (!bid_matches(e, build_id, bid_len))
		goto cleanup;
	err = read_loads(e, &loads, &nloads);
	if (err)
		goto cleanup;
	err = -ENOENT;
	/* a debug file counts only with the build id the binary has */
	if (dbg_fd >= 0 && bid_len && (dbg = elf_open(dbg_fd)) &&
	    bid_matches(dbg, build_id, bid_len))
		err = collect_debug(dbg, loads, nloads, t);
	if (err == -ENOENT)
		err = collect_own(e, loads, nloads, t);
	if (!err || err == -ENOENT) {
		int perr = add_plt(e, loads, nloads, t);

		err = perr ? perr : t->nsyms ? 0 : -ENOENT;
	}
	if (!err) {
		sort_and_dedup(t);
		t->golines = read_golines(e, loads, nloads);
	}
cleanup:
	if (err)
		rec_elftab__release(t);
	free(loads);
	if (dbg)
		elf_end(dbg);
	elf_end(e);
	return err;
}

/*
 * The symbol with the highest start at or below @off that covers it. A
 * size is the file's st_size, any 64-bit value: `off - start < size`, as
 * sa-report tests it, where `off >= start + size` wrapped past 2^64 and
 * lost a symbol of size ~0 even at its own offset. The nearest start may be
 * a small symbol inside a larger one: the 8 before it are tried too, as
 * sa-report's sym_find() does, so both name the same function.
 */
long rec_elftab__lookup(const struct rec_elftab *t, uint64_t off)
{
	size_t lo = SAC_FIRST_ABOVE(t->syms, t->nsyms, off, off), i;

	for (i = lo; i > 0 && lo - i < 8; i--)
		if (off - t->syms[i - 1].off < t->syms[i - 1].size)
			return (long)i - 1;
	return -1;
}

void rec_elftab__release(struct rec_elftab *t)
{
	free(t->syms);
	free(t->names);
	rec_golines__free(t->golines);
	t->syms = NULL;
	t->names = NULL;
	t->golines = NULL;
	t->nsyms = 0;
	t->names_len = 0;
}
