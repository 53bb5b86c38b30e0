#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-record -p: with a second busy process running, every sample carries
# the target's tgid and at least 90% of F x (the target's CPU seconds) are
# kept (the machine may be shared, so the CPU time the target really got
# stands for "duration x busy threads"); when the target exits, sa-record
# finishes the file and exits 0 within one interval. The target's stacks
# are 5 to 7 frames deep, so no sample counts as truncated (a sample with
# no kernel stack once read a stray frame count for stack id 0), neither
# in the summary nor in sa-report --info.
. "$(dirname "$0")/2000-record-lib.sh"
need_bpf
build_busy
echo "1..8"

F=999
"$T/busy" 2 & target=$!
"$T/busy" 1 & other=$!
sleep 0.3
"$REC" -p $target -F $F --duration 3 -o "$T/p.sa" 2>"$T/p.err" & rec=$!
# count the target's CPU time from when sampling runs (META is written then)
# (bounded: a recorder that fails to start must fail the test, not hang it)
for _ in $(seq 1000); do
	[ "$(stat -c %s "$T/p.sa" 2>/dev/null || echo 0)" -gt 24 ] && break
	kill -0 $rec 2>/dev/null || break
	sleep 0.01
done
t0=$(cpu_ticks $target)
wait $rec; rc=$?
t1=$(cpu_ticks $target)
ok $rc "-p recording exits 0"
"$DUMP" "$T/p.sa" >"$T/p.txt"; ok $? "file complete"
bad=$(awk -v p=$target '/^COUNT/ { split($2, a, "="); split($7, c, "="); if (a[2] != p) n += c[2] } END { print n + 0 }' "$T/p.txt")
total=$(awk '/^COUNT/ { split($7, a, "="); n += a[2] } END { print n + 0 }' "$T/p.txt")
[ "$total" -gt 0 ] && [ "$bad" = 0 ]; ok $? "100% of $total samples have tgid $target"
hz=$(getconf CLK_TCK)
read -r runs kept filtered lost < <(loss_sums "$T/p.sa")
expect=$(( (t1 - t0) * F / hz ))
[ "$kept" -ge $((expect * 9 / 10)) ]
ok $? "kept $kept >= 90% of F x target CPU time ($expect; lost $lost)"
grep -q ', 0 truncated)' "$T/p.err"
ok $? "summary: 0 truncated ($(grep -o '[0-9]* truncated' "$T/p.err"))"
"$SA_BUILD/bin/sa-report" --info "$T/p.sa" >"$T/p.info" 2>&1 &&
	grep -q '^  lost:' "$T/p.info" && ! grep -q 'truncated=' "$T/p.info"
ok $? "--info: no truncated samples ($(grep '^  lost:' "$T/p.info"))"

"$REC" -q -p $target -F 99 --interval 0.5 -o "$T/exit.sa" & rec=$!
sleep 1
kill $target; wait $target 2>/dev/null
start=$(date +%s%N)
# a recorder that does not follow the target gets 10 s, then fails the test
( sleep 10; kill $rec 2>/dev/null ) & guard=$!
wait $rec; rc=$?
kill $guard 2>/dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc = 0 ] && [ $ms -le 1500 ]; ok $? "target exit ends the recording: exit $rc after $ms ms (interval 0.5 s; <= 1500 on a loaded host)"
"$DUMP" "$T/exit.sa" >/dev/null; ok $? "and the file is complete"
kill $other
finish
