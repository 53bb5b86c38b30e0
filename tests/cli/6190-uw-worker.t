#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# sa-test: statistical
# The in-kernel unwinder's tables are built on a worker thread, so the
# drain keeps reading the ring buffer meanwhile (docs/unwinding.md, "Built
# off the main thread"). Until a file's table is installed, its mappings are
# in the kernel marked as without a table: on-CPU samples there go as stack
# copies and off-CPU walks by frame pointers, both counted. With
# SA_RECORD_TEST_UW_DELAY_MS the worker sleeps before each build, deaf to
# the stop (a build stuck in a file system): every sample of a process
# attached with -p must then be copied and still reach main or
# start_thread, every switch-out be counted as a frame-pointer walk, and the
# recorder stop on time, not after the build. Without it, the tables come
# and the kernel walks.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples workload-nofp
TD=${SA_BUILD:-build}/tests/data
[ -x "$TD/off_wrappers_nofp" ] || skip_all "$TD/off_wrappers_nofp not built (make check-extra)"
tmpdir
T=$tap_tmp

plan 10

# walked FILE / copied FILE / off_walked FILE / off_fp FILE / still FILE:
# the numbers of sa-record's summary lines
walked() { sed -n 's/.*on-CPU \([0-9]*\) walked.*/\1/p' "$1"; }
copied() { sed -n 's/.*on-CPU [0-9]* walked, \([0-9]*\) copied instead.*/\1/p' "$1"; }
off_walked() { sed -n 's/.*off-CPU \([0-9]*\) walked.*/\1/p' "$1"; }
off_fp() { sed -n 's/.*off-CPU [0-9]* walked, \([0-9]*\) by frame pointers.*/\1/p' "$1"; }
still() { sed -n 's/.*, \([0-9]*\) still building.*/\1/p' "$1"; }

cp "$SA_SAMPLES/workload-nofp" "$T/wl"
"$T/wl" -t 2 -d 30 >/dev/null &
wp=$!
trap 'kill $wp $op 2>/dev/null; [ -n "${SA_TEST_KEEP-}" ] || rm -rf "$T"' EXIT
sleep 0.3

# 1. every build stuck for 60 s: copies, counted, and a stop on time
t0=$(date +%s%N)
SA_RECORD_TEST_UW_DELAY_MS=60000 timeout -s KILL 55 "$SA_RECORD" -F 999 --call-graph auto \
	-p "$wp" --duration 3 -o "$T/slow.sa" >/dev/null 2>"$T/slow.err"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
ok $rc "sa-record with every build stuck exits 0 (got $rc)"
[ $rc -eq 0 ] || diag_file "$T/slow.err"
# --duration 3 plus start and stop; 20 s leaves a loaded host room, and
# waiting for the build would take 60 s
[ "$ms" -lt 20000 ]
ok $? "it stops in $ms ms, not after the stuck build (want < 20000)"
n=$(still "$T/slow.err")
[ "${n:-0}" -ge 1 ]
ok $? "its summary says $n builds were still under way (want >= 1)"
w=$(walked "$T/slow.err")
c=$(copied "$T/slow.err")
[ "${w:-1}" -eq 0 ] && [ "${c:-0}" -ge 300 ]
ok $? "no sample walked by a table not built ($w), all $c copied instead (want >= 300)"
"$SA_REPORT" -o "$T/slow.folded" "$T/slow.sa" 2>"$T/report.err"
ok $? "sa-report of it exits 0"
# The copies are unwound by the CFI: a copy cut short is rare (2 of 2,013
# in 6180, p <= 0.002); failing 98% of >= 300 takes >= 7:
# P(Bin(300, 0.002) >= 7) = 3e-6 per run.
tot=$(folded_total "$T/slow.folded" wl)
got=$(awk '{ n = $NF; if ($0 ~ /^wl;/ && ($0 ~ /;main;/ || $0 ~ /;start_thread;/)) m += n }
	END { print m + 0 }' "$T/slow.folded")
got=$(pct "$got" "$tot")
[ "$tot" -ge 300 ] && ge "$got" 98
ok $? "$got% of its $tot samples reach main or start_thread through the copies (want >= 98)"

# 2. off the CPU, the same stuck builds: each switch-out a counted
# frame-pointer walk (a program blocking through libc wrappers: ~70 blocks
# a second), none walked by a table not built
cp "$TD/off_wrappers_nofp" "$T/ow"
"$T/ow" 20 >/dev/null &
op=$!
sleep 0.3
SA_RECORD_TEST_UW_DELAY_MS=60000 timeout -s KILL 55 "$SA_RECORD" --off-cpu -p "$op" \
	--duration 3 -o "$T/off.sa" >/dev/null 2>"$T/off.err"
ok $? "sa-record --off-cpu with every build stuck exits 0"
w=$(off_walked "$T/off.err")
f=$(off_fp "$T/off.err")
[ "${w:-1}" -eq 0 ] && [ "${f:-0}" -ge 50 ]
ok $? "off-CPU: $f switch-outs counted as frame-pointer walks (want >= 50), $w by the tables (want 0)"
[ -n "$f" ] || diag_file "$T/off.err"
kill $op 2>/dev/null

# 3. the same attach without the delay: the worker's tables are installed
# and the kernel walks
timeout -s KILL 55 "$SA_RECORD" -F 999 --call-graph auto -p "$wp" --duration 4 \
	-o "$T/fast.sa" >/dev/null 2>"$T/fast.err"
ok $? "sa-record without the delay exits 0"
w=$(walked "$T/fast.err")
n=$(still "$T/fast.err")
[ "${w:-0}" -ge 1 ] && [ "${n:-1}" -eq 0 ]
ok $? "$w samples walked in the kernel once the tables came (want >= 1), $n builds left (want 0)"
[ -n "$w" ] || diag_file "$T/fast.err"
kill $wp 2>/dev/null

done_testing
