// SPDX-License-Identifier: MIT
/*
 * gen-images.c - gen-synthetic's -I case: a whole-system --call-graph dwarf
 * recording of a fork loop, N short-lived process images of a few real
 * binaries of this host (libc, ld.so and the first shared objects of the
 * library directory), each with a USTACK whose copy holds return addresses
 * into those binaries, so sa-report opens them and walks their CFI.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>

#include "gen-images.h"

#define LIBDIR	   "/usr/lib/x86_64-linux-gnu"
#define MAX_BINS   64
#define COPY_WORDS 96 /* 768 bytes of stack per capture */
#define PER_IMAGE  4  /* binaries mapped by each image: libc, ld.so and two more */
#define SLOT	   0x10000000ULL

/* A binary of this host: where its code is in the file. */
struct gbin {
	char path[256];
	uint8_t bid[64];
	size_t bidlen;
	uint64_t off, vaddr, size; /* its executable PT_LOAD */
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* @b from file @path: an x86-64 ET_DYN with a build id and an executable segment. */
static bool gbin_read(struct gbin *b, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	const void *bid;
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t n;
	ssize_t len;
	bool ok = false;

	if (!e || !gelf_getehdr(e, &eh) || eh.e_type != ET_DYN || eh.e_machine != EM_X86_64 ||
	    elf_getphdrnum(e, &n))
		goto out;
	len = dwelf_elf_gnu_build_id(e, &bid);
	if (len <= 0 || len > (ssize_t)sizeof(b->bid))
		goto out;
	for (size_t i = 0; i < n && !ok; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    ph.p_filesz < 0x4000 || ph.p_offset % 4096 != ph.p_vaddr % 4096)
			continue;
		snprintf(b->path, sizeof(b->path), "%s", path);
		memcpy(b->bid, bid, len);
		b->bidlen = len;
		b->off = ph.p_offset & ~4095ULL;
		b->vaddr = ph.p_vaddr & ~4095ULL;
		b->size = (ph.p_offset + ph.p_filesz - b->off + 4095) & ~4095ULL;
		ok = true;
	}
out:
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return ok;
}

/* libc and ld.so first, then the library directory's shared objects in name order. */
static size_t find_bins(struct gbin *bins, size_t want)
{
	static const char *const first[] = {LIBDIR "/libc.so.6", LIBDIR "/ld-linux-x86-64.so.2"};
	struct dirent **names;
	char path[512];
	size_t n = 0;
	int nd;

	elf_version(EV_CURRENT);
	for (size_t i = 0; i < 2; i++)
		n += gbin_read(&bins[n], first[i]);
	nd = scandir(LIBDIR, &names, NULL, alphasort);
	for (int i = 0; i < nd; i++) {
		const char *d = names[i]->d_name;

		snprintf(path, sizeof(path), LIBDIR "/%s", d);
		if (n < want && strstr(d, ".so.") && strcmp(path, first[0]) &&
		    strcmp(path, first[1]) && gbin_read(&bins[n], path))
			n++;
		free(names[i]);
	}
	free(names);
	return n;
}

/* Where image @i maps its binaries: @start/@end per slot, @which binary. */
struct glayout {
	size_t n, which[PER_IMAGE];
	uint64_t start[PER_IMAGE], end[PER_IMAGE];
};

static void layout(const struct gbin *bins, size_t nb, uint64_t i, struct glayout *l)
{
	size_t pick[PER_IMAGE] = {0, 1, 2 + i % (nb - 2), 2 + (i * 7 + 3) % (nb - 2)};

	l->n = 0;
	for (size_t k = 0; k < PER_IMAGE; k++) {
		/* a base per slot, moved per image as ASLR does */
		uint64_t base = 0x7f0000000000ULL + k * SLOT + (i % 251) * 0x100000;

		if (k == 3 && pick[3] == pick[2])
			break;
		l->which[l->n] = pick[k];
		l->start[l->n] = base + bins[pick[k]].vaddr;
		l->end[l->n] = l->start[l->n] + bins[pick[k]].size;
		l->n++;
	}
}

