#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# A frame whose CFA is rbx-based, as ld.so's lazy-binding resolver's
# (_dl_runtime_resolve_xsavec: push %rbx; mov %rsp,%rbx; and $-64,%rsp),
# between a leaf and a caller that save rbx: dwarf and auto recordings walk
# through it to main, with the binary and off the box with it deleted
# (sa-record's own walk, format 1.3), and both reports are identical.
# Before core/cfistep.h tracked rbx, the recorder's walk stopped at it.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
BIN=${SA_BUILD:-build}/tests/data/cfa_rbx
[ -x "$BIN" ] || skip_all "$BIN not built; run make check"
tmpdir
T=$tap_tmp

plan 12

for cg in dwarf auto; do
	cp "$BIN" "$T/cfa_rbx"
	"$SA_RECORD" -q -F 999 --call-graph "$cg" -o "$T/$cg.sa" -- "$T/cfa_rbx" 2.5 \
		>/dev/null 2>"$T/record.err"
	ok $? "sa-record --call-graph $cg -- cfa_rbx exits 0"
	"$SA_REPORT" -o "$T/$cg.with.folded" "$T/$cg.sa" 2>"$T/with.err"
	ok $? "$cg: sa-report with the binary exits 0"
	rm -f "$T/cfa_rbx"
	"$SA_REPORT" -o "$T/$cg.gone.folded" "$T/$cg.sa" 2>"$T/gone.err"
	ok $? "$cg: sa-report with the binary deleted exits 0"
	# the stacks through the program's own functions (cfa_rbx_*): a
	# start-up sample in strtod under main shows atof, inlined in main,
	# only when the binary's debug info is there (recorded frames carry no
	# inline frames), which says nothing of the rbx frame
	grep ';cfa_rbx_' "$T/$cg.with.folded" >"$T/$cg.with.own"
	grep ';cfa_rbx_' "$T/$cg.gone.folded" >"$T/$cg.gone.own"
	[ -s "$T/$cg.with.own" ] && cmp "$T/$cg.with.own" "$T/$cg.gone.own" >"$T/cmp" 2>&1
	ok $? "$cg: the folded stacks of its own functions without the binary equal those with it"
	[ -s "$T/cmp" ] && diag_file "$T/gone.err"
	# The leaf's samples: all should walk through the rbx frame to main.
	# A walk that stops early for another reason is rare (about 1 in 500,
	# 6130); failing 99% of >= 2,000 by luck takes >= 21:
	# P(Bin(2000, 0.002) >= 21) = 2e-9, and at a rate of 0.003 1.4e-6, for
	# each of the four counts: under 0.1% per run. (The vdso's clock_gettime is not
	# counted: under auto it keeps the frame-pointer walk, which ends in
	# frameless code.) Before the fix, off the box none of them reached main.
	for how in with gone; do
		f="$T/$cg.$how.folded"
		tot=$(folded_with "$f" cfa_rbx cfa_rbx_leaf)
		got=$(folded_with "$f" cfa_rbx "main;cfa_rbx_run;cfa_rbx_frame;cfa_rbx_leaf")
		got=$(pct "$got" "$tot")
		[ "$tot" -ge 2000 ] && ge "$got" 99
		ok $? "$cg, binary $how: $got% of $tot leaf samples reach main (want >= 99)"
	done
done

done_testing
