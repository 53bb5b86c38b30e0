// SPDX-License-Identifier: MIT
/*
 * uwbin.c - each binary an unwind reads opened, mapped and its CFI parsed
 * once, however many process images map it; per image only where each
 * binary sits. A Dwfl per image mapped libc once per image (1,251 times in
 * a 100 s fork loop) and parsed its CFI again in each.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "binopen.h"
#include "grow.h"
#include "hash.h"
#include "uwbin.h"
#include "uwrows.h"

static char *uw_debuginfo_path;
/*
 * The debug file of a module, for its .debug_frame: by build id; libdwfl's
 * whole standard search (debuglink paths, then debuginfod) only when
 * DEBUGINFOD_URLS is set. That search loads libdebuginfod and its thirty
 * libraries (curl, gnutls, ...) whatever the variable says: 10 ms, a fifth
 * of a report, for a lookup that then finds nothing.
 */
static int uw_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			     Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			     GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (urls && *urls)
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink_file, debuglink_crc,
						    debuginfo_file_name);
	return dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					    debuglink_crc, debuginfo_file_name);
}

const Dwfl_Callbacks rpt_uw_dwfl_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = uw_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &uw_debuginfo_path,
};

static bool bid_matches(Elf *elf, const char *want)
{
	const uint8_t *bid;
	char hex[2 * RPT_UW_MAX_BID + 1];
	ssize_t n;

	if (!want || !*want)
		return true;
	n = dwelf_elf_gnu_build_id(elf, (const void **)&bid);
	if (n <= 0 || n > RPT_UW_MAX_BID)
		return false;
	for (ssize_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	return !strcmp(hex, want);
}

int rpt_uw_bias(Elf *elf, const struct rpt_unwind_module *m, uint64_t *bias)
{
	size_t nph;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nph))
		return -EINVAL;
	for (size_t i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (m->pgoff + 4096 <= ph.p_offset || m->pgoff >= ph.p_offset + ph.p_filesz)
			continue;
		*bias = m->start - m->pgoff + ph.p_offset - ph.p_vaddr;
		return 0;
	}
	return -ENOENT;
}

int rpt_uw_open(const struct rpt_unwind_module *m, GElf_Ehdr *eh)
{
	int fd = rpt_bin_open(m->path);
	Elf *elf;
	bool ok;

	if (fd < 0)
		return fd;
	elf_version(
		EV_CURRENT); /* libelf refuses elf_begin() until told; dwfl_begin() tells it too */
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ok = elf && gelf_getehdr(elf, eh) && bid_matches(elf, m->build_id);
	elf_end(elf);
	if (!ok) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}

/* Open @b's file alone in a Dwfl; it stays without one when it cannot be used. */
static void bin_load(struct rpt_uwbin *b, const struct rpt_unwind_module *m)
{
	Dwfl_Module *mod;
	GElf_Ehdr eh;
	Dwarf_Addr start, end;
	int fd = rpt_uw_open(m, &eh);

	if (fd < 0)
		return;
	b->dwfl = dwfl_begin(&rpt_uw_dwfl_cb);
	if (!b->dwfl) {
		close(fd);
		return;
	}
	dwfl_report_begin(b->dwfl);
	/* on success the Dwfl owns fd */
	mod = dwfl_report_elf(b->dwfl, m->path, m->path, fd, 0, false);
	if (!mod)
		close(fd);
	if (dwfl_report_end(b->dwfl, NULL, NULL) || !mod) {
		dwfl_end(b->dwfl);
		b->dwfl = NULL;
		return;
	}
	dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
	b->start = start;
	b->end = end;
	b->exec = eh.e_type == ET_EXEC;
}

/* Is @b the binary of @m: the same build id, or with none the same path? */
static bool bin_is(const struct rpt_uwbin *b, const struct rpt_unwind_module *m, const char *bid)
{
	return *bid ? !strcmp(b->build_id, bid) : !*b->build_id && !strcmp(b->path, m->path);
}

/*
 * A binary not found at one path may be at another's with its build id.
 * @return 1 when it was found there, 0 when not, or -ENOMEM.
 */
static int bin_retry(struct rpt_uwbin *b, const struct rpt_unwind_module *m)
{
	char *path;

	if (b->dwfl || !strcmp(b->path, m->path))
		return 0;
	path = strdup(m->path);
	if (!path)
		return -ENOMEM;
	free(b->path);
	b->path = path;
	bin_load(b, m);
	return b->dwfl ? 1 : 0;
}

