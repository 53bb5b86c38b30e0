// SPDX-License-Identifier: MIT
/*
 * dwunits.c - address -> compile unit (see dwunits.h). Parsing
 * .debug_aranges here, rather than with dwarf_getaranges(), needs no byte
 * of .debug_info: libdw interns every unit the aranges name (a third of
 * the time a libc debug file took once inflated), and here the units are
 * read only when an address in them is looked up, once their bytes are in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>

#include "dwunits.h"
#include "grow.h"
#include "strpool.h"

#define DWU_MAX_HEADER 32 /* 64-bit DWARF 5 header with a unit id */

/* One run of consecutive aranges of one unit, as libdwfl keeps them. */
struct dwu_run {
	Dwarf_Addr start;
	Dwarf_Off cu; /* unit header offset when hdr_runs, else CU DIE offset */
};

/* An arange in file order, sorted stably by start as libdw's qsort does. */
struct dwu_arange {
	Dwarf_Addr start, len;
	Dwarf_Off hdr;
	size_t idx;
};

int rpt_dwunits__init(struct rpt_dwunits *u, const uint8_t *info, size_t info_size, bool filling)
{
	pthread_mutex_init(&u->mu, NULL);
	pthread_cond_init(&u->cv, NULL);
	u->inited = true;
	u->info = info;
	u->info_size = info_size;
	u->filling = filling && info;
	u->ready = u->filling ? 0 : info_size;
	return 0;
}

void rpt_dwunits__arrived(struct rpt_dwunits *u, size_t ready, bool last)
{
	pthread_mutex_lock(&u->mu);
	u->ready = ready;
	if (last)
		u->filling = false;
	pthread_cond_broadcast(&u->cv);
	pthread_mutex_unlock(&u->mu);
}

bool rpt_dwunits__filling(struct rpt_dwunits *u)
{
	bool f;

	pthread_mutex_lock(&u->mu);
	f = u->filling;
	pthread_mutex_unlock(&u->mu);
	return f;
}

void rpt_dwunits__wait_done(struct rpt_dwunits *u)
{
	pthread_mutex_lock(&u->mu);
	while (u->filling)
		pthread_cond_wait(&u->cv, &u->mu);
	pthread_mutex_unlock(&u->mu);
}

