// SPDX-License-Identifier: MIT
/*
 * fuzz_pycode.c - libFuzzer harness: the bytes are the memory of a process
 * that claims to run CPython (docs/python.md), mapped at IMG, with a code
 * object at IMG. record/python/pyread.c names it as sa-record does, with
 * each row of the layout table in turn (3.8 to 3.13, every input read once
 * per layout: the offsets differ, the bounds must not), its reads of the process served
 * from the bytes (pyread.c is built with -DREC_PY_VM_READV=fuzz_pycode_readv,
 * its only seam). Whatever the bytes hold: at most five reads of at most
 * 256 bytes each (every one fills the buffer it was given, so ASan sees a
 * buffer shorter than the length asked), an answer of 0, -EFAULT or
 * -EBADMSG, and names that end within REC_PY_NAME_MAX bytes.
 *
 * Seeds (corpus/fuzz_pycode/): a code object with compact-ASCII names,
 * one with a Latin-1 name, one with names in their UTF-8 copies, one whose
 * name claims 2^40 bytes, one whose type is not PyCode_Type, one whose
 * strings point outside the image. Pointers in them are IMG + offset,
 * types CODE_T and STR_T, little-endian.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "pyint.h"

#define PID    4242u
#define IMG    0x7f1200000000ull
#define CODE_T 0x5555000c0de0ull /* PyCode_Type's address in the fake process */
#define STR_T  0x555500051700ull /* PyUnicode_Type's */

/* The largest read the reader may ask for: its buffers are 256 bytes. */
#define READ_MAX 256

static const uint8_t *mem;
static size_t memlen;
static unsigned nreads;

ssize_t fuzz_pycode_readv(pid_t pid, const struct iovec *local, unsigned long nlocal,
			  const struct iovec *remote, unsigned long nremote, unsigned long flags);

/* process_vm_readv() of the fake process: its memory is [IMG, IMG + memlen). */
ssize_t fuzz_pycode_readv(pid_t pid, const struct iovec *local, unsigned long nlocal,
			  const struct iovec *remote, unsigned long nremote, unsigned long flags)
{
	uint64_t addr = (uint64_t)(uintptr_t)remote->iov_base, off;
	size_t len = local->iov_len, n;

	assert(pid == (pid_t)PID && nlocal == 1 && nremote == 1 && !flags);
	assert(remote->iov_len == len);
	assert(len <= READ_MAX); /* bounded, whatever the lengths the memory claims */
	nreads++;
	assert(nreads <= 5);		    /* the code object, each string's header and bytes */
	memset(local->iov_base, 0xa5, len); /* the buffer must hold what was asked */
	if (addr < IMG || addr - IMG >= memlen) {
		errno = EFAULT;
		return -1;
	}
	off = addr - IMG;
	n = memlen - off < len ? memlen - off : len; /* a partial read, as at a fault */
	memcpy(local->iov_base, mem + off, n);
	return (ssize_t)n;
}

/* Name the code object at IMG with the layout of @version, as sa-record does. */
static void read_one(const uint8_t *data, size_t size, uint32_t version, uint64_t runtime_size)
{
	const struct rec_py_layout *l = rec_py__layout(version, runtime_size);
	struct rec_py_bin b = {.version = version, .runtime = IMG + 0x100000};
	struct rec_py_code c;
	int err;

	assert(l);
	b.layout = l;
	b.code_type = CODE_T;
	b.unicode_type = STR_T;
	mem = data;
	memlen = size;
	nreads = 0;
	memset(&c, 0x5a, sizeof(c));
	err = rec_py__read_code(PID, &b, IMG, &c);
	assert(err == 0 || err == -EFAULT || err == -EBADMSG);
	if (!err) {
		assert(memchr(c.name, '\0', sizeof(c.name)));
		assert(memchr(c.file, '\0', sizeof(c.file)));
	}
	/* no code object at address 0, and none without a layout */
	nreads = 0;
	assert(rec_py__read_code(PID, &b, 0, &c) == -EFAULT && nreads == 0);
	b.layout = NULL;
	assert(rec_py__read_code(PID, &b, IMG, &c) == -EBADMSG && nreads == 0);
}

/* Each layout of the table: a version and its _PyRuntime's size */
static const struct {
	uint32_t version;
	uint64_t runtime_size;
} layouts[] = {
	{0x0308ff00, 1464},   {0x0309ff00, 656},    {0x030aff00, 672},
	{0x030b02f0, 166688}, {0x030c01f0, 459944}, {0x030d00f0, 283320},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		read_one(data, size, layouts[i].version, layouts[i].runtime_size);
	return 0;
}
