// SPDX-License-Identifier: MIT
/*
 * uwtrim.c - walk a captured user stack the way sa-report will (the step
 * of core/cfistep.h, over rows from record/cfi/cfirows.c) and keep the
 * words that walk reads. The walk needs a few words per frame out of the
 * 4-16 KiB copied, so a USTACK_SPARSE record is a few hundred bytes, and
 * sa-report decompresses that much instead of the whole copy.
 *
 * The rule that keeps the report's answer the same: every word the
 * report's walk reads must be kept, with its value. Frames this walk
 * follows read exactly the words the report's reads (same .eh_frame, same
 * rules, same register values). At the first frame it cannot follow it
 * keeps the rest of the copy from 128 bytes below that frame's stack
 * pointer: a later frame's rules read at or above its own stack pointer,
 * and libdwfl's frame-pointer fallback no further than 16 bytes below it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfread.h"
#include "elfsyms.h"
#include "cfirows.h"
#include "hash.h"
#include "htab.h"
#include "maptab.h"
#include "saf.h"
#include "safeopen.h"
#include "uwtrim.h"

#define UT_MAX_FRAMES 1024 /* above sa-report's 512: its walk is never longer */
#define UT_MAX_READS  4096
#define UT_BELOW      128 /* bytes kept below the stack pointer of a frame not followed */

/* One mapped file: its rows. */
struct ut_file {
	struct rec_cfirows *cfi; /* NULL: none usable */
};

/* A file by its build id, else by device, inode and path (side-band MMAP2 records
 * carry one or the other). */
struct ut_key {
	uint64_t h1, h2;
};

struct rec_uwtrim {
	struct rec_maptab *mt;
	struct rec_htab *files; /* ut_key -> struct ut_file */
	struct rec_uwtrim_stats st;
	uint32_t reads[UT_MAX_READS]; /* offsets of the words the walk read */
	uint32_t nreads;
	uint64_t pcs[UT_MAX_FRAMES]; /* the frames the last walk found */
	uint32_t npcs, walk;	     /* and how it ended (enum saf_walk) */
	/* the file of the last build id asked for: a walk's frames are mostly
	 * in one or two files, and two hashes per frame were 3% of the CPU */
	struct ut_file last;
	uint8_t last_bid[SAF_MAX_BUILD_ID];
	uint32_t last_len; /* 0: none */
};

struct rec_uwtrim *rec_uwtrim__new(struct rec_maptab *mt)
{
	struct rec_uwtrim *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->mt = mt;
	t->files = rec_htab__new(sizeof(struct ut_key), sizeof(struct ut_file));
	if (!t->files) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

void rec_uwtrim__free(struct rec_uwtrim *t)
{
	size_t it = 0;
	void *v;

	if (!t)
		return;
	while (rec_htab__next(t->files, &it, &v))
		rec_cfirows__free(((struct ut_file *)v)->cfi);
	rec_htab__free(t->files);
	free(t);
}

const struct rec_uwtrim_stats *rec_uwtrim__stats(const struct rec_uwtrim *t)
{
	return &t->st;
}

/* Does the file on @fd have @m's build id, or content hash (when @m has one)? */
static bool same_build(int fd, const struct saf_map *m)
{
	uint8_t bid[SAF_MAX_BUILD_ID];
	uint32_t kind;

	return !m->build_id.len ||
	       (rec_elf__identity_fd(fd, bid, sizeof(bid), &kind) == (int)m->build_id.len &&
		kind == m->id_kind && !memcmp(bid, m->build_id.data, m->build_id.len));
}

/*
 * The file behind mapping @m of @pid, opened once per build id (else per
 * device, inode and path): through /proc/PID/map_files while the process
 * lives, else at its path if it still has the build id the report will use.
 */
static const struct ut_file *open_file(struct rec_uwtrim *t, uint32_t pid, const struct saf_map *m)
{
	uint64_t di[2] = {m->dev, m->inode}, s1 = 0x75747269, s2 = 0x6d6d6564;
	struct ut_key k;
	struct ut_file *f;
	char path[4096];
	bool is_new;
	int fd;

	if (m->build_id.len) {
		k.h1 = sac_hash_bytes(m->build_id.data, m->build_id.len, s1);
		k.h2 = sac_hash_bytes(m->build_id.data, m->build_id.len, s2);
	} else {
		k.h1 = sac_hash_bytes(m->path.str, m->path.len, sac_hash_bytes(di, sizeof(di), s1));
		k.h2 = sac_hash_bytes(m->path.str, m->path.len, sac_hash_bytes(di, sizeof(di), s2));
	}
	f = rec_htab__get(t->files, &k);
	if (f)
		return f;
	f = rec_htab__put(t->files, &k, &is_new);
	if (!f)
		return NULL;
	memset(f, 0, sizeof(*f));
	snprintf(path, sizeof(path), "%.*s", (int)m->path.len, m->path.str ? m->path.str : "");
	fd = rec_safe_open_mapped(pid, m->start, m->end, path, m->dev, m->inode);
	t->st.files++;
	if (fd < 0 || !same_build(fd, m) || rec_cfirows__open(fd, &f->cfi)) {
		f->cfi = NULL;
		t->st.files_failed++;
	}
	if (fd >= 0)
		close(fd);
	return f;
}

/* open_file(), answered at once for the build id asked for last. */
static const struct ut_file *file_of(struct rec_uwtrim *t, uint32_t pid, const struct saf_map *m)
{
	const struct ut_file *f;
	uint32_t n = m->build_id.len;

	if (n && n == t->last_len && !memcmp(m->build_id.data, t->last_bid, n))
		return &t->last;
	f = open_file(t, pid, m);
	if (f && n && n <= sizeof(t->last_bid)) {
		t->last = *f; /* a copy: values in t->files move when it grows */
		memcpy(t->last_bid, m->build_id.data, n);
		t->last_len = n;
	}
	return f;
}

#define UT_NO_MODULE (-1) /* sa-report has no file there either */

/*
 * The mapping of the last frame of a walk: the frames of one walk are
 * mostly in one or two files, and finding the mapping each time (the
 * table's search, the map copied out, its path measured) was 4% of the
 * recorder's CPU. The table does not change during a walk.
 */
struct ut_span {
	uint64_t lo, hi;	 /* addresses the same mapping answers for; lo == hi: none */
	uint64_t start, pgoff;	 /* the mapping's */
	struct rec_cfirows *cfi; /* its rows, or NULL: */
	int none;		 /* UT_NO_MODULE or REC_CFIROW_NONE */
};

/*
 * The row at @pc of (pid, gen): REC_CFIROW_OK, UT_NO_MODULE where no file
 * is mapped (sa-report's modules are the mapped files), or REC_CFIROW_NONE
 * / _HARD where the walk cannot be followed here. @sp: this walk's last
 * mapping, used and updated.
 */
static int row_at(struct rec_uwtrim *t, uint32_t pid, uint32_t gen, uint64_t pc,
		  struct sac_cfi_row *r, struct ut_span *sp)
{
	const struct ut_file *f;
	struct saf_map m;
	uint64_t span[2];

