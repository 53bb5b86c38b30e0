#!/bin/bash
# SPDX-License-Identifier: MIT
# same-output.sh - do two sa-report builds answer the same, byte for byte?
# Runs both on each recording in folded, --top and --svg form, with the
# libdwfl walk (SA_UNWIND=libdwfl), and with --pid, --comm and --time
# filters taken from the recording itself; prints one line per difference.
# For changes that must not change a report (e.g. how binaries are cached).
# usage: tests/bench/same-output.sh OLD_SA_REPORT NEW_SA_REPORT FILE.sa...
set -u
[ $# -ge 3 ] || { echo "usage: $0 OLD NEW FILE.sa..." >&2; exit 2; }
OLD=$1 NEW=$2
shift 2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
bad=0 runs=0
# one FILE TAG [ENV=V] -- ARGS...: both builds, compared
one() {
	local f=$1 tag=$2 envs=() r
	shift 2
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	for r in old new; do
		local bin=$OLD
		[ $r = new ] && bin=$NEW
		env "${envs[@]}" "$bin" -q "$@" -o "$T/$r.out" "$f" 2>"$T/$r.err"
		echo "rc=$?" >>"$T/$r.err"
	done
	runs=$((runs + 1))
	if ! cmp -s "$T/old.out" "$T/new.out" || ! cmp -s "$T/old.err" "$T/new.err"; then
		echo "DIFFERS: $f $tag ${envs[*]} $*"
		bad=$((bad + 1))
	fi
}
for f in "$@"; do
	one "$f" folded -- 
	one "$f" top -- --top
	one "$f" svg -- --svg
	one "$f" libdwfl SA_UNWIND=libdwfl --
	# filters from the file: its busiest pid and comm, the first half of its time
	"$NEW" -q --show-pid -o "$T/pids" "$f" 2>/dev/null
	pid=$(sed 's/;.*//;s/ [0-9]*$//;s/.*-//' "$T/pids" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
	comm=$(sed 's/;.*//;s/ [0-9]*$//;s/-[0-9]*$//' "$T/pids" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
	[ -n "$pid" ] && one "$f" pid -- --pid "$pid"
	[ -n "$comm" ] && one "$f" comm -- --comm "$comm"
	one "$f" time -- --time 0-2
done
echo "same-output: $runs comparisons, $bad differ"
[ "$bad" = 0 ]
