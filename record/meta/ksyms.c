// SPDX-License-Identifier: MIT
/*
 * ksyms.c - /proc/kallsyms as a sorted table of text symbols. Names stay in
 * the file's text, read whole (offsets, not pointers); a byte per
 * symbol says whether its KSYM record was written, so each symbol is
 * carried at most once per file and only when a stack needs it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ksyms.h"
#include "grow.h"
#include "lowerbound.h"

struct ksym {
	uint64_t addr;
	uint32_t name;	 /* offset in pool */
	uint32_t module; /* offset in pool; 0 is "" */
};

struct rec_ksyms {
	struct ksym *syms;
	size_t nsyms, cap;
	char *pool; /* the file, names and modules cut out in place */
	size_t pool_len;
	uint8_t *emitted;
	size_t nemitted;
};

/* The whole file, after one NUL byte (offset 0: the empty module name). */
static int read_all(int fd, char **out, size_t *len)
{
	size_t cap = 8 << 20, n = 1;
	char *buf = malloc(cap), *p;
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	buf[0] = '\0';
	for (;;) {
		if (cap - n < 65536) {
			p = cap < (size_t)UINT32_MAX ? realloc(buf, cap * 2) : NULL;
			if (!p) {
				free(buf);
				return cap < (size_t)UINT32_MAX ? -ENOMEM : -EFBIG;
			}
			buf = p;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return -errno;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * "ffffffff81000000 T _text" or "ffffffffc0a01000 t foo\t[mod]", ending at
 * @nl (its '\n' or the final NUL): a text symbol's name and module are
 * cut out in place with NULs. @return 1 for a text symbol, else 0.
 */
static int parse_line(char *pool, char *line, char *nl, struct ksym *s)
{
	char *p, *name, *tab, *mod, *close;
	uint64_t addr = 0;
	int v, digits = 0;

	while (digits < 16 && (v = hexval(line[digits])) >= 0) {
		addr = addr << 4 | (uint64_t)v;
		digits++;
	}
	p = line + digits;
	if (!digits || nl - p < 4 || p[0] != ' ' || p[2] != ' ')
		return 0;
	if (p[1] != 't' && p[1] != 'T' && p[1] != 'w' && p[1] != 'W')
		return 0;
	name = p + 3;
	*nl = '\0';
	s->addr = addr;
	s->module = 0;
	tab = memchr(name, '\t', nl - name);
	if (tab) {
		*tab = '\0';
		if (tab[1] == '[') {
			mod = tab + 2;
			close = memchr(mod, ']', nl - mod);
			if (close)
				*close = '\0';
			s->module = (uint32_t)(mod - pool);
		}
	}
	s->name = (uint32_t)(name - pool);
	return 1;
}

static int parse_all(struct rec_ksyms *ks)
{
	char *line = ks->pool + 1, *end = ks->pool + ks->pool_len, *nl;
	struct ksym *s;

	while (line < end) {
		nl = memchr(line, '\n', end - line);
		if (!nl)
			nl = end;
		if (ks->nsyms == ks->cap) {
			size_t cap = ks->cap ? ks->cap * 2 : 131072;

			s = realloc(ks->syms, cap * sizeof(*s));
			if (!s)
				return -ENOMEM;
			ks->syms = s;
			ks->cap = cap;
		}
		ks->nsyms += parse_line(ks->pool, line, nl, &ks->syms[ks->nsyms]);
		line = nl + 1;
	}
	return 0;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	/* Keep a stable, deterministic pick among aliases: vmlinux first. */
	return SAC_CMP(x->addr, y->addr) ?: SAC_CMP(x->module, y->module) ?:
	       SAC_CMP(x->name, y->name);
}

/*
 * kallsyms lists the kernel's own symbols in address order; modules, BPF
 * programs and trampolines follow. Only the part from the first descent on
 * is sorted, then merged with the sorted head: a fifth of the time of
 * sorting all 120-200k symbols.
 */
static int sort_syms(struct rec_ksyms *ks)
{
	size_t k = 1, i, j, o;
	struct ksym *tmp;

	while (k < ks->nsyms && cmp_ksym(&ks->syms[k - 1], &ks->syms[k]) <= 0)
		k++;
	if (k >= ks->nsyms)
		return 0;
	qsort(ks->syms + k, ks->nsyms - k, sizeof(*ks->syms), cmp_ksym);
	if (cmp_ksym(&ks->syms[k - 1], &ks->syms[k]) <= 0)
		return 0;
	tmp = malloc(k * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, ks->syms, k * sizeof(*tmp));
	for (i = 0, j = k, o = 0; i < k; o++) {
		if (j < ks->nsyms && cmp_ksym(&ks->syms[j], &tmp[i]) < 0)
			ks->syms[o] = ks->syms[j++];
		else
			ks->syms[o] = tmp[i++];
	}
	free(tmp);
	return 0;
}

struct rec_ksyms *rec_ksyms__load(const char *path)
{
	struct rec_ksyms *ks = NULL;
	int fd = -1, err;

	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return NULL;
	fd = open(path ? path : "/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	err = read_all(fd, &ks->pool, &ks->pool_len);
	if (!err)
		err = parse_all(ks);
	if (err)
		goto cleanup;
	err = -ENOENT;
	if (!ks->nsyms)
		goto cleanup;
	err = sort_syms(ks);
	if (err)
		goto cleanup;
	err = -EPERM;
	if (ks->syms[ks->nsyms - 1].addr == 0)
		goto cleanup;
	err = -ENOMEM;
	ks->emitted = calloc(ks->nsyms, 1);
	if (!ks->emitted)
		goto cleanup;
	err = 0;
cleanup:
	if (fd >= 0)
		close(fd);
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
	size_t lo = SAC_FIRST_ABOVE(ks->syms, ks->nsyms, addr, addr);

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
	SAC_FREE_ALL(ks->emitted, ks->pool, ks->syms, ks);
}
