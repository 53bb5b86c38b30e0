// SPDX-License-Identifier: MIT
/*
 * pyfind.c - which interpreter a process runs: a mapping of python3.X or
 * libpython3.X.so, its version and _PyRuntime read from the ELF (never from
 * the process), and the offsets of the structures the BPF program walks,
 * from a table of layouts confirmed per version (docs/python.md).
 */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include "clock.h"
#include "pyint.h"
#include "safeopen.h"

/*
 * Layouts by version. A row is used only when the ELF's Py_Version is in
 * [min, max] and its _PyRuntime symbol is exactly runtime_size bytes: a
 * build whose _PyRuntimeState differs in size is refused, not guessed.
 *
 * 3.11: confirmed 2026-12-02 against Debian 12's python3.11 3.11.2-6+deb12u6
 * by offsetof() from its own internal headers (libpython3.11-dev, compiled
 * with Py_BUILD_CORE: tests/tools/pyoffsets.c prints them) and against the
 * ELF: st_size of _PyRuntime is 0x28b20 = sizeof(_PyRuntimeState) in
 * /usr/bin/python3.11 and in libpython3.11.so.1.0 (readelf -sW). 3.11's ABI promise covers these
 * structures for every 3.11.x; the size check guards against patched builds.
 *
 * 3.12 and 3.13: confirmed 2026-12-07 the same way against pyenv's 3.12.1
 * and 3.13.0 (their include/python3.1x, tests/tools/pyoffsets.c) and their
 * libpython3.1x.so.1.0: _PyRuntime 0x704a8 and 0x452b8 bytes. 3.12 marks
 * the start of each eval-loop call by a frame of the C stack (owner 3)
 * instead of is_entry; 3.13 drops _PyCFrame (current_frame is in the
 * thread state) and names f_code f_executable. Both drop str's wstr.
 *
 * 3.8, 3.9 and 3.10: confirmed 2026-12-07 against pyenv's 3.8.18, 3.9.18
 * and 3.10.13 (tests/tools/pyoffsets_old.c; _PyRuntime 1,464, 656 and 672 bytes); the
 * offsets the walk and the names need are the same in all three. Their
 * frames are PyFrameObjects, each run by its own eval-loop call, found from
 * PyThreadState.frame; a thread state says whose it is by thread_id, its
 * pthread_self(), the fs base on x86-64 (no native_thread_id before 3.11:
 * not offered elsewhere). They export no Py_Version: the minor version is
 * the interpreter file's name (python3.X, libpython3.X.so), the row still
 * used only with a _PyRuntime of its exact size. No co_qualname before
 * 3.11: frames are named by co_name.
 */
/* str without wstr (3.12+): PyASCIIObject is 40 bytes, PyCompactUnicodeObject 56 */
#define STR_312                                                                                    \
	.str_state = 32, .str_ascii_data = 40, .str_utf8_len = 40, .str_utf8 = 48,                 \
	.str_latin1_data = 56
#define OLD_FRAMES                                                                                 \
	.off = {.rt_interp_head = 32,                                                              \
		.is_tstate_head = 8,                                                               \
		.ts_next = 8,                                                                      \
		.ts_native_tid = 176,                                                              \
		.ts_cframe = 24,                                                                   \
		.fr_code = 32,                                                                     \
		.fr_previous = 24,                                                                 \
		.flags = SA_PY_F_NO_CFRAME | SA_PY_F_ALL_ENTRY | SA_PY_F_PTHREAD},                 \
	.co_firstlineno = 40, .co_filename = 104, .co_qualname = 112, .code_head = 120,            \
	.str_state = 32, .str_ascii_data = 48, .str_utf8_len = 48, .str_utf8 = 56,                 \
	.str_latin1_data = 72
