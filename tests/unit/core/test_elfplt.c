// SPDX-License-Identifier: MIT
/*
 * test_elfplt.c - PLT entry names against binutils' objdump, which names
 * them (`<strcmp@plt>:`) from its own decoding of the same sections: the
 * fixtures of every PLT layout (lazy, -z now, IBT's .plt.sec) and Debian's
 * own dash, zstd, python3 and libc.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <gelf.h>
#include <cmocka.h>
#include "sa_cmocka.h"
#include "elfplt.h"

#ifndef TD
#define TD "build/tests/data"
#endif

struct label {
	uint64_t va;
	char name[256];
};

/* objdump's `ADDR <NAME@plt>:` labels of @path, IRELATIVE ones (`*ABS*`) left out. */
static size_t objdump_labels(const char *path, struct label *v, size_t cap)
{
	char cmd[1024], line[1024];
	size_t n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null",
		 path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long va;
		char name[256];
		size_t len;

		if (sscanf(line, "%llx <%255[^>]>:", &va, name) != 2)
			continue;
		len = strlen(name);
		if (len < 5 || strcmp(name + len - 4, "@plt") || !strncmp(name, "*ABS*", 5))
			continue;
		assert_true(n < cap);
		v[n].va = va;
		snprintf(v[n].name, sizeof(v[n].name), "%s", name);
		n++;
	}
	pclose(f);
	return n;
}

/* Is @va in a section named @want of @e? */
static int in_section(Elf *e, uint64_t va, const char *want)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(e, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && va - sh.sh_addr < sh.sh_size &&
		    !strcmp(elf_strptr(e, shstrndx, sh.sh_name), want))
			return 1;
	return 0;
}

static int has_name(const struct sac_plt *p, const char *name, uint64_t not_va)
{
	for (size_t i = 0; i < p->nsyms; i++)
		if (p->syms[i].vaddr != not_va && !strcmp(p->names + p->syms[i].name, name))
			return 1;
	return 0;
}

/*
 * Every label objdump gives is ours, at its address; ours beyond those are
 * only IBT's lazy .plt stubs (objdump names .plt.sec there), each named like
 * the .plt.sec entry of the same function.
 */
static void check_file(const char *path, size_t min_labels)
{
	static struct label want[65536];
	size_t nwant = objdump_labels(path, want, 65536), matched = 0;
	struct sac_plt p;
	int fd = open(path, O_RDONLY | O_CLOEXEC), n;
	Elf *e;

	print_message("# %s: objdump names %zu entries\n", path, nwant);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(e);
	n = sac_plt__read(e, &p);
	assert_true(n >= 0);
	assert_true(nwant >= min_labels);
	for (size_t i = 0; i < nwant; i++) {
		int found = 0;

		for (size_t j = 0; j < p.nsyms && !found; j++)
			found = p.syms[j].vaddr == want[i].va &&
				!strcmp(p.names + p.syms[j].name, want[i].name);
		if (!found)
			print_error("%s: objdump's %s at %#llx not named so\n", path, want[i].name,
				    (unsigned long long)want[i].va);
		assert_true(found);
		matched++;
	}
	for (size_t j = 0; j < p.nsyms; j++) {
		int listed = 0;

		for (size_t i = 0; i < nwant && !listed; i++)
			listed = want[i].va == p.syms[j].vaddr;
		if (listed)
			continue;
		assert_true(in_section(e, p.syms[j].vaddr, ".plt"));
		assert_true(has_name(&p, p.names + p.syms[j].name, p.syms[j].vaddr));
	}
	for (size_t j = 1; j < p.nsyms; j++)
		assert_true(p.syms[j - 1].vaddr < p.syms[j].vaddr);
	assert_int_equal(matched, nwant);
	sac_plt__release(&p);
	elf_end(e);
	close(fd);
}

/* IBT's lazy .plt stub of abs (`endbr64; push n`) is named by its index. */
static void test_ibt_lazy_stub(void **state)
{
	struct sac_plt p;
	int fd = open(TD "/plt_ibt", O_RDONLY | O_CLOEXEC), nabs = 0;
	Elf *e;

	(void)state;
	assert_true(fd >= 0);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(e);
	assert_true(sac_plt__read(e, &p) > 0);
	for (size_t i = 0; i < p.nsyms; i++)
		if (!strcmp(p.names + p.syms[i].name, "abs@plt")) {
			nabs++;
			assert_int_equal(in_section(e, p.syms[i].vaddr, ".plt") +
						 in_section(e, p.syms[i].vaddr, ".plt.sec"),
					 1);
		}
	assert_int_equal(nabs, 2);
	sac_plt__release(&p);
	elf_end(e);
	close(fd);
}

static void test_fixtures(void **state)
{
	(void)state;
	check_file(TD "/plt_lazy", 3);
	check_file(TD "/plt_now", 3);
	check_file(TD "/plt_ibt", 3);
}

static void test_debian_binaries(void **state)
{
	(void)state;
	check_file("/usr/bin/dash", 50);
	check_file("/usr/bin/zstd", 50);
	check_file("/usr/bin/python3", 50);
	check_file("/lib/x86_64-linux-gnu/libc.so.6", 5);
}

/* A debug file keeps no section contents: no entries, no crash. */
static void test_no_contents(void **state)
{
	struct sac_plt p;
	int fd = open(TD "/plt_debug", O_RDONLY | O_CLOEXEC);
	Elf *e;

	(void)state;
	assert_true(fd >= 0);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(e);
	assert_int_equal(sac_plt__read(e, &p), 0);
	assert_int_equal(p.nsyms, 0);
	sac_plt__release(&p);
	elf_end(e);
	close(fd);
}

SA_TEST_MAIN(test_fixtures, test_ibt_lazy_stub, test_debian_binaries, test_no_contents)
