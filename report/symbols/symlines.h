/* SPDX-License-Identifier: MIT */
/*
 * symlines.h - the source positions a recording carries (ULINE records,
 * docs/format.md): per binary, ranges of file offsets with their frames,
 * the function first, then the functions inlined into it. Sorted lazily,
 * once, after the file is read; looked up by binary search.
 */
#ifndef SA_REPORT_SYMLINES_H
#define SA_REPORT_SYMLINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rpt_symline {
	uint64_t key;	   /* the binary's index */
	uint64_t lo, size; /* file offsets */
	uint32_t depth;	   /* 0: the function; k: inlined k calls deep */
	uint32_t line;
	uint32_t file, name; /* offsets in the caller's string pool */
};

struct rpt_symlines {
	struct rpt_symline *ents;
	size_t n, cap;
	bool sorted;
};

/** rpt_symlines__add() - add one record's frame (copied). @return 0 or -ENOMEM. */
int rpt_symlines__add(struct rpt_symlines *t, const struct rpt_symline *e);

/**
 * rpt_symlines__lookup() - the frames of the range of binary @key that
 * holds file offset @off (of ranges that overlap, the one starting last):
 * *@v gets them by depth, from 0 on, without a gap. Sorts on first use
 * after an add (not thread-safe).
 * @return their number (0: no range holds @off); *@v borrowed until the
 * next add.
 */
size_t rpt_symlines__lookup(struct rpt_symlines *t, uint64_t key, uint64_t off,
			    const struct rpt_symline **v);

/** rpt_symlines__fini() - release the table. Safe on a zeroed table. */
void rpt_symlines__fini(struct rpt_symlines *t);

#endif /* SA_REPORT_SYMLINES_H */
