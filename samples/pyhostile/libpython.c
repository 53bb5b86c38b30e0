// SPDX-License-Identifier: MIT
/*
 * libpython.c - built as libpython3.X.so for X = PYH_MINOR (8 to 13): what
 * sa-record's finder keys on in an interpreter (record/python/pyfind.c)
 * and nothing of CPython. Its ELF exports Py_Version (3.11 and later; the
 * file's name says the version before), a _PyRuntime of exactly the size
 * that version's row was confirmed with, PyCode_Type and PyUnicode_Type,
 * so the process that maps it is answered "frames read"; what the
 * structures hold is up to the program (pyhostile).
 * _PyEval_EvalFrameDefault is the native call sa-report puts Python
 * frames in place of.
 */
#include <stdint.h>

#ifndef PYH_MINOR
#define PYH_MINOR 11
#endif
#if PYH_MINOR == 8
#define RUNTIME_SIZE 1464
#elif PYH_MINOR == 9
#define RUNTIME_SIZE 656
#elif PYH_MINOR == 10
#define RUNTIME_SIZE 672
#elif PYH_MINOR == 11
#define RUNTIME_SIZE 166688
#elif PYH_MINOR == 12
#define RUNTIME_SIZE 459944
#elif PYH_MINOR == 13
#define RUNTIME_SIZE 283320
#else
#error "PYH_MINOR: 8 to 13"
#endif

unsigned char _PyRuntime[RUNTIME_SIZE] __attribute__((aligned(64)));
#if PYH_MINOR >= 11
const unsigned long Py_Version = 0x030002f0ul | PYH_MINOR << 16; /* 3.X.2 final */
#endif
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
