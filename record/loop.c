// SPDX-License-Identifier: MIT
/*
 * loop.c - one recording from start to END: open the output, load and
 * attach, start the `-- CMD` child, then poll the ring buffer and drain one
 * interval at a time until the duration, a signal, the child's exit, the
 * targets' exit or --max-size ends it; status line and summary on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "bpf_session.h"
#include "clock.h"
#include "drain.h"
#include "fguard.h"
#include "hotplug.h"
#include "loop.h"
#include "maptab.h"
#include "procs.h"
#include "python.h"
#include "rec_output.h"
#include "record.h"
#include "rotate.h"
#include "selfcontained.h"
#include "starve.h"
#include "target.h"
#include "throttle.h"
#include "uwtab.h"
#include "uwtrim.h"

/* The time bound of one file's table (cc1's 479k rows take 0.65 s here). */
#define UW_BUILD_NS 1000000000ull

/*
 * The stop path (docs/reliability.md, "The stop path"): SIGTERM ends the
 * recorder within STOP_BOUND_NS of the signal, --duration D within D +
 * STOP_BOUND_NS of its start, whatever the load. END is written at most
 * END_NS after the stop, leaving EXIT_NS for the signal's delivery (the
 * handler takes the stop's time when the thread gets a CPU: up to 0.44 s
 * after the kill beside 300 busy threads), cleanup and the exit. The
 * drain under way at the stop reads stacks until BUSY_STACKS_NS after it
 * and writes counts until BUSY_COUNTS_NS; the last drain gets what is
 * left but FINISH_NS, the end's side band and symbols get that. What a
 * cut skips is counted (deadline_lines()).
 */
#define STOP_BOUND_NS  2000000000ull
#define EXIT_NS	       1000000000ull
#define END_NS	       (STOP_BOUND_NS - EXIT_NS)
#define BUSY_STACKS_NS 250000000ull
#define BUSY_COUNTS_NS 500000000ull
#define FINISH_NS      250000000ull
/* --duration after a slow start-up: the least the last drain and the end get */
#define MIN_END_NS 400000000ull
/*
 * The grace period after a flip: two sample periods, but no longer than
 * this (a program run takes microseconds; at -F 1 it was 2 s of each
 * drain, the last one's included).
 */
#define MAX_GRACE_NS 100000000ull

static volatile sig_atomic_t stop_signal;
/* a second stop signal: end now, without the last interval's drain */
static volatile sig_atomic_t hurry;
/* CLOCK_MONOTONIC ns of the first stop signal (clock_gettime is async-signal-safe) */
static volatile uint64_t signal_ns;
/*
 * Start-up (start(), before sampling is handed to the loop): a stop
 * abandons it (abandon()); a second stop ends the process in the handler,
 * removing the temporary file if it has one.
 */
static volatile sig_atomic_t starting;
static const char *volatile start_tmp;
static const char *volatile start_lock; /* its name, once held ... */
static volatile int start_lock_fd;	/* ... on this fd */

static void on_stop(int sig)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	struct timespec ts;

	if (stop_signal) {
		hurry = 1;
		if (starting) { /* unlink, sigaction and raise are async-signal-safe */
			if (start_tmp)
				unlink(start_tmp);
			rec_output_unlink_lock(start_lock, start_lock_fd);
			sigaction(sig, &dfl, NULL);
			raise(sig); /* blocked until this handler returns, then fatal */
			return;
		}
	} else if (!clock_gettime(CLOCK_MONOTONIC, &ts))
		signal_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	stop_signal = sig;
}

/* Start-up is over: a stop ends a recording from now on. */
static void started(void)
{
	char *lock = (char *)start_lock;

	starting = 0;
	start_tmp = start_lock = NULL;
	free(lock);
}

/* Between the steps of start-up: -ECANCELED once a stop signal came. */
static int stopped(void)
{
	return stop_signal ? -ECANCELED : 0;
}

static void stop_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

/*
 * Stop signals held back (@on) while a file is made and its name noted for
 * the handler, or let through again: one that came meanwhile is handled at
 * once then. A second signal between the two left FILE.lock or
 * FILE.tmp-PID behind.
 */
