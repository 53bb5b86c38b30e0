#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# --call-graph dwarf (issue 10): samples/workload built with
# -fomit-frame-pointer, where a frame-pointer walk loses every caller, gives
# the known 60/30/10 split within 2 points and stacks that reach main, once
# unwound by sa-report with the binary's CFI (docs/unwinding.md).
. "$(dirname "$0")/lib.sh"
# SA_CG=auto: the same checks for --call-graph auto (60xx wrappers)
CG=${SA_CG:-dwarf}

require_root_bpf
require_report
require_samples workload-nofp
tmpdir
T=$tap_tmp
W=$SA_SAMPLES/workload-nofp

plan 10

"$SA_RECORD" -q -F 999 --call-graph "$CG" -o "$T/d.sa" -- sh -c \
	"'$W' -c 4 >'$T/w1.out' & '$W' -c 4 >'$T/w2.out'; wait" 2>"$T/record.err"
rc=$?
ok $rc "sa-record --call-graph $CG -- two workload-nofp -c 4 exits 0 (got $rc)"
[ $rc -eq 0 ] || diag_file "$T/record.err"

"$SA_REPORT" -o "$T/d.folded" "$T/d.sa" 2>"$T/report.err"
rc=$?
ok $rc "sa-report of the $CG recording exits 0 (got $rc)"
[ $rc -eq 0 ] || diag_file "$T/report.err"
[ -s "$T/d.folded" ] && [ "$(folded_bad_lines "$T/d.folded")" -eq 0 ]
ok $? "folded output is non-empty 'stack count' lines"

tot=$(folded_total "$T/d.folded" workload-nofp)
ge "$tot" 5000
ok $? "$tot samples of workload-nofp (want >= 5000)"

set -- sa_leaf_a 60 sa_leaf_b 30 sa_leaf_c 10
while [ $# -gt 0 ]; do
	got=$(pct "$(folded_with "$T/d.folded" workload-nofp "$1")" "$tot")
	within "$got" "$2" 2
	ok $? "$1 holds $got% of workload-nofp samples (want $2 +- 2)"
	shift 2
done

main=$(pct "$(folded_with "$T/d.folded" workload-nofp main)" "$tot")
ge "$main" 99
ok $? "$main% of workload-nofp stacks reach main (want >= 99)"

path=$(folded_path "$T/d.folded" workload-nofp "__libc_start_call_main;main;sa_run;sa_leaf_a")
ge "$path" "$(awk -v t="$(folded_with "$T/d.folded" workload-nofp sa_leaf_a)" 'BEGIN { print t * 0.99 }')"
ok $? "sa_leaf_a samples come as __libc_start_call_main;main;sa_run;sa_leaf_a ($path)"

path=$(folded_path "$T/d.folded" workload-nofp "sa_leaf_c;sa_shared_helper;sa_helper_inner")
ge "$path" 1
ok $? "sa_leaf_c;sa_shared_helper;sa_helper_inner is present ($path samples)"

done_testing
