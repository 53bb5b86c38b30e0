/* SPDX-License-Identifier: MIT */
/*
 * record.h - sa-record's internal interfaces: options, the BPF session,
 * the drain, process metadata, targets and output. Only record/ includes it.
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
_Static_assert(sizeof(struct sa_count_val) == 24, "sa_count_val layout");
_Static_assert(sizeof(struct sa_rb_sample) == 48 + 2 * SA_MAX_DEPTH * 8, "sa_rb_sample layout");
_Static_assert(sizeof(struct sa_ctrs) == SA_CTR__NR * 8, "sa_ctrs layout");
_Static_assert(SA_CTR_OFF_LOST_OTHER - SA_CTR_OFF_RUNS == SAF_CTR_OFF_LOST_OTHER - SAF_CTR_OFF_RUNS,
	       "off-CPU counters in one order");
_Static_assert(sizeof(struct sa_off_start) == 32, "sa_off_start layout");
_Static_assert(sizeof(struct sa_rb_offstart) == 24 + 2 * SA_MAX_DEPTH * 8, "sa_rb_offstart layout");
_Static_assert(sizeof(struct sa_rb_offend) == 56, "sa_rb_offend layout");
_Static_assert(sizeof(struct sa_off_key) == 28, "sa_off_key layout");
_Static_assert(sizeof(struct sa_off_val) == 32, "sa_off_val layout");
_Static_assert(sizeof(struct sa_rb_ustack) == 64 + SA_MAX_DEPTH * 8 + SA_USTACK_MAX,
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
	uint64_t off_cpu_min_ns;       /* --off-cpu-min, in ns */
	double rotate_secs;	       /* --rotate DURATION, 0 = none */
	uint64_t rotate_bytes;	       /* --rotate SIZE, 0 = none */
	unsigned int keep;	       /* --keep N closed files, 0 = all */
	uint64_t keep_size;	       /* --keep-size bytes of closed files, 0 = any */
	char *cmdline;		       /* argv joined, for META */
	char *target_desc;
};

/* ---- bpf_session.c ---- */
struct rec_session;

/** Sum over CPUs of one map set's counters. */
struct rec_ctrs {
	__u64 v[SA_CTR__NR];
};

struct rec_session *rec_session__open(const struct rec_opts *o, pid_t child, char *err,
				      size_t errsz);
int rec_session__flip(struct rec_session *s, __u32 *old_epoch);
int rec_session__take_ctrs(struct rec_session *s, __u32 set, struct rec_ctrs *out);
int rec_session__stack_fd(const struct rec_session *s, __u32 set);
int rec_session__counts_fd(const struct rec_session *s, __u32 set);
__u32 rec_session__counts_size(const struct rec_session *s);
bool rec_session__off_cpu(const struct rec_session *s);
int rec_session__offcounts_fd(const struct rec_session *s, __u32 set);
int rec_session__offstart_fd(const struct rec_session *s);
struct bpf_map *rec_session__offrb(const struct rec_session *s);
__u32 rec_session__gen(const struct rec_session *s, __u32 tgid);
struct bpf_map *rec_session__ringbuf(const struct rec_session *s);
struct bpf_map *rec_session__ustack_ringbuf(const struct rec_session *s);
int rec_session__cfi_fd(const struct rec_session *s);
int rec_session__ncpus(const struct rec_session *s);
uint64_t rec_session__kernel_bytes(const struct rec_session *s);
void rec_session__free(struct rec_session *s);

/* ---- stackdb.c ---- */
struct rec_stackdb;

struct rec_stackdb *rec_stackdb__new(void);
__u32 rec_stackdb__intern(struct rec_stackdb *db, __u32 kind, const __u64 *ips, __u32 n,
			  struct saf_writer *w, int *err);
__u32 rec_stackdb__nframes(const struct rec_stackdb *db, __u32 id);
size_t rec_stackdb__count(const struct rec_stackdb *db);
int rec_stackdb__keep_frames(struct rec_stackdb *db);
__u32 rec_stackdb__new_file(struct rec_stackdb *db);
int rec_stackdb__ensure(struct rec_stackdb *db, __u32 id, struct saf_writer *w, __u32 *kind,
			const __u64 **ips, __u32 *n);
void rec_stackdb__free(struct rec_stackdb *db);

/* ---- procmaps.c ---- */
struct rec_procs;

typedef __u32 (*rec_cur_gen_fn)(void *ctx, __u32 tgid);

struct rec_procs *rec_procs__new(struct saf_writer *w, rec_cur_gen_fn cur_gen, void *ctx);
int rec_procs__note(struct rec_procs *p, __u32 tgid, __u32 gen, __u32 tid, const char *comm);
int rec_procs__capture(struct rec_procs *p, __u32 tgid, __u32 gen);
void rec_procs__new_file(struct rec_procs *p);
void rec_procs__free(struct rec_procs *p);

/* ---- buildid.c ---- */
struct rec_buildids;

struct rec_buildids *rec_buildids__new(void);
int rec_buildids__get(struct rec_buildids *c, const char *path, const char *alt_path, uint64_t dev,
		      uint64_t ino, const uint8_t **id);
void rec_buildids__free(struct rec_buildids *c);
int rec_buildid_read_fd(int fd, uint8_t *out, size_t cap);

/* ---- drain.c ---- */
struct rec_drain;

