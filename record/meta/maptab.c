// SPDX-License-Identifier: MIT
/*
 * maptab.c - executable mappings per process image (pid, gen). perf has no
 * munmap record, so an image's mappings only accumulate; a sampled address
 * is credited to every mapping of the image that covers it (over-embedding
 * a symbol is harmless, a missing one is not). Build ids the kernel did not
 * give are read from the file and cached by (dev, inode).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "clock.h"
#include "elfread.h"
#include "grow.h"
#include "htab.h"
#include "maptab.h"
#include "maptab_int.h"
#include "vdso.h"
#include "safeopen.h"
#include "strclip.h"

void rec_maptab__on_map(struct rec_maptab *mt, rec_maptab_map_fn fn, void *arg)
{
	mt->on_map = fn;
	mt->on_map_arg = arg;
}

void rec_maptab__on_map_want(struct rec_maptab *mt, rec_maptab_want_fn want)
{
	mt->on_map_want = want;
}

/*
 * Mixed both ways: the product alone has the pid only in bits 32 and up,
 * so that below 2^15 slots every image of generation 0 shared one probe
 * chain (a tenth of the recorder's CPU on a compile loop).
 */
static size_t key_hash(uint32_t pid, uint32_t gen)
{
	uint64_t k = ((uint64_t)pid << 32 | gen) * 0x9e3779b97f4a7c15ull;

	k ^= k >> 29;
	k *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(k ^ (k >> 32));
}

static long find_img(const struct rec_maptab *mt, uint32_t pid, uint32_t gen)
{
	size_t i, mask = mt->hash_cap - 1;

	if (!mt->hash_cap)
		return -1;
	for (i = key_hash(pid, gen) & mask; mt->hash[i] >= 0; i = (i + 1) & mask) {
		const struct image *im = &mt->imgs[mt->hash[i]];

		if (im->pid == pid && im->gen == gen)
			return mt->hash[i];
	}
	return -1;
}

int maptab_rehash(struct rec_maptab *mt, size_t cap)
{
	int *h = malloc(cap * sizeof(*h));
	size_t i, j;

	if (!h)
		return -ENOMEM;
	memset(h, 0xff, cap * sizeof(*h));
	for (i = 0; i < mt->nimgs; i++) {
		j = key_hash(mt->imgs[i].pid, mt->imgs[i].gen) & (cap - 1);
		while (h[j] >= 0)
			j = (j + 1) & (cap - 1);
		h[j] = (int)i;
	}
	free(mt->hash);
	mt->hash = h;
	mt->hash_cap = cap;
	return 0;
}

long maptab_find(const struct rec_maptab *mt, uint32_t pid, uint32_t gen)
{
	return find_img(mt, pid, gen);
}

/* The image (pid, gen), created empty if absent; NULL on -ENOMEM. */
static struct image *get_img(struct rec_maptab *mt, uint32_t pid, uint32_t gen)
{
	long i = find_img(mt, pid, gen);
	struct image *im;

	if (i >= 0)
		return &mt->imgs[i];
	if (SAC_GROW(mt->imgs, mt->cap, mt->nimgs + 1, 256))
		return NULL;
	im = &mt->imgs[mt->nimgs++];
	memset(im, 0, sizeof(*im));
	im->pid = pid;
	im->gen = gen;
	im->seen = mt->files;
	if (mt->nimgs * 2 > mt->hash_cap) {
		if (maptab_rehash(mt, mt->hash_cap ? mt->hash_cap * 2 : 512)) {
			mt->nimgs--;
			return NULL;
		}
	} else {
		size_t j, mask = mt->hash_cap - 1;

		for (j = key_hash(pid, gen) & mask; mt->hash[j] >= 0; j = (j + 1) & mask)
			;
		mt->hash[j] = (int)(mt->nimgs - 1);
	}
	return im;
}

struct rec_maptab *rec_maptab__new(struct rec_elfsyms *es)
{
	struct rec_maptab *mt = calloc(1, sizeof(*mt));

	if (!mt)
		return NULL;
	mt->es = es;
	mt->fed = rec_htab__new(sizeof(struct bidkey), 0);
	if (!mt->fed) {
		free(mt);
		errno = ENOMEM;
		return NULL;
	}
	return mt;
}

bool rec_maptab__wants_fd(const struct rec_maptab *mt, const struct saf_map *m)
{
	struct bidkey k;

	if (mt->on_map && (!mt->on_map_want || mt->on_map_want(mt->on_map_arg, m->pid)))
		return true;
	if (!m->build_id.len || m->build_id.len > SAF_MAX_BUILD_ID)
		return true;
	k = maptab_bid_key(m);
	return mt->es && !rec_htab__get(mt->fed, &k);
}

