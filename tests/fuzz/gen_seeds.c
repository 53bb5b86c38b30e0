// SPDX-License-Identifier: MIT
/*
 * gen_seeds.c - writes the seed corpora of fuzz_reader and fuzz_report
 * (small valid recordings: clean, split into many chunks, unfinished, with
 * a 1.1 USTACK, a 1.2 USTACK_SPARSE, 1.3 ones with walked frames, and one
 * with every record kind) and
 * of fuzz_roundtrip (fixed byte patterns), then reads all_kinds.sa back and
 * fails unless every kind of saf.h's enum saf_rec_kind is in it.
 * Run from the top of the tree: make fuzz-seeds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "saf.h"

#define DIR_R "tests/fuzz/corpus/fuzz_reader/"
#define DIR_REP "tests/fuzz/corpus/fuzz_report/"
#define DIR_RT "tests/fuzz/corpus/fuzz_roundtrip/"

/* Which raw user-stack records a seed holds. */
#define SEED_USTACK (1u << 0)	     /* 1.1: the whole copy */
#define SEED_USTACK_SPARSE (1u << 1) /* 1.2: the runs an unwind reads */
#define SEED_WALKED (1u << 2)	     /* 1.3: with the frames sa-record's walk found */
#define SEED_OFFCPU (1u << 3)	     /* 1.4: an OFFCPU record */

struct seed {
	const char *name;
	size_t chunk_target; /* 0: the writer's default */
	int finish, level;
	unsigned int ustacks; /* SEED_* */
};

/* The 1.1 USTACK and 1.2 USTACK_SPARSE records of @seed, in @out[0..return). */
static size_t ustack_recs(const struct seed *seed, struct saf_record *out, uint8_t *runs)
{
	/* saved rbp, return address into /a; later the caller's frame */
	static const uint8_t stk[] = { 0x10, 0x20, 0x40, 0, 0, 0, 0, 0, 0x34, 0x12, 0x40, 0, 0, 0, 0, 0 };
	static const uint8_t far[] = { 0x78, 0x56, 0x40, 0, 0, 0, 0, 0 };
	static const uint64_t walked[] = { 0x401000, 0x401234, 0x405678 };
	const struct saf_ustack u = { .pid = 42, .tid = 43, .gen = 1, .time_ns = 2, .count = 2,
				      .comm = saf_str__from("t"), .nregs = 3,
				      .regs = { 0x401000, 0x7ffc0000, 0x7ffc0000 } };
	size_t n = 0, len;

	if (seed->ustacks & SEED_USTACK) {
		out[n] = (struct saf_record){ .kind = SAF_REC_USTACK, .ustack = u };
		out[n++].ustack.stack = (struct saf_bytes){ stk, sizeof(stk) };
	}
	if (seed->ustacks & SEED_USTACK_SPARSE) {
		len = saf_urun__put(runs, 0, stk, sizeof(stk));
		len += saf_urun__put(runs + len, 48, far, sizeof(far));
		out[n] = (struct saf_record){ .kind = SAF_REC_USTACK_SPARSE, .ustack = u };
		out[n].ustack.time_ns = 3;
		out[n++].ustack.runs = (struct saf_bytes){ runs, (uint32_t)len };
	}
	for (size_t i = 0; (seed->ustacks & SEED_WALKED) && i < n; i++) {
		out[i].ustack.walk = i ? SAF_WALK_COMPLETE : SAF_WALK_CUT;
		out[i].ustack.nwalked = 3;
		out[i].ustack.walked = walked;
	}
	return n;
}

/* One interval: three COUNTs, the seed's raw stacks, then its LOSS. */
static int write_interval(struct saf_writer *w, const struct seed *seed)
{
	struct saf_interval iv = { 0, 1, 2 };
	struct saf_record c = { .kind = SAF_REC_COUNT,
				.count = { 42, 43, 1, 1, 0, 5, saf_str__from("t") } };
	struct saf_loss loss = { .ncounters = 2, .ids = { 1, 2 }, .values = { 5, 5 } };
	struct saf_record off = { .kind = SAF_REC_OFFCPU,
				  .offcpu = { 42, 43, 1, 1, 0, 2, 1500000, saf_str__from("t"),
					      SAF_OFFCPU_PREEMPTED } };
	struct saf_record u[2];
	uint8_t runs[2 * (16 + 20)];
	size_t i, nu = ustack_recs(seed, u, runs);
	int err = saf_writer__interval(w, &iv);

	for (i = 0; !err && i < 3; i++)
		err = saf_writer__add(w, &c);
	for (i = 0; !err && i < nu; i++)
		err = saf_writer__add(w, &u[i]);
	if (!err && (seed->ustacks & SEED_OFFCPU))
		err = saf_writer__add(w, &off);
	if (!err)
		err = saf_writer__interval_end(w, &loss);
	return err;
}

