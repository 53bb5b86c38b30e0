// SPDX-License-Identifier: MIT
/*
 * pynames.c - the recorder's Python state: processes answered in pyprocs,
 * the Python frame words of each user stack, and the code objects named
 * per process (PYCODE records), read from the process's memory with
 * process_vm_readv(): bounded lengths, types checked, a budget per process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <bpf/bpf.h>
#include "htab.h"
#include "grow.h"
#include "pyint.h"
#include "python.h"

/* Code objects named per process at most: a process making code without end costs this much. */
#define NAMES_PER_PROC 20000

struct proc_ent {
	uint32_t bin;	/* index in py->bins + 1; 0: not Python */
	uint32_t named; /* code objects read for the current file */
	uint32_t file;	/* the file its interpreter record was last written to */
};

struct code_key {
	uint32_t tgid, pad;
	uint64_t code;
};

struct fid_ent {
	uint32_t off, n; /* py->words[off .. off + n) */
};

struct rec_py {
	int fd;
	struct saf_writer *w;
	struct rec_htab *procs;	    /* tgid -> struct proc_ent */
	struct rec_htab *codes;	    /* struct code_key -> u8 */
	struct rec_htab *fids;	    /* fid -> struct fid_ent */
	struct rec_htab *fid_procs; /* (tgid, fid) -> u8: named already */
	struct rec_htab *retries;   /* tgid -> u32: wakes answered "ask again" */
	char first_refused[600];    /* "pid N, CPython V, PATH: WHY" of the first refused */
	struct rec_py_bin **bins;
	size_t nbins, bins_cap;
	uint64_t *words;
	size_t nwords, words_cap;
	uint32_t file; /* files begun before the current one (--rotate) */
	struct rec_py_stats st;
};

struct rec_py *rec_py__new(int pyprocs_fd, struct saf_writer *w)
{
	struct rec_py *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	py->fd = pyprocs_fd;
	py->w = w;
	py->procs = rec_htab__new(sizeof(uint32_t), sizeof(struct proc_ent));
	py->codes = rec_htab__new(sizeof(struct code_key), 1);
	py->fids = rec_htab__new(sizeof(uint32_t), sizeof(struct fid_ent));
	py->fid_procs = rec_htab__new(2 * sizeof(uint32_t), 1);
	py->retries = rec_htab__new(sizeof(uint32_t), sizeof(uint32_t));
	if (!py->procs || !py->codes || !py->fids || !py->fid_procs || !py->retries) {
		rec_py__free(py);
		errno = ENOMEM;
		return NULL;
	}
	return py;
}

void rec_py__free(struct rec_py *py)
{
	if (!py)
		return;
	for (size_t i = 0; i < py->nbins; i++)
		free(py->bins[i]);
	rec_htab__free(py->procs);
	rec_htab__free(py->codes);
	rec_htab__free(py->fids);
	rec_htab__free(py->fid_procs);
	rec_htab__free(py->retries);
	free(py->bins);
	free(py->words);
	free(py);
}

void rec_py__stats(const struct rec_py *py, struct rec_py_stats *st)
{
	*st = py ? py->st : (struct rec_py_stats){0};
}

bool rec_py__summary(const struct rec_py *py, char *buf, size_t sz)
{
	const struct rec_py_stats *s = &py->st;

	if (!s->procs_read && !s->procs_refused)
		return false;
	snprintf(buf, sz,
		 "Python: %llu processes' frames read, %llu refused (layout not confirmed); "
		 "%llu code objects named, %llu unreadable, %llu over budget",
		 (unsigned long long)s->procs_read, (unsigned long long)s->procs_refused,
		 (unsigned long long)s->named, (unsigned long long)s->unnamed,
		 (unsigned long long)s->over_budget);
	if (py->first_refused[0] && strlen(buf) + 20 < sz)
		snprintf(buf + strlen(buf), sz - strlen(buf), "; first refused: %s",
			 py->first_refused);
	return true;
}

static int emit(struct rec_py *py, uint32_t pid, uint64_t code, uint32_t line, const char *name,
		const char *file)
{
	struct saf_record rec = {.kind = SAF_REC_PYCODE};

	rec.pycode = (struct saf_pycode){.pid = pid,
					 .code = code,
					 .line = line,
					 .name = saf_str__from(name),
					 .file = saf_str__from(file)};
	if (rec.pycode.name.len > SAF_MAX_STRING)
		rec.pycode.name.len = SAF_MAX_STRING;
	if (rec.pycode.file.len > SAF_MAX_STRING)
		rec.pycode.file.len = SAF_MAX_STRING;
	return saf_writer__add(py->w, &rec);
}

/* Answer @tgid's pending pyprocs entry with @state (and @b's offsets when read). */
static void answer(struct rec_py *py, uint32_t tgid, __u32 state, const struct rec_py_bin *b)
{
	struct sa_py_proc v;

	if (bpf_map_lookup_elem(py->fd, &tgid, &v))
		return; /* gone meanwhile (freed, or pushed out of the LRU): asked again */
	if (b && b->layout) {
		__u32 gen = v.gen;

		v = b->layout->off;
		v.gen = gen;
		v.runtime = b->runtime;
	}
	v.state = state;
	bpf_map_update_elem(py->fd, &tgid, &v, BPF_EXIST);
}

/*
 * A shared build's python3.X was met before ld.so mapped its libpython (a
 * sample in its first milliseconds): its pyprocs entry is removed, so the
 * next sample asks again, at most RETRIES times a process (then "none").
 * Before this, such a process was answered "none" for good now and then
 * (3350: no Python frame in a whole recording of pyenv's 3.9, 1 of 18).
 * @return true if it will be asked again.
 */
