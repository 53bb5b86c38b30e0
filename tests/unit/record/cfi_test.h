/* SPDX-License-Identifier: MIT */
/*
 * cfi_test.h - what the CFI unit test test_cfirows.c
 * uses: the build directory, scratch copies of ELF files, and where a
 * section's header, name and data sit in a file, for tests that cut or
 * rename it. Include after <cmocka.h> and <gelf.h>.
 */
#ifndef CFI_TEST_H
#define CFI_TEST_H

#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char build_dir[PATH_MAX / 2]; /* room for a relative path after it */

/* $SA_BUILD, or the build directory this test binary sits in (build/tests/unit/record). */
static inline void set_build_dir(void)
{
	const char *b = getenv("SA_BUILD");
	char exe[PATH_MAX];
	ssize_t n;

	if (b) {
		snprintf(build_dir, sizeof(build_dir), "%s", b);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(build_dir, sizeof(build_dir), "%s/../../..", dirname(exe));
}

static inline void path_of(char *buf, size_t cap, const char *rel)
{
	snprintf(buf, cap, "%s/%s", build_dir, rel);
}

/* An empty file in /tmp, open for reading and writing; the caller unlinks @name. */
static inline int tmp_file(char *name, size_t cap)
{
	int fd;

	snprintf(name, cap, "/tmp/test_cfi.XXXXXX");
	fd = mkstemp(name);
	assert_true(fd >= 0);
	return fd;
}

/* A copy of @src, as tmp_file(). */
static inline int tmp_copy(const char *src, char *name, size_t cap)
{
	char buf[65536];
	int in = open(src, O_RDONLY), out = tmp_file(name, cap);
	ssize_t n;

	assert_true(in >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	return out;
}

/* Where a section's header and name string are in the file, and its data. */
struct shloc {
	off_t hdr_at, name_at, size_at;
	uint64_t off, size;
};

static inline void find_section(int fd, const char *name, struct shloc *l)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Ehdr eh;
	GElf_Shdr sh, str;

	assert_non_null(e);
	assert_non_null(gelf_getehdr(e, &eh));
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	assert_non_null(gelf_getshdr(elf_getscn(e, shstrndx), &str));
	memset(l, 0, sizeof(*l));
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && !strcmp(elf_strptr(e, shstrndx, sh.sh_name), name)) {
			l->hdr_at = (off_t)(eh.e_shoff + elf_ndxscn(scn) * eh.e_shentsize);
			l->size_at = l->hdr_at + (off_t)offsetof(Elf64_Shdr, sh_size);
			l->name_at = (off_t)(str.sh_offset + sh.sh_name);
			l->off = sh.sh_offset;
			l->size = sh.sh_size;
		}
	elf_end(e);
	assert_true(l->size > 16);
}

/* A scratch copy of build file @rel, as tmp_copy(), with its .eh_frame in @eh. */
static inline int tmp_build_copy(const char *rel, char *name, size_t cap, struct shloc *eh)
{
	char src[PATH_MAX];
	int fd;

	path_of(src, sizeof(src), rel);
	fd = tmp_copy(src, name, cap);
	find_section(fd, ".eh_frame", eh);
	return fd;
}

/* Rename section @name by its last letter, so that neither libdw nor we find it. */
static inline void rename_section(int fd, const char *name)
{
	struct shloc l;
	char x = 'X';

	find_section(fd, name, &l);
	assert_int_equal(pwrite(fd, &x, 1, l.name_at + (off_t)strlen(name) - 1), 1);
}

/*
 * Write 1 + @i % 8 random bytes at a random place in section @l, keeping the
 * 8 bytes there in @orig. @return the place, for unscribble().
 */
static inline off_t scribble(int fd, const struct shloc *l, unsigned i, unsigned *seed,
			     uint8_t orig[8])
{
	off_t pos = (off_t)(l->off + (uint64_t)rand_r(seed) % (l->size - 8));
	unsigned j;
	uint8_t junk;

	assert_int_equal(pread(fd, orig, 8, pos), 8);
	for (j = 0; j < 1 + i % 8; j++) {
		junk = (uint8_t)rand_r(seed);
		assert_int_equal(pwrite(fd, &junk, 1, pos + j), 1);
	}
	return pos;
}

static inline void unscribble(int fd, off_t pos, const uint8_t orig[8])
{
	assert_int_equal(pwrite(fd, orig, 8, pos), 8);
}

#endif /* CFI_TEST_H */
