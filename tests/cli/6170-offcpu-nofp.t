#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-record --off-cpu with the default call graph walks the stack a thread
# blocked with from the CFI tables in the kernel, so blocked time lands on
# the function that blocked, not on the libc wrapper's caller's caller.
# tests/data/off_wrappers: sa-blk-main's own functions block through usleep,
# a pipe read and pthread_cond_wait, each timed by the program's own clock;
# built with frame pointers, without, and with frame pointers but no CFI of
# its own (walked by the frame-pointer fallback between libc's rows). Each
# function's share of blocked time is within 3 points of that clock; the
# copy built without frame pointers is deleted before the report (off the
# box). Debian's /usr/bin/python3 in time.sleep and a pipe read: >= 98% of
# its blocked time under Py_RunMain (a frame-pointer walk gave 0%).
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
TD=${SA_BUILD:-build}/tests/data
for b in off_wrappers_fp off_wrappers_nofp off_wrappers_fpnocfi; do
	[ -x "$TD/$b" ] || skip_all "$TD/$b not built (make check-extra)"
done
[ -x /usr/bin/python3 ] || skip_all "no /usr/bin/python3 (Debian's python3)"
tmpdir
T=$tap_tmp

plan 21

# share FILE RE: % of FILE's time whose stack matches RE.
share()
{
	awk -v re="$2" '{ n = $NF; t += n; if ($0 ~ re) m += n }
	END { printf "%.2f", t ? 100 * m / t : 0 }' "$1"
}

# The split is measured, not sampled: each period is switch-in minus
# switch-out. The clock also counts the microseconds each call runs around
# its block (about 10 us of a 10-20 ms call: 0.1 points), and a preemption
# there is runnable time, not blocked: 3 points is 30 times that. No chance
# enters the bound.
for v in fp nofp fpnocfi; do
	cp "$TD/off_wrappers_$v" "$T/ow_$v"
	"$SA_RECORD" --off-cpu -o "$T/$v.sa" -- "$T/ow_$v" 5 >"$T/$v.out" 2>"$T/$v.err"
	rc=$?
	ok $rc "sa-record --off-cpu -- off_wrappers_$v exits 0 (got $rc)"
	[ $rc -eq 0 ] || diag_file "$T/$v.err"
	[ "$v" = nofp ] && rm -f "$T/ow_$v" # off the box: the binary is gone
	"$SA_REPORT" --off-cpu --state blocked --comm sa-blk-main -o "$T/$v.folded" "$T/$v.sa" \
		2>/dev/null
	read -r _ rounds _ slp _ pip _ cnd <"$T/$v.out"
	diag "$v: $rounds rounds; $(grep 'in-kernel unwinding' "$T/$v.err")"
	for f in sleep:$slp pipe:$pip cond:$cnd; do
		want=$(awk -v a="${f#*:}" -v s="$slp" -v p="$pip" -v c="$cnd" \
			'BEGIN { printf "%.2f", 100 * a / (s + p + c) }')
		got=$(share "$T/$v.folded" ";sa_blk_${f%%:*};")
		within "$got" "$want" 3
		ok $? "$v: sa_blk_${f%%:*} holds $got% of sa-blk-main's blocked time (want $want +- 3)"
	done
	# whole stacks: past the program's own frames to main (by the
	# frame-pointer fallback where the program has no CFI). A process's
	# first blocks can come before its mappings reach the kernel (the side
	# band is read up to 100 ms late, 5 ms at best): walked by frame
	# pointers, they are lost to main; measured 0.3-3.6% of 3 s.
	got=$(share "$T/$v.folded" ';main;sa_blk_[a-z]*;')
	ge "$got" 95
	ok $? "$v: $got% of sa-blk-main's blocked time reaches main (want >= 95)"
done
grep -q 'off-CPU: .* 0 lost' "$T/nofp.err"
ok $? "no off-CPU period lost"
grep -qE 'off-CPU [1-9][0-9]* walked' "$T/nofp.err"
ok $? "the kernel walked the off-CPU stacks ($(grep -o 'off-CPU [0-9]* walked' "$T/nofp.err"))"

# Debian's python3 (no frame pointers), its main thread blocking in
# time.sleep and in os.read of a pipe a forked writer fills, 3 s each in
# 20 ms waits: its first waits may come before its tables (the side band
# is read every 100 ms at most), 20-40 ms of 6 s.
cat >"$T/blk.py" <<'EOF'
import os, sys, time
def sleeper():
    for _ in range(150):
        time.sleep(0.02)
def reader():
    r, w = os.pipe()
    if os.fork() == 0:
        for _ in range(150):
            time.sleep(0.02)
            os.write(w, b"x")
        os._exit(0)
    for _ in range(150):
        os.read(r, 1)
    os.wait()
print(os.getpid(), flush=True)
sleeper()
reader()
EOF
"$SA_RECORD" --off-cpu -o "$T/py.sa" -- /usr/bin/python3 "$T/blk.py" >"$T/py.out" 2>"$T/py.err"
rc=$?
ok $rc "sa-record --off-cpu -- /usr/bin/python3 exits 0 (got $rc)"
"$SA_REPORT" --off-cpu --state blocked --pid "$(head -1 "$T/py.out")" -o "$T/py.folded" \
	"$T/py.sa" 2>/dev/null
got=$(share "$T/py.folded" ';Py_RunMain;')
ge "$got" 98
ok $? "python3: $got% of its blocked time reaches Py_RunMain (want >= 98)"
tot=$(folded_total "$T/py.folded")
ge "$tot" 5000000
ok $? "python3 blocked $tot us in all (want >= 5 s of its 6 s of waits)"
grep -q 'off-CPU: .* 0 lost' "$T/py.err"
ok $? "python3: no off-CPU period lost"
[ $rc -eq 0 ] || diag_file "$T/py.err"

done_testing
