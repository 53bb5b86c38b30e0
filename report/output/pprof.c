// SPDX-License-Identifier: MIT
/*
 * pprof.c - sa-report --pprof: the profile as pprof's profile.proto
 * (github.com/google/pprof, proto/profile.proto), gzip-compressed, encoded
 * with pbenc.c. One location per frame with its inlined callees as extra
 * lines, mappings from the profile's module table, labels from the root.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "pbenc.h"

/* profile.proto field numbers */
enum {
	P_SAMPLE_TYPE = 1,
	P_SAMPLE,
	P_MAPPING,
	P_LOCATION,
	P_FUNCTION,
	P_STRING_TABLE,
	P_DURATION = 10,
	P_PERIOD_TYPE,
	P_PERIOD,
	P_COMMENT,
	P_DEFAULT_SAMPLE_TYPE
};
enum { S_LOCATION_ID = 1, S_VALUE, S_LABEL };
enum { L_KEY = 1, L_STR, L_NUM };
enum {
	M_ID = 1,
	M_FILENAME = 5,
	M_BUILD_ID,
	M_HAS_FUNCTIONS,
	M_HAS_FILENAMES,
	M_HAS_LINE_NUMBERS,
	M_HAS_INLINE_FRAMES
};
enum { LOC_ID = 1, LOC_MAPPING_ID, LOC_ADDRESS, LOC_LINE };
enum { LN_FUNCTION_ID = 1, LN_LINE };
enum { F_ID = 1, F_NAME, F_SYSTEM_NAME, F_FILENAME };

#define MAX_LINES 256 /* inline depth kept per location */

/* uint64 -> uint32, open addressing; keys are stored + 1 so 0 marks a free slot. */
struct u64map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
};

struct pp {
	const struct rpt_profile *p;
	struct rpt_profile *strs; /* interner for strings and location keys */
	struct u64map str_ids, func_ids, loc_ids;
	struct rpt_pb strtab, samples, locs, funcs, sub, sub2;
	uint32_t nstr, nfunc, nloc;
	uint64_t *stack_locs; /* location ids of the current stack, root first */
	size_t stack_locs_cap;
	bool any_lines, any_inline;
	size_t main_mod; /* module table index given mapping id 1 */
};

