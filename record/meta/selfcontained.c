// SPDX-License-Identifier: MIT
/*
 * selfcontained.c - wires sideband, maptab, ksyms, elfsyms and jitmap to the
 * writer, and keeps the frames of each user stack by file id (the drain
 * only has them when a stack is first seen; counts refer to them later).
 */
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "grow.h"
#include "htab.h"
#include "jitmap.h"
#include "ksyms.h"
#include "maptab.h"
#include "selfcontained.h"
#include "vdso.h"

struct ustack {
	uint64_t off; /* into ips */
	uint32_t n;
	uint32_t set; /* 1 once stored */
};

struct rec_sc {
	struct rec_sink sink;
	struct rec_sink sb_sink; /* the side band's: sink, or targets_emit() */
	struct rec_htab *procs;	 /* targets_only: tgid -> 1 a target, 0 exited */
	bool follow;		 /* a target's fork is a target */
	struct rec_ksyms *ks;
	const char *kallsyms; /* borrowed from the opts */
	bool ks_tried;
	bool ks_reading;     /* ks_thread reads kallsyms (ksyms_early) */
	pthread_t ks_thread; /* joined by load_ksyms() or rec_sc__free() */
	uint32_t child;	     /* its gen 0 image is written at the first poll */
	struct rec_elfsyms *es;
	struct rec_maptab *mt;
	struct rec_jitmap *jm;
	struct rec_vdso vdso; /* the kernel's vDSO, for every [vdso] mapping */
	struct rec_sideband *sb;
	struct ustack *us; /* by file stack id - us_base */
	size_t nus;
	uint32_t us_base; /* --rotate: ids below are no longer referenced */
	uint64_t *ips;
	size_t nips, ips_cap;
	uint64_t note_ns;
	unsigned long test_delay_us; /* SA_RECORD_TEST_META_DELAY_US (procs.c) */
};

/* Once: 0.1-0.5 s of the kernel's time, 0.9 s on a loaded host. NULL (kptr_restrict): unnamed. */
static struct rec_ksyms *read_ksyms(const struct rec_sc *sc)
{
	if (sc->test_delay_us)
		usleep(sc->test_delay_us);
	return rec_ksyms__load(sc->kallsyms);
}

static void *ksyms_thread(void *arg)
{
	return read_ksyms(arg);
}

/*
 * ksyms_early: read on a thread of its own from open on. Read at the first
 * kernel stack, it was the first drain's, and its deadline passed
 * (docs/reliability.md, "The stop path"); read at the first poll, it held
 * up the side band while a `-- CMD` child mapped its files (--call-graph
 * auto sent the child's first 60 ms as stack copies); read at open, it
 * made the start 0.1-0.9 s later. Signals stay the main thread's.
 */
static void start_ksyms(struct rec_sc *sc)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	sc->ks_reading = !pthread_create(&sc->ks_thread, NULL, ksyms_thread, sc);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The table, once: the early thread's (waited for) or read here. */
static void load_ksyms(struct rec_sc *sc)
{
	void *ks = NULL;

	if (sc->ks_reading) {
		pthread_join(sc->ks_thread, &ks);
		sc->ks_reading = false;
		sc->ks = ks;
	} else {
		sc->ks = read_ksyms(sc);
	}
	sc->ks_tried = true;
}

static bool is_target(const struct rec_sc *sc, uint32_t pid)
{
	const uint8_t *v = rec_htab__get(sc->procs, &pid);

	return v && *v;
}

static int mark(struct rec_sc *sc, uint32_t pid, uint8_t target)
{
	uint8_t *v = rec_htab__put(sc->procs, &pid, NULL);

	if (!v)
		return -ENOMEM;
	*v = target;
	return 0;
}

/*
 * -p, -t and `-- CMD`: the side band sees every process of the host; only
 * the targets' records are written, so the names and paths of other
 * users' processes never enter the file (a `-- sleep 1` beside a busy
 * host held 199 PROC and 1,140 MAP records of other processes). A target's
 * fork is a target with @follow, as sa_on_fork() follows it in the kernel;
 * at its EXIT a pid stops being one (it may come back as another process).
 */
