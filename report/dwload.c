// SPDX-License-Identifier: MIT
/*
 * dwload.c - DWARF of one file for symbolization (see dwload.h). libdw
 * inflates every compressed debug section at dwarf_begin_elf(), location
 * lists included; a Debian libc debug file is 10 MB inflated, most of the
 * time sa-report spent. We inflate only what is read, into one image that
 * libelf opens from memory; two threads can fill one image (dwprefetch.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <elfutils/libdwelf.h>

#include "dwload.h"

#define DWL_ALIGN 16
#define DWL_HUGE  (2u << 20)
#define DWL_STEP  (1u << 20)

/* One run of consecutive aranges of one unit, as libdwfl keeps them. */
struct dwl_run {
	Dwarf_Addr start;
	Dwarf_Off cu;
};

struct rpt_dwload {
	int fd;	   /* the file, kept open only when libdw reads it itself */
	Elf *elf;  /* the file, or the image */
	Dwarf *dw; /* NULL when the file has no usable DWARF */
	void *image;
	size_t image_len, info_size;
	struct dwl_run *runs;
	size_t nruns;
	Dwarf_Addr last_end; /* end of the last arange, as libdwfl checks it */
};

struct dwl_sect {
	GElf_Shdr sh;
	const char *name;
	const uint8_t *raw; /* its bytes in the file: fills touch no libelf state */
	size_t raw_size, size, off, name_off;
};

/* Debug sections libdw knows that nothing here reads. */
static bool unused(const char *name, bool lines)
{
	static const char *const skip[] = {
		".debug_loc",	       ".debug_loclists", ".debug_frame",    ".debug_macro",
		".debug_macinfo",      ".debug_pubnames", ".debug_pubtypes", ".debug_gnu_pubnames",
		".debug_gnu_pubtypes", ".debug_names",	  ".debug_cu_index", ".debug_tu_index",
	};

	if (strncmp(name, ".debug_", 7))
		return true;
	if (!lines && !strcmp(name, ".debug_line"))
		return true;
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strcmp(name, skip[i]))
			return true;
	return false;
}

/*
 * Inflate an ELFCOMPRESS_ZLIB payload. Raw inflate past the two-byte zlib
 * header skips the adler32 of the trailer (3% of the run): the build id
 * already vouches for the file. A failed section is dropped, as libdw does.
 */
static int inflate_sect(const uint8_t *src, size_t n, uint8_t *dst, size_t want, const bool *stop)
{
	z_stream z = {0};
	int ret = Z_OK;

	if (n < 2 || n > UINT_MAX || want > UINT_MAX || (src[0] & 0x0f) != Z_DEFLATED ||
	    (src[0] << 8 | src[1]) % 31 || (src[1] & 0x20))
		return -EBADMSG;
	if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)src + 2;
	z.avail_in = n - 2;
	z.next_out = dst;
	/* in steps, so that a prefetch nobody waits for stops soon */
	while (ret == Z_OK && z.total_out < want) {
		if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED)) {
			inflateEnd(&z);
			return -ECANCELED;
		}
		z.avail_out = want - z.total_out < DWL_STEP ? want - z.total_out : DWL_STEP;
		ret = inflate(&z, Z_NO_FLUSH);
	}
	if (ret == Z_OK) /* all output is there: the end of the stream must be too */
		ret = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	return ret == Z_STREAM_END && z.total_out == want ? 0 : -EBADMSG;
}

/* Can the image hold this file? Else libdw reads the file as it is. */
static bool image_fits(Elf *elf, const GElf_Ehdr *eh)
{
	const union {
		uint16_t v;
		uint8_t b[2];
	} endian = {1};
	const char *ident = elf_getident(elf, NULL);

	return ident && ident[EI_CLASS] == ELFCLASS64 && eh->e_type != ET_REL &&
	       ident[EI_DATA] == (endian.b[0] ? ELFDATA2LSB : ELFDATA2MSB);
}

/*
 * The sections to keep in @v (capacity @cap). @return how many, or -1 when
 * the image cannot stand in for the file (dwz alt file, .zdebug_*, a
 * compression libelf does not know) or nothing needs inflating.
 */
