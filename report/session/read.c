// SPDX-License-Identifier: MIT
/*
 * read.c - one recording's records out of the reader (session.c asks):
 * every chunk that validates, past damage, up to the end of the file or
 * the next recording of a concatenation; what the reader dropped and why
 * into the file's stats; and the bound on what records keep ("Limits" in
 * docs/format.md). Each record goes to load.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "session_int.h"

/* The reader's facts about damage, and its first message about it. */
static void note_reader(struct rpt_loaded *l, struct saf_reader *r, int ret)
{
	const struct saf_file_info *fi = saf_reader__info(r);
	struct rpt_file_stats *st = l->st;

	if (ret < 0 && !st->errmsg[0])
		snprintf(st->errmsg, sizeof(st->errmsg), "%s", saf_reader__errmsg(r));
	if (ret < 0)
		rpt_loaded__damage(l);
	/* a concatenation's later recordings count from where theirs began */
	st->damaged = fi->damage_count > l->base.damage_count;
	st->damage_count = fi->damage_count - l->base.damage_count;
	st->dropped_bytes = fi->dropped_bytes - l->base.dropped_bytes;
	st->dropped_chunks = fi->dropped_chunks - l->base.dropped_chunks;
}

/* keep() said no: the file is cut at the record's chunk, and that is said as damage. */
static void too_much(struct rpt_loaded *l, struct saf_reader *r)
{
	const struct saf_file_info *fi = saf_reader__info(r);
	struct rpt_file_stats *st = l->st;
	uint64_t off;

	saf_reader__chunk(r, NULL, &off);
	note_reader(l, r, 0);
	rpt_loaded__damage(l);
	st->damaged = true;
	st->damage_count++;
	st->dropped_chunks++;
	if (fi->stream) { /* its length is not read to say it */
		snprintf(st->errmsg, sizeof(st->errmsg),
			 "offset %llu: the records keep more than %llu MiB, the bound for the "
			 "first %llu bytes of a stream; the rest not read",
			 (unsigned long long)off, (unsigned long long)(l->keep_max >> 20),
			 (unsigned long long)fi->good_bytes);
		return;
	}
	st->dropped_bytes += fi->file_size - off;
	snprintf(st->errmsg, sizeof(st->errmsg),
		 "offset %llu: the records keep more than %llu MiB, the bound for a %llu-byte "
		 "file; %llu bytes not read",
		 (unsigned long long)off, (unsigned long long)(l->keep_max >> 20),
		 (unsigned long long)fi->file_size, (unsigned long long)(fi->file_size - off));
}

/* What records may keep: RPT_KEEP_PER_BYTE per byte of the file, or of a
 * stream up to the end of the chunk read ("Reading a stream" in docs/format.md). */
static uint64_t keep_bound(const struct saf_file_info *fi)
{
	return (fi->stream ? fi->good_bytes : fi->file_size) * RPT_KEEP_PER_BYTE + RPT_KEEP_FLOOR;
}

int rpt_loaded__read(const struct rpt_stage_env *e, struct rpt_loaded *l, struct saf_reader *r,
		     uint32_t name, char *errmsg, size_t cap)
{
	struct saf_record rec;
	char was[256];
	int ret, err = 0;

	l->cur_symtab = RPT_NO_DSO;
	l->in_interval_ok = !e->o->filter.has_time && !e->o->filter.has_wall;
	l->keep_max = keep_bound(saf_reader__info(r));
	snprintf(was, sizeof(was), "%s", saf_reader__errmsg(r));
	while ((ret = saf_reader__next(r, &rec)) != 0 && ret != SAF_READER_NEW_RECORDING) {
		if (saf_reader__info(r)->stream)
			l->keep_max = keep_bound(saf_reader__info(r));
		if (ret < 0) {
			note_reader(l, r, ret);
			if (ret == -EBADMSG || ret == -EOVERFLOW)
				continue;
			if (ret == -EFBIG) /* "Limits": what was read stays, the rest is said */
				break;
			snprintf(errmsg, cap, "%s: %s", rpt_strpool__str(e->pool, name),
				 saf_reader__errmsg(r));
			return ret;
		}
		err = rpt_loaded__record(e, l, &rec);
		if (err == -EFBIG) {
			too_much(l, r);
			err = 0;
			ret = 0; /* the rest of the file, later recordings included, is not read */
			break;
		}
		if (err)
			goto cleanup;
	}
	note_reader(l, r, 0);
	/* unfinished, or bytes after END that are no recording: said either way
	 * (not the message of an earlier recording of a concatenation) */
	if (!l->st->errmsg[0] && strcmp(was, saf_reader__errmsg(r)))
		snprintf(l->st->errmsg, sizeof(l->st->errmsg), "%s", saf_reader__errmsg(r));
	/* nothing to show: session.c says why */
	l->empty = (l->st->damaged || !l->st->finished) && !l->st->intervals;
cleanup:
	if (err == -ENOMEM)
		snprintf(errmsg, cap, "%s: out of memory", rpt_strpool__str(e->pool, name));
	return err ? err : ret == SAF_READER_NEW_RECORDING;
}
