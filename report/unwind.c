// SPDX-License-Identifier: MIT
/*
 * unwind.c - unwinding a capture instead of a live process: one Dwfl per process image, the
 * walk over uwrows.c's rows with libdwfl's step rules, libdwfl's own walk (cached by the words
 * it read) where a row holds an expression, and the recorder's frames where a binary is missing.
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
#include "strpool.h"
#include "unwind.h"
#include "uwpick.h"
#include "uwrows.h"

#define UW_TID 1 /* the one thread of an image; its number is irrelevant */

struct uw_image {
	uint64_t key;
	size_t nmods;	  /* modules the Dwfl was built from */
	Dwfl *dwfl;	  /* NULL when nothing could be reported */
	uint32_t rows_id; /* names this build of the image in rows */
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
	struct rpt_hmap img_index;   /* key -> index in imgs */
	struct rpt_hmap cache_index; /* hash of (key, regs) -> chain head in cached */
	struct rpt_uwrows rows;	     /* CFI rows of the addresses met so far */
	uint32_t nrows_ids;
	bool dwfl_only; /* every unwind by libdwfl (a cross-check) */
	bool by_dwfl;	/* the last walk was libdwfl's */
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
	if (!dwfl_thread_state_registers(thread, UW_X86_RBP, 2, r) ||
	    !dwfl_thread_state_registers(thread, UW_X86_RA, 1, &ip))
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

static char *uw_debuginfo_path;
/*
 * The debug file of a module, for its .debug_frame: by build id; libdwfl's
 * whole standard search (debuglink paths, then debuginfod) only when
 * DEBUGINFOD_URLS is set. That search loads libdebuginfod and its thirty
 * libraries (curl, gnutls, ...) whatever the variable says: 10 ms, a fifth
 * of a report, for a lookup that then finds nothing.
 */
static int uw_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			     Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			     GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (urls && *urls)
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink_file, debuglink_crc,
						    debuginfo_file_name);
	return dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					    debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks uw_dwfl_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = uw_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &uw_debuginfo_path,
};

static bool bid_matches(Elf *elf, const char *want)
{
	const uint8_t *bid;
	char hex[2 * UW_MAX_BID + 1];
	ssize_t n;

	if (!want || !*want)
		return true;
	n = dwelf_elf_gnu_build_id(elf, (const void **)&bid);
	if (n <= 0 || n > UW_MAX_BID)
		return false;
	for (ssize_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	return !strcmp(hex, want);
}

/* Load bias of an ET_DYN file: address minus vaddr, from the segment at pgoff. */
static int load_bias(Elf *elf, const struct rpt_unwind_module *m, uint64_t *bias)
{
	size_t nph;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nph))
		return -EINVAL;
	for (size_t i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (m->pgoff + 4096 <= ph.p_offset || m->pgoff >= ph.p_offset + ph.p_filesz)
			continue;
		*bias = m->start - m->pgoff + ph.p_offset - ph.p_vaddr;
		return 0;
	}
	return -ENOENT;
}

