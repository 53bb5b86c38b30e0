// SPDX-License-Identifier: MIT
/*
 * pyread.c - reads one CPython code object of another process: its type,
 * co_firstlineno, and co_qualname and co_filename as UTF-8, each string
 * checked to be a str and cut at REC_PY_NAME_MAX - 1 bytes. Whatever the
 * memory holds, a read costs at most five process_vm_readv() calls
 * (the code object, then a header and the bytes of each string).
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include "pyint.h"

/*
 * How another process's memory is read. tests/fuzz/fuzz_pycode.c builds
 * this file with -DREC_PY_VM_READV=its own function, which serves a fake
 * process's memory from the fuzzer's bytes; the recorder uses the syscall.
 */
#ifdef REC_PY_VM_READV
ssize_t REC_PY_VM_READV(pid_t pid, const struct iovec *local, unsigned long nlocal,
			const struct iovec *remote, unsigned long nremote, unsigned long flags);
#else
#define REC_PY_VM_READV process_vm_readv
#endif

static int peek(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};

	if (!addr || addr + len < addr)
		return -EFAULT;
	return REC_PY_VM_READV((pid_t)pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static uint64_t word(const uint8_t *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* Latin-1 bytes into UTF-8 in @out (room for @cap bytes and the NUL). */
static void latin1_to_utf8(const uint8_t *in, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 2 < cap; i++) {
		if (in[i] < 0x80) {
			out[o++] = (char)in[i];
		} else {
			out[o++] = (char)(0xc0 | (in[i] >> 6));
			out[o++] = (char)(0x80 | (in[i] & 0x3f));
		}
	}
	out[o] = '\0';
}

/*
 * The str at @addr into @out: a compact ASCII string's bytes, a compact
 * Latin-1 string converted, or the UTF-8 copy a str keeps once asked for
 * one; anything else reads as "?". @return 0, -EFAULT or -EBADMSG.
 */
static int read_str(uint32_t pid, const struct rec_py_bin *b, uint64_t addr, char *out)
{
	const struct rec_py_layout *l = b->layout;
	uint8_t h[128], data[REC_PY_NAME_MAX];
	uint64_t len, src = 0;
	uint32_t state;

	if (peek(pid, addr, h, l->str_latin1_data))
		return -EFAULT;
	if (word(h, 8) != b->unicode_type)
		return -EBADMSG;
	len = word(h, 16);
	memcpy(&state, h + l->str_state, sizeof(state));
	/* state: interned:2, kind:3, compact:1, ascii:1, ready:1, low bits first */
	if ((state >> 5) & 1) {
		if ((state >> 6) & 1)
			src = addr + l->str_ascii_data;
		else if (((state >> 2) & 7) == 1)
			src = addr + l->str_latin1_data;
	}
	if (!src && word(h, l->str_utf8)) {
		src = word(h, l->str_utf8);
		len = word(h, l->str_utf8_len);
		state |= 1u << 6; /* UTF-8 bytes: copied as they are */
	}
	if (!src) {
		strcpy(out, "?");
		return 0;
	}
	if (len > REC_PY_NAME_MAX - 1)
		len = REC_PY_NAME_MAX - 1;
	if (peek(pid, src, data, len))
		return -EFAULT;
	if ((state >> 6) & 1) {
		memcpy(out, data, len);
		out[len] = '\0';
		/* a NUL inside would cut the name short: keep what precedes it */
		return 0;
	}
	latin1_to_utf8(data, len, out, REC_PY_NAME_MAX);
	return 0;
}

int rec_py__read_code(uint32_t pid, const struct rec_py_bin *b, uint64_t code,
		      struct rec_py_code *out)
{
	const struct rec_py_layout *l = b ? b->layout : NULL;
	uint8_t h[256];
	int32_t line;
	int err;

	if (!l || l->code_head > sizeof(h))
		return -EBADMSG;
	if (peek(pid, code, h, l->code_head))
		return -EFAULT;
	if (word(h, 8) != b->code_type)
		return -EBADMSG;
	memcpy(&line, h + l->co_firstlineno, sizeof(line));
	out->line = line > 0 ? (uint32_t)line : 0;
	err = read_str(pid, b, word(h, l->co_qualname), out->name);
	if (!err)
		err = read_str(pid, b, word(h, l->co_filename), out->file);
	return err;
}
