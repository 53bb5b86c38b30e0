#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# The on-CPU profile of an --off-cpu recording is the one without it:
# samples/workload's known split (60/30/10) from sa-record -F 999 --off-cpu
# within 2 points per leaf, and as many samples as its CPU time at 999 Hz,
# as 3000-split.t checks without the option. sa_on_switch runs at every
# context switch of the host meanwhile; it must neither eat samples nor
# move them between stacks.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples workload
tmpdir
T=$tap_tmp
W=$SA_SAMPLES/workload

plan 7

"$SA_RECORD" -F 999 --off-cpu -o "$T/s.sa" -- sh -c \
	"'$W' -c 5 >'$T/w1.out' & '$W' -c 5 >'$T/w2.out'; wait" 2>"$T/record.err"
rc=$?
ok $rc "sa-record -F 999 --off-cpu -- two workloads -c 5 exits 0 (got $rc)"
[ $rc -eq 0 ] || diag_file "$T/record.err"
"$SA_REPORT" -o "$T/s.folded" "$T/s.sa" 2>"$T/report.err"
ok $? "sa-report (samples) exits 0"

# as in 3000-split.t: about 10,000 samples; at most Poisson, sd 1%, so
# 90-110% is 10 sd and fails only if samples are lost
tot=$(folded_total "$T/s.folded" workload)
cpu=$(cat "$T/w1.out" "$T/w2.out" | awk '/thread cpu/ { t += $(NF-1) } END { print t + 0 }')
ge "$tot" "$(awk -v c="$cpu" 'BEGIN { print 0.9 * c * 999 }')" &&
	ge "$(awk -v c="$cpu" 'BEGIN { print 1.1 * (c + 0.1) * 999 }')" "$tot"
ok $? "$tot samples for ${cpu} s of workload CPU time at 999 Hz (want 90-110%)"

# 3000-split.t's bound: binomial sd at n = 10,000 is 0.49 points at 60,
# 0.46 at 30, 0.30 at 10; +-2 is 3.47 sd on the 60% leaf's low side (P =
# 2.6e-4), 4.36 sd at 30 (1.3e-5), 6.7 sd at 10: 2.8e-4 per run.
i=0
for leaf in sa_leaf_a sa_leaf_b sa_leaf_c; do
	want=$(echo "60 30 10" | cut -d' ' -f$((i + 1)))
	got=$(pct "$(folded_with "$T/s.folded" workload $leaf)" "$tot")
	within "$got" "$want" 2
	ok $? "$leaf holds $got% of workload samples with --off-cpu (want $want +- 2)"
	i=$((i + 1))
done

"$SA_REPORT" --off-cpu -o "$T/o.folded" "$T/s.sa" 2>>"$T/report.err"
ge "$(folded_total "$T/o.folded")" 1
ok $? "the same recording has off-CPU time ($(folded_total "$T/o.folded") us)"

done_testing
