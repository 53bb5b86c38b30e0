#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks the split of samples/workload against perf on this machine: runs the
# workload under `perf record -e cpu-clock -g`, prints the workload's own
# measured split next to perf's inclusive share of each leaf (samples whose
# stack holds that function), so both can be compared. Not a timed test.
#
# usage: tests/bench/bench-workload-perf.sh [BUILD_DIR] [-- WORKLOAD ARGS]
#   env: FREQ (default 999), DURATION (default 5), SPLIT (default 60,30,10),
#        THREADS (default 1)
set -eu

B=${1:-build}
FREQ=${FREQ:-999}
DURATION=${DURATION:-5}
SPLIT=${SPLIT:-60,30,10}
THREADS=${THREADS:-1}
W=$B/samples/workload

command -v perf >/dev/null || { echo "bench-workload-perf: perf not installed" >&2; exit 1; }
[ -x "$W" ] || { echo "bench-workload-perf: $W missing (make $W)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "== workload -d $DURATION -s $SPLIT -t $THREADS under perf record -e cpu-clock -g -F $FREQ"
perf record -q -e cpu-clock -g -F "$FREQ" -o "$tmp/perf.data" -- \
	"$W" -d "$DURATION" -s "$SPLIT" -t "$THREADS" >"$tmp/workload.out" 2>"$tmp/perf.err" || {
	cat "$tmp/perf.err" >&2
	exit 1
}
sed 's/^/  /' "$tmp/workload.out"

echo "== perf's view (inclusive share of the workload's samples, in %)"
# perf script: a header line per sample, then one indented frame per line,
# leaf first, then a blank line. Only samples of the workload's comm count.
perf script -i "$tmp/perf.data" 2>/dev/null | awk '
function flush() {
	if (comm != "workload")
		return
	tot++
	if (st ~ / sa_leaf_a /) a++
	if (st ~ / sa_leaf_b /) b++
	if (st ~ / sa_leaf_c /) c++
	if (st ~ / sa_shared_helper /) h++
	if (st ~ / main /) m++
	if (leaf == "sa_shared_helper") hs++
}
/^[^ \t]/ { if (n) flush(); n = 1; comm = $1; st = " "; leaf = ""; next }
/^[ \t]*$/ { if (n) flush(); n = 0; next }
{
	s = $2
	sub(/\+0x[0-9a-f]*$/, "", s)
	if (leaf == "")
		leaf = s
	st = st s " "
}
END {
	if (n)
		flush()
	if (!tot) {
		print "  no samples of the workload"
		exit 1
	}
	printf "  samples %d\n", tot
	printf "  sa_leaf_a %.2f\n  sa_leaf_b %.2f\n  sa_leaf_c %.2f\n", 100*a/tot, 100*b/tot, 100*c/tot
	printf "  sa_shared_helper total %.2f self %.2f\n", 100*h/tot, 100*hs/tot
	printf "  stacks reaching main %.2f\n", 100*m/tot
}'
