// SPDX-License-Identifier: MIT
/*
 * fuzz_report.c - libFuzzer harness for sa-report's whole pipeline: the
 * bytes are a recording (held in a memfd) that goes through the session
 * (read, filter, symbolize, aggregate), then through every output mode:
 * --info, folded, --top, --svg, --pprof, --speedscope and the three --diff
 * forms. Two option sets alternate, chosen by the input's length, so
 * filters, --show-pid/--show-tid, --addrs and --inverted are reached too.
 * Checksums are repaired before the bytes are used (the file header's and
 * each chunk's CRC-32, docs/format.md "Chunk header"): fuzz_reader already
 * covers the CRC checks, and without this nearly every mutation would stop
 * there instead of reaching records, symbolization and the writers.
 * Oracle beyond the sanitizers: every folded line parses as "stack N" and
 * holds no control byte and only well-formed UTF-8.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_outputs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const no_dirs[] = { "/nonexistent-sa-fuzz-debug" };
	struct rpt_session_opts o = {
		.sym = { .debug_dirs = no_dirs, .ndebug_dirs = 1, .no_system_debug = true },
	};
	struct rpt_session *s = NULL, *ks = NULL;
	struct rpt_profile *p = NULL, *q = NULL;
	bool alt = size & 1;
	uint8_t *copy = NULL;
	char path[64];
	int fd;

	fd = memfd_create("fuzz_report", 0);
	if (fd < 0)
		return 0;
	copy = malloc(size ? size : 1);
	if (!copy)
		goto cleanup;
	memcpy(copy, data, size);
	fix_crcs(copy, size);
	if (size && write(fd, copy, size) != (ssize_t)size)
		goto cleanup;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (alt) {
		o.show_pid = o.show_tid = o.addrs = true;
		o.filter.has_time = true;
		o.filter.time_from = 0.5;
		o.filter.time_to = 1e9;
	}
	s = rpt_session__new(&o);
	p = rpt_profile__new();
	q = rpt_profile__new();
	if (!s || !p || !q)
		goto cleanup;
	if (rpt_session__add_file(s, path, path, p)) {
		assert(rpt_session__errmsg(s)[0]); /* a failure always says why */
		goto cleanup;
	}
	/* The "before" side of the diffs: the same file, kernel frames only. */
	o.filter.kernel_only = true;
	ks = rpt_session__new(&o);
	if (!ks || rpt_session__add_file(ks, path, path, q))
		goto cleanup;
	if (rpt_profile__filter(p, alt ? "a|main" : NULL, alt ? "^x" : NULL, alt ? 1.0 : 0,
				path, sizeof(path)))
		goto cleanup;
	rpt_profile__sort(p);
	rpt_profile__sort(q);
	write_all(s, p, q, alt);
cleanup:
	rpt_profile__free(q);
	rpt_profile__free(p);
	rpt_session__free(ks);
	rpt_session__free(s);
	close(fd);
	free(copy);
	return 0;
}
