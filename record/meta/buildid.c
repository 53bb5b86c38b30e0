// SPDX-License-Identifier: MIT
/*
 * buildid.c - GNU build ids of mapped ELF files, read from their
 * PT_NOTE segments (else SHT_NOTE sections) with libelf, cached by (device,
 * inode) so that each file is opened once per recording, including files
 * that have no build id or cannot be read.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "buildid.h"
#include "htab.h"
#include "record.h"
#include "safeopen.h"

#define NT_GNU_BUILD_ID_TYPE 3

struct bid_key {
	uint64_t dev, ino;
};

struct bid_val {
	uint8_t len;
	uint8_t id[SAF_MAX_BUILD_ID];
};

struct rec_buildids {
	struct rec_htab *cache;
};

static int find_note(Elf_Data *data, uint8_t *out, size_t cap)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID_TYPE && nh.n_namesz == 4 &&
		    !memcmp((char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0) {
			size_t n = nh.n_descsz < cap ? nh.n_descsz : cap;

			memcpy(out, (char *)data->d_buf + desc_off, n);
			return (int)n;
		}
		off = next;
	}
	return 0;
}

static int from_phdrs(Elf *e, uint8_t *out, size_t cap)
{
	size_t i, n;
	GElf_Phdr ph;
	Elf_Data *d;
	int len;

	if (elf_getphdrnum(e, &n))
		return 0;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_NOTE ||
		    ph.p_filesz > REC_BIN_MAX_NOTE)
			continue;
		d = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (d && (len = find_note(d, out, cap)) > 0)
			return len;
	}
	return 0;
}

static int from_sections(Elf *e, uint8_t *out, size_t cap)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *d;
	int len;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    sh.sh_size > REC_BIN_MAX_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && (len = find_note(d, out, cap)) > 0)
			return len;
	}
	return 0;
}

/**
 * rec_buildid_read_fd() - the GNU build id of the ELF file open on @fd.
 * @out, @cap: caller's buffer.
 * @return its length (0 when the file has none or is not ELF).
 */
int rec_buildid_read_fd(int fd, uint8_t *out, size_t cap)
{
	Elf *e;
	int len;

	e = rec_safe_elf_begin(fd, ELF_C_READ_MMAP);
	if (!e)
		return 0;
	len = elf_kind(e) == ELF_K_ELF ? from_phdrs(e, out, cap) : 0;
	if (!len && elf_kind(e) == ELF_K_ELF)
		len = from_sections(e, out, cap);
	elf_end(e);
	return len;
}

/**
 * rec_buildids__new() - an empty cache.
 * @return a cache released with rec_buildids__free(), or NULL with errno.
 */
struct rec_buildids *rec_buildids__new(void)
{
	struct rec_buildids *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->cache = rec_htab__new(sizeof(struct bid_key), sizeof(struct bid_val));
	if (!c->cache) {
		free(c);
		return NULL;
	}
	return c;
}

/**
 * rec_buildids__get() - the build id of the file (@dev, @ino), reading
 * @path (e.g. /proc/PID/map_files/...) or else @alt_path (may be NULL) the
 * first time.
 * @id: set to the cached bytes, borrowed until the next call.
 * @return the length (0 = none or unreadable), or -ENOMEM.
 */
int rec_buildids__get(struct rec_buildids *c, const char *path, const char *alt_path, uint64_t dev,
		      uint64_t ino, const uint8_t **id)
{
	struct bid_key k = {.dev = dev, .ino = ino};
	struct bid_val *v;
	bool is_new;
	int fd;

	v = rec_htab__put(c->cache, &k, &is_new);
	if (!v)
		return -ENOMEM;
	if (is_new) {
		struct rec_safeopen_opts o = {
			.sz = sizeof(o), .follow = true, .max_size = REC_BIN_MAX_SIZE};

		fd = rec_safe_open(path, &o, NULL, 0);
		if (fd < 0 && alt_path) {
			/* Not the mapping itself: its path must still hold its inode. */
			o = (struct rec_safeopen_opts){.sz = sizeof(o),
						       .max_size = REC_BIN_MAX_SIZE,
						       .dev = dev,
						       .ino = ino};
			fd = rec_safe_open(alt_path, &o, NULL, 0);
		}
		if (fd >= 0) {
			v->len = rec_buildid_read_fd(fd, v->id, sizeof(v->id));
			close(fd);
		}
	}
	*id = v->id;
	return v->len;
}

/** rec_buildids__free() - release the cache. Accepts NULL. */
void rec_buildids__free(struct rec_buildids *c)
{
	if (!c)
		return;
	rec_htab__free(c->cache);
	free(c);
}
