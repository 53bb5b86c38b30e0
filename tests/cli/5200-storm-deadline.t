#!/bin/bash
# SPDX-License-Identifier: MIT
# 5200-storm-deadline.t - a storm of busy threads does not hold up the stop
# path (docs/reliability.md, "Thread storms"): each interval's drain has
# deadlines (half an interval, at least 250 ms, for reading stacks; as
# much again for writing counts), what they skip is counted as lost
# (lost_userspace in the file, the summary names the deadline), and
# `--duration 2` ends within 4 s, SIGTERM within 2 s (or twice the same
# run without the delay, on a host too loaded for those). 300 threads of
# distinct stacks spin at nice 19 (the host is shared); the drain is made
# as slow as a starved one with SA_RECORD_TEST_DRAIN_DELAY_US (20 ms a
# stack read and a count written: 300 threads' counts then take a drain
# 6 s). With SA_RECORD_TEST_NO_DEADLINE=1 in the environment (the
# deadlines off) points 2 to 5 fail.
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
command -v cc >/dev/null || skip_all "no C compiler for the storm"
tmpdir
T=$tap_tmp
cc -O1 -fno-omit-frame-pointer -pthread -o "$T/storm" "$SA_SRC/tests/tools/wl-storm.c" ||
	skip_all "the storm does not compile"
plan 6

DELAY=20000
# ms since $1 (date +%s%N)
since() { echo $((($(date +%s%N) - $1) / 1000000)); }
# wait_file FILE: until the recording is committed (its first interval on disk)
wait_file()
{
	local i
	for ((i = 0; i < 400; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	return 1
}
# late FILE.err: samples the summary says the deadlines dropped
late() { sed -n "s/^sa-record: \([0-9]*\) samples dropped at the drain's deadline.*/\1/p" "$1"; }
# lost_us FILE.sa: the file's lost_userspace, by --info
lost_us()
{
	"$SA_REPORT" --info "$1" 2>/dev/null | sed -n 's/.* lost_userspace=\([0-9]*\).*/\1/p'
}
# clean FILE.sa: --info says it finished cleanly
clean() { "$SA_REPORT" --info "$1" 2>/dev/null | grep -q '^  finished: *cleanly'; }

nice -n 19 timeout -s KILL 55 "$T/storm" 300 50 24 >"$T/storm.out" &
storm=$!
for ((i = 0; i < 200; i++)); do grep -q ready "$T/storm.out" && break; sleep 0.05; done
grep -q ready "$T/storm.out"
ok $? "300 busy threads of 24 stacks at nice 19"

# The same run without the delay: what start-up and the last drain cost on
# this host now (5100 does the same); the bound is 4 s, or twice this on a
# host too loaded for 4 s.
s=$(date +%s%N)
timeout -s KILL 60 "$SA_RECORD" -a --interval 0.5 --duration 2 -o "$T/ref.sa" 2>"$T/ref.err"
ref=$(since $s)
lim=$((2 * ref > 4000 ? 2 * ref : 4000))

s=$(date +%s%N)
SA_RECORD_TEST_DRAIN_DELAY_US=$DELAY timeout -s KILL 60 "$SA_RECORD" -a --interval 0.5 \
	--duration 2 -o "$T/d.sa" 2>"$T/d.err"
rc=$?
ms=$(since $s)
[ $rc = 0 ] && [ $ms -le $lim ]
ok $? "--duration 2, a slow drain: exit $rc after $ms ms (<= $lim; $ref ms without the delay)"
n=$(late "$T/d.err")
m=$(lost_us "$T/d.sa")
clean "$T/d.sa" && [ "${n:-0}" -gt 0 ] && [ "${m:-0}" -ge "$n" ]
ok $? "finished cleanly; ${n:-no} samples dropped at the deadline, in the file's lost_userspace (${m:-none}; without the delay: $(late "$T/ref.err" | grep . || echo 0))"

# sigterm OUT [ENV]: ms from SIGTERM to exit of a recorder whose first
# interval is on disk (rc: its exit status)
sigterm()
{
	env $2 timeout -s KILL 60 "$SA_RECORD" -a --interval 0.5 -o "$T/$1.sa" 2>"$T/$1.err" &
	rec=$!
	wait_file "$T/$1.sa"
	sleep 0.3
	s=$(date +%s%N)
	kill -TERM $rec
	wait $rec
	rc=$?
	ms=$(since $s)
}
# the bound is 2 s, or twice the same stop without the delay on a host too
# loaded for 2 s
sigterm tref
tref=$ms
sigterm t SA_RECORD_TEST_DRAIN_DELAY_US=$DELAY
tlim=$((2 * tref > 2000 ? 2 * tref : 2000))
[ $rc = 0 ] && [ $ms -le $tlim ]
ok $? "SIGTERM, a slow drain: exit $rc after $ms ms (<= $tlim; $tref ms without the delay)"
n=$(late "$T/t.err")
m=$(lost_us "$T/t.sa")
clean "$T/t.sa" && [ "${n:-0}" -gt 0 ] && [ "${m:-0}" -ge "$n" ]
ok $? "finished cleanly; ${n:-no} samples dropped at the deadline, in lost_userspace (${m:-none})"
kill -KILL $storm 2>/dev/null
wait $storm 2>/dev/null
[ -z "$(ls "$T" | grep 'tmp-')" ]
ok $? "no temporary file left"
done_testing
