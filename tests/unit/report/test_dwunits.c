// SPDX-License-Identifier: MIT
/*
 * test_dwunits.c - report/symbols/dwunits.c's own .debug_aranges parse (units by
 * header offset, read once their bytes are in) gives the compile unit
 * that dwarf_getaranges() gave, for addresses at, inside and just past
 * every arange of this machine's debug files (libc6-dbg's, where
 * installed; skipped otherwise).
 */
#include <fcntl.h>
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include <gelf.h>
#include <elfutils/libdw.h>

#include "dwunits.h"

/* The inflated bytes of section @name, or NULL. */
static Elf_Data *section(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(n, name))
			continue;
		if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return NULL;
		return elf_getdata(scn, NULL);
	}
	return NULL;
}

static int check_file(const char *path)
{
	int fd = open(path, O_RDONLY), checked = 0;
	Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	Elf_Data *ar = elf ? section(elf, ".debug_aranges") : NULL;
	Elf_Data *info = elf ? section(elf, ".debug_info") : NULL;
	Dwarf *dw = ar && info ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	struct rpt_dwunits own = {0}, lib = {0};
	Dwarf_Aranges *aranges;
	size_t n;

	if (!dw || dwarf_getaranges(dw, &aranges, &n) || !n)
		goto out;
	rpt_dwunits__init(&own, NULL, info->d_size, false);
	rpt_dwunits__init(&lib, NULL, info->d_size, false);
	assert_int_equal(rpt_dwunits__load(&own, dw, ar->d_buf, ar->d_size, NULL, 0), 0);
	assert_int_equal(rpt_dwunits__load(&lib, dw, NULL, 0, NULL, 0), 0);
	for (size_t i = 0; i < n; i++) {
		Dwarf_Addr start;
		Dwarf_Word len;
		Dwarf_Off off;

		assert_int_equal(
			dwarf_getarangeinfo(dwarf_onearange(aranges, i), &start, &len, &off), 0);
		for (int k = 0; k < 4; k++) {
			Dwarf_Addr a = k < 2 ? start + k * len / 2 : start + len + k - 3;

			assert_int_equal(rpt_dwunits__cu(&own, dw, a),
					 rpt_dwunits__cu(&lib, dw, a));
			checked++;
		}
	}
out:
	rpt_dwunits__fini(&own);
	rpt_dwunits__fini(&lib);
	if (dw)
		dwarf_end(dw);
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return checked;
}

static void test_like_libdw(void **state)
{
	glob_t g;
	int files = 0;

	(void)state;
	elf_version(EV_CURRENT);
	if (glob("/usr/lib/debug/.build-id/*/*.debug", 0, NULL, &g))
		SA_SKIP("no debug files in /usr/lib/debug/.build-id (libc6-dbg)");
	for (size_t i = 0; i < g.gl_pathc && files < 12; i++)
		files += check_file(g.gl_pathv[i]) > 0;
	globfree(&g);
	if (!files)
		SA_SKIP("no debug file with units in /usr/lib/debug/.build-id");
}

/* Malformed sets give no unit at all, as dwarf_getaranges() fails. */
static void test_malformed(void **state)
{
	static const uint8_t bad_version[] = {28, 0, 0, 0, 3, 0, 0, 0, 0, 0, 8, 0};
	struct rpt_dwunits u = {0};

	(void)state;
	rpt_dwunits__init(&u, NULL, 100, false);
	assert_int_equal(
		rpt_dwunits__load(&u, (Dwarf *)1, bad_version, sizeof(bad_version), NULL, 0), 0);
	assert_int_equal(rpt_dwunits__cu(&u, NULL, 0), 0);
	assert_int_equal(rpt_dwunits__rank(&u, 0), 0);
	rpt_dwunits__fini(&u);
}

SA_TEST_MAIN(test_like_libdw, test_malformed)
