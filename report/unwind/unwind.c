// SPDX-License-Identifier: MIT
/*
 * unwind.c - unwinding a capture instead of a live process: the walk over uwrows.c's rows of
 * binaries shared by every image (uwbin.c) with libdwfl's step rules, libdwfl's own walk (cached
 * by the words it read) in a Dwfl of the image where a row holds an expression, and the
 * recorder's frames where a binary is missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "binopen.h"
#include "grow.h"
#include "hash.h"
#include "strpool.h"
#include "unwind.h"
#include "uwbin.h"
#include "uwpick.h"
#include "uwrows.h"

#define UW_TID 1 /* the one thread of an image; its number is irrelevant */

struct uw_image {
	uint64_t key;
	size_t nmods;		/* mappings the table was built from */
	uint64_t found;		/* rpt_uwbins.found then */
	struct rpt_uwmods mods; /* where its binaries are */
};

/*
 * A Dwfl of one whole image, for libdwfl's own walks, which are rare (a row
 * with a DWARF expression, or SA_UNWIND=libdwfl): built when one is needed,
 * and only the last few are kept, so their mappings of each binary stay few.
 */
#define UW_NDWFL 4
struct uw_dwfl {
	uint64_t key;
	size_t nmods;
	Dwfl *dwfl; /* NULL: not built, or nothing could be reported */
	uint64_t used;
	bool built;
};

#define UW_MAX_READS 256 /* reads logged per unwind; more is not cached */

/* A word the unwinder asked for: at sp + off, readable or not. */
struct uw_read {
	uint64_t off, val;
	bool ok;
};

/*
 * A cached unwind of (image, ip, sp, fp): its frames are cips[first ..
 * first + n), the reads it made creads[rfirst .. rfirst + nreads). Entries
 * of one hash chain through next (index + 1, 0 ends the chain).
 */
struct uw_cached {
	uint64_t key, nmods, ip, sp, fp;
	uint64_t first, rfirst;
	uint32_t n, nreads;
	size_t next;
};

struct rpt_unwinder {
	struct uw_image *imgs;
	size_t nimgs, imgs_cap;
	struct rpt_hmap img_index; /* key -> index in imgs */
	struct rpt_uwbins bins;	   /* every binary, each opened once */
	struct uw_dwfl dwfls[UW_NDWFL];
	uint64_t dwfl_clock;
	struct rpt_hmap cache_index; /* hash of (key, regs) -> chain head in cached */
	struct rpt_uwrows rows;	     /* CFI rows of the addresses met so far, per binary */
	bool dwfl_only;		     /* every unwind by libdwfl (a cross-check) */
	bool by_dwfl;		     /* the last walk was libdwfl's */
	struct uw_cached *cached;
	size_t ncached, cached_cap;
	uint64_t *cips;
	size_t ncips, cips_cap;
	struct uw_read *creads;
	size_t ncreads, creads_cap;
	struct uw_read reads[UW_MAX_READS]; /* of the unwind in progress */
	uint32_t nreads;
	bool reads_overflow;
	/* the capture being unwound, read by the callbacks */
	const struct rpt_unwind_regs *regs;
	const struct saf_ustack *copy;
	struct saf_urun run; /* the run of copy a read last looked at, ... */
	size_t run_pos;	     /* ... and where the next one starts (0: none read) */
	uint64_t *ips;
	uint32_t n, cap;
	bool served;
	uint64_t nunwinds;
	struct rpt_uwpick pick; /* binaries walks stopped at */
};

static pid_t uw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct rpt_unwinder *u = arg;

	(void)dwfl;
	if (u->served)
		return 0;
	u->served = true;
	*thread_argp = u;
	return UW_TID;
}

static bool uw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/*
 * The word at sp + @off, if one run of the capture holds all of it. The
 * walk reads upward, frame after frame, so the runs are scanned from the
 * last one looked at, and from the first again only for a read below it.
 */
static bool copy_word(struct rpt_unwinder *u, uint64_t off, uint64_t *v)
{
	struct saf_urun *r = &u->run;

	if (u->run_pos && off < r->off)
		u->run_pos = 0;
	if (!u->run_pos && !saf_urun__next(u->copy, &u->run_pos, r))
		return false;
	while ((uint64_t)r->off + r->len <= off)
		if (!saf_urun__next(u->copy, &u->run_pos, r))
			return false;
	if (off < r->off || r->len < sizeof(*v) || off - r->off > r->len - sizeof(*v))
		return false;
	memcpy(v, r->data + (off - r->off), sizeof(*v));
	return true;
}

/*
 * Only the captured bytes are known; a read elsewhere fails. A libdwfl
 * walk's reads are logged for the cache (only those walks are cached).
 */
