// SPDX-License-Identifier: MIT
/*
 * gen-synthetic.c - writes a valid .sa recording through the format writer
 * with a chosen number of processes, unique stacks, depth, samples and
 * intervals. Mappings are fake (no file on disk); their names come from
 * embedded USYM records, so the recording symbolizes with no binaries.
 * Every unique stack appears in every interval, so the file's size depends
 * on stacks and intervals, not on the number of samples. With -f, the
 * stacks and counts come from a folded file instead (see write_folded()).
 * With -I, N process images of a few of this host's binaries, each with a
 * stack copy to unwind, instead (gen-images.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen-images.h"
#include "saf.h"

#define NFUNCS 1024
#define FN_OFF(i) (0x1000 + (uint64_t)(i) * 0x100)
#define MAP_START 0x400000ULL
#define KBASE 0xffffffff81000000ULL

/* A folded line: comm;frame;...;leaf COUNT, frames as indexes in names[]. */
struct fline {
	char *comm;
	uint32_t tid, nframes;
	uint32_t *fn; /* root first */
	uint64_t count;
};

/* A folded file: distinct frame names (USYMs) and comms, then its lines. */
struct folded {
	char **names, **comms;
	size_t nnames, ncomms, cap_names, cap_comms;
	struct fline *lines;
	size_t nlines, cap_lines;
	void *name_tree, *comm_tree;
};

struct gen {
	unsigned procs, stacks, depth, intervals, kstacks, phases;
	unsigned long long samples, images;
	unsigned nbins;
	bool no_end, list;
	const char *out, *host, *folded_path;
	struct folded f;
	struct saf_writer *w;
};

static int add(struct gen *g, struct saf_record *r)
{
	int err = saf_writer__add(g->w, r);

	if (err)
		fprintf(stderr, "gen-synthetic: record %d: %s\n", r->kind, strerror(-err));
	return err;
}

static int add_cb(void *arg, struct saf_record *r)
{
	return add(arg, r);
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

/*
 * Folded input (-f): "comm;caller;...;leaf COUNT" per line. The comm is the
 * thread name of the line's COUNT records (one thread per distinct comm);
 * each distinct frame name becomes a function of the fake mapping with its
 * name, byte for byte, in a USYM record, so `sa-report` of the recording
 * gives the folded file back and every name goes through its symbolizer.
 */
struct fname {
	const char *name;
	uint32_t idx;
};

static int fname_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fname *)a)->name, ((const struct fname *)b)->name);
}

static void fname_free(void *p)
{
	free((void *)((struct fname *)p)->name);
	free(p);
}

static int grow(void *arrp, size_t *cap, size_t n, size_t elem)
{
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*(void **)arrp, (*cap ? *cap * 2 : 64) * elem);
	if (!p)
		return -ENOMEM;
	*(void **)arrp = p;
	*cap = *cap ? *cap * 2 : 64;
	return 0;
}

/* The index of @name in @tab (appended when new), or -ENOMEM. */
static long intern(void **tree, char ***tab, size_t *n, size_t *cap, const char *name)
{
	struct fname key = {name, 0}, *fn, **found;

	found = tfind(&key, tree, fname_cmp);
	if (found)
		return (*found)->idx;
	fn = malloc(sizeof(*fn));
	if (!fn || grow(tab, cap, *n, sizeof(**tab)) || !(fn->name = strdup(name))) {
		free(fn);
		return -ENOMEM;
	}
	fn->idx = *n;
	if (!tsearch(fn, tree, fname_cmp)) {
		fname_free(fn);
		return -ENOMEM;
	}
	(*tab)[(*n)++] = (char *)fn->name;
	return fn->idx;
}

