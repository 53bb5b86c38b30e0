// SPDX-License-Identifier: MIT
/*
 * pyoffsets_old.c - prints the CPython 3.8-3.10 structure offsets
 * sa-record's layout table (record/python/pyfind.c, OLD_FRAMES) holds, from
 * the interpreter's own internal headers: PyFrameObject chains from
 * PyThreadState.frame, thread_id, co_name. Not built by make; run by hand:
 *   gcc -I$HOME/.pyenv/versions/3.10.13/include/python3.10 \
 *       tests/tools/pyoffsets_old.c -o /tmp/pyoff && /tmp/pyoff
 * and compare with the table and with readelf -sW BINARY | grep _PyRuntime.
 * (3.11-3.13: tests/tools/pyoffsets.c.)
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <frameobject.h>
#if PY_VERSION_HEX >= 0x03090000
#include "internal/pycore_runtime.h"
#endif
#include "internal/pycore_pystate.h"
#if PY_VERSION_HEX >= 0x03090000
#include "internal/pycore_interp.h"
#endif
#include <stdio.h>
#define P(t, f) printf("%-40s %zu\n", #t "." #f, offsetof(t, f))
int main(void)
{
	printf("sizeof _PyRuntimeState %zu\n", sizeof(_PyRuntimeState));
	P(_PyRuntimeState, interpreters.head);
	P(PyInterpreterState, tstate_head);
	P(PyThreadState, next);
	P(PyThreadState, interp);
	P(PyThreadState, frame);
	P(PyThreadState, thread_id);
	P(PyFrameObject, f_back);
	P(PyFrameObject, f_code);
	P(PyFrameObject, f_lasti);
	P(PyFrameObject, f_lineno);
	P(PyCodeObject, ob_base.ob_type);
	P(PyCodeObject, co_firstlineno);
	P(PyCodeObject, co_filename);
	P(PyCodeObject, co_name);
	printf("sizeof PyCodeObject %zu\n", sizeof(PyCodeObject));
	P(PyASCIIObject, length);
	P(PyASCIIObject, state);
	printf("sizeof PyASCIIObject %zu\n", sizeof(PyASCIIObject));
	printf("sizeof PyCompactUnicodeObject %zu\n", sizeof(PyCompactUnicodeObject));
	P(PyCompactUnicodeObject, utf8_length);
	P(PyCompactUnicodeObject, utf8);
	printf("PY_VERSION_HEX %#x\n", PY_VERSION_HEX);
	return 0;
}
