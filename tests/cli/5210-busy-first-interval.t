#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (records -a and counts every sample)
# 5210-busy-first-interval.t - the drain's deadlines, meant for thread
# storms, lose no sample on an ordinary busy host (docs/reliability.md,
# "The stop path"). A busy host's first interval is slow to drain for
# another reason: every process sampled in it has its PROC, mappings and
# binaries read then, one at a time. At load 10-20 one of two plain `-a
# --duration 3` runs dropped 167 of 584 samples at the count deadline
# while that ran. Here 16 busy processes (one image each) run beside the
# recorder, and SA_RECORD_TEST_META_DELAY_US makes each image's first
# capture take 250 ms, as a loaded host or a slow disk does: 4 s of it in
# the first interval, more than its 1 s window. Every sample must be
# kept (no lost_userspace, nothing dropped at the deadline), the images
# not described in time counted in the summary, the file finished
# cleanly, and `--duration 3` must end within twice the same run without
# the delay (or 8 s). Before describe() (record/drain/drain.c) points 1
# and 2 fail.
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
command -v cc >/dev/null || skip_all "no C compiler"
tmpdir
T=$tap_tmp
cc -O1 -fno-omit-frame-pointer -o "$T/spin" "$SA_SRC/tests/tools/wl-spin.c" ||
	skip_all "the workload does not compile"
plan 4

N=16
DELAY=250000
# ms since $1 (date +%s%N)
since() { echo $((($(date +%s%N) - $1) / 1000000)); }
# lost_us FILE.sa: --info's lost_userspace (named only when not 0)
lost_us()
{
	"$SA_REPORT" --info "$1" 2>/dev/null | sed -n 's/.* lost_userspace=\([0-9]*\).*/\1/p'
}
late() { sed -n "s/^sa-record: \([0-9]*\) samples dropped at the drain's deadline.*/\1/p" "$1"; }
bare() { sed -n "s/^sa-record: \([0-9]*\) samples kept without their process's.*/\1/p" "$1"; }
kept() { sed -n "s/^sa-record: .*: \([0-9]*\) samples kept of \([0-9]*\) runs.*/\1/p" "$1"; }

pids=
for ((i = 0; i < N; i++)); do
	nice -n 5 "$T/spin" 30 &
	pids="$pids $!"
done
diag "set-up: $N busy processes"

# rec OUT [ENV]: `-a --duration 3` (ms: its wall time, rc: its exit status)
rec()
{
	local s
	s=$(date +%s%N)
	env $2 timeout -s KILL 60 "$SA_RECORD" -a --duration 3 -o "$T/$1.sa" 2>"$T/$1.err"
	rc=$?
	ms=$(since $s)
}
rec ref
ref=$ms
rec d SA_RECORD_TEST_META_DELAY_US=$DELAY
kill $pids 2>/dev/null
wait $pids 2>/dev/null

n=$(lost_us "$T/d.sa")
[ $rc = 0 ] && [ -z "$(late "$T/d.err")" ] && [ "${n:-0}" = 0 ]
ok $? "slow captures: exit $rc, no sample dropped at the deadline ($(late "$T/d.err" | grep . || echo none)), lost_userspace ${n:-0}"
k=$(kept "$T/d.err")
b=$(bare "$T/d.err")
"$SA_REPORT" "$T/d.sa" >"$T/d.folded" 2>/dev/null
t=$(folded_total "$T/d.folded")
[ "${b:-0}" -gt 0 ] && [ "${k:-0}" -gt 0 ] && [ "${t:-0}" = "$k" ]
ok $? "${k:-?} samples kept, all in the folded output (${t:-?}); ${b:-none} of them kept without their image described in time"
"$SA_REPORT" --info "$T/d.sa" 2>/dev/null | grep -q '^  finished: *cleanly'
ok $? "finished cleanly"
lim=$((2 * ref > 8000 ? 2 * ref : 8000))
[ $ms -le $lim ]
ok $? "--duration 3 ended after $ms ms (<= $lim; $ref ms without the delay)"
done_testing
