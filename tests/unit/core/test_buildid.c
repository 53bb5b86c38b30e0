// SPDX-License-Identifier: MIT
/*
 * test_buildid.c - sac_buildid__read() against the build id handed to the
 * linker (--build-id=0x...) and against binutils' `readelf -n` on fixtures,
 * a debug file and Debian's own binaries; files with the note only in a
 * section, with no note, or not ELF at all.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>
#include "buildid.h"

#ifndef TD
#define TD "build/tests/data"
#endif

/* sac_buildid__read() on @path as lowercase hex into @hex, or its -errno. */
static int read_hex(const char *path, char *hex, size_t cap_bytes)
{
	uint8_t bid[64];
	int fd, n, i;
	Elf *e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	n = sac_buildid__read(e, bid, cap_bytes);
	elf_end(e);
	close(fd);
	hex[0] = 0;
	for (i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", bid[i]);
	return n;
}

/* `readelf -n`'s "Build ID:" of @path, "" when it shows none. */
static void readelf_hex(const char *path, char *hex, size_t sz)
{
	char cmd[1024], line[512], *p;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	hex[0] = 0;
	while (fgets(line, sizeof(line), f))
		if ((p = strstr(line, "Build ID: ")) && !hex[0])
			snprintf(hex, sz, "%.*s", (int)strcspn(p + 10, " \n"), p + 10);
	pclose(f);
}

static void test_linker_given(void **state)
{
	char hex[160];

	(void)state;
	assert_int_equal(read_hex(TD "/mismatch", hex, 64), 20);
	assert_string_equal(hex, "0123456789abcdef0123456789abcdef01234567");
	/* too small a buffer is an error, not a truncated id */
	assert_int_equal(read_hex(TD "/mismatch", hex, 19), -ENOSPC);
}

static void test_against_readelf(void **state)
{
	static const char *const files[] = {
		TD "/plain", TD "/stripped", TD "/plt_debug", "/bin/dash", "/usr/bin/python3",
	};
	char got[160], want[160];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (access(files[i], R_OK))
			continue;
		readelf_hex(files[i], want, sizeof(want));
		assert_true(want[0]);
		assert_true(read_hex(files[i], got, 64) > 0);
		assert_string_equal(got, want);
	}
}

static char tmp_path[64];

/* `sh -c @cmd` with $T set to a temporary path and $TD to the fixtures. */
static const char *shell(const char *cmd)
{
	char buf[1024];

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/test_buildid.%d", (int)getpid());
	snprintf(buf, sizeof(buf), "T=%s TD=%s; %s", tmp_path, TD, cmd);
	assert_int_equal(system(buf), 0);
	return tmp_path;
}

static void test_section_only(void **state)
{
	char got[160], want[160];
	const char *p;

	(void)state;
	/* an object file has no program headers: only its SHT_NOTE section */
	p = shell("printf '\\004\\0\\0\\0\\006\\0\\0\\0\\003\\0\\0\\0GNU\\0"
		  "\\252\\273\\314\\335\\356\\377\\0\\0' >$T.n && "
		  "objcopy --add-section .note.gnu.build-id=$T.n $TD/mismatch.o $T && rm $T.n");
	readelf_hex(p, want, sizeof(want));
	assert_string_equal(want, "aabbccddeeff");
	assert_int_equal(read_hex(p, got, 64), 6);
	assert_string_equal(got, want);
	unlink(p);
}

static void test_no_note(void **state)
{
	char got[160], want[160];
	const char *p;

	(void)state;
	p = shell("objcopy --remove-section .note.gnu.build-id $TD/plain $T");
	readelf_hex(p, want, sizeof(want));
	assert_string_equal(want, "");
	assert_int_equal(read_hex(p, got, 64), -ENOENT);
	unlink(p);
}

static void test_not_elf(void **state)
{
	char hex[160];

	(void)state;
	assert_int_equal(read_hex("/etc/passwd", hex, 64), -ENOEXEC);
	assert_int_equal(sac_buildid__read(NULL, (uint8_t *)hex, 20), -ENOEXEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linker_given), cmocka_unit_test(test_against_readelf),
		cmocka_unit_test(test_section_only), cmocka_unit_test(test_no_note),
		cmocka_unit_test(test_not_elf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
