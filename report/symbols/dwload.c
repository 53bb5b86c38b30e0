// SPDX-License-Identifier: MIT
/*
 * dwload.c - DWARF of one file for symbolization (see dwload.h). libdw
 * inflates every compressed debug section at dwarf_begin_elf(), location
 * lists included; a Debian libc debug file is 10 MB inflated, most of the
 * time sa-report spent. We inflate only what is read, into one image that
 * libelf opens from memory; two threads can fill one image (dwprefetch.c),
 * and its units can be read while .debug_info is still being inflated.
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
#ifndef SA_INFLATE_ZLIB
#include <isa-l/igzip_lib.h>
#endif
#include <elfutils/libdwelf.h>

#include "binopen.h"
#include "dwload.h"
#include "dwunits.h"

#define DWL_ALIGN 16
#define DWL_HUGE  (2u << 20)
#define DWL_STEP  (256u << 10) /* also how often readers of .debug_info learn of more */

struct rpt_dwload {
	int fd;	   /* the file, kept open only when libdw reads it itself */
	Elf *elf;  /* the file, or the image */
	Dwarf *dw; /* NULL when the file has no usable DWARF */
	void *image;
	size_t image_len, info_size;
	struct rpt_dwunits units;
	bool cancel; /* atomic: rpt_dwload__free() stops a fill of .debug_info */
};

struct dwl_sect {
	GElf_Shdr sh;
	const char *name;
	const uint8_t *raw; /* its bytes in the file: fills touch no libelf state */
	size_t raw_size, size, off, name_off;
	bool done;   /* atomic: filled (or failed) */
	bool failed; /* dropped: SHT_NOBITS in the image */
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

static bool inflate_stopped(const bool *stop, struct rpt_dwload *info)
{
	return (stop && __atomic_load_n(stop, __ATOMIC_RELAXED)) ||
	       (info && __atomic_load_n(&info->cancel, __ATOMIC_RELAXED));
}

static bool zlib_header_ok(const uint8_t *src, size_t n, size_t want)
{
	return n >= 2 && n <= UINT_MAX && want <= UINT_MAX && (src[0] & 0x0f) == Z_DEFLATED &&
	       !((src[0] << 8 | src[1]) % 31) && !(src[1] & 0x20);
}

#ifdef SA_INFLATE_ZLIB /* the static build's: Debian ships no static ISA-L */
static int inflate_sect(const uint8_t *src, size_t n, uint8_t *dst, size_t want, const bool *stop,
			struct rpt_dwload *info)
{
	z_stream z = {.next_in = (Bytef *)src + 2, .avail_in = n - 2, .next_out = dst};
	uint8_t extra;
	int ret = Z_OK;

	if (!zlib_header_ok(src, n, want) || inflateInit2(&z, -MAX_WBITS) != Z_OK)
		return -EBADMSG;
	while (ret == Z_OK && z.total_out < want) {
		if (inflate_stopped(stop, info)) {
			inflateEnd(&z);
			return -ECANCELED;
		}
		z.avail_out = want - z.total_out < DWL_STEP ? want - z.total_out : DWL_STEP;
		ret = inflate(&z, Z_NO_FLUSH);
		if (info && ret == Z_OK && z.total_out < want)
			rpt_dwunits__arrived(&info->units, z.total_out, false);
	}
	if (ret == Z_OK) { /* a trailing empty block */
		z.next_out = &extra;
		z.avail_out = 1;
		ret = inflate(&z, Z_NO_FLUSH);
		ret = z.avail_out == 1 ? ret : Z_DATA_ERROR;
	}
	inflateEnd(&z);
	return ret == Z_STREAM_END && z.total_out == want ? 0 : -EBADMSG;
}
#else
/*
 * Inflate an ELFCOMPRESS_ZLIB payload with ISA-L, which streams like zlib
 * at twice its speed here (libc's .debug_info, 2.3 MB to 5.8 MB: 14 ms
 * against zlib's 32 ms). Raw inflate past the two-byte zlib header skips
 * the adler32 of the trailer: the build id already vouches for the file.
 * It goes in steps, so that a prefetch nobody waits for stops soon and readers
 * of a .debug_info (@info) go on with each step. A failed section is dropped.
 */
static int inflate_sect(const uint8_t *src, size_t n, uint8_t *dst, size_t want, const bool *stop,
			struct rpt_dwload *info)
{
	struct inflate_state z;
	int ret = ISAL_DECOMP_OK;