static void defer_stops(bool on)
{
	sigset_t set;

	stop_set(&set);
	pthread_sigmask(on ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

/* SA_RECORD_TEST_HOLD: how long its step is held (tests/cli/5221-startup-holds.t) */
#define HOLD_NS 5000000000ull

void rec_start__hold(const char *step)
{
	static const char *held; /* each step once (-G: not at every process) */
	const char *want = getenv("SA_RECORD_TEST_HOLD");
	uint64_t now = sac_now_ns(CLOCK_MONOTONIC), until = now + HOLD_NS;
	bool main_thread = gettid() == getpid();
	sigset_t set, old;
	struct timespec ts;

	if (!want || strcmp(want, step) || held == step)
		return;
	held = step;
	stop_set(&set);
	pthread_sigmask(SIG_BLOCK, &set, &old); /* a stop from here on ends the ppoll() */
	fprintf(stderr, "sa-record: test hold: %s\n", step);
	for (; now < until && !(main_thread && stop_signal); now = sac_now_ns(CLOCK_MONOTONIC)) {
		ts.tv_sec = (time_t)((until - now) / 1000000000ull);
		ts.tv_nsec = (long)((until - now) % 1000000000ull);
		/* elsewhere (the BPF load) held whatever comes, as the verifier is */
		ppoll(NULL, 0, &ts, main_thread ? &old : &set);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * SA_DIAG=1: when each step of the stop path ended, printed at the end in
 * ms after the stop (docs/reliability.md, "The stop path").
 */
#define DIAG_MARKS 24
static struct {
	bool on;
	int n;
	uint64_t at[DIAG_MARKS];
	const char *what[DIAG_MARKS];
} diag;

static void mark_at(const char *what, uint64_t at)
{
	if (diag.on && diag.n < DIAG_MARKS) {
		diag.what[diag.n] = what;
		diag.at[diag.n++] = at;
	}
}

static void mark(const char *what)
{
	mark_at(what, diag.on ? sac_now_ns(CLOCK_MONOTONIC) : 0);
}

static void print_marks(uint64_t stop_ns)
{
	int i;

	if (!diag.on || !stop_ns)
		return;
	fprintf(stderr, "sa-record: stop path (ms after the stop):");
	for (i = 0; i < diag.n; i++)
		fprintf(stderr, " %s %+.1f", diag.what[i], ((double)diag.at[i] - stop_ns) / 1e6);
	fprintf(stderr, "\n");
}

static void on_child(int sig)
{
	(void)sig; /* only to interrupt poll() */
}

void rec_signals__install(void)
{
	struct sigaction sa = {.sa_handler = on_stop}, old;
	sigset_t set;

	starting = 1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* under nohup(1) a hangup stays ignored, as asked */
	if (!sigaction(SIGHUP, NULL, &old) && old.sa_handler != SIG_IGN)
		sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	/*
	 * A mask comes through exec: a parent that blocked SIGHUP left it
	 * pending for good (issue 50: a stop 0.3 s after the exec was still
	 * unread 19.7 s later), and every wait that unblocks "the mask it had"
	 * (open_session()) put the inherited block back.
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

/*
 * SIGPIPE (stderr on a closed pipe) and SIGUSR1/2 are ignored: by default
 * they killed the recorder without an END chunk. Set after the `-- CMD`
 * child is forked: an ignored signal stays ignored through its exec.
 */
static void ignore_signals(void)
{
	struct sigaction sa = {.sa_handler = SIG_IGN};

	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
}

struct run {
	const struct rec_opts *o;
	int fd;
	int lock;	    /* rec_output_lock() */
	char *tmp;	    /* the output's name until commit() */
	bool no_priv;	    /* perf_event_open() or bpf() said EPERM/EACCES */
	bool header_failed; /* the file header could not be written (a full disk) */
	struct saf_writer *w;
	struct rec_session *s;
	struct rec_procs *procs;
	struct rec_drain *d;
	struct rec_sc *sc;
	struct rec_uwtab *uw;	 /* --off-cpu, --call-graph auto: the in-kernel unwinder's tables */
	struct rec_uwtrim *trim; /* --call-graph dwarf or auto, without --whole-stack */
	struct rec_py *py;	 /* CPython frames, unless --no-python or not fp */
	uint64_t t0, iv_start, next_iv, end_at, grace;
	uint64_t end_by;   /* --duration: END written by then (its start + D + the bound) */
	uint64_t short_ns; /* --duration cut short by this after a slow start-up */
	uint64_t stop_at;  /* once stopping: the stop's time (stop_time()) */
	uint64_t stop_by;  /* ... and when END must be written by (end_by()) */
	uint64_t exec_at;  /* --duration: when the process began */
	pid_t child;
	int *child_wstatus;
	bool child_done;
	bool tty;
	struct rec_rotate *rot;	   /* --rotate, else NULL */
	struct rec_starve *starve; /* NULL, or the wait for a CPU (drain/starve.c) */
	uint64_t file_t0;	   /* the current file's start (--rotate) */
	struct rec_totals base;	   /* totals when the current file began */
	uint64_t file_ivs;	   /* intervals written whole to the current file */
	uint64_t meta_clipped;	   /* command line, target clipped (strclip.h) */
};

static __u32 cur_gen(void *ctx, __u32 tgid)
{
	return rec_session__gen(ctx, tgid);
}

static void human(uint64_t b, char *buf, size_t sz)
{
	if (b >= 10 << 20)
		snprintf(buf, sz, "%.1f MiB", b / 1048576.0);
	else
		snprintf(buf, sz, "%.1f KiB", b / 1024.0);
}

static void status_line(const struct run *r, uint64_t now)
{
	const struct rec_totals *t = rec_drain__totals(r->d);
	char b[32];

	if (!r->tty)
		return;
	human(saf_writer__bytes(r->w), b, sizeof(b));
	fprintf(stderr, "\rsa-record: %.0fs  samples %llu  stacks %zu  lost %llu  %s\033[K",
		(now - r->t0) / 1e9, (unsigned long long)t->kept, rec_drain__unique_stacks(r->d),
		(unsigned long long)t->lost, b);
}

/* What a user controls, cut to what a record holds (docs/reliability.md, "Long names"). */
static void clipped_line(const struct run *r)
{
	struct rec_sc_stats st;
	uint64_t over, cut, imgs;

	rec_sc__stats(r->sc, &st);
	if (st.es.clipped || st.clipped_paths || r->meta_clipped)
		fprintf(stderr,
			"sa-record: clipped to %d bytes: %llu symbol names, %llu mapping paths, "
			"%llu command lines\n",
			SAF_MAX_STRING, (unsigned long long)st.es.clipped,
			(unsigned long long)st.clipped_paths, (unsigned long long)r->meta_clipped);
	over = rec_maptab__over(rec_sc__maptab(r->sc), &cut);
	if (over || cut) /* meta/maptab_int.h: MAPTAB_MAX_PER_IMAGE, _MAX_BYTES, _PROC_NS */
		fprintf(stderr,
			"sa-record: mappings not tracked: %llu past 4096 a process image or 64 MiB "
			"in all, and the rest of %llu /proc/PID/maps read past 100 ms\n",
			(unsigned long long)over, (unsigned long long)cut);
	/* meta/maptab.h: rec_maptab__defer(); not LOSS's sideband_lost (the kernel's) */
	over = rec_maptab__unwritten(rec_sc__maptab(r->sc), &imgs);
	if (over)
		fprintf(stderr,
			"sa-record: sideband_unwritten %llu mappings of %llu process images "
			"not written: no sample hit them\n",
			(unsigned long long)over, (unsigned long long)imgs);
}

/* Perf maps (docs/security.md, "JIT maps"): only when some were read. */
static void jit_line(const struct run *r)
{
	struct rec_sc_stats st;

	rec_sc__stats(r->sc, &st);
	if (st.jit.bytes || st.jit.over_proc || st.jit.over_file || st.jit.over_user)
		fprintf(stderr,
			"sa-record: JIT maps: %llu bytes read, %llu rewritten and %llu replaced "
			"maps read again; budgets spent: %llu by process, %llu by file, "
			"%llu by user\n",
			(unsigned long long)st.jit.bytes, (unsigned long long)st.jit.rewritten,
			(unsigned long long)st.jit.replaced, (unsigned long long)st.jit.over_proc,
			(unsigned long long)st.jit.over_file, (unsigned long long)st.jit.over_user);
}

static void uw_summary(const struct run *r)
{
	const struct rec_uwtab_stats *u = rec_uwtab__stats(r->uw);
	const uint64_t *c = rec_drain__totals(r->d)->uw;

	fprintf(stderr,
		"sa-record: unwind tables: %llu files, %llu tables, %llu rows (%llu KiB), "
		"%llu freed, %llu without CFI, %llu over budget, %llu too slow, %llu unreadable, "
		"%llu mappings (%llu left out); built in %.0f ms of CPU (longest %.0f ms), "
		"waited for at most %.0f ms, %llu still building\n",
		(unsigned long long)u->files, (unsigned long long)u->tables,
		(unsigned long long)u->rows, (unsigned long long)(u->rows * 8 / 1024),
		(unsigned long long)u->freed, (unsigned long long)u->nocfi,
		(unsigned long long)u->nofit, (unsigned long long)u->slow,
		(unsigned long long)u->failed, (unsigned long long)u->ranges,
		(unsigned long long)u->rfull, u->build_ns / 1e6, u->max_build_ns / 1e6,
		u->max_wait_ns / 1e6, (unsigned long long)u->waiting);
	fprintf(stderr,
		"sa-record: in-kernel unwinding: on-CPU %llu walked, %llu copied instead; "
		"off-CPU %llu walked, %llu by frame pointers (no tables yet), %llu cut short\n",
		(unsigned long long)c[SA_CTR_UW - SA_CTR_UW],
		(unsigned long long)c[SA_CTR_UW_COPY - SA_CTR_UW],
		(unsigned long long)c[SA_CTR_OFF_UW - SA_CTR_UW],
		(unsigned long long)c[SA_CTR_OFF_UW_FP - SA_CTR_UW],
		(unsigned long long)c[SA_CTR_OFF_UW_CUT - SA_CTR_UW]);
}

/* A storm of busy threads held the drain off the CPUs (record/drain/starve.c). */
static void starve_line(const struct run *r)
{
	const struct rec_starve_stats *s = r->starve ? rec_starve__stats(r->starve) : NULL;

	if (s && (s->raised || s->raise_err))
		fprintf(stderr, "sa-record: waited for a CPU %llu ms of %llu ms: %s %d%s%s\n",
			(unsigned long long)(s->waited_ns / 1000000),
			(unsigned long long)(s->window_ns / 1000000),
			s->raised ? "raised to nice" : "could not raise to nice", s->nice,
			s->raise_err ? ": " : "", s->raise_err ? strerror(-s->raise_err) : "");
}

/* What the deadlines of the drain and of the end skipped (docs/reliability.md, "The stop path"). */
static void deadline_lines(const struct run *r)
{
	const struct rec_totals *t = rec_drain__totals(r->d);
	struct rec_sc_stats st;

	rec_sc__stats(r->sc, &st);
	if (t->late) /* drain/drain.c: stacks not read, counts not written */
		fprintf(stderr,
			"sa-record: %llu samples dropped at the drain's deadline "
			"(counted in lost_userspace)\n",
			(unsigned long long)t->late);
	if (t->bare) /* drain/drain.c: describe() */
		fprintf(stderr,
			"sa-record: %llu samples kept without their process's mappings or "
			"symbols: not captured by the drain's deadline\n",
			(unsigned long long)t->bare);
	if (st.sb.unhandled) /* meta/sideband.c: the last poll's deadline */
		fprintf(stderr,
			"sa-record: %llu side-band records (mappings, execs, exits) not handled "
			"by the end's deadline\n",
			(unsigned long long)st.sb.unhandled);
}

static void summary(const struct run *r)
{
	const struct rec_totals *t = rec_drain__totals(r->d);
	char b[32], k[32], py[1024];

	if (r->o->quiet)
		return;
	human(saf_writer__bytes(r->w), b, sizeof(b));
	human(rec_session__kernel_bytes(r->s), k, sizeof(k));
	fprintf(stderr,
		"%ssa-record: %s: %llu samples kept of %llu runs (%llu filtered, %llu lost"
		", %llu collisions recovered, %llu truncated), %zu unique stacks, "
		"%llu intervals, %s; kernel maps %s\n",
		r->tty ? "\r\033[K" : "", r->o->output, (unsigned long long)t->kept,
		(unsigned long long)t->runs, (unsigned long long)t->filtered,
		(unsigned long long)t->lost, (unsigned long long)t->collisions,
		(unsigned long long)t->truncated, rec_drain__unique_stacks(r->d),
		(unsigned long long)t->intervals, b, k);
	clipped_line(r);
	starve_line(r);
	if (r->short_ns)
		fprintf(stderr,
			"sa-record: start-up took %.1f s: recorded %.1f s of --duration %g, to end "
			"within %.0f s of it\n",
			(r->t0 - r->exec_at) / 1e9, (r->end_at - r->t0) / 1e9, r->o->duration,
			STOP_BOUND_NS / 1e9);
	if (t->throttled) /* sampler/throttle.c */
		fprintf(stderr,
			"sa-record: the kernel throttled sampling %llu times: about %llu samples "
			"not taken (kernel.perf_event_max_sample_rate lowered while recording?)\n",
			(unsigned long long)rec_throttle__spans(rec_session__throttle(r->s)),
			(unsigned long long)t->throttled);
	deadline_lines(r);
	if (t->files_skipped) {
		struct rec_fguard_stats g;

		rec_fguard_stats(&g);
		fprintf(stderr,
			"sa-record: %llu files not read: their file system did not answer within "
			"%u ms (%u devices skipped)\n",
			(unsigned long long)t->files_skipped, REC_FGUARD_DEADLINE_MS, g.blocked);
	}
	jit_line(r);
	if (r->o->off_cpu)
		fprintf(stderr,
			"sa-record: off-CPU: %llu periods kept of %llu (%llu shorter than "
			"--off-cpu-min, %llu lost, %llu stack clashes recovered)\n",
			(unsigned long long)t->off_kept, (unsigned long long)t->off_runs,
			(unsigned long long)t->off_short, (unsigned long long)t->off_lost,
			(unsigned long long)t->off_recovered);
	if (r->uw)
		uw_summary(r);
	if (r->py && rec_py__summary(r->py, py, sizeof(py)))
		fprintf(stderr, "sa-record: %s\n", py);
	if (r->trim) {
		const struct rec_uwtrim_stats *u = rec_uwtrim__stats(r->trim);

		fprintf(stderr,
			"sa-record: stack copies: %llu of %llu kept only the words an unwind reads "
			"(%llu cut short), %llu of %llu bytes kept\n",
			(unsigned long long)u->trimmed, (unsigned long long)u->captures,
			(unsigned long long)u->cut_short, (unsigned long long)u->bytes_out,
			(unsigned long long)u->bytes_in);
	}
}

/* true when the recording should end after the next drain */
static bool should_stop(struct run *r, uint64_t now)
{
	pid_t p;
	int ws;

	if (stop_signal)
		return true;
	if (r->end_at && now >= r->end_at)
		return true;
	/* -p/-t: checked at every poll (<= 100 ms), so the end comes quickly */
	if (!r->o->cmd && !rec_targets_alive(r->o))
		return true;
	if (r->child > 0 && !r->child_done) {
		p = waitpid(r->child, &ws, WNOHANG);
		if (p == r->child) {
			r->child_done = true;
			*r->child_wstatus = ws;
		}
	}
	return r->child_done;
}

/*
 * The first interval is written: the recording replaces FILE (FILE.old
 * kept). Once stopping, the disk is not waited for (rec_output_commit()):
 * fdatasync() took 0.49 s of the stop's budget once.
 */
static int commit(struct run *r)
{
	bool stopping = stop_signal || r->stop_at ||
			(r->end_at && sac_now_ns(CLOCK_MONOTONIC) >= r->end_at);
	char msg[8192];
	int err;

	if (!r->tmp)
		return 0;
	err = r->rot ? rec_rotate__commit(r->rot, r->tmp, r->fd, !stopping, msg, sizeof(msg))
		     : rec_output_commit(r->o->output, r->tmp, r->fd, !stopping, msg, sizeof(msg));
	mark("commit");
	if (err) {
		fprintf(stderr, "%ssa-record: %s\n", r->tty ? "\n" : "", msg);
		return err;
	}
	free(r->tmp);
	r->tmp = NULL;
	return 0;
}

/* The END of the current file: its own intervals and samples. */
static struct saf_end file_end(const struct run *r, uint64_t end_ns)
{
	const struct rec_totals *t = rec_drain__totals(r->d);

	return (struct saf_end){.end_mono_ns = end_ns,
				.samples = t->kept - r->base.kept,
				.lost = t->lost - r->base.lost,
				.intervals = t->intervals - r->base.intervals};
}

/*
 * --rotate, after an interval's end: END this file and begin the next with
 * the next interval; what the samples there refer to is written again as
 * they need it. An error stops the recording; what was written stays.
 */
static int rotate(struct run *r)
{
	uint64_t mono = r->iv_start, now = sac_now_ns(CLOCK_MONOTONIC);
	uint64_t real = rec_output_realtime_ns() - (now - mono);
	struct saf_end end = file_end(r, mono);
	int err = saf_writer__finish(r->w, &end);

	if (err)
		return err;
	err = close(r->fd) ? -errno : 0;
	r->fd = -1;
	if (err)
		return err;
	rec_rotate__name(r->rot, real);
	r->fd = rec_rotate__open(r->rot);
	if (r->fd < 0)
		return r->fd;
	err = saf_writer__next_file(r->w, r->fd);
	if (!err)
		err = rec_write_meta(r->w, r->o, real, mono, rec_session__ncpus(r->s), NULL);
	if (err) {
		rec_rotate__discard(r->rot); /* no META (a full disk): nothing to keep */
		return err;
	}
	r->base = *rec_drain__totals(r->d);
	r->file_t0 = mono;
	r->file_ivs = 0;
	rec_procs__new_file(r->procs);
	rec_py__new_file(r->py);
	rec_maptab__new_file(rec_sc__maptab(r->sc)); /* before the head re-emits them */
	err = rec_sc__new_file(r->sc, rec_drain__new_file(r->d));
	/*
	 * What the file before last held is free now, but glibc keeps freed
	 * pages below the top of the heap: give them back, or the RSS stays at
	 * the busiest files' high-water mark (docs/deploy.md).
	 */
	malloc_trim(0);
	if (!err && (err = rec_rotate__prune(r->rot)) < 0) {
		fprintf(stderr, "%ssa-record: --keep: %s\n", r->tty ? "\n" : "", strerror(-err));
		err = 0;
	}
	return err < 0 ? err : 0;
}

/* A poll's wait: until the next interval or --duration's end, at most 100 ms; none once stopping.
 */
static int poll_ms(const struct run *r, uint64_t now)
{
	uint64_t until = r->end_at && r->end_at < r->next_iv ? r->end_at : r->next_iv;

	if (stop_signal || until <= now)
		return 0;
	return until - now >= 100000000ull ? 100 : (int)((until - now) / 1000000) + 1;
}

/* The stop's time, seen at @now: the first signal's, --duration's end, or @now. */
static uint64_t stop_time(const struct run *r, uint64_t now)
{
	uint64_t stop = now, s = signal_ns;

	if (s && s < stop)
		stop = s;
	if (r->end_at && r->end_at < stop)
		stop = r->end_at;
	return stop;
}

/* When END must be written after a stop at @stop: END_NS after it, and --duration's bound. */
static uint64_t end_by(const struct run *r, uint64_t stop)
{
	uint64_t by = stop + END_NS;

	return r->end_by && r->end_by < by ? r->end_by : by;
}

static int record_loop(struct run *r)
{
	uint64_t now, t;
	bool last = false;
	int err;

	while (!last) {
		now = sac_now_ns(CLOCK_MONOTONIC);
		err = rec_drain__poll(r->d, poll_ms(r, now));
		/* once stopping, the last drain's own turn of the side band is enough */
		if (!err && !stop_signal &&
		    !(r->end_at && sac_now_ns(CLOCK_MONOTONIC) >= r->end_at))
			err = rec_sc__poll(r->sc);
		if (err)
			return err;
		rec_uwtab__poll(r->uw); /* tables the worker built */
		now = sac_now_ns(CLOCK_MONOTONIC);
		last = should_stop(r, now);
		if (hurry)
			break; /* END with what is written; the interval under way is lost */
		if (!last && now < r->next_iv)
			continue;
		if (last) {
			mark("seen");
			r->stop_at = stop_time(r, now);
			r->stop_by = end_by(r, r->stop_at);
			rec_drain__set_last(r->d, r->stop_by - FINISH_NS);
		}
		t = sac_now_ns(CLOCK_MONOTONIC);
		err = rec_drain__interval(r->d, r->iv_start, r->grace, &r->iv_start);
		if (last || stop_signal ||
		    (r->end_at && sac_now_ns(CLOCK_MONOTONIC) >= r->end_at)) {
			mark_at(last ? "last-drain" : "drain", t);
			mark("drained");
		}
		r->file_ivs += !err;
		/* a CPU back from offline: sampled again from the next interval (hotplug.c) */
		if (!err && (err = rec_hotplug__check(rec_session__hotplug(r->s), r->w, last)) > 0)
			err = 0;
		/* the last interval is also the first: committed with END, after finish() */
		if (!err && !last)
			err = commit(r);
		if (!err && r->rot && !last &&
		    rec_rotate__due(r->rot, r->file_t0, r->iv_start, saf_writer__bytes(r->w)))
			err = rotate(r);
		if (err)
			return err;
		while (r->next_iv <= now)
			r->next_iv += (uint64_t)(r->o->interval * 1e9);
		status_line(r, now);
		if (r->o->max_size && saf_writer__bytes(r->w) >= r->o->max_size)
			last = true;
	}
	return 0;
}

/*
 * -G: the mappings of the cgroup's processes now, into the map table only
 * (their records are written when they are sampled). A process is
 * otherwise read from /proc when its first sample is written, at the end
 * of an interval, and a short-lived one has gone by then: the compile
 * loop of make accuracy lost the frames of its first cc1, 2.2% of its
 * samples. At most 4,096 processes.
 */
static int preload_one(void *arg, pid_t pid)
{
	struct run *r = arg;
	int err;

	rec_start__hold("preload");
	err = stopped();

	if (!err && rec_maptab__load_proc(rec_sc__maptab(r->sc), (uint32_t)pid,
					  rec_session__gen(r->s, (__u32)pid)) == -ENOMEM)
		err = -ENOMEM;
	return err;
}

static int capture_targets(struct run *r)
{
	const struct rec_opts *o = r->o;
	int i, err;

	if (o->filter == SA_FILTER_CGROUP) {
		err = rec_cgroup_pids(o->cgroup, 4096, preload_one, r);
		return err == -ENOMEM || err == -ECANCELED ? err : 0;
	}
	if (o->filter != SA_FILTER_TGID)
		return 0;
	for (i = 0; i < o->nids; i++) {
		rec_start__hold("capture");
		if ((err = stopped()))
			return err;
		err = rec_procs__capture(r->procs, o->ids[i], rec_session__gen(r->s, o->ids[i]));
		if (err)
			return err;
	}
	return saf_writer__flush(r->w);
}

/* A mapping of a process that may be sampled: its table, and its range in the kernel. */
static void on_map(void *arg, int fd, const struct saf_map *m)
{
	struct run *r = arg;
	struct rec_uwmap um = {.pid = m->pid,
			       .gen = m->gen,
			       .start = m->start,
			       .end = m->end,
			       .pgoff = m->pgoff,
			       .dev = m->dev,
			       .ino = m->inode,
			       .path = m->path.str};

	if (rec_session__is_target(r->s, m->pid))
		rec_uwtab__map(r->uw, fd, &um);
}

static bool on_map_want(void *arg, uint32_t pid)
{
	return rec_session__is_target(((struct run *)arg)->s, pid);
}

/*
 * `-- CMD`: the tables of the program and of the C library and dynamic
 * loader sa-record itself maps (the same files CMD maps, most often) are
 * built before CMD starts, so that its first blocks find them.
 */
static void prebuild(struct run *r)
{
	char path[4096], *line = NULL, *p;
	const char *dirs = getenv("PATH");
	size_t cap = 0, n;
	FILE *f;

	for (p = (char *)dirs; !strchr(r->o->cmd[0], '/') && p && *p; p += n + !!p[n]) {
		n = strcspn(p, ":");
		snprintf(path, sizeof(path), "%.*s/%s", (int)n, p, r->o->cmd[0]);
		if (!access(path, X_OK))
			break;
	}
	/* the program as the side band will name it: /usr/bin/python3 is python3.11 */
	p = realpath(strchr(r->o->cmd[0], '/') || !p || !*p ? r->o->cmd[0] : path, NULL);
	if (p)
		rec_uwtab__prebuild(r->uw, p);
	free(p);
	rec_start__hold("prebuild");
	f = fopen("/proc/self/maps", "re");
	/* each build is bounded (UW_BUILD_NS); a stop skips those not begun */
	while (f && !stop_signal && getline(&line, &cap, f) > 0) {
		p = strchr(line, '/');
		if (!p || !strstr(line, " r-xp ") ||
		    (!strstr(p, "/libc.so") && !strstr(p, "/ld-linux")))
			continue;
		p[strcspn(p, "\n")] = '\0';
		rec_uwtab__prebuild(r->uw, p);
	}
	free(line);
	if (f)
		fclose(f);
}

/* --off-cpu, --call-graph auto: every executable mapping seen from now on gets its table. */
static int start_uw(struct run *r)
{
	int rows_fd, procs_fd;
	__u32 rows = rec_session__uw(r->s, &rows_fd, &procs_fd);

	if (!rows)
		return 0;
	r->uw = rec_uwtab__new(rows_fd, procs_fd, rows, UW_BUILD_NS);
	if (!r->uw)
		return -errno;
	rec_maptab__on_map(rec_sc__maptab(r->sc), on_map, r);
	rec_maptab__on_map_want(rec_sc__maptab(r->sc), on_map_want);
	if (r->o->cmd)
		prebuild(r);
	return 0;
}

/* rec_session__open() on a thread of its own: the BPF load does not end at a signal. */
struct opening {
	const struct rec_opts *o;
	pid_t child;
	struct rec_session *s;
	int e;
	int done[2]; /* a byte once rec_session__open() returned */
	char err[512];
};

static void *opening_main(void *arg)
{
	struct opening *op = arg;

	rec_start__hold("load");
	op->s = rec_session__open(op->o, op->child, op->err, sizeof(op->err));
	op->e = op->s ? 0 : -errno;
	if (write(op->done[1], "", 1) != 1)
		op->e = op->e ? op->e : -EIO;
	return NULL;
}

/*
 * Load and attach (rec_session__open()), waiting for it or for a stop
 * signal, whichever comes first: the load (libbpf parsing the kernel's
 * BTF, the verifier) took 0.5-1.2 s on a loaded host and has no point at
 * which to look for a stop. The thread starts with the stop signals
 * blocked, so they come here (and do not restart the verifier there).
 * After a stop it is left to the process's exit (abandon()): its BPF
 * objects are file descriptors the kernel closes.
 */
static int open_session(struct run *r, char *err, size_t errsz)
{
	struct opening *op = calloc(1, sizeof(*op));
	struct pollfd pfd = {.events = POLLIN};
	sigset_t stops, old;
	pthread_t th;
	int e;

	if (!op)
		return -ENOMEM;
	op->o = r->o;
	op->child = r->child;
	if (pipe2(op->done, O_CLOEXEC)) {
		e = -errno;
		free(op);
		return e;
	}
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stops, &old);
	e = -pthread_create(&th, NULL, opening_main, op);
	pfd.fd = op->done[0];
	/* ppoll() unblocks them while it waits: a stop before it is not missed */
	while (!e && !stop_signal && ppoll(&pfd, 1, NULL, &old) <= 0)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!e && !(pfd.revents & POLLIN)) {
		pthread_detach(th); /* a stop: abandoned with it */
		return -ECANCELED;
	}
	if (!e) {
		pthread_join(th, NULL);
		e = op->e;
		r->s = op->s;
		snprintf(err, errsz, "%s", op->err);
	}
	close(op->done[0]);
	close(op->done[1]);
	free(op);
	return e;
}

static int start(struct run *r, int go, int status, char *err, size_t errsz)
{
	const struct rec_opts *o = r->o;
	uint64_t real;
	int e;

	if ((o->rotate_secs || o->rotate_bytes) && !(r->rot = rec_rotate__new(o))) {
		e = -errno;
		snprintf(err, errsz, "--rotate: %s: %s", o->output, strerror(-e));
		return e;
	}
	rec_fguard_enable(0); /* others' files: a deadline, on a worker */
	defer_stops(true);
	r->lock = rec_output_lock(o->output, !r->rot, err, errsz);
	if (r->lock >= 0) {
		start_lock_fd = r->lock;
		start_lock = rec_output_lock_name(o->output); /* freed by started() */
	}
	defer_stops(false);
	if (r->lock < 0)
		return r->lock;
	rec_start__hold("lock");
	if ((e = stopped()))
		return e;
	defer_stops(true);
	r->fd = rec_output_open(o->output, &r->tmp);
	start_tmp = r->tmp;
	defer_stops(false);
	if (r->fd < 0) {
		if (r->fd == -EISDIR)
			snprintf(err, errsz, "cannot create %s: %s", o->output, strerror(-r->fd));
		else
			snprintf(err, errsz, "cannot create %s.tmp-%d: %s", o->output,
				 (int)getpid(), strerror(-r->fd));
		return r->fd;
	}
	/*
	 * dwarf and auto: chunks of stack copies, ~2 MB of input a second at
	 * 999 Hz on 2 CPUs. Level 1 compresses them 2-3x faster than the
	 * default 3 for 8% more bytes (measured on a compile loop's samples):
	 * zstd was a quarter of the recorder's CPU.
	 */
	r->w = saf_writer__open_fd(
		r->fd, &(struct saf_writer_opts){.sz = sizeof(struct saf_writer_opts),
						 .zstd_level = o->call_graph == SA_CG_FP ? 0 : 1});
	if (!r->w) {
		e = -errno;
		snprintf(err, errsz, "writing %s: %s", r->tmp, strerror(-e));
		r->header_failed = true;
		return e;
	}
	rec_start__hold("output");

	/* before the BPF program: every exec it counts is seen by the side-band */
	r->sc = rec_sc__open(&(struct rec_sc_opts){.sz = sizeof(struct rec_sc_opts),
						   .w = r->w,
						   .no_embed = o->no_embed_symbols,
						   .ksyms_early = !o->user_only,
						   .cpus = o->cpus,
						   .ncpus = o->ncpus,
						   .child = r->child,
						   .targets_only = o->filter == SA_FILTER_TGID ||
								   o->filter == SA_FILTER_TID,
						   .ids = o->ids,
						   .nids = o->nids,
						   .ids_are_tids = o->filter == SA_FILTER_TID,
						   .follow = o->cmd && !o->all});
	if (!r->sc) {
		e = -errno;
		snprintf(err, errsz, "side-band perf events: %s", strerror(-e));
		r->no_priv = e == -EPERM || e == -EACCES;
		return e;
	}
	rec_start__hold("sideband");
	if ((e = stopped()) || (e = open_session(r, err, errsz))) {
		r->no_priv = e == -EPERM || e == -EACCES;
		return e;
	}
	if ((e = stopped()) || (e = start_uw(r)) || (e = stopped()))
		return e;
	r->t0 = sac_now_ns(CLOCK_MONOTONIC);
	real = rec_output_realtime_ns();
	r->file_t0 = r->t0;
	if (r->rot)
		rec_rotate__name(r->rot, real);
	e = rec_write_meta(r->w, o, real, r->t0, rec_session__ncpus(r->s), &r->meta_clipped);
	if (e)
		return e;
	r->procs = rec_procs__new(r->w, cur_gen, r->s);
	if (r->procs)
		rec_procs__set_maptab(r->procs, rec_sc__maptab(r->sc));
	r->d = r->procs ? rec_drain__new(r->s, r->w, r->procs) : NULL;
	if (!r->d)
		return -ENOMEM;
	rec_drain__set_sc(r->d, r->sc);
	if (rec_session__pyprocs_fd(r->s) >= 0) {
		r->py = rec_py__new(rec_session__pyprocs_fd(r->s), r->w);
		if (!r->py)
			return -ENOMEM;
		rec_drain__set_py(r->d, r->py);
	}
	rec_drain__set_abort(r->d, &hurry);
	rec_drain__set_starve(r->d, r->starve);
	/*
	 * Half an interval for the stacks, the other half for everything else;
	 * at least 250 ms, so short intervals on a busy host lose nothing.
	 */
	rec_drain__set_budget(r->d,
			      o->interval > 0.5 ? (uint64_t)(o->interval * 0.5e9) : 250000000ull);
	if (r->rot && (e = rec_drain__keep_frames(r->d)))
		return e;
	if (o->call_graph != SA_CG_FP && !o->whole_stack) {
		r->trim = rec_uwtrim__new(rec_sc__maptab(r->sc));
		if (!r->trim)
			return -ENOMEM;
		rec_drain__set_trim(r->d, r->trim);
	}
	rec_start__hold("setup");
	if ((e = stopped()) || (e = capture_targets(r)) || (e = stopped()))
		return e;
	/* from here on a stop ends a recording: CMD runs, or sampling is the loop's */
	started();
	if (r->child > 0) {
		/* a failed exec ends the child with 126/127; the loop sees it exit */
		e = rec_child__start(go, status);
		if (e)
			fprintf(stderr, "sa-record: %s: %s\n", o->cmd[0], strerror(e));
	}
	return 0;
}

/* When this process began (its exec), on CLOCK_MONOTONIC; @fallback when unknown. */
static uint64_t exec_ns(uint64_t fallback)
{
	char buf[1024], *p;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t start, boot, mono;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), i;
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0 || hz <= 0)
		return fallback;
	buf[n] = '\0';
	/* field 22, starttime (clock ticks after boot): the 20th after the name's ")" */
	p = strrchr(buf, ')');
	for (i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, "%llu", &ticks) != 1)
		return fallback;
	start = ticks * (1000000000ull / (uint64_t)hz);
	boot = sac_now_ns(CLOCK_BOOTTIME);
	mono = sac_now_ns(CLOCK_MONOTONIC);
	if (start > boot || boot - start > mono || mono - (boot - start) > fallback)
		return fallback;
	return mono - (boot - start);
}