/* Report one binary at its load bias; a file that does not fit is skipped. */
static void report_module(Dwfl *dwfl, const struct rpt_unwind_module *m)
{
	int fd = rpt_bin_open(m->path);
	uint64_t bias = 0;
	GElf_Ehdr eh;
	Elf *elf;
	bool ok;

	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ok = elf && gelf_getehdr(elf, &eh) && bid_matches(elf, m->build_id) &&
	     (eh.e_type == ET_EXEC || !load_bias(elf, m, &bias));
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
	Dwfl *dwfl = dwfl_begin(&uw_dwfl_cb);

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

/* The Dwfl of image @key, (re)built when its module count changed. */
static int image_get(struct rpt_unwinder *u, uint64_t key, const struct rpt_unwind_module *mods,
		     size_t nmods, struct uw_image **out)
{
	struct uw_image *img;
	uint64_t v;

	if (!rpt_hmap__get(&u->img_index, key, &v)) {
		if (u->nimgs == u->imgs_cap) {
			size_t ncap = u->imgs_cap ? 2 * u->imgs_cap : 16;

			img = realloc(u->imgs, ncap * sizeof(*img));
			if (!img)
				return -ENOMEM;
			u->imgs = img;
			u->imgs_cap = ncap;
		}
		v = u->nimgs;
		if (rpt_hmap__put(&u->img_index, key, v))
			return -ENOMEM;
		u->imgs[u->nimgs++] = (struct uw_image){key, SIZE_MAX, NULL, 0};
	}
	img = &u->imgs[v];
	if (img->nmods != nmods) {
		if (img->dwfl)
			dwfl_end(img->dwfl);
		img->dwfl = image_build(u, mods, nmods);
		img->nmods = nmods;
		img->rows_id = u->nrows_ids++; /* rows of the old build no longer apply */
	}
	*out = img;
	return 0;
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

/* A register of the frame being stepped from: its value, if known. */
struct uw_reg {
	uint64_t v;
	bool ok;
};

/* The caller's @rule register, given the CFA and the callee's value @same. */
static struct uw_reg caller_reg(struct rpt_unwinder *u, uint8_t rule, int64_t off, uint64_t cfa,
				struct uw_reg same)
{
	struct uw_reg r = {0, false};

	switch (rule) {
	case UW_SAME:
		return same;
	case UW_AT:
		r.ok = read_word(u, cfa + (uint64_t)off, &r.v);
		return r;
	case UW_VAL:
		return (struct uw_reg){cfa + (uint64_t)off, true};
	}
	return r;
}

/*
 * Step from the frame at @pc with @sp and @fp to its caller as libdwfl
 * would: the row's rules, or with no CFI the frame-pointer fallback of
 * elfutils' x86-64 backend. @return the caller's pc, 0 where the walk ends.
 */
static uint64_t step(struct rpt_unwinder *u, const struct uw_row *r, struct uw_reg *sp,
		     struct uw_reg *fp)
{
	struct uw_reg cfa, ra, prev;

	if (r->how == UW_FP) {
		uint64_t old_sp = sp->ok ? sp->v : 0;

		if (!fp->ok || !fp->v)
			return 0;
		prev.ok = true;
		if (!read_word(u, fp->v, &prev.v))
			prev.v = 0;
		if (!read_word(u, fp->v + 8, &ra.v) || old_sp >= fp->v + 16)
			return 0;
		*sp = (struct uw_reg){fp->v + 16, true};
		*fp = prev;
		return ra.v;
	}
	cfa = r->cfa_reg == UW_X86_RBP	 ? *fp
	      : r->cfa_reg == UW_X86_RSP ? *sp
					 : (struct uw_reg){0, false};
	if (!cfa.ok)
		return 0; /* no rule can be evaluated: libdwfl ends here */
	cfa.v += (uint64_t)r->cfa_off;
	/* libdwfl reads every register's rule in DWARF order: rbp, rsp, then ra */
	prev = caller_reg(u, r->rbp, r->rbp_off, cfa.v, *fp);
	*sp = caller_reg(u, r->rsp, r->rsp_off, cfa.v, *sp);
	*fp = prev;
	ra = caller_reg(u, r->ra, r->ra_off, cfa.v, (struct uw_reg){0, false});
	return ra.ok ? ra.v : 0;
}

/*
 * The walk with CFI rows looked up once per address. @return the number of
 * frames, -EAGAIN where a row needs libdwfl, or -ENOMEM.
 */
static int walk_rows(struct rpt_unwinder *u, const struct uw_image *img)
{
	struct uw_reg sp = {u->regs->sp, true}, fp = {u->regs->fp, true};
	uint64_t pc = u->regs->ip;
	bool exact = true; /* the leaf's pc, or a signal frame's caller's */

	u->n = 0;
	u->ips[u->n++] = pc;
	if (!img->dwfl)
		return u->n;
	while (u->n < u->cap) {
		const struct uw_row *r =
			rpt_uwrows__get(&u->rows, img->dwfl, img->rows_id, exact ? pc : pc - 1);

		if (!r)
			return -ENOMEM;
		if (r->how == UW_DWFL)
			return -EAGAIN;
		pc = step(u, r, &sp, &fp);
		if (!pc)
			break;
		exact = r->how == UW_CFI && r->signal;
		u->ips[u->n++] = pc;
	}
	return u->n;
}

static int walk(struct rpt_unwinder *u, const struct uw_image *img)
{
	int n;

	u->by_dwfl = false;
	n = u->dwfl_only ? -EAGAIN : walk_rows(u, img);
	return n == -EAGAIN ? walk_dwfl(u, img->dwfl) : n;
}

static uint64_t regs_hash(uint64_t key, const struct rpt_unwind_regs *regs)
{
	uint64_t r[4] = {key, regs->ip, regs->sp, regs->fp};
	uint64_t h = rpt_hash_bytes(r, sizeof(r), 1);

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
	if (rpt_grow((void **)&u->cached, &u->cached_cap, u->ncached + 1, sizeof(*u->cached),
		     256) ||
	    rpt_grow((void **)&u->cips, &u->cips_cap, u->ncips + n, sizeof(*u->cips), 256) ||
	    rpt_grow((void **)&u->creads, &u->creads_cap, u->ncreads + u->nreads,
		     sizeof(*u->creads), 256))
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
		if (u->imgs[i].dwfl)
			dwfl_end(u->imgs[i].dwfl);
	free(u->imgs);
	rpt_hmap__fini(&u->img_index);
	rpt_hmap__fini(&u->cache_index);
	rpt_uwrows__fini(&u->rows);
	free(u->cached);
	free(u->cips);
	free(u->creads);
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
	if (rpt_uwpick__recorded(img->dwfl, mods, nmods, copy))
		return rpt_uwpick__copy(copy, ips, cap);
	u->ips = ips;
	u->cap = cap;
	n = walk(u, img);
	if (n < 0 || (err = rpt_uwpick__note(&u->pick, img->dwfl, mods, nmods, ips, n)))
		return n < 0 ? n : err;
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
