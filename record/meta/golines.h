/* SPDX-License-Identifier: MIT */
/*
 * golines.h - the source positions of a Go binary's sampled addresses
 * (golines.c): for each file offset a sample hit, the range around it with
 * the same frames, read from .gopclntab (gopclntab.h) and written as ULINE
 * records after the binary's SYMTAB, so that sa-report gives Go frames
 * their file:line and inline frames with the binary gone.
 */
#ifndef REC_GOLINES_H
#define REC_GOLINES_H

#include <stddef.h>
#include <stdint.h>
#include "gopclntab.h"
#include "rec_sink.h"

/* A PT_LOAD segment, to turn file offsets into addresses and back. */
struct rec_golines_load {
	uint64_t vaddr, off, filesz;
};

#define REC_GOLINES_MAX_LOADS  8
#define REC_GOLINES_MAX_DEPTH  16    /* frames of one range (Go inlines a few deep) */
#define REC_GOLINES_MAX_RANGES 65536 /* ranges kept per binary and output file */
#define REC_GOLINES_MAX_SEEN   (4 * REC_GOLINES_MAX_RANGES) /* offsets remembered */

struct rec_golines;

/**
 * rec_golines__new() - the line state of one binary.
 * @pcln: its tables, owned from now on (freed even on failure).
 * @loads, @nloads: its PT_LOAD segments (copied; at most
 * REC_GOLINES_MAX_LOADS are kept).
 * @return an object released with rec_golines__free(), or NULL (ENOMEM).
 */
struct rec_golines *rec_golines__new(struct rec_gopcln *pcln, const struct rec_golines_load *loads,
				     size_t nloads);

/**
 * rec_golines__note() - a sample hit file offset @off: the range holding
 * it, and the one holding @off - 1 (where sa-report looks a caller's
 * return address up), become wanted unless known already.
 * @return 1 when a range became wanted, 0 when none did (known, no line,
 * or past REC_GOLINES_MAX_RANGES or REC_GOLINES_MAX_SEEN: counted in
 * dropped), -ENOMEM.
 */
int rec_golines__note(struct rec_golines *gl, uint64_t off);

/**
 * rec_golines__flush() - emit a ULINE record per frame of each range
 * wanted since the last flush (docs/format.md, "ULINE record"), after the
 * caller emitted the binary's SYMTAB.
 * @return the number of records, or the sink's negative errno (the ranges
 * not done stay wanted).
 */
int rec_golines__flush(struct rec_golines *gl, const struct rec_sink *sink);

/**
 * rec_golines__new_file() - the writer moved to a new file (--rotate):
 * forget every range, so those sampled from now on are written again.
 */
void rec_golines__new_file(struct rec_golines *gl);

/** rec_golines__bytes() - heap bytes of the tables it holds (0 for NULL). */
uint64_t rec_golines__bytes(const struct rec_golines *gl);

/** rec_golines__free() - release it and its tables. Accepts NULL. */
void rec_golines__free(struct rec_golines *gl);

#endif /* REC_GOLINES_H */
