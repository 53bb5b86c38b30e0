#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-report.sh - sa-report speed: (1) the same unique stacks at 1M and at
# 100M samples (synthetic recordings; target: time ratio <= 1.2, i.e. cost
# follows unique stacks, not samples); (2) when perf (and sa-record, as root)
# are present, sa-report folded output against `perf script` on a
# `perf record -e cpu-clock -g -a -F 999` capture of the same workload.
# Not a timed test: it prints numbers. Usage: bench-report.sh [BUILD_DIR]
#   STACKS=20000 DEPTH=24 INTERVALS=10 DURATION=10 tune it.
# Fairness: the generator writes one COUNT record per (stack, interval)
# cell with a non-zero count. With STACKS x INTERVALS above the smaller
# sample count, the 1M file lacks cells the 100M file has, and the ratio
# measures record counts, not samples. INTERVALS=10 (200k cells < 1M
# samples) gives both files the same set of (stack, interval) keys.
set -u
B=${1:-${SA_BUILD:-build}}
REPORT=$B/bin/sa-report
GEN=$B/tests/bench/gen-synthetic
STACKS=${STACKS:-20000}
DEPTH=${DEPTH:-24}
INTERVALS=${INTERVALS:-10}
DURATION=${DURATION:-10}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# best-of-3 wall time of a command, in seconds
best() {
	local best=999999 t
	for _ in 1 2 3; do
		t=$( { TIMEFORMAT=%R; time "$@" >/dev/null 2>&1; } 2>&1 | tail -1)
		best=$(echo "$t $best" | awk '{ print ($1 < $2) ? $1 : $2 }')
	done
	echo "$best"
}

[ -x "$REPORT" ] && [ -x "$GEN" ] || { echo "build $REPORT and $GEN first" >&2; exit 1; }
echo "== synthetic: $STACKS unique stacks, depth $DEPTH, $INTERVALS intervals"
"$GEN" -s "$STACKS" -d "$DEPTH" -p 16 -k 64 -i "$INTERVALS" -n 1000000 -o "$TMP/1m.sa" || exit 1
"$GEN" -s "$STACKS" -d "$DEPTH" -p 16 -k 64 -i "$INTERVALS" -n 100000000 -o "$TMP/100m.sa" || exit 1
t1=$(best "$REPORT" -q -o "$TMP/1m.folded" "$TMP/1m.sa")
t2=$(best "$REPORT" -q -o "$TMP/100m.folded" "$TMP/100m.sa")
echo "1M samples:   ${t1} s ($(stat -c %s "$TMP/1m.sa") bytes)"
echo "100M samples: ${t2} s ($(stat -c %s "$TMP/100m.sa") bytes)"
echo "ratio 100M/1M: $(echo "$t2 $t1" | awk '{ printf "%.2f", ($2 > 0 ? $1 / $2 : 0) }') (target <= 1.2)"

command -v perf >/dev/null || { echo "perf not found: skipping the perf comparison"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "not root: skipping the perf comparison"; exit 0; }
echo "== $DURATION s whole-system capture at 999 Hz of a CPU-bound workload"
WORK="$B/samples/workload"
[ -x "$WORK" ] || WORK=""
run_load() { if [ -n "$WORK" ]; then "$WORK" >/dev/null 2>&1; else timeout $((DURATION + 2)) sh -c 'while :; do :; done'; fi; }
run_load & load=$!
# perf record sometimes aborts ("stack smashing detected") while writing
# build ids: check the file decodes, retry once, then retry without build ids.
for opt in "" "" "--no-buildid"; do
	perf record -q -e cpu-clock -g -a -F 999 $opt -o "$TMP/perf.data" -- sleep "$DURATION" \
		>/dev/null 2>&1
	[ -n "$(perf script -i "$TMP/perf.data" 2>/dev/null | head -c 1)" ] && break
	echo "perf record gave an unreadable perf.data${opt:+ (with $opt)}; retrying" >&2
done
if [ -x "$B/bin/sa-record" ]; then
	"$B/bin/sa-record" -F 999 -a --duration "$DURATION" -o "$TMP/rec.sa" 2>/dev/null
fi
kill $load 2>/dev/null; wait $load 2>/dev/null
tp=$(best perf script -i "$TMP/perf.data")
echo "perf script:      ${tp} s ($(stat -c %s "$TMP/perf.data") bytes perf.data)"
if [ -s "$TMP/rec.sa" ]; then
	ts=$(best "$REPORT" -q -o "$TMP/rec.folded" "$TMP/rec.sa")
	echo "sa-report folded: ${ts} s ($(stat -c %s "$TMP/rec.sa") bytes .sa)"
	echo "speed-up: $(echo "$tp $ts" | awk '{ printf "%.1fx", ($2 > 0 ? $1 / $2 : 0) }') (target >= 20x)"
else
	echo "sa-record not built or failed: no sa-report time on the same workload"
fi
