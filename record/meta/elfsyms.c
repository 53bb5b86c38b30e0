// SPDX-License-Identifier: MIT
/*
 * elfsyms.c - the registry of executable files by build id, with an open fd
 * kept for each file not read yet (so a deleted file, or one only reachable
 * through /proc/PID/map_files, can still be read once a sample needs it),
 * the symbols wanted by sampled offsets, and their SYMTAB + USYM records.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "contentid.h"
#include "elfread.h"
#include "elfsyms.h"
#include "golines.h"
#include "grow.h"
#include "hash.h"
#include "safeopen.h"
#include "strclip.h"
#include "symrank.h"

#define SYM_WANTED  1
#define SYM_EMITTED 2

struct efile {
	uint8_t bid[SAF_MAX_BUILD_ID];
	size_t bid_len;
	uint32_t kind; /* enum saf_id_kind of bid */
	char *path;
	int fd;
	int state; /* 0 not read yet, 1 read, < 0 the negative errno of reading */
	struct rec_elftab tab;
	uint8_t *flags; /* per symbol: SYM_*; kept in a file when the table goes */
	size_t nflags;
	uint32_t *pending; /* symbols wanted, not emitted */
	size_t npending, pending_cap;
	int dirty;     /* on the dirty list */
	uint32_t used; /* es->gen when a sample last noted it, or it was mapped */
	uint64_t last; /* es->tick then */
};

struct rec_elfsyms {
	struct efile *files;
	size_t nfiles, cap;
	int *hash; /* open addressing over file ids, -1 empty */
	size_t hash_cap;
	int *dirty;
	size_t ndirty, dirty_cap;
	size_t max_fds;
	uint32_t gen;  /* files begun (--rotate) */
	uint64_t tick; /* notes and mappings so far */
	uint64_t budget;
	const char *debug_dir; /* borrowed; NULL: none */
	struct rec_elfsyms_stats st;
};

static size_t bid_hash(const uint8_t *b, size_t len)
{
	return (size_t)sac_hash_fnv1a(SAC_FNV1A_BASIS, b, len);
}

static size_t default_max_fds(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 256;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	return rl.rlim_cur == RLIM_INFINITY ? 65536 : rl.rlim_cur / 2;
}

struct rec_elfsyms *rec_elfsyms__new(size_t max_fds)
{
	struct rec_elfsyms *es = calloc(1, sizeof(*es));

	if (!es)
		return NULL;
	es->max_fds = max_fds ? max_fds : default_max_fds();
	es->budget = REC_ELFSYMS_BUDGET;
	es->debug_dir = REC_ELFSYMS_DEBUG_DIR;
	return es;
}

static int find(const struct rec_elfsyms *es, const uint8_t *bid, size_t len)
{
	size_t i;

	if (!es->hash_cap)
		return -1;
	for (i = bid_hash(bid, len) & (es->hash_cap - 1); es->hash[i] >= 0;
	     i = (i + 1) & (es->hash_cap - 1)) {
		const struct efile *f = &es->files[es->hash[i]];

		if (f->bid_len == len && !memcmp(f->bid, bid, len))
			return es->hash[i];
	}
	return -1;
}

static void hash_put(struct rec_elfsyms *es, int id)
{
	const struct efile *f = &es->files[id];
	size_t i = bid_hash(f->bid, f->bid_len) & (es->hash_cap - 1);

	while (es->hash[i] >= 0)
		i = (i + 1) & (es->hash_cap - 1);
	es->hash[i] = id;
}

static int grow(struct rec_elfsyms *es)
{
	size_t cap, i;
	void *p;

	if (SAC_GROW(es->files, es->cap, es->nfiles + 1, 64))
		return -ENOMEM;
	if ((es->nfiles + 1) * 2 <= es->hash_cap)
		return 0;
	cap = es->hash_cap ? es->hash_cap * 2 : 128;
	p = malloc(cap * sizeof(*es->hash));
	if (!p)
		return -ENOMEM;
	free(es->hash);
	es->hash = p;
	es->hash_cap = cap;
	memset(es->hash, 0xff, cap * sizeof(*es->hash));
	for (i = 0; i < es->nfiles; i++)
		hash_put(es, (int)i);
	return 0;
}