static const struct rec_py_layout layouts[] = {
	{.min = 0x03080000, .max = 0x0308ffff, .runtime_size = 1464, OLD_FRAMES},
	{.min = 0x03090000, .max = 0x0309ffff, .runtime_size = 656, OLD_FRAMES},
	{.min = 0x030a0000, .max = 0x030affff, .runtime_size = 672, OLD_FRAMES},
	{
		.min = 0x030b0000,
		.max = 0x030bffff,
		.runtime_size = 166688,
		.off =
			{
				.rt_interp_head = 40,
				.is_tstate_head = 16,
				.ts_next = 8,
				.ts_native_tid = 160,
				.ts_cframe = 56,
				.cf_frame = 8,
				.fr_code = 32,
				.fr_previous = 48,
				.fr_is_entry = 68,
			},
		.co_firstlineno = 72,
		.co_filename = 112,
		.co_qualname = 128,
		.code_head = 136,
		.str_state = 32,
		.str_ascii_data = 48,
		.str_utf8_len = 48,
		.str_utf8 = 56,
		.str_latin1_data = 72,
	},
	{
		.min = 0x030c0000,
		.max = 0x030cffff,
		.runtime_size = 459944,
		.off =
			{
				.rt_interp_head = 40,
				.is_tstate_head = 72,
				.ts_next = 8,
				.ts_native_tid = 144,
				.ts_cframe = 56,
				.cf_frame = 0,
				.fr_code = 0,
				.fr_previous = 8,
				.fr_is_entry = 70,
				.flags = SA_PY_F_SHIM,
			},
		.co_firstlineno = 68,
		.co_filename = 112,
		.co_qualname = 128,
		.code_head = 136,
		STR_312,
	},
	{
		.min = 0x030d0000,
		.max = 0x030dffff,
		.runtime_size = 283320,
		.off =
			{
				.rt_interp_head = 632,
				.is_tstate_head = 7344,
				.ts_next = 8,
				.ts_native_tid = 160,
				.ts_cframe = 72,
				.fr_code = 0,
				.fr_previous = 8,
				.fr_is_entry = 70,
				.flags = SA_PY_F_SHIM | SA_PY_F_NO_CFRAME,
			},
		.co_firstlineno = 68,
		.co_filename = 112,
		.co_qualname = 128,
		.code_head = 136,
		STR_312,
	},
};

/* Interpreter files tried per process: python3.X and libpython3.X.so, and a spare. */
#define MAX_FILES 3

/*
 * An interpreter's binary: python3.X or libpython3.X.so*, any directory.
 * @return X, or -1 for another name.
 */
static int python_name(const char *path)
{
	const char *b = strrchr(path, '/');
	int minor = 0;

	b = b ? b + 1 : path;
	if (!strncmp(b, "lib", 3))
		b += 3;
	if (strncmp(b, "python3.", 8))
		return -1;
	b += 8;
	if (*b < '0' || *b > '9')
		return -1;
	for (; *b >= '0' && *b <= '9'; b++)
		minor = minor < 1000 ? minor * 10 + (*b - '0') : minor;
	if (*b == 'm' && minor < 8)
		b++; /* 3.7's and 3.6's ABI tag: libpython3.7m.so */
	return !*b || !strncmp(b, ".so", 3) ? minor : -1;
}

/*
 * The interpreter files mapped in /proc/PID/maps, each by its lowest
 * mapping (maps are sorted: the first PT_LOAD's): a shared build maps
 * python3.X, which holds no _PyRuntime, and libpython3.X.so, which does.
 * @return how many (at most @cap) into @b, or -errno.
 */
static int find_mappings(uint32_t pid, struct rec_py_bin *b, int cap)
{
	char path[64], line[4096 + 128], file[4096];
	unsigned int maj, min;
	unsigned long long s, e, off, ino;
	uint64_t until = sac_now_ns(CLOCK_MONOTONIC) + 100000000ull;
	int found = 0, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/*
	 * bounded: a process with millions of mappings is read in part, and in
	 * 100 ms at most (60,000 lines of 4 KB paths take the kernel 4.4 s)
	 */
	while (n++ < 65536 && found < cap && sac_now_ns(CLOCK_MONOTONIC) < until &&
	       fgets(line, sizeof(line), f)) {
		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu %4095s", &s, &e, &off, &maj, &min,
			   &ino, file) < 7 ||
		    file[0] != '/' || python_name(file) < 0)
			continue;
		if (found && !strcmp(file, b[found - 1].path))
			continue; /* the same file's next mapping */
		b[found] = (struct rec_py_bin){
			.start = s, .end = e, .pgoff = off, .dev = makedev(maj, min), .ino = ino};
		snprintf(b[found].path, sizeof(b[found].path), "%s", file);
		b[found].name_minor = python_name(file);
		found++;
	}
	fclose(f);
	return found;
}

struct elf_syms {
	uint64_t runtime, runtime_size, version_addr, code_type, unicode_type;
	uint64_t first_vaddr;
	bool have_load;
};

static void note_sym(struct elf_syms *y, const char *name, const GElf_Sym *s)
{
	if (!strcmp(name, "_PyRuntime")) {
		y->runtime = s->st_value;
		y->runtime_size = s->st_size;
	} else if (!strcmp(name, "Py_Version")) {
		y->version_addr = s->st_value;
	} else if (!strcmp(name, "PyCode_Type")) {
		y->code_type = s->st_value;
	} else if (!strcmp(name, "PyUnicode_Type")) {
		y->unicode_type = s->st_value;
	}
}

static void scan_syms(Elf *elf, struct elf_syms *y)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n && i < (1u << 22); i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s) || !s.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (name && name[0] && (name[0] == '_' || name[0] == 'P'))
				note_sym(y, name, &s);
		}
	}
}

