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

# two processes of 5 s of CPU: about 10,000 samples (-c 4 gave 8,199)
"$SA_RECORD" -q -F 999 --call-graph "$CG" -o "$T/d.sa" -- sh -c \
	"'$W' -c 5 >'$T/w1.out' & '$W' -c 5 >'$T/w2.out'; wait" 2>"$T/record.err"
rc=$?
ok $rc "sa-record --call-graph $CG -- two workload-leaf -c 5 exits 0 (got $rc)"
[ $rc -eq 0 ] || diag_file "$T/record.err"

# the fixture really has frameless leaves
objdump -d --no-show-raw-insn "$W" | awk '/<sa_leaf_a>:/ { getline; print; exit }' | grep -qv 'push'
ok $? "sa_leaf_a of workload-leaf sets up no frame"

"$SA_REPORT" -o "$T/d.folded" "$T/d.sa" 2>"$T/report.err"
rc=$?
ok $rc "sa-report exits 0 (got $rc)"
[ $rc -eq 0 ] || diag_file "$T/report.err"

tot=$(folded_total "$T/d.folded" workload-leaf)
ge "$tot" 9500
ok $? "$tot samples of workload-leaf (want >= 9,500)"

# true totals: sa_run holds everything but start-up calibration (a
# deterministic 0.3-0.5%, not a sampling share: it fails only below 97.5);
# the leaves' shares are measured by the workload itself, the helper's by
# construction from them. At n >= 9,500 the binomial sd is 0.47 points at
# 30, 0.37 at 15, 0.31 at 10, 0.26 at 7; with up to 0.3 points of drift
# (calibration in the total) +-2 is >= 3.6 sd at 30: P = 1.6e-4; 15:
# 4.6 sd, 2e-6; the smaller ones < 1e-7. Per run 1.7e-4. (At -c 4 against
# 30 itself: sa_leaf_b came out 29.22 of 8,199 here, 2.3 sd, about 1%.)
b=$(workload_measured sa_leaf_b "$T/w1.out" "$T/w2.out")
c=$(workload_measured sa_leaf_c "$T/w1.out" "$T/w2.out")
helper=$(workload_measured helper "$T/w1.out" "$T/w2.out")
inner=$(workload_measured inner "$T/w1.out" "$T/w2.out")
set -- sa_run 99.5 sa_leaf_b "${b:-999}" sa_leaf_c "${c:-999}" \
	sa_shared_helper "${helper:-999}" sa_helper_inner "${inner:-999}"
while [ $# -gt 0 ]; do
	got=$(pct "$(folded_with "$T/d.folded" workload-leaf "$1")" "$tot")
	within "$got" "$2" 2
	ok $? "$1 total $got% of workload-leaf samples (want $2 +- 2)"
	shift 2
done

# Stacks reaching main reach _start too: auto's frame-pointer walks end in
# glibc's __libc_start_call_main (no frame pointers) and take the outer
# frames the process's unwound stacks show above it (report/session/stitch.c);
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
