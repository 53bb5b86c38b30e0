// SPDX-License-Identifier: MIT
/*
 * symdisk.c - the symbolizer's use of the on-disk cache (symcache.h): a
 * binary whose files are unchanged since a report that looked it up takes
 * its frames from its entry and opens its ELF and DWARF only on a miss;
 * what lookups add is written back when the symbolizer retires.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwprefetch.h"
#include "elfsym.h"
#include "grow.h"
#include "symbolize_int.h"

#define SYM_VARIANT_LINES 1u /* names carry " file:line" */
#define SYM_VARIANT_RAW	  2u /* --no-demangle */
#define SYM_FACT_SYMTAB	  1u /* the symbol file has a full .symtab */

/*
 * The frames this run's lookups found, kept as they are (pool offsets) and
 * turned into cache entries on the worker thread: the first report of a
 * binary pays for the cache while it writes its own output, not before.
 */
struct cache_job {
	struct rpt_symcache *disk;
	char *names; /* a copy of the symbolizer's pool */
	struct rpt_symdisk_pend *pend;
	size_t npend;
	struct rpt_sym *psyms;
	size_t n;			 /* binaries */
	struct rpt_symcache_ent *ents[]; /* by binary index, NULL = none */
};

/* Add the pending lookups to their binaries' entries. */
static void job_put(struct cache_job *j)
{
	struct rpt_hmap ids = {0}; /* dso << 32 | pool offset -> name id */
	struct rpt_symcache_frame f[SYM_MAX_FRAMES];

	for (size_t i = 0; i < j->npend; i++) {
		const struct rpt_symdisk_pend *p = &j->pend[i];
		struct rpt_symcache_ent *e = j->ents[p->dso];
		bool ok = true;

		for (uint32_t k = 0; k < p->n && ok; k++) {
			const struct rpt_sym *y = &j->psyms[p->first + k];
			uint64_t key = (uint64_t)p->dso << 32 | y->name, v;
			int64_t id;

			if (!rpt_hmap__get(&ids, key, &v)) {
				id = rpt_symcache_ent__name(e, j->names + y->name);
				ok = id >= 0 && !rpt_hmap__put(&ids, key, id);
				v = id;
			}
			f[k] = (struct rpt_symcache_frame){v, y->kind};
		}
		if (ok) /* a lookup not kept is only a later miss */
			rpt_symcache_ent__put_frames(e, p->off, p->pgoff, f, p->n, true);
	}
	rpt_hmap__fini(&ids);
}

static void cache_job_run(void *arg)
{
	struct cache_job *j = arg;
	bool wrote = false;

	if (j->names)
		job_put(j);
	for (size_t i = 0; i < j->n; i++) {
		if (j->ents[i] && j->names)
			wrote |= rpt_symcache__store(j->disk, j->ents[i]) > 0;
		rpt_symcache_ent__free(j->ents[i]);
	}
	if (wrote)
		rpt_symcache__trim(j->disk);
	SAC_FREE_ALL(j->names, j->pend, j->psyms, j);
}

void rpt_symdisk__flush(struct rpt_symbolizer *s)
{
	struct cache_job *j;
	size_t n = 0;

	for (size_t i = 0; i < s->ndsos; i++)
		n += s->dsos[i].cent != NULL;
	j = n ? calloc(1, sizeof(*j) + s->ndsos * sizeof(j->ents[0])) : NULL;
	for (size_t i = 0; i < s->ndsos; i++) {
		if (j)
			j->ents[i] = s->dsos[i].cent;
		else
			rpt_symcache_ent__free(s->dsos[i].cent);
		s->dsos[i].cent = NULL;
	}
	if (j) {
		j->disk = s->disk;
		j->n = s->ndsos;
		j->names = malloc(s->pool.len);
		if (j->names) /* else only release the entries */
			memcpy(j->names, s->pool.buf, s->pool.len);
		j->pend = s->pend;
		j->npend = s->npend;
		j->psyms = s->psyms;
	} else {
		free(s->pend);
		free(s->psyms);
	}
	s->pend = NULL;
	s->psyms = NULL;
	s->npend = s->pend_cap = s->npsyms = s->psyms_cap = 0;
	if (j && (!s->prefetch || rpt_dwprefetch__drop(s->prefetch, cache_job_run, j)))
		cache_job_run(j);
}

static uint32_t variant(const struct rpt_symbolizer *s)
{
	return (s->o.lines ? SYM_VARIANT_LINES : 0) | (s->o.no_demangle ? SYM_VARIANT_RAW : 0);
}

/* The cache directory, opened on first use; NULL when off or not usable. */
static struct rpt_symcache *cache_dir(struct rpt_symbolizer *s)
{
	if (!s->disk_tried && !s->o.no_cache)
		s->disk = rpt_symcache__open_note(s->o.cache_dir, 0, s->disk_note,
						  sizeof(s->disk_note));
	s->disk_tried = true;
	return s->disk;
}

const char *rpt_symbolizer__cache_note(const struct rpt_symbolizer *s)
{
	if (s->o.no_cache)
		return "none: --no-cache";
	return s->disk_tried && s->disk_note[0] ? s->disk_note : NULL;
}

