#!/bin/bash
# SPDX-License-Identifier: MIT
# What reading CPython frames costs per sample (docs/python.md "Costs"):
# the run time of sa-record's BPF programs (bpf_stats) per run and the
# recorder's CPU, with and without --no-python, on samples/workload -t 2 (no
# Python: the price is one map lookup) and on tests/tools/pysplit.py (Python
# frames walked and named), attached with -p for SECONDS at FREQ Hz.
# OFFCPU=1: the same for sa_on_switch (--off-cpu), per switch-out walked,
# on tests/tools/pypingpong.py (two threads passing a byte over pipes on
# one CPU, each blocking 22 Python frames deep).
# Alternating rounds; medians are left to the reader. Needs root.
# usage: tests/bench/bench-pycost.sh [BUILD_DIR]
# env: FREQ (999), SECONDS_REC (8), ROUNDS (3), OFFCPU (0), PY (the interpreter,
# /usr/bin/python3.11), PYONLY (1: the Python workload alone, as
# bench-pyversions.sh runs it)
set -u
B=${1:-build}
FREQ=${FREQ:-999}
D=${SECONDS_REC:-8}
ROUNDS=${ROUNDS:-3}
REC=$B/bin/sa-record
SRC=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "bench-pycost: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$REC" ] && [ -x "$B/samples/workload" ] || die "build $REC and $B/samples/workload first"
tmp=$(mktemp -d)
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
trap 'sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"; kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' \
	EXIT INT TERM
sysctl -qw kernel.bpf_stats_enabled=1

OFFCPU=${OFFCPU:-0}
PY=${PY:-/usr/bin/python3.11}
PYONLY=${PYONLY:-0}
PROG=sa_on_cpu_sample PTYPE=7 # perf_event
Q=-q
[ "$OFFCPU" = 1 ] && PROG=sa_on_switch PTYPE=26 Q= # tracing: the busiest of them; the summary

# bpf_ns PID: "runs ns" of $PROG in sa-record PID, from its fds' fdinfo
bpf_ns() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk -v want="$PTYPE" '
		$1 == "prog_id:" { id = $2 }
		$1 == "prog_type:" { pt = $2 }
		$1 == "run_time_ns:" && !(id in seen) && pt == want { ns[id] = $2 }
		$1 == "run_cnt:" && !(id in seen) && pt == want { runs[id] = $2; seen[id] = 1 }
		END { for (i in runs) if (runs[i] > r) { r = runs[i]; n = ns[i] } print r + 0, n + 0 }'
}

# one NAME ARGS... -- CMD...: CMD in the background, recorded with ARGS for D s
one() {
	local name=$1 wp tp rp runs=0 ns=0 cpu args=()
	shift
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	"$@" >/dev/null &
	wp=$!
	sleep 0.5
	/usr/bin/time -f '%U %S' -o "$tmp/$name.time" \
		"$REC" $Q -F "$FREQ" "${args[@]}" -p "$wp" -o "$tmp/$name.sa" --duration "$D" \
		2>"$tmp/$name.err" &
	tp=$!
	sleep 1
	rp=$(pgrep -P "$tp" sa-record || echo "$tp")
	sleep $((D - 2))
	read -r runs ns < <(bpf_ns "$rp")
	wait "$tp"
	kill "$wp" 2>/dev/null
	wait "$wp" 2>/dev/null
	cpu=$(awk '{print ($1 + $2) * 1000}' "$tmp/$name.time")
	printf '%-10s recorder %6.0f ms  %s %6d runs, %5.0f ns/run%s\n' "$name" "$cpu" "$PROG" \
		"$runs" "$(awk -v n="$ns" -v r="$runs" 'BEGIN { print r ? n / r : 0 }')" \
		"$(sed -n 's/.*off-CPU: \([0-9]*\) periods kept.*/, \1 periods kept/p' "$tmp/$name.err")"
}

if [ "$OFFCPU" = 1 ]; then
	for r in $(seq "$ROUNDS"); do
		echo "== round $r: $D s, --off-cpu, pypingpong.py 20 on CPU 1"
		one pp-nopy --off-cpu --no-python -- \
			taskset -c 1 "$PY" "$SRC/tests/tools/pypingpong.py" 20 $((D + 3))
		one pp-py --off-cpu -- \
			taskset -c 1 "$PY" "$SRC/tests/tools/pypingpong.py" 20 $((D + 3))
	done
	exit 0
fi
for r in $(seq "$ROUNDS"); do
	echo "== round $r: $D s at $FREQ Hz"
	if [ "$PYONLY" != 1 ]; then
		one native-nopy --no-python -- "$B/samples/workload" -t 2 -d $((D + 3))
		one native-py -- "$B/samples/workload" -t 2 -d $((D + 3))
	fi
	one python-nopy --no-python -- "$PY" "$SRC/tests/tools/pysplit.py" 1000 /dev/null
	one python-py -- "$PY" "$SRC/tests/tools/pysplit.py" 1000 /dev/null
done
