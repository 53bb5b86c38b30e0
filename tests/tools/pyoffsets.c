// SPDX-License-Identifier: MIT
/*
 * pyoffsets.c - prints the CPython 3.11-3.13 structure offsets sa-record's
 * layout table (record/python/pyfind.c) holds, from the interpreter's own
 * internal headers. Not built by make (it needs python3.X-dev or a pyenv
 * build's include/); run by hand:
 *   gcc -I/usr/include/python3.11 tests/tools/pyoffsets.c -o /tmp/pyoff && /tmp/pyoff
 *   gcc -I$HOME/.pyenv/versions/3.13.0/include/python3.13 ...
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
#if PY_VERSION_HEX < 0x030c0000
	P(_PyRuntimeState, gilstate.tstate_current);
#endif
	P(PyInterpreterState, threads.head);
	P(PyInterpreterState, runtime);
	P(PyThreadState, next);
	P(PyThreadState, interp);
	P(PyThreadState, native_thread_id);
#if PY_VERSION_HEX >= 0x030d0000
	P(PyThreadState, current_frame);
	P(_PyInterpreterFrame, f_executable);
	P(_PyInterpreterFrame, instr_ptr);
	printf("FRAME_OWNED_BY_CSTACK %d\n", FRAME_OWNED_BY_CSTACK);
#else
	P(PyThreadState, cframe);
	P(_PyCFrame, current_frame);
	P(_PyInterpreterFrame, f_code);
	P(_PyInterpreterFrame, prev_instr);
#endif
#if PY_VERSION_HEX >= 0x030c0000 && PY_VERSION_HEX < 0x030d0000
	printf("FRAME_OWNED_BY_CSTACK %d\n", FRAME_OWNED_BY_CSTACK);
#elif PY_VERSION_HEX < 0x030c0000
	P(_PyInterpreterFrame, is_entry);
#endif
	P(_PyInterpreterFrame, previous);
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