static int write_rec(const char *dir, const struct seed *seed)
{
	static const uint64_t ips[] = { 0x401000, 0x400ff0, 0x7f0000001234 };
	static const uint8_t bid[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct saf_writer_opts o = { .sz = sizeof(o), .chunk_target = seed->chunk_target,
				     .zstd_level = seed->level };
	struct saf_meta m = { .writer = saf_str__from("gen_seeds"), .freq_hz = 99, .ncpus = 2 };
	struct saf_record r[] = {
		{ .kind = SAF_REC_PROC, .proc = { 42, 1, 1, 10, saf_str__from("a"), saf_str__from("/a") } },
		{ .kind = SAF_REC_MAP, .map = { 42, 1, 11, 0x400000, 0x402000, 0, 1, 0, 0,
						saf_str__from("/a"), { bid, sizeof(bid) } } },
		{ .kind = SAF_REC_COMM, .comm = { 42, 43, 12, saf_str__from("t") } },
		{ .kind = SAF_REC_EXIT, .exit = { 40, 13 } },
		{ .kind = SAF_REC_KSYM, .ksym = { 0xffffffff81000000ull, saf_str__from("f"),
						  saf_str__from("") } },
		{ .kind = SAF_REC_SYMTAB, .symtab = { { bid, sizeof(bid) }, saf_str__from("/a") } },
		{ .kind = SAF_REC_USYM, .usym = { 0x1000, 0x10, saf_str__from("main") } },
		{ .kind = SAF_REC_JITSYM, .jitsym = { 42, 0x7f0000001000, 0x300, saf_str__from("j") } },
		{ .kind = SAF_REC_STACK, .stack = { 1, 0, 3, ips } },
	};
	struct saf_end end = { 3, 5, 0, 1, 0 };
	char path[256];
	int fd, err = 0;
	struct saf_writer *w;
	size_t i;

	snprintf(path, sizeof(path), "%s%s", dir, seed->name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	w = fd < 0 ? NULL : saf_writer__open_fd(fd, &o);
	if (!w) {
		err = -errno;
		fprintf(stderr, "gen_seeds: %s: %s\n", path, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	err = saf_writer__meta(w, &m);
	for (i = 0; !err && i < sizeof(r) / sizeof(r[0]); i++)
		err = saf_writer__add(w, &r[i]);
	if (!err)
		err = write_interval(w, seed);
	if (!err && seed->finish)
		err = saf_writer__finish(w, &end);
	saf_writer__free(w);
	if (close(fd) && !err)
		err = -errno;
	if (err)
		fprintf(stderr, "gen_seeds: %s: %s\n", path, strerror(-err));
	return err;
}

/* 0 when @path holds every record kind of saf.h and is format 1.2 or later. */
static int check_kinds(const char *path)
{
	struct saf_reader *rd = saf_reader__open(path, NULL);
	bool seen[SAF_REC_OFFCPU + 1] = { false };
	struct saf_record rec;
	int err = 0, ret;

	if (!rd)
		return -errno;
	while ((ret = saf_reader__next(rd, &rec)) > 0)
		if (rec.kind > 0 && rec.kind <= SAF_REC_OFFCPU)
			seen[rec.kind] = true;
	if (ret < 0 || saf_reader__info(rd)->version_minor < 2)
		err = ret < 0 ? ret : -EPROTO;
	for (int k = SAF_REC_META; k <= SAF_REC_OFFCPU; k++) {
		if (!seen[k]) {
			fprintf(stderr, "gen_seeds: %s: no record of kind %d\n", path, k);
			err = -ENOENT;
		}
	}
	saf_reader__free(rd);
	return err;
}

static int write_bytes(const char *path, unsigned int seed, size_t len)
{
	FILE *f = fopen(path, "wb");
	size_t i;

	if (!f)
		return -errno;
	srand(seed);
	for (i = 0; i < len; i++)
		fputc(rand() & 0xff, f);
	return fclose(f) ? -errno : 0;
}

int main(void)
{
	static const struct seed seeds[] = {
		{ "clean.sa", 0, 1, 3, 0 },
		{ "split.sa", 24, 1, 1, 0 },
		{ "unfinished.sa", 0, 0, 3, 0 },
		{ "level19.sa", 0, 1, 19, 0 },
		{ "ustack.sa", 0, 1, 3, SEED_USTACK },
		{ "ustack_sparse.sa", 0, 1, 3, SEED_USTACK_SPARSE },
		{ "ustack_sparse_split.sa", 24, 0, 1, SEED_USTACK_SPARSE },
		{ "all_kinds.sa", 0, 1, 3, SEED_USTACK | SEED_USTACK_SPARSE | SEED_OFFCPU },
		{ "ustack_walked.sa", 0, 1, 3, SEED_USTACK | SEED_USTACK_SPARSE | SEED_WALKED },
	};
	static const size_t lens[] = { 1, 16, 64, 200, 600, 2000 };
	char path[256];
	size_t i;
	int err = 0;

	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		err |= write_rec(DIR_R, &seeds[i]);
		err |= write_rec(DIR_REP, &seeds[i]);
	}
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		snprintf(path, sizeof(path), DIR_RT "random-%zu", lens[i]);
		err |= write_bytes(path, (unsigned int)i + 1, lens[i]);
	}
	if (!err)
		err = check_kinds(DIR_R "all_kinds.sa");
	if (err)
		fprintf(stderr, "gen_seeds: failed (%d)\n", err);
	return err ? 1 : 0;
}
