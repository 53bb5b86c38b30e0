// SPDX-License-Identifier: MIT
/*
 * fuzz_inputs.c - libFuzzer harness for what sa-report takes besides one
 * recording: folded text, `perf script` text and sets of several inputs.
 * The bytes are split at each line "--sa-fuzz-part--" into up to four
 * inputs, each in a memfd, each sniffed and read as report/main.c reads
 * it (a recording through the session, with its checksums repaired; text
 * through the folded or perf script reader); folded text beside other
 * inputs is unified; then every writer runs (fuzz_outputs.h). Oracle
 * beyond the sanitizers: a failure always says why, and folded output
 * parses line by line.
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
#include "input.h"

#define PARTS 4
static const char sep[] = "\n--sa-fuzz-part--\n";

/* Read one input of @len bytes at @b into @p; 0 when read, else nonzero. */
static int add_part(struct rpt_session *s, struct rpt_profile *p, uint8_t *b, size_t len,
		    int *nfolded)
{
	struct rpt_perfscript_opts po = {.show_pid = len & 1};
	struct rpt_perfscript_stats st;
	struct rpt_input *in = NULL;
	char path[64], errbuf[256] = "";
	int fd, err = -EBADMSG;

	fd = memfd_create("fuzz_inputs", 0);
	if (fd < 0)
		return -errno;
	if (rpt_input__sniff((const char *)b, len) == RPT_INPUT_SA)
		fix_crcs(b, len);
	if (len && write(fd, b, len) != (ssize_t)len)
		goto cleanup;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	in = rpt_input__open(path);
	if (!in)
		goto cleanup;
	switch (rpt_input__kind(in)) {
	case RPT_INPUT_SA:
		err = rpt_session__add_file(s, path, path, p);
		assert(!err || err == -ENODATA || rpt_session__errmsg(s)[0]);
		err = err == -ENODATA ? 0 : err;
		break;
	case RPT_INPUT_FOLDED:
		err = rpt_folded__read(p, rpt_input__stream(in), errbuf, sizeof(errbuf));
		assert(!err || errbuf[0] || err == -ENOMEM);
		*nfolded += !err;
		break;
	case RPT_INPUT_PERFSCRIPT:
		err = rpt_perfscript__read(p, rpt_input__stream(in), &po, &st, errbuf,
					   sizeof(errbuf));
		assert(!err || errbuf[0] || err == -ENOMEM);
		break;
	default:
		break;
	}
cleanup:
	rpt_input__close(in);
	close(fd);
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const no_dirs[] = {"/nonexistent-sa-fuzz-debug"};
	struct rpt_session_opts o = {
		.sym = {.debug_dirs = no_dirs, .ndebug_dirs = 1, .no_system_debug = true},
	};
	struct rpt_session *s = NULL;
	struct rpt_profile *p = NULL, *q = NULL;
	uint8_t *copy = NULL, *at, *end;
	bool alt = size & 1;
	int nparts = 0, nfolded = 0;

	copy = malloc(size + 1);
	s = rpt_session__new(&o);
	p = rpt_profile__new();
	q = rpt_profile__new();
	if (!copy || !s || !p || !q)
		goto cleanup;
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (at = copy; nparts < PARTS; at = end + sizeof(sep) - 1) {
		end = nparts + 1 < PARTS
			      ? memmem(at, (size_t)(copy + size - at), sep, sizeof(sep) - 1)
			      : NULL;
		nparts++;
		/* a part keeps the newline that starts the separator */
		if (add_part(s, p, at, end ? (size_t)(end - at) + 1 : (size_t)(copy + size - at),
			     &nfolded))
			goto cleanup;
		if (!end)
			break;
	}
	/* folded text beside other inputs, as report/main.c's load() does */
	if (nfolded && nfolded < nparts && rpt_input__unify(&p))
		goto cleanup;
	rpt_profile__sort(p);
	write_all(s, p, q, alt);
cleanup:
	rpt_profile__free(q);
	rpt_profile__free(p);
	rpt_session__free(s);
	free(copy);
	return 0;
}