int rec_elfsyms__file(struct rec_elfsyms *es, const uint8_t *build_id, size_t bid_len,
		      const char *path, int fd)
{
	struct efile *f;
	int id, err;

	err = -EINVAL;
	if (!bid_len || bid_len > SAF_MAX_BUILD_ID || !path)
		goto cleanup;
	id = find(es, build_id, bid_len);
	if (id >= 0) {
		f = &es->files[id];
		f->used = es->gen;
		f->last = ++es->tick;
		/* A later mapping may give a way in that the first lacked. */
		if (f->fd < 0 && !f->state && fd >= 0 && es->st.fds_held < es->max_fds) {
			f->fd = fd;
			es->st.fds_held++;
			fd = -1;
		}
		err = id;
		goto cleanup;
	}
	err = grow(es);
	if (err)
		goto cleanup;
	f = &es->files[es->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path) {
		err = -ENOMEM;
		goto cleanup;
	}
	memcpy(f->bid, build_id, bid_len);
	f->bid_len = bid_len;
	f->fd = -1;
	f->used = es->gen;
	f->last = ++es->tick;
	if (fd >= 0 && es->st.fds_held < es->max_fds) {
		f->fd = fd;
		es->st.fds_held++;
		fd = -1;
	}
	id = (int)es->nfiles++;
	hash_put(es, id);
	es->st.files++;
	err = id;
cleanup:
	if (fd >= 0)
		close(fd);
	return err;
}

void rec_elfsyms__set_kind(struct rec_elfsyms *es, int file, uint32_t kind)
{
	if (file >= 0 && (size_t)file < es->nfiles)
		es->files[file].kind = kind;
}

/* Heap bytes of @f's table: symbols, names and a Go binary's line tables. */
static uint64_t tab_bytes(const struct efile *f)
{
	return f->tab.nsyms * sizeof(*f->tab.syms) + f->tab.names_len + 1 +
	       rec_golines__bytes(f->tab.golines);
}

/*
 * Drop @f's table; it is read again from its path if a sample needs it.
 * In the middle of a file (@keep_flags) what was emitted stays known: the
 * same build id reads back in the same order.
 */
static void evict(struct rec_elfsyms *es, struct efile *f, bool keep_flags)
{
	es->st.tab_bytes -= tab_bytes(f);
	rec_elftab__release(&f->tab);
	if (!keep_flags) {
		free(f->flags);
		f->flags = NULL;
		f->nflags = 0;
	}
	free(f->pending);
	f->pending = NULL;
	f->pending_cap = 0;
	f->state = 0;
	es->st.evicted++;
}

/* Can @f's table go? Read, and nothing waits to be emitted from it. */
static bool evictable(const struct efile *f)
{
	return f->state > 0 && !f->npending && !f->dirty;
}

/* The least recently used table that can go, other than @spare; or NULL. */
static struct efile *lru(struct rec_elfsyms *es, const struct efile *spare)
{
	struct efile *best = NULL;
	size_t i;

	for (i = 0; i < es->nfiles; i++) {
		struct efile *f = &es->files[i];

		if (f != spare && evictable(f) && (!best || f->last < best->last))
			best = f;
	}
	return best;
}

/* Flags for @f's table just read: those kept in this file, or new ones. */
static int set_flags(struct efile *f)
{
	if (f->flags && f->nflags == f->tab.nsyms)
		return 0;
	free(f->flags);
	f->nflags = f->tab.nsyms;
	f->flags = calloc(f->nflags, 1);
	return f->flags ? 0 : -ENOMEM;
}

/*
 * The debug file of @f's build id under the host's debug directory
 * (DIR/.build-id/xx/rest.debug, as libc6-dbg installs it), or -1. Only a
 * root-owned file is read: the directory is the administrator's, and a
 * file someone else planted there must not name another user's frames.
 */
static int open_debug(const struct rec_elfsyms *es, const struct efile *f)
{
	char path[4096], *p;
	size_t i;
	int n;

	if (!es->debug_dir || f->bid_len < 2)
		return -1;
	n = snprintf(path, sizeof(path), "%s/.build-id/%02x/", es->debug_dir, f->bid[0]);
	if (n < 0 || (size_t)n + 2 * f->bid_len + 8 > sizeof(path))
		return -1;
	p = path + n;
	for (i = 1; i < f->bid_len; i++, p += 2)
		snprintf(p, 3, "%02x", f->bid[i]);
	strcpy(p, ".debug");
	n = rec_safe_open(path,
			  &(struct rec_safeopen_opts){.sz = sizeof(struct rec_safeopen_opts),
						      .nowners = 1,
						      .owners = {0},
						      .max_size = REC_BIN_MAX_SIZE},
			  NULL, 0);
	return n < 0 ? -1 : n;
}

/*
 * A file known by its content hash has no debug file, and is read only if
 * it is the file hashed: the kept fd is, a file opened by path is hashed.
 */
