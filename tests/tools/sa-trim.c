// SPDX-License-Identifier: MIT
/*
 * sa-trim.c - rewrite a recording made with --whole-stack as sa-record
 * would have written it without: each USTACK becomes the USTACK_SPARSE
 * record record/drain/uwtrim.c makes of it, with the mappings of the file's MAP
 * records and the binaries they name on this host. Test tool only: test
 * 6100 checks that sa-report folds both files to the same bytes.
 * usage: sa-trim IN.sa OUT.sa; prints "captures trimmed cut_short bytes_in bytes_out".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "maptab.h"
#include "saf.h"
#include "saf_rewrite.h"
#include "uwtrim.h"

struct trim {
	struct tst_rewriter rw; /* everything but MAP and USTACK records */
	struct rec_maptab *mt;
	struct rec_uwtrim *ut;
	struct rec_sink sink;
	uint8_t runs[SAF_MAX_USTACK_BYTES + 64];
};

/* A USTACK as sa-record writes it by default: the trimmer's runs, or whole. */
static int on_ustack(struct trim *t, const struct saf_record *rec, uint64_t off)
{
	const struct saf_ustack *u = &rec->ustack;
	struct saf_record out = *rec;
	ssize_t n = -1;

	if (u->nregs >= 3)
		n = rec_uwtrim__runs(t->ut, u->pid, u->gen, u->regs[0], u->regs[1], u->regs[2],
				     u->stack.data, u->stack.len, t->runs, sizeof(t->runs));
	if (n >= 0) {
		out.kind = SAF_REC_USTACK_SPARSE;
		out.ustack.stack = (struct saf_bytes){NULL, 0};
		out.ustack.runs = (struct saf_bytes){t->runs, (uint32_t)n};
	}
	return tst_rewrite_one(&t->rw, &out, off);
}

/* The record at chunk offset @off, into the new file. */
static int on_record(struct trim *t, const struct saf_record *rec, uint64_t off)
{
	if (rec->kind == SAF_REC_USTACK)
		return on_ustack(t, rec, off);
	if (rec->kind != SAF_REC_MAP)
		return tst_rewrite_one(&t->rw, rec, off);
	if (off != t->rw.chunk_off && saf_writer__flush(t->rw.w))
		return -EIO;
	t->rw.chunk_off = off;
	return rec_maptab__add(t->mt, &rec->map, -1, &t->sink); /* it writes the MAP */
}

int main(int argc, char **argv)
{
	static struct trim t;
	const struct rec_uwtrim_stats *st;
	struct saf_reader *r;
	struct saf_record rec;
	uint64_t off;
	int fd, ret, err = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: sa-trim IN.sa OUT.sa\n");
		return 2;
	}
	r = saf_reader__open(argv[1], NULL);
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	t.rw.w = fd >= 0 ? saf_writer__open_fd(fd, NULL) : NULL;
	t.mt = rec_maptab__new(NULL);
	t.ut = t.mt ? rec_uwtrim__new(t.mt) : NULL;
	t.sink = (struct rec_sink){rec_sink__writer_emit, t.rw.w};
	if (!r || !t.rw.w || !t.ut) {
		fprintf(stderr, "sa-trim: cannot open %s or %s: %s\n", argv[1], argv[2],
			strerror(errno));
		return 1;
	}
	while (!err && (ret = saf_reader__next(r, &rec)) == 1) {
		saf_reader__chunk(r, NULL, &off);
		err = on_record(&t, &rec, off);
	}
	if (err || ret < 0) {
		fprintf(stderr, "sa-trim: %s\n", err ? strerror(-err) : "read error");
		return 1;
	}
	st = rec_uwtrim__stats(t.ut);
	printf("%llu %llu %llu %llu %llu\n", (unsigned long long)st->captures,
	       (unsigned long long)st->trimmed, (unsigned long long)st->cut_short,
	       (unsigned long long)st->bytes_in, (unsigned long long)st->bytes_out);
	rec_uwtrim__free(t.ut);
	rec_maptab__free(t.mt);
	saf_writer__free(t.rw.w);
	saf_reader__free(r);
	return close(fd) ? 1 : 0;
}