/* The entry's saf_map with its pointers set: entries move when arrays grow. */
static struct saf_map entry_map(const struct mapent *e)
{
	struct saf_map m = e->m;

	m.path = rec_str(e->path);
	m.build_id.data = e->bid;
	return m;
}

static struct devino *devino_get(struct rec_maptab *mt, uint64_t dev, uint64_t ino)
{
	size_t i;

	for (i = mt->ndis; i-- > 0;)
		if (mt->dis[i].dev == dev && mt->dis[i].ino == ino)
			return &mt->dis[i];
	return NULL;
}

/*
 * Fill in a missing build id from @fd or the path, cached by (dev, inode);
 * a file without one gets its content hash ("MAP record" id_kind), so that
 * its symbols are embedded and found off the box as a build id's are.
 */
static void fill_build_id(struct rec_maptab *mt, struct mapent *e, int fd)
{
	struct devino *di = NULL, tmp = {.dev = e->m.dev, .ino = e->m.inode};
	int own = -1;

	if (e->m.inode)
		di = devino_get(mt, e->m.dev, e->m.inode);
	if (!di) {
		if (fd < 0) {
			struct rec_safeopen_opts o = {.sz = sizeof(o),
						      .max_size = REC_BIN_MAX_SIZE,
						      .dev = e->m.dev,
						      .ino = e->m.inode};

			fd = own = rec_safe_open(e->path, &o, NULL, 0);
		}
		tmp.bid_len =
			fd < 0 ? -ENOENT
			       : rec_elf__identity_fd(fd, tmp.bid, sizeof(tmp.bid), &tmp.kind);
		if (own >= 0)
			close(own);
		di = &tmp;
		if (e->m.inode && mt->ndis < 65536 &&
		    !SAC_GROW(mt->dis, mt->dis_cap, mt->ndis + 1, 64))
			mt->dis[mt->ndis++] = tmp;
	}
	if (di->bid_len > 0) {
		memcpy(e->bid, di->bid, di->bid_len);
		e->m.build_id.len = di->bid_len;
		e->m.id_kind = di->kind;
	}
}

void rec_maptab__set_vdso(struct rec_maptab *mt, const struct rec_vdso *v)
{
	mt->vdso = v;
}

/*
 * An earlier mapping of @im, among its last 8, of the same file (dev,
 * inode) at the same path, or -1. Its path and build id serve again: one
 * process mapping one file at a 4,000-byte path 15,000 times kept 60 MB
 * of copies and opened the file through /proc 15,000 times.
 */
static long same_file(const struct image *im, const struct saf_map *m)
{
	size_t i, lo = im->n > 8 ? im->n - 8 : 0;

	if (!m->inode || (m->flags & SAF_MAP_ANON) || m->path.len > SAF_MAX_STRING)
		return -1;
	for (i = im->n; i-- > lo;) {
		const struct mapent *p = &im->maps[i];

		if (p->m.dev == m->dev && p->m.inode == m->inode && p->m.flags == m->flags &&
		    p->m.path.len == m->path.len && !memcmp(p->path, m->path.str, m->path.len))
			return (long)i;
	}
	return -1;
}

