#!/bin/bash
# SPDX-License-Identifier: MIT
# Samples x period / CPU time of a busy workload (2 threads) and of the
# ping-pong under two sa-record builds, alternating: what the dithering
# thread's priority and placement cost (issue 29, issue 36).
# usage: tests/accuracy/dither-cmp.sh BUILD_A BUILD_B [RUNS] [HZ]
A=$1 B=$2 RUNS=${3:-3} F=${4:-999}
S=$(dirname "$0")/../../build/samples
T=$(mktemp -d /tmp/sa-dcmp.XXXXXX)
trap 'rm -rf "$T"' EXIT
ratio() # COMMS FILE.sa CPU_S
{
	"$1"/bin/sa-report "$3" | awk -v c="$2" -v f="$F" -v cpu="$4" '
		{ split($0, a, ";"); if (index(" " c " ", " " a[1] " ")) s += $NF }
		END { printf "%.3f", s / (f * cpu) }'
}
for i in $(seq "$RUNS"); do
	for b in "$A" "$B"; do
		timeout -s KILL 120 "$b"/bin/sa-record -q -F "$F" -o "$T/w.sa" -- \
			"$S"/workload -t 2 -c 5 >"$T/w.out"
		cpu=$(awk '/thread cpu/ { s += $4 } END { print s }' "$T/w.out")
		rw=$(ratio "$b" workload "$T/w.sa" "$cpu")
		timeout -s KILL 120 "$b"/bin/sa-record -q -F "$F" -o "$T/p.sa" -- \
			"$S"/pingpong -c 5 -w 20 >"$T/p.out"
		cpu=$(awk '$2 == "thread" && $3 ~ /^sa-p/ { s += $9 } END { print s / 1e9 }' "$T/p.out")
		rp=$(ratio "$b" "sa-ping sa-pong" "$T/p.sa" "$cpu")
		echo "$b busy $rw pingpong $rp"
	done
done