/* The 4 bytes at virtual address @va of the file (Py_Version's value). */
static int read_u32_at(Elf *elf, int fd, uint64_t va, uint32_t *v)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		if (va >= sh.sh_addr && va + 4 <= sh.sh_addr + sh.sh_size)
			return pread(fd, v, 4, (off_t)(sh.sh_offset + va - sh.sh_addr)) == 4 ? 0
											     : -EIO;
	}
	return -ENOENT;
}

static void first_load(Elf *elf, struct elf_syms *y)
{
	size_t n = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return;
	for (size_t i = 0; i < n && !y->have_load; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			y->first_vaddr = ph.p_vaddr - ph.p_offset; /* the vaddr of file offset 0 */
			y->have_load = true;
		}
}

const struct rec_py_layout *rec_py__layout(uint32_t version, uint64_t runtime_size)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
#ifndef __x86_64__
		if (layouts[i].off.flags & SA_PY_F_PTHREAD)
			continue; /* pthread_self() is the fs base on x86-64 only */
#endif
		if (version >= layouts[i].min && version <= layouts[i].max &&
		    runtime_size == layouts[i].runtime_size)
			return &layouts[i];
	}
	return NULL;
}

/*
 * The version of an interpreter without Py_Version (before 3.11): 3.X of
 * its file's name, the micro version unknown (REC_PY_MICRO_UNKNOWN). Only
 * 3.8 to 3.10 have rows, so only they are ever read by it.
 */
static uint32_t version_from_name(const struct rec_py_bin *b)
{
	return 0x03000000u | (uint32_t)(b->name_minor & 0xff) << 16 | REC_PY_MICRO_UNKNOWN << 8;
}

/*
 * Read the interpreter's ELF, mapped in @pid as @b: its version and the
 * addresses (load bias applied) of _PyRuntime and the types names are
 * checked against. @return 0 with b->layout set, -ENOTSUP for a CPython
 * whose layout is not confirmed, or -errno.
 */
static int read_elf(uint32_t pid, struct rec_py_bin *b)
{
	struct elf_syms y = {0};
	Elf *elf = NULL;
	int fd, err = -ENOENT;
	uint64_t bias;

	fd = rec_safe_open_mapped(pid, b->start, b->end, b->path, b->dev, b->ino);
	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	elf = rec_safe_elf_begin(fd, ELF_C_READ_MMAP);
	if (!elf)
		goto cleanup;
	scan_syms(elf, &y);
	first_load(elf, &y);
	b->version = version_from_name(b);
	b->why = "no _PyRuntime, PyCode_Type or PyUnicode_Type symbol";
	if (!y.runtime && !y.version_addr && y.have_load && !strstr(b->path, "/libpython")) {
		err = -EAGAIN; /* python3.X linking libpython, which may not be mapped yet */
		goto cleanup;
	}
	if (!y.runtime || !y.code_type || !y.unicode_type || !y.have_load) {
		err = -ENOTSUP; /* a python3.X or libpython3.X without what the reader needs */
		goto cleanup;
	}
	b->why = "layout not confirmed";
	err = y.version_addr ? read_u32_at(elf, fd, y.version_addr, &b->version) : 0;
	if (err)
		goto cleanup;
	bias = b->start - b->pgoff - y.first_vaddr;
	b->runtime = bias + y.runtime;
	b->code_type = bias + y.code_type;
	b->unicode_type = bias + y.unicode_type;
	b->layout = rec_py__layout(b->version, y.runtime_size);
	err = b->layout ? 0 : -ENOTSUP;
cleanup:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int rec_py__find(uint32_t pid, struct rec_py_bin *b)
{
	struct rec_py_bin *c = calloc(MAX_FILES, sizeof(*c));
	int n, err = -ENOENT;

	if (!c)
		return -ENOMEM;
	memset(b, 0, sizeof(*b));
	n = find_mappings(pid, c, MAX_FILES);
	for (int i = 0; i < n && err != 0 && err != -ENOTSUP; i++) {
		int e = read_elf(pid, &c[i]);

		if (e != -EAGAIN || err == -ENOENT)
			err = e; /* -EAGAIN only when no file said more */
		if (!err || err == -ENOTSUP || err == -EAGAIN)
			*b = c[i];
	}
	free(c);
	return n < 0 ? n : err;
}

void rec_py__version_str(uint32_t v, char *buf, size_t sz)
{
	if (((v >> 8) & 0xff) == REC_PY_MICRO_UNKNOWN)
		snprintf(buf, sz, "%u.%u", v >> 24, (v >> 16) & 0xff);
	else
		snprintf(buf, sz, "%u.%u.%u", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff);
}
