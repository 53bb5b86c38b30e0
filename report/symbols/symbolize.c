// SPDX-License-Identifier: MIT
/*
 * symbolize.c - the binary registry and the (binary, file offset) -> frames
 * cache. Finds each binary's symbol source once (debug file by build id,
 * binary with a matching build id, embedded symbols), keeps the reason a
 * better source was unusable, and demangles (demangle.c). One pool holds
 * every name.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwprefetch.h"
#include "elfsym.h"
#include "grow.h"
#include "profile.h"
#include "saf.h"
#include "symbolize_int.h"
#include "symrank.h"

#define SYM_CACHE_OFF_BITS 44

/*
 * libdebuginfod's client, opaque as in its own header: the library is
 * dlopen()ed (dbgd_load), so its -dev package is no build dependency.
 */
typedef struct debuginfod_client debuginfod_client;

struct rpt_symbolizer *rpt_symbolizer__new(const struct rpt_symbolizer_opts *o)
{
	struct rpt_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (o)
		s->o = *o;
	if (rpt_strpool__init(&s->pool)) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	elf_version(EV_CURRENT); /* before any second thread uses libelf */
	s->prefetch = s->o.no_prefetch ? NULL : rpt_dwprefetch__new(s->o.lines);
	return s;
}

void rpt_symbolizer__free(struct rpt_symbolizer *s)
{
	if (!s)
		return;
	rpt_symdisk__flush(s);
	rpt_dwprefetch__free(s->prefetch);
	rpt_symcache__free(s->disk);
	for (size_t i = 0; i < s->ndsos; i++)
		rpt_elfsym__free(s->dsos[i].elf);
	free(s->dsos);
	free(s->syms);
	rpt_hmap__fini(&s->dso_index);
	rpt_hmap__fini(&s->cache);
	rpt_hmap__fini(&s->names);
	rpt_hmap__fini(&s->disk_names);
	rpt_symtab__fini(&s->usyms);
	rpt_symlines__fini(&s->ulines);
	rpt_strpool__fini(&s->pool);
	free(s);
}

static void elfsym_free(void *e)
{
	rpt_elfsym__free(e);
}

void rpt_symbolizer__retire(struct rpt_symbolizer *s)
{
	rpt_symdisk__flush(s);
	for (size_t i = 0; i < s->ndsos; i++) {
		struct rpt_elfsym *e = s->dsos[i].elf;

		s->dsos[i].elf = NULL;
		if (e && (!s->prefetch || rpt_dwprefetch__drop(s->prefetch, elfsym_free, e)))
			rpt_elfsym__free(e);
	}
}

struct rpt_strpool *rpt_symbolizer__pool(struct rpt_symbolizer *s)
{
	return &s->pool;
}

struct rpt_dso *rpt_symbolizer__get(struct rpt_symbolizer *s, uint32_t idx)
{
	return idx < s->ndsos ? &s->dsos[idx] : NULL;
}

size_t rpt_symbolizer__ndsos(const struct rpt_symbolizer *s)
{
	return s->ndsos;
}

static void to_hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

static int dso_add(struct rpt_symbolizer *s, const char *hex, const char *path, uint32_t file_idx)
{
	struct rpt_dso *d;
	int64_t p, b;

	if (SAC_GROW(s->dsos, s->dsos_cap, s->ndsos + 1, 64))
		return -ENOMEM;
	p = intern(s, path);
	b = intern(s, hex);
	if (p < 0 || b < 0)
		return -ENOMEM;
	d = &s->dsos[s->ndsos];
	memset(d, 0, sizeof(*d));
	d->path = p;
	d->build_id = b;
	d->file_idx = file_idx;
	d->prefetch = -1;
	return s->ndsos++;
}

/*
 * The debug file of a binary with a build id is likely to be opened, and
 * inflating its DWARF is the longest step of symbolization: start it on
 * the prefetcher's thread while the recording is still being read. The
 * first debug directory holding a file of that name is the one
 * find_debug_file() will pick, unless its build id differs (then the
 * prefetched DWARF is simply not used).
 */
static void prefetch(struct rpt_symbolizer *s, struct rpt_dso *d, const char *hex)
{
	size_t ndirs = s->o.ndebug_dirs + !s->o.no_system_debug;
	char path[PATH_MAX];

	if (!s->prefetch || strlen(hex) < 4)
		return;
	if (rpt_symdisk__has(s, hex))
		return; /* seen before: its lookups are likely answered from disk */
	for (size_t i = 0; i < ndirs; i++) {
		const char *dir = i < s->o.ndebug_dirs ? s->o.debug_dirs[i] : "/usr/lib/debug";

		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
		if (!access(path, R_OK)) {
			d->prefetch = rpt_dwprefetch__want(s->prefetch, path, hex);
			return;
		}
	}
}

