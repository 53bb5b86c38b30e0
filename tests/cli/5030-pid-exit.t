#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# 5030-pid-exit.t - -p on processes that exit mid-recording
# (docs/reliability.md, "Targets exit"): sa-record finishes the file and
# exits 0 within one interval (plus scheduling slack) of the last target's
# exit, and what it recorded of each target is kept and symbolized.
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
require_samples workload
tmpdir
T=$tap_tmp
plan 7

iv=0.5
"$SA_SAMPLES/workload" -d 3 >/dev/null 2>&1 &
a=$!
"$SA_SAMPLES/workload" -d 4 >/dev/null 2>&1 &
b=$!
"$SA_RECORD" -q -F 999 --interval $iv -p $a,$b -o "$T/p.sa" >"$T/out" 2>"$T/err" &
rec=$!
wait $a
wait $b
gone=$(date +%s%N)
# Poll rather than block, so "never stops" fails after 30 s instead of hanging.
for ((i = 0; i < 3000; i++)); do
	kill -0 $rec 2>/dev/null || break
	sleep 0.01
done
ms=$((($(date +%s%N) - gone) / 1000000))
kill -INT $rec 2>/dev/null
wait $rec
rc=$?
ok $rc "sa-record exits 0 after its targets exit (status $rc)"
# One interval (500 ms) plus 500 ms of slack for the last drain and the write.
[ $ms -le 1000 ]
ok $? "it stops $ms ms after the last target exited (<= 1000 ms: one interval + slack)"

"$SA_REPORT" --info "$T/p.sa" >"$T/info" 2>&1
grep -q '^  finished: *cleanly' "$T/info"
ok $? "the file is complete: $(grep '^  finished:' "$T/info" | sed 's/^ *//')"
"$SA_REPORT" --show-pid "$T/p.sa" >"$T/folded" 2>/dev/null
na=$(folded_with "$T/folded" "workload-$a" sa_run)
nb=$(folded_with "$T/folded" "workload-$b" sa_run)
[ "$na" -gt 50 ]
ok $? "first target (exited first): $na samples through sa_run (> 50)"
[ "$nb" -gt 50 ]
ok $? "second target: $nb samples through sa_run (> 50)"
leaf=$(($(folded_leaf "$T/folded" "workload-$a" sa_leaf_a) + \
	$(folded_leaf "$T/folded" "workload-$b" sa_leaf_a)))
ge $leaf $(((na + nb) / 3))
ok $? "symbolized to the leaf: $leaf samples in sa_leaf_a (>= a third)"
other=$(awk '{ split($1, f, ";"); if (f[1] !~ /^workload-/) n += $NF } END { print n + 0 }' \
	"$T/folded")
ok "$other" "nothing but the targets was recorded ($other other samples)"
done_testing