/*
 * --duration D: the last interval ends D after sampling began, and END is
 * written by D + END_NS after the process began: start-up (loading the BPF
 * program) took 0.5-1.2 s on a loaded host. After a start-up so slow that
 * the end would get less than MIN_END_NS, the recording ends that much
 * earlier (at least D / 2 is recorded), and the summary says so.
 */
static void set_duration(struct run *r)
{
	uint64_t d = (uint64_t)(r->o->duration * 1e9), at;

	r->exec_at = exec_ns(r->t0);
	r->end_at = r->t0 + d;
	r->end_by = r->exec_at + d + END_NS;
	if (r->end_by >= r->end_at + MIN_END_NS)
		return;
	at = r->end_by - MIN_END_NS;
	if (at < r->t0 + d / 2)
		at = r->t0 + d / 2;
	r->short_ns = r->end_at - at;
	r->end_at = at;
	if (r->end_by < at + MIN_END_NS)
		r->end_by = at + MIN_END_NS;
}

static int finish(struct run *r)
{
	struct saf_end end = file_end(r, sac_now_ns(CLOCK_MONOTONIC));
	int err;

	if (!r->stop_at) { /* --max-size stops after a drain, a second signal at once */
		r->stop_at = stop_time(r, sac_now_ns(CLOCK_MONOTONIC));
		r->stop_by = end_by(r, r->stop_at);
	}
	rec_sideband_end_by(r->stop_by);
	err = hurry ? 0 : rec_sc__finish(r->sc);

	mark("sideband");
	err = err ? err : saf_writer__finish(r->w, &end);
	mark("END");
	return err;
}