static int read_tab(struct rec_elfsyms *es, struct efile *f, int fd, bool by_path)
{
	uint8_t id[SAC_CONTENTID_LEN];

	if (f->kind == SAF_ID_GNU) {
		int dbg = open_debug(es, f), err;

		err = rec_elftab__read_debug(fd, dbg, f->bid, f->bid_len, &f->tab);
		if (dbg >= 0)
			close(dbg);
		return err;
	}
	if (f->kind != SAF_ID_CONTENT || f->bid_len != sizeof(id))
		return -ESTALE;
	if (by_path && (sac_contentid__fd(fd, id) || memcmp(id, f->bid, sizeof(id))))
		return -ESTALE;
	return rec_elftab__read(fd, NULL, 0, &f->tab);
}

static void load(struct rec_elfsyms *es, struct efile *f)
{
	struct efile *victim;
	uint64_t t0 = sac_now_ns(CLOCK_MONOTONIC);
	int fd = f->fd, err;

	if (fd < 0)
		fd = rec_safe_open(
			f->path,
			&(struct rec_safeopen_opts){.sz = sizeof(struct rec_safeopen_opts),
						    .max_size = REC_BIN_MAX_SIZE},
			NULL, 0);
	if (fd < 0) {
		err = fd;
	} else {
		err = read_tab(es, f, fd, f->fd < 0);
		if (!err && f->tab.from_debug)
			es->st.dbgsyms++;
		if (!err && (err = set_flags(f)))
			rec_elftab__release(&f->tab);
		close(fd);
	}
	if (f->fd >= 0)
		es->st.fds_held--;
	f->fd = -1;
	f->state = err ? err : 1;
	if (!err)
		es->st.tab_bytes += tab_bytes(f);
	/* over the budget in the middle of a file: the least recently used go */
	while (es->st.tab_bytes > es->budget && (victim = lru(es, f)))
		evict(es, victim, true);
	if (err == -ENOENT && fd >= 0)
		es->st.no_symbols++;
	else if (err)
		es->st.failed++;
	else
		es->st.loaded++;
	es->st.load_ns += sac_now_ns(CLOCK_MONOTONIC) - t0;
}

static int push(void **arr, size_t *n, size_t *cap, size_t elem, const void *v)
{
	if (sac_grow(arr, cap, *n + 1, elem, 16))
		return -ENOMEM;
	memcpy((char *)*arr + *n * elem, v, elem);
	(*n)++;
	return 0;
}

int rec_elfsyms__note(struct rec_elfsyms *es, int file, uint64_t off)
{
	struct efile *f;
	uint32_t idx;
	int lines;
	long i;

	if (file < 0 || (size_t)file >= es->nfiles)
		return -EINVAL;
	f = &es->files[file];
	f->used = es->gen;
	f->last = ++es->tick;
	if (!f->state)
		load(es, f);
	if (f->state < 0)
		return 0;
	lines = rec_golines__note(f->tab.golines, off); /* Go: its file:line, for ULINE */
	if (lines < 0)
		return lines;
	i = rec_elftab__lookup(&f->tab, off);
	if ((i < 0 || f->flags[i]) && !lines)
		return 0;
	if (!f->dirty) {
		if (push((void **)&es->dirty, &es->ndirty, &es->dirty_cap, sizeof(file), &file))
			return -ENOMEM;
		f->dirty = 1;
	}
	if (i < 0 || f->flags[i])
		return 0;
	idx = (uint32_t)i;
	if (push((void **)&f->pending, &f->npending, &f->pending_cap, sizeof(idx), &idx))
		return -ENOMEM;
	f->flags[i] = SYM_WANTED;
	return 1;
}

static int flush_file(struct rec_elfsyms *es, struct efile *f, const struct rec_sink *sink)
{
	struct saf_record rec = {.kind = SAF_REC_SYMTAB};
	rec_clipbuf buf;
	int err, n = 0;

	rec.symtab.build_id.data = f->bid;
	rec.symtab.build_id.len = (uint32_t)f->bid_len;
	rec.symtab.id_kind = f->kind;
	rec.symtab.path = rec_strclip(f->path, strlen(f->path), buf, &es->st.clipped);
	err = rec_sink__emit(sink, &rec);
	if (err)
		return err;
	es->st.symtabs++;
	while (f->npending) {
		uint32_t i = f->pending[f->npending - 1];
		const struct rec_elfsym *s = &f->tab.syms[i];

		rec.kind = SAF_REC_USYM;
		rec.usym.offset = s->off;
		rec.usym.size = s->size;
		/* an ELF name has no length limit: one of 5,000 bytes once ended the recording */
		rec.usym.name = rec_strclip(f->tab.names + s->name,
					    sac_sym__name_len(f->tab.names + s->name), buf,
					    &es->st.clipped);
		err = rec_sink__emit(sink, &rec);
		if (err)
			return err;
		f->flags[i] = SYM_EMITTED;
		f->npending--;
		es->st.usyms++;
		es->st.name_bytes += rec.usym.name.len;
		n++;
	}
	err = rec_golines__flush(f->tab.golines, sink);
	if (err < 0)
		return err;
	es->st.ulines += (uint64_t)err;
	return n;
}