/* Wait until .debug_info holds its first @upto bytes. @return false: never. */
static bool wait_for(struct rpt_dwunits *u, size_t upto)
{
	bool ok;

	if (!u->info)
		return true;
	pthread_mutex_lock(&u->mu);
	while (u->filling && u->ready < upto)
		pthread_cond_wait(&u->cv, &u->mu);
	ok = u->ready >= upto;
	pthread_mutex_unlock(&u->mu);
	return ok;
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int arange_cmp(const void *a, const void *b)
{
	const struct dwu_arange *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* One set of .debug_aranges at *@p. @return 0, -EBADMSG or -ENOMEM. */
static int parse_set(struct rpt_dwunits *u, const uint8_t **pp, const uint8_t *end,
		     struct dwu_arange **v, size_t *n, size_t *cap)
{
	const uint8_t *p = *pp, *set = p;
	uint64_t len, hdr, addr, size;
	int osize = 4, asize;

	if (end - p < 4)
		return -EBADMSG;
	len = get_le(p, 4);
	p += 4;
	if (len == 0xffffffff)
		osize = 8;
	else if (len >= 0xfffffff0)
		return -EBADMSG;
	p += osize == 8 ? 8 : 0; /* the set's length: libdw reads to the 0, 0 pair */
	if (p > end || end - p < 2 || get_le(p, 2) != 2 || end - p < 2 + osize)
		return -EBADMSG;
	hdr = get_le(p + 2, osize);
	p += 2 + osize;
	if (hdr > u->info_size || u->info_size - hdr < 4 || end - p < 2)
		return -EBADMSG;
	asize = p[0];
	if ((asize != 4 && asize != 8) || p[1])
		return -EBADMSG;
	p += 2;
	p += (2 * asize - (p - set) % (2 * asize)) % (2 * asize);
	for (;;) {
		if (p > end || end - p < 2 * asize)
			return -EBADMSG;
		addr = get_le(p, asize);
		size = get_le(p + asize, asize);
		p += 2 * asize;
		if (!addr && !size)
			break;
		if (sac_grow((void **)v, cap, *n + 1, sizeof(**v), 256))
			return -ENOMEM;
		(*v)[*n] = (struct dwu_arange){addr, size, hdr, *n};
		(*n)++;
	}
	*pp = p;
	return 0;
}

/* Runs of the sorted aranges, one per unit change (libdwfl/cu.c, addrarange). */
static int runs_of(struct rpt_dwunits *u, struct dwu_arange *v, size_t n)
{
	Dwarf_Off last = 0;

	qsort(v, n, sizeof(*v), arange_cmp);
	u->runs = malloc((n ? n : 1) * sizeof(*u->runs));
	if (!u->runs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (i == n - 1)
			u->last_end = v[i].start + v[i].len;
		if (i && v[i].hdr == last)
			continue;
		u->runs[u->nruns++] = (struct dwu_run){v[i].start, v[i].hdr};
		last = v[i].hdr;
	}
	return 0;
}

static int load_own(struct rpt_dwunits *u, const uint8_t *ar, size_t ar_size)
{
	const uint8_t *p = ar, *end = ar + ar_size;
	struct dwu_arange *v = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	while (p < end && !err)
		err = parse_set(u, &p, end, &v, &n, &cap);
	u->hdr_runs = true;
	if (!err)
		err = runs_of(u, v, n);
	free(v);
	return err == -ENOMEM ? err : 0; /* malformed: no runs, as libdw fails */
}

/*
 * No .debug_aranges (Go's linker writes none): each unit's own ranges
 * (DW_AT_low_pc/high_pc or DW_AT_ranges), as libdwfl falls back to. Needs
 * every unit, so it waits for .debug_info whole.
 */
static int load_cu_ranges(struct rpt_dwunits *u, Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	struct dwu_arange *v = NULL;
	size_t hsize, n = 0, cap = 0;
	int err = 0;

	if (!wait_for(u, u->info_size))
		return 0;
	while (!err && !dwarf_next_unit(dw, off, &next, &hsize, 0, 0, 0, 0, 0, 0)) {
		Dwarf_Addr base, start, end;
		Dwarf_Die die;
		ptrdiff_t r = 0;
		bool has_die = dwarf_offdie(dw, off + hsize, &die);

		while (has_die && !err && (r = dwarf_ranges(&die, r, &base, &start, &end)) > 0) {
			if (end <= start)
				continue;
			err = SAC_GROW(v, cap, n + 1, 256) ? -ENOMEM : 0;
			if (!err)
				v[n] = (struct dwu_arange){start, end - start, off + hsize, n};
			n += !err;
		}
		off = next;
	}
	if (!err)
		err = runs_of(u, v, n);
	free(v);
	return err;
}

/* libdwfl's per-unit runs of libdw's sorted aranges. */
static int load_libdw(struct rpt_dwunits *u, Dwarf *dw)
{
	Dwarf_Aranges *ar;
	size_t n;
	Dwarf_Off last = 0;

	if (dwarf_getaranges(dw, &ar, &n) || !n)
		return load_cu_ranges(u, dw);
	u->runs = malloc(n * sizeof(*u->runs));
	if (!u->runs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Addr start;
		Dwarf_Word len;
		Dwarf_Off off;

		if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &start, &len, &off))
			return 0;
		if (i == n - 1)
			u->last_end = start + len;
		if (i && off == last)
			continue;
		u->runs[u->nruns++] = (struct dwu_run){start, off};
		last = off;
	}
	return 0;
}

int rpt_dwunits__load(struct rpt_dwunits *u, Dwarf *dw, const uint8_t *ar, size_t ar_size,
		      const uint8_t *abbrev, size_t abbrev_size)
{
	u->abbrev = abbrev;
	u->abbrev_size = abbrev_size;
	if (!dw)
		return 0;
	return ar ? load_own(u, ar, ar_size) : load_libdw(u, dw);
}

static bool uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	int shift = 0;

	*v = 0;
	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static bool refers_outside(uint64_t form)
{
	return form == DW_FORM_ref_addr || form == DW_FORM_indirect || form == DW_FORM_ref_sig8 ||
	       form == DW_FORM_ref_sup4 || form == DW_FORM_ref_sup8 || form == DW_FORM_GNU_ref_alt;
}

