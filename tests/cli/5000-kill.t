#!/bin/bash
# SPDX-License-Identifier: MIT
# 5000-kill.t - SIGKILL of sa-record midway (docs/reliability.md, "SIGKILL"):
# the file stays readable up to its last complete interval and sa-report
# says the recording did not finish cleanly. Then the same for a clean
# recording cut at many byte offsets, as a kill during a write leaves it:
# never a crash, and what is kept only grows with the length kept.
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
require_samples workload
tmpdir
T=$tap_tmp
plan 9

info_field() # FILE KEY: the first number after "KEY:" in sa-report --info
{
	"$SA_REPORT" --info "$1" 2>/dev/null | awk -v k="  $2:" 'index($0, k) == 1 { print $2; exit }'
}

"$SA_SAMPLES/workload" -d 8 >/dev/null 2>&1 &
wl=$!
"$SA_RECORD" -q -F 999 --interval 0.25 -p $wl -o "$T/k.sa" &
rec=$!
sleep 2.2
kill -KILL $rec
wait $rec 2>/dev/null # no "Killed" job notice
rc=$?
kill $wl 2>/dev/null
wait $wl 2>/dev/null
ok $((rc != 137)) "sa-record was killed by SIGKILL (status $rc)"

"$SA_REPORT" --info "$T/k.sa" >"$T/info" 2>"$T/info.err"
rc=$?
ok $rc "sa-report --info reads the killed recording (exit $rc)"
grep -q '^  finished: *no:.*did not finish cleanly' "$T/info"
ok $? "--info says it did not finish cleanly: $(grep '^  finished:' "$T/info" | sed 's/^ *//')"

ivs=$(sed -n 's/^  duration:.*(\([0-9]*\) intervals).*/\1/p' "$T/info")
# 2.2 s at 0.25 s per interval: at least 5 complete intervals were written.
ge "${ivs:-0}" 5
ok $? "complete intervals kept: ${ivs:-none} (>= 5)"

"$SA_REPORT" "$T/k.sa" >"$T/k.folded" 2>"$T/k.err"
rc=$?
kept=$(info_field "$T/k.sa" samples)
total=$(folded_total "$T/k.folded")
[ $rc = 0 ] && [ "$total" = "$kept" ] && [ "$total" -gt 100 ]
ok $? "folded output has every kept sample: $total of $kept (> 100; the CPU is shared), exit $rc"
grep -q 'did not finish cleanly' "$T/k.err"
ok $? "folded mode warns on stderr: $(head -n 1 "$T/k.err")"
wl_sym=$(folded_with "$T/k.folded" workload sa_run)
ge "$wl_sym" $((total / 2))
ok $? "and it is symbolized: $wl_sym samples through sa_run"

# A clean recording cut at 40 offsets: exit 0 or 1, never a signal, and
# the kept samples never decrease as more of the file is kept.
"$SA_RECORD" -q -F 999 --interval 0.2 -o "$T/c.sa" -- "$SA_SAMPLES/workload" -d 1.5 \
	>/dev/null 2>&1
size=$(stat -c %s "$T/c.sa")
prev=0 bad=0 worst=0 mono=0
for i in $(seq 1 40); do
	cut=$((size * i / 40))
	head -c $cut "$T/c.sa" >"$T/cut.sa"
	"$SA_REPORT" "$T/cut.sa" >"$T/cut.folded" 2>"$T/cut.err"
	rc=$?
	[ $rc -ge 2 ] && { bad=$((bad + 1)); diag "cut at $cut: exit $rc"; }
	[ $rc -gt "$worst" ] && worst=$rc
	n=$(folded_total "$T/cut.folded")
	[ "$n" -lt "$prev" ] && { mono=$((mono + 1)); diag "cut at $cut: $n < $prev samples"; }
	prev=$n
done
ok $bad "40 cuts of a $size-byte recording: exit 0 or 1 every time (worst $worst)"
full=$(folded_total <("$SA_REPORT" "$T/c.sa" 2>/dev/null))
[ $mono = 0 ] && [ "$prev" = "$full" ]
ok $? "kept samples grow with the bytes kept, up to all $full of the whole file"
done_testing
