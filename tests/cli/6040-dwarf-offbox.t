#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# A --call-graph dwarf recording analyzed where the sampled binary is gone
# (docs/unwinding.md "What must be on the analysis machine"): the report
# uses the frames sa-record's own walk wrote and the embedded symbols, so
# the stacks reach main as with the binary under --symfs.
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
# The recorder's own walk of each copy is in the recording (format 1.3):
# every stack should reach main without the binary as with it; samples
# whose walk the recorder cut (ld.so's _start without an FDE) are rare, at
# most a few in 500, so 99% of >= 400 fails by luck with P < 1e-4 at the
# 0.2% seen.
gmain=$(pct "$(folded_with "$T/gone.folded" wl main)" "$tot")
[ "$tot" -ge 400 ] && ge "$gmain" 99
ok $? "without the binary: $gmain% of $tot stacks reach main from the recorded frames (want >= 99)"

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