/* SA_DIAG=1: sa_clock.bpf.h's counters, for experiments (docs/recording.md) */
static void print_diag(const struct rec_session *s)
{
	const volatile __u64 *v;
	int i, n;

	if (!s || !getenv("SA_DIAG"))
		return;
	v = rec_session__diag(s, &n);
	fprintf(stderr, "sa-record: diag");
	for (i = 0; i < n; i++)
		fprintf(stderr, " %llu", (unsigned long long)v[i]);
	fprintf(stderr, "\n");
}

static void cleanup(struct run *r)
{
	print_diag(r->s);
	rec_drain__free(r->d);
	mark("free-drain");
	rec_py__free(r->py);
	rec_starve__free(r->starve);
	rec_uwtrim__free(r->trim);
	rec_sc__free(r->sc);
	mark("free-sc");
	rec_uwtab__free(r->uw);
	rec_procs__free(r->procs);
	mark("free-procs");
	rec_session__free(r->s);
	mark("free-session");
	saf_writer__free(r->w);
	rec_rotate__free(r->rot);
	if (r->fd >= 0)
		close(r->fd);
	rec_output_unlock(r->o->output, r->lock);
	free(r->tmp);
	mark("cleanup");
}

static const char *stop_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
}

/*
 * A stop during start-up (docs/reliability.md, "Signals"): nothing was
 * recorded, so nothing is kept. The temporary file and the lock go, FILE
 * and FILE.old stay as they were, the `-- CMD` child (not started yet) is
 * killed, and sa-record ends by the signal itself, as perf record does:
 * the same status as a signal that came before the handlers were set
 * (128 + N to a shell). What else start-up made (the BPF load possibly
 * still under way on its thread, the side band, the kallsyms reader) is
 * left to the process's exit: joining them could take the start-up's
 * whole length.
 */
