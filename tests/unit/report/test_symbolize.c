// SPDX-License-Identifier: MIT
/*
 * test_symbolize.c - symbolizer on fixtures built by tests/rules.mk: exact
 * names from a plain binary, a stripped one with a build-id debug file, an
 * inlined function, C++ templates, embedded symbols, a rebuilt binary
 * whose build id no longer matches (never used), and zlib-compressed DWARF
 * (inflated by dwload.c, in the binary and in a prefetched debug file).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "elfsym.h"
#include "profile.h"
#include "symbolize.h"

static char data_dir[PATH_MAX];

static const char *fixture(const char *name)
{
	static char buf[4][PATH_MAX + 64];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", data_dir, name);
	return buf[i];
}

/* File offset of ELF address @vaddr, and the page offset of its segment. */
static void vaddr_to_off(Elf *elf, uint64_t vaddr, uint64_t *off, uint64_t *pgoff)
{
	size_t n = 0;

	assert_int_equal(elf_getphdrnum(elf, &n), 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		gelf_getphdr(elf, i, &ph);
		if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			*pgoff = ph.p_offset & ~4095ULL;
			return;
		}
	}
	fail_msg("no segment for 0x%lx", (unsigned long)vaddr);
}

/* File offset of symbol @name + @delta in the unstripped fixture @path. */
static void sym_off(const char *path, const char *name, uint64_t delta, uint64_t *off,
		    uint64_t *pgoff)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			gelf_getsym(d, i, &s);
			if (!strcmp(elf_strptr(elf, sh.sh_link, s.st_name), name)) {
				vaddr_to_off(elf, s.st_value + delta, off, pgoff);
				elf_end(elf);
				close(fd);
				return;
			}
		}
	}
	fail_msg("symbol %s not in %s", name, path);
}

static struct rpt_symbolizer *new_sym(const char *debug_dir, bool demangle, bool lines)
{
	static const char *dirs[1];
	/* no_cache: the fixtures are rebuilt in place; test_symcache.c tests the cache */
	struct rpt_symbolizer_opts o = {.no_system_debug = true,
					.no_demangle = !demangle,
					.lines = lines,
					.no_cache = true};
	struct rpt_symbolizer *s;

	dirs[0] = debug_dir;
	o.debug_dirs = dirs;
	o.ndebug_dirs = debug_dir ? 1 : 0;
	s = rpt_symbolizer__new(&o);
	assert_non_null(s);
	return s;
}

static int dso_for(struct rpt_symbolizer *s, const char *id_from, const char *path)
{
	uint8_t id[64];
	int n = id_from ? rpt_elf__build_id(id_from, id, sizeof(id)) : 0;

	assert_true(n >= 0);
	return rpt_symbolizer__dso(s, id, n, path, 0);
}

/* Name of the frames at @sym+@delta of @ref, resolved through dso @d. */
static int lookup(struct rpt_symbolizer *s, int d, const char *ref, const char *sym, uint64_t delta,
		  const struct rpt_sym **f)
{
	uint64_t off, pgoff;

	sym_off(ref, sym, delta, &off, &pgoff);
	return rpt_symbolizer__lookup(s, d, off, pgoff, f);
}

#define NAME(s, f) rpt_strpool__str(rpt_symbolizer__pool(s), (f).name)

static void test_plain(void **state)
{
	struct rpt_symbolizer *s = new_sym(NULL, true, false);
	int d = dso_for(s, fixture("plain"), fixture("plain"));
	const struct rpt_sym *f;

	(void)state;
	assert_int_equal(lookup(s, d, fixture("plain"), "plain_alpha", 4, &f), 1);
	assert_string_equal(NAME(s, f[0]), "plain_alpha");
	assert_int_equal(f[0].kind, RPT_FRAME_USER);
	assert_int_equal(lookup(s, d, fixture("plain"), "plain_static_beta", 2, &f), 1);
	assert_string_equal(NAME(s, f[0]), "plain_static_beta");
	/* a second lookup comes from the cache and is the same */
	assert_int_equal(lookup(s, d, fixture("plain"), "plain_static_beta", 2, &f), 1);
	assert_string_equal(NAME(s, f[0]), "plain_static_beta");
	assert_int_equal(rpt_symbolizer__get(s, d)->source, RPT_SRC_BINARY);
	assert_int_equal(rpt_symbolizer__get(s, d)->reason, 0);
	rpt_symbolizer__free(s);
}