	if (pc < sp->lo || pc >= sp->hi) {
		sp->lo = sp->hi = 0;
		if (rec_maptab__find_span(t->mt, pid, gen, pc, &m, span))
			return UT_NO_MODULE;
		*sp = (struct ut_span){span[0], span[1], m.start, m.pgoff, NULL, UT_NO_MODULE};
		/* [vdso]: named by build id, yet no module to sa-report (no CFI) */
		if (!(m.flags & SAF_MAP_ANON) && m.path.len && m.path.str[0] != '[') {
			f = file_of(t, pid, &m);
			sp->cfi = f ? f->cfi : NULL;
			sp->none = REC_CFIROW_NONE;
		}
	}
	if (!sp->cfi)
		return sp->none;
	return rec_cfirows__at_offset(sp->cfi, pc - sp->start + sp->pgoff, r);
}

/* A walk over one capture: the copy at sp0, and the reads logged in t. */
struct ut_walk {
	struct rec_uwtrim *t;
	uint64_t sp0;
	const uint8_t *stack;
	uint32_t len;
};

/* The word at @addr of the copy, as the report's read_word() gives it; logged. */
static bool read_word(struct ut_walk *w, uint64_t addr, uint64_t *v)
{
	struct rec_uwtrim *t = w->t;

	*v = 0;
	if (addr < w->sp0 || w->len < sizeof(*v) || addr - w->sp0 > w->len - sizeof(*v))
		return false;
	memcpy(v, w->stack + (addr - w->sp0), sizeof(*v));
	if (t->nreads < UT_MAX_READS)
		t->reads[t->nreads++] = (uint32_t)(addr - w->sp0);
	else
		t->nreads = UT_MAX_READS + 1; /* too many to keep: the whole copy */
	return true;
}

/* read_word() as core/cfistep.h calls it. */
static bool step_read(void *w, uint64_t addr, uint64_t *v)
{
	return read_word(w, addr, v);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Sort @n offsets in place. A walk reads upwards, frame after frame, so the
 * log is nearly sorted already: insertion sort does it in about one pass,
 * where qsort() cost a call per comparison on every capture. A log far from
 * sorted (a corrupt stack's walk) goes to qsort() after 16 moves a word.
 */
static void sort_reads(uint32_t *a, uint32_t n)
{
	size_t moves = 0;

	for (uint32_t i = 1; i < n; i++) {
		uint32_t v = a[i], j = i;

		for (; j && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
		moves += i - j;
		if (moves > 16 * (size_t)n) {
			qsort(a, n, sizeof(*a), cmp_u32);
			return;
		}
	}
}

/* Append run [@lo, @hi) of @stack, after the one ending at *@end, to @out. */
static bool put_run(uint8_t *out, size_t *n, size_t cap, const uint8_t *stack, uint64_t *end,
		    uint64_t lo, uint64_t hi)
{
	if (*n + (hi - lo) + 20 > cap)
		return false;
	*n += saf_urun__put(out + *n, (uint32_t)(lo - *end), stack + lo, (uint32_t)(hi - lo));
	*end = hi;
	return true;
}

/*
 * Encode the words read, and [@tail, len) if @tail < len, as runs into
 * @out: the 8-byte words below @tail in increasing offset, then the tail,
 * each merged into the run before it when they overlap or touch.
 * @return the bytes written, or -1 when they do not fit in @cap.
 */
static ssize_t put_runs(struct rec_uwtrim *t, const uint8_t *stack, uint32_t len, uint32_t tail,
			uint8_t *out, size_t cap)
{
	uint64_t lo = 0, hi = 0, end = 0; /* the run being built (none while hi is 0) */
	size_t n = 0;

	sort_reads(t->reads, t->nreads);
	for (uint32_t i = 0; i <= t->nreads; i++) {
		bool word = i < t->nreads;
		uint64_t a = word ? t->reads[i] : tail, b = word ? a + 8 : len;

		if (a >= b || (word && a >= tail))
			continue; /* no tail, or a word inside it */
		if (hi && a <= hi) {
			hi = b > hi ? b : hi;
			continue;
		}
		if (hi && !put_run(out, &n, cap, stack, &end, lo, hi))
			return -1;
		lo = a;
		hi = b;
	}
	if (hi && !put_run(out, &n, cap, stack, &end, lo, hi))
		return -1;
	return (ssize_t)n;
}

ssize_t rec_uwtrim__runs(struct rec_uwtrim *t, uint32_t pid, uint32_t gen, uint64_t ip, uint64_t sp,
			 uint64_t fp, const uint8_t *stack, uint32_t len, uint8_t *out, size_t cap)
{
	struct ut_walk w = {t, sp, stack, len};
	struct sac_cfi_regs g = {{sp, true}, {fp, true}, {0, false}, false}; /* rbx: not captured */
	struct ut_span span = {0};
	uint32_t tail = len; /* kept whole from here on */
	uint64_t pc = ip;
	bool exact = true; /* the leaf's pc, or a signal frame's caller's */
	ssize_t n;

	t->st.captures++;
	t->nreads = 0;
	t->pcs[0] = ip;
	t->npcs = 1;
	t->walk = SAF_WALK_COMPLETE;
	if (!len)
		return -1; /* nothing copied, nothing to trim */
	for (int depth = 1; pc && depth < UT_MAX_FRAMES; depth++) {
		struct sac_cfi_row r;
		int rc;

		if (depth > 1)
			t->pcs[t->npcs++] = pc;
		rc = row_at(t, pid, gen, exact ? pc : pc - 1, &r, &span);
		/* a PLT entry's row holds for its own pc: a leaf's, as libdwfl steps it */
		if (rc == REC_CFIROW_PLT)
			rc = exact ? REC_CFIROW_OK : REC_CFIROW_HARD;

		if (rc == UT_NO_MODULE) {
			/* libdwfl's frame-pointer fallback, as the report's walk takes it */
			pc = sac_cfi__fp_step(&g, step_read, &w);
			exact = false;
			continue;
		}
		if (rc != REC_CFIROW_OK && t->walk != SAF_WALK_CUT) {
			/* the report may do better here (a .debug_frame): keep the rest */
			uint64_t from =
				g.sp.ok && g.sp.v >= sp + UT_BELOW ? g.sp.v - UT_BELOW - sp : 0;

			tail = from < len ? (uint32_t)from : len;
			t->st.cut_short++;
			t->walk = SAF_WALK_CUT;
		}
		if (rc == REC_CFIROW_NONE) {
			/*
			 * No FDE (a binary's _init/_fini): libdwfl's frame-pointer
			 * fallback, as the report's walk takes it with the binary and
			 * no debug file, so the frames recorded are the ones it gives.
			 */
			pc = sac_cfi__fp_step(&g, step_read, &w);
			exact = false;
			continue;
		}
		if (rc != REC_CFIROW_OK)
			break;
		pc = sac_cfi__step(&r, &g, step_read, &w);
		exact = r.signal;
	}
	if (t->nreads > UT_MAX_READS)
		return -1;
	n = put_runs(t, stack, len, tail, out, cap < len ? cap : len);
	if (n >= 0) {
		t->st.trimmed++;
		t->st.bytes_in += len;
		t->st.bytes_out += (uint64_t)n;
	}
	return n;
}

uint32_t rec_uwtrim__frames(const struct rec_uwtrim *t, const uint64_t **pcs, uint32_t *n)
{
	*pcs = t->pcs;
	*n = t->npcs;
	return t->walk;
}
