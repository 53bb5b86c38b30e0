/* SPDX-License-Identifier: MIT */
/*
 * record.h - what every stage of sa-record shares: the options, the exit
 * codes, the clock, and the layout checks of the records BPF writes
 * (sa_shared.h). Each stage's functions are in its own header (loop.h,
 * sampler/, drain/, meta/, cfi/, output/). Only record/ includes it.
 */
#ifndef REC_RECORD_H
#define REC_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "sa_shared.h"
#include "saf.h"

_Static_assert(sizeof(struct sa_count_key) == 20, "sa_count_key layout");
_Static_assert(sizeof(struct sa_count_val) == 32, "sa_count_val layout");
_Static_assert(sizeof(struct sa_rb_sample) == 48 + 2 * SA_MAX_DEPTH * 8, "sa_rb_sample layout");
_Static_assert(sizeof(struct sa_ctrs) == SA_CTR__NR * 8, "sa_ctrs layout");
_Static_assert(SA_CTR_OFF_LOST_OTHER - SA_CTR_OFF_RUNS == SAF_CTR_OFF_LOST_OTHER - SAF_CTR_OFF_RUNS,
	       "off-CPU counters in one order");
_Static_assert(sizeof(struct sa_off_start) == 48, "sa_off_start layout");
_Static_assert(sizeof(struct sa_rb_offstart) == 24 + 2 * SA_MAX_DEPTH * 8, "sa_rb_offstart layout");
_Static_assert(sizeof(struct sa_rb_offend) == 56, "sa_rb_offend layout");
_Static_assert(sizeof(struct sa_off_key) == 28, "sa_off_key layout");
_Static_assert(sizeof(struct sa_off_val) == 32, "sa_off_val layout");
_Static_assert(sizeof(struct sa_rb_ustack) == 72 + SA_MAX_DEPTH * 8 + SA_USTACK_MAX,
	       "sa_rb_ustack layout");

/* Exit codes (docs/style.md, "Errors and exit codes"). */
#define REC_EXIT_FAIL	      1
#define REC_EXIT_USAGE	      2
#define REC_EXIT_CMD_FAIL     125
#define REC_EXIT_CMD_NOEXEC   126
#define REC_EXIT_CMD_NOTFOUND 127

struct rec_opts {
	unsigned int freq; /* -F */
	bool cycles;	   /* -e cycles */
	const char *event; /* event name as given */
	double duration;   /* seconds, 0 = until stopped */
	double interval;   /* seconds between drains */
	const char *output;
	enum sa_filter_mode filter;
	bool all;   /* -a given */
	pid_t *ids; /* -p / -t list */
	int nids;
	const char *cgroup; /* -G */
	char **cmd;	    /* -- CMD ARGS, NULL-terminated */
	int *cpus;	    /* -C, NULL = every online CPU */
	int ncpus;
	bool idle, user_only, kernel_only, quiet;
	bool no_embed_symbols; /* --no-embed-symbols */
	__u32 stack_map_size;  /* 0 = default */
	__u32 counts_map_size;
	__u32 ringbuf_size;
	enum sa_call_graph call_graph; /* --call-graph */
	__u32 stack_size;	       /* --stack-size: bytes of user stack per dwarf sample */
	bool whole_stack;	       /* --whole-stack: no USTACK_SPARSE (uwtrim.c) */
	uint64_t max_size;	       /* bytes, 0 = none */
	bool off_cpu;		       /* --off-cpu */
	bool no_python;		       /* --no-python */
	uint64_t off_cpu_min_ns;       /* --off-cpu-min, in ns */
	double rotate_secs;	       /* --rotate DURATION, 0 = none */
	uint64_t rotate_bytes;	       /* --rotate SIZE, 0 = none */
	unsigned int keep;	       /* --keep N closed files, 0 = all */
	uint64_t keep_size;	       /* --keep-size bytes of closed files, 0 = any */
	char *cmdline;		       /* argv joined, for META */
	char *target_desc;
};

#endif /* REC_RECORD_H */
