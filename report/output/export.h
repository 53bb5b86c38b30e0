/* SPDX-License-Identifier: MIT */
/*
 * export.h - writers for other tools' formats: pprof's gzip-compressed
 * profile.proto (go tool pprof, Pyroscope, Parca, Grafana) and speedscope's
 * JSON file format. Both read an aggregated profile (profile.h); the frame
 * name helpers are shared by the two writers.
 */
#ifndef SA_REPORT_EXPORT_H
#define SA_REPORT_EXPORT_H

#include "profile.h"

/* What the root frame's name holds (resolve.c: "comm", "comm-PID" or "comm-PID/TID"). */
struct rpt_root_fmt {
	bool has_pid; /* --show-pid or --show-tid */
	bool has_tid; /* --show-tid */
};

struct rpt_pprof_opts {
	struct rpt_root_fmt root;
	int level; /* zlib level, 0 = default (6) */
};

/**
 * rpt_pprof__write() - @p as a gzip-compressed pprof profile.proto: sample
 * types samples/count and cpu/nanoseconds (period 1e9 / meta.freq_hz; 0 when
 * the frequency is unknown), one location per frame with its inlined callees
 * as extra lines (innermost first), functions with file names parsed from
 * "name file:line" frames (--lines), mappings with build ids from the
 * profile's module table, and labels comm (string), pid and tid (numbers)
 * from the root frame. The root frame itself is a label, not a location.
 * Reads @p only; not thread-safe against writers of @p.
 * @return 0, -ENOMEM, -EIO (zlib) or a negative errno of the write.
 */
int rpt_pprof__write(const struct rpt_profile *p, FILE *out, const struct rpt_pprof_opts *o);

struct rpt_speedscope_opts {
	const char *name; /* file name shown by speedscope; NULL = meta.title or "sa-report" */
};

/**
 * rpt_speedscope__write() - @p in speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json): shared frames, one
 * "sampled" profile per root frame (process), in root-name order; weights in
 * nanoseconds (count * floor(1e9 / meta.freq_hz)) or, with no frequency, sample
 * counts with unit "none". Any bytes are escaped; invalid UTF-8 becomes
 * U+FFFD. @return 0, -ENOMEM or a negative errno of the write.
 */
int rpt_speedscope__write(const struct rpt_profile *p, FILE *out,
			  const struct rpt_speedscope_opts *o);

/* A frame name split as symbolize.c formats it with --lines: "fn file:line". */
struct rpt_name_parts {
	size_t fn_len;	  /* bytes of the function name at the start */
	const char *file; /* borrowed, into the name; NULL when absent */
	size_t file_len;
	long line; /* 0 when absent */
};

/** rpt_name__split() - split @name (borrowed) into function, file and line. */
void rpt_name__split(const char *name, struct rpt_name_parts *out);

#endif /* SA_REPORT_EXPORT_H */