/*
 * Every form of the unit's abbreviations refers inside the unit (no
 * DW_FORM_ref_addr, as in a unit of an LTO or dwz build): its DIEs can be
 * read while later units are still missing.
 */
static bool refs_inside(struct rpt_dwunits *u, Dwarf_Off abbrev_off, Dwarf_Off hdr)
{
	const uint8_t *p, *end = u->abbrev + u->abbrev_size;
	uint64_t code, a, form, skip;

	if (u->safe_hdr == hdr + 1)
		return true;
	if (!u->abbrev || abbrev_off >= u->abbrev_size)
		return false;
	p = u->abbrev + abbrev_off;
	for (;;) {
		if (!uleb(&p, end, &code))
			return false;
		if (!code)
			break;
		if (!uleb(&p, end, &a) || p++ >= end) /* the tag, DW_CHILDREN_* */
			return false;
		do {
			if (!uleb(&p, end, &a) || !uleb(&p, end, &form) || refers_outside(form))
				return false;
			if (form == DW_FORM_implicit_const && !uleb(&p, end, &skip))
				return false; /* an SLEB128 skips as a ULEB128 does */
		} while (a || form);
	}
	u->safe_hdr = hdr + 1;
	return true;
}

/* The unit at @hdr once it is whole: its CU DIE offset, or 0. */
static Dwarf_Off unit_die(struct rpt_dwunits *u, Dwarf *dw, Dwarf_Off hdr)
{
	size_t head = u->info_size - hdr < DWU_MAX_HEADER ? u->info_size : hdr + DWU_MAX_HEADER;
	Dwarf_Off next, abbrev_off;
	size_t hsize;
	bool whole;

	if (!wait_for(u, head) ||
	    dwarf_next_unit(dw, hdr, &next, &hsize, NULL, &abbrev_off, NULL, NULL, NULL, NULL))
		return 0;
	if (next > u->info_size)
		next = u->info_size; /* libdw keeps such a unit, to the end */
	if (!wait_for(u, next))
		return 0;
	pthread_mutex_lock(&u->mu);
	whole = u->ready >= u->info_size;
	pthread_mutex_unlock(&u->mu);
	if (!whole && !refs_inside(u, abbrev_off, hdr) && !wait_for(u, u->info_size))
		return 0;
	return hdr + hsize;
}

/* The run holding @addr (a gap belongs to the run below it), or -1. */
static ssize_t run_of(const struct rpt_dwunits *u, Dwarf_Addr addr)
{
	size_t l = 0, h = u->nruns;

	while (l < h) {
		size_t idx = (l + h) / 2;
		Dwarf_Addr start = u->runs[idx].start;

		if (addr < start) {
			h = idx;
			continue;
		}
		if (addr > start) {
			if (idx + 1 < u->nruns && addr >= u->runs[idx + 1].start) {
				l = idx + 1;
				continue;
			}
			if (idx + 1 == u->nruns && addr > u->last_end)
				return -1;
		}
		return idx;
	}
	return -1;
}

Dwarf_Off rpt_dwunits__cu(struct rpt_dwunits *u, Dwarf *dw, Dwarf_Addr addr)
{
	ssize_t idx = run_of(u, addr);
	Dwarf_Off off;

	if (idx < 0)
		return 0;
	off = u->runs[idx].cu;
	if (u->hdr_runs && !(off = unit_die(u, dw, off)))
		return 0;
	if (u->info_size && off + 4 >= u->info_size)
		return 0;
	return off;
}

uint64_t rpt_dwunits__rank(struct rpt_dwunits *u, Dwarf_Addr addr)
{
	ssize_t idx = u->hdr_runs ? run_of(u, addr) : -1;

	return idx < 0 ? 0 : u->runs[idx].cu + 1;
}

void rpt_dwunits__fini(struct rpt_dwunits *u)
{
	if (!u->inited)
		return;
	free(u->runs);
	pthread_cond_destroy(&u->cv);
	pthread_mutex_destroy(&u->mu);
	memset(u, 0, sizeof(*u));
}
