/* SPDX-License-Identifier: MIT */
/*
 * profile.h - the aggregated profile every sa-report output is drawn from:
 * named call chains (root first) with sample counts, identical chains merged,
 * names interned in one string pool. Built by the symbolizing pipeline
 * (pipeline.c) or parsed from folded text (folded.c); read by the folded,
 * top, SVG and diff writers.
 */
#ifndef SA_REPORT_PROFILE_H
#define SA_REPORT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What a frame is; drives the SVG colour and the --annotate-frames suffix. */
enum rpt_frame_kind {
	RPT_FRAME_USER = 0,    /* native user code */
	RPT_FRAME_KERNEL = 1,  /* suffix _[k] */
	RPT_FRAME_JIT = 2,     /* suffix _[j] */
	RPT_FRAME_INLINE = 3,  /* suffix _[i] */
	RPT_FRAME_ROOT = 4,    /* the comm (with pid/tid) at the root */
	RPT_FRAME_UNKNOWN = 5, /* [unknown], [libfoo.so] */
	RPT_FRAME_PYTHON = 6   /* a CPython function: suffix _[p], always */
};

/* Bits a frame kind may use: rpt_profile__sort() packs it into its keys. */
#define RPT_FRAME_KIND_BITS 3

/*
 * A frame: an interned name, its kind and, when known, its binary. @module
 * counts only in a profile that has a module table (rpt_profile__add_module()
 * called at least once before the frame is added); otherwise it is stored as
 * 0, so writers that fill only name and kind need not set it.
 */
struct rpt_frame {
	uint32_t name;	 /* offset into the profile's string pool */
	uint32_t kind;	 /* enum rpt_frame_kind */
	uint32_t module; /* pool offset of the binary's path, 0 = unknown */
};

/* A binary the frames name: its path and build id (for pprof mappings). */
struct rpt_module {
	uint32_t path;	   /* pool offset */
	uint32_t build_id; /* pool offset of lower-case hex, 0 = none */
};

/* One distinct call chain. frames[0] is the root (comm), frames[n-1] the leaf. */
struct rpt_stack {
	uint64_t count;
	uint32_t nframes;
	uint32_t first; /* index of frames[0] in rpt_profile.frames */
};

/* What a profile's counts measure (sa-report --off-cpu, --wall). */
enum rpt_value {
	RPT_VALUE_SAMPLES = 0, /* on-CPU samples (COUNT, USTACK records) */
	RPT_VALUE_OFF_CPU = 1, /* microseconds off the CPU (OFFCPU records) */
	RPT_VALUE_WALL = 2,    /* microseconds: samples times the mean period, plus off-CPU */
};

/** rpt_value__is_time() - true when counts of @value are microseconds. */
static inline bool rpt_value__is_time(uint32_t value)
{
	return value == RPT_VALUE_OFF_CPU || value == RPT_VALUE_WALL;
}

/* Facts shown in titles and headers; strings are interned, 0 = none. */
struct rpt_profile_meta {
	uint32_t value; /* enum rpt_value */
	uint32_t host;	/* pool offset, or 0 */
	uint32_t title; /* pool offset, or 0 */
	uint64_t duration_ns;
	uint64_t freq_hz;
	uint64_t lost;	/* lost samples, all causes */
	uint64_t files; /* inputs merged into this profile */
};

struct rpt_profile {
	/* string pool: offset 0 is "" so that 0 means "no name" */
	char *pool;
	size_t pool_len, pool_cap;
	/* frames of every stack, back to back */
	struct rpt_frame *frames;
	size_t nframes, frames_cap;
	/* distinct stacks, in insertion order until rpt_profile__sort() */
	struct rpt_stack *stacks;
	size_t nstacks, stacks_cap;
	uint64_t total; /* sum of counts */
	struct rpt_profile_meta meta;
	/* private: hash indexes for interning and stack merging */
	uint32_t *name_index;
	size_t name_index_cap, nnames;
	uint64_t *stack_index; /* stack index + 1, high 32 bits: the chain's hash */
	size_t stack_index_cap;
	/* binaries named by frames' module field, in insertion order */
	struct rpt_module *modules;
	size_t nmodules, modules_cap;
};

/**
 * rpt_profile__new() - an empty profile.
 * @return a profile the caller releases with rpt_profile__free(), or NULL
 * with errno = ENOMEM.
 */