static bool read_word(struct rpt_unwinder *u, uint64_t addr, uint64_t *result)
{
	uint64_t sp = u->regs->sp;
	bool ok;

	*result = 0;
	ok = addr >= sp && copy_word(u, addr - sp, result);
	if (!u->by_dwfl)
		return ok;
	if (u->nreads < UW_MAX_READS)
		u->reads[u->nreads++] = (struct uw_read){addr - sp, *result, ok};
	else
		u->reads_overflow = true;
	return ok;
}

static bool uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	uint64_t v;
	bool ok = read_word(arg, addr, &v);

	(void)dwfl;
	*result = v;
	return ok;
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct rpt_unwinder *u = arg;
	Dwarf_Word r[2] = {u->regs->fp, u->regs->sp}; /* rbp, rsp */
	Dwarf_Word ip = u->regs->ip;

	/*
	 * The pc goes into the return-address column too: CFA expressions read
	 * it as a register (DW_OP_breg16 in every lazy-binding PLT's FDE), and
	 * libdwfl fails the step when that register is unset.
	 */
	if (!dwfl_thread_state_registers(thread, SAC_DWARF_RBP, 2, r) ||
	    !dwfl_thread_state_registers(thread, SAC_DWARF_RA, 1, &ip))
		return false;
	dwfl_thread_state_register_pc(thread, u->regs->ip);
	return true;
}

