// SPDX-License-Identifier: MIT
/*
 * uwbuild.c - one ELF file's .eh_frame as the in-kernel unwinder's table:
 * cfirows.c's rows of every FDE, reduced to struct sa_uw_row (CFA by rsp or
 * rbp, where rbp was saved, PLT entries, the outermost frame), sorted, gaps
 * between FDEs marked, and runs of equal rows merged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include "cfirows.h"
#include "clock.h"
#include "grow.h"
#include "uwtab.h"

struct raw {
	uint64_t pc;
	struct sa_uw_row r;
	uint8_t gap; /* 1: the end of an FDE (a SA_UW_NONE row unless another starts there) */
};

struct acc {
	struct raw *v;
	size_t n, cap;
	uint64_t deadline; /* CLOCK_THREAD_CPUTIME_ID ns */
	const int *stop;   /* set: give up (the recorder stops) */
	size_t calls;
};

/* A row of the rules sa-report's unwinder would apply, as the BPF program takes them. */
struct sa_uw_row rec_uw_row(const struct sac_cfi_row *row, int ret, unsigned plt)
{
	struct sa_uw_row r = {.kind = SA_UW_BAD};

	if (plt) {
		r.kind = SA_UW_PLT;
		r.cfa8 = (uint16_t)plt;
		return r;
	}
	if (ret != REC_CFIROW_OK)
		return r;
	if (row->ra == SAC_CFI_UNSET) {
		r.kind = SA_UW_END;
		return r;
	}
	if (row->ra != SAC_CFI_AT || row->ra_off != -8 || row->rsp != SAC_CFI_VAL ||
	    row->rsp_off != 0 || row->signal)
		return r;
	if (row->cfa_reg != SAC_DWARF_RSP && row->cfa_reg != SAC_DWARF_RBP)
		return r; /* rbx (ld.so's trampolines) or undefined */
	if (row->cfa_off <= 0 || row->cfa_off % 8 || row->cfa_off / 8 > UINT16_MAX)
		return r;
	if (row->rbp == SAC_CFI_AT) {
		if (row->rbp_off % 8 || row->rbp_off / 8 < INT8_MIN || row->rbp_off >= 0)
			return r;
		r.rbp8 = (int8_t)(row->rbp_off / 8);
	} else if (row->rbp != SAC_CFI_SAME && row->rbp != SAC_CFI_UNSET) {
		return r;
	}
	r.kind = row->cfa_reg == SAC_DWARF_RSP ? SA_UW_RSP : SA_UW_RBP;
	r.cfa8 = (uint16_t)(row->cfa_off / 8);
	return r;
}

static int add(struct acc *a, uint64_t pc, struct sa_uw_row r, uint8_t gap)
{
	if (pc > UINT32_MAX)
		return -EOVERFLOW;
	if (a->n >= REC_UW_FILE_ROWS)
		return -E2BIG;
	if (SAC_GROW(a->v, a->cap, a->n + 1, 16384))
		return -ENOMEM;
	a->v[a->n++] = (struct raw){pc, r, gap};
	return 0;
}

static int on_row(void *arg, uint64_t lo, uint64_t hi, const struct sac_cfi_row *row, int ret,
		  unsigned plt)
{
	struct acc *a = arg;
	int err;

	if (!(++a->calls & 1023)) {
		if (sac_now_ns(CLOCK_THREAD_CPUTIME_ID) > a->deadline)
			return -ETIME;
		if (a->stop && __atomic_load_n(a->stop, __ATOMIC_RELAXED))
			return -ECANCELED;
	}
	/* a row starting where the last one ended: that end is no gap (key_of(): a row wins) */
	if (a->n && a->v[a->n - 1].gap && a->v[a->n - 1].pc == lo)
		a->n--;
	err = add(a, lo, rec_uw_row(row, ret, plt), 0);
	if (!err)
		err = add(a, hi, (struct sa_uw_row){.kind = SA_UW_NONE}, 1);
	return err;
}

/* By address; at one address an FDE's first row before the end of another. */
static uint64_t key_of(const struct raw *r)
{
	return r->pc << 1 | r->gap;
}

/*
 * Sort @v by key_of(), stably (at one address the row emitted first wins,
 * whatever the host's qsort() does): three passes of 11 bits over the
 * 33-bit keys, through @tmp, as large.
 */
static void sort_raw(struct raw *v, struct raw *tmp, size_t n)
{
	static const unsigned bits = 11, passes = 3;
	struct raw *from = v, *to = tmp, *t;
	size_t cnt[1u << 11], i, sum, c;
	unsigned p;

	for (p = 0; p < passes; p++) {
		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			cnt[(key_of(&from[i]) >> (p * bits)) & ((1u << bits) - 1)]++;
		for (sum = 0, i = 0; i < (1u << bits); i++) {
			c = cnt[i];
			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			to[cnt[(key_of(&from[i]) >> (p * bits)) & ((1u << bits) - 1)]++] = from[i];
		t = from;
		from = to;
		to = t;
	}
	if (from != v) /* an odd number of passes ends in tmp */
		memcpy(v, from, n * sizeof(*v));
}

static bool same(const struct sa_uw_row *a, const struct sa_uw_row *b)
{
	return a->kind == b->kind && a->rbp8 == b->rbp8 && a->cfa8 == b->cfa8;
}

/*
 * Sort, drop ends where another FDE starts, merge equal neighbours. @return
 * the rows in @out, or -ENOMEM.
 */
static ssize_t compact(struct raw *v, size_t n, struct sa_uw_row *out)
{
	struct raw *tmp;
	size_t i, k = 0;

	for (i = 1; i < n && key_of(&v[i - 1]) <= key_of(&v[i]); i++)
		;
	/* .text.unlikely and .text.startup come first in .text, not in .eh_frame */
	if (i < n) {
		tmp = malloc(n * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		sort_raw(v, tmp, n);
		free(tmp);
	}
	for (i = 0; i < n; i++) {
		if (i && v[i].pc == v[i - 1].pc)
			continue; /* the first at an address wins (sort_raw()) */
		if (k && same(&out[k - 1], &v[i].r))
			continue;
		out[k] = v[i].r;
		out[k++].pc = (uint32_t)v[i].pc;
	}
	return k;
}

int rec_uw_build(int fd, uint64_t max_ns, const int *stop, struct rec_uwfile *out)
{
	struct acc a = {.deadline = sac_now_ns(CLOCK_THREAD_CPUTIME_ID) + max_ns, .stop = stop};
	struct rec_cfirows *t = NULL;
	ssize_t n;
	int err;

	*out = (struct rec_uwfile){0};
	err = rec_cfirows__open(fd, &t);
	if (err)
		return err;
	out->nloads = rec_cfirows__loads(t, out->loads, REC_UW_LOADS);
	err = rec_cfirows__each(t, on_row, &a);
	rec_cfirows__free(t);
	if (!err && !a.n)
		err = -ENOENT;
	if (!err) {
		out->rows = malloc(a.n * sizeof(*out->rows));
		if (!out->rows)
			err = -ENOMEM;
	}
	if (!err) {
		n = compact(a.v, a.n, out->rows);
		if (n < 0) {
			err = (int)n;
			free(out->rows);
			out->rows = NULL;
		} else {
			out->nrows = (size_t)n;
		}
	}
	free(a.v);
	return err;
}
