/* SPDX-License-Identifier: MIT */
/*
 * saf_rewrite.h - write again, through a struct saf_writer, the records a
 * struct saf_reader returns; for the format's unit tests (saf_test.h) and
 * tests/tools/sa-trim.c. Test code only, no cmocka.
 */
#ifndef SA_TESTS_SAF_REWRITE_H
#define SA_TESTS_SAF_REWRITE_H

#include <stdbool.h>
#include <stdint.h>
#include "saf.h"

/*
 * Re-write what a reader returns ("Writer rules" in docs/format.md): a new
 * chunk means the writer flushed; an INTERVAL repeating the open one is a
 * continuation head the writer adds by itself.
 */
struct tst_rewriter {
	struct saf_writer *w;
	uint64_t chunk_off;
	bool iv_open;
	uint64_t iv_seq;
};

static __attribute__((unused)) int tst_rewrite_one(struct tst_rewriter *t, const struct saf_record *rec, uint64_t off)
{
	int err = 0;

	if (off != t->chunk_off && (err = saf_writer__flush(t->w)))
		return err;
	t->chunk_off = off;
	switch (rec->kind) {
	case SAF_REC_META:
		return saf_writer__meta(t->w, &rec->meta);
	case SAF_REC_INTERVAL:
		if (t->iv_open && t->iv_seq == rec->interval.seq)
			return 0;
		if (t->iv_open && (err = saf_writer__interval_end(t->w, NULL)))
			return err;
		t->iv_open = true;
		t->iv_seq = rec->interval.seq;
		return saf_writer__interval(t->w, &rec->interval);
	case SAF_REC_LOSS:
		t->iv_open = false;
		return saf_writer__interval_end(t->w, &rec->loss);
	case SAF_REC_END:
		if (t->iv_open && (err = saf_writer__interval_end(t->w, NULL)))
			return err;
		t->iv_open = false;
		return saf_writer__finish(t->w, &rec->end);
	default:
		return saf_writer__add(t->w, rec);
	}
}

#endif /* SA_TESTS_SAF_REWRITE_H */
