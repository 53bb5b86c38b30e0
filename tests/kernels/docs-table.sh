#!/bin/bash
# SPDX-License-Identifier: MIT
# docs-table.sh TABLE DOC - puts run.sh's table (TABLE, markdown) into DOC
# (docs/deploy.md) between its kernel-matrix markers, with the date and the
# commit it was made at, inserted before "## Always on" the first time.
# Only the section is written, and only when the table itself changed: a
# run with the same results leaves DOC as it was.
set -u
table=$1 doc=$2
begin='<!-- kernel matrix: begin; written by make check-kernels (tests/kernels/run.sh), do not edit -->'
end='<!-- kernel matrix: end -->'
old=$(awk -v b="$begin" -v e="$end" '$0 == e { on = 0 } on && /^\|/ { print } $0 == b { on = 1 }' "$doc")
[ "$old" = "$(cat "$table")" ] && exit 0
src=$(cd "$(dirname "$doc")/.." && pwd)
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$src" diff --quiet HEAD -- . ':!docs/deploy.md' 2>/dev/null || commit="$commit with changes"
section=$(
	echo "$begin"
	echo "### Kernels tested"
	echo
	echo "\`make check-kernels\` at $commit, $(date -u +%Y-%m-%d): the smoke set"
	echo "(tests/kernels/smoke.sh) on this machine's kernel and on Debian's own kernel"
	echo "packages booted under qemu. pass: every check of the feature held (the"
	echo "tests/cli scripts' tolerances); refused: sa-record refused it as that kernel"
	echo "is declared to (tests/kernels/expect.list): exit 125, one line naming what it"
	echo "needs, no file touched; FAIL: neither."
	echo
	cat "$table"
	echo "$end"
)
tmp=$(mktemp "$doc.XXXXXX") || exit 1
if grep -qxF "$begin" "$doc"; then
	awk -v b="$begin" -v e="$end" -v s="$section" '
		$0 == b { print s; skip = 1; next }
		$0 == e { skip = 0; next }
		!skip' "$doc" >"$tmp"
else
	awk -v s="$section" '/^## Always on$/ && !done { print s; print ""; done = 1 } { print }' "$doc" >"$tmp"
fi
chmod --reference="$doc" "$tmp" && mv "$tmp" "$doc"
