// SPDX-License-Identifier: MIT
/*
 * ksyms.c - /proc/kallsyms as a sorted table of text symbols. Names live in
 * one string pool (offsets, not pointers, so the pool can grow); a byte per
 * symbol says whether its KSYM record was written, so each symbol is
 * carried at most once per file and only when a stack needs it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "grow.h"
#include "ksyms.h"

struct ksym {
	uint64_t addr;
	uint32_t name;	 /* offset in pool */
	uint32_t module; /* offset in pool; 0 is "" */
};

struct rec_ksyms {
	struct ksym *syms;
	size_t nsyms, cap;
	char *pool;
	size_t pool_len, pool_cap;
	uint8_t *emitted;
	size_t nemitted;
};

static int pool_add(struct rec_ksyms *ks, const char *s, size_t len, uint32_t *off)
{
	if (SAC_GROW(ks->pool, ks->pool_cap, ks->pool_len + len + 1, 1 << 20))
		return -ENOMEM;
	memcpy(ks->pool + ks->pool_len, s, len);
	ks->pool[ks->pool_len + len] = '\0';
	*off = ks->pool_len;
	ks->pool_len += len + 1;
	return 0;
}

/* Module names repeat on consecutive lines: reuse the last one. */
static int module_off(struct rec_ksyms *ks, const char *mod, size_t len, uint32_t *off)
{
	static const uint32_t none;

	if (!len) {
		*off = none;
		return 0;
	}
	if (ks->nsyms && ks->syms[ks->nsyms - 1].module) {
		const char *last = ks->pool + ks->syms[ks->nsyms - 1].module;

		if (strlen(last) == len && !memcmp(last, mod, len)) {
			*off = ks->syms[ks->nsyms - 1].module;
			return 0;
		}
	}
	return pool_add(ks, mod, len, off);
}

/* "ffffffff81000000 T _text" or "ffffffffc0a01000 t foo\t[mod]" */
static int parse_line(struct rec_ksyms *ks, char *line)
{
	char *end, *name, *mod, *p;
	size_t mod_len = 0;
	uint64_t addr;
	struct ksym *s;
	char type;
	int err;

	addr = strtoull(line, &end, 16);
	if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
		return 0;
	type = end[1];
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	name = end + 3;
	name[strcspn(name, "\n")] = '\0';
	mod = strchr(name, '\t');
	if (mod) {
		*mod++ = '\0';
		if (*mod == '[') {
			mod++;
			p = strchr(mod, ']');
			mod_len = p ? (size_t)(p - mod) : strlen(mod);
		}
	}
	if (SAC_GROW(ks->syms, ks->cap, ks->nsyms + 1, 65536))
		return -ENOMEM;
	s = &ks->syms[ks->nsyms];
	s->addr = addr;
	err = module_off(ks, mod, mod_len, &s->module);
	if (!err)
		err = pool_add(ks, name, strlen(name), &s->name);
	if (err)
		return err;
	ks->nsyms++;
	return 0;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Keep a stable, deterministic pick among aliases: vmlinux first. */
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	return x->name < y->name ? -1 : (x->name > y->name);
}

static int read_file(struct rec_ksyms *ks, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	int err = 0;

	while (getline(&line, &cap, f) > 0) {
		err = parse_line(ks, line);
		if (err)
			break;
	}
	if (!err && ferror(f))
		err = -EIO;
	free(line);
	return err;
}

struct rec_ksyms *rec_ksyms__load(const char *path)
{
	struct rec_ksyms *ks = NULL;
	FILE *f = NULL;
	uint32_t empty;
	int err;

	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return NULL;
	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f) {
		err = -errno;
		goto cleanup;
	}
	/* Offset 0 of the pool is the empty module name. */
	err = pool_add(ks, "", 0, &empty);
	if (!err)
		err = read_file(ks, f);
	if (err)
		goto cleanup;
	err = -ENOENT;
	if (!ks->nsyms)
		goto cleanup;
	qsort(ks->syms, ks->nsyms, sizeof(*ks->syms), cmp_ksym);
	err = -EPERM;
	if (ks->syms[ks->nsyms - 1].addr == 0)
		goto cleanup;
	err = -ENOMEM;
	ks->emitted = calloc(ks->nsyms, 1);
	if (!ks->emitted)
		goto cleanup;
	err = 0;
cleanup:
	if (f)
		fclose(f);
	if (err) {
		rec_ksyms__free(ks);
		errno = -err;
		return NULL;
	}
	return ks;
}

/* Index of the first symbol at the highest address <= addr, or -1. */
static long lookup(const struct rec_ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	lo--;
	while (lo > 0 && ks->syms[lo - 1].addr == ks->syms[lo].addr)
		lo--;
	return (long)lo;
}

static int emit_one(struct rec_ksyms *ks, uint64_t addr, const struct rec_sink *sink)
{
	struct saf_record rec = {.kind = SAF_REC_KSYM};
	long i = lookup(ks, addr);
	int err;

	if (i < 0 || ks->emitted[i])
		return 0;
	rec.ksym.addr = ks->syms[i].addr;
	rec.ksym.name = rec_str(ks->pool + ks->syms[i].name);
	rec.ksym.module = rec_str(ks->pool + ks->syms[i].module);
	err = rec_sink__emit(sink, &rec);
	if (err)
		return err;
	ks->emitted[i] = 1;
	ks->nemitted++;
	return 1;
}

int rec_ksyms__note(struct rec_ksyms *ks, const uint64_t *ips, size_t n,
		    const struct rec_sink *sink)
{
	int total = 0, err;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!ips[i])
			continue;
		err = emit_one(ks, ips[i], sink);
		if (err < 0)
			return err;
		total += err;
		err = emit_one(ks, ips[i] - 1, sink);
		if (err < 0)
			return err;
		total += err;
	}
	return total;
}

size_t rec_ksyms__count(const struct rec_ksyms *ks)
{
	return ks->nsyms;
}

/** rec_ksyms__new_file() - forget which symbols were emitted (--rotate). */
void rec_ksyms__new_file(struct rec_ksyms *ks)
{
	memset(ks->emitted, 0, ks->nsyms);
}

size_t rec_ksyms__emitted(const struct rec_ksyms *ks)
{
	return ks->nemitted;
}

void rec_ksyms__free(struct rec_ksyms *ks)
{
	if (!ks)
		return;
	free(ks->emitted);
	free(ks->pool);
	free(ks->syms);
	free(ks);
}
