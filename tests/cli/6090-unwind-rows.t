#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-report's own walk over cached CFI rows (report/unwind/uwrows.c) gives the same
# stacks as libdwfl's unwinder (SA_UNWIND=libdwfl), byte for byte, on
# --call-graph dwarf and auto recordings: zstd -19 (Debian's binary and
# libc, no frame pointers), workload-nofp, workload-leaf, and a binary whose
# CFI is only in .debug_frame, in the binary and in a separate debug file at
# its build-id path.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples workload-nofp workload-leaf
DF=$SA_BUILD/tests/data/cfi_debug_frame
[ -x "$DF" ] || skip_all "$DF not built (make check builds it)"
command -v objcopy >/dev/null || skip_all "objcopy not installed"
tmpdir
T=$tap_tmp

plan 16

# same NAME FILE.sa COMM: the two unwinders agree, and COMM's stacks reach main
same()
{
	"$SA_REPORT" -o "$T/$1.rows" "$2" 2>"$T/$1.err"
	ok $? "$1: sa-report exits 0"
	SA_UNWIND=libdwfl "$SA_REPORT" -o "$T/$1.dwfl" "$2" 2>>"$T/$1.err"
	cmp "$T/$1.rows" "$T/$1.dwfl" >"$T/$1.cmp" 2>&1
	ok $? "$1: folded stacks equal libdwfl's byte for byte"
	[ -s "$T/$1.cmp" ] && diag_file "$T/$1.cmp"
	got=$(pct "$(folded_with "$T/$1.rows" "$3" __libc_start_call_main)" \
		"$(folded_total "$T/$1.rows" "$3")")
	ge "$got" 90
	ok $? "$1: $got% of $3's stacks reach __libc_start_call_main (want >= 90)"
}

if command -v zstd >/dev/null 2>&1; then
	head -c 1500000 /dev/urandom | base64 >"$T/in.txt"
	"$SA_RECORD" -q -F 999 --call-graph dwarf -o "$T/z.sa" -- \
		zstd -19 --single-thread -q -f "$T/in.txt" -o "$T/in.zst" 2>"$T/record.err" ||
		diag_file "$T/record.err"
	same zstd-dwarf "$T/z.sa" zstd
else
	skip 3 "zstd not installed"
fi

"$SA_RECORD" -q -F 999 --call-graph auto -o "$T/n.sa" -- \
	"$SA_SAMPLES/workload-nofp" -c 1 >/dev/null 2>"$T/record.err" || diag_file "$T/record.err"
same nofp-auto "$T/n.sa" workload-nofp

"$SA_RECORD" -q -F 999 --call-graph dwarf -o "$T/l.sa" -- \
	"$SA_SAMPLES/workload-leaf" -c 1 >/dev/null 2>"$T/record.err" || diag_file "$T/record.err"
same leaf-dwarf "$T/l.sa" workload-leaf

"$SA_RECORD" -q -F 999 --call-graph dwarf -o "$T/f.sa" -- \
	"$DF" -c 1 >/dev/null 2>"$T/record.err" || diag_file "$T/record.err"
same debug-frame "$T/f.sa" cfi_debug_frame

# The same binary stripped, its .debug_frame only in the debug file that
# libdwfl finds at /usr/lib/debug/.build-id/ (removed again at exit).
bid=$(readelf -n "$DF" | awk '/Build ID/ { print $3 }')
dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
if [ -n "$bid" ] && [ ! -e "$dbg" ] && mkdir -p "${dbg%/*}" &&
	objcopy --only-keep-debug "$DF" "$dbg"; then
	trap 'rm -f "$dbg"; rm -rf "$tap_tmp"' EXIT
	objcopy --strip-debug "$DF" "$T/stripped"
	readelf -S "$T/stripped" | grep -q debug_frame
	[ $? -ne 0 ]
	ok $? "the stripped copy has no .debug_frame of its own"
	"$SA_RECORD" -q -F 999 --call-graph dwarf -o "$T/s.sa" -- \
		"$T/stripped" -c 1 >/dev/null 2>"$T/record.err" || diag_file "$T/record.err"
	same split-debug-frame "$T/s.sa" stripped
else
	skip 4 "cannot place a debug file for build id '$bid' at $dbg"
fi

done_testing