/*
 * The binary of @m, opened on first use: one per build id, whatever the
 * paths it is mapped from (one per path when it has none).
 * @return its index or -ENOMEM.
 */
static int64_t bin_get(struct rpt_uwbins *b, const struct rpt_unwind_module *m)
{
	const char *bid = m->build_id ? m->build_id : "";
	const char *key = *bid ? bid : m->path;
	struct rpt_uwbin *n;
	uint64_t v;

	/* a hash shared by two keys sends the second one on to the next salt */
	for (uint64_t salt = 1;; salt++) {
		uint64_t h = sac_hash_fnv(key, strlen(key), salt * 2 + !*bid);

		h = h == UINT64_MAX ? 0 : h; /* UINT64_MAX is rpt_hmap's empty mark */
		if (rpt_hmap__get(&b->index, h, &v)) {
			if (!bin_is(&b->bins[v], m, bid))
				continue;
			switch (bin_retry(&b->bins[v], m)) {
			case 0:
				return (int64_t)v;
			case 1:
				b->found++;
				return (int64_t)v;
			}
			return -ENOMEM;
		}
		if (SAC_GROW(b->bins, b->cap, b->n + 1, 16))
			return -ENOMEM;
		n = &b->bins[b->n];
		*n = (struct rpt_uwbin){.path = strdup(m->path), .build_id = strdup(bid)};
		if (!n->path || !n->build_id || rpt_hmap__put(&b->index, h, b->n)) {
			free(n->path);
			free(n->build_id);
			return -ENOMEM;
		}
		bin_load(n, m);
		return (int64_t)b->n++;
	}
}

static bool reported_before(const struct rpt_unwind_module *mods, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (mods[j].path && !strcmp(mods[j].path, mods[i].path))
			return true;
	return false;
}

/* Add @m's binary to @t where a Dwfl of the image would put it, if it would. */
static int mods_add(struct rpt_uwmods *t, struct rpt_uwbins *b, const struct rpt_unwind_module *m)
{
	int64_t i = bin_get(b, m);
	const struct rpt_uwbin *bin;
	uint64_t bias = 0;
	Dwarf_Addr ignored;

	if (i < 0)
		return (int)i;
	bin = &b->bins[i];
	if (!bin->dwfl)
		return 0;
	if (!bin->exec) {
		Dwfl_Module *mod = dwfl_addrmodule(bin->dwfl, bin->start);
		Elf *elf = mod ? dwfl_module_getelf(mod, &ignored) : NULL;

		if (!elf || rpt_uw_bias(elf, m, &bias))
			return 0;
	}
	if (SAC_GROW(t->m, t->cap, t->n + 1, 8))
		return -ENOMEM;
	/* libdwfl puts an ET_DYN module at the base it is given, an ET_EXEC one where it links */
	t->m[t->n++] = (struct rpt_uwmod){(uint32_t)i, bin->start + bias, bin->end + bias, bias};
	/* the modules dwfl_attach_state() skips when it looks for the architecture */
	t->attached |= strncmp(m->path, "[vdso: ", 7) &&
		       strcmp(strrchr(m->path, ' ') ? strrchr(m->path, ' ') : "", " (deleted)");
	return 0;
}

int rpt_uwmods__build(struct rpt_uwmods *t, struct rpt_uwbins *b,
		      const struct rpt_unwind_module *mods, size_t nmods)
{
	*t = (struct rpt_uwmods){0};
	for (size_t i = 0; i < nmods; i++) {
		int err;

		if (!mods[i].path || !*mods[i].path || reported_before(mods, i))
			continue;
		err = mods_add(t, b, &mods[i]);
		if (err)
			return err;
	}
	return 0;
}

const struct rpt_uwmod *rpt_uwmods__at(const struct rpt_uwmods *t, uint64_t addr)
{
	if (!t->attached)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (addr >= t->m[i].lo && addr < t->m[i].hi)
			return &t->m[i];
	return NULL;
}

void rpt_uwmods__fini(struct rpt_uwmods *t)
{
	free(t->m);
	*t = (struct rpt_uwmods){0};
}

void rpt_uwbins__fini(struct rpt_uwbins *b)
{
	for (size_t i = 0; i < b->n; i++) {
		if (b->bins[i].dwfl)
			dwfl_end(b->bins[i].dwfl);
		free(b->bins[i].path);
		free(b->bins[i].build_id);
	}
	free(b->bins);
	rpt_hmap__fini(&b->index);
	*b = (struct rpt_uwbins){0};
}