struct rpt_profile *rpt_profile__new(void);

/** rpt_profile__free() - release a profile and everything in it. Accepts NULL. */
void rpt_profile__free(struct rpt_profile *p);

/**
 * rpt_profile__intern() - the pool offset of a name, adding it if new.
 * @name, @len: copied; need not be NUL terminated.
 * @return the offset (> 0 for any non-empty name, 0 for ""), or -ENOMEM.
 */
int64_t rpt_profile__intern(struct rpt_profile *p, const char *name, size_t len);

/**
 * rpt_profile__copy_meta() - give @dst the metadata of @src (host and
 * title interned in @dst's pool). Not the modules.
 * @return 0 or -ENOMEM.
 */
int rpt_profile__copy_meta(struct rpt_profile *dst, const struct rpt_profile *src);

/** rpt_profile__name() - the name at a pool offset. Borrowed; valid until
 * the next call that adds to the profile. */
static inline const char *rpt_profile__name(const struct rpt_profile *p, uint32_t off)
{
	return p->pool + off;
}

/** rpt_profile__stack_frames() - frames of a stack, root first. Borrowed. */
static inline const struct rpt_frame *rpt_profile__stack_frames(const struct rpt_profile *p,
								const struct rpt_stack *s)
{
	return p->frames + s->first;
}

/**
 * rpt_profile__add() - add @count samples of the chain @frames[0..n) (root
 * first), merging with an identical chain already present. Cost is O(n)
 * expected, independent of how many samples the profile holds.
 * @frames: copied.
 * @return 0 or -ENOMEM.
 */
int rpt_profile__add(struct rpt_profile *p, const struct rpt_frame *frames, uint32_t n,
		     uint64_t count);

/**
 * rpt_profile__reserve() - make room for @nstacks more stacks holding
 * @nframes more frames, so that adding that many grows nothing. A hint:
 * adding more still works.
 * @return 0 or -ENOMEM (the profile is unchanged and still usable).
 */
int rpt_profile__reserve(struct rpt_profile *p, size_t nstacks, size_t nframes);

/**
 * rpt_profile__add_index() - rpt_profile__add() that also says where the
 * chain went: the index in @p->stacks of the (new or merged) stack, valid
 * until rpt_profile__sort(). Lets a caller keep per-stack side data (diff.c
 * keeps the two sides' counts this way).
 * @return the stack index (>= 0) or -ENOMEM.
 */
int64_t rpt_profile__add_index(struct rpt_profile *p, const struct rpt_frame *frames, uint32_t n,
			       uint64_t count);

/**
 * rpt_profile__cmp_stacks() - the order rpt_profile__sort() uses: frame
 * names root first, byte-wise, then kinds, then the shorter chain first.
 * @return <0, 0 or >0 as for qsort().
 */
int rpt_profile__cmp_stacks(const struct rpt_profile *p, const struct rpt_stack *a,
			    const struct rpt_stack *b);

/**
 * rpt_profile__sort() - order stacks by their frame names, root first,
 * byte-wise, so every output is deterministic. Linear in the frames that
 * stacks share (a radix sort, profile_sort.c); the frames are then stored
 * in that order. Invalidates stack and frame pointers.
 */
void rpt_profile__sort(struct rpt_profile *p);

/**
 * rpt_profile__merge() - add every stack of @src into @dst (names re-interned).
 * @return 0 or -ENOMEM.
 */
int rpt_profile__merge(struct rpt_profile *dst, const struct rpt_profile *src);

/**
 * rpt_profile__add_module() - record binary @path with build id @build_id
 * (lower-case hex, NULL or "" = none); a second call for one path keeps the
 * first non-empty build id. Both strings are copied (interned).
 * @return the path's pool offset, to store in rpt_frame.module (> 0), or
 * -EINVAL for an empty path, -ENOMEM.
 */
int64_t rpt_profile__add_module(struct rpt_profile *p, const char *path, const char *build_id);

/**
 * rpt_profile__module() - the module entry whose path is at pool offset
 * @path. Linear in the number of modules (a few hundred at most).
 * @return a borrowed entry valid until the next rpt_profile__add_module(),
 * or NULL when @path is not in the table.
 */
const struct rpt_module *rpt_profile__module(const struct rpt_profile *p, uint32_t path);

#endif /* SA_REPORT_PROFILE_H */
