/* SPDX-License-Identifier: MIT */
/*
 * python.h - CPython frames, the recorder's half (docs/python.md): telling
 * which processes run an interpreter whose layout is known (pyfind.c) and
 * naming the code objects their sampled stacks hold (pynames.c) into
 * PYCODE records. One object per recording; not thread-safe.
 */
#ifndef REC_PYTHON_H
#define REC_PYTHON_H

#include <stdbool.h>
#include <stdint.h>
#include <saf.h>

struct rec_py;

/* What the recorder did with Python processes, for the summary. */
struct rec_py_stats {
	uint64_t procs_read;	/* interpreters whose frames are read */
	uint64_t procs_refused; /* CPython of a layout not confirmed: native frames only */
	uint64_t named;		/* code objects named */
	uint64_t unnamed;	/* code objects that could not be read (marked unknown) */
	uint64_t over_budget;	/* code objects left unnamed past a process's budget */
};

/**
 * rec_py__new() - the Python side of a recording.
 * @pyprocs_fd: the pyprocs map (rec_session__pyprocs_fd()), borrowed; its
 * pending entries are answered by rec_py__wake().
 * @w: the writer PYCODE records go to, borrowed.
 * @return an object released with rec_py__free(), or NULL with errno.
 */
struct rec_py *rec_py__new(int pyprocs_fd, struct saf_writer *w);

/**
 * rec_py__wake() - the BPF program met process @tgid for the first time
 * (or since an exec): find its interpreter, answer its pyprocs entry and
 * write the interpreter's PYCODE record (code 0). A process that is gone
 * or holds no known interpreter is answered "none".
 * @return 0, or -ENOMEM / a writer error.
 */
int rec_py__wake(struct rec_py *py, uint32_t tgid);

/**
 * rec_py__stack() - user stack @fid was written with frames @ips[0..@n):
 * keep its Python frame words, if any, for rec_py__count().
 * @return 0 or -ENOMEM.
 */
int rec_py__stack(struct rec_py *py, uint32_t fid, const uint64_t *ips, uint32_t n);

/**
 * rec_py__count() - process @tgid has samples with user stack @fid: name
 * the code objects of its Python frames not named yet for @tgid, by
 * reading the process's memory within its budget (pynames.c).
 * @return 0, or -ENOMEM / a writer error.
 */
int rec_py__count(struct rec_py *py, uint32_t tgid, uint32_t fid);

/**
 * rec_py__new_file() - --rotate began a new file: each process's
 * interpreter record and the names of its code objects are written again,
 * as its samples need them, so each file reads alone (the code objects
 * read again from the process, within a budget anew).
 */
void rec_py__new_file(struct rec_py *py);

/** rec_py__stats() - the counts so far into @st. */
void rec_py__stats(const struct rec_py *py, struct rec_py_stats *st);

/**
 * rec_py__summary() - one line for sa-record's summary into @buf (@sz
 * bytes), when any Python process was met. @return true if written.
 */
bool rec_py__summary(const struct rec_py *py, char *buf, size_t sz);

/** rec_py__free() - release @py. Accepts NULL. */
void rec_py__free(struct rec_py *py);

#endif /* REC_PYTHON_H */
