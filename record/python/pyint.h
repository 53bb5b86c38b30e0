/* SPDX-License-Identifier: MIT */
/*
 * pyint.h - private to record/python/: the layout table's rows, an
 * interpreter found in a process (pyfind.c), and the reader of code
 * objects (pynames.c).
 */
#ifndef REC_PYINT_H
#define REC_PYINT_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <saf.h>
#include "sa_shared.h"

_Static_assert(sizeof(struct sa_py_proc) == 40, "sa_py_proc layout");
_Static_assert(sizeof(struct sa_rb_pywake) == 8, "sa_rb_pywake layout");
_Static_assert(SA_PY_TAG == SAF_PY_TAG && SA_PY_TAG_MASK == SAF_PY_TAG_MASK &&
		       SA_PY_ENTRY == SAF_PY_ENTRY && SA_PY_ADDR_MASK == SAF_PY_ADDR_MASK,
	       "Python frame words: bpf/sa_shared.h and docs/format.md agree");

/* A version range's offsets: the BPF walk's, then those the names are read by. */
struct rec_py_layout {
	uint32_t min, max;     /* Py_Version (PY_VERSION_HEX) range */
	uint64_t runtime_size; /* st_size of _PyRuntime: sizeof(_PyRuntimeState) */
	struct sa_py_proc off; /* the offsets only */
	uint16_t co_firstlineno, co_filename, co_qualname; /* co_qualname: co_name before 3.11 */
	uint16_t code_head;		 /* bytes of a code object read: past co_qualname */
	uint16_t str_state;		 /* PyASCIIObject.state */
	uint16_t str_ascii_data;	 /* sizeof(PyASCIIObject): a compact ASCII string's bytes */
	uint16_t str_utf8_len, str_utf8; /* PyCompactUnicodeObject.utf8_length, utf8 */
	uint16_t str_latin1_data;	 /* sizeof(PyCompactUnicodeObject) */
};

/* An interpreter mapped in a process. */
struct rec_py_bin {
	uint64_t start, end, pgoff, dev, ino; /* its lowest mapping */
	char path[4096];
	int name_minor;				   /* X of the file's name python3.X */
	uint32_t version;			   /* Py_Version (before 3.11: of the name) */
	uint64_t runtime, code_type, unicode_type; /* addresses in the process */
	const struct rec_py_layout *layout;	   /* NULL: not confirmed */
	const char *why; /* static: why its frames are not read (refused) */
};

/**
 * rec_py__find() - the interpreter of process @pid into @b.
 * @return 0 with b->layout set; -ENOTSUP for a CPython whose layout is not
 * confirmed (b->version and b->path set); -EAGAIN for a python3.X whose
 * libpython is not mapped (yet: ld.so may be loading it); -ENOENT for none;
 * or -errno.
 */
int rec_py__find(uint32_t pid, struct rec_py_bin *b);

/**
 * rec_py__layout() - the table's row for Py_Version @version and a
 * _PyRuntime of @runtime_size bytes, or NULL: not confirmed.
 */
const struct rec_py_layout *rec_py__layout(uint32_t version, uint64_t runtime_size);

/* The micro version byte of a version read from a file's name (3.8-3.10) */
#define REC_PY_MICRO_UNKNOWN 0xffu

/** rec_py__version_str() - "3.11.2" of a Py_Version value ("3.10": micro unknown). */
void rec_py__version_str(uint32_t v, char *buf, size_t sz);

/* A code object's names, as read (pynames.c). Strings are NUL-terminated. */
#define REC_PY_NAME_MAX 256
struct rec_py_code {
	char name[REC_PY_NAME_MAX], file[REC_PY_NAME_MAX];
	uint32_t line;
};

/**
 * rec_py__read_code() - read code object @code of @pid: its type must be
 * @b's PyCode_Type and its strings of PyUnicode_Type, each read bounded.
 * @return 0, or -EFAULT (unreadable) / -EBADMSG (not a code object).
 */
int rec_py__read_code(uint32_t pid, const struct rec_py_bin *b, uint64_t code,
		      struct rec_py_code *out);

#endif /* REC_PYINT_H */
