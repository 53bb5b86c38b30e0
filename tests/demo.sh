#!/bin/sh
# SPDX-License-Identifier: MIT
# `make demo`: records samples/workload for about 5 s and renders it with
# sa-report (folded stacks, the --top table, and an SVG flame graph when
# sa-report has --svg). Without root or BPF it renders samples/demo.sa, a
# small recording shipped in the tree, instead.
#
# usage: sh tests/demo.sh BUILD_DIR
set -u

B=${1:-build}
REC=$B/bin/sa-record
REP=$B/bin/sa-report
OUT=$B/demo
SRC=$(cd "$(dirname "$0")/.." && pwd)

say()
{
	printf 'demo: %s\n' "$*"
}

die()
{
	printf 'demo: %s\n' "$*" >&2
	exit 1
}

# why_no_record: prints why a live recording cannot be made here, or nothing.
why_no_record()
{
	[ "$(id -u)" = 0 ] || { echo "not root (sa-record loads BPF programs)"; return; }
	[ -x "$REC" ] || { echo "$REC not built"; return; }
	command -v bpftool >/dev/null 2>&1 || { echo "bpftool missing, cannot probe BPF"; return; }
	bpftool prog list >/dev/null 2>&1 || echo "BPF unavailable here (bpftool prog list fails)"
}

[ -x "$REP" ] || die "$REP not built; run make"
mkdir -p "$OUT" || die "cannot create $OUT"

why=$(why_no_record)
if [ -z "$why" ]; then
	[ -x "$B/samples/workload" ] || die "$B/samples/workload not built; run make"
	REC_FILE=$OUT/workload.sa
	say "recording $B/samples/workload for 5 s at 999 Hz (main -> sa_run -> sa_leaf_a/b/c, 60/30/10)"
	# a fresh file: sa-record would keep the previous one as workload.sa.old
	rm -f "$REC_FILE" "$REC_FILE.old"
	"$REC" -q -F 999 -o "$REC_FILE" -- "$B/samples/workload" -d 5 || die "sa-record failed"
else
	REC_FILE=$SRC/samples/demo.sa
	say "no live recording: $why"
	if [ ! -f "$REC_FILE" ]; then
		say "and no shipped recording ($REC_FILE) yet: nothing to render; run make demo as root"
		exit 0
	fi
	say "rendering the recording shipped in the tree, $REC_FILE"
fi

"$REP" -o "$OUT/workload.folded" "$REC_FILE" || die "sa-report (folded) failed"
say "folded stacks:   $OUT/workload.folded"
if "$REP" --top -o "$OUT/workload.top" "$REC_FILE"; then
	say "self/total:      $OUT/workload.top"
	head -n 12 "$OUT/workload.top" | sed 's/^/    /'
else
	say "sa-report --top failed; no table"
fi
if "$REP" --help 2>&1 | grep -q -e '--svg'; then
	"$REP" --svg -o "$OUT/workload.svg" "$REC_FILE" || die "sa-report --svg failed"
	say "flame graph:     $OUT/workload.svg"
	say "open it in a web browser (e.g. xdg-open $OUT/workload.svg, or firefox $OUT/workload.svg);"
	say "click a frame to zoom, Ctrl-F to search"
else
	say "no flame graph: this sa-report has no --svg yet"
	say "(FlameGraph's flamegraph.pl reads $OUT/workload.folded as it is)"
fi