int rpt_symbolizer__dso(struct rpt_symbolizer *s, const uint8_t *bid, size_t bid_len,
			const char *path, uint32_t file_idx)
{
	char hex[2 * 64 + 1] = "", key[PATH_MAX + 160];
	uint64_t idx;
	int64_t k;
	int ret;

	if (bid_len > 64)
		bid_len = 64;
	to_hex(bid, bid_len, hex);
	if (bid_len) { /* once per mapping record: no printf */
		memcpy(key, "b:", 2);
		memcpy(key + 2, hex, 2 * bid_len + 1);
	} else {
		snprintf(key, sizeof(key), "p:%u:%s", file_idx, path ? path : "");
	}
	k = intern(s, key);
	if (k < 0)
		return -ENOMEM;
	if (rpt_hmap__get(&s->dso_index, k, &idx)) {
		if (s->dsos[idx].prefetch >= 0 && !s->dsos[idx].opened)
			rpt_dwprefetch__bump(s->prefetch, s->dsos[idx].prefetch);
		return (int)idx;
	}
	ret = dso_add(s, hex, path ? path : "", file_idx);
	if (ret >= 0 && rpt_hmap__put(&s->dso_index, k, ret))
		return -ENOMEM;
	if (ret >= 0 && bid_len)
		prefetch(s, &s->dsos[ret], hex);
	return ret;
}

int rpt_symbolizer__add_usym(struct rpt_symbolizer *s, uint32_t dso, uint64_t offset, uint64_t size,
			     const char *name)
{
	int64_t n = intern(s, name);

	if (n < 0 || dso >= s->ndsos)
		return n < 0 ? -ENOMEM : -EINVAL;
	s->dsos[dso].has_usyms = true;
	return rpt_symtab__add(&s->usyms, dso, offset, size, n);
}

int rpt_symbolizer__add_uline(struct rpt_symbolizer *s, uint32_t dso, uint64_t offset,
			      uint64_t size, uint32_t depth, uint32_t line, const char *file,
			      const char *name)
{
	int64_t f = intern(s, file), n = intern(s, name);

	if (f < 0 || n < 0 || dso >= s->ndsos)
		return f < 0 || n < 0 ? -ENOMEM : -EINVAL;
	s->dsos[dso].has_usyms = true;
	return rpt_symlines__add(&s->ulines, &(struct rpt_symline){dso, offset, size, depth, line,
								   (uint32_t)f, (uint32_t)n});
}

void rpt_symbolizer__set_id_kind(struct rpt_symbolizer *s, uint32_t idx, uint32_t kind)
{
	if (idx < s->ndsos && kind)
		s->dsos[idx].id_kind = kind;
}

/* A file's build id (or content hash, by the dso's id_kind) equals the recorded one (hex). */
static int build_id_check(struct rpt_symbolizer *s, const struct rpt_dso *d, const char *path)
{
	const char *want = rpt_strpool__str(&s->pool, d->build_id);
	char hex[2 * 64 + 1] = "";
	uint8_t id[64];
	int n = d->id_kind == SAF_ID_GNU       ? rpt_elf__build_id(path, id, sizeof(id))
		: d->id_kind == SAF_ID_CONTENT ? rpt_elf__content_id(path, id, sizeof(id))
					       : -ESTALE;

	if (n < 0)
		return n;
	to_hex(id, n, hex);
	if (*want && strcmp(want, hex))
		return -ESTALE;
	return 0;
}