static int add_entry(struct rec_maptab *mt, struct image *im, const struct saf_map *m, int fd)
{
	long same = same_file(im, m);
	uint64_t cost = sizeof(struct mapent) + (same < 0 ? m->path.len + 1 : 0);
	struct mapent *e;

	if (im->n >= MAPTAB_MAX_PER_IMAGE || mt->bytes + cost > MAPTAB_MAX_BYTES) {
		mt->over++;
		if (fd >= 0)
			close(fd);
		return -E2BIG;
	}
	if (SAC_GROW(im->maps, im->cap, im->n + 1, 16))
		goto nomem;
	e = &im->maps[im->n];
	e->m = *m;
	e->file = -1;
	e->emitted = e->written = false;
	e->own_path = same < 0;
	/* a path from /proc/PID/maps has no length limit (PATH_MAX is per call) */
	e->path = same >= 0 ? im->maps[same].path
			    : rec_strclip_dup(m->path.str, m->path.len, &mt->clipped);
	if (!e->path)
		goto nomem;
	e->m.path = rec_str(e->path);
	mt->bytes += sizeof(*e) + (same < 0 ? strlen(e->path) + 1 : 0);
	e->m.build_id.len = m->build_id.len > SAF_MAX_BUILD_ID ? 0 : m->build_id.len;
	if (e->m.build_id.len) {
		memcpy(e->bid, m->build_id.data, e->m.build_id.len);
	} else if (same >= 0) {
		e->m.build_id.len = im->maps[same].m.build_id.len;
		e->m.id_kind = im->maps[same].m.id_kind;
		memcpy(e->bid, im->maps[same].bid, e->m.build_id.len);
	} else if (!(m->flags & SAF_MAP_ANON)) {
		fill_build_id(mt, e, fd);
	}
	if (fd < 0 && (m->flags & SAF_MAP_ANON) && !e->m.build_id.len)
		fd = rec_vdso__claim(mt->vdso, &e->m, e->bid, e->path);
	e->m.build_id.data = e->bid;
	im->n++;
	if (mt->on_map && (e->m.flags & SAF_MAP_EXEC) && !(e->m.flags & SAF_MAP_ANON))
		mt->on_map(mt->on_map_arg, fd, &e->m);
	if (mt->es && e->m.build_id.len) {
		struct bidkey k = maptab_bid_key(&e->m);

		/* out of memory: the next mapping of the file is opened too */
		if (fd >= 0)
			rec_htab__put(mt->fed, &k, NULL);
		e->file = rec_elfsyms__file(mt->es, e->bid, e->m.build_id.len, e->path, fd);
		fd = -1;
		if (e->file >= 0 && e->m.id_kind)
			rec_elfsyms__set_kind(mt->es, e->file, e->m.id_kind);
	}
	if (fd >= 0)
		close(fd);
	return 0;
nomem:
	if (fd >= 0)
		close(fd);
	return -ENOMEM;
}

int rec_maptab__add(struct rec_maptab *mt, const struct saf_map *m, int fd,
		    const struct rec_sink *sink)
{
	struct image *im = get_img(mt, m->pid, m->gen);
	struct saf_record rec = {.kind = SAF_REC_MAP};
	int err;

	if (!im) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	err = add_entry(mt, im, m, fd);
	if (err)
		return err == -E2BIG ? 0 : err; /* counted: mt->over */
	if (mt->defer)
		return 0; /* written when a sample hits it, if one does */
	im->maps[im->n - 1].emitted = im->maps[im->n - 1].written = true;
	rec.map = entry_map(&im->maps[im->n - 1]);
	return rec_sink__emit(sink, &rec);
}

/* "7f00-7f10 r-xp 00001000 08:01 1234   /usr/lib/x.so (deleted)" */
static int parse_maps_line(char *line, struct saf_map *m, char *range, size_t range_sz)
{
	unsigned long long lo, hi, off, ino;
	unsigned int maj, min;
	char perm[8];
	int pos = 0;
	char *path;
	size_t len;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &lo, &hi, perm, &off, &maj, &min, &ino,
		   &pos) < 7 ||
	    perm[2] != 'x')
		return -EINVAL;
	path = line + pos;
	path[strcspn(path, "\n")] = '\0';
	len = strlen(path);
	m->start = lo;
	m->end = hi;
	m->pgoff = off;
	m->dev = makedev(maj, min);
	m->inode = ino;
	m->flags = SAF_MAP_EXEC;
	if (!ino || path[0] != '/')
		m->flags |= SAF_MAP_ANON;
	if (len > 10 && !strcmp(path + len - 10, " (deleted)")) {
		path[len - 10] = '\0';
		m->flags |= SAF_MAP_DELETED;
	}
	/* whole: add_entry() clips it and counts that (rec_str() would cut it unseen) */
	m->path = (struct saf_str){path, (uint32_t)strlen(path)};
	snprintf(range, range_sz, "%llx-%llx", lo, hi);
	return 0;
}