static int targets_emit(void *ctx, const struct saf_record *r)
{
	struct rec_sc *sc = ctx;
	uint32_t pid;
	int err;

	switch (r->kind) {
	case SAF_REC_PROC:
		pid = r->proc.pid;
		if (sc->follow && r->proc.ppid && !is_target(sc, pid) &&
		    is_target(sc, r->proc.ppid) && (err = mark(sc, pid, 1)))
			return err;
		break;
	case SAF_REC_MAP:
		pid = r->map.pid;
		break;
	case SAF_REC_COMM:
		pid = r->comm.pid;
		break;
	case SAF_REC_EXIT:
		pid = r->exit.pid;
		break;
	default:
		return rec_sink__emit(&sc->sink, r);
	}
	if (!is_target(sc, pid))
		return 0;
	err = rec_sink__emit(&sc->sink, r);
	return err || r->kind != SAF_REC_EXIT ? err : mark(sc, pid, 0);
}

/* The process of thread @tid, from /proc/TID/status; @tid when unknown. */
static uint32_t tgid_of(pid_t tid)
{
	char path[40], line[128];
	unsigned int tgid = (unsigned int)tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return tgid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %u", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static int targets_open(struct rec_sc *sc, const struct rec_sc_opts *o)
{
	int err = 0;

	sc->sb_sink = sc->sink;
	if (!o->targets_only)
		return 0;
	sc->procs = rec_htab__new(sizeof(uint32_t), sizeof(uint8_t));
	if (!sc->procs)
		return -ENOMEM;
	for (int i = 0; i < o->nids && !err; i++)
		err = mark(sc, o->ids_are_tids ? tgid_of(o->ids[i]) : (uint32_t)o->ids[i], 1);
	if (!err && o->child > 0)
		err = mark(sc, (uint32_t)o->child, 1);
	sc->follow = o->follow;
	sc->sb_sink = (struct rec_sink){targets_emit, sc};
	return err;
}

struct rec_sc *rec_sc__open(const struct rec_sc_opts *o)
{
	struct rec_sideband_opts sbo = {.sz = sizeof(sbo)};
	struct rec_sc *sc;
	int err = -ENOMEM;

	sc = calloc(1, sizeof(*sc));
	if (!sc)
		goto cleanup;
	sc->vdso.fd = -1;
	sc->sink = (struct rec_sink){rec_sink__writer_emit, o->w};
	if (targets_open(sc, o))
		goto cleanup;
	sc->kallsyms = o->kallsyms;
	if (getenv("SA_RECORD_TEST_META_DELAY_US"))
		sc->test_delay_us = strtoul(getenv("SA_RECORD_TEST_META_DELAY_US"), NULL, 10);
	if (o->ksyms_early)
		start_ksyms(sc);
	if (!o->no_embed && !(sc->es = rec_elfsyms__new(0)))
		goto cleanup;
	sc->mt = rec_maptab__new(sc->es);
	sc->jm = rec_jitmap__new(NULL);
	if (!sc->mt || !sc->jm)
		goto cleanup;
	err = 0;
	/* -a: only the mappings samples hit are written (maptab.h); the
	 * user stacks that say which are kept only with symbols embedded */
	rec_maptab__defer(sc->mt, !o->targets_only && sc->es);
	/* without it, [vdso] frames stay unnamed: not a reason to stop */
	if (!rec_vdso__open(&sc->vdso))
		rec_maptab__set_vdso(sc->mt, &sc->vdso);
	if (o->child > 0 && !rec_maptab__load_proc(sc->mt, o->child, 0))
		sc->child = o->child;
	if (o->no_sideband)
		goto cleanup;
	sbo.cpus = o->cpus;
	sbo.ncpus = o->ncpus;
	sbo.sink = sc->sb_sink;
	sbo.maptab = sc->mt;
	sbo.jitmap = sc->jm;
	sc->sb = rec_sideband__open(&sbo);
	if (!sc->sb)
		err = -errno;
cleanup:
	if (err) {
		rec_sc__free(sc);
		errno = -err;
		return NULL;
	}
	return sc;
}

/* Written at the first poll, not at open: META has to come first. */
static int write_child(struct rec_sc *sc)
{
	struct saf_record rec = {.kind = SAF_REC_PROC};
	uint64_t t = sac_now_ns(CLOCK_MONOTONIC);
	int ret;

	rec.proc = (struct saf_proc){.pid = sc->child,
				     .ppid = (uint32_t)getpid(),
				     .time_ns = t,
				     .comm = rec_str("sa-record")};
	ret = rec_sink__emit(&sc->sink, &rec);
	if (!ret)
		ret = rec_maptab__emit(sc->mt, sc->child, 0, t, &sc->sink);
	sc->child = 0;
	return ret;
}

int rec_sc__poll(struct rec_sc *sc)
{
	int ret = sc->child ? write_child(sc) : 0;

	if (ret >= 0 && sc->sb)
		ret = rec_sideband__poll(sc->sb, false);

	return ret < 0 ? ret : 0;
}

static int keep_ustack(struct rec_sc *sc, uint32_t fid, const uint64_t *ips, uint32_t n)
{
	if (fid < sc->us_base)
		return 0;
	fid -= sc->us_base;
	if (fid >= sc->nus) {
		size_t old = sc->nus; /* the count is the capacity: every slot is set or zero */

		if (SAC_GROW(sc->us, sc->nus, (size_t)fid + 1, 1024))
			return -ENOMEM;
		memset(sc->us + old, 0, (sc->nus - old) * sizeof(*sc->us));
	}
	if (sc->us[fid].set)
		return 0;
	if (SAC_GROW(sc->ips, sc->ips_cap, sc->nips + n, 65536))
		return -ENOMEM;
	memcpy(sc->ips + sc->nips, ips, n * sizeof(*ips));
	sc->us[fid] = (struct ustack){.off = sc->nips, .n = n, .set = 1};
	sc->nips += n;
	return 0;
}

int rec_sc__stack(struct rec_sc *sc, uint32_t kind, uint32_t fid, const uint64_t *ips, uint32_t n)
{
	uint64_t t0 = sac_now_ns(CLOCK_MONOTONIC);
	int ret = 0;

	/* Not at start: a recording that needs none does not wait for it. */
	if (kind == SAF_STACK_KERNEL && !sc->ks_tried)
		load_ksyms(sc);
	if (kind == SAF_STACK_KERNEL && sc->ks)
		ret = rec_ksyms__note(sc->ks, ips, n, &sc->sink);
	else if (kind == SAF_STACK_USER && sc->es && fid)
		ret = keep_ustack(sc, fid, ips, n);
	sc->note_ns += sac_now_ns(CLOCK_MONOTONIC) - t0;
	return ret < 0 ? ret : 0;
}

int rec_sc__count(struct rec_sc *sc, uint32_t pid, uint32_t gen, uint32_t ufid)
{
	uint64_t t0 = sac_now_ns(CLOCK_MONOTONIC);
	int ret = rec_jitmap__note(sc->jm, pid);
	const struct ustack *u = ufid >= sc->us_base && ufid - sc->us_base < sc->nus
					 ? &sc->us[ufid - sc->us_base]
					 : NULL;

	if (!ret && sc->es && ufid && u && u->set)
		ret = rec_maptab__note_stack(sc->mt, pid, gen, sc->ips + u->off, u->n);
	if (ret >= 0 && ufid && u && u->set)
		ret = rec_maptab__emit_hits(sc->mt, pid, gen, sc->ips + u->off, u->n, true, t0,
					    &sc->sink);
	sc->note_ns += sac_now_ns(CLOCK_MONOTONIC) - t0;
	return ret < 0 ? ret : 0;
}

int rec_sc__count_bare(struct rec_sc *sc, uint32_t pid, uint32_t gen, uint32_t ufid)
{
	const struct ustack *u = ufid >= sc->us_base && ufid - sc->us_base < sc->nus
					 ? &sc->us[ufid - sc->us_base]
					 : NULL;
	int ret = 0;

	if (ufid && u && u->set)
		ret = rec_maptab__emit_hits(sc->mt, pid, gen, sc->ips + u->off, u->n, false,
					    sac_now_ns(CLOCK_MONOTONIC), &sc->sink);
	return ret < 0 ? ret : 0;
}

int rec_sc__note_ip(struct rec_sc *sc, uint32_t pid, uint32_t gen, uint64_t ip)
{
	uint64_t t0 = sac_now_ns(CLOCK_MONOTONIC);
	int ret = rec_jitmap__note(sc->jm, pid);

	if (!ret && sc->es)
		ret = rec_maptab__note_stack(sc->mt, pid, gen, &ip, 1);
	if (ret >= 0) /* unwound offline: through any of its mappings */
		ret = rec_maptab__emit_pending(sc->mt, pid, gen, t0, &sc->sink);
	sc->note_ns += sac_now_ns(CLOCK_MONOTONIC) - t0;
	return ret < 0 ? ret : 0;
}

int rec_sc__interval_end(struct rec_sc *sc)
{
	uint64_t t0 = sac_now_ns(CLOCK_MONOTONIC);
	int ret = 0;

	if (sc->es)
		ret = rec_elfsyms__flush(sc->es, &sc->sink);
	if (ret >= 0)
		ret = rec_jitmap__poll(sc->jm, &sc->sink);
	rec_maptab__drained(sc->mt);
	sc->note_ns += sac_now_ns(CLOCK_MONOTONIC) - t0;
	return ret < 0 ? ret : 0;
}

int rec_sc__finish(struct rec_sc *sc)
{
	int ret = sc->sb ? rec_sideband__poll(sc->sb, true) : 0;

	if (ret < 0)
		return ret;
	return rec_sc__interval_end(sc);
}

/* Drop the user stacks of ids below @base, moving the rest down. */
static int rebase_ustacks(struct rec_sc *sc, uint32_t base)
{
	size_t drop = base > sc->us_base ? base - sc->us_base : 0, i, n = 0;
	uint64_t *ips;

	if (!drop)
		return 0;
	if (drop > sc->nus)
		drop = sc->nus;
	if (!drop) { /* nothing kept yet: no array to move */
		sc->us_base = base;
		return 0;
	}
	ips = malloc((sc->ips_cap ? sc->ips_cap : 1) * sizeof(*ips));
	if (!ips)
		return -ENOMEM;
	for (i = drop; i < sc->nus; i++) {
		struct ustack u = sc->us[i];

		if (u.set) {
			memcpy(ips + n, sc->ips + u.off, u.n * sizeof(*ips));
			u.off = n;
			n += u.n;
		}
		sc->us[i - drop] = u;
	}
	memset(sc->us + sc->nus - drop, 0, drop * sizeof(*sc->us));
	free(sc->ips);
	sc->ips = ips;
	sc->nips = n;
	sc->us_base = base;
	return 0;
}

int rec_sc__new_file(struct rec_sc *sc, uint32_t keep_from)
{
	int ret;

	if (sc->ks)
		rec_ksyms__new_file(sc->ks);
	if (sc->es)
		rec_elfsyms__new_file(sc->es);
	rec_jitmap__new_file(sc->jm);
	ret = rebase_ustacks(sc, keep_from);
	if (!ret)
		ret = rec_maptab__emit_all(sc->mt, sac_now_ns(CLOCK_MONOTONIC), &sc->sb_sink);
	return ret < 0 ? ret : 0;
}

void rec_sc__stats(const struct rec_sc *sc, struct rec_sc_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (sc->sb)
		rec_sideband__stats(sc->sb, &st->sb);
	if (sc->es)
		rec_elfsyms__stats(sc->es, &st->es);
	if (sc->ks) {
		st->ksyms_total = rec_ksyms__count(sc->ks);
		st->ksyms_emitted = rec_ksyms__emitted(sc->ks);
	}
	rec_jitmap__stats(sc->jm, &st->jit);
	st->clipped_paths = rec_maptab__clipped(sc->mt);
	st->note_ns = sc->note_ns;
}

struct rec_maptab *rec_sc__maptab(struct rec_sc *sc)
{
	return sc->mt;
}

void rec_sc__free(struct rec_sc *sc)
{
	if (!sc)
		return;
	rec_sideband__free(sc->sb);
	rec_jitmap__free(sc->jm);
	rec_maptab__free(sc->mt);
	rec_vdso__close(&sc->vdso);
	rec_elfsyms__free(sc->es);
	if (sc->ks_reading)
		load_ksyms(sc);
	rec_ksyms__free(sc->ks);
	rec_htab__free(sc->procs);
	SAC_FREE_ALL(sc->us, sc->ips, sc);
}
