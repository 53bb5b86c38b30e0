/* SPDX-License-Identifier: MIT */
/*
 * uwbin.h - the binaries an offline unwind reads, each opened once: one Dwfl
 * per build id (per path without one), shared by every process image that
 * maps it, and per image a small table of where its binaries sit. A
 * whole-system recording holds thousands of images of a few binaries
 * (docs/unwinding.md).
 */
#ifndef SA_REPORT_UWBIN_H
#define SA_REPORT_UWBIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

#include "strpool.h"
#include "unwind.h"

/* One binary, alone in its Dwfl at load base 0. */
struct rpt_uwbin {
	char *path, *build_id; /* owned: the path it was opened from; build_id "" when unchecked */
	Dwfl *dwfl;	       /* NULL: the file is missing, unreadable or another build */
	uint64_t start, end;   /* its module's range in dwfl */
	bool exec;	       /* ET_EXEC: at its link addresses in every image */
};

/* Every binary opened so far. */
struct rpt_uwbins {
	struct rpt_uwbin *bins;
	size_t n, cap;
	struct rpt_hmap index; /* hash of the build id (or path) -> index in bins */
	uint64_t found; /* binaries found at a second path: tables built before may lack them */
};

/* A binary of one process image, where libdwfl would put its module. */
struct rpt_uwmod {
	uint32_t bin;	 /* index in rpt_uwbins.bins */
	uint64_t lo, hi; /* [lo, hi) in the process */
	uint64_t delta;	 /* process address - delta = address in the binary's Dwfl */
};

/* The binaries of one process image, in the order a Dwfl of it reports them. */
struct rpt_uwmods {
	struct rpt_uwmod *m; /* owned */
	size_t n, cap;
	bool attached; /* libdwfl could walk this image (a module has an arch) */
};

/**
 * rpt_uwmods__build() - the table of the image whose executable mappings
 * are @mods (@nmods, borrowed): for the first mapping of each file, the
 * binary from @b (opened on first use) at the load bias that mapping gives,
 * as a Dwfl built from @mods would report it (unwind.c). Files that are
 * missing, of another build id, or where the bias cannot be found are left
 * out. @t: out, released with rpt_uwmods__fini().
 * @return 0 or -ENOMEM.
 */
int rpt_uwmods__build(struct rpt_uwmods *t, struct rpt_uwbins *b,
		      const struct rpt_unwind_module *mods, size_t nmods);

/** rpt_uwmods__at() - the module holding @addr, or NULL. Borrowed from @t. */
const struct rpt_uwmod *rpt_uwmods__at(const struct rpt_uwmods *t, uint64_t addr);

/** rpt_uwmods__fini() - release @t's table. Safe on a zeroed one. */
void rpt_uwmods__fini(struct rpt_uwmods *t);

/** rpt_uwbins__fini() - close every binary. Safe on a zeroed set. */
void rpt_uwbins__fini(struct rpt_uwbins *b);

/**
 * rpt_uw_bias() - the load bias of ELF @elf when mapping @m maps it: the
 * address minus the vaddr of the PT_LOAD segment at m->pgoff.
 * @return 0, or -EINVAL / -ENOENT when no segment holds that offset.
 */
int rpt_uw_bias(Elf *elf, const struct rpt_unwind_module *m, uint64_t *bias);

/**
 * rpt_uw_open() - @m's file, opened and checked against its build id,
 * with its ELF header in @eh. @return an fd the caller owns, or -errno
 * (-ESRCH when the build id differs).
 */
int rpt_uw_open(const struct rpt_unwind_module *m, GElf_Ehdr *eh);

extern const Dwfl_Callbacks rpt_uw_dwfl_cb;
#endif /* SA_REPORT_UWBIN_H */