static void test_stripped_with_debug_file(void **state)
{
	struct rpt_symbolizer *s = new_sym(fixture("debug"), true, false);
	int d = dso_for(s, fixture("plain"), fixture("stripped"));
	int nobin = dso_for(s, NULL, "/nonexistent/plain");
	const struct rpt_sym *f;

	(void)state;
	assert_int_equal(lookup(s, d, fixture("plain"), "plain_static_beta", 2, &f), 1);
	assert_string_equal(NAME(s, f[0]), "plain_static_beta");
	assert_int_equal(rpt_symbolizer__get(s, d)->source, RPT_SRC_DEBUG_FILE);
	(void)nobin;
	rpt_symbolizer__free(s);
}

static void test_debug_file_only(void **state)
{
	struct rpt_symbolizer *s = new_sym(fixture("debug"), true, false);
	uint8_t id[64];
	int n = rpt_elf__build_id(fixture("plain"), id, sizeof(id));
	int d = rpt_symbolizer__dso(s, id, n, "/nonexistent/dir/plain", 0);
	const struct rpt_sym *f;

	(void)state;
	assert_int_equal(lookup(s, d, fixture("plain"), "plain_alpha", 1, &f), 1);
	assert_string_equal(NAME(s, f[0]), "plain_alpha");
	assert_int_equal(rpt_symbolizer__get(s, d)->source, RPT_SRC_DEBUG_FILE);
	rpt_symbolizer__free(s);
}

static void test_stripped_without_debug_file(void **state)
{
	struct rpt_symbolizer *s = new_sym(NULL, true, false);
	int d = dso_for(s, fixture("plain"), fixture("stripped"));
	const struct rpt_sym *f;

	(void)state;
	/* no symbol covers it: unnamed, never a neighbour's name */
	assert_int_equal(lookup(s, d, fixture("plain"), "plain_static_beta", 2, &f), 0);
	assert_non_null(
		strstr(rpt_strpool__str(rpt_symbolizer__pool(s), rpt_symbolizer__get(s, d)->reason),
		       "stripped"));
	rpt_symbolizer__free(s);
}

static void test_build_id_mismatch(void **state)
{
	struct rpt_symbolizer *s = new_sym(NULL, true, false);
	int d = dso_for(s, fixture("plain"), fixture("mismatch"));
	const struct rpt_sym *f;
	const struct rpt_dso *dso;

	(void)state;
	assert_int_equal(lookup(s, d, fixture("plain"), "plain_alpha", 4, &f), 0);
	dso = rpt_symbolizer__get(s, d);
	assert_int_equal(dso->source, RPT_SRC_NONE);
	assert_non_null(strstr(rpt_strpool__str(rpt_symbolizer__pool(s), dso->reason),
			       "build id mismatch"));
	rpt_symbolizer__free(s);
}

static void test_mismatch_falls_back_to_embedded(void **state)
{
	struct rpt_symbolizer *s = new_sym(NULL, true, false);
	int d = dso_for(s, fixture("plain"), fixture("mismatch"));
	const struct rpt_sym *f;
	uint64_t off, pgoff;

	(void)state;
	sym_off(fixture("plain"), "plain_alpha", 0, &off, &pgoff);
	assert_int_equal(rpt_symbolizer__add_usym(s, d, off, 16, "_ZN3foo3barEv"), 0);
	assert_int_equal(rpt_symbolizer__lookup(s, d, off + 3, pgoff, &f), 1);
	assert_string_equal(NAME(s, f[0]), "foo::bar()");
	assert_int_equal(rpt_symbolizer__lookup(s, d, off + 16, pgoff, &f), 0);
	assert_int_equal(rpt_symbolizer__get(s, d)->source, RPT_SRC_EMBEDDED);
	rpt_symbolizer__free(s);
}