static int map_grow(struct u64map *m)
{
	struct u64map g = {.cap = m->cap ? m->cap * 2 : 256};

	g.keys = calloc(g.cap, sizeof(*g.keys));
	g.vals = malloc(g.cap * sizeof(*g.vals));
	if (!g.keys || !g.vals) {
		free(g.keys);
		free(g.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t s = (m->keys[i] * 0x9e3779b97f4a7c15ULL >> 20) & (g.cap - 1);

		if (!m->keys[i])
			continue;
		while (g.keys[s])
			s = (s + 1) & (g.cap - 1);
		g.keys[s] = m->keys[i];
		g.vals[s] = m->vals[i];
	}
	g.n = m->n;
	free(m->keys);
	free(m->vals);
	*m = g;
	return 0;
}

/* The value of @key, or a new one @next when absent (*@added says which). */
static int64_t map_get(struct u64map *m, uint64_t key, uint32_t next, bool *added)
{
	size_t s;

	*added = false;
	if ((m->n + 1) * 2 > m->cap && map_grow(m))
		return -ENOMEM;
	key++;
	s = (key * 0x9e3779b97f4a7c15ULL >> 20) & (m->cap - 1);
	while (m->keys[s] && m->keys[s] != key)
		s = (s + 1) & (m->cap - 1);
	if (!m->keys[s]) {
		m->keys[s] = key;
		m->vals[s] = next;
		m->n++;
		*added = true;
	}
	return m->vals[s];
}

/* String table index of @s[0..n), adding it when new. */
static int64_t str_id(struct pp *w, const char *s, size_t n)
{
	int64_t off = rpt_profile__intern(w->strs, s, n);
	bool added;
	int64_t id;

	if (off < 0)
		return off;
	id = map_get(&w->str_ids, (uint64_t)off, w->nstr, &added);
	if (added) {
		rpt_pb__bytes(&w->strtab, P_STRING_TABLE, s, strnlen(s, n));
		w->nstr++;
	}
	return id;
}

/* Function id (1-based) of a frame named @name ("fn file:line" or "fn"). */
static int64_t func_id(struct pp *w, const char *name, long *line)
{
	struct rpt_name_parts np;
	int64_t fn, file, id;
	bool added;

	rpt_name__split(name, &np);
	fn = str_id(w, name, np.fn_len);
	file = np.file ? str_id(w, np.file, np.file_len) : 0;
	if (fn < 0 || file < 0)
		return -ENOMEM;
	*line = np.line;
	w->any_lines |= np.file != NULL;
	id = map_get(&w->func_ids, (uint64_t)fn << 32 | (uint64_t)file, w->nfunc + 1, &added);
	if (id > 0 && added) {
		w->nfunc++;
		rpt_pb__uint(&w->sub, F_ID, (uint64_t)id);
		rpt_pb__uint(&w->sub, F_NAME, (uint64_t)fn);
		rpt_pb__uint(&w->sub, F_SYSTEM_NAME, (uint64_t)fn);
		rpt_pb__uint(&w->sub, F_FILENAME, (uint64_t)file);
		rpt_pb__msg(&w->funcs, P_FUNCTION, &w->sub);
	}
	return id;
}

/* Mapping id of module table entry @i: the main one is 1 (pprof's "File:"),
 * the others follow in table order. */
static uint64_t mapping_rank(const struct pp *w, size_t i)
{
	return i == w->main_mod ? 1 : i < w->main_mod ? i + 2 : i + 1;
}

/* Mapping id of a frame's module, or 0. */
static uint64_t mapping_id(const struct pp *w, uint32_t module)
{
	const struct rpt_module *m = module ? rpt_profile__module(w->p, module) : NULL;

	return m ? mapping_rank(w, (size_t)(m - w->p->modules)) : 0;
}

/* A shared library's path ("libc.so.6", "libfoo.so"), not a program's. */
static bool is_library(const char *path)
{
	const char *base = strrchr(path, '/'), *so;

	base = base ? base + 1 : path;
	so = strstr(base, ".so");
	return path[0] == '[' || (so && (so[3] == '\0' || so[3] == '.'));
}

/*
 * The sampled program: of the binaries where user code was when sampled
 * (each stack's deepest frame in a file), programs before libraries, then
 * the most samples. Not the first binary met: that was libc.so.6, whose
 * __libc_start_call_main is under every stack.
 */
static size_t main_module(const struct rpt_profile *p)
{
	uint64_t *n = p->nmodules ? calloc(p->nmodules, sizeof(*n)) : NULL;
	const struct rpt_module *m = NULL;
	size_t best = 0;

	for (size_t i = 0; n && i < p->nstacks; i++) {
		const struct rpt_frame *f = rpt_profile__stack_frames(p, &p->stacks[i]);

		for (uint32_t j = p->stacks[i].nframes; j-- > 0;) {
			if (!f[j].module || rpt_profile__name(p, f[j].module)[0] == '[')
				continue;
			if (!m || m->path != f[j].module)
				m = rpt_profile__module(p, f[j].module);
			if (m)
				n[m - p->modules] += p->stacks[i].count;
			break;
		}
	}
	for (size_t i = 1; n && i < p->nmodules; i++) {
		bool lib = is_library(rpt_profile__name(p, p->modules[i].path));
		bool best_lib = is_library(rpt_profile__name(p, p->modules[best].path));

		if ((!lib && best_lib) || (lib == best_lib && n[i] > n[best]))
			best = i;
	}
	free(n);
	return best;
}

/*
 * Location id of frames @f[0..n): f[0] a function, f[1..n) the frames
 * inlined into it, outermost first. Lines go innermost first, as pprof
 * wants; identical line lists in one mapping share a location.
 */
static int64_t loc_id(struct pp *w, const struct rpt_frame *f, uint32_t n)
{
	uint64_t mapping = mapping_id(w, f[0].module);
	uint64_t funcs[MAX_LINES], lines[MAX_LINES];
	char key[MAX_LINES * 24 + 24];
	size_t klen;
	int64_t off, id;
	bool added;

	n = n > MAX_LINES ? MAX_LINES : n;
	klen = (size_t)snprintf(key, sizeof(key), "%llu", (unsigned long long)mapping);
	for (uint32_t i = 0; i < n; i++) {
		long line;
		int64_t fid = func_id(w, rpt_profile__name(w->p, f[n - 1 - i].name), &line);

		if (fid < 0)
			return fid;
		funcs[i] = (uint64_t)fid;
		lines[i] = (uint64_t)line;
		klen += (size_t)snprintf(key + klen, sizeof(key) - klen, "|%llu:%llu",
					 (unsigned long long)fid, (unsigned long long)line);
	}
	off = rpt_profile__intern(w->strs, key, klen);
	if (off < 0)
		return off;
	id = map_get(&w->loc_ids, (uint64_t)off, w->nloc + 1, &added);
	if (id <= 0 || !added)
		return id;
	w->nloc++;
	rpt_pb__uint(&w->sub, LOC_ID, (uint64_t)id);
	rpt_pb__uint(&w->sub, LOC_MAPPING_ID, mapping);
	for (uint32_t i = 0; i < n; i++) {
		rpt_pb__uint(&w->sub2, LN_FUNCTION_ID, funcs[i]);
		rpt_pb__uint(&w->sub2, LN_LINE, lines[i]);
		rpt_pb__msg(&w->sub, LOC_LINE, &w->sub2);
	}
	rpt_pb__msg(&w->locs, P_LOCATION, &w->sub);
	return id;
}

static void label(struct pp *w, struct rpt_pb *sample, int64_t key, int64_t str, uint64_t num)
{
	rpt_pb__uint(&w->sub2, L_KEY, (uint64_t)key);
	rpt_pb__uint(&w->sub2, L_STR, (uint64_t)str);
	rpt_pb__uint(&w->sub2, L_NUM, num);
	rpt_pb__msg(sample, S_LABEL, &w->sub2);
}

/* Labels comm, pid and tid from a root named "comm", "comm-PID" or "comm-PID/TID". */
static int root_labels(struct pp *w, const char *root, const struct rpt_root_fmt *fmt)
{
	unsigned long pid = 0, tid = 0;
	size_t comm_len = strlen(root);
	const char *dash = strrchr(root, '-');
	int64_t k_comm, k_pid, k_tid, v_comm;
	int used = 0;

	if (fmt->has_pid && dash && dash[1] >= '0' && dash[1] <= '9') {
		char *end;

		pid = strtoul(dash + 1, &end, 10);
		if (fmt->has_tid && *end == '/' && end[1] >= '0' && end[1] <= '9')
			tid = strtoul(end + 1, &end, 10);
		if (!*end && (!fmt->has_tid || tid)) {
			comm_len = (size_t)(dash - root);
			used = fmt->has_tid ? 2 : 1;
		}
	}
	k_comm = str_id(w, "comm", 4);
	v_comm = str_id(w, root, comm_len);
	k_pid = str_id(w, "pid", 3);
	k_tid = str_id(w, "tid", 3);
	if (k_comm < 0 || v_comm < 0 || k_pid < 0 || k_tid < 0)
		return -ENOMEM;
	if (comm_len)
		label(w, &w->sub, k_comm, v_comm, 0);
	if (used >= 1)
		label(w, &w->sub, k_pid, 0, pid);
	if (used >= 2)
		label(w, &w->sub, k_tid, 0, tid);
	return 0;
}

/* One sample: the stack's locations leaf first, its two values, its labels. */
static int write_stack(struct pp *w, const struct rpt_stack *s, uint64_t period,
		       const struct rpt_root_fmt *fmt)
{
	const struct rpt_frame *f = rpt_profile__stack_frames(w->p, s);
	size_t n = 0;
	int err;

	if (s->nframes > w->stack_locs_cap) {
		void *nb = realloc(w->stack_locs, s->nframes * sizeof(*w->stack_locs));

		if (!nb)
			return -ENOMEM;
		w->stack_locs = nb;
		w->stack_locs_cap = s->nframes;
	}
	for (uint32_t i = 1, j; i < s->nframes; i = j) {
		int64_t id;

		for (j = i + 1; j < s->nframes && f[j].kind == RPT_FRAME_INLINE; j++)
			w->any_inline = true;
		id = loc_id(w, f + i, j - i);
		if (id < 0)
			return (int)id;
		w->stack_locs[n++] = (uint64_t)id;
	}
	for (size_t i = n; i-- > 0;)
		rpt_pb__varint(&w->sub2, w->stack_locs[i]);
	rpt_pb__msg(&w->sub, S_LOCATION_ID, &w->sub2);
	rpt_pb__varint(&w->sub2, s->count);
	rpt_pb__varint(&w->sub2, s->count * period);
	rpt_pb__msg(&w->sub, S_VALUE, &w->sub2);
	err = s->nframes ? root_labels(w, rpt_profile__name(w->p, f[0].name), fmt) : 0;
	rpt_pb__msg(&w->samples, P_SAMPLE, &w->sub);
	return err;
}

static void value_type(struct pp *w, struct rpt_pb *out, uint32_t field, int64_t type, int64_t unit)
{
	rpt_pb__uint(&w->sub2, 1, (uint64_t)type);
	rpt_pb__uint(&w->sub2, 2, (uint64_t)unit);
	rpt_pb__msg(out, field, &w->sub2);
}

/* Everything but samples, locations and functions, appended after them to @b. */
static int write_tail(struct pp *w, struct rpt_pb *b, uint64_t period)
{
	const struct rpt_profile *p = w->p;
	/* --off-cpu and --wall count microseconds: (off_cpu|wall, microseconds|nanoseconds) */
	const char *t0 = p->meta.value == RPT_VALUE_OFF_CPU ? "off_cpu"
			 : p->meta.value == RPT_VALUE_WALL  ? "wall"
							    : "samples";
	const char *u0 = rpt_value__is_time(p->meta.value) ? "microseconds" : "count";
	const char *t1 = rpt_value__is_time(p->meta.value) ? t0 : "cpu";
	int64_t samples = str_id(w, t0, strlen(t0)), count = str_id(w, u0, strlen(u0));
	int64_t cpu = str_id(w, t1, strlen(t1)), ns = str_id(w, "nanoseconds", 11);

	if (samples < 0 || count < 0 || cpu < 0 || ns < 0)
		return -ENOMEM;
	value_type(w, b, P_SAMPLE_TYPE, samples, count);
	value_type(w, b, P_SAMPLE_TYPE, cpu, ns);
	for (size_t k = 0; k < p->nmodules; k++) {
		size_t i = k == 0 ? w->main_mod : k <= w->main_mod ? k - 1 : k;
		const char *path = rpt_profile__name(p, p->modules[i].path);
		const char *bid = rpt_profile__name(p, p->modules[i].build_id);
		int64_t ps = str_id(w, path, strlen(path)), bs = str_id(w, bid, strlen(bid));

		if (ps < 0 || bs < 0)
			return -ENOMEM;
		rpt_pb__uint(&w->sub, M_ID, mapping_rank(w, i));
		rpt_pb__uint(&w->sub, M_FILENAME, (uint64_t)ps);
		rpt_pb__uint(&w->sub, M_BUILD_ID, (uint64_t)bs);
		rpt_pb__uint(&w->sub, M_HAS_FUNCTIONS, 1);
		rpt_pb__uint(&w->sub, M_HAS_FILENAMES, w->any_lines);
		rpt_pb__uint(&w->sub, M_HAS_LINE_NUMBERS, w->any_lines);
		rpt_pb__uint(&w->sub, M_HAS_INLINE_FRAMES, w->any_inline);
		rpt_pb__msg(b, P_MAPPING, &w->sub);
	}
	if (p->meta.host) {
		const char *h = rpt_profile__name(p, p->meta.host);
		int64_t c = str_id(w, h, strlen(h));

		if (c < 0)
			return -ENOMEM;
		rpt_pb__uint(b, P_COMMENT, (uint64_t)c);
	}
	rpt_pb__uint(b, P_DURATION, p->meta.duration_ns);
	value_type(w, b, P_PERIOD_TYPE, cpu, ns);
	rpt_pb__uint(b, P_PERIOD, period);
	/* text inputs give no frequency: their cpu values are all 0 */
	rpt_pb__uint(b, P_DEFAULT_SAMPLE_TYPE, (uint64_t)(period ? cpu : samples));
	return 0;
}

static void pp_fini(struct pp *w)
{
	struct rpt_pb *bufs[] = {&w->strtab, &w->samples, &w->locs, &w->funcs, &w->sub, &w->sub2};
	struct u64map *maps[] = {&w->str_ids, &w->func_ids, &w->loc_ids};

	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		rpt_pb__fini(bufs[i]);
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		free(maps[i]->keys);
		free(maps[i]->vals);
	}
	rpt_profile__free(w->strs);
	free(w->stack_locs);
}

