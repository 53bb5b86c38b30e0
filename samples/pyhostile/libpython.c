// SPDX-License-Identifier: MIT
/*
 * libpython.c - built as libpython3.11.so: what sa-record's finder keys on
 * in an interpreter (record/python/pyfind.c) and nothing of CPython. Its
 * ELF exports Py_Version (3.11.2), a _PyRuntime of exactly the size the
 * 3.11 row was confirmed with, PyCode_Type and PyUnicode_Type, so the
 * process that maps it is answered "frames read"; what the structures
 * hold is up to the program (pyhostile). _PyEval_EvalFrameDefault is the
 * native call sa-report puts Python frames in place of.
 */
#include <stdint.h>

unsigned char _PyRuntime[166688] __attribute__((aligned(64)));
const unsigned long Py_Version = 0x030b02f0; /* 3.11.2 final */
unsigned char PyCode_Type[416] __attribute__((aligned(16)));
unsigned char PyUnicode_Type[416] __attribute__((aligned(16)));

/*
 * Where the library's own objects are: a program referring to them as
 * extern data would get copies of its own (copy relocations), which the
 * recorder, reading the library's symbols, would not look at.
 */
void *pyh_runtime(void)
{
	return _PyRuntime;
}

void *pyh_code_type(void)
{
	return PyCode_Type;
}

void *pyh_unicode_type(void)
{
	return PyUnicode_Type;
}

/* Runs @fn(@arg) "in the eval loop": a native frame of this library's. */
__attribute__((noinline)) void _PyEval_EvalFrameDefault(void (*fn)(void *), void *arg)
{
	fn(arg);
	__asm__ volatile("" ::: "memory"); /* no tail call: this frame stays */
}
