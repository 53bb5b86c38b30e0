// SPDX-License-Identifier: MIT
/*
 * vdso.c - the vDSO image copied out of sa-record's own memory into a
 * memfd, so that elfsyms.c embeds its symbols and the unwinder's tables
 * read its CFI as for any file (vdso.h).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
#include "elfsyms.h"
#include "vdso.h"

#define VDSO_MAX (1u << 20) /* a vDSO is 2 pages here; anything past this is not one */

/* Bytes of the image: its section headers are last, past every segment. */
static uint64_t image_size(const Elf64_Ehdr *eh)
{
	const Elf64_Phdr *ph = (const void *)((const char *)eh + eh->e_phoff);
	uint64_t end = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;

	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	return end;
}

int rec_vdso__open(struct rec_vdso *v)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	long pg = sysconf(_SC_PAGESIZE);
	int n;

	memset(v, 0, sizeof(*v));
	v->fd = -1;
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOENT;
	v->size = image_size(eh);
	if (v->size < sizeof(*eh) || v->size > VDSO_MAX)
		return -ENOENT;
	v->map_len = (v->size + pg - 1) / pg * pg;
	v->fd = memfd_create("sa-vdso", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (v->fd < 0)
		return -errno;
	if (write(v->fd, eh, v->size) != (ssize_t)v->size)
		return -EIO;
	fcntl(v->fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
	n = rec_elfsyms__read_build_id(v->fd, v->bid, sizeof(v->bid));
	if (n <= 0)
		return n < 0 ? n : -ENOENT;
	v->bid_len = (size_t)n;
	return 0;
}

int rec_vdso__claim(const struct rec_vdso *v, struct saf_map *m, uint8_t *bid, const char *path)
{
	if (!v || v->fd < 0 || !v->bid_len || strcmp(path, "[vdso]") ||
	    m->end - m->start != v->map_len)
		return -1;
	memcpy(bid, v->bid, v->bid_len);
	m->build_id.len = (uint32_t)v->bid_len;
	m->flags &= ~SAF_MAP_ANON;
	return fcntl(v->fd, F_DUPFD_CLOEXEC, 0);
}

void rec_vdso__close(struct rec_vdso *v)
{
	if (v->fd >= 0)
		close(v->fd);
	v->fd = -1;
}