static uint32_t pid_of(uint64_t i)
{
	return 2000 + i % 30000; /* pids come back, as a fork loop's do: gen tells them apart */
}

/* The PROC and MAP records of image @i. */
static int write_image(struct gen_images *g, const struct gbin *bins, uint64_t i,
		       const struct glayout *l)
{
	struct saf_record r = {.kind = SAF_REC_PROC};
	char comm[16];
	int err;

	snprintf(comm, sizeof(comm), "img%u", (unsigned)(i % 97));
	r.proc = (struct saf_proc){
		pid_of(i), i / 30000,		1,
		0,	   saf_str__from(comm), saf_str__from(bins[l->which[2]].path)};
	if ((err = g->add(g->arg, &r)))
		return err;
	for (size_t k = 0; k < l->n; k++) {
		const struct gbin *b = &bins[l->which[k]];

		r = (struct saf_record){.kind = SAF_REC_MAP};
		r.map = (struct saf_map){.pid = pid_of(i),
					 .gen = i / 30000,
					 .start = l->start[k],
					 .end = l->end[k],
					 .pgoff = b->off,
					 .flags = SAF_MAP_EXEC,
					 .path = saf_str__from(b->path),
					 .build_id = {b->bid, b->bidlen}};
		if ((err = g->add(g->arg, &r)))
			return err;
	}
	return 0;
}

/* A capture of image @i: pc in its program's code, a copy of return addresses into its binaries. */
static int write_capture(struct gen_images *g, uint64_t i, const struct glayout *l, uint64_t *seed)
{
	uint64_t words[COPY_WORDS];
	struct saf_record r = {.kind = SAF_REC_USTACK};
	char comm[16];

	for (size_t w = 0; w < COPY_WORDS; w++) {
		size_t k = rnd(seed) % l->n;

		words[w] = l->start[k] + rnd(seed) % (l->end[k] - l->start[k]);
	}
	snprintf(comm, sizeof(comm), "img%u", (unsigned)(i % 97));
	r.ustack = (struct saf_ustack){
		.pid = pid_of(i),
		.tid = pid_of(i),
		.gen = i / 30000,
		.count = 1,
		.comm = saf_str__from(comm),
		.nregs = 3,
		.regs = {l->start[2] + rnd(seed) % (l->end[2] - l->start[2]), 0x7ffc00000000ULL, 0},
		.stack = {(const uint8_t *)words, sizeof(words)}};
	return g->add(g->arg, &r);
}

int gen_images__write(struct gen_images *g)
{
	struct gbin *bins = calloc(MAX_BINS, sizeof(*bins));
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	struct glayout l;
	size_t nb;
	int err = 0;

	if (!bins)
		return -ENOMEM;
	nb = find_bins(bins, g->nbins < MAX_BINS ? g->nbins : MAX_BINS);
	if (nb < 3) {
		fprintf(stderr, "gen-synthetic: fewer than 3 binaries in " LIBDIR "\n");
		free(bins);
		return -ENOENT;
	}
	for (size_t i = 0; g->list && i < nb; i++)
		fprintf(g->list, "%s\n", bins[i].path);
	for (unsigned iv = 0; !err && iv < g->intervals; iv++) {
		uint64_t from = g->images * iv / g->intervals;
		uint64_t to = g->images * (iv + 1) / g->intervals;
		struct saf_interval si = {iv, g->t0 + iv * 1000000000ULL,
					  g->t0 + (iv + 1) * 1000000000ULL};
		struct saf_loss loss = {
			.ncounters = 1, .ids = {SAF_CTR_KEPT}, .values = {to - from}};

		for (uint64_t i = from; !err && i < to; i++) {
			layout(bins, nb, i, &l);
			err = write_image(g, bins, i, &l);
		}
		if (!err)
			err = saf_writer__interval(g->w, &si);
		for (uint64_t i = from; !err && i < to; i++) {
			layout(bins, nb, i, &l);
			err = write_capture(g, i, &l, &seed);
		}
		if (!err)
			err = saf_writer__interval_end(g->w, &loss);
	}
	free(bins);
	return err;
}