int rec_maptab__load_proc(struct rec_maptab *mt, uint32_t pid, uint32_t gen)
{
	char path[96], range[48], *line = NULL;
	struct saf_map m = {.pid = pid, .gen = gen};
	struct image *im;
	size_t cap = 0;
	struct rec_safeopen_opts mapped = {
		.sz = sizeof(mapped), .follow = true, .max_size = REC_BIN_MAX_SIZE};
	uint64_t deadline = sac_now_ns(CLOCK_MONOTONIC) + MAPTAB_PROC_NS;
	FILE *f = NULL;
	int err = 0, fd;

	if (find_img(mt, pid, gen) >= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	im = get_img(mt, pid, gen);
	if (!im) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (getline(&line, &cap, f) > 0) {
		if (parse_maps_line(line, &m, range, sizeof(range)))
			continue;
		fd = -1;
		/* the fd gives symbols, CFI, or a build id not read yet: once a file */
		if ((mt->es || mt->on_map || !devino_get(mt, m.dev, m.inode)) &&
		    !(m.flags & SAF_MAP_ANON) && same_file(im, &m) < 0) {
			snprintf(path, sizeof(path), "/proc/%u/map_files/%s", pid, range);
			fd = rec_safe_open(path, &mapped, NULL, 0);
		}
		err = add_entry(mt, im, &m, fd);
		if (err)
			break;
		if (sac_now_ns(CLOCK_MONOTONIC) > deadline) {
			mt->cut++;
			break;
		}
	}
	if (err == -E2BIG)
		err = 0; /* counted: the rest is not read */
cleanup:
	free(line);
	fclose(f);
	return err;
}

int rec_maptab__emit(struct rec_maptab *mt, uint32_t pid, uint32_t gen, uint64_t time_ns,
		     const struct rec_sink *sink)
{
	struct saf_record rec = {.kind = SAF_REC_MAP};
	long k = find_img(mt, pid, gen);
	size_t i;
	int err;

	for (i = 0; k >= 0 && i < mt->imgs[k].n; i++) {
		mt->imgs[k].maps[i].emitted = mt->imgs[k].maps[i].written = true;
		rec.map = entry_map(&mt->imgs[k].maps[i]);
		rec.map.time_ns = time_ns;
		err = rec_sink__emit(sink, &rec);
		if (err)
			return err;
	}
	return k >= 0 ? (int)mt->imgs[k].n : 0;
}

int rec_maptab__fork(struct rec_maptab *mt, uint32_t parent, uint32_t child, uint32_t gen,
		     uint64_t time_ns, const struct rec_sink *sink)
{
	struct saf_record rec = {.kind = SAF_REC_MAP};
	struct image *pim, *cim;
	long pi, ci;
	size_t i;
	int err;

	if (find_img(mt, parent, gen) < 0)
		rec_maptab__load_proc(mt, parent, gen);
	if (!get_img(mt, child, gen))
		return -ENOMEM;
	pi = find_img(mt, parent, gen);
	ci = find_img(mt, child, gen);
	if (pi < 0 || pi == ci)
		return 0;
	cim = &mt->imgs[ci];
	cim->expire = 0;
	for (i = 0; i < mt->imgs[pi].n; i++) {
		pim = &mt->imgs[pi]; /* add_entry may not move images, but stay safe */
		rec.map = entry_map(&pim->maps[i]);
		rec.map.pid = child;
		rec.map.time_ns = time_ns;
		err = mt->defer ? 0 : rec_sink__emit(sink, &rec);
		if (err)
			return err;
		err = add_entry(mt, cim, &rec.map, -1);
		if (err)
			return err == -E2BIG ? (int)i + 1 : err;
		mt->imgs[ci].maps[mt->imgs[ci].n - 1].emitted = !mt->defer;
		mt->imgs[ci].maps[mt->imgs[ci].n - 1].written = !mt->defer;
	}
	return (int)mt->imgs[pi].n;
}

/*
 * The image (pid, gen); one running since before the recording is read
 * from /proc once, or remembered as unreadable (empty). NULL: no memory.
 */
static const struct image *known_img(struct rec_maptab *mt, uint32_t pid, uint32_t gen)
{
	long k = find_img(mt, pid, gen);

	if (k < 0) {
		if (rec_maptab__load_proc(mt, pid, gen) && !get_img(mt, pid, gen))
			return NULL;
		k = find_img(mt, pid, gen);
	}
	mt->imgs[k].seen = mt->files;
	return &mt->imgs[k];
}

int rec_maptab__find_span(struct rec_maptab *mt, uint32_t pid, uint32_t gen, uint64_t pc,
			  struct saf_map *m, uint64_t span[2])
{
	const struct image *im = known_img(mt, pid, gen);
	size_t j, k;

	if (!im)
		return -ENOMEM;
	for (j = im->n; j--;) /* the latest mapping of a reused range */
		if (pc >= im->maps[j].m.start && pc < im->maps[j].m.end)
			break;
	if (j == (size_t)-1)
		return -ENOENT;
	*m = entry_map(&im->maps[j]);
	span[0] = m->start;
	span[1] = m->end;
	for (k = j + 1; k < im->n; k++) { /* later mappings cut into it, none holds pc */
		const struct saf_map *l = &im->maps[k].m;

		if (l->end <= pc && l->end > span[0])
			span[0] = l->end;
		else if (l->start > pc && l->start < span[1])
			span[1] = l->start;
	}
	return 0;
}

int rec_maptab__find(struct rec_maptab *mt, uint32_t pid, uint32_t gen, uint64_t pc,
		     struct saf_map *m)
{
	uint64_t span[2];

	return rec_maptab__find_span(mt, pid, gen, pc, m, span);
}

int rec_maptab__note_stack(struct rec_maptab *mt, uint32_t pid, uint32_t gen, const uint64_t *ips,
			   size_t n)
{
	const struct image *im;
	size_t i, j;
	int ret, total = 0;

	if (!mt->es)
		return 0;
	im = known_img(mt, pid, gen);
	if (!im)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		for (j = 0; j < im->n; j++) {
			const struct mapent *e = &im->maps[j];

			if (ips[i] < e->m.start || ips[i] >= e->m.end || e->file < 0)
				continue;
			ret = rec_elfsyms__note(mt->es, e->file, ips[i] - e->m.start + e->m.pgoff);
			if (ret < 0)
				return ret;
			total += ret;
		}
	}
	return total;
}

