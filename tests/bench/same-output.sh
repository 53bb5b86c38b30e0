#!/bin/bash
# SPDX-License-Identifier: MIT
# same-output.sh - two sa-report builds give byte-identical output: folded,
# --top, --svg, --pprof, --speedscope on each
# recording, and --diff (folded and SVG) between consecutive recordings.
# For changes that must not change behaviour (refactors, caches, memory).
# Prints one line per difference; exits 1 when there is one. A whole-system
# recording names binaries that may change or go between the two runs (a
# build's temporary files): check such a difference again before blaming
# the change.
# Usage: tests/bench/same-output.sh OLD_SA_REPORT NEW_SA_REPORT FILE.sa...
#   SA_REPORT_ARGS: extra options for both (e.g. "--no-cache").
set -u
[ $# -ge 3 ] || { sed -n 's/^# Usage: //p' "$0" >&2; exit 2; }
OLD=$1 NEW=$2
shift 2
T=$(mktemp -d /tmp/sa-same.XXXXXX)
trap 'rm -rf "$T"' EXIT
diffs=0 runs=0
read -r -a extra <<<"${SA_REPORT_ARGS:-}"

# same NAME ARGS...: run both builds with ARGS, compare stdout-or-file bytes.
same()
{
	local name=$1 rc_o rc_n
	shift
	"$OLD" "${extra[@]}" -o "$T/old" "$@" 2>"$T/old.err"
	rc_o=$?
	"$NEW" "${extra[@]}" -o "$T/new" "$@" 2>"$T/new.err"
	rc_n=$?
	runs=$((runs + 1))
	if [ $rc_o != $rc_n ] || ! cmp -s "$T/old" "$T/new"; then
		echo "DIFFERS: $name (exit $rc_o vs $rc_n)"
		diffs=$((diffs + 1))
	fi
	rm -f "$T/old" "$T/new"
}

prev=
for f in "$@"; do
	b=$(basename "$f")
	same "$b folded" "$f"
	same "$b folded --lines --addrs" --lines --addrs "$f"
	same "$b --top" --top "$f"
	same "$b --svg" --svg "$f"
	same "$b --pprof" --pprof "$f"
	same "$b --speedscope" --speedscope "$f"
	if [ -n "$prev" ]; then
		same "--diff $(basename "$prev") $b" --diff "$prev" "$f"
		same "--diff --svg $(basename "$prev") $b" --diff --svg "$prev" "$f"
	fi
	prev=$f
done
echo "same-output: $runs comparisons, $diffs differ"
[ $diffs = 0 ]
