#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (about 500 execs a second: every other recorder's side band would carry them)
# 5110-exec-loop.t - a process that execs itself again and again keeps its
# pid: the recorder drops its old images once their samples are written
# (docs/reliability.md, "Exec loops"), so its RSS stays flat. One loop of
# tests/tools/wl-execloop.c (static, without the C library: an exec costs
# the kernel's work only; 10,605 execs in 20 s beside `sa-record -a` on
# this 2-CPU VM at load 6, where two loops of wl-selfexec.c made 43-48/s
# at load 11-20) runs beside `sa-record -p` on it for
# 60 s; its count so far is in its argv, read every 5 s with the
# recorder's RSS. The recorder's RSS at 60 s must be within 20% of its
# RSS at 20 s, over at least 4,000 execs from 20 s to 60 s: old images
# kept cost about 3.8 KB an exec (the recorder of before ae0cf45, the
# exec hook patched out, grew 26% over 1,742 execs). The rate is shown
# (the issue asks for 300+/s; a loaded host gives less, and 4,000 execs
# are enough to see growth). The one long test of 5xxx (about 65 s).
# Recorded with -p on the loop, not -a: with -a the RSS also holds every
# other binary the host runs meanwhile (a compile beside a CI run took
# it from 20,124 to 30,920 KiB), which says nothing about exec loops.
. "$(dirname "$0")/lib.sh"
require_report
require_root_bpf
command -v cc >/dev/null || skip_all "no C compiler"
tmpdir
T=$tap_tmp
cc -O2 -static -nostdlib -fno-stack-protector -fno-omit-frame-pointer -o "$T/execloop" \
	"$SA_SRC/tests/tools/wl-execloop.c" || skip_all "the loop does not compile"
plan 3

# execs PID...: the loops' count so far (their argv[2]; empty in the middle
# of an exec: read again)
execs()
{
	local p n t=0 i
	for p in "$@"; do
		for ((i = 0; i < 50; i++)); do
			n=$(tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | sed -n 3p)
			[ -n "$n" ] && break
			sleep 0.01
		done
		t=$((t + ${n:-0}))
	done
	echo $t
}
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

end=$(($(date +%s) + 63))
"$T/execloop" $end >"$T/n1" &
l1=$!
timeout -s KILL 80 "$SA_RECORD" -q -p $l1 --duration 61 -o "$T/x.sa" 2>"$T/err" &
rec=$!
for ((i = 0; i < 100; i++)); do
	p=$(pgrep -P $rec -x sa-record) && break
	sleep 0.05
done
t0=$(date +%s%N)
: >"$T/log"
# every 5 s: seconds since start, the loop's count, the recorder's RSS (KiB)
for s in 5 10 15 20 25 30 35 40 45 50 55 60; do
	while [ $((($(date +%s%N) - t0) / 1000000)) -lt $((s * 1000)) ]; do sleep 0.1; done
	echo "$s $(execs $l1) $(rss "$p")" >>"$T/log"
done
wait $rec
rc=$?
wait $l1
n=$(cat "$T/n1" | awk '{ s += $1 } END { print s + 0 }')
diag "s execs RSS(KiB): $(tr '\n' ',' <"$T/log")"
read -r e20 r20 < <(awk '$1 == 20 { print $2, $3 }' "$T/log")
read -r e60 r60 < <(awk '$1 == 60 { print $2, $3 }' "$T/log")
low=$(awk '$1 > 20 && p != "" { r = ($2 - p) / 5; if (m == "" || r < m) m = r } { p = $2 } END { print m + 0 }' "$T/log")
rate=$(((${e60:-0} - ${e20:-0}) / 40))
[ $rc = 0 ] && "$SA_REPORT" --info "$T/x.sa" 2>/dev/null | grep -q '^  finished: *cleanly'
ok $? "sa-record -p exit $rc beside ${n:-?} execs of its pid, finished cleanly"
[ $((${e60:-0} - ${e20:-0})) -ge 4000 ]
ok $? "$((${e60:-0} - ${e20:-0})) execs from 20 s to 60 s (>= 4000): $rate/s (slowest 5 s: $low/s)"
[ -n "$r20" ] && [ -n "$r60" ] && [ $((r60 * 100)) -le $((r20 * 120)) ]
ok $? "RSS at 20 s ${r20:-?} KiB, at 60 s ${r60:-?} KiB (<= +20%)"
done_testing
