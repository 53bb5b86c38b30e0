// SPDX-License-Identifier: MIT
/*
 * pyoffsets.c - prints the CPython 3.11 structure offsets sa-record's layout
 * table (record/python/pyfind.c) holds, from the interpreter's own internal
 * headers. Not built by make (it needs python3.X-dev); run by hand:
 *   gcc -I/usr/include/python3.11 tests/tools/pyoffsets.c -o /tmp/pyoff && /tmp/pyoff
 * and compare with the table and with readelf -sW BINARY | grep _PyRuntime.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#include <stdio.h>
#define P(t, f) printf("%-40s %zu\n", #t "." #f, offsetof(t, f))
int main(void)
{
	printf("sizeof _PyRuntimeState %zu\n", sizeof(_PyRuntimeState));
	P(_PyRuntimeState, interpreters.head);
	P(_PyRuntimeState, gilstate.tstate_current);
	P(PyInterpreterState, threads.head);
	P(PyInterpreterState, runtime);
	P(PyThreadState, next);
	P(PyThreadState, interp);
	P(PyThreadState, cframe);
	P(PyThreadState, native_thread_id);
	P(_PyCFrame, current_frame);
	P(_PyInterpreterFrame, f_code);
	P(_PyInterpreterFrame, previous);
	P(_PyInterpreterFrame, prev_instr);
	P(_PyInterpreterFrame, is_entry);
	P(_PyInterpreterFrame, owner);
	P(PyCodeObject, ob_base.ob_base.ob_type);
	P(PyCodeObject, co_firstlineno);
	P(PyCodeObject, co_filename);
	P(PyCodeObject, co_name);
	P(PyCodeObject, co_qualname);
	P(PyCodeObject, co_linetable);
	P(PyCodeObject, co_code_adaptive);
	P(PyASCIIObject, length);
	P(PyASCIIObject, state);
	printf("sizeof PyASCIIObject %zu\n", sizeof(PyASCIIObject));
	printf("sizeof PyCompactUnicodeObject %zu\n", sizeof(PyCompactUnicodeObject));
	P(PyCompactUnicodeObject, utf8_length);
	P(PyCompactUnicodeObject, utf8);
	printf("PY_VERSION_HEX %#x\n", PY_VERSION_HEX);
	return 0;
}
