#!/bin/bash
# SPDX-License-Identifier: MIT
# offcpu-doc.sh - runs bench-offcpu.sh and writes its table, with the date
# and the commit, between the "offcpu-doc.sh" markers of docs/off-cpu.md,
# so the figures there come from a run and say which.
# Usage: tests/bench/offcpu-doc.sh [ROUNDS [LOOPS]]   (default 3 200000)
#   SA_BUILD: the build to measure (default build)
set -u
cd "$(dirname "$0")/../.." || exit 1
R=${1:-3} L=${2:-200000}
DOC=docs/off-cpu.md
T=$(mktemp -d /tmp/sa-offdoc.XXXXXX)
trap 'rm -rf "$T"' EXIT
SA_BUILD=${SA_BUILD:-build} bash tests/bench/bench-offcpu.sh "$R" "$L" >"$T/table" ||
	{ cat "$T/table" >&2; exit 1; }
{
	echo "Measured $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD 2>/dev/null ||
		echo unknown) on $(nproc) CPUs ($(uname -r)) by"
	echo "\`tests/bench/offcpu-doc.sh $R $L\`:"
	echo ""
	cat "$T/table"
} >"$T/block"
awk -v block="$T/block" '
	/<!-- offcpu-doc.sh: begin -->/ { print; while ((getline l < block) > 0) print l; skip = 1; next }
	/<!-- offcpu-doc.sh: end -->/ { skip = 0 }
	!skip' "$DOC" >"$T/doc" && cp "$T/doc" "$DOC"
echo "wrote $DOC"
