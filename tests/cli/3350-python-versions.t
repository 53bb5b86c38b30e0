#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# CPython frames for each version production hosts run (issue 47,
# docs/python.md): for each of pyenv's 3.8 to 3.13 and Debian's python3,
# recorded with --call-graph fp and auto (off-CPU dwarf too): tests/tools/pysplit.py's three
# functions (1:2:3 by their own thread CPU clocks) each get their share of
# the samples under the three within 3 points of their clocks; off-CPU,
# tests/tools/pyoffcpu.py's three (time.sleep, a pipe, an Event) each get
# their share of the blocked time within 3 points; --info names the
# version as read; the names read the same with the interpreters hidden.
# A version not installed is a counted skip (a failure with CI=true).
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
tmpdir
T=$tap_tmp
PYROOT=${PYENV_ROOT:-$HOME/.pyenv}

# label and interpreter, one a line: the newest pyenv build of each minor
VERSIONS=${SA_PY_VERSIONS:-"3.8 3.9 3.10 3.11 3.12 3.13"} # a subset by hand: SA_PY_VERSIONS="3.13"
list=()
for v in $VERSIONS; do
	py=$(ls -d "$PYROOT"/versions/"$v".*/bin/python"$v" 2>/dev/null | sort -V | tail -n 1)
	list+=("$v:${py:-$PYROOT/versions/$v.x/bin/python$v}")
done
[ -n "${SA_PY_VERSIONS:-}" ] || list+=("debian:/usr/bin/python3")
PER=22
plan $((${#list[@]} * PER))

# under FOLDED FUNC: samples (or microseconds) whose stack holds FUNC_[p]
under() { folded_with "$1" "" "$2_[p]"; }
# clk OUT FUNC: FUNC's seconds by its own clock in OUT; the three's share of it
share_clk()
{
	awk -v f="$2" '$1 == "func" { t += $3; if ($2 == f) v = $3 } END { printf "%.2f", t ? 100 * v / t : 0 }' "$1"
}
# shares WHAT FOLDED OUT TOL F1 F2 F3: each function's share of the three in
# FOLDED against its clock in OUT (three test points)
shares()
{
	local f n got want tot=0
	for f in $5 $6 $7; do
		tot=$((tot + $(under "$2" $f)))
	done
	for f in $5 $6 $7; do
		n=$(under "$2" $f)
		got=$(pct "$n" "$tot")
		want=$(share_clk "$3" $f)
		within "$got" "$want" "$4"
		ok $? "$1: $f $got% of the three ($tot), its clock $want% (want +- $4)"
	done
}
# hidden DIR CMD...: CMD with DIR (the interpreter's) covered by an empty tmpfs
hidden()
{
	local d=$1
	shift
	unshare -m sh -c 'mount -t tmpfs none "$1" && shift && exec "$@"' sh "$d" "$@"
}

# On-CPU: pysplit.py 2.6 s of CPU at 1999 Hz, about 5,200 samples under the
# three (4,500 required). Binomial sd of a share at n = 4,500: 0.75 points
# at p = 1/2, 0.70 at 1/3, 0.56 at 1/6; 3 points is 4.0, 4.3 and 5.4 sd:
# P(fail) = 6.3e-5 + 1.7e-5 + 0 per recording, 14 recordings (7
# interpreters, fp and auto) 1.1e-3 at worst, 4e-4 at the usual 5,200.
# Off-CPU: no sampling error (stays are measured; 3320 says what can part
# them from the clocks, about 0.1 point there).
split_run()
{
	local lab=$1 py=$2 mode=$3 rc
	"$SA_RECORD" -q -F 1999 --call-graph "$mode" -o "$T/$lab.$mode.sa" -- \
		"$py" "$SA_SRC/tests/tools/pysplit.py" 2.6 "$T/$lab.$mode.clk" 2>"$T/$lab.$mode.err"
	rc=$?
	"$SA_REPORT" -o "$T/$lab.$mode.folded" "$T/$lab.$mode.sa" 2>>"$T/$lab.$mode.err"
	[ $rc -eq 0 ] && [ "$(grep -c '^func ' "$T/$lab.$mode.clk" 2>/dev/null)" -eq 3 ] &&
		ge "$(($(under "$T/$lab.$mode.folded" py_alpha) + $(under "$T/$lab.$mode.folded" py_beta) + \
			$(under "$T/$lab.$mode.folded" py_json)))" 4500
	ok $? "$lab $mode: sa-record -F 1999 -- pysplit.py 2.6: exit $rc, >= 4500 samples under the three"
	[ $rc -eq 0 ] || diag_file "$T/$lab.$mode.err" 5
	shares "$lab $mode" "$T/$lab.$mode.folded" "$T/$lab.$mode.clk" 3 py_alpha py_beta py_json
}

off_run()
{
	local lab=$1 py=$2 mode=$3 rc pid
	"$SA_RECORD" -q --off-cpu --call-graph "$mode" -o "$T/$lab.off$mode.sa" -- \
		"$py" "$SA_SRC/tests/tools/pyoffcpu.py" 2 "$T/$lab.off$mode.clk" 2>"$T/$lab.off$mode.err"
	rc=$?
	pid=$(awk '$1 == "pid" { print $2 }' "$T/$lab.off$mode.clk" 2>/dev/null)
	"$SA_REPORT" --off-cpu --state blocked --tid "${pid:-0}" -o "$T/$lab.off$mode.folded" \
		"$T/$lab.off$mode.sa" 2>>"$T/$lab.off$mode.err"
	[ $rc -eq 0 ] && [ "$(grep -c '^func ' "$T/$lab.off$mode.clk" 2>/dev/null)" -eq 3 ]
	ok $? "$lab off-CPU $mode: sa-record --off-cpu -- pyoffcpu.py 2: exit $rc, clocks kept"
	[ $rc -eq 0 ] || diag_file "$T/$lab.off$mode.err" 5
	shares "$lab off-CPU $mode" "$T/$lab.off$mode.folded" "$T/$lab.off$mode.clk" 3 \
		py_sleep py_pipe py_cond
}

for e in "${list[@]}"; do
	lab=${e%%:*} py=${e#*:}
	if [ ! -x "$py" ]; then
		skip $PER "$lab: $py not installed"
		continue
	fi
	want=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	split_run "$lab" "$py" fp
	"$SA_REPORT" --info "$T/$lab.fp.sa" >"$T/$lab.info" 2>&1
	grep -q "python: .*1 processes' frames read.*CPython $want[.,]" "$T/$lab.info"
	ok $? "$lab: --info says frames read, CPython $want: $(grep python: "$T/$lab.info")"
	# off the box: the interpreter's directory hidden, the same names
	dir=$(dirname "$(dirname "$(readlink -f "$py")")")
	[ "$lab" = debian ] && dir=/usr/bin
	hidden "$dir" "$SA_REPORT" -o "$T/$lab.hid.folded" "$T/$lab.fp.sa" 2>>"$T/$lab.fp.err"
	a=$(under "$T/$lab.fp.folded" py_json) a2=$(under "$T/$lab.hid.folded" py_json)
	[ "$a" -gt 0 ] && [ "$a2" -eq "$a" ]
	ok $? "$lab: $dir hidden, the same Python frames ($a2 of $a under py_json)"
	split_run "$lab" "$py" auto
	off_run "$lab" "$py" fp
	off_run "$lab" "$py" auto
	off_run "$lab" "$py" dwarf
done

done_testing
