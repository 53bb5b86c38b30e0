#!/bin/bash
# SPDX-License-Identifier: MIT
# CPython the reader cannot read (issue 47, docs/python.md): pyenv's 3.7
# (a _PyRuntime, no row for its layout) and 3.6 (no _PyRuntime at all)
# each spin for a second under sa-record. The recorder says so once, by
# process, in its summary (refused, with the first's pid, version, binary
# and why); the report marks every one of their user stacks with an
# outermost "[python: frames not read]" and shows no Python frame. A 3.11
# beside them as the control: read, and never marked.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
tmpdir
T=$tap_tmp
PYROOT=${PYENV_ROOT:-$HOME/.pyenv}
MARK='[python: frames not read]'

plan 9

# spin V WHY: three test points on pyenv's CPython V; WHY: the reason said
spin()
{
	local v=$1 why=$2 py all marked pyfr
	py=$(ls -d "$PYROOT"/versions/"$v".*/bin/python"$v" 2>/dev/null | sort -V | tail -n 1)
	if [ -z "$py" ]; then
		skip 3 "pyenv's $v not installed"
		return
	fi
	"$SA_RECORD" -F 499 -o "$T/$v.sa" -- "$py" -c \
		'import time
t = time.process_time() + 1
while time.process_time() < t: pass' 2>"$T/$v.err"
	grep -q "Python: 0 processes' frames read, 1 refused .*; first refused: pid [0-9]*, CPython $v, $PYROOT/.*python$v.*: $why" "$T/$v.err"
	ok $? "$v: summary says refused, once: $(grep -o 'Python:.*' "$T/$v.err")"
	"$SA_REPORT" -o "$T/$v.folded" "$T/$v.sa" 2>/dev/null
	all=$(folded_total "$T/$v.folded" "python$v")
	marked=$(awk -v c="python$v" -v m="$MARK" '{ st = $0; sub(/ [0-9]+$/, "", st)
		if (index(st, c ";" m ";") == 1 || st == c ";" m) t += $NF } END { print t + 0 }' "$T/$v.folded")
	# all but the samples before the recorder answered (3.6: its 64 asks
	# while no libpython3.6m holds a _PyRuntime, docs/python.md)
	[ "$all" -ge 200 ] && ge "$(pct "$marked" "$all")" 80
	ok $? "$v: $marked of $all samples marked $MARK (want >= 200, >= 80%)"
	pyfr=$(grep -c '_\[p\]' "$T/$v.folded")
	[ "$pyfr" -eq 0 ]
	ok $? "$v: $pyfr stacks with Python frames (want 0)"
}

spin 3.7 "layout not confirmed"
spin 3.6 "no _PyRuntime"

# the control: a CPython that is read is never marked
py=$(ls -d "$PYROOT"/versions/3.11.*/bin/python3.11 2>/dev/null | sort -V | tail -n 1)
if [ -n "$py" ]; then
	"$SA_RECORD" -F 499 -o "$T/c.sa" -- "$py" -c 'import time
t = time.process_time() + 1
while time.process_time() < t: pass' 2>"$T/c.err"
	grep -q "Python: 1 processes' frames read, 0 refused" "$T/c.err" &&
		! grep -q "first refused" "$T/c.err"
	ok $? "3.11: read, nothing refused: $(grep -o 'Python:.*' "$T/c.err")"
	"$SA_REPORT" -o "$T/c.folded" "$T/c.sa" 2>/dev/null
	n=$(grep -cF "$MARK" "$T/c.folded")
	p=$(folded_with "$T/c.folded" "" "<module>_[p]")
	[ "$n" -eq 0 ] && [ "$p" -gt 200 ]
	ok $? "3.11: $n stacks marked, $p samples under <module> (want 0, > 200)"
	"$SA_RECORD" -q -F 499 --no-python -o "$T/np.sa" -- "$py" -c 'import time
t = time.process_time() + 0.5
while time.process_time() < t: pass' 2>/dev/null && "$SA_REPORT" -o "$T/np.folded" "$T/np.sa" 2>/dev/null
	n=$(grep -cF "$MARK" "$T/np.folded")
	t=$(folded_total "$T/np.folded")
	[ "$n" -eq 0 ] && [ "$t" -gt 100 ]
	ok $? "3.11 --no-python: $n of its stacks marked (want 0, of > 100 samples)"
else
	skip 3 "pyenv's 3.11 not installed"
fi

done_testing