int rec_elfsyms__flush(struct rec_elfsyms *es, const struct rec_sink *sink)
{
	int total = 0, n;

	while (es->ndirty) {
		struct efile *f = &es->files[es->dirty[es->ndirty - 1]];

		n = flush_file(es, f, sink);
		if (n < 0)
			return n;
		total += n;
		f->dirty = 0;
		es->ndirty--;
	}
	return total;
}

void rec_elfsyms__new_file(struct rec_elfsyms *es)
{
	struct efile *f;
	size_t i;

	es->gen++;
	for (i = 0; i < es->nfiles; i++) {
		f = &es->files[i];
		if (!f->state && f->fd >= 0 && es->gen - f->used > 2) {
			close(f->fd); /* it would pin a deleted binary for good */
			f->fd = -1;
			es->st.fds_held--;
		}
		if (evictable(f) && es->gen - f->used > 2) {
			evict(es, f, false);
		} else if (f->state <= 0) { /* a new file: nothing was emitted */
			free(f->flags);
			f->flags = NULL;
			f->nflags = 0;
		} else if (f->state > 0 && !f->npending) {
			memset(f->flags, 0, f->nflags);
		}
		if (f->state > 0)
			rec_golines__new_file(f->tab.golines);
	}
}

size_t rec_elfsyms__count(const struct rec_elfsyms *es)
{
	return es->nfiles;
}

/* Release all @f holds: fd, table, flags, path. */
static void drop_file(struct rec_elfsyms *es, struct efile *f)
{
	if (f->fd >= 0) {
		close(f->fd);
		es->st.fds_held--;
	}
	if (f->state > 0)
		es->st.tab_bytes -= tab_bytes(f);
	rec_elftab__release(&f->tab);
	SAC_FREE_ALL(f->flags, f->pending, f->path);
	es->st.forgotten++;
}

/* The hash and the files array sized for the files left (a shrink may fail). */
static void refit(struct rec_elfsyms *es)
{
	size_t cap = 128, i;
	int *h;

	while ((es->nfiles + 1) * 2 > cap)
		cap *= 2;
	if (cap < es->hash_cap && (h = malloc(cap * sizeof(*h)))) {
		free(es->hash);
		es->hash = h;
		es->hash_cap = cap;
	}
	memset(es->hash, 0xff, es->hash_cap * sizeof(*es->hash));
	for (i = 0; i < es->nfiles; i++)
		hash_put(es, (int)i);
	cap = es->nfiles * 2 > 64 ? es->nfiles * 2 : 64;
	if (es->cap > 4 * cap) {
		struct efile *p = realloc(es->files, cap * sizeof(*p));

		if (p) {
			es->files = p;
			es->cap = cap;
		}
	}
}

int rec_elfsyms__forget(struct rec_elfsyms *es, int *ids, size_t n)
{
	size_t i, k = 0;

	if (n != es->nfiles)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct efile *f = &es->files[i];

		if (!ids[i] && !f->dirty) {
			drop_file(es, f);
			ids[i] = -1;
			continue;
		}
		ids[i] = (int)k;
		if (k != i)
			es->files[k] = *f;
		k++;
	}
	for (i = 0; i < es->ndirty; i++)
		es->dirty[i] = ids[es->dirty[i]];
	if (k == n)
		return 0;
	es->nfiles = k;
	if (es->hash_cap)
		refit(es);
	return 0;
}

void rec_elfsyms__set_budget(struct rec_elfsyms *es, uint64_t bytes)
{
	es->budget = bytes;
}

void rec_elfsyms__stats(const struct rec_elfsyms *es, struct rec_elfsyms_stats *st)
{
	*st = es->st;
}

int rec_elfsyms__read_build_id(int fd, uint8_t *buf, size_t cap)
{
	return rec_elf__build_id_fd(fd, buf, cap);
}

void rec_elfsyms__free(struct rec_elfsyms *es)
{
	size_t i;

	if (!es)
		return;
	for (i = 0; i < es->nfiles; i++) {
		struct efile *f = &es->files[i];

		if (f->fd >= 0)
			close(f->fd);
		rec_elftab__release(&f->tab);
		SAC_FREE_ALL(f->flags, f->pending, f->path);
	}
	SAC_FREE_ALL(es->files, es->hash, es->dirty, es);
}
