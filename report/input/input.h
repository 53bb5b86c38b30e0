/* SPDX-License-Identifier: MIT */
/*
 * input.h - what sa-report reads, told apart by content: sa recordings,
 * folded text and `perf script` text (a perf.data file is recognized and
 * refused with advice). "-" is standard input. The text readers add to a
 * profile, so inputs of every kind merge into one.
 */
#ifndef SA_REPORT_INPUT_H
#define SA_REPORT_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "profile.h"

enum rpt_input_kind {
	RPT_INPUT_UNKNOWN = 0, /* binary, or text of no known form */
	RPT_INPUT_SA,	       /* an sa recording (docs/format.md) */
	RPT_INPUT_FOLDED,      /* "frame;frame;... count" lines */
	RPT_INPUT_PERFSCRIPT,  /* perf script: a header line per sample, then frames */
	RPT_INPUT_PERFDATA,    /* perf record's binary perf.data: refused */
};

/**
 * rpt_input__sniff() - the kind of an input from its first bytes.
 * @buf, @n: the start of the input (up to a few KiB is enough; more lines
 * make text detection surer). Empty text is folded text with no stacks.
 * @return the kind; never fails.
 */
enum rpt_input_kind rpt_input__sniff(const char *buf, size_t n);

/** rpt_input__kind_name() - "sa recording", "folded text", ...; static. */
const char *rpt_input__kind_name(enum rpt_input_kind k);

struct rpt_input;

/**
 * rpt_input__open() - open @path ("-" = standard input) and find its kind,
 * reading ahead at most 64 KiB; nothing read ahead is lost to the readers.
 * @return an input the caller releases with rpt_input__close(), or NULL with
 * errno set (the open's or read's, ENOMEM).
 */
struct rpt_input *rpt_input__open(const char *path);

/** rpt_input__kind() - the kind found by rpt_input__open(). */
enum rpt_input_kind rpt_input__kind(const struct rpt_input *in);

/**
 * rpt_input__stream() - the input as a stream from its first byte, for the
 * text readers. Borrowed: valid until rpt_input__close().
 */
FILE *rpt_input__stream(struct rpt_input *in);

/**
 * rpt_input__path() - the path the recording reader opens, borrowed; NULL
 * for standard input or another input that is not a regular file (a pipe
 * by name, <(cmd)), which is read as a stream with rpt_input__read().
 */
const char *rpt_input__path(const struct rpt_input *in);

/**
 * rpt_input__read() - up to @len bytes of @in (a struct rpt_input) from
 * its first byte (what was read ahead, then the rest), as read(2): a
 * saf_read_fn for saf_reader__open_stream(). Called by one thread at a
 * time. @return the count, 0 at the end, or -1 with errno.
 */
ssize_t rpt_input__read(void *in, void *buf, size_t len);

/** rpt_input__close() - release @in (standard input stays open). Accepts NULL. */
void rpt_input__close(struct rpt_input *in);

/** rpt_input__errf() - "line N: " and a formatted reason into @buf (if any). */
void rpt_input__errf(char *buf, size_t sz, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/**
 * rpt_folded__read() - add folded text from @in to @p: "a;b;c 12" per line,
 * blank lines and '#' comments skipped; frames suffixed _[k] _[j] _[i] get
 * that kind (suffix removed), a root is RPT_FRAME_ROOT, "[...]" unknown. The
 * two-column "stack before after" form is refused. Streams: memory follows
 * distinct stacks. @errbuf gets "line N: reason" on failure.
 * @return 0, -EBADMSG for malformed text (@p then holds the lines before),
 * -ENOMEM, -EIO.
 */
int rpt_folded__read(struct rpt_profile *p, FILE *in, char *errbuf, size_t errbuf_sz);

struct rpt_perfscript_opts {
	bool show_pid, show_tid; /* root "comm-PID" or "comm-PID/TID" */
};

/* What rpt_perfscript__read() saw besides the stacks it added. */
struct rpt_perfscript_stats {
	uint64_t samples;     /* added, one count each */
	uint64_t other_event; /* samples of events other than the first, skipped */
	uint64_t bad_lines;   /* lines of no known form, skipped */
	size_t first_bad;     /* line number of the first of them */
	char event[64];	      /* the event kept, "" if headers name none */
};

/**
 * rpt_perfscript__read() - add the samples of `perf script` text from @in to
 * @p, one count per sample (perf's period is not used), with the names
 * stackcollapse-perf.pl gives them (docs/input.md lists where they differ).
 * Only the first event named in a header is kept, as stackcollapse-perf.pl
 * does; @st counts the rest. Streams: memory follows distinct stacks.
 * @return 0, -ENOMEM or -EIO (message in @errbuf).
 */
int rpt_perfscript__read(struct rpt_profile *p, FILE *in, const struct rpt_perfscript_opts *o,
			 struct rpt_perfscript_stats *st, char *errbuf, size_t errbuf_sz);

/**
 * rpt_input__warn_perfscript() - tell on @out what rpt_perfscript__read()
 * skipped in @path (other events, lines of no known form); nothing when it
 * skipped nothing or @quiet.
 */
void rpt_input__warn_perfscript(FILE *out, const char *path, const struct rpt_perfscript_stats *st,
				bool quiet);

/**
 * rpt_input__unify() - replace *@p by a copy in which frames of folded text
 * merge with the same frames of other inputs: no frame names a binary
 * (folded text names none), and a name that some frame marks as kernel, JIT
 * or inline has that kind wherever it is plain user code (folded text
 * without _[k] annotations).
 * @return 0 (*@p freed and replaced) or -ENOMEM (*@p unchanged).
 */
int rpt_input__unify(struct rpt_profile **p);

#endif /* SA_REPORT_INPUT_H */