/* Parse one line (newline removed) into @l: -EINVAL when it is not folded. */
static int parse_line(struct folded *f, char *line, struct fline *l)
{
	char *sp = strrchr(line, ' '), *end, *tok;
	uint32_t fn[SAF_MAX_FRAMES];
	long idx;

	if (!sp || sp == line)
		return -EINVAL;
	*sp = 0;
	errno = 0;
	l->count = strtoull(sp + 1, &end, 10);
	if (errno || *end || end == sp + 1 || !l->count)
		return -EINVAL;
	tok = strsep(&line, ";");
	if (!*tok || !line)
		return -EINVAL; /* a comm and at least one frame */
	idx = intern(&f->comm_tree, &f->comms, &f->ncomms, &f->cap_comms, tok);
	if (idx < 0)
		return idx;
	l->comm = f->comms[idx];
	l->tid = 1000 + idx;
	for (l->nframes = 0; (tok = strsep(&line, ";"));) {
		if (!*tok || l->nframes == SAF_MAX_FRAMES)
			return -EINVAL;
		idx = intern(&f->name_tree, &f->names, &f->nnames, &f->cap_names, tok);
		if (idx < 0)
			return idx;
		fn[l->nframes++] = idx;
	}
	l->fn = malloc(l->nframes * sizeof(*fn));
	if (!l->fn)
		return -ENOMEM;
	memcpy(l->fn, fn, l->nframes * sizeof(*fn));
	return 0;
}

/* Read -f's file into g->f; blank lines and '#' comments are skipped. */
static int read_folded(struct gen *g)
{
	FILE *fp = fopen(g->folded_path, "re");
	struct folded *f = &g->f;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	int err = 0;

	if (!fp)
		return -errno;
	g->samples = 0;
	while (!err && (len = getline(&line, &cap, fp)) >= 0) {
		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		if (!len || line[0] == '#')
			continue;
		err = grow(&f->lines, &f->cap_lines, f->nlines, sizeof(*f->lines));
		if (!err)
			err = parse_line(f, line, &f->lines[f->nlines]);
		if (!err)
			g->samples += f->lines[f->nlines++].count;
		else if (err == -EINVAL)
			fprintf(stderr, "gen-synthetic: %s:%zu: not 'comm;frame;... COUNT'\n",
				g->folded_path, lineno);
	}
	free(line);
	fclose(fp);
	if (!err && !f->nlines)
		err = -ENODATA;
	return err;
}

static void folded__free(struct folded *f)
{
	for (size_t i = 0; i < f->nlines; i++)
		free(f->lines[i].fn);
	free(f->lines);
	tdestroy(f->name_tree, fname_free);
	tdestroy(f->comm_tree, fname_free);
	free(f->names);
	free(f->comms);
}

/* The folded file's symbols, process, its mapping of nnames functions, stacks. */
static int write_folded_defs(struct gen *g, const uint8_t *bid)
{
	const struct folded *f = &g->f;
	struct saf_record r = {.kind = SAF_REC_SYMTAB};
	uint64_t ips[SAF_MAX_FRAMES];
	int err;

	r.symtab = (struct saf_symtab){{bid, 20}, saf_str__from("/synthetic/bin/folded"), 0};
	err = add(g, &r);
	for (size_t i = 0; !err && i < f->nnames; i++) {
		r = (struct saf_record){.kind = SAF_REC_USYM};
		r.usym = (struct saf_usym){FN_OFF(i), 0x100, saf_str__from(f->names[i])};
		err = add(g, &r);
	}
	if (err)
		return err;
	r = (struct saf_record){.kind = SAF_REC_PROC};
	r.proc = (struct saf_proc){
		1000, 0, 1, 0, saf_str__from(f->comms[0]), saf_str__from("/synthetic/bin/folded")};
	if ((err = add(g, &r)))
		return err;
	r = (struct saf_record){.kind = SAF_REC_MAP};
	r.map = (struct saf_map){.pid = 1000,
				 .start = MAP_START,
				 .end = MAP_START + FN_OFF(f->nnames),
				 .flags = SAF_MAP_EXEC,
				 .path = saf_str__from("/synthetic/bin/folded"),
				 .build_id = {bid, 20}};
	if ((err = add(g, &r)))
		return err;
	for (size_t j = 0; !err && j < f->nlines; j++) {
		const struct fline *l = &f->lines[j];

		/* leaf first; callers at a return address inside them */
		for (uint32_t k = 0; k < l->nframes; k++)
			ips[k] = MAP_START + FN_OFF(l->fn[l->nframes - 1 - k]) + (k ? 0x40 : 0x10);
		r = (struct saf_record){.kind = SAF_REC_STACK};
		r.stack = (struct saf_stack){j + 1, SAF_STACK_USER, l->nframes, ips};
		err = add(g, &r);
	}
	return err;
}

