#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# CPython frames in off-CPU stacks (issue 33, docs/python.md):
# tests/tools/pyoffcpu.py blocks in three functions of its own, py_sleep in
# time.sleep, py_pipe in os.read of a pipe a forked child answers, py_cond
# in threading.Event.wait (a futex), 10/20/30 ms a round, each timing its
# own time off the CPU. Recorded by `sa-record --off-cpu -- python3` with
# the default call graph (fp), auto and dwarf, sa-report --off-cpu
# --state blocked puts the Python frames walked at each switch-out in place
# of the interpreter's eval loop: each function's share of the blocked time
# of the three is within 3 points of its own clock, its stack runs from
# Py_RunMain through <module> and main to the kernel function it blocked in,
# and the names read the same with the interpreter's binaries hidden;
# --no-python gives native frames only.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
tmpdir
T=$tap_tmp
PY=/usr/bin/python3

plan 22

[ -x "$PY" ] && "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' ||
	{ skip 22 "$PY is not CPython 3.11 (Debian 12's python3)"; done_testing; }

# under FOLDED FUNC [RE]: microseconds whose stack holds FUNC_[p] (and matches RE)
under()
{
	RE="${3-}" awk -v fr="$2_[p]" '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		if (index(";" st ";", ";" fr ";") && (ENVIRON["RE"] == "" || st ~ ENVIRON["RE"])) t += n
	} END { print t + 0 }' "$1"
}
# clk OUT FUNC: FUNC's seconds off the CPU by its own clock; clk OUT: the three's
clk()
{
	awk -v f="${2-}" '$1 == "func" && (f == "" || $2 == f) { t += $3 } END { printf "%.6f", t }' "$1"
}
# shares MODE SA OUT: each function's share of the three's blocked time in
# recording SA against its clock in OUT (three test points)
shares()
{
	local f n got want tot pid
	pid=$(awk '$1 == "pid" { print $2 }' "$3")
	"$SA_REPORT" --off-cpu --state blocked --tid "$pid" -o "$T/$1.folded" "$2" 2>>"$T/rep.err"
	tot=0
	for f in py_sleep py_pipe py_cond; do
		tot=$((tot + $(under "$T/$1.folded" $f)))
	done
	for f in py_sleep py_pipe py_cond; do
		n=$(under "$T/$1.folded" $f)
		got=$(pct "$n" "$tot")
		want=$(awk -v a="$(clk "$3" $f)" -v t="$(clk "$3")" 'BEGIN { printf "%.2f", t ? 100 * a / t : 0 }')
		within "$got" "$want" 3
		ok $? "$1: $f holds $got% of the three's blocked time, its clock $want% (want +- 3)"
	done
}

# The error of these shares is not a sampling error: off-CPU time is
# measured, each stay its switch-in time less its switch-out time, and no
# stay may be lost (checked). What can part sa's blocked time of a function
# from its own clock (its wall time less its thread's CPU time) is time
# the clock counts and sa gives another state or no Python frame: a
# preemption in the few microseconds of Python a call runs around its
# block (runnable, not blocked; a woken thread's wait for a CPU is part of
# its blocked stay), a switch-out before the recorder answered the
# process's first wake (its first milliseconds, before the rounds start),
# a frame walk that could not read the thread's frames. 3 points of the
# ~4 s the three block is 120 ms of preemption inside the few tens of ms
# of CPU the 200 calls use. On this shared host the runnable time in the
# three (diag below) was 3.8-5.0 ms in four runs, 0.1 points; the shares
# were within 0.05 points of the clocks. No chance of sampling enters.
cp "$SA_SRC/tests/tools/pyoffcpu.py" "$T/pyoffcpu.py"
"$SA_RECORD" --off-cpu -o "$T/fp.sa" -- "$PY" "$T/pyoffcpu.py" 4 "$T/fp.out" 2>"$T/fp.err"
rc=$?
ok $rc "sa-record --off-cpu -- python3 pyoffcpu.py 4 exits 0 (got $rc)"
[ $rc -eq 0 ] || diag_file "$T/fp.err"
[ "$(grep -c '^func ' "$T/fp.out" 2>/dev/null)" -eq 3 ]
ok $? "pyoffcpu.py timed its three functions: $(tr '\n' ' ' <"$T/fp.out" 2>/dev/null)"
grep -q 'off-CPU: .* 0 lost' "$T/fp.err"
ok $? "no off-CPU period lost ($(grep 'off-CPU:' "$T/fp.err"))"
rm -f "$T/pyoffcpu.py" # the script is gone before the report: names come from the file
shares fp "$T/fp.sa" "$T/fp.out"
pid=$(awk '$1 == "pid" { print $2 }' "$T/fp.out")

# both states: the time the three spent off the CPU is their clocks' sum
"$SA_REPORT" --off-cpu --tid "$pid" -o "$T/all.folded" "$T/fp.sa" 2>>"$T/rep.err"
got=0
for f in py_sleep py_pipe py_cond; do
	got=$((got + $(under "$T/all.folded" $f)))
