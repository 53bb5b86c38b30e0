#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# --diff on real recordings: two recordings of samples/workload at one split
# (60/30/10) colour no frame of the differential flame graph and mark no
# row of --diff --top; against a recording whose sa_leaf_b does twice the
# work (-s 60,60,10: its share goes from 30% to 46%), sa_leaf_b is red and
# marked, and sa_leaf_a (60% -> 46%) blue. Each run uses 1.5 s of its own
# CPU (-c), about 1,500 samples at 999 Hz however busy the host is; the
# three run at once under one sa-record, and each diff compares two of the
# processes (--pid into folded text).
# The processes keep user frames (--user-only): the interrupts the host's other
# work lands on the workload are a real difference between two runs, not
# sampling noise (__irq_exit_rcu went from 3 to 24 of about 3,000 samples
# between two runs here, p 1.2e-4).
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples workload
tmpdir
T=$tap_tmp
W=$SA_SAMPLES/workload

plan 12

# One recording of three workload processes at once: two at the same split
# and one with sa_leaf_b doubled. Running side by side, they meet the same
# host: on this loaded 2-CPU VM the split of runs made one after another
# varied beyond sampling noise (sa_leaf_b 26.6% and 31.8% of 1,550 samples,
# 3 sd apart; docs/diff.md), which a diff rightly shows but this test must
# not depend on.
"$SA_RECORD" -q -F 999 -o "$T/w.sa" -- sh -c "
	'$W' -c 1.5 >'$T/same1.out' & echo \$! >'$T/same1.pid'
	'$W' -c 1.5 >'$T/same2.out' & echo \$! >'$T/same2.pid'
	'$W' -c 1.5 -s 60,60,10 >'$T/doubled.out' & echo \$! >'$T/doubled.pid'
	wait" 2>"$T/record.err"
ok $? "sa-record -F 999 -- three workloads -c 1.5 (two -s 60,30,10, one 60,60,10) exits 0"
[ -s "$T/record.err" ] && diag_file "$T/record.err" 5

# part NAME: the folded stacks of process NAME into $T/NAME.folded
part()
{
	"$SA_REPORT" --user-only --pid "$(cat "$T/$1.pid")" -o "$T/$1.folded" "$T/w.sa" 2>"$T/$1.err"
	ok $? "sa-report --pid (process $1) exits 0"
}
part same1
part same2
part doubled

# samples NAME: samples of process NAME through sa_run
samples()
{
	folded_with "$T/$1.folded" workload sa_run
}
n1=$(samples same1) n2=$(samples same2) n3=$(samples doubled)
diag "samples through sa_run: $n1, $n2, $n3"
# 1.5 s of CPU at 999 Hz is about 1,500; under 1,000 only if sampling breaks
check "each process holds >= 1000 samples through sa_run" \
	eval 'ge "${n1:-0}" 1000 && ge "${n2:-0}" 1000 && ge "${n3:-0}" 1000'

# coloured FILE: the frames of a differential SVG that are not grey
coloured()
{
	grep -o '<title>[^<]*</title><rect [^>]*' "$1" | grep -v 'fill="#d8d8d8"' |
		sed 's/&#10;/: /; s/<\/title><rect.*fill=/ fill /; s/<title>//'
}
# fill NAME SVG: the colour of NAME's widest frame. A stray sample can draw
# a second, narrow frame of the same name elsewhere (a stack cut short
# starts at it): grey, and not the change under test.
fill()
{
	grep -o "<title>$1&#10;[^<]*</title><rect [^>]*" "$2" |
		sed -n 's/.*width="\([0-9.]*\)".*fill="#\([0-9a-f]*\)".*/\1 \2/p' |
		sort -k1,1gr | awk 'NR == 1 { print $2 }'
}

# The chance of a false colour is at most 0.1% by Bonferroni (the legend
# says so) if the counts are binomial, and far less in fact: of the ~100
# frames drawn only the ~10 with 20 or more samples can reach p 1e-5 at all.
# Measured: 120 pairs of such recordings (tests/bench/bench-diff-noise.sh,
# docs/diff.md) coloured none.
"$SA_REPORT" --diff --svg -o "$T/same.svg" "$T/same1.folded" "$T/same2.folded"
ok $? "--diff --svg of the two same-split recordings exits 0"
diag "$(grep -o '<text id="legend"[^<]*' "$T/same.svg")"
check "the legend states the chance of a false colour (0.1%)" \
	grep -q '<text id="legend"[^<]*Chance of any false colour: 0.1%' "$T/same.svg"
coloured "$T/same.svg" >"$T/same.col"
diag_file "$T/same.col" 10
check "same workload twice: no frame coloured" test ! -s "$T/same.col"
"$SA_REPORT" --diff --top -o "$T/same.top" "$T/same1.folded" "$T/same2.folded"
diag_file "$T/same.top" 8
check "same workload twice: no row of --diff --top marked" \
	test "$(awk '$1 ~ /^[0-9.]+$/ && $7 ~ /\*/' "$T/same.top" | wc -l)" -eq 0

# Power: sa_leaf_b's share goes 30% -> 46% (60,60,10 of 130 units): the
# standard error of the difference at 1,000 samples a side (the floor
# checked above) is 2.2 points, so 16 points is z 7.3 against a threshold
# near 4.6: missing it takes a 2.7-sd shortfall of a normal: P 3.5e-3 at
# 1,000 samples, 6e-5 at the 1,500 expected (se 1.8, 4.3 sd). sa_leaf_a:
# 60% -> 46%, 14 points, the same order.
"$SA_REPORT" --diff --svg -o "$T/dbl.svg" "$T/same1.folded" "$T/doubled.folded"
coloured "$T/dbl.svg" >"$T/dbl.col"
diag_file "$T/dbl.col" 10
b=$(fill sa_leaf_b "$T/dbl.svg") a=$(fill sa_leaf_a "$T/dbl.svg")
check "doubled sa_leaf_b is red (#$b)" \
	awk -v c="$b" 'BEGIN { exit !(c ~ /^ff/ && substr(c, 3, 2) == substr(c, 5, 2) && substr(c, 3, 2) != "ff") }'
check "sa_leaf_a, whose share fell, is blue (#$a)" \
	awk -v c="$a" 'BEGIN { exit !(c ~ /ff$/ && substr(c, 1, 2) == substr(c, 3, 2) && substr(c, 1, 2) != "ff") }'
"$SA_REPORT" --diff --top -o "$T/dbl.top" "$T/same1.folded" "$T/doubled.folded"
diag_file "$T/dbl.top" 8
check "--diff --top marks sa_leaf_b's self and total change" \
	test "$(awk '$NF == "sa_leaf_b" && $1 ~ /^[0-9.]+$/ { print $7 }' "$T/dbl.top")" = "**"
done_testing