/* File offset of the first inlined instance of @name in @path. */
static void inline_off(const char *path, const char *name, uint64_t *off, uint64_t *pgoff)
{
	int fd = open(path, O_RDONLY);
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	Dwarf_Off cu = 0, next;
	size_t hsz;

	assert_non_null(dw);
	while (!dwarf_nextcu(dw, cu, &next, &hsz, NULL, NULL, NULL)) {
		Dwarf_Die cudie, die;

		if (dwarf_offdie(dw, cu + hsz, &cudie) && !dwarf_child(&cudie, &die)) {
			Dwarf_Die *stack = &die;

			do {
				Dwarf_Die child;
				Dwarf_Addr pc;

				if (dwarf_child(stack, &child))
					continue;
				do {
					if (dwarf_tag(&child) == DW_TAG_inlined_subroutine &&
					    !strcmp(dwarf_diename(&child), name) &&
					    !dwarf_entrypc(&child, &pc)) {
						vaddr_to_off(dwarf_getelf(dw), pc, off, pgoff);
						dwarf_end(dw);
						close(fd);
						return;
					}
				} while (!dwarf_siblingof(&child, &child));
			} while (!dwarf_siblingof(stack, stack));
		}
		cu = next;
	}
	fail_msg("no inlined %s", name);
}

static void test_inline(void **state)
{
	struct rpt_symbolizer *s = new_sym(NULL, true, false);
	int d = dso_for(s, fixture("inline"), fixture("inline"));
	const struct rpt_sym *f;
	uint64_t off, pgoff;

	(void)state;
	inline_off(fixture("inline"), "inl_leaf", &off, &pgoff);
	assert_int_equal(rpt_symbolizer__lookup(s, d, off, pgoff, &f), 2);
	assert_string_equal(NAME(s, f[0]), "inl_leaf");
	assert_int_equal(f[0].kind, RPT_FRAME_INLINE);
	assert_string_equal(NAME(s, f[1]), "inl_outer");
	assert_int_equal(f[1].kind, RPT_FRAME_USER);
	rpt_symbolizer__free(s);
}

/* @out: a copy of fixture @name with its debug sections zlib-compressed. */
static void compress_fixture(const char *name, const char *args, char *out, size_t cap)
{
	char cmd[3 * PATH_MAX];
	char dir[] = "/tmp/sa-test-zdebug.XXXXXX";

	assert_non_null(mkdtemp(dir));
	snprintf(out, cap, "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "objcopy %s --compress-debug-sections=zlib %s %s", args,
		 fixture(name), out);
	assert_int_equal(system(cmd), 0);
}

