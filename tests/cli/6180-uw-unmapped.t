#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# sa-test: statistical
# Code the in-kernel unwinder has no mapping for: a library mapped since the
# recorder last read the side band (zstd's memset at its start, up to 100
# ms), or JIT code. The walk stepped it by frame pointers, and in code
# without them (rbp holding data) stopped at its first frame, uncounted:
# 7% of zstd's memset samples in some runs of 6070. Now, with --call-graph
# auto, such a walk goes as a stack copy (counted, unwound by the recorder
# with the CFI); with --off-cpu, it is counted as a frame-pointer walk.
# tests/data/uw_late: a leaf of memset's CFI shape (CFA = rsp + 8, no frame)
# called from a frame with 0 in rbp; SA_RECORD_TEST_UW_UNMAPPED keeps its
# binary's mapping from the kernel, deterministically, as a late one.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
BIN=${SA_BUILD:-build}/tests/data/uw_late
[ -x "$BIN" ] || skip_all "$BIN not built (make check-extra)"
tmpdir
T=$tap_tmp

plan 7

cp "$BIN" "$T/uw_late"
SA_RECORD_TEST_UW_UNMAPPED=uw_late "$SA_RECORD" -F 999 --call-graph auto -o "$T/on.sa" \
	-- "$T/uw_late" spin 2 >/dev/null 2>"$T/on.err"
ok $? "sa-record --call-graph auto -- uw_late spin exits 0"
"$SA_REPORT" -o "$T/on.folded" "$T/on.sa" 2>"$T/report.err"
ok $? "sa-report of it exits 0"
# 2 s of its own CPU at 999 Hz: about 2,000 samples, nearly all in the
# leaf. Every leaf sample goes as a copy and is unwound to main; a copy cut
# short is rare (2 of 2,013 here, 0.1%): failing 99% of >= 1,000 takes >= 11
# at p <= 0.002: P(Bin(1000, 0.002) >= 11) = 7e-6 per run. Before the fix,
# none reached main (the walk stopped at rbp = 0).
tot=$(folded_with "$T/on.folded" uw_late uw_late_leaf)
got=$(folded_with "$T/on.folded" uw_late "main;uw_late_spin;uw_late_frame;uw_late_leaf")
got=$(pct "$got" "$tot")
[ "$tot" -ge 1000 ] && ge "$got" 99
ok $? "$got% of $tot leaf samples reach main (want >= 99 of >= 1000)"
# The counters count runs of the program, the folded output each run's
# weight (its thread's CPU time in periods, bpf/sa_clock.bpf.h): a run of
# weight 0 sends nothing, and runs of weight 2 make up for it. Weights
# average 1 within a few percent (a late timer interrupt is 20-50 us of a
# 1 ms period), so half the leaf's weight in copies holds whatever the
# load; before the fix the walks met no copy and were counted as walked.
read -r walked copied < <(sed -n 's/.*on-CPU \([0-9]*\) walked, \([0-9]*\) copied instead.*/\1 \2/p' "$T/on.err")
[ "${walked:-1}" = 0 ] && [ $((2 * ${copied:-0})) -ge "$tot" ]
ok $? "the walks that met the unmapped code are counted as copies: ${walked:-?} walked, ${copied:-?} copied (want 0, >= $tot / 2)"
[ -n "$copied" ] || diag_file "$T/on.err"

# Off-CPU: 200 blocks of 5 ms in usleep called from uw_late_block; the walk
# through libc's rows returns into the unmapped binary, where rbp is 0.
# Each of the 200 is counted as a frame-pointer walk (not only the few
# before the mappings come, as before the fix).
SA_RECORD_TEST_UW_UNMAPPED=uw_late "$SA_RECORD" --off-cpu -o "$T/off.sa" \
	-- "$T/uw_late" sleep 1 >"$T/off.out" 2>"$T/off.err"
ok $? "sa-record --off-cpu -- uw_late sleep exits 0"
fp=$(sed -n 's/.*off-CPU [0-9]* walked, \([0-9]*\) by frame pointers.*/\1/p' "$T/off.err")
n=$(cat "$T/off.out")
[ "${n:-0}" -eq 200 ] && [ "${fp:-0}" -ge 200 ]
ok $? "$fp switch-outs counted as frame-pointer walks (want >= $n blocks)"
[ -n "$fp" ] || diag_file "$T/off.err"

# the knob hides nothing by default: the same spin walked in the kernel
"$SA_RECORD" -F 999 --call-graph auto -o "$T/plain.sa" -- "$T/uw_late" spin 0.5 \
	>/dev/null 2>"$T/plain.err"
walked=$(sed -n 's/.*on-CPU \([0-9]*\) walked.*/\1/p' "$T/plain.err")
[ "${walked:-0}" -ge 250 ]
ok $? "without the knob, $walked samples are walked in the kernel (want >= 250)"

done_testing
