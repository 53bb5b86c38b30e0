#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# JIT maps that are rewritten (issue 31): samples/jitrewrite compiles 12
# functions one by one into anonymous executable pages and writes its
# /tmp/perf-PID.map anew after each compile, newest first, with
# fopen("w") (truncated in place) and then by a rename over the map. Every
# JIT function is in the final map, which perf reads at report time;
# sa-record must have read every version of the map: at most 1% of the JIT
# samples [anon]. Reading the map by byte offset as if it only grew left
# 1,082 of 1,858 [anon] (58%) with fopen("w"); never reopening a map
# replaced by a rename left 1,059 of 1,862 (main at 94fcdd5, 2026-12-02).
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples jitrewrite
tmpdir
T=$tap_tmp

plan 8

REC=

MAPS=()
cleanup()
{
	local m
	touch "$T/go" 2>/dev/null
	[ -n "$REC" ] && kill -9 "$REC" 2>/dev/null
	for m in "${MAPS[@]}"; do rm -f "$m" "$m.tmp"; done
	rm -rf "$T"
}
trap cleanup EXIT

# jit_split FOLDED: "NAMED ANON" samples of jitrewrite whose leaf is a JIT
# function (sa_jit_fn_K) or an unnamed JIT region ([anon]).
jit_split()
{
	awk '{
		n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		k = split(st, f, ";")
		if (f[1] != "jitrewrite") next
		if (f[k] ~ /^sa_jit_fn_[0-9]+$/) named += n
		else if (f[k] == "[anon]") anon += n
	} END { print named + 0, anon + 0 }' "$1"
}

for mode in w rename; do
	# 2 s of the program's own CPU time at 999 Hz: about 2,000 samples. The
	# recording ends while the program still lives (-w), so the map is read
	# as it was during the run, not once more after the process exited.
	rm -f "$T/go"
	"$SA_RECORD" -F 999 -o "$T/$mode.sa" -- "$SA_SAMPLES/jitrewrite" -c 2 -m "$mode" \
		-w "$T/go" >"$T/$mode.out" 2>"$T/$mode.err" &
	rec=$!
	REC=$rec
	for _ in $(seq 1200); do grep -q '^jitrewrite: pid' "$T/$mode.out" && break; sleep 0.05; done
	pid=$(awk '/^jitrewrite: pid/ { print $3 + 0 }' "$T/$mode.out")
	[ -n "$pid" ] && MAPS+=("/tmp/perf-$pid.map")
	kill -INT $rec
	wait $rec
	rc=$?
	touch "$T/go"
	# the stop ends the command too: sa-record exits with its status
	# (SIGTERM's 143 here; 130 if the command got the SIGINT)
	case $rc in 0 | 130 | 143) good=0 ;; *) good=1 ;; esac
	[ $good = 0 ] || diag_file "$T/$mode.err"
	[ $good = 0 ] && [ -n "$pid" ]
	ok $? "-m $mode: sa-record -- jitrewrite, stopped by SIGINT while it runs, ends ($rc)"
	"$SA_REPORT" -o "$T/$mode.folded" "$T/$mode.sa" 2>"$T/$mode.rep.err"
	ok $? "-m $mode: sa-report exits 0"
	read -r named anon <<<"$(jit_split "$T/$mode.folded")"
	jit=$((named + anon))
	# 2 s of CPU at 999 Hz is about 2,000; 500 needs a quarter of that
	ge "$jit" 500
	ok $? "-m $mode: $jit samples in JIT code (want >= 500)"
	# Every name is in the recording once each version of the map is read:
	# [anon] is 0 by construction, not by chance.
	[ "$jit" -gt 0 ] && [ $((anon * 100)) -le "$jit" ]
	ok $? "-m $mode: $anon of $jit JIT samples [anon] (want <= 1%)"
	diag "$(grep 'JIT maps' "$T/$mode.err")"
done

done_testing