static void rm_tree(const char *path)
{
	char cmd[2 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", path);
	assert_int_equal(system(cmd), 0);
}

/* Frames of the first inlined inl_leaf, through @path (a copy of "inline"). */
static void check_inline(struct rpt_symbolizer *s, int d)
{
	const struct rpt_sym *f;
	uint64_t off, pgoff;

	inline_off(fixture("inline"), "inl_leaf", &off, &pgoff);
	assert_int_equal(rpt_symbolizer__lookup(s, d, off, pgoff, &f), 2);
	assert_string_equal(NAME(s, f[0]), "inl_leaf");
	assert_int_equal(f[0].kind, RPT_FRAME_INLINE);
	assert_string_equal(NAME(s, f[1]), "inl_outer");
}

static void test_inline_compressed(void **state)
{
	struct rpt_symbolizer *s = new_sym(NULL, true, false), *ls = new_sym(NULL, true, true);
	struct rpt_symbolizer *ref = new_sym(NULL, true, true);
	char path[PATH_MAX + 64];
	const struct rpt_sym *f, *g;
	uint64_t off, pgoff;
	int n, d, ld, rd;

	(void)state;
	compress_fixture("inline", "", path, sizeof(path));
	d = dso_for(s, path, path);
	check_inline(s, d);
	/* --lines: the same file:line as from the uncompressed file */
	ld = dso_for(ls, path, path);
	rd = dso_for(ref, fixture("inline"), fixture("inline"));
	inline_off(fixture("inline"), "inl_leaf", &off, &pgoff);
	n = rpt_symbolizer__lookup(ref, rd, off, pgoff, &g);
	assert_int_equal(n, 2);
	assert_non_null(strchr(NAME(ref, g[0]), ':'));
	assert_int_equal(rpt_symbolizer__lookup(ls, ld, off, pgoff, &f), n);
	for (int i = 0; i < n; i++)
		assert_string_equal(NAME(ls, f[i]), NAME(ref, g[i]));
	rpt_symbolizer__free(s);
	rpt_symbolizer__free(ls);
	rpt_symbolizer__free(ref);
	*strrchr(path, '/') = '\0';
	rm_tree(path);
}

/* A compressed build-id debug file, opened ahead by the prefetcher. */
static void test_prefetched_debug_file(void **state)
{
	char dbg[PATH_MAX + 64], dir[PATH_MAX + 64], bid_dir[2 * PATH_MAX], cmd[8 * PATH_MAX];
	uint8_t id[64];
	char hex[129];
	struct rpt_symbolizer *s;
	int n, d;

	(void)state;
	compress_fixture("inline", "--only-keep-debug", dbg, sizeof(dbg));
	n = rpt_elf__build_id(fixture("inline"), id, sizeof(id));
	assert_true(n > 2);
	for (int i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	snprintf(dir, sizeof(dir), "%s", dbg);
	*strrchr(dir, '/') = '\0';
	snprintf(bid_dir, sizeof(bid_dir), "%s/.build-id/%.2s", dir, hex);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && mv %s %s/%s.debug", bid_dir, dbg, bid_dir,
		 hex + 2);
	assert_int_equal(system(cmd), 0);
	s = new_sym(dir, true, false);
	d = rpt_symbolizer__dso(s, id, n, "/nonexistent/dir/inline", 0);
	assert_int_equal(rpt_symbolizer__dso(s, id, n, "/nonexistent/dir/inline", 0), d);
	check_inline(s, d);
	assert_int_equal(rpt_symbolizer__get(s, d)->source, RPT_SRC_DEBUG_FILE);
	rpt_symbolizer__free(s);
	/* queued and never taken: freed with the symbolizer */
	s = new_sym(dir, true, false);
	assert_true(rpt_symbolizer__dso(s, id, n, "/nonexistent/dir/inline", 0) >= 0);
	rpt_symbolizer__free(s);
	rm_tree(dir);
}

static void test_cxx(void **state)
{
	struct rpt_symbolizer *s = new_sym(NULL, true, false);
	struct rpt_symbolizer *raw = new_sym(NULL, false, false);
	int d = dso_for(s, fixture("cxx"), fixture("cxx"));
	int r = dso_for(raw, fixture("cxx"), fixture("cxx"));
	const struct rpt_sym *f;

	(void)state;
	assert_int_equal(lookup(s, d, fixture("cxx"), "_ZN5outer5inner3BoxIlE4spinEl", 2, &f), 1);
	assert_string_equal(NAME(s, f[0]), "outer::inner::Box<long>::spin(long)");
	assert_int_equal(lookup(s, d, fixture("cxx"), "_ZN5outer5inner4workEi", 2, &f), 1);
	assert_string_equal(NAME(s, f[0]), "outer::inner::work(int)");
	assert_int_equal(lookup(raw, r, fixture("cxx"), "_ZN5outer5inner4workEi", 2, &f), 1);
	assert_string_equal(NAME(raw, f[0]), "_ZN5outer5inner4workEi");
	rpt_symbolizer__free(s);
	rpt_symbolizer__free(raw);
}

/*
 * GCC's clones keep their suffix as c++filt writes it; a global function's
 * ".localalias" twin at the same address (which .symtab lists first, with
 * the locals) never names it.
 */
static void test_cxx_clones(void **state)
{
	struct rpt_symbolizer *s = new_sym(NULL, true, false);
	struct rpt_symbolizer *raw = new_sym(NULL, false, false);
	const char *bin = fixture("cxx_clone");
	int d = dso_for(s, bin, bin), r = dso_for(raw, bin, bin);
	const struct rpt_sym *f;

	(void)state;
	assert_int_equal(lookup(s, d, bin, "_ZN5outer5inner3BoxIlE4spinEl.isra.0", 1, &f), 1);
	assert_string_equal(NAME(s, f[0]), "outer::inner::Box<long>::spin(long) [clone .isra.0]");
	assert_int_equal(lookup(s, d, bin, "_ZN5outer5innerL6strideEll.constprop.0", 1, &f), 1);
	assert_string_equal(NAME(s, f[0]), "outer::inner::stride(long, long) [clone .constprop.0]");
	assert_int_equal(lookup(s, d, bin, "_ZN5outer5inner12shared_entryEl", 1, &f), 1);
	assert_string_equal(NAME(s, f[0]), "outer::inner::shared_entry(long)");
	assert_int_equal(lookup(raw, r, bin, "_ZN5outer5inner4workEi.localalias", 1, &f), 1);
	assert_string_equal(NAME(raw, f[0]), "_ZN5outer5inner4workEi");
	rpt_symbolizer__free(s);
	rpt_symbolizer__free(raw);
}

static void test_lines(void **state)
{
	struct rpt_symbolizer *s = new_sym(NULL, true, true);
	int d = dso_for(s, fixture("plain"), fixture("plain"));
	const struct rpt_sym *f;

	(void)state;
	assert_int_equal(lookup(s, d, fixture("plain"), "plain_alpha", 4, &f), 1);
	assert_memory_equal(NAME(s, f[0]), "plain_alpha sym_plain.c:", 24);
	rpt_symbolizer__free(s);
}

static void test_demangle(void **state)
{
	char buf[256];

	(void)state;
	assert_string_equal(rpt_demangle("_ZN2ns1fEv", buf, sizeof(buf)), "ns::f()");
	assert_string_equal(rpt_demangle("main", buf, sizeof(buf)), "main");
	assert_string_equal(rpt_demangle("_Znot mangled", buf, sizeof(buf)), "_Znot mangled");
	assert_string_equal(rpt_demangle("_Z3fooi.isra.0.cold", buf, sizeof(buf)),
			    "foo(int) [clone .isra.0] [clone .cold]");
	assert_string_equal(rpt_demangle("_ZL3barv.lto_priv.0", buf, sizeof(buf)),
			    "bar() [clone .lto_priv.0]");
}

/* A name libiberty rejects (it is in Debian's node): outlined, not left mangled. */
static void test_demangle_outline(void **state)
{
	static const char v8[] =
		"_ZN2v88internal11StringShape33DispatchToSpecificTypeWithoutCastIZNS1_"
		"22DispatchToSpecificTypeIZNKS0_6String7GetImplEiNS0_16PtrComprCageBaseERKNS0_"
		"31SharedStringAccessGuardIfNeededEE19StringGetDispatchertJRiRS5_S8_EEET0_S4_"
		"DpOT1_E17CastingDispatchertJRS4_SA_SB_S8_EEESC_SF_.isra.0";
	char buf[256], tiny[8];

	(void)state;
	assert_string_equal(rpt_demangle(v8, buf, sizeof(buf)),
			    "v8::internal::StringShape::DispatchToSpecificTypeWithoutCast<...> "
			    "[clone .isra.0]");
	assert_string_equal(rpt_demangle(v8, tiny, sizeof(tiny)), "v8::int");
	assert_string_equal(rpt_demangle("_ZN3", buf, sizeof(buf)), "_ZN3");
	assert_string_equal(rpt_demangle("_ZN99abc", buf, sizeof(buf)), "_ZN99abc");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_stripped_with_debug_file),
		cmocka_unit_test(test_debug_file_only),
		cmocka_unit_test(test_stripped_without_debug_file),
		cmocka_unit_test(test_build_id_mismatch),
		cmocka_unit_test(test_mismatch_falls_back_to_embedded),
		cmocka_unit_test(test_inline),
		cmocka_unit_test(test_inline_compressed),
		cmocka_unit_test(test_prefetched_debug_file),
		cmocka_unit_test(test_cxx),
		cmocka_unit_test(test_cxx_clones),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_demangle_outline),
	};
	const char *b = getenv("SA_BUILD");
	char exe[PATH_MAX];
	ssize_t n;

	(void)argc, (void)argv;
	if (b) {
		snprintf(data_dir, sizeof(data_dir), "%s/tests/data", b);
	} else {
		/* build/tests/unit/report/test_symbolize -> build/tests/data */
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		snprintf(data_dir, sizeof(data_dir), "%s/../../data", dirname(exe));
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