static int plan(Elf *elf, bool lines, struct dwl_sect *v, size_t cap, size_t *info_size)
{
	size_t shstrndx, n = 0, nz = 0;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -1;
	while ((scn = elf_nextscn(elf, scn))) {
		struct dwl_sect s = {.raw = NULL};
		Elf_Data *raw;
		GElf_Chdr ch;

		if (!gelf_getshdr(scn, &s.sh) ||
		    !(s.name = elf_strptr(elf, shstrndx, s.sh.sh_name)))
			continue;
		if (!strncmp(s.name, ".zdebug", 7) || !strcmp(s.name, ".gnu_debugaltlink"))
			return -1;
		if (s.sh.sh_type == SHT_NOBITS || unused(s.name, lines))
			continue;
		if ((raw = elf_rawdata(scn, NULL))) {
			s.raw = raw->d_buf;
			s.raw_size = raw->d_size;
		}
		s.size = s.sh.sh_size;
		if (s.sh.sh_flags & SHF_COMPRESSED) {
			if (!gelf_getchdr(scn, &ch) || ch.ch_type != ELFCOMPRESS_ZLIB)
				return -1;
			s.size = ch.ch_size;
			nz++;
		}
		if (!strcmp(s.name, ".debug_info"))
			*info_size = s.size;
		if (n == cap)
			return -1;
		v[n++] = s;
	}
	return nz ? (int)n : -1;
}

static void put_shdr(Elf64_Shdr *sh, const struct dwl_sect *s)
{
	*sh = (Elf64_Shdr){
		.sh_name = s->name_off,
		.sh_type = s->sh.sh_type,
		.sh_flags = s->sh.sh_flags & ~(GElf_Xword)SHF_COMPRESSED,
		.sh_offset = s->off,
		.sh_size = s->size,
		.sh_addralign = 1,
		.sh_entsize = s->sh.sh_entsize,
	};
}

/* Lay out ehdr | sections | .shstrtab | shdrs. @return the image size. */
static size_t layout(struct dwl_sect *v, int n, size_t *strtab, size_t *strsz, size_t *shoff)
{
	size_t off = sizeof(Elf64_Ehdr), names = 1 + sizeof(".shstrtab");

	for (int i = 0; i < n; i++) {
		off = (off + DWL_ALIGN - 1) & ~(size_t)(DWL_ALIGN - 1);
		v[i].off = off;
		v[i].name_off = names;
		names += strlen(v[i].name) + 1;
		off += v[i].size;
	}
	*strtab = off;
	*strsz = names;
	*shoff = (off + names + 7) & ~(size_t)7;
	return *shoff + (n + 2) * sizeof(Elf64_Shdr);
}

static void *image_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (len >= DWL_HUGE) /* a few huge page faults instead of thousands */
		madvise(p, len, MADV_HUGEPAGE);
	return p;
}

/* One image being built; its sections can be filled by two threads. */
struct rpt_dwload_build {
	struct rpt_dwload *d;
	Elf *file;
	GElf_Ehdr eh;
	struct dwl_sect *v; /* largest first, the order they are claimed in */
	int n;		    /* sections kept, -1 when libdw reads the file itself */
	int next;	    /* next section to claim (atomic) */
	int err;	    /* -ECANCELED when stopped (atomic) */
	bool no_info;	    /* .debug_info could not be inflated: no DWARF */
	const bool *stop;
};

static int size_cmp(const void *a, const void *b)
{
	const struct dwl_sect *x = a, *y = b;

	return x->size > y->size ? -1 : x->size < y->size;
}

/* Allocate the image and write every header. @return 0 or -ENOMEM. */
static int image_begin(struct rpt_dwload_build *b)
{
	size_t strtab, strsz, shoff, len;
	Elf64_Ehdr *e;
	Elf64_Shdr *sh;
	char *img;

	qsort(b->v, b->n, sizeof(*b->v), size_cmp);
	len = layout(b->v, b->n, &strtab, &strsz, &shoff);
	img = image_alloc(len);
	if (!img)
		return -ENOMEM;
	b->d->image = img;
	b->d->image_len = len;
	e = (Elf64_Ehdr *)img;
	memcpy(e->e_ident, elf_getident(b->file, NULL), EI_NIDENT);
	e->e_type = b->eh.e_type;
	e->e_machine = b->eh.e_machine;
	e->e_version = EV_CURRENT;
	e->e_ehsize = sizeof(*e);
	e->e_shentsize = sizeof(*sh);
	e->e_shoff = shoff;
	e->e_shnum = b->n + 2;
	e->e_shstrndx = b->n + 1;
	sh = (Elf64_Shdr *)(img + shoff);
	for (int i = 0; i < b->n; i++) {
		put_shdr(&sh[i + 1], &b->v[i]);
		strcpy(img + strtab + b->v[i].name_off, b->v[i].name);
	}
	strcpy(img + strtab + 1, ".shstrtab");
	sh[b->n + 1] = (Elf64_Shdr){.sh_name = 1,
				    .sh_type = SHT_STRTAB,
				    .sh_offset = strtab,
				    .sh_size = strsz,
				    .sh_addralign = 1};
	return 0;
}

