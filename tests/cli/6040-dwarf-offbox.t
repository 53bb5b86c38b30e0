#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# A --call-graph dwarf recording analyzed where the sampled binary is gone
# (docs/unwinding.md "What must be on the analysis machine"): the report
# shows each sample's leaf from the embedded symbols and no invented
# callers; with the binary under --symfs the full stacks come back.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples workload-nofp
tmpdir
T=$tap_tmp

plan 5

mkdir -p "$T/bin" "$T/symfs$T/bin"
cp "$SA_SAMPLES/workload-nofp" "$T/bin/wl"
"$SA_RECORD" -q -F 499 --call-graph dwarf -o "$T/d.sa" -- "$T/bin/wl" -c 1 >/dev/null 2>"$T/err"
ok $? "sa-record --call-graph dwarf -- a copy of workload-nofp exits 0"
mv "$T/bin/wl" "$T/symfs$T/bin/wl"

"$SA_REPORT" -o "$T/gone.folded" "$T/d.sa" 2>"$T/err"
ok $? "sa-report exits 0 with the binary gone"
tot=$(folded_total "$T/gone.folded" wl)
leaf=$(folded_leaf "$T/gone.folded" wl sa_leaf_a)
# -F 499 -c 1: about 500 samples (515 here). No caller without the binary
# is deterministic; sa_leaf_a is 60% of them, binomial sd 2.2 points at
# n = 500, so a third (26.7 points below) is 12 sd: P < 1e-30. Even at
# n = 100 it is 5.4 sd (3e-8).
[ "$(folded_with "$T/gone.folded" wl main)" -eq 0 ] && ge "$leaf" "$((tot / 3))"
ok $? "without the binary: leaves named ($leaf of $tot samples end in sa_leaf_a), no callers"

"$SA_REPORT" --symfs "$T/symfs" -o "$T/symfs.folded" "$T/d.sa" 2>"$T/err"
ok $? "sa-report --symfs exits 0"
# a walk that stops before main is a rate, assumed <= 0.1% (0 of 515
# here, 2 of 8,124 in 6000): failing 99% takes >= 5 of 400 at a mean of
# <= 0.4: P = 6e-5 per run (>= 6 of 500: 1.4e-5).
n=$(folded_total "$T/symfs.folded" wl)
main=$(pct "$(folded_with "$T/symfs.folded" wl main)" "$n")
[ "$n" -ge 400 ] && ge "$main" 99
ok $? "with the binary under --symfs: $main% of $n stacks reach main (want >= 99 of >= 400)"

done_testing