static bool find_debug_file(struct rpt_symbolizer *s, const struct rpt_dso *d, char *out,
			    size_t cap)
{
	const char *hex = rpt_strpool__str(&s->pool, d->build_id);
	size_t ndirs = s->o.ndebug_dirs + !s->o.no_system_debug;

	if (strlen(hex) < 4 || d->id_kind != SAF_ID_GNU) /* no debug file by content hash */
		return false;
	for (size_t i = 0; i < ndirs; i++) {
		const char *dir = i < s->o.ndebug_dirs ? s->o.debug_dirs[i] : "/usr/lib/debug";

		snprintf(out, cap, "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
		if (!build_id_check(s, d, out))
			return true;
	}
	return false;
}

static bool find_binary(struct rpt_symbolizer *s, struct rpt_dso *d, char *out, size_t cap)
{
	const char *path = rpt_strpool__str(&s->pool, d->path);
	bool mismatch = false;

	if (path[0] != '/') { /* [vdso], anon, memfd: nothing on disk */
		rpt_symbolizer__set_reason(s, d, "no file", NULL);
		return false;
	}
	for (int pass = s->o.symfs ? 0 : 1; pass < 2; pass++) {
		int err;

		/* set_reason() of pass 0 may have moved the pool */
		path = rpt_strpool__str(&s->pool, d->path);
		snprintf(out, cap, "%s%s", pass ? "" : s->o.symfs, path);
		err = build_id_check(s, d, out);
		if (!err)
			return true;
		if (err == -ESTALE || err == -EPERM || err == -EFBIG) {
			rpt_symbolizer__set_reason(s, d,
						   err == -ESTALE && d->id_kind
							   ? "content hash mismatch"
						   : err == -ESTALE ? "build id mismatch"
						   : err == -EPERM  ? "not a regular file"
								    : "too large",
						   out);
			mismatch = true;
		}
	}
	if (!mismatch)
		rpt_symbolizer__set_reason(s, d, "not found", NULL);
	return false;
}

/*
 * libdebuginfod, opened only when DEBUGINFOD_URLS is set: it needs libcurl
 * and some thirty libraries more, whose loading and relocation at startup
 * cost sa-report more time (9 ms) than reading a recording. Never closed.
 */
struct dbgd_api {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	void (*end)(debuginfod_client *);
};

static bool dbgd_load(struct dbgd_api *a)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return false;
	*(void **)&a->begin = dlsym(h, "debuginfod_begin");
	*(void **)&a->find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&a->end = dlsym(h, "debuginfod_end");
	return a->begin && a->find_debuginfo && a->end;
}

/*
 * Last in the lookup order (DESIGN.md, "Symbolization, offline"): a debug
 * file from the servers in DEBUGINFOD_URLS, only when the user set it; the
 * client keeps its own cache. @out gets the cached file's path.
 */
static bool fetch_debuginfod(struct rpt_symbolizer *s, const struct rpt_dso *d, char *out,
			     size_t cap)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	const char *hex = rpt_strpool__str(&s->pool, d->build_id);
	struct dbgd_api api;
	debuginfod_client *c;
	char *path = NULL;
	int fd;

	if (!urls || !*urls || strlen(hex) < 4 || d->id_kind != SAF_ID_GNU || !dbgd_load(&api))
		return false;
	c = api.begin();
	if (!c)
		return false;
	fd = api.find_debuginfo(c, (const unsigned char *)hex, 0, &path);
	api.end(c);
	if (fd < 0)
		return false;
	close(fd);
	snprintf(out, cap, "%s", path);
	free(path);
	return !build_id_check(s, d, out);
}

static void dso_open(struct rpt_symbolizer *s, struct rpt_dso *d)
{
	char bin[PATH_MAX], dbg[PATH_MAX];
	enum rpt_dso_source want;
	struct rpt_symcache_ent *fresh = NULL;
	bool have_dbg, have_bin;
	int64_t used = 0;

	d->opened = true;
	have_dbg = find_debug_file(s, d, dbg, sizeof(dbg));
	have_bin = find_binary(s, d, bin, sizeof(bin));
	want = have_dbg ? RPT_SRC_DEBUG_FILE : RPT_SRC_BINARY;
	if ((have_dbg || have_bin) &&
	    rpt_symdisk__open(s, d, have_dbg ? dbg : bin, have_bin ? bin : NULL, want, &fresh))
		return;
	if (have_dbg) {
		struct rpt_dwload *dw = s->prefetch ? rpt_dwprefetch__take(s->prefetch, dbg) : NULL;

		d->elf = rpt_elfsym__open(dbg, have_bin ? bin : NULL);
		if (d->elf)
			rpt_elfsym__set_dwarf(d->elf, dw);
		else
			rpt_dwload__free(dw);
		d->source = RPT_SRC_DEBUG_FILE;
		used = intern(s, dbg);
	}
	if (!d->elf && have_bin) {
		d->elf = rpt_elfsym__open(bin, bin);
		d->source = RPT_SRC_BINARY;
		used = intern(s, bin);
		if (d->elf && !rpt_elfsym__has_symtab(d->elf))
			rpt_symbolizer__set_reason(s, d, "stripped (dynamic symbols only)", NULL);
		else if (d->elf)
			d->reason = 0;
	}
	if (!d->elf) {
		d->source = d->has_usyms ? RPT_SRC_EMBEDDED : RPT_SRC_NONE;
		used = 0;
	}
	if (!d->elf && !d->has_usyms && fetch_debuginfod(s, d, dbg, sizeof(dbg))) {
		d->elf = rpt_elfsym__open(dbg, NULL);
		if (d->elf) {
			d->source = RPT_SRC_DEBUGINFOD;
			used = intern(s, dbg);
			d->reason = 0;
		}
	}
	if (d->source == RPT_SRC_DEBUG_FILE && d->elf)
		d->reason = 0;
	d->used_path = used > 0 ? used : 0;
	rpt_symdisk__keep(s, d, fresh, want, have_bin, bin);
}