/* Inflate or copy section @i into the image; a failed one is dropped. */
static void fill_one(struct rpt_dwload_build *b, int i)
{
	const struct dwl_sect *v = &b->v[i];
	bool z = v->sh.sh_flags & SHF_COMPRESSED;
	size_t hdr = z ? sizeof(Elf64_Chdr) : 0;
	char *img = b->d->image;
	int err = !v->raw || v->raw_size < (z ? hdr : v->size) ? -EBADMSG : 0;

	if (!err && z)
		err = inflate_sect(v->raw + hdr, v->raw_size - hdr, (uint8_t *)img + v->off,
				   v->size, b->stop);
	else if (!err)
		memcpy(img + v->off, v->raw, v->size);
	if (err == -ECANCELED) {
		__atomic_store_n(&b->err, err, __ATOMIC_RELAXED);
	} else if (err) {
		Elf64_Shdr *sh = (Elf64_Shdr *)(img + ((Elf64_Ehdr *)img)->e_shoff);

		sh[i + 1].sh_type = SHT_NOBITS; /* libdw skips it */
		if (!strcmp(v->name, ".debug_info"))
			b->no_info = true; /* no DWARF at all, as libdw decides */
	}
}

int rpt_dwload__fill(struct rpt_dwload_build *b)
{
	int i, n = 0;

	while ((i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED)) < b->n) {
		fill_one(b, i);
		n++;
	}
	return n;
}

int rpt_dwload__sections(const struct rpt_dwload_build *b)
{
	return b->n > 0 ? b->n : 0;
}

static bool build_id_is(Elf *elf, const char *hex)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *id = NULL;
	ssize_t len = dwelf_elf_gnu_build_id(elf, (const void **)&id);

	if (len < 0 || strlen(hex) != 2 * (size_t)len)
		return false;
	for (ssize_t i = 0; i < len; i++)
		if (hex[2 * i] != digits[id[i] >> 4] || hex[2 * i + 1] != digits[id[i] & 15])
			return false;
	return true;
}

/* libdwfl's per-unit runs of the sorted aranges (libdwfl/cu.c, addrarange). */
static int load_runs(struct rpt_dwload *d)
{
	Dwarf_Aranges *ar;
	size_t n;
	Dwarf_Off last = 0;

	if (!d->dw || dwarf_getaranges(d->dw, &ar, &n) || !n)
		return 0;
	d->runs = malloc(n * sizeof(*d->runs));
	if (!d->runs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Addr start;
		Dwarf_Word len;
		Dwarf_Off off;

		if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &start, &len, &off))
			return 0;
		if (i == n - 1)
			d->last_end = start + len;
		if (i && off == last)
			continue;
		d->runs[d->nruns++] = (struct dwl_run){start, off};
		last = off;
	}
	return 0;
}

/* Inflated size of .debug_info (or .zdebug_info) of a file libdw reads itself. */
static size_t info_size(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;
		GElf_Chdr ch;
		Elf_Data *raw;
		const uint8_t *b;
		size_t n = 0;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".debug_info"))
			return sh.sh_flags & SHF_COMPRESSED
				       ? (gelf_getchdr(scn, &ch) ? ch.ch_size : 0)
				       : sh.sh_size;
		if (strcmp(name, ".zdebug_info") || !(raw = elf_rawdata(scn, NULL)) ||
		    raw->d_size < 12 || memcmp(raw->d_buf, "ZLIB", 4))
			continue;
		b = (const uint8_t *)raw->d_buf + 4; /* big-endian size, GNU style */
		for (int i = 0; i < 8; i++)
			n = n << 8 | b[i];
		return n;
	}
	return 0;
}

