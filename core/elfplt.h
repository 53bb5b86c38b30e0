/* SPDX-License-Identifier: MIT */
/*
 * elfplt.h - names for the PLT entries of an x86-64 ELF file (`strcmp@plt`),
 * which have no symbols of their own: each entry's indirect jump is decoded
 * to the GOT slot it reads, and that slot's dynamic relocation names it.
 * Shared by record/ (embedded symbols) and report/ (symbols read from the
 * binary); core/ uses libc and libelf only (`make check-deps`).
 */
#ifndef SAC_ELFPLT_H
#define SAC_ELFPLT_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

/* One PLT entry with a name. */
struct sac_pltsym {
	uint64_t vaddr; /* link-time address of the entry's first byte */
	uint64_t size;	/* bytes of the entry */
	uint32_t name;	/* offset in sac_plt.names: "func@plt" */
};

struct sac_plt {
	struct sac_pltsym *syms; /* sorted by vaddr */
	size_t nsyms;
	char *names; /* NUL-terminated names, one after another */
	size_t names_len;
};

/* At most this many entries per file are named (a 16 MiB PLT). */
#define SAC_PLT_MAX_ENTRIES (1u << 20)

/**
 * sac_plt__read() - name the entries of @e's .plt, .plt.sec and .plt.got.
 * @e: borrowed; an ELF file with its section contents (a separate debug
 * file has none, and gives no entries).
 * @p: filled in; release with sac_plt__release(), also after an error.
 * Entries whose slot has no JUMP_SLOT or GLOB_DAT relocation (the lazy
 * resolver's PLT0, IRELATIVE slots) are left unnamed.
 * @return the number of entries named (0 for a file with no PLT or not
 * x86-64), or -ENOMEM. Thread-safe for distinct @p.
 */
int sac_plt__read(Elf *e, struct sac_plt *p);

/** sac_plt__release() - free what sac_plt__read() filled. Accepts zeroes. */
void sac_plt__release(struct sac_plt *p);

#endif /* SAC_ELFPLT_H */
