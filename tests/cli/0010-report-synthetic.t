#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# sa-report on synthetic recordings (tests/bench/gen-synthetic, symbols
# embedded, no binaries needed): usage errors exit 2, folded totals, merging
# two files gives exactly the sum, record-level filters, --time by interval
# midpoint, -U/-K, --info, and damaged or truncated files (what is complete
# is reported, the loss is said on stderr, exit 1 only when nothing usable).
. "$(dirname "$0")/lib.sh"

require_report
GEN=$SA_BUILD/tests/bench/gen-synthetic
[ -x "$GEN" ] || skip_all "gen-synthetic not built"
tmpdir
T=$tap_tmp
R=$SA_REPORT

plan 24

"$GEN" -s 200 -d 6 -p 4 -k 8 -i 20 -n 100000 -o "$T/a.sa"
"$GEN" -s 200 -d 6 -p 4 -k 8 -i 20 -n 30000 -H other -o "$T/b.sa"
"$GEN" -s 40 -d 6 -p 2 -i 6 -P 2 -n 6000 -o "$T/phased.sa"

sum() { awk '{ s += $NF } END { print s + 0 }' "$@"; }

# usage errors: exit 2
"$R" >/dev/null 2>&1; ok $([ $? -eq 2 ]; echo $?) "no input: exit 2"
"$R" --top --svg "$T/a.sa" >/dev/null 2>&1; ok $([ $? -eq 2 ]; echo $?) "two modes: exit 2"
"$R" --info --top "$T/a.sa" >/dev/null 2>&1; ok $([ $? -eq 2 ]; echo $?) "--info with --top: exit 2"
"$R" --diff "$T/a.sa" >/dev/null 2>&1; ok $([ $? -eq 2 ]; echo $?) "--diff with one input: exit 2"
"$R" --bogus "$T/a.sa" >/dev/null 2>&1; ok $([ $? -eq 2 ]; echo $?) "unknown option: exit 2"
"$R" --time 5 "$T/a.sa" >/dev/null 2>&1; ok $([ $? -eq 2 ]; echo $?) "bad --time: exit 2"
"$R" "$T/missing.sa" >/dev/null 2>&1; ok $([ $? -eq 1 ]; echo $?) "missing file: exit 1"
"$R" --version | grep -q '^sa-report '; ok $? "--version"

# folded output
"$R" -o "$T/a.folded" "$T/a.sa" 2>"$T/a.err"; ok $? "folded output exits 0"
ok $([ "$(sum "$T/a.folded")" = 100000 ]; echo $?) "folded counts sum to the samples written"
ok $([ "$(wc -l <"$T/a.folded")" = 200 ]; echo $?) "one line per unique stack"
grep -q 'lost samples: 7' "$T/a.err"; ok $? "losses on stderr"
! grep -q 'lost' "$T/a.folded"; ok $? "no loss text in folded lines"
LC_ALL=C sort -c "$T/a.folded" 2>/dev/null; ok $? "folded output is sorted"

# merging: exactly the sum of the two files' counts
"$R" -q "$T/a.sa" "$T/b.sa" >"$T/ab.folded"
ok $([ "$(sum "$T/ab.folded")" = 130000 ]; echo $?) "merge of two files sums their counts"
"$R" -q "$T/b.sa" >"$T/b.folded"
awk 'NR == FNR { c = $NF; $NF = ""; a[$0] += c; next } { c = $NF; $NF = ""; a[$0] += c }
     END { for (k in a) print k a[k] }' "$T/a.folded" "$T/b.folded" | sort >"$T/sum.folded"
sed 's/ \([0-9]*\)$/ \1/' "$T/ab.folded" | sort >"$T/ab.sorted"
cmp -s "$T/sum.folded" "$T/ab.sorted"; ok $? "merged stacks equal the per-stack sums"

# record-level filters
"$R" -q --pid 1001 --show-pid "$T/a.sa" >"$T/pid.folded"
ok $([ "$(cut -d';' -f1 "$T/pid.folded" | sort -u)" = synth1-1001 ]; echo $?) "--pid keeps one process"
"$R" -q --comm synth2,synth3 "$T/a.sa" | cut -d';' -f1 | sort -u | tr '\n' ' ' >"$T/comm"
ok $([ "$(cat "$T/comm")" = "synth2 synth3 " ]; echo $?) "--comm LIST"
# each output must hold the other kind of frame, so an empty one fails
"$R" -q -U -o "$T/u.folded" "$T/a.sa"; rc=$?
[ $rc = 0 ] && grep -q 'fn_' "$T/u.folded" && ! grep -q 'ksym_' "$T/u.folded"
ok $? "-U drops kernel frames and keeps user ones (exit $rc)"
"$R" -q -K -o "$T/k.folded" "$T/a.sa"; rc=$?
[ $rc = 0 ] && grep -q 'ksym_' "$T/k.folded" && ! grep -q 'fn_' "$T/k.folded"
ok $? "-K drops user frames and keeps kernel ones (exit $rc)"
# phased: stacks with even ids in the first 3 intervals, odd ones after
"$R" -q --time 0-3 "$T/phased.sa" >"$T/t1.folded"
"$R" -q "$T/phased.sa" >"$T/all.folded"
ok $([ "$(sum "$T/t1.folded")" -gt 0 ] && [ "$(sum "$T/t1.folded")" -lt "$(sum "$T/all.folded")" ]; echo $?) \
	"--time 0-3 keeps the first phase only"

# --info
"$R" --info "$T/a.sa" >"$T/info" 2>&1
grep -q 'host: *synthhost' "$T/info" && grep -q 'embedded symbols' "$T/info" &&
	grep -q 'finished: *cleanly' "$T/info"; ok $? "--info: host, symbol source, clean finish"

# damaged files: keep what is complete, say what was dropped
size=$(stat -c %s "$T/a.sa")
head -c $((size * 9 / 10)) "$T/a.sa" >"$T/trunc.sa"
"$R" "$T/trunc.sa" >"$T/trunc.folded" 2>"$T/trunc.err"
rc=$?
n=$(sum "$T/trunc.folded")
ok $([ $rc -eq 0 ] && [ "$n" -gt 0 ] && [ "$n" -lt 100000 ] && grep -q 'dropped\|truncated\|finish' "$T/trunc.err"; echo $?) \
	"truncated file: partial output, exit 0, message on stderr"
head -c 40 "$T/a.sa" >"$T/stub.sa"
"$R" "$T/stub.sa" >/dev/null 2>&1; ok $([ $? -eq 1 ]; echo $?) "nothing usable: exit 1"

done_testing
