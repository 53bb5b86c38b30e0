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
gmain=$(pct "$(folded_with "$T/gone.folded" wl main)" "$(folded_total "$T/gone.folded" wl)")
ge "$gmain" 99
ok $? "without the binary: $gmain% of stacks reach main from the recorded frames (want >= 99)"

"$SA_REPORT" --symfs "$T/symfs" -o "$T/symfs.folded" "$T/d.sa" 2>"$T/err"
ok $? "sa-report --symfs exits 0"
main=$(pct "$(folded_with "$T/symfs.folded" wl main)" "$(folded_total "$T/symfs.folded" wl)")
ge "$main" 99
ok $? "with the binary under --symfs: $main% of stacks reach main (want >= 99)"

done_testing
