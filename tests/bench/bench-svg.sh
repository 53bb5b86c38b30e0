#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-svg.sh - time and size of the SVG flame graph of a synthetic profile
# with 100,000 unique stacks (issue 6: under 2 s, under 5 MB with the default
# --min-width). The profile is folded text made here with a fixed seed: 4
# comms, depth 8-30, 12 names per level, skewed counts, unique leaves. Drawn
# by build/tests/bench/folded-driver (make -f Makefile -f tests/report.mk
# folded-driver), and by sa-report too when it accepts folded input.
# Usage: tests/bench/bench-svg.sh [BUILD_DIR] [UNIQUE_STACKS]
set -eu
B=${1:-build}
N=${2:-100000}
DRIVER=$B/tests/bench/folded-driver
T=$(mktemp -d /tmp/sa-bench-svg.XXXXXX)
trap 'rm -rf "$T"' EXIT

[ -x "$DRIVER" ] || { echo "bench-svg: $DRIVER not built" >&2; exit 1; }

awk -v n="$N" 'BEGIN {
	srand(42)
	split("nginx postgres java python", comm, " ")
	for (i = 0; i < n; i++) {
		d = 8 + int(rand() * 23)
		s = comm[1 + int(rand() * rand() * 4)] ";main"
		for (k = 1; k < d; k++)
			s = s ";fn_" k "_" int(rand() * rand() * 12)
		r = rand()
		printf "%s;leaf_%d %d\n", s, i, 1 + int(2000 * r * r * r * r * r * r)
	}
}' >"$T/in.folded"
uniq=$(wc -l <"$T/in.folded")
samples=$(awk '{ t += $NF } END { print t }' "$T/in.folded")
echo "input: $uniq unique stacks, $samples samples, $(du -k "$T/in.folded" | cut -f1) KB folded"

# run LABEL CMD...: wall and CPU time (bash's time), output size, boxes drawn.
run()
{
	local label=$1 tm
	shift
	tm=$( { TIMEFORMAT='%R %U %S'; time "$@" >"$T/out.svg"; } 2>&1 )
	set -- $tm
	printf '%-40s %5.2f s wall %5.2f s cpu  %7.2f MB  %7d boxes\n' "$label" "$1" \
		"$(echo "$2 + $3" | bc)" "$(echo "scale=2; $(stat -c %s "$T/out.svg") / 1048576" | bc)" \
		"$(grep -c '</title><rect' "$T/out.svg" || true)"
}

run "folded-driver --svg (default min-width)" "$DRIVER" --svg "$T/in.folded"
if command -v xmllint >/dev/null; then
	xmllint --noout "$T/out.svg" && echo "xmllint: well-formed"
fi
run "folded-driver --svg --min-width 0" "$DRIVER" --svg --min-width 0 "$T/in.folded"
run "folded-driver (folded, for reference)" "$DRIVER" "$T/in.folded"
if [ -x "$B/bin/sa-report" ] && "$B/bin/sa-report" --svg -o "$T/sr.svg" "$T/in.folded" 2>/dev/null; then
	run "sa-report --svg FOLDED" "$B/bin/sa-report" --svg -o /dev/stdout "$T/in.folded"
fi