	if (!zlib_header_ok(src, n, want))
		return -EBADMSG;
	isal_inflate_init(&z);
	z.crc_flag = ISAL_DEFLATE;
	z.next_in = (uint8_t *)src + 2;
	z.avail_in = n - 2;
	z.next_out = dst;
	while (ret == ISAL_DECOMP_OK && z.block_state != ISAL_BLOCK_FINISH && z.total_out < want) {
		uint32_t before = z.total_out;

		if (inflate_stopped(stop, info))
			return -ECANCELED;
		z.avail_out = want - z.total_out < DWL_STEP ? want - z.total_out : DWL_STEP;
		ret = isal_inflate(&z);
		if (ret == ISAL_DECOMP_OK && z.total_out == before && !z.avail_in)
			break; /* input ended early */
		if (info && ret == ISAL_DECOMP_OK && z.total_out < want)
			rpt_dwunits__arrived(&info->units, z.total_out, false);
	}
	if (ret == ISAL_DECOMP_OK &&
	    z.block_state != ISAL_BLOCK_FINISH) { /* trailing empty block */
		uint8_t extra;

		z.next_out = &extra;
		z.avail_out = 1;
		ret = isal_inflate(&z);
		if (z.avail_out != 1)
			ret = ISAL_INVALID_BLOCK;
	}
	return ret == ISAL_DECOMP_OK && z.block_state == ISAL_BLOCK_FINISH && z.total_out == want
		       ? 0
		       : -EBADMSG;
}
#endif

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
	struct dwl_sect *v; /* in the order they are claimed in (claim_cmp()) */
	int n;		    /* sections kept, -1 when libdw reads the file itself */
	int next;	    /* next section to claim (atomic) */
	int err;	    /* -ECANCELED when stopped (atomic) */
	int info;	    /* index of .debug_info in v (the last), or -1 */
	bool info_claimed;  /* atomic */
	bool handed;	    /* rpt_dwload__dwarf() gave d away */
	const bool *stop;
};

/*
 * Sections in claim order: the others largest first, then .debug_info,
 * which only a fill that may wait for it claims, and first of all (see
 * rpt_dwload__fill()). The DWARF can be handed out once the others are in.
 */
static int claim_cmp(const void *a, const void *b)
{
	const struct dwl_sect *x = a, *y = b;
	bool xi = !strcmp(x->name, ".debug_info"), yi = !strcmp(y->name, ".debug_info");

	if (xi != yi)
		return xi ? 1 : -1;
	return x->size > y->size ? -1 : x->size < y->size;
}