/* Each line's count spread over the intervals: COUNT/intervals, the rest first. */
static int write_folded_intervals(struct gen *g, uint64_t t0)
{
	const struct folded *f = &g->f;

	for (unsigned i = 0; i < g->intervals; i++) {
		struct saf_interval iv = {i, t0 + i * 1000000000ULL, t0 + (i + 1) * 1000000000ULL};
		struct saf_loss loss = {.ncounters = 1, .ids = {SAF_CTR_KEPT}};
		int err = saf_writer__interval(g->w, &iv);

		for (size_t j = 0; !err && j < f->nlines; j++) {
			const struct fline *l = &f->lines[j];
			uint64_t n = l->count / g->intervals + (i < l->count % g->intervals);
			struct saf_record r = {.kind = SAF_REC_COUNT};

			r.count = (struct saf_count){.pid = 1000,
						     .tid = l->tid,
						     .ustack = j + 1,
						     .count = n,
						     .comm = saf_str__from(l->comm)};
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
	if (!err && g->images) {
		struct gen_images gi = {g->images, g->nbins, g->intervals, m.start_mono_ns,
					g->list ? stdout : NULL, g->w, add_cb, g};

		end.lost = 0;
		end.samples = g->images;
		err = gen_images__write(&gi);
	} else if (!err && g->folded_path) {
		end.lost = 0;
		err = write_folded_defs(g, bid);
		if (!err)
			err = write_folded_intervals(g, m.start_mono_ns);
	} else if (!err) {
		err = write_symbols(g, bid);
		if (!err)
			err = write_procs(g, bid);
		if (!err)
			err = write_stacks(g);
		if (!err)
			err = write_intervals(g, m.start_mono_ns);
	}
	if (!err && !g->no_end)
		err = saf_writer__finish(g->w, &end);
	saf_writer__free(g->w);
	return err;
}

int main(int argc, char **argv)
{
	struct gen g = { .procs = 4, .stacks = 1000, .depth = 16, .intervals = 10,
			 .samples = 1000000, .nbins = 30, .out = NULL, .host = "synthhost" };
	int opt, fd, err;

	while ((opt = getopt(argc, argv, "p:s:d:n:i:k:P:H:Ef:I:b:lo:h")) != -1) {
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
		case 'f': g.folded_path = optarg; break;
		case 'I': g.images = strtoull(optarg, NULL, 0); break;
		case 'b': g.nbins = strtoul(optarg, NULL, 0); break;
		case 'l': g.list = true; break;
		case 'o': g.out = optarg; break;
		default:
			fprintf(stderr, "usage: gen-synthetic [-p procs] [-s unique stacks] [-d depth] "
				"[-n samples] [-i intervals] [-k kernel stacks] [-P phases]\n"
				"                     [-H host] [-E (no END chunk)] -o FILE\n"
				"       gen-synthetic -f FOLDED [-i intervals] [-H host] [-E] -o FILE\n"
				"       gen-synthetic -I IMAGES [-b binaries] [-l (list them)] [-i intervals] -o FILE\n");
			return 2;
		}
	}
	if (!g.out || !g.procs || !g.stacks || g.depth < 3 || g.depth > SAF_MAX_FRAMES ||
	    !g.intervals || (g.phases && g.intervals % g.phases)) {
		fprintf(stderr, "gen-synthetic: need -o, procs >= 1, stacks >= 1, 3 <= depth <= %d, "
			"intervals a multiple of phases\n", SAF_MAX_FRAMES);
		return 2;
	}
	if (g.folded_path && (err = read_folded(&g))) {
		if (err != -EINVAL)
			fprintf(stderr, "gen-synthetic: %s: %s\n", g.folded_path, strerror(-err));
		folded__free(&g.f);
		return 1;
	}
	fd = open(g.out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(g.out);
		folded__free(&g.f);
		return 1;
	}
	err = generate(&g, fd);
	if (close(fd) && !err)
		err = -errno;
	if (err)
		fprintf(stderr, "gen-synthetic: %s\n", strerror(-err));
	folded__free(&g.f);
	return err ? 1 : 0;
}
