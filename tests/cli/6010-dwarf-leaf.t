#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# Frameless leaves (issue 10): samples/workload built with frame pointers
# but with leaves that set up no frame (gcc 12's default). A frame-pointer
# walk sampled inside such a leaf skips its caller; with --call-graph dwarf
# every caller gets its true total within 2 points.
. "$(dirname "$0")/lib.sh"
# SA_CG=auto: the same checks for --call-graph auto (60xx wrappers)
CG=${SA_CG:-dwarf}

require_root_bpf
require_report
require_samples workload-leaf
tmpdir
T=$tap_tmp
W=$SA_SAMPLES/workload-leaf

plan 10

"$SA_RECORD" -q -F 999 --call-graph "$CG" -o "$T/d.sa" -- sh -c \
	"'$W' -c 4 >'$T/w1.out' & '$W' -c 4 >'$T/w2.out'; wait" 2>"$T/record.err"
rc=$?
ok $rc "sa-record --call-graph $CG -- two workload-leaf -c 4 exits 0 (got $rc)"
[ $rc -eq 0 ] || diag_file "$T/record.err"

# the fixture really has frameless leaves
objdump -d --no-show-raw-insn "$W" | awk '/<sa_leaf_a>:/ { getline; print; exit }' | grep -qv 'push'
ok $? "sa_leaf_a of workload-leaf sets up no frame"

"$SA_REPORT" -o "$T/d.folded" "$T/d.sa" 2>"$T/report.err"
rc=$?
ok $rc "sa-report exits 0 (got $rc)"
[ $rc -eq 0 ] || diag_file "$T/report.err"

tot=$(folded_total "$T/d.folded" workload-leaf)
ge "$tot" 5000
ok $? "$tot samples of workload-leaf (want >= 5000)"

# true totals: sa_run holds everything but start-up calibration; the
# helper's share is printed by the workload itself (by construction)
helper=$(awk '/sa_shared_helper total/ { print $5 }' "$T/w1.out")
inner=$(awk '/sa_shared_helper total/ { print $5 - $8 }' "$T/w1.out")
set -- sa_run 99.5 sa_leaf_b 30 sa_leaf_c 10 sa_shared_helper "${helper:-15}" \
	sa_helper_inner "${inner:-7}"
while [ $# -gt 0 ]; do
	got=$(pct "$(folded_with "$T/d.folded" workload-leaf "$1")" "$tot")
	within "$got" "$2" 2
	ok $? "$1 total $got% of workload-leaf samples (want $2 +- 2)"
	shift 2
done

# Stacks reaching main reach _start too: auto's frame-pointer walks end in
# glibc's __libc_start_call_main (no frame pointers) and take the outer
# frames the process's unwound stacks show above it (report/stitch.c);
# before that, about half of auto's stacks lacked _start and
# __libc_start_main. Not a share: every such stack should have them, so
# 99% leaves room for a process whose copies never passed there.
main=$(folded_with "$T/d.folded" workload-leaf main)
both=$(awk '{ st = $0; sub(/ [0-9]+$/, "", st) }
	index(st, "workload-leaf;") == 1 && index(";" st ";", ";main;") &&
	index(";" st ";", ";_start;") { n += $NF } END { print n + 0 }' "$T/d.folded")
got=$(pct "$both" "$main")
[ "$main" -gt 0 ] && ge "$got" 99
ok $? "$got% of $main stacks through main start at _start (want >= 99)"

done_testing
