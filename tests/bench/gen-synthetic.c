// SPDX-License-Identifier: MIT
/*
 * gen-synthetic.c - writes a valid .sa recording through the format writer
 * with a chosen number of processes, unique stacks, depth, samples and
 * intervals. Mappings are fake (no file on disk); their names come from
 * embedded USYM records, so the recording symbolizes with no binaries.
 * Every unique stack appears in every interval, so the file's size depends
 * on stacks and intervals, not on the number of samples.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "saf.h"

#define NFUNCS 1024
#define FN_OFF(i) (0x1000 + (uint64_t)(i) * 0x100)
#define MAP_START 0x400000ULL
#define KBASE 0xffffffff81000000ULL

struct gen {
	unsigned procs, stacks, depth, intervals, kstacks, phases;
	unsigned long long samples;
	bool no_end;
	const char *out, *host;
	struct saf_writer *w;
};

static int add(struct gen *g, struct saf_record *r)
{
	int err = saf_writer__add(g->w, r);

	if (err)
		fprintf(stderr, "gen-synthetic: record %d: %s\n", r->kind, strerror(-err));
	return err;
}

static int write_symbols(struct gen *g, const uint8_t *bid)
{
	struct saf_record r = { .kind = SAF_REC_SYMTAB };
	char name[64];
	int err;

	r.symtab.build_id = (struct saf_bytes){ bid, 20 };
	r.symtab.path = saf_str__from("/synthetic/bin/synth");
	if ((err = add(g, &r)))
		return err;
	for (unsigned i = 0; i < NFUNCS; i++) {
		snprintf(name, sizeof(name), i % 3 ? "fn_%04u" : "_ZN5synth2fnILi%uEEEvv", i);
		if (i == NFUNCS - 1)
			snprintf(name, sizeof(name), "main");
		r = (struct saf_record){ .kind = SAF_REC_USYM };
		r.usym = (struct saf_usym){ FN_OFF(i), 0x100, saf_str__from(name) };
		if ((err = add(g, &r)))
			return err;
	}
	for (unsigned i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "ksym_%02u", i);
		r = (struct saf_record){ .kind = SAF_REC_KSYM };
		r.ksym = (struct saf_ksym){ KBASE + i * 0x1000, saf_str__from(name), saf_str__from("") };
		if ((err = add(g, &r)))
			return err;
	}
	return 0;
}

static int write_procs(struct gen *g, const uint8_t *bid)
{
	char comm[32];
	int err;

	for (unsigned p = 0; p < g->procs; p++) {
		struct saf_record r = { .kind = SAF_REC_PROC };

		snprintf(comm, sizeof(comm), "synth%u", p);
		r.proc = (struct saf_proc){ 1000 + p, 0, 1, 0, saf_str__from(comm),
					    saf_str__from("/synthetic/bin/synth") };
		if ((err = add(g, &r)))
			return err;
		r = (struct saf_record){ .kind = SAF_REC_MAP };
		r.map = (struct saf_map){ .pid = 1000 + p, .start = MAP_START,
					  .end = MAP_START + FN_OFF(NFUNCS), .pgoff = 0,
					  .flags = SAF_MAP_EXEC, .path = saf_str__from("/synthetic/bin/synth"),
					  .build_id = { bid, 20 } };
		if ((err = add(g, &r)))
			return err;
	}
	return 0;
}

/* Stack j: its three leaf frames encode j, so every stack is distinct. */
static int write_stacks(struct gen *g)
{
	uint64_t ips[SAF_MAX_FRAMES];
	int err;

	for (unsigned j = 0; j < g->stacks; j++) {
		struct saf_record r = { .kind = SAF_REC_STACK };
		unsigned x = j;

		for (unsigned k = 0; k < g->depth; k++) {
			unsigned f = k < 3 ? x % NFUNCS : (j * 2654435761u + k * 40503u) % NFUNCS;

			if (k == g->depth - 1 && k >= 3) /* a complete walk ends in main */
				f = NFUNCS - 1;

			if (k < 3)
				x /= NFUNCS;
			ips[k] = MAP_START + FN_OFF(f) + (k ? 0x40 : 0x10);
		}
		r.stack = (struct saf_stack){ j + 1, SAF_STACK_USER, g->depth, ips };
		if ((err = add(g, &r)))
			return err;
	}
	for (unsigned j = 0; j < g->kstacks; j++) {
		struct saf_record r = { .kind = SAF_REC_STACK };

		for (unsigned k = 0; k < 3; k++)
			ips[k] = KBASE + ((j + k * 7) % 64) * 0x1000 + 0x20;
		r.stack = (struct saf_stack){ g->stacks + j + 1, SAF_STACK_KERNEL, 3, ips };
		if ((err = add(g, &r)))
			return err;
	}
	return 0;
}

/*
 * The count of stack j in interval i; counts sum to exactly g->samples
 * without -P. With -P phases, phase k (a run of intervals) only has the
 * stacks with j % phases == k, for --time tests.
 */