void rpt_dwload__abort(struct rpt_dwload_build *b)
{
	if (!b)
		return;
	elf_end(b->file);
	rpt_dwload__free(b->d);
	free(b->v);
	free(b);
}

struct rpt_dwload_build *rpt_dwload__begin(const char *path, bool lines, const char *hex,
					   const bool *stop)
{
	struct rpt_dwload_build *b = calloc(1, sizeof(*b));
	size_t nsec = 0;
	int err = -ENOMEM;

	if (!b || !(b->d = calloc(1, sizeof(*b->d))))
		goto cleanup;
	b->stop = stop;
	b->n = -1;
	b->d->fd = open(path, O_RDONLY | O_CLOEXEC);
	err = b->d->fd < 0 ? -errno : -ENOEXEC;
	if (b->d->fd < 0 || !(b->file = elf_begin(b->d->fd, ELF_C_READ_MMAP, NULL)) ||
	    !gelf_getehdr(b->file, &b->eh) || (hex && !build_id_is(b->file, hex)))
		goto cleanup;
	err = -ENOMEM;
	if (image_fits(b->file, &b->eh) && !elf_getshdrnum(b->file, &nsec) &&
	    (b->v = calloc(nsec + 1, sizeof(*b->v))))
		b->n = plan(b->file, lines, b->v, nsec + 1, &b->d->info_size);
	if (b->n >= 0 && image_begin(b))
		goto cleanup;
	return b;
cleanup:
	rpt_dwload__abort(b);
	errno = -err;
	return NULL;
}

struct rpt_dwload *rpt_dwload__end(struct rpt_dwload_build *b)
{
	struct rpt_dwload *d = b->d;
	int err = __atomic_load_n(&b->err, __ATOMIC_RELAXED);

	if (err) {
		rpt_dwload__abort(b);
		errno = -err;
		return NULL;
	}
	if (b->n < 0) {
		d->elf = b->file; /* as libdwfl did: libdw inflates what it wants */
		b->file = NULL;
	} else if (!b->no_info) {
		d->elf = elf_memory(d->image, d->image_len);
	}
	elf_end(b->file);
	if (b->n >= 0) { /* the image stands alone */
		close(d->fd);
		d->fd = -1;
	}
	if (d->elf)
		d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	if (d->dw && !d->info_size)
		d->info_size = info_size(d->elf);
	free(b->v);
	free(b);
	if (load_runs(d)) {
		rpt_dwload__free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

struct rpt_dwload *rpt_dwload__open(const char *path, bool lines)
{
	struct rpt_dwload_build *b = rpt_dwload__begin(path, lines, NULL, NULL);

	if (!b)
		return NULL;
	rpt_dwload__fill(b);
	return rpt_dwload__end(b);
}

void rpt_dwload__free(struct rpt_dwload *d)
{
	if (!d)
		return;
	if (d->dw)
		dwarf_end(d->dw);
	elf_end(d->elf);
	if (d->image)
		munmap(d->image, d->image_len);
	if (d->fd >= 0)
		close(d->fd);
	free(d->runs);
	free(d);
}

Dwarf_Die *rpt_dwload__cu(struct rpt_dwload *d, Dwarf_Addr addr, Dwarf_Die *cu)
{
	size_t l = 0, u = d->nruns;

	while (l < u) {
		size_t idx = (l + u) / 2;
		Dwarf_Addr start = d->runs[idx].start;

		if (addr < start) {
			u = idx;
			continue;
		}
		if (addr > start) {
			if (idx + 1 < d->nruns && addr >= d->runs[idx + 1].start) {
				l = idx + 1;
				continue;
			}
			if (idx + 1 == d->nruns && addr > d->last_end)
				return NULL;
		}
		if (d->info_size && d->runs[idx].cu + 4 >= d->info_size)
			return NULL;
		return dwarf_offdie(d->dw, d->runs[idx].cu, cu);
	}
	return NULL;
}

int rpt_dwload__line(struct rpt_dwload *d, Dwarf_Die *cu, Dwarf_Addr addr, const char **file,
		     int *line)
{
	Dwarf_Line *l = dwarf_getsrc_die(cu, addr);

	(void)d;
	if (!l)
		return -ENOENT;
	*file = dwarf_linesrc(l, NULL, NULL);
	dwarf_lineno(l, line);
	return 0;
}