/* Append @src's encoded fields to @b. */
static void append(struct rpt_pb *b, const struct rpt_pb *src)
{
	if (src->err && !b->err)
		b->err = src->err;
	rpt_pb__raw(b, src->buf, src->len);
}

int rpt_pprof__write(const struct rpt_profile *p, FILE *out, const struct rpt_pprof_opts *o)
{
	static const struct rpt_pprof_opts defaults;
	uint64_t period = p->meta.freq_hz ? 1000000000ULL / p->meta.freq_hz : 0;
	struct pp w = {.p = p};

	if (rpt_value__is_time(p->meta.value))
		period = 1000; /* counts are microseconds */
	struct rpt_pb b = {0};
	bool added;
	int err = -ENOMEM;

	o = o ? o : &defaults;
	w.main_mod = main_module(p);
	w.strs = rpt_profile__new();
	if (!w.strs)
		goto cleanup;
	/* string_table[0] must be "" (the interner's offset 0) */
	rpt_pb__bytes(&w.strtab, P_STRING_TABLE, "", 0);
	w.nstr = 1;
	if (map_get(&w.str_ids, 0, 0, &added) < 0)
		goto cleanup;
	for (size_t i = 0; i < p->nstacks; i++) {
		err = write_stack(&w, &p->stacks[i], period, &o->root);
		if (err)
			goto cleanup;
	}
	err = write_tail(&w, &b, period);
	if (err)
		goto cleanup;
	/* repeated fields may come in any order between fields: concatenate */
	append(&b, &w.samples);
	append(&b, &w.locs);
	append(&b, &w.funcs);
	append(&b, &w.strtab);
	err = b.err ? b.err : rpt_pb__gzip(b.buf, b.len, out, o->level);
cleanup:
	rpt_pb__fini(&b);
	pp_fini(&w);
	return err;
}
