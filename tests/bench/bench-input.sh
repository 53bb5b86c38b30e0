#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-input.sh - sa-report on other tools' stack text, to an SVG, against
# FlameGraph (stackcollapse-perf.pl + flamegraph.pl, from ../shared/oracles
# beside the clone): folded text of FOLDED_N unique stacks, and perf script
# text of PERF_N samples (tests/bench/gen_text.c, fixed seed). Wall time,
# CPU time (user + sys) and peak RSS of each, one run (the perl runs take
# minutes). sa-report also reads PERF_N / 10 samples: the same peak RSS
# shows that it streams. inferno is measured when inferno-collapse-perf and
# inferno-flamegraph are on PATH. Prints a markdown table.
# Usage: tests/bench/bench-input.sh [BUILD_DIR]
#   env: FOLDED_N (default 1,000,000), PERF_N (default 10,000,000)
set -u
B=${1:-build}
FOLDED_N=${FOLDED_N:-1000000}
PERF_N=${PERF_N:-10000000}
REP=$B/bin/sa-report
GEN=$B/tests/bench/gen-text
SRC=$(cd "$(dirname "$0")/../.." && pwd)
FG=$(dirname "$SRC")/shared/oracles/FlameGraph
for f in "$REP" "$GEN"; do [ -x "$f" ] || { echo "bench-input: $f not built" >&2; exit 1; }; done
[ -d "$FG" ] || { echo "bench-input: $FG missing (shared/oracles beside the clone)" >&2; exit 1; }
T=$(mktemp -d /tmp/sa-bench-input.XXXXXX)
trap 'rm -rf "$T"' EXIT
exec 3>&1

# row TAG CMD...: one table row; CMD's stdout goes to $T/out
row()
{
	local tag=$1 w u s m
	shift
	if ! /usr/bin/time -f "%e %U %S %M" -o "$T/t" "$@" >"$T/out" 2>"$T/err"; then
		echo "| $tag | failed: $(tail -c 200 "$T/err" | tr '\n' ' ') | | |" >&3
		return
	fi
	read -r w u s m <"$T/t"
	printf '| %s | %.2f | %.2f | %.1f |\n' "$tag" "$w" "$(echo "$u + $s" | bc)" \
		"$(echo "scale=1; $m / 1024" | bc)" >&3
}

"$GEN" folded "$FOLDED_N" >"$T/in.folded"
"$GEN" perf "$PERF_N" >"$T/perf.txt"
"$GEN" perf $((PERF_N / 10)) >"$T/perf10.txt"
echo "Inputs: folded text of $FOLDED_N unique stacks ($(($(stat -c %s "$T/in.folded") / 1048576)) MiB);"
echo "perf script text of $PERF_N samples ($(($(stat -c %s "$T/perf.txt") / 1048576)) MiB,"
echo "$(grep -c '^	' "$T/perf.txt") frame lines). Load average at start: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| command | wall s | cpu s | peak RSS MiB |"
echo "|---|---:|---:|---:|"
row "sa-report --svg FOLDED" "$REP" --svg -o "$T/a.svg" "$T/in.folded"
row "flamegraph.pl FOLDED" perl "$FG/flamegraph.pl" "$T/in.folded"
if command -v inferno-flamegraph >/dev/null; then
	row "inferno-flamegraph FOLDED" inferno-flamegraph "$T/in.folded"
fi
row "sa-report --svg PERF_SCRIPT ($PERF_N samples)" "$REP" --svg -o "$T/b.svg" "$T/perf.txt"
row "sa-report --svg PERF_SCRIPT ($((PERF_N / 10)) samples)" "$REP" --svg -o "$T/c.svg" \
	"$T/perf10.txt"
row "stackcollapse-perf.pl PERF_SCRIPT ($PERF_N samples)" perl "$FG/stackcollapse-perf.pl" \
	"$T/perf.txt"
mv "$T/out" "$T/perf.folded"
row "flamegraph.pl (its output)" perl "$FG/flamegraph.pl" "$T/perf.folded"
if command -v inferno-collapse-perf >/dev/null; then
	row "inferno-collapse-perf PERF_SCRIPT" inferno-collapse-perf "$T/perf.txt"
fi
# the two collapsed forms agree (sorted): the comparison is of like with like
"$REP" "$T/perf.txt" 2>/dev/null | LC_ALL=C sort >"$T/sa.sorted"
LC_ALL=C sort "$T/perf.folded" >"$T/pl.sorted"
echo
if cmp -s "$T/sa.sorted" "$T/pl.sorted"; then
	echo "sa-report's folded output equals stackcollapse-perf.pl's ($(wc -l <"$T/sa.sorted") stacks)."
else
	echo "sa-report's folded output DIFFERS from stackcollapse-perf.pl's."
fi
command -v inferno-flamegraph >/dev/null ||
	echo "inferno: not installed here (crates.io unreachable, no Debian package)."