done
want=$(awk -v s="$(clk "$T/fp.out")" 'BEGIN { printf "%.0f", s * 1e6 }')
within "$got" "$want" "$(awk -v w="$want" 'BEGIN { print w * 0.03 }')"
ok $? "the three's off-CPU time is $got us, their clocks' $want us (want +- 3%)"
diag "runnable (preempted) time in the three: $(("$SA_REPORT" --off-cpu --state runnable --tid "$pid" "$T/fp.sa" 2>/dev/null || true) | awk '/_\[p\]/ && /py_(sleep|pipe|cond)_\[p\]/ { t += $NF } END { print t + 0 }') us"

# whole stacks: the interpreter's native frames (walked by CFI) to the eval
# loop, the Python frames in its place (main calls each function through
# f(*args): a second eval-loop call, under _PyFunction_Vectorcall), the C
# call, the kernel's block; and no eval loop left in any of them
path()
{
	local n a
	n=$(under "$T/fp.folded" "$1" "$2")
	a=$(under "$T/fp.folded" "$1")
	ge "$(pct "$n" "$a")" 95
	ok $? "$1: $(pct "$n" "$a")% of its blocked time reads $3 (want >= 95)"
}
P=';Py_RunMain;.*;PyEval_EvalCode;<module>_\[p\];main_\[p\];_PyFunction_Vectorcall;'
path py_sleep "$P"'py_sleep_\[p\];.*;clock_nanosleep;.*;do_nanosleep;' \
	'Py_RunMain;...;<module>;main;_PyFunction_Vectorcall;py_sleep;...;do_nanosleep'
path py_pipe "$P"'py_pipe_\[p\];.*;_Py_read;.*pipe_read;' \
	'Py_RunMain;...;main;_PyFunction_Vectorcall;py_pipe;...;_Py_read;...;pipe_read'
path py_cond "$P"'py_cond_\[p\];Event\.wait_\[p\];Condition\.wait_\[p\];.*;futex_wait;' \
	'Py_RunMain;...;main;_PyFunction_Vectorcall;py_cond;Event.wait;Condition.wait;...;futex_wait'
n=$(grep -cE 'py_(sleep|pipe|cond)_\[p\]' "$T/fp.folded")
e=$(grep -E 'py_(sleep|pipe|cond)_\[p\]' "$T/fp.folded" | grep -c _PyEval_EvalFrameDefault)
[ "$n" -gt 0 ] && [ "$e" -eq 0 ]
ok $? "no eval-loop frame left in the three's $n stacks ($e with one)"

# off the box: the interpreter's binaries (/usr/bin) and debug files hidden
unshare -m sh -c '{ mount -t tmpfs none /usr/lib/debug 2>/dev/null; mount -t tmpfs none /usr/bin; } && exec "$@"' \
	sh "$SA_REPORT" --off-cpu --state blocked --tid "$pid" -o "$T/off.folded" "$T/fp.sa" 2>>"$T/rep.err"
a=$(under "$T/fp.folded" py_cond) a2=$(under "$T/off.folded" py_cond)
[ "$a" -gt 0 ] && [ "$a2" -eq "$a" ]
ok $? "binaries hidden: the same Python frames ($a2 us of $a under py_cond)"

"$SA_REPORT" --info "$T/fp.sa" >"$T/info" 2>&1
grep -q "python: .*frames read.*CPython 3\.11" "$T/info"
ok $? "--info lists the Python processes: $(grep python: "$T/info")"

# --call-graph auto and dwarf: off-CPU stacks are walked in the kernel
# whatever the mode (dwarf's on-CPU stack copies keep native frames only)
for m in auto dwarf; do
	"$SA_RECORD" -q --off-cpu --call-graph $m -o "$T/$m.sa" -- \
		"$PY" "$SA_SRC/tests/tools/pyoffcpu.py" 3 "$T/$m.out" 2>"$T/$m.err"
	ok $? "sa-record --off-cpu --call-graph $m exits 0"
	shares $m "$T/$m.sa" "$T/$m.out"
done

"$SA_RECORD" -q --off-cpu --no-python -o "$T/nopy.sa" -- \
	"$PY" "$SA_SRC/tests/tools/pyoffcpu.py" 1 "$T/nopy.out" 2>"$T/nopy.err" &&
	"$SA_REPORT" --off-cpu -o "$T/nopy.folded" "$T/nopy.sa" 2>>"$T/rep.err"
n=$(folded_total "$T/nopy.folded")
p=$(grep -c '_\[p\]' "$T/nopy.folded")
[ "$n" -gt 500000 ] && [ "$p" -eq 0 ]
ok $? "--no-python: $n us off the CPU, $p stacks with Python frames (want 0)"
diag_file "$T/rep.err" 5

done_testing