/* Allocate the image and write every header. @return 0 or -ENOMEM. */
static int image_begin(struct rpt_dwload_build *b)
{
	size_t strtab, strsz, shoff, len;
	Elf64_Ehdr *e;
	Elf64_Shdr *sh;
	char *img;

	qsort(b->v, b->n, sizeof(*b->v), claim_cmp);
	len = layout(b->v, b->n, &strtab, &strsz, &shoff);
	img = image_alloc(len);
	if (!img)
		return -ENOMEM;
	b->d->image = img;
	b->d->image_len = len;
	for (int i = 0; i < b->n; i++)
		if (!strcmp(b->v[i].name, ".debug_info"))
			b->info = i;
	if (b->info >= 0)
		rpt_dwunits__init(&b->d->units, (uint8_t *)img + b->v[b->info].off,
				  b->v[b->info].size, true);
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

/*
 * Inflate or copy section @i into the image; a failed one is dropped. Of a
 * .debug_info that fails, the units inflated before the failure stay
 * readable (rpt_dwunits__arrived() told readers where it stopped), so
 * the outcome does not depend on which thread read what first.
 */
static void fill_one(struct rpt_dwload_build *b, int i)
{
	struct dwl_sect *v = &b->v[i];
	bool z = v->sh.sh_flags & SHF_COMPRESSED, info = i == b->info;
	size_t hdr = z ? sizeof(Elf64_Chdr) : 0;
	char *img = b->d->image;
	int err = !v->raw || v->raw_size < (z ? hdr : v->size) ? -EBADMSG : 0;

	if (!err && z)
		err = inflate_sect(v->raw + hdr, v->raw_size - hdr, (uint8_t *)img + v->off,
				   v->size, b->stop, info ? b->d : NULL);
	else if (!err)
		memcpy(img + v->off, v->raw, v->size);
	if (err == -ECANCELED) {
		__atomic_store_n(&b->err, err, __ATOMIC_RELAXED);
	} else if (err && !info) {
		Elf64_Shdr *sh = (Elf64_Shdr *)(img + ((Elf64_Ehdr *)img)->e_shoff);

		sh[i + 1].sh_type = SHT_NOBITS; /* libdw skips it */
		v->failed = true;
	}
	if (info) /* the last publication: readers stop waiting */
		rpt_dwunits__arrived(&b->d->units, err ? b->d->units.ready : v->size, true);
	__atomic_store_n(&v->done, true, __ATOMIC_RELEASE);
}

int rpt_dwload__fill(struct rpt_dwload_build *b, bool info)
{
	int i, n = 0, others = b->info >= 0 ? b->info : b->n; /* .debug_info is last */

	if (info && b->info >= 0 &&
	    !__atomic_exchange_n(&b->info_claimed, true, __ATOMIC_RELAXED)) {
		fill_one(b, b->info);
		n++;
	}
	while ((i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED)) < others) {
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

/* Free an unfinished build. Accepts NULL. */
static void build_abort(struct rpt_dwload_build *b)
{
	if (!b)
		return;
	elf_end(b->file);
	if (!b->handed && b->d && b->d->units.inited) /* no fill runs: none will */
		rpt_dwunits__arrived(&b->d->units, b->d->units.ready, true);
	if (!b->handed)
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
	b->info = -1;
	b->d->fd = rpt_bin_open(path);
	err = b->d->fd < 0 ? b->d->fd : -ENOEXEC;
	if (b->d->fd < 0)
		b->d->fd = -1;
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
	build_abort(b);
	errno = -err;
	return NULL;
}

bool rpt_dwload__ready(const struct rpt_dwload_build *b)
{
	for (int i = 0; i < b->n; i++)
		if (i != b->info && !__atomic_load_n(&b->v[i].done, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/* Section @name in the image, or NULL (absent or dropped). */
static const uint8_t *image_sect(const struct rpt_dwload_build *b, const char *name, size_t *size)
{
	for (int i = 0; i < b->n; i++)
		if (!strcmp(b->v[i].name, name) && !b->v[i].failed) {
			*size = b->v[i].size;
			return (const uint8_t *)b->d->image + b->v[i].off;
		}
	*size = 0;
	return NULL;
}

struct rpt_dwload *rpt_dwload__dwarf(struct rpt_dwload_build *b)
{
	struct rpt_dwload *d = b->d;
	int err = __atomic_load_n(&b->err, __ATOMIC_RELAXED);
	const uint8_t *ar = NULL, *ab = NULL;
	size_t ar_size = 0, ab_size = 0;

	if (err || b->handed) {
		errno = err ? -err : EALREADY;
		return NULL;
	}
	if (b->n < 0) {
		d->elf = b->file; /* as libdwfl did: libdw inflates what it wants */
		b->file = NULL;
	} else {
		d->elf = elf_memory(d->image, d->image_len);
		close(d->fd); /* the image stands alone */
		d->fd = -1;
		ar = image_sect(b, ".debug_aranges", &ar_size);
		ab = image_sect(b, ".debug_abbrev", &ab_size);
	}
	if (d->elf)
		d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	if (d->dw && !d->info_size)
		d->info_size = info_size(d->elf);
	if (!d->units.inited) /* every unit is in place */
		rpt_dwunits__init(&d->units, NULL, d->info_size, false);
	if (rpt_dwunits__load(&d->units, d->dw, ar, ar_size, ab, ab_size)) {
		errno = ENOMEM;
		return NULL;
	}
	b->handed = true;
	return d;
}

struct rpt_dwload *rpt_dwload__end(struct rpt_dwload_build *b)
{
	bool early = b->handed;
	struct rpt_dwload *d = early ? NULL : rpt_dwload__dwarf(b);
	int err = d || early ? 0 : errno;

	build_abort(b); /* d, once handed, is not freed */
	errno = err;
	return d;
}

struct rpt_dwload *rpt_dwload__open(const char *path, bool lines)
{
	struct rpt_dwload_build *b = rpt_dwload__begin(path, lines, NULL, NULL);

	if (!b)
		return NULL;
	rpt_dwload__fill(b, true);
	return rpt_dwload__end(b);
}

void rpt_dwload__free(struct rpt_dwload *d)
{
	if (!d)
		return;
	if (d->units.inited && rpt_dwunits__filling(&d->units)) {
		__atomic_store_n(&d->cancel, true, __ATOMIC_RELAXED);
		rpt_dwunits__wait_done(&d->units);
	}
	if (d->dw)
		dwarf_end(d->dw);
	elf_end(d->elf);
	if (d->image)
		munmap(d->image, d->image_len);
	if (d->fd >= 0)
		close(d->fd);
	rpt_dwunits__fini(&d->units);
	free(d);
}

Dwarf_Die *rpt_dwload__cu(struct rpt_dwload *d, Dwarf_Addr addr, Dwarf_Die *cu)
{
	Dwarf_Off off = d->dw ? rpt_dwunits__cu(&d->units, d->dw, addr) : 0;

	return off ? dwarf_offdie(d->dw, off, cu) : NULL;
}

uint64_t rpt_dwload__rank(struct rpt_dwload *d, Dwarf_Addr addr)
{
	return d->dw ? rpt_dwunits__rank(&d->units, addr) : 0;
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