static const Dwfl_Thread_Callbacks uw_thread_cb = {
	.next_thread = uw_next_thread,
	.get_thread = uw_get_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

/* Report one binary at its load bias; a file that does not fit is skipped. */
static void report_module(Dwfl *dwfl, const struct rpt_unwind_module *m)
{
	GElf_Ehdr eh;
	uint64_t bias = 0;
	int fd = rpt_uw_open(m, &eh);
	Elf *elf;
	bool ok;

	if (fd < 0)
		return;
	elf = eh.e_type == ET_EXEC ? NULL : elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ok = eh.e_type == ET_EXEC || (elf && !rpt_uw_bias(elf, m, &bias));
	elf_end(elf);
	/* on success the Dwfl owns fd */
	if (!ok || !dwfl_report_elf(dwfl, m->path, m->path, fd, bias, false))
		close(fd);
}

static bool reported_before(const struct rpt_unwind_module *mods, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (mods[j].path && !strcmp(mods[j].path, mods[i].path))
			return true;
	return false;
}

static Dwfl *image_build(struct rpt_unwinder *u, const struct rpt_unwind_module *mods, size_t nmods)
{
	Dwfl *dwfl = dwfl_begin(&rpt_uw_dwfl_cb);

	if (!dwfl)
		return NULL;
	dwfl_report_begin(dwfl);
	for (size_t i = 0; i < nmods; i++)
		if (mods[i].path && *mods[i].path && !reported_before(mods, i))
			report_module(dwfl, &mods[i]);
	if (dwfl_report_end(dwfl, NULL, NULL) ||
	    !dwfl_attach_state(dwfl, NULL, UW_TID, &uw_thread_cb, u)) {
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

/* The module table of image @key, (re)built when its mapping count changed. */
static int image_get(struct rpt_unwinder *u, uint64_t key, const struct rpt_unwind_module *mods,
		     size_t nmods, struct uw_image **out)
{
	struct uw_image *img;
	uint64_t v;

	if (!rpt_hmap__get(&u->img_index, key, &v)) {
		if (SAC_GROW(u->imgs, u->imgs_cap, u->nimgs + 1, 16))
			return -ENOMEM;
		v = u->nimgs;
		if (rpt_hmap__put(&u->img_index, key, v))
			return -ENOMEM;
		u->imgs[u->nimgs++] = (struct uw_image){key, SIZE_MAX, 0, {0}};
	}
	img = &u->imgs[v];
	/* rebuilt, too, when a binary it lacked may have been found since */
	if (img->nmods != nmods || img->found != u->bins.found) {
		rpt_uwmods__fini(&img->mods);
		img->nmods = SIZE_MAX;
		if (rpt_uwmods__build(&img->mods, &u->bins, mods, nmods)) {
			rpt_uwmods__fini(&img->mods);
			return -ENOMEM;
		}
		img->nmods = nmods;
		img->found = u->bins.found;
	}
	*out = img;
	return 0;
}

/* A Dwfl of the image @img, from the few kept or built now in place of the oldest. */
static Dwfl *image_dwfl(struct rpt_unwinder *u, const struct uw_image *img,
			const struct rpt_unwind_module *mods)
{
	struct uw_dwfl *d = &u->dwfls[0];

	for (size_t i = 0; i < UW_NDWFL; i++) {
		struct uw_dwfl *e = &u->dwfls[i];

		if (e->built && e->key == img->key && e->nmods == img->nmods) {
			d = e;
			goto found;
		}
		if (!e->built || e->used < d->used)
			d = e;
	}
	if (d->dwfl)
		dwfl_end(d->dwfl);
	*d = (struct uw_dwfl){img->key, img->nmods, image_build(u, mods, img->nmods), 0, true};
found:
	d->used = ++u->dwfl_clock;
	return d->dwfl;
}

static int uw_frame(Dwfl_Frame *state, void *arg)
{
	struct rpt_unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	if (u->n == 0 && pc != u->regs->ip)
		return DWARF_CB_ABORT;
	if (u->n >= u->cap)
		return DWARF_CB_ABORT;
	u->ips[u->n++] = pc;
	return DWARF_CB_OK;
}

static int walk_dwfl(struct rpt_unwinder *u, Dwfl *dwfl)
{
	u->n = 0;
	u->served = false;
	u->nreads = 0;
	u->reads_overflow = false;
	u->by_dwfl = true; /* its reads are logged */
	/* the walk ends quietly where a read falls outside the copy */
	if (dwfl)
		dwfl_getthread_frames(dwfl, UW_TID, uw_frame, u);
	if (!u->n && u->cap)
		u->ips[u->n++] = u->regs->ip;
	return u->n;
}

/* read_word() as core/cfistep.h's step calls it. */
static bool step_read(void *u, uint64_t addr, uint64_t *v)
{
	return read_word(u, addr, v);
}

/*
 * The walk with CFI rows looked up once per address. @return the number of
 * frames, -EAGAIN where a row needs libdwfl, or -ENOMEM.
 */
static int walk_rows(struct rpt_unwinder *u, const struct uw_image *img)
{
	static const struct sac_cfi_row no_module = {.how = SAC_CFI_FP};
	struct sac_cfi_regs g = {{u->regs->sp, true}, {u->regs->fp, true}, {0, false}, false};
	uint64_t pc = u->regs->ip;
	bool exact = true; /* the leaf's pc, or a signal frame's caller's */

	u->n = 0;
	u->ips[u->n++] = pc;
	if (!img->mods.attached)
		return u->n;
	while (u->n < u->cap) {
		uint64_t at = exact ? pc : pc - 1;
		const struct rpt_uwmod *m = rpt_uwmods__at(&img->mods, at);
		const struct sac_cfi_row *r =
			m ? rpt_uwrows__get(&u->rows, u->bins.bins[m->bin].dwfl, m->bin,
					    at - m->delta)
			  : &no_module;

		if (!r)
			return -ENOMEM;
		if (r->how == SAC_CFI_DWFL)
			return -EAGAIN;
		pc = sac_cfi__step(r, &g, step_read, u);
		if (!pc)
			break;
		exact = r->how == SAC_CFI_RULES && r->signal;
		u->ips[u->n++] = pc;
	}
	return u->n;
}

static int walk(struct rpt_unwinder *u, const struct uw_image *img,
		const struct rpt_unwind_module *mods)
{
	int n;

	u->by_dwfl = false;
	n = u->dwfl_only ? -EAGAIN : walk_rows(u, img);
	return n == -EAGAIN ? walk_dwfl(u, image_dwfl(u, img, mods)) : n;
}

static uint64_t regs_hash(uint64_t key, const struct rpt_unwind_regs *regs)
{
	uint64_t r[4] = {key, regs->ip, regs->sp, regs->fp};
	uint64_t h = sac_hash_fnv(r, sizeof(r), 1);

	return h == UINT64_MAX ? 0 : h; /* UINT64_MAX is rpt_hmap's empty mark */
}

/* Does the capture give every word @c read the same answer? */
static bool reads_match(struct rpt_unwinder *u, const struct uw_cached *c)
{
	for (uint32_t i = 0; i < c->nreads; i++) {
		const struct uw_read *r = &u->creads[c->rfirst + i];
		uint64_t v;
		bool ok = copy_word(u, r->off, &v);

		if (ok != r->ok || (ok && v != r->val))
			return false;
	}
	return true;
}

static const struct uw_cached *cache_find(struct rpt_unwinder *u, uint64_t h, uint64_t key,
					  size_t nmods)
{
	const struct rpt_unwind_regs *regs = u->regs;
	uint64_t v;
	size_t i;

	if (!rpt_hmap__get(&u->cache_index, h, &v))
		return NULL;
	for (i = v + 1; i; i = u->cached[i - 1].next) {
		const struct uw_cached *c = &u->cached[i - 1];

		if (c->key == key && c->nmods == nmods && c->ip == regs->ip && c->sp == regs->sp &&
		    c->fp == regs->fp && reads_match(u, c))
			return c;
	}
	return NULL;
}

/* Cache the unwind just done (frames @ips[0..n), reads in u->reads). */
static int cache_put(struct rpt_unwinder *u, uint64_t h, uint64_t key, size_t nmods,
		     const uint64_t *ips, uint32_t n)
{
	const struct rpt_unwind_regs *regs = u->regs;
	uint64_t head;
	size_t next = 0;

	if (u->reads_overflow)
		return 0;
	if (SAC_GROW(u->cached, u->cached_cap, u->ncached + 1, 256) ||
	    SAC_GROW(u->cips, u->cips_cap, u->ncips + n, 256) ||
	    SAC_GROW(u->creads, u->creads_cap, u->ncreads + u->nreads, 256))
		return -ENOMEM;
	if (rpt_hmap__get(&u->cache_index, h, &head))
		next = head + 1;
	if (rpt_hmap__put(&u->cache_index, h, u->ncached))
		return -ENOMEM;
	/* the arrays are NULL while nothing was stored: no memcpy of NULL, 0 */
	if (n)
		memcpy(u->cips + u->ncips, ips, n * sizeof(*ips));
	if (u->nreads)
		memcpy(u->creads + u->ncreads, u->reads, u->nreads * sizeof(*u->reads));
	u->cached[u->ncached++] = (struct uw_cached){
		key, nmods, regs->ip, regs->sp, regs->fp, u->ncips, u->ncreads, n, u->nreads, next};
	u->ncips += n;
	u->ncreads += u->nreads;
	return 0;
}

struct rpt_unwinder *rpt_unwinder__new(void)
{
	return calloc(1, sizeof(struct rpt_unwinder)); /* errno = ENOMEM when NULL */
}

void rpt_unwinder__free(struct rpt_unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nimgs; i++)
		rpt_uwmods__fini(&u->imgs[i].mods);
	for (size_t i = 0; i < UW_NDWFL; i++)
		if (u->dwfls[i].dwfl)
			dwfl_end(u->dwfls[i].dwfl);
	free(u->imgs);
	rpt_hmap__fini(&u->img_index);
	rpt_hmap__fini(&u->cache_index);
	rpt_uwrows__fini(&u->rows);
	rpt_uwbins__fini(&u->bins);
	SAC_FREE_ALL(u->cached, u->cips, u->creads);
	rpt_uwpick__fini(&u->pick);
	free(u);
}

int rpt_unwinder__unwind(struct rpt_unwinder *u, uint64_t key, const struct rpt_unwind_module *mods,
			 size_t nmods, const struct rpt_unwind_regs *regs,
			 const struct saf_ustack *copy, uint64_t *ips, uint32_t cap)
{
	const struct uw_cached *c;
	struct uw_image *img;
	int err, n;

	if (!cap)
		return 0;
	u->regs = regs;
	u->copy = copy;
	u->run_pos = 0;
	/* only libdwfl's walks are cached: none yet, nothing to look up */
	c = u->ncached ? cache_find(u, regs_hash(key, regs), key, nmods) : NULL;
	if (c) {
		n = c->n < cap ? c->n : cap;
		memcpy(ips, u->cips + c->first, n * sizeof(*ips));
		return n;
	}
	err = image_get(u, key, mods, nmods, &img);
	if (err)
		return err;
	if (rpt_uwpick__recorded(&img->mods, mods, nmods, copy))
		return rpt_uwpick__copy(copy, ips, cap);
	u->ips = ips;
	u->cap = cap;
	n = walk(u, img, mods);
	if (n < 0)
		return n;
	/*
	 * Only a copy the recorder did not walk says a binary is missing: where
	 * it walked (every binary at hand) and no frame of its walk is in a
	 * binary missing here, a walk of ours that ends in one has gone past
	 * the recorder's, and the folded stacks are those of the recording
	 * (6150: a python3 sample in the vdso warned with identical output).
	 */
	if ((copy->walk == SAF_WALK_NONE || !copy->nwalked) &&
	    (err = rpt_uwpick__note(&u->pick, &img->mods, mods, nmods, ips, n)))
		return err;
	u->nunwinds++;
	/* a walk over rows costs less than caching it; libdwfl's does not */
	if (u->by_dwfl && cache_put(u, regs_hash(key, regs), key, nmods, ips, n))
		return -ENOMEM;
	return n;
}

uint64_t rpt_unwinder__nunwinds(const struct rpt_unwinder *u)
{
	return u->nunwinds;
}

void rpt_unwinder__dwfl_only(struct rpt_unwinder *u, bool on)
{
	u->dwfl_only = on;
}

const struct rpt_uwpick *rpt_unwinder__pick(const struct rpt_unwinder *u)
{
	return &u->pick;
}