/*
 * The cache entry of @d's files: @sym opened with @bin, as @source. When the
 * file on disk matched, @d takes the facts its open gave then and opens
 * nothing now (true); else *@fresh gets an empty entry for dso_open() to fill.
 */
bool rpt_symdisk__open(struct rpt_symbolizer *s, struct rpt_dso *d, const char *sym,
		       const char *bin, enum rpt_dso_source source, struct rpt_symcache_ent **fresh)
{
	const char *hex = rpt_strpool__str(&s->pool, d->build_id);
	struct rpt_symcache_ent *e;
	struct rpt_symcache_id id;
	int64_t used, bp = 0;
	bool hit;

	*fresh = NULL;
	if (!*hex || !cache_dir(s))
		return false;
	rpt_symcache_id__init(&id, sym, bin, source, variant(s));
	e = rpt_symcache__load(s->disk, hex, &id, &hit);
	if (!e || !hit) {
		*fresh = e;
		return false;
	}
	used = intern(s, sym);
	if (bin)
		bp = intern(s, bin);
	if (used < 0 || bp < 0) {
		rpt_symcache_ent__free(e);
		return false;
	}
	d->cent = e;
	d->deferred = true;
	d->source = source;
	d->used_path = used;
	d->bin_path = bp;
	d->reason = 0;
	if (source == RPT_SRC_BINARY && !(rpt_symcache_ent__facts(e) & SYM_FACT_SYMTAB))
		rpt_symbolizer__set_reason(s, d, "stripped (dynamic symbols only)", NULL);
	return true;
}

/* dso_open() opened @d: keep @e as its cache entry if it was made for that. */
void rpt_symdisk__keep(struct rpt_symbolizer *s, struct rpt_dso *d, struct rpt_symcache_ent *e,
		       enum rpt_dso_source source, bool have_bin, const char *bin)
{
	int64_t bp = have_bin ? intern(s, bin) : 0;

	if (!e || !d->elf || d->source != source || bp < 0) {
		rpt_symcache_ent__free(e);
		return;
	}
	d->cent = e;
	d->bin_path = bp;
	rpt_symcache_ent__set_facts(e, rpt_elfsym__has_symtab(d->elf) ? SYM_FACT_SYMTAB : 0);
}

/* A cached binary missed: open its files now, as dso_open() would have. */
void rpt_symdisk__open_deferred(struct rpt_symbolizer *s, struct rpt_dso *d)
{
	char sym[PATH_MAX], bin[PATH_MAX];
	struct rpt_dwload *dw = NULL;

	d->deferred = false;
	snprintf(sym, sizeof(sym), "%s", rpt_strpool__str(&s->pool, d->used_path));
	snprintf(bin, sizeof(bin), "%s", rpt_strpool__str(&s->pool, d->bin_path));
	if (s->prefetch && d->source == RPT_SRC_DEBUG_FILE)
		dw = rpt_dwprefetch__take(s->prefetch, sym);
	d->elf = rpt_elfsym__open(sym, d->bin_path ? bin : NULL);
	if (d->elf)
		rpt_elfsym__set_dwarf(d->elf, dw);
	else
		rpt_dwload__free(dw);
}

int rpt_symdisk__get(struct rpt_symbolizer *s, struct rpt_dso *d, uint64_t off, uint64_t pgoff)
{
	struct rpt_symcache_frame f[SYM_MAX_FRAMES];
	int n = rpt_symcache_ent__get(d->cent, off, pgoff, f, SYM_MAX_FRAMES);
	uint64_t dso = d - s->dsos;

	/* many addresses share a name: intern it once per binary */
	for (int i = 0; i < n; i++) {
		uint64_t key = dso << 32 | f[i].name, v;
		int64_t name;

		if (rpt_hmap__get(&s->disk_names, key, &v)) {
			s->tmp[i] = (struct rpt_sym){v, f[i].kind};
			continue;
		}
		name = intern(s, rpt_symcache_ent__str(d->cent, f[i].name));
		if (name < 0 || rpt_hmap__put(&s->disk_names, key, name))
			return -ENOMEM;
		s->tmp[i] = (struct rpt_sym){name, f[i].kind};
	}
	return n;
}

void rpt_symdisk__put(struct rpt_symbolizer *s, struct rpt_dso *d, uint64_t off, uint64_t pgoff,
		      int n)
{
	if (SAC_GROW(s->pend, s->pend_cap, s->npend + 1, 256) ||
	    SAC_GROW(s->psyms, s->psyms_cap, s->npsyms + n, 1024))
		return; /* not kept: a later miss */
	s->pend[s->npend++] = (struct rpt_symdisk_pend){d - s->dsos, n, s->npsyms, off, pgoff};
	if (n) /* s->psyms is still NULL while only empty answers were kept */
		memcpy(s->psyms + s->npsyms, s->tmp, n * sizeof(*s->tmp));
	s->npsyms += n;
}

bool rpt_symdisk__has(struct rpt_symbolizer *s, const char *hex)
{
	return cache_dir(s) && rpt_symcache__has(s->disk, hex, variant(s));
}