static uint64_t count_of(const struct gen *g, unsigned i, unsigned j)
{
	unsigned long long cells = (unsigned long long)g->stacks * g->intervals;
	unsigned long long cell = (unsigned long long)i * g->stacks + j;

	if (g->phases) {
		if (j % g->phases != i * g->phases / g->intervals)
			return 0;
		cells /= g->phases;
		cell /= g->phases;
	}
	return g->samples / cells + (cell < g->samples % cells);
}

static int write_intervals(struct gen *g, uint64_t t0)
{
	for (unsigned i = 0; i < g->intervals; i++) {
		struct saf_interval iv = { i, t0 + i * 1000000000ULL, t0 + (i + 1) * 1000000000ULL };
		struct saf_loss loss = { .ncounters = 2, .ids = { SAF_CTR_KEPT, SAF_CTR_LOST_USTACK },
					 .values = { 0, i == 0 ? 7 : 0 } };
		int err = saf_writer__interval(g->w, &iv);
		char comm[32];

		for (unsigned j = 0; !err && j < g->stacks; j++) {
			struct saf_record r = { .kind = SAF_REC_COUNT };
			unsigned p = j % g->procs;

			snprintf(comm, sizeof(comm), "synth%u", p);
			r.count = (struct saf_count){ 1000 + p, 1000 + p, 0, j + 1,
						      g->kstacks && j % 4 == 0 ? g->stacks + 1 + j % g->kstacks : 0,
						      count_of(g, i, j), saf_str__from(comm) };
			loss.values[0] += r.count.count;
			if (r.count.count)
				err = add(g, &r);
		}
		if (!err)
			err = saf_writer__interval_end(g->w, &loss);
		if (err)
			return err;
	}
	return 0;
}

static int generate(struct gen *g, int fd)
{
	uint8_t bid[20];
	struct saf_meta m = { .writer = saf_str__from("gen-synthetic"),
			      .hostname = saf_str__from(g->host), .kernel_release = saf_str__from("6.1.0-synth"),
			      .arch = saf_str__from("x86_64"), .cmdline = saf_str__from("gen-synthetic"),
			      .target = saf_str__from("-a"), .event = saf_str__from("cpu-clock"),
			      .freq_hz = 999, .ncpus = 8, .start_realtime_ns = 1700000000000000000ULL,
			      .start_mono_ns = 5000000000ULL, .page_size = 4096 };
	struct saf_end end = { .end_mono_ns = m.start_mono_ns + g->intervals * 1000000000ULL,
			       .samples = g->samples, .lost = 7, .intervals = g->intervals };
	int err;

	for (unsigned i = 0; i < sizeof(bid); i++)
		bid[i] = 0xa0 + i;
	g->w = saf_writer__open_fd(fd, NULL);
	if (!g->w)
		return -errno;
	err = saf_writer__meta(g->w, &m);
	if (!err)
		err = write_symbols(g, bid);
	if (!err)
		err = write_procs(g, bid);
	if (!err)
		err = write_stacks(g);
	if (!err)
		err = write_intervals(g, m.start_mono_ns);
	if (!err && !g->no_end)
		err = saf_writer__finish(g->w, &end);
	saf_writer__free(g->w);
	return err;
}

int main(int argc, char **argv)
{
	struct gen g = { .procs = 4, .stacks = 1000, .depth = 16, .intervals = 10,
			 .samples = 1000000, .out = NULL, .host = "synthhost" };
	int opt, fd, err;

	while ((opt = getopt(argc, argv, "p:s:d:n:i:k:P:H:Eo:h")) != -1) {
		switch (opt) {
		case 'p': g.procs = strtoul(optarg, NULL, 0); break;
		case 's': g.stacks = strtoul(optarg, NULL, 0); break;
		case 'd': g.depth = strtoul(optarg, NULL, 0); break;
		case 'n': g.samples = strtoull(optarg, NULL, 0); break;
		case 'i': g.intervals = strtoul(optarg, NULL, 0); break;
		case 'k': g.kstacks = strtoul(optarg, NULL, 0); break;
		case 'P': g.phases = strtoul(optarg, NULL, 0); break;
		case 'H': g.host = optarg; break;
		case 'E': g.no_end = true; break;
		case 'o': g.out = optarg; break;
		default:
			fprintf(stderr, "usage: gen-synthetic [-p procs] [-s unique stacks] [-d depth] "
				"[-n samples] [-i intervals] [-k kernel stacks] [-P phases]\n"
				"                     [-H host] [-E (no END chunk)] -o FILE\n");
			return 2;
		}
	}
	if (!g.out || !g.procs || !g.stacks || g.depth < 3 || g.depth > SAF_MAX_FRAMES ||
	    !g.intervals || (g.phases && g.intervals % g.phases)) {
		fprintf(stderr, "gen-synthetic: need -o, procs >= 1, stacks >= 1, 3 <= depth <= %d, "
			"intervals a multiple of phases\n", SAF_MAX_FRAMES);
		return 2;
	}
	fd = open(g.out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(g.out);
		return 1;
	}
	err = generate(&g, fd);
	if (close(fd) && !err)
		err = -errno;
	if (err)
		fprintf(stderr, "gen-synthetic: %s\n", strerror(-err));
	return err ? 1 : 0;
}