#define RETRIES 64
static bool ask_again(struct rec_py *py, uint32_t tgid)
{
	bool is_new;
	uint32_t *n = rec_htab__put(py->retries, &tgid, &is_new);

	if (!n)
		return false;
	if (is_new)
		*n = 0;
	if (++*n > RETRIES)
		return false;
	bpf_map_delete_elem(py->fd, &tgid);
	return true;
}

int rec_py__wake(struct rec_py *py, uint32_t tgid)
{
	struct rec_py_bin *b = calloc(1, sizeof(*b));
	struct proc_ent *pe;
	bool is_new;
	char ver[32];
	int err;

	if (!b)
		return -ENOMEM;
	err = rec_py__find(tgid, b);
	if (err == -EAGAIN && ask_again(py, tgid)) {
		free(b);
		return 0;
	}
	if (err == -EAGAIN)
		err = -ENOTSUP; /* its libpython never came: a build the reader cannot read */
	if (err && err != -ENOTSUP) {
		answer(py, tgid, SA_PY_NONE, NULL);
		free(b);
		return 0;
	}
	answer(py, tgid, err ? SA_PY_REFUSED : SA_PY_READ, b);
	rec_py__version_str(b->version, ver, sizeof(ver));
	pe = rec_htab__put(py->procs, &tgid, &is_new);
	if (!pe || SAC_GROW(py->bins, py->bins_cap, py->nbins + 1, 16)) {
		free(b);
		return -ENOMEM;
	}
	if (is_new && err) { /* a process asked again (an exec, an LRU eviction) counts once */
		if (!py->st.procs_refused++)
			snprintf(py->first_refused, sizeof(py->first_refused),
				 "pid %u, CPython %s, %.400s: %s", tgid, ver, b->path,
				 b->why ? b->why : "layout not confirmed");
	} else if (is_new) {
		py->st.procs_read++;
	}
	py->bins[py->nbins++] = b;
	pe->bin = err ? 0 : (uint32_t)py->nbins;
	pe->file = py->file;
	if (!is_new)
		return 0; /* its interpreter record is written already */
	return emit(py, tgid, 0, err ? SAF_PY_REFUSED : SAF_PY_READ, ver, b->path);
}

int rec_py__stack(struct rec_py *py, uint32_t fid, const uint64_t *ips, uint32_t n)
{
	struct fid_ent *fe;
	uint32_t first = n;

	/* the last run of tagged words, never the leaf: as sa-report reads them */
	while (first > 1 && (ips[first - 1] & SA_PY_TAG_MASK) == SA_PY_TAG)
		first--;
	if (first == n)
		return 0;
	if (SAC_GROW(py->words, py->words_cap, py->nwords + (n - first), 4096))
		return -ENOMEM;
	fe = rec_htab__put(py->fids, &fid, NULL);
	if (!fe)
		return -ENOMEM;
	*fe = (struct fid_ent){(uint32_t)py->nwords, n - first};
	memcpy(py->words + py->nwords, ips + first, (n - first) * sizeof(*ips));
	py->nwords += n - first;
	return 0;
}

/* Name @code of @tgid once: a PYCODE record, or nothing (a marked unknown frame). */
static int name_code(struct rec_py *py, uint32_t tgid, struct proc_ent *pe, uint64_t code)
{
	struct code_key k = {.tgid = tgid, .code = code};
	struct rec_py_code c;
	bool is_new;

	if (!rec_htab__put(py->codes, &k, &is_new))
		return -ENOMEM;
	if (!is_new)
		return 0;
	if (pe->named >= NAMES_PER_PROC) {
		py->st.over_budget++;
		return 0;
	}
	pe->named++;
	if (rec_py__read_code(tgid, py->bins[pe->bin - 1], code, &c)) {
		py->st.unnamed++;
		return 0;
	}
	py->st.named++;
	return emit(py, tgid, code, c.line, c.name, c.file);
}

void rec_py__new_file(struct rec_py *py)
{
	if (!py)
		return;
	py->file++;
	rec_htab__clear(py->codes);
	rec_htab__clear(py->fid_procs);
}

int rec_py__count(struct rec_py *py, uint32_t tgid, uint32_t fid)
{
	uint32_t key[2] = {tgid, fid};
	const struct fid_ent *fe = rec_htab__get(py->fids, &fid);
	struct proc_ent *pe;
	struct fid_ent f;
	bool is_new;
	int err = 0;

	if (!fe)
		return 0;
	f = *fe;
	pe = rec_htab__get(py->procs, &tgid);
	if (!pe || !pe->bin)
		return 0;
	if (!rec_htab__put(py->fid_procs, key, &is_new))
		return -ENOMEM;
	if (is_new && pe->file != py->file) {
		/* a file since its first: the interpreter again, its budget anew */
		const struct rec_py_bin *b = py->bins[pe->bin - 1];
		char ver[32];

		pe->file = py->file;
		pe->named = 0;
		rec_py__version_str(b->version, ver, sizeof(ver));
		err = emit(py, tgid, 0, SAF_PY_READ, ver, b->path);
	}
	for (uint32_t i = 0; i < f.n && is_new && !err; i++) {
		uint64_t code = py->words[f.off + i] & SA_PY_ADDR_MASK;

		if (code)
			err = name_code(py, tgid, pe, code);
	}
	return err;
}