void maptab_free_img(struct rec_maptab *mt, struct image *im)
{
	size_t i, unwritten = 0;

	for (i = 0; i < im->n; i++) {
		unwritten += !im->maps[i].written;
		mt->bytes -= sizeof(im->maps[i]);
		if (im->maps[i].own_path) {
			mt->bytes -= strlen(im->maps[i].path) + 1;
			free(im->maps[i].path);
		}
	}
	if (mt->defer && unwritten) {
		mt->unwritten += unwritten;
		mt->unwritten_imgs++;
	}
	free(im->maps);
}

void rec_maptab__drained(struct rec_maptab *mt)
{
	size_t i, k = 0;

	for (i = 0; i < mt->nimgs; i++) {
		struct image *im = &mt->imgs[i];

		if (im->expire && --im->expire == 0) {
			maptab_free_img(mt, im);
			continue;
		}
		mt->imgs[k++] = *im;
	}
	if (k != mt->nimgs) {
		mt->nimgs = k;
		/* Same capacity: cannot fail with the table already allocated. */
		if (maptab_rehash(mt, mt->hash_cap))
			mt->hash_cap = 0;
	}
}

int rec_maptab__emit_once(struct rec_maptab *mt, uint32_t pid, uint32_t gen, bool may_load,
			  uint64_t time_ns, const struct rec_sink *sink)
{
	struct saf_record rec = {.kind = SAF_REC_MAP};
	long k = find_img(mt, pid, gen);
	int err, total = 0;
	struct mapent *e;
	size_t i;

	if (k < 0 && may_load && rec_maptab__load_proc(mt, pid, gen) == -ENOMEM)
		return -ENOMEM;
	k = find_img(mt, pid, gen);
	if (k >= 0)
		mt->imgs[k].seen = mt->files;
	for (i = 0; k >= 0 && !mt->defer && i < mt->imgs[k].n; i++) {
		e = &mt->imgs[k].maps[i];
		if (e->emitted)
			continue;
		e->emitted = e->written = true;
		rec.map = entry_map(e);
		rec.map.time_ns = time_ns;
		err = rec_sink__emit(sink, &rec);
		if (err)
			return err;
		total++;
	}
	return total;
}

/* A new file holds no MAP record yet (defer: written again as samples hit them). */
static void unemit_all(struct rec_maptab *mt)
{
	for (size_t i = 0; i < mt->nimgs; i++)
		for (size_t j = 0; j < mt->imgs[i].n; j++)
			mt->imgs[i].maps[j].emitted = false;
}

int rec_maptab__emit_all(struct rec_maptab *mt, uint64_t time_ns, const struct rec_sink *sink)
{
	size_t i;
	int ret, total = 0;

	if (mt->defer) {
		unemit_all(mt);
		return 0;
	}
	for (i = 0; i < mt->nimgs; i++) {
		ret = rec_maptab__emit(mt, mt->imgs[i].pid, mt->imgs[i].gen, time_ns, sink);
		if (ret < 0)
			return ret;
		total += ret;
	}
	return total;
}

void rec_maptab__free(struct rec_maptab *mt)
{
	size_t i;

	if (!mt)
		return;
	for (i = 0; i < mt->nimgs; i++)
		maptab_free_img(mt, &mt->imgs[i]);
	SAC_FREE_ALL(mt->imgs, mt->hash, mt->dis);
	rec_htab__free(mt->fed);
	free(mt);
}
