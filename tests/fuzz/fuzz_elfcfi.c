// SPDX-License-Identifier: MIT
/*
 * fuzz_elfcfi.c - libFuzzer harness: the bytes are a binary another user
 * mapped, read by record/ as sa-record reads it: its function symbols and
 * build id (elfread.c), its CFI rows at a few addresses (cfirows.c,
 * cfiread.c) and the in-kernel unwinder's table of it (uwbuild.c), all
 * from a memfd through the caps of safeopen.h.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cfirows.h"
#include "elfread.h"
#include "golines.h"
#include "uwtab.h"

static volatile uint64_t sink;

static void symbols(int fd)
{
	struct rec_elftab t;
	uint8_t bid[64];
	size_t i;

	if (!rec_elftab__read(fd, NULL, 0, &t)) {
		for (i = 0; i < t.nsyms; i++) {
			assert(t.syms[i].name < t.names_len);
			assert(!i || t.syms[i - 1].off < t.syms[i].off);
			sink += (uint8_t)t.names[t.syms[i].name];
			/* the last symbol may keep a zero size: it covers nothing */
			assert(!t.syms[i].size || rec_elftab__lookup(&t, t.syms[i].off) == (long)i);
		}
		/* a Go binary's line tables, read for the symbols' first bytes */
		for (i = 0; i < t.nsyms && i < 64; i++)
			sink += (uint64_t)rec_golines__note(t.golines, t.syms[i].off + 1);
		sink += (uint64_t)rec_golines__flush(t.golines, NULL);
		rec_elftab__release(&t);
	}
	sink += (uint64_t)rec_elf__build_id_fd(fd, bid, sizeof(bid));
}

static void rows(int fd, const uint8_t *data, size_t size)
{
	struct rec_cfirows *t;
	struct sac_cfi_row row;
	uint64_t va = 0;
	int i;

	if (rec_cfirows__open(fd, &t))
		return;
	memcpy(&va, data, size < 8 ? size : 8);
	for (i = 0; i < 16; i++) {
		sink += (uint64_t)rec_cfirows__at(t, va + (uint64_t)i * 0x31, &row);
		sink += (uint64_t)rec_cfirows__at(t, 0x1000 + (uint64_t)i * 0x40, &row);
		sink += (uint64_t)rec_cfirows__at_offset(t, (uint64_t)i * 0x100, &row);
	}
	rec_cfirows__free(t);
}

static void table(int fd)
{
	struct rec_uwfile f;
	size_t i;

	if (rec_uw_build(fd, 1000000000ull, NULL, &f))
		return;
	for (i = 1; i < f.nrows; i++)
		assert(f.rows[i - 1].pc < f.rows[i].pc);
	sink += f.nrows;
	free(f.rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz_elfcfi", MFD_CLOEXEC);

	assert(fd >= 0);
	assert(write(fd, data, size) == (ssize_t)size);
	symbols(fd);
	rows(fd, data, size);
	table(fd);
	close(fd);
	return 0;
}
