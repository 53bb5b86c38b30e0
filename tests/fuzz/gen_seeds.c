// SPDX-License-Identifier: MIT
/*
 * gen_seeds.c - writes the seed corpus of fuzz_reader (small valid
 * recordings: clean, split into many chunks, unfinished, empty) and of
 * fuzz_roundtrip (fixed byte patterns). Run from the top of the tree:
 *   gcc -Iformat/include -Iformat -o build/gen_seeds tests/fuzz/gen_seeds.c \
 *       build/lib/libsaf.a -lzstd -lz && build/gen_seeds
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "saf.h"

#define DIR_R "tests/fuzz/corpus/fuzz_reader/"
#define DIR_RT "tests/fuzz/corpus/fuzz_roundtrip/"

static int write_rec(const char *path, size_t target, int finish, int level, int ustack)
{
	static const uint8_t stk[] = { 0x10, 0x20, 0x40, 0, 0, 0, 0, 0, 0x34, 0x12, 0x40, 0, 0, 0, 0, 0 };
	static const uint64_t ips[] = { 0x401000, 0x400ff0, 0x7f0000001234 };
	static const uint8_t bid[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct saf_writer_opts o = { .sz = sizeof(o), .chunk_target = target, .zstd_level = level };
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
	struct saf_interval iv = { 0, 1, 2 };
	struct saf_record c = { .kind = SAF_REC_COUNT,
				.count = { 42, 43, 1, 1, 0, 5, saf_str__from("t") } };
	struct saf_record u = { .kind = SAF_REC_USTACK,
				.ustack = { 42, 43, 1, 2, 0, 2, saf_str__from("t"), 3,
					    { 0x401000, 0x7ffc0000, 0 }, { stk, sizeof(stk) } } };
	struct saf_loss loss = { .ncounters = 2, .ids = { 1, 2 }, .values = { 5, 5 } };
	struct saf_end end = { 3, 5, 0, 1, 0 };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), err = 0;
	struct saf_writer *w = fd < 0 ? NULL : saf_writer__open_fd(fd, &o);
	size_t i;

	if (!w)
		return -errno;
	err = saf_writer__meta(w, &m);
	for (i = 0; !err && i < sizeof(r) / sizeof(r[0]); i++)
		err = saf_writer__add(w, &r[i]);
	if (!err)
		err = saf_writer__interval(w, &iv);
	for (i = 0; !err && i < 3; i++)
		err = saf_writer__add(w, &c);
	if (ustack > 1) /* 1.3: with the frames sa-record's walk found */
		u.ustack = (struct saf_ustack){ 42, 43, 1, 2, 0, 2, saf_str__from("t"), 3,
						{ 0x401000, 0x7ffc0000, 0 }, { stk, sizeof(stk) },
						.walk = SAF_WALK_CUT, .nwalked = 3, .walked = ips };
	if (!err && ustack)
		err = saf_writer__add(w, &u);
	if (!err)
		err = saf_writer__interval_end(w, &loss);
	if (!err && finish)
		err = saf_writer__finish(w, &end);
	saf_writer__free(w);
	close(fd);
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
	static const size_t lens[] = { 1, 16, 64, 200, 600, 2000 };
	char path[256];
	size_t i;
	int err = 0;

	err |= write_rec(DIR_R "clean.sa", 0, 1, 3, 0);
	err |= write_rec(DIR_R "split.sa", 24, 1, 1, 0);
	err |= write_rec(DIR_R "unfinished.sa", 0, 0, 3, 0);
	err |= write_rec(DIR_R "level19.sa", 0, 1, 19, 0);
	err |= write_rec(DIR_R "ustack.sa", 0, 1, 3, 1);
	err |= write_rec(DIR_R "ustack_walked.sa", 0, 1, 3, 2);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		snprintf(path, sizeof(path), DIR_RT "random-%zu", lens[i]);
		err |= write_bytes(path, (unsigned int)i + 1, lens[i]);
	}
	if (err)
		fprintf(stderr, "gen_seeds: %d\n", err);
	return err ? 1 : 0;
}
