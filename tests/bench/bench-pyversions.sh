#!/bin/bash
# SPDX-License-Identifier: MIT
# What reading CPython frames costs, version by version (docs/python.md
# "Costs by version"): bench-pycost.sh on pysplit.py (per sample,
# sa_on_cpu_sample) and with OFFCPU=1 on pypingpong.py (per switch-out,
# sa_on_switch) for each of pyenv's 3.8-3.13 and Debian's python3.11,
# ROUNDS alternating rounds each. Prints a markdown table: the median
# ns/run with Python frames, without (--no-python), and the difference,
# each version's difference against 3.11's (Debian's). Needs root.
# usage: tests/bench/bench-pyversions.sh [BUILD_DIR]
# env: SECONDS_REC (5), ROUNDS (3), VERSIONS ("3.8 3.9 3.10 3.11 3.12 3.13"), RAW,
# TABLE_ONLY=1 (the table again from RAW's rounds, nothing run)
set -u
B=${1:-build}
export SECONDS_REC=${SECONDS_REC:-5} ROUNDS=${ROUNDS:-3} PYONLY=1
PYROOT=${PYENV_ROOT:-$HOME/.pyenv}
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=${RAW:-$(mktemp -d)} # RAW=DIR keeps each round's lines there
mkdir -p "$tmp"
[ -n "${RAW:-}" ] || trap 'rm -rf "$tmp"' EXIT

# median NAME FILE: the median ns/run of NAME's lines in FILE
median() {
	# a round whose recorder's program was not found reads 0: no measure
	awk -v n="$1" '$1 == n { for (i = 2; i <= NF; i++) if ($i ~ /^ns\/run/ && $(i - 1) > 0) print $(i - 1) }' "$2" |
		sort -n | awk '{ v[NR] = $1 }
		END { if (!NR) print 0; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

list=("3.11 (Debian):/usr/bin/python3.11")
for v in ${VERSIONS:-3.8 3.9 3.10 3.11 3.12 3.13}; do
	py=$(ls -d "$PYROOT"/versions/"$v".*/bin/python"$v" 2>/dev/null | sort -V | tail -n 1)
	[ -n "$py" ] && list+=("$(basename "$(dirname "$(dirname "$py")")"):$py")
done
: >"$tmp/rows"
for e in "${list[@]}"; do
	lab=${e%%:*} py=${e#*:}
	k=$(echo "$lab" | tr -c 'a-zA-Z0-9.\n' _)
	if [ "${TABLE_ONLY:-0}" != 1 ]; then
		PY=$py OFFCPU=0 "$HERE/bench-pycost.sh" "$B" >"$tmp/$k.on" 2>&1
		PY=$py OFFCPU=1 "$HERE/bench-pycost.sh" "$B" >"$tmp/$k.off" 2>&1
	fi
	echo "$lab $(median python-py "$tmp/$k.on") $(median python-nopy "$tmp/$k.on")" \
		"$(median pp-py "$tmp/$k.off") $(median pp-nopy "$tmp/$k.off")" >>"$tmp/rows"
done
echo "| CPython | per sample ns/run: Python frames / --no-python / + | vs 3.11's + | per switch-out ns/run: Python frames / --no-python / + | vs 3.11's + |"
echo "|---|---:|---:|---:|---:|"
awk '{ lab = $1; for (i = 2; i <= NF - 4; i++) lab = lab " " $i
	  ds = $(NF - 3) - $(NF - 2); do_ = $(NF - 1) - $NF
	  if (NR == 1) { bs = ds; bo = do_ }
	  printf "| %s | %d / %d / %+d | %s | %d / %d / %+d | %s |\n", lab,
		$(NF - 3), $(NF - 2), ds, NR == 1 ? "" : sprintf("%+d ns", ds - bs),
		$(NF - 1), $NF, do_, NR == 1 ? "" : sprintf("%+d ns", do_ - bo) }' "$tmp/rows"
