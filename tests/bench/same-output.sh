#!/bin/bash
# SPDX-License-Identifier: MIT
# same-output.sh - two sa-report builds give byte-identical answers: folded
# (also --lines --addrs), --top, --svg, --pprof, --speedscope, the libdwfl
# walk (SA_UNWIND=libdwfl), --pid, --comm and --time filters taken from the
# recording itself, and --diff (folded and SVG) between consecutive
# recordings; stderr and exit status too. For changes that must not change
# a report (refactors, caches, memory). Prints one line per difference and
# exits 1 when there is one. A whole-system recording names binaries that
# may change or go between the two runs (a build's temporary files): check
# such a difference again before blaming the change.
# Usage: tests/bench/same-output.sh OLD_SA_REPORT NEW_SA_REPORT FILE.sa...
#   SA_REPORT_ARGS: extra options for both (e.g. "--no-cache").
set -u
[ $# -ge 3 ] || { sed -n 's/^# Usage: //p' "$0" >&2; exit 2; }
OLD=$1 NEW=$2
shift 2
T=$(mktemp -d /tmp/sa-same.XXXXXX)
trap 'rm -rf "$T"' EXIT
bad=0 runs=0
read -r -a extra <<<"${SA_REPORT_ARGS:-}"

# same TAG [ENV=V...] -- ARGS...: both builds with ARGS, compared.
same()
{
	local tag=$1 envs=() r bin
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	for r in old new; do
		bin=$OLD
		[ $r = new ] && bin=$NEW
		env "${envs[@]}" "$bin" -q "${extra[@]}" -o "$T/$r.out" "$@" 2>"$T/$r.err"
		echo "rc=$?" >>"$T/$r.err"
	done
	# a run that wrote nothing (a file sa-report rejects) is an empty output
	touch "$T/old.out" "$T/new.out"
	# the one field that names the build
	sed -i 's/"exporter":"sa-report [^"]*"/"exporter":"sa-report"/' "$T/old.out" "$T/new.out"
	runs=$((runs + 1))
	if ! cmp -s "$T/old.out" "$T/new.out" || ! cmp -s "$T/old.err" "$T/new.err"; then
		echo "DIFFERS: $tag ${envs[*]} $*"
		bad=$((bad + 1))
	fi
	rm -f "$T/old.out" "$T/new.out"
}

prev=
for f in "$@"; do
	same folded -- "$f"
	same lines -- --lines --addrs "$f"
	same top -- --top "$f"
	same svg -- --svg "$f"
	same pprof -- --pprof "$f"
	same speedscope -- --speedscope "$f"
	same libdwfl SA_UNWIND=libdwfl -- "$f"
	# filters from the file: its busiest pid and comm, its first 2 s
	: >"$T/pids"
	"$NEW" -q --show-pid -o "$T/pids" "$f" 2>/dev/null
	pid=$(sed 's/;.*//;s/ [0-9]*$//;s/.*-//' "$T/pids" | sort | uniq -c | sort -rn |
		awk 'NR == 1 { print $2 }')
	comm=$(sed 's/;.*//;s/ [0-9]*$//;s/-[0-9]*$//' "$T/pids" | sort | uniq -c | sort -rn |
		awk 'NR == 1 { print $2 }')
	[ -n "$pid" ] && same pid -- --pid "$pid" "$f"
	[ -n "$comm" ] && same comm -- --comm "$comm" "$f"
	same time -- --time 0-2 "$f"
	if [ -n "$prev" ]; then
		same diff -- --diff "$prev" "$f"
		same diff-svg -- --diff --svg "$prev" "$f"
	fi
	prev=$f
done
echo "same-output: $runs comparisons, $bad differ"
[ "$bad" = 0 ]
