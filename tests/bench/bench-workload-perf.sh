#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks the split of samples/workload against perf on this machine: runs the
# workload under `perf record -e cpu-clock -g`, prints the workload's own
# measured split next to perf's inclusive share of each leaf (samples whose
# stack holds that function), and, when sa-record and sa-report are built,
# the same shares from an sa recording of the same workload. Not a timed test.
# The workload runs until it has used DURATION seconds of CPU (-c), so a busy
# host lengthens the run instead of thinning the samples.
#
# usage: tests/bench/bench-workload-perf.sh [BUILD_DIR]
#   env: FREQ (default 999), DURATION (CPU seconds per thread, default 5),
#        SPLIT (default 60,30,10), THREADS (default 1)
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

echo "== workload -c $DURATION -s $SPLIT -t $THREADS under perf record -e cpu-clock -g -F $FREQ"
perf record -q -e cpu-clock -g -F "$FREQ" -o "$tmp/perf.data" -- \
	"$W" -c "$DURATION" -s "$SPLIT" -t "$THREADS" >"$tmp/workload.out" 2>"$tmp/perf.err" || {
	cat "$tmp/perf.err" >&2
	exit 1
}
sed 's/^/  /' "$tmp/workload.out"

echo "== perf's view (inclusive share of the workload's samples, in %)"
# perf script: a header line per sample, then one indented frame per line,
# leaf first, then a blank line. Turned into folded lines (root first) so that
# perf and sa go through the same share computation.
perf script -i "$tmp/perf.data" 2>/dev/null | awk '
function flush() { if (st != "") c[comm st]++ }
/^[^ \t]/ { if (n) flush(); n = 1; comm = $1; st = ""; next }
/^[ \t]*$/ { if (n) flush(); n = 0; next }
{ s = $2; sub(/\+0x[0-9a-f]*$/, "", s); st = ";" s st }
END { if (n) flush(); for (k in c) print k, c[k] }' >"$tmp/perf.folded"

# shares FOLDED: inclusive shares of the workload's samples
shares()
{
	awk '
	{
		n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		k = split(st, f, ";")
		if (f[1] != "workload")
			next
		st = ";" st ";"
		tot += n
		if (index(st, ";sa_leaf_a;")) a += n
		if (index(st, ";sa_leaf_b;")) b += n
		if (index(st, ";sa_leaf_c;")) c += n
		if (index(st, ";sa_shared_helper;")) h += n
		if (index(st, ";main;")) m += n
		if (f[k] == "sa_shared_helper") hs += n
	}
	END {
		if (!tot) {
			print "  no samples of the workload"
			exit 1
		}
		printf "  samples %d\n", tot
		printf "  sa_leaf_a %.2f\n  sa_leaf_b %.2f\n  sa_leaf_c %.2f\n", 100*a/tot, 100*b/tot, 100*c/tot
		printf "  sa_shared_helper total %.2f self %.2f\n", 100*h/tot, 100*hs/tot
		printf "  stacks reaching main %.2f\n", 100*m/tot
	}' "$1"
}
shares "$tmp/perf.folded"

REC=$B/bin/sa-record
REP=$B/bin/sa-report
if [ "$(id -u)" != 0 ] || [ ! -x "$REC" ] || [ ! -x "$REP" ]; then
	echo "== sa: skipped (needs root and $REC, $REP)"
	exit 0
fi
echo "== the same under sa-record -F $FREQ, shares from sa-report's folded output"
"$REC" -q -F "$FREQ" -o "$tmp/w.sa" -- "$W" -c "$DURATION" -s "$SPLIT" -t "$THREADS" \
	>"$tmp/workload2.out" || exit 1
grep 'leaf sa_leaf' "$tmp/workload2.out" | sed 's/^/  /'
"$REP" -o "$tmp/sa.folded" "$tmp/w.sa" || exit 1
shares "$tmp/sa.folded"