bool rpt_symbolizer__async(const struct rpt_symbolizer *s)
{
	return s->prefetch && rpt_dwprefetch__busy(s->prefetch);
}

static int req_cmp(const void *a, const void *b)
{
	const struct rpt_sym_req *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int rpt_symbolizer__warm(struct rpt_symbolizer *s, struct rpt_sym_req *v, size_t n)
{
	const struct rpt_sym *f;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct rpt_dso *d = v[i].dso < s->ndsos ? &s->dsos[v[i].dso] : NULL;
		uint64_t vaddr;

		v[i].rank = 0;
		v[i].idx = i;
		if (d && !d->opened)
			dso_open(s, d);
		if (d && d->elf && !rpt_elfsym__vaddr(d->elf, v[i].off, v[i].map_pgoff, &vaddr))
			v[i].rank = rpt_elfsym__rank(d->elf, vaddr);
	}
	if (s->prefetch) /* every binary these need is open */
		rpt_dwprefetch__hold(s->prefetch);
	qsort(v, n, sizeof(*v), req_cmp);
	for (size_t i = 0; i < n; i++) {
		int ret = rpt_symbolizer__lookup(s, v[i].dso, v[i].off, v[i].map_pgoff, &f);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Format one frame's name (demangled, with file:line) and intern it. */
static int64_t frame_name(struct rpt_symbolizer *s, const char *name, const char *file, int line)
{
	char dbuf[4096], buf[4096 + 512], vbuf[4096];
	size_t len = sac_sym__name_len(name);
	const char *base;

	/* no symbol version in a name shown (docs/sa-report.1, SYMBOL NAMES) */
	if (name[len] && len < sizeof(vbuf)) {
		memcpy(vbuf, name, len);
		vbuf[len] = '\0';
		name = vbuf;
	}
	if (!s->o.no_demangle)
		name = rpt_demangle(name, dbuf, sizeof(dbuf));
	if (!s->o.lines || !file)
		return intern(s, name);
	base = strrchr(file, '/');
	snprintf(buf, sizeof(buf), "%s %s:%d", name, base ? base + 1 : file, line);
	return intern(s, buf);
}

/*
 * frame_name() of a name borrowed from an opened ELF file, which stays
 * mapped until the symbolizer is freed: many addresses share a function,
 * so demangling is done once per name, not once per address.
 */
static int64_t elf_frame_name(struct rpt_symbolizer *s, const struct rpt_elfsym_frame *f)
{
	uint64_t key = (uintptr_t)f->name, v;
	int64_t name;

	if (s->o.lines)
		return frame_name(s, f->name, f->file, f->line);
	if (rpt_hmap__get(&s->names, key, &v))
		return v;
	name = frame_name(s, f->name, NULL, 0);
	if (name >= 0 && rpt_hmap__put(&s->names, key, name))
		return -ENOMEM;
	return name;
}

/* The frames of @d's own files: fill s->tmp. @return their number or -ENOMEM. */
static int elf_resolve(struct rpt_symbolizer *s, struct rpt_dso *d, uint64_t off,
		       uint64_t map_pgoff)
{
	struct rpt_elfsym_frame fr[SYM_MAX_FRAMES];
	uint64_t vaddr;
	int n = 0;

	if (d->cent) {
		n = rpt_symdisk__get(s, d, off, map_pgoff);
		if (n != -ENOENT)
			return n;
		n = 0;
	}
	if (d->deferred)
		rpt_symdisk__open_deferred(s, d);
	if (d->elf && !rpt_elfsym__vaddr(d->elf, off, map_pgoff, &vaddr))
		n = rpt_elfsym__frames(d->elf, vaddr, s->o.lines, fr, SYM_MAX_FRAMES);
	for (int i = 0; i < n; i++) {
		int64_t name = elf_frame_name(s, &fr[i]);

		if (name < 0)
			return -ENOMEM;
		s->tmp[i].name = name;
		s->tmp[i].kind = fr[i].inlined ? RPT_FRAME_INLINE : RPT_FRAME_USER;
	}
	if (d->cent && d->elf)
		rpt_symdisk__put(s, d, off, map_pgoff, n);
	return n;
}

/*
 * The @n frames of carried source positions @v (ULINE, depth 0 first) into
 * s->tmp, innermost first; the function itself named by its USYM @u when
 * there is one, as without positions. @return @n or -ENOMEM.
 */
static int carried_lines(struct rpt_symbolizer *s, const struct rpt_symtab_ent *u,
			 const struct rpt_symline *v, size_t n)
{
	if (n > SYM_MAX_FRAMES)
		n = SYM_MAX_FRAMES;
	for (size_t k = 0; k < n; k++) {
		const struct rpt_symline *e = &v[n - 1 - k];
		uint32_t nm = k == n - 1 && u ? u->name : e->name;
		int64_t name = frame_name(s, rpt_strpool__str(&s->pool, nm),
					  rpt_strpool__str(&s->pool, e->file), (int)e->line);

		if (name < 0)
			return -ENOMEM;
		s->tmp[k] = (struct rpt_sym){name, k == n - 1 ? RPT_FRAME_USER : RPT_FRAME_INLINE};
	}
	return (int)n;
}

/* Resolve uncached: fill s->tmp. @return number of frames or -ENOMEM. */
static int resolve(struct rpt_symbolizer *s, struct rpt_dso *d, uint32_t dso, uint64_t off,
		   uint64_t map_pgoff)
{
	const struct rpt_symtab_ent *u;
	const struct rpt_symline *v;
	int n = elf_resolve(s, d, off, map_pgoff);
	size_t nl;

	if (n < 0)
		return n;
	if (n || !d->has_usyms)
		return n;
	u = rpt_symtab__lookup(&s->usyms, dso, off);
	nl = rpt_symlines__lookup(&s->ulines, dso, off, &v);
	if (nl)
		return carried_lines(s, u, v, nl);
	if (!u)
		return 0;
	{
		int64_t name = frame_name(s, rpt_strpool__str(&s->pool, u->name), NULL, 0);

		if (name < 0)
			return -ENOMEM;
		s->tmp[0] = (struct rpt_sym){name, RPT_FRAME_USER};
	}
	return 1;
}

static int cache_store(struct rpt_symbolizer *s, uint64_t key, int n)
{
	if (SAC_GROW(s->syms, s->syms_cap, s->nsyms + n, 1024))
		return -ENOMEM;
	if (n) /* s->syms is still NULL when nothing was stored */
		memcpy(s->syms + s->nsyms, s->tmp, n * sizeof(*s->tmp));
	if (rpt_hmap__put(&s->cache, key, (uint64_t)s->nsyms << 8 | n))
		return -ENOMEM;
	s->nsyms += n;
	return 0;
}

int rpt_symbolizer__lookup(struct rpt_symbolizer *s, uint32_t dso, uint64_t off, uint64_t map_pgoff,
			   const struct rpt_sym **frames)
{
	uint64_t key = (uint64_t)dso << SYM_CACHE_OFF_BITS | off, v;
	bool cacheable = off < (1ULL << SYM_CACHE_OFF_BITS) && dso < (1u << 20);
	struct rpt_dso *d;
	int n;

	if (dso >= s->ndsos)
		return 0;
	if (cacheable && rpt_hmap__get(&s->cache, key, &v)) {
		/* s->syms is NULL while only empty results are cached */
		*frames = v & 0xff ? s->syms + (v >> 8) : s->tmp;
		return v & 0xff;
	}
	d = &s->dsos[dso];
	if (!d->opened)
		dso_open(s, d);
	n = resolve(s, d, dso, off, map_pgoff);
	if (n < 0)
		return n;
	if (cacheable && cache_store(s, key, n))
		return -ENOMEM;
	*frames = cacheable && n ? s->syms + s->nsyms - n : s->tmp;
	return n;
}
