#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (floods the host with new processes: every other recorder's side band would carry them)
# 5211-sideband-flood.t - a flood of new processes does not hold up the
# stop path (docs/reliability.md, "The stop path"): the side band's
# records (each new process's mappings, exec, exit) are handled for at
# most 50 ms a turn of the loop, the rest wait in order, and at the end
# for at most 500 ms, the rest counted in the summary. Beside a storm at
# load 200, one poll of the side band once took 3.7 s.
# Here a shell loop starts /bin/true again and again, and
# SA_RECORD_TEST_SIDEBAND_DELAY_US makes each record cost 20 ms, more than
# the loop's records can be handled in: `-a --duration 2` must end within
# twice the same run without the delay (or 4 s), finished cleanly, with
# the records left at the end counted. Before the budget, the recorder
# was still handling records at the test's SIGKILL (points 1 to 3 fail).
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
tmpdir
T=$tap_tmp
plan 3

DELAY=20000
# ms since $1 ($EPOCHREALTIME without the dot, in us; no fork to read it)
since() { echo $(((${EPOCHREALTIME/./} - $1) / 1000)); }
unhandled() { sed -n "s/^sa-record: \([0-9]*\) side-band records .*not handled.*/\1/p" "$1"; }

# the flood: fork + exec of /bin/true as fast as one shell goes, for 40 s
# at most; the loop runs in the subshell itself, so killing it ends it
(
	end=$((SECONDS + 40))
	while [ $SECONDS -lt $end ]; do /bin/true; done
) &
flood=$!
renice -n 10 -p $flood >/dev/null
sleep 0.5
diag "set-up: a shell starting /bin/true in a loop"

# rec OUT [ENV]: `-a --duration 2` (ms: its wall time, rc: its exit status)
rec()
{
	local s=${EPOCHREALTIME/./}
	env $2 timeout -s KILL 30 "$SA_RECORD" -a --duration 2 -o "$T/$1.sa" 2>"$T/$1.err"
	rc=$?
	ms=$(since $s)
}
rec ref
ref=$ms
rec d SA_RECORD_TEST_SIDEBAND_DELAY_US=$DELAY
kill -KILL $flood 2>/dev/null
wait $flood 2>/dev/null

lim=$((2 * ref > 4000 ? 2 * ref : 4000))
[ $rc = 0 ] && [ $ms -le $lim ]
ok $? "--duration 2, slow side band: exit $rc after $ms ms (<= $lim; $ref ms without the delay)"
"$SA_REPORT" --info "$T/d.sa" 2>/dev/null | grep -q '^  finished: *cleanly'
ok $? "finished cleanly"
n=$(unhandled "$T/d.err")
[ "${n:-0}" -gt 0 ]
ok $? "${n:-no} side-band records left at the end's deadline, counted in the summary"
diag "without the delay: $(unhandled "$T/ref.err" | grep . || echo 0) left"
done_testing