/** Totals over the whole recording, for the status line and END. */
struct rec_totals {
	uint64_t runs, kept, filtered, lost, collisions, truncated, intervals;
	uint64_t off_runs, off_kept, off_short, off_lost, off_recovered; /* --off-cpu periods */
};

struct rec_drain *rec_drain__new(struct rec_session *s, struct saf_writer *w,
				 struct rec_procs *procs);
int rec_drain__poll(struct rec_drain *d, int timeout_ms);
int rec_drain__interval(struct rec_drain *d, uint64_t start_ns, uint64_t grace_ns,
			uint64_t *end_ns);
struct rec_sc;
struct rec_uwtrim;
void rec_drain__set_sc(struct rec_drain *d, struct rec_sc *sc);
void rec_drain__set_trim(struct rec_drain *d, struct rec_uwtrim *trim);
const struct rec_totals *rec_drain__totals(const struct rec_drain *d);
size_t rec_drain__unique_stacks(const struct rec_drain *d);
int rec_drain__keep_frames(struct rec_drain *d);
__u32 rec_drain__new_file(struct rec_drain *d);
void rec_drain__free(struct rec_drain *d);

/* ---- loss.c ---- */
void rec_loss__fill(struct saf_loss *l, const struct rec_ctrs *c, __u64 truncated, __u64 lost_us,
		    __u64 sb_lost);
void rec_totals__add(struct rec_totals *t, const struct saf_loss *l);

/* ---- offcpu.c ---- */
struct rec_offcpu;
struct rec_sc;

/* drain.c's stack id -> file stack id, for the ids of map set @set. */
typedef __u32 (*rec_resolve_fn)(void *ctx, __u32 set, __s32 kid, __u32 kind, int *err);
/* drain.c's frames -> file stack id (0 for none). */
typedef __u32 (*rec_intern_fn)(void *ctx, __u32 kind, const __u64 *ips, __u32 n, int *err);

struct rec_offcpu *rec_offcpu__new(struct rec_session *s, rec_intern_fn intern, void *ctx);
int rec_offcpu__on_rb(void *ctx, void *data, size_t len);
int rec_offcpu__drain(struct rec_offcpu *o, __u32 epoch, rec_resolve_fn resolve, void *ctx);
int rec_offcpu__pin(struct rec_offcpu *o, __u32 epoch, rec_resolve_fn resolve, void *ctx);
int rec_offcpu__write(struct rec_offcpu *o, __u32 set, struct saf_writer *w,
		      struct rec_procs *procs, struct rec_sc *sc);
/* --rotate: a file stack id about to be referenced in the current file. */
typedef int (*rec_carry_fn)(void *ctx, __u32 fid);
void rec_offcpu__set_carry(struct rec_offcpu *o, rec_carry_fn carry, void *ctx);
void rec_offcpu__fill_loss(struct rec_offcpu *o, __u32 set, struct saf_loss *l,
			   const struct rec_ctrs *c);
void rec_offcpu__add_total(struct rec_totals *t, __u32 id, __u64 v);
void rec_offcpu__free(struct rec_offcpu *o);

/* ---- ustacks.c ---- */
struct rec_ustacks;

/* Called per written USTACK with its process image and leaf address. */
typedef int (*rec_ustack_note_fn)(void *ctx, __u32 tgid, __u32 gen, __u64 ip);

struct rec_ustacks *rec_ustacks__new(void);
void rec_ustacks__set_trim(struct rec_ustacks *u, struct rec_uwtrim *trim);
bool rec_ustacks__pending(const struct rec_ustacks *u, __u32 set);
typedef int (*rec_ustack_kfid_fn)(void *ctx, __u32 kfid);
void rec_ustacks__set_ensure(struct rec_ustacks *u, rec_ustack_kfid_fn fn, void *ctx);
/* Called every few captures while a set is trimmed and written: the drain
 * consumes its ring buffers there, so a long interval end loses nothing. */
typedef void (*rec_ustack_pump_fn)(void *ctx);
void rec_ustacks__set_pump(struct rec_ustacks *u, rec_ustack_pump_fn fn, void *ctx);
int rec_ustacks__add(struct rec_ustacks *u, const struct sa_rb_ustack *r, __u32 kfid);
int rec_ustacks__write(struct rec_ustacks *u, __u32 set, struct saf_writer *w,
		       struct rec_procs *procs, rec_ustack_note_fn note, void *ctx);
void rec_ustacks__free(struct rec_ustacks *u);

/* ---- target.c ---- */
int rec_parse_id_list(const char *s, pid_t **out, int *n);
int rec_parse_cpu_list(const char *s, int **out, int *n);
int rec_cgroup_open(const char *path, char *resolved, size_t sz);
int rec_targets_alive(const struct rec_opts *o);
pid_t rec_child__spawn(char **argv, int *go_fd, int *status_fd);
int rec_child__start(int go_fd, int status_fd);
int rec_exit_status(int wstatus);

/* ---- output.c ---- */
int rec_output_open(const char *path, char **tmp);
int rec_output_commit(const char *path, const char *tmp);
void rec_privilege_hint(void);
int rec_write_meta(struct saf_writer *w, const struct rec_opts *o, uint64_t real_ns,
		   uint64_t mono_ns, int ncpus);
uint64_t rec_now_ns(int clock);

/* ---- loop.c ---- */
int rec_run(const struct rec_opts *o, pid_t child, int child_go, int child_status,
	    int *child_wstatus);

#endif /* REC_RECORD_H */
