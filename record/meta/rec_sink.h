/* SPDX-License-Identifier: MIT */
/*
 * rec_sink.h - where the self-contained-recording modules (sideband, ksyms,
 * elfsyms, jitmap) send the records they produce. In sa-record the sink is
 * saf_writer__add(); unit tests collect records in memory instead, so these
 * modules never depend on the writer.
 */
#ifndef REC_SINK_H
#define REC_SINK_H

#include <saf.h>

struct rec_sink {
	/* Gets a record whose pointers are borrowed for the call only. */
	int (*emit)(void *ctx, const struct saf_record *rec);
	void *ctx;
};

/*
 * A saf_str viewing a C string; format/'s saf_str__from() without linking
 * it. Never longer than a record takes (SAF_MAX_STRING): where a string
 * can be longer its owner clips it first, with a mark and a count
 * (strclip.h); this cut is the last guard, so no record is ever refused.
 */
static inline struct saf_str rec_str(const char *s)
{
	struct saf_str r = {s ? s : "", 0};

	while (s && s[r.len] && r.len < SAF_MAX_STRING)
		r.len++;
	return r;
}

/** rec_sink__emit() - send @rec to @sink; a NULL sink or emit drops it. */
static inline int rec_sink__emit(const struct rec_sink *sink, const struct saf_record *rec)
{
	if (!sink || !sink->emit)
		return 0;
	return sink->emit(sink->ctx, rec);
}

/* A sink that writes to a struct saf_writer: { rec_sink__writer_emit, w }. */
static inline int rec_sink__writer_emit(void *ctx, const struct saf_record *rec)
{
	return saf_writer__add((struct saf_writer *)ctx, rec);
}

#endif /* REC_SINK_H */