static void abandon(struct run *r)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	int sig = stop_signal, ws;

	if (r->child > 0) {
		kill(r->child, SIGKILL);
		while (waitpid(r->child, &ws, 0) < 0 && errno == EINTR)
			;
	}
	if (r->tmp)
		unlink(r->tmp);
	rec_output_unlock(r->o->output, r->lock);
	fprintf(stderr, "sa-record: %s during start-up: nothing was recorded; %s left as it was\n",
		stop_name(sig), r->o->output);
	mark("abandoned");
	print_marks(signal_ns);
	fflush(stderr);
	sigaction(sig, &dfl, NULL);
	raise(sig);
	_exit(128 + sig); /* not reached */
}

static int reap_child(struct run *r)
{
	int ws;

	if (r->child <= 0)
		return 0;
	if (!r->child_done) {
		kill(r->child, SIGTERM);
		while (waitpid(r->child, &ws, 0) < 0 && errno == EINTR)
			;
		*r->child_wstatus = ws;
	}
	return rec_exit_status(*r->child_wstatus);
}

int rec_run(const struct rec_opts *o, pid_t child, int go, int status, int *child_wstatus)
{
	struct run r = {
		.o = o, .fd = -1, .lock = -1, .child = child, .child_wstatus = child_wstatus};
	char err[512] = "";
	int e, ce, fail = child > 0 ? REC_EXIT_CMD_FAIL : REC_EXIT_FAIL;
	bool keep;

	*child_wstatus = 0;
	diag.on = getenv("SA_DIAG");
	ignore_signals();
	if (stop_signal) /* during the parsing, or rec_test_hold("spawn") */
		abandon(&r);
	r.starve = rec_starve__new(); /* NULL: not watched */
	r.tty = isatty(STDERR_FILENO) && !o->quiet;
	e = start(&r, go, status, err, sizeof(err));
	if (e && stop_signal)
		abandon(&r);
	started();
	if (e) {
		if (child > 0) {
			close(go);
			close(status);
			while (waitpid(child, child_wstatus, 0) < 0 && errno == EINTR)
				;
		}
		fprintf(stderr, "sa-record: %s\n", err[0] ? err : strerror(-e));
		if (r.no_priv)
			rec_privilege_hint();
		/* nothing was sampled: FILE and FILE.old stay as they were */
		if (r.tmp)
			unlink(r.tmp);
		if (r.header_failed) /* a full disk: say the old file is safe */
			fprintf(stderr, "sa-record: no interval was written: %s left as it was\n",
				o->output);
		cleanup(&r);
		return fail;
	}
	r.grace = 2000000000ull / o->freq;
	if (r.grace < 2000000)
		r.grace = 2000000;
	if (r.grace > MAX_GRACE_NS)
		r.grace = MAX_GRACE_NS;
	r.iv_start = r.t0;
	r.next_iv = r.t0 + (uint64_t)(o->interval * 1e9);
	if (o->duration > 0)
		set_duration(&r);
	rec_drain__set_stop(r.d, &signal_ns, r.end_at, BUSY_STACKS_NS, BUSY_COUNTS_NS);
	e = record_loop(&r);
	if (!e)
		e = finish(&r);
	/* a rotated file that got no interval before an error holds nothing */
	if (e && r.rot && !r.tmp && !r.file_ivs)
		rec_rotate__discard(r.rot);
	/*
	 * No interval reached the disk (a full disk): the file holds nothing a
	 * report could show, so FILE and FILE.old stay as they were; else what
	 * was written is kept under FILE, even after an error.
	 */
	keep = !(e && r.tmp && !r.file_ivs);
	ce = keep ? commit(&r) : 0;
	if (e)
		fprintf(stderr, "%ssa-record: writing %s: %s\n", r.tty ? "\n" : "",
			!keep	? r.tmp
			: r.rot ? rec_rotate__path(r.rot)
				: o->output,
			strerror(-e));
	else if (!ce)
		summary(&r);
	if (!keep) {
		unlink(r.tmp);
		fprintf(stderr, "sa-record: no interval was written: %s left as it was\n",
			o->output);
	}
	e = e ? e : ce;
	mark("summary");
	cleanup(&r);
	print_marks(r.stop_at);
	if (child > 0) {
		int code = reap_child(&r);

		return e ? REC_EXIT_CMD_FAIL : code;
	}
	return e ? fail : 0;
}
