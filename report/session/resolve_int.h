/* SPDX-License-Identifier: MIT */
/*
 * resolve_int.h - shared by resolve.c (keys into frames) and
 * resolve_names.c (names moved into the profile, cached per file).
 */
#ifndef SA_REPORT_RESOLVE_INT_H
#define SA_REPORT_RESOLVE_INT_H

#include "grow.h"
#include "hash.h"
#include "session_int.h"

#define RES_MAX_FRAMES (2 * SAF_MAX_FRAMES + 2)

/* A user address of a binary, resolved: its frames with the profile's names. */
struct addr_ent {
	uint64_t off, pgoff;
	uint32_t dso;	/* RPT_NO_DSO: an empty slot */
	uint32_t n;	/* frames; 0 = no name found */
	uint32_t first; /* index in addr_cache.frames */
};

/*
 * Addresses recur in many stacks: each (binary, file offset) is symbolized
 * and its names moved into the profile once per file, not once per frame.
 */
struct addr_cache {
	struct addr_ent *slots; /* open addressing, cap = 2^bits */
	size_t cap, used;
	unsigned int bits;
	struct rpt_sym *frames;
	size_t nframes, frames_cap;
};

struct res_ctx {
	const struct rpt_stage_env *e; /* the symbolizer, its pool, the options */
	struct rpt_loaded *l;
	struct rpt_profile *prof;
	const struct rpt_count *c;
	struct rpt_sym fr[RES_MAX_FRAMES]; /* profile names, leaf first while building */
	uint32_t dso[RES_MAX_FRAMES];	   /* binary of each frame, RPT_NO_DSO if none */
	uint32_t cur_dso;		   /* binary of the frames pushed now */
	uint32_t n;
	uint32_t outer_dso; /* binary of the outermost user frame */
	bool outer_unnamed;
	uint64_t dropped;
	uint64_t serial; /* counts resolved keys, from 1 */
	struct addr_cache cache;
	int64_t *mods; /* by binary: its profile module, or -1 before the first use */
	size_t mods_cap;
	struct rpt_hmap jit_pids; /* pid + 1 of every JIT symbol */
	bool jit_pid;		  /* the key's process has JIT symbols */
	struct kstack_ent *kents; /* by l->refs index: kernel stacks resolved once */
	struct ksym_memo *ksyms;  /* KSYM_MEMO slots, or NULL (no memo) */
	struct name_memo *names;  /* NAME_MEMO slots, or NULL (no memo) */
	struct rpt_sym *kframes;
	size_t nkframes, kframes_cap;
	/* symbolizer pool offset -> profile pool offset (rpt_res__name()) */
	struct rpt_hmap name_map;
};

/*
 * A kernel address's symbol, looked up before: kernel stacks differ, their
 * frames recur (the syscall entry is in most). Direct-mapped by address.
 */
#define KSYM_MEMO_BITS 11
struct ksym_memo {
	uint64_t addr;
	const struct rpt_symtab_ent *e; /* may be NULL: no symbol */
	bool used;
};

/* A symbolizer name's profile name, found before (rpt_res__name()). Direct-mapped. */
#define NAME_MEMO_BITS 12
struct name_memo {
	uint32_t off, name;
	bool used;
};

/* A kernel stack's frames in res_ctx.kframes: they depend on its id only. */
struct kstack_ent {
	uint32_t first, n;
	bool done, unnamed;
};

/* A key to resolve: its slot in l->counts and its stacks (n = 0: none). */
struct key_job {
	struct rpt_stackref kstack, ustack;
	uint32_t slot;
	uint32_t kidx; /* the kernel stack's l->refs index */
};

/* Push a frame named in the profile's pool. */
static inline void rpt_res__push_prof(struct res_ctx *x, uint32_t name, uint32_t kind)
{
	if (x->n < RES_MAX_FRAMES) {
		x->dso[x->n] = x->cur_dso;
		x->fr[x->n++] = (struct rpt_sym){name, kind};
	}
}

/** rpt_res__pool_fmt() - intern printf(@fmt, @a, @x) in the symbolizer's @pool. */
int64_t rpt_res__pool_fmt(struct rpt_strpool *pool, const char *fmt, const char *a, uint64_t x);

/** rpt_res__name() - symbolizer pool offset -> @x's profile's, cached, the recent ones memoized. */
int64_t rpt_res__name(struct res_ctx *x, uint32_t off);
/** rpt_res__prof_module() - the profile's module of binary @dso, added once. */
int64_t rpt_res__prof_module(struct res_ctx *x, uint32_t dso);
/** rpt_res__push() - push a frame named in the symbolizer's pool. @return 0 or -ENOMEM. */
int rpt_res__push(struct res_ctx *x, int64_t name, uint32_t kind);
/**
 * rpt_res__addr_lookup() - the frames of file offset @off of binary @dso,
 * from x->cache.frames[*@first]. @return how many (0 = no name), or -ENOMEM.
 */
int rpt_res__addr_lookup(struct res_ctx *x, uint32_t dso, uint64_t off, uint64_t pgoff,
			 uint32_t *first);
/** rpt_res__cache_fini() - release the address cache. */
void rpt_res__cache_fini(struct addr_cache *c);
/**
 * rpt_res__py_first() - where the Python frames of user stack @ips[0..@n)
 * begin: the last run of words tagged as Python frames (the recorder
 * appends them after the native ones), and only in a process whose
 * interpreter the recording says was read; @n when none. A native word
 * may be any 8 bytes (a frame-pointer walk through garbage), tag included.
 */
uint32_t rpt_res__py_first(struct res_ctx *x, const uint64_t *ips, uint32_t n);
/**
 * rpt_res__py_refused() - a process whose CPython frames the recorder could
 * not read (its interpreter record says so): "[python: frames not read]"
 * pushed as the outermost user frame, so its samples are marked. @return
 * 0 or -ENOMEM.
 */
int rpt_res__py_refused(struct res_ctx *x);

/**
 * rpt_res__python() - the user frames x->fr[@n0 .. x->n), leaf first, of a
 * stack whose Python frames are the words @py[0..@npy): each native
 * _PyEval_EvalFrameDefault replaced by the Python frames that call ran
 * (pyframes.c). @return 0 or -ENOMEM.
 */
int rpt_res__python(struct res_ctx *x, uint32_t n0, const uint64_t *py, uint32_t npy);

/** rpt_res__kernel() - push @job's kernel frames, resolved once per kernel stack. */
int rpt_res__kernel(struct res_ctx *x, const struct key_job *job);

#endif /* SA_REPORT_RESOLVE_INT_H */
