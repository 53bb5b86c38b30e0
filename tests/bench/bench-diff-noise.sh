#!/bin/bash
# SPDX-License-Identifier: MIT
# How often sa-report --diff colours a frame that did not change, and how
# often it misses one that did (docs/diff.md), on samples/workload:
#   rounds (R of them): one sa-record of three workload processes at once,
#     two at the default split and one with sa_leaf_b's work doubled
#     (-s 60,60,10), each until it used CPU seconds of CPU (-c); the two
#     same-split processes are diffed (--pid into folded text, with and
#     without --user-only), and the first against the doubled one;
#   sequential (N recordings): one process per recording, every pair diffed.
# Per same-split diff: frames drawn, frames coloured, the smallest p times
# the frames (under 0.001 a frame is coloured; the distribution shows the
# margin) and rows of --diff --top marked. Per doubled diff: sa_leaf_b's
# tooltip and fill. Not a timed test.
#
# usage: tests/bench/bench-diff-noise.sh [BUILD_DIR]
#   env: R rounds (default 20), N sequential recordings (default 0),
#        CPU (default 1.5), FREQ (default 999), KEEP (set: keep the files)
set -eu

B=${1:-build}
R=${R:-20}
N=${N:-0}
CPU=${CPU:-1.5}
FREQ=${FREQ:-999}
REP=$B/bin/sa-report
W=$B/samples/workload

tmp=$(mktemp -d)
if [ -n "${KEEP-}" ]; then
	echo "files kept in $tmp"
else
	trap 'rm -rf "$tmp"' EXIT INT TERM
fi

# diffstat A B: "drawn coloured min_p*m stars" of --diff A B (files)
diffstat()
{
	"$REP" --diff --svg -o "$tmp/p.svg" "$1" "$2" 2>/dev/null
	"$REP" --diff --top -o "$tmp/p.top" "$1" "$2" 2>/dev/null
	awk '
	FILENAME ~ /svg$/ && match($0, /Bonferroni over [0-9]+ frames/) {
		m = substr($0, RSTART + 16, RLENGTH - 23) + 0
	}
	FILENAME ~ /svg$/ && /<title>/ && !/<g id="all">/ {
		if (!/fill="#d8d8d8"/) c++
		if (match($0, /, p [0-9][0-9.e+-]*/)) {
			p = substr($0, RSTART + 4, RLENGTH - 4) + 0
			if (minp == "" || p < minp) minp = p
		}
	}
	FILENAME ~ /top$/ && $1 ~ /^[0-9.]+$/ && $7 ~ /\*/ { stars++ }
	END { printf "%d %d %.4g %d\n", m, c, minp * m, stars }' "$tmp/p.svg" "$tmp/p.top"
}

# summary FILE: one line over the "drawn coloured min_p*m stars" lines of FILE
summary()
{
	awk '{ n++; col += $2 > 0; st += $4 > 0; m += $1; if ($3 < 0.05) lo++ }
	END { printf "diffs %d, with a coloured frame %d, with a * row %d, mean frames %.0f, min p x frames < 0.05 in %d\n", n, col, st, m / n, lo }' "$1"
	echo "smallest min p x frames: $(sort -g -k3 "$1" | head -5 | awk '{ printf "%s ", $3 }')"
}

echo "== $R rounds of three workloads -c $CPU at once (60,30,10 twice, 60,60,10), -F $FREQ"
: >"$tmp/r.all"
: >"$tmp/r.user"
for r in $(seq 1 "$R"); do
	d=$tmp/r$r
	mkdir -p "$d"
	timeout -s KILL 300 "$B/bin/sa-record" -q -F "$FREQ" -o "$d/w.sa" -- sh -c "
		'$W' -c $CPU >'$d/s1.out' & echo \$! >'$d/s1.pid'
		'$W' -c $CPU >'$d/s2.out' & echo \$! >'$d/s2.pid'
		'$W' -c $CPU -s 60,60,10 >'$d/d.out' & echo \$! >'$d/d.pid'
		wait" 2>/dev/null
	for k in s1 s2 d; do
		"$REP" --pid "$(cat "$d/$k.pid")" -o "$d/$k.all" "$d/w.sa" 2>/dev/null
		"$REP" --user-only --pid "$(cat "$d/$k.pid")" -o "$d/$k.user" "$d/w.sa" 2>/dev/null
	done
	diffstat "$d/s1.all" "$d/s2.all" >>"$tmp/r.all"
	diffstat "$d/s1.user" "$d/s2.user" >>"$tmp/r.user"
	"$REP" --diff --svg -o "$d/dbl.svg" "$d/s1.user" "$d/d.user" 2>/dev/null
	grep -o '<title>sa_leaf_b&#10;[^<]*</title><rect [^>]*' "$d/dbl.svg" |
		sed 's/&#10;/: /; s/<\/title><rect.*fill=/ fill /; s/<title>//' >>"$tmp/r.dbl"
done
echo "-- same split, all frames"
summary "$tmp/r.all"
echo "-- same split, --user-only"
summary "$tmp/r.user"
echo "-- doubled sa_leaf_b (--user-only): red in $(grep -c 'fill "#ff' "$tmp/r.dbl") of $R"
sed 's/^/  /' "$tmp/r.dbl"

[ "$N" -gt 1 ] || exit 0
echo "== $N recordings of workload -c $CPU one after another, every pair"
for i in $(seq 1 "$N"); do
	timeout -s KILL 120 "$B/bin/sa-record" -q -F "$FREQ" -o "$tmp/q$i.sa" -- "$W" -c "$CPU" \
		>"$tmp/q$i.out" 2>/dev/null
	"$REP" -o "$tmp/q$i.all" "$tmp/q$i.sa" 2>/dev/null
	"$REP" --user-only -o "$tmp/q$i.user" "$tmp/q$i.sa" 2>/dev/null
done
for v in all user; do
	for i in $(seq 1 "$N"); do
		for j in $(seq $((i + 1)) "$N"); do
			diffstat "$tmp/q$i.$v" "$tmp/q$j.$v"
		done
	done >"$tmp/q.$v"
	echo "-- $v frames"
	summary "$tmp/q.$v"
done
echo "sa_leaf_b's share per recording: $(for i in $(seq 1 "$N"); do
	awk '{ n = $NF; t += n; if (index($0, ";sa_leaf_b")) b += n } END { printf "%.2f ", 100 * b / t }' "$tmp/q$i.user"
done)"
