// SPDX-License-Identifier: MIT
/*
 * buildid.c - GNU build-id notes read with libelf: PT_NOTE segments first
 * (what the kernel puts in MMAP2 records, so both sources agree on a file
 * with two notes), then SHT_NOTE sections.
 */
#include <errno.h>
#include <gelf.h>
#include <string.h>
#include "buildid.h"

#define NT_GNU_BUILD_ID_TYPE 3

static int find_note(Elf_Data *d, uint8_t *buf, size_t cap)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	if (!d)
		return -ENOENT;
	while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != NT_GNU_BUILD_ID_TYPE || nh.n_namesz != 4 ||
		    memcmp((char *)d->d_buf + name_off, "GNU", 4) || !nh.n_descsz)
			continue;
		if (nh.n_descsz > cap)
			return -ENOSPC;
		memcpy(buf, (char *)d->d_buf + desc_off, nh.n_descsz);
		return (int)nh.n_descsz;
	}
	return -ENOENT;
}

static int from_phdrs(Elf *e, uint8_t *buf, size_t cap)
{
	size_t i, n;
	GElf_Phdr ph;
	int ret;

	if (elf_getphdrnum(e, &n))
		return -ENOENT;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_NOTE || !ph.p_filesz ||
		    ph.p_filesz > SAC_BUILDID_MAX_NOTE)
			continue;
		ret = find_note(elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz, ELF_T_NHDR), buf,
				cap);
		if (ret != -ENOENT)
			return ret;
	}
	return -ENOENT;
}

static int from_sections(Elf *e, uint8_t *buf, size_t cap)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int ret;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    sh.sh_size > SAC_BUILDID_MAX_NOTE)
			continue;
		ret = find_note(elf_getdata(scn, NULL), buf, cap);
		if (ret != -ENOENT)
			return ret;
	}
	return -ENOENT;
}

int sac_buildid__read(Elf *e, uint8_t *buf, size_t cap)
{
	int ret;

	if (!e || elf_kind(e) != ELF_K_ELF)
		return -ENOEXEC;
	ret = from_phdrs(e, buf, cap);
	return ret == -ENOENT ? from_sections(e, buf, cap) : ret;
}
