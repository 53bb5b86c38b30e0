/* SPDX-License-Identifier: MIT */
/*
 * rec_test_sink.h - a struct rec_sink for the record/ unit tests that keeps
 * a copy of every record it gets (strings duplicated) so tests can inspect
 * what a module emitted.
 */
#ifndef REC_TEST_SINK_H
#define REC_TEST_SINK_H

#include <stdlib.h>
#include <string.h>
#include "rec_sink.h"

struct test_rec {
	struct saf_record rec;
	char *s1, *s2; /* owned copies of the record's strings */
	uint8_t bid[SAF_MAX_BUILD_ID];
};

struct test_sink {
	struct test_rec *recs;
	size_t n, cap;
	int fail_with; /* when nonzero, emit returns it */
};

static inline char *test_dup(struct saf_str s)
{
	char *p = malloc(s.len + 1);

	memcpy(p, s.str ? s.str : "", s.len);
	p[s.len] = '\0';
	return p;
}

static inline int test_sink_emit(void *ctx, const struct saf_record *rec)
{
	struct test_sink *ts = ctx;
	struct test_rec *t;

	if (ts->fail_with)
		return ts->fail_with;
	if (ts->n == ts->cap) {
		ts->cap = ts->cap ? ts->cap * 2 : 64;
		ts->recs = realloc(ts->recs, ts->cap * sizeof(*ts->recs));
	}
	t = &ts->recs[ts->n++];
	memset(t, 0, sizeof(*t));
	t->rec = *rec;
	switch (rec->kind) {
	case SAF_REC_KSYM:
		t->s1 = test_dup(rec->ksym.name);
		t->s2 = test_dup(rec->ksym.module);
		break;
	case SAF_REC_SYMTAB:
		t->s1 = test_dup(rec->symtab.path);
		memcpy(t->bid, rec->symtab.build_id.data, rec->symtab.build_id.len);
		break;
	case SAF_REC_USYM:
		t->s1 = test_dup(rec->usym.name);
		break;
	case SAF_REC_JITSYM:
		t->s1 = test_dup(rec->jitsym.name);
		break;
	case SAF_REC_PROC:
		t->s1 = test_dup(rec->proc.comm);
		t->s2 = test_dup(rec->proc.exe);
		break;
	case SAF_REC_MAP:
		t->s1 = test_dup(rec->map.path);
		memcpy(t->bid, rec->map.build_id.data, rec->map.build_id.len);
		break;
	case SAF_REC_COMM:
		t->s1 = test_dup(rec->comm.comm);
		break;
	default:
		break;
	}
	return 0;
}

static inline void test_sink_reset(struct test_sink *ts)
{
	size_t i;

	for (i = 0; i < ts->n; i++) {
		free(ts->recs[i].s1);
		free(ts->recs[i].s2);
	}
	free(ts->recs);
	memset(ts, 0, sizeof(*ts));
}

#define TEST_SINK(ts) ((struct rec_sink){ .emit = test_sink_emit, .ctx = (ts) })

#endif /* REC_TEST_SINK_H */
