#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (perf record and perf script (perf 6.1 aborts beside a loaded BPF program))
# sa-test: statistical
# sa-report on other tools' stacks: `perf record -e cpu-clock -g` of two
# samples/workload processes (known split 60/30/10), read as perf script text
# (a file and standard input) and as stackcollapse-perf.pl's folded text.
# The folded output equals stackcollapse-perf.pl's byte for byte where their
# conventions agree (docs/input.md: sa orders by frame, the script by line,
# so both are compared sorted; the script counts perf's period when perf
# prints one, sa one per sample), every sample of the text is counted, the
# shares are the workload's within 2 points, and --svg, --top, --pprof (read
# back by go tool pprof), --speedscope and --diff take these inputs.
. "$(dirname "$0")/lib.sh"

# The oracle lives beside the clone (../shared/oracles), never in it.
COLLAPSE=$(dirname "$SA_SRC")/shared/oracles/FlameGraph/stackcollapse-perf.pl

[ "$(id -u)" = 0 ] || skip_all "needs root (perf record -p of another process)"
command -v perf >/dev/null 2>&1 || skip_all "perf not installed (linux-perf)"
command -v perl >/dev/null 2>&1 || skip_all "perl not installed"
[ -f "$COLLAPSE" ] || skip_all "the oracle $COLLAPSE is missing (shared/oracles beside the clone)"
require_report
require_samples workload
tmpdir
T=$tap_tmp
W=$SA_SAMPLES/workload
# perf 6.1 aborts in util/build-id.c on this kernel while it uses a shared
# build-id cache (tests/accuracy/run.sh): -B, and an empty cache of its own
export PERF_BUILDID_DIR=$T/perf-buildid
mkdir -p "$PERF_BUILDID_DIR"

plan 20

# Two workloads, each until it has used 6 s of CPU; perf attaches to both
# (perf 6.1 cannot read back a recording of a command it started here) and
# ends when they do: about 2 x 5.7 s x 999 Hz = 11,000 samples.
"$W" -c 6 >"$T/w1.out" &
w1=$!
"$W" -c 6 >"$T/w2.out" &
w2=$!
sleep 0.3
# perf 6.1 aborts when started beside any BPF program (lib.sh, perf_no_bpf):
# no script runs beside this one, but a recorder left by another may
perf_no_bpf 30 >"$T/bpf.msg" || diag_file "$T/bpf.msg"
perf record -q -B -e cpu-clock -g -F 999 -p "$w1,$w2" -o "$T/perf.data" >/dev/null 2>"$T/perf.err"
rc=$?
wait $w1 $w2
ok $rc "perf record -e cpu-clock -g -F 999 -p of two workloads exits 0 (got $rc)"
[ $rc -eq 0 ] || diag_file "$T/perf.err"
# no period field: stackcollapse-perf.pl then counts 1 per sample, as sa does
perf_no_bpf 30 >"$T/bpf.msg" || diag_file "$T/bpf.msg"
perf script -i "$T/perf.data" -F comm,pid,tid,time,event,ip,sym,dso >"$T/perf.txt" 2>"$T/script.err"
ok $? "perf script -F comm,pid,tid,time,event,ip,sym,dso exits 0"
perf script -i "$T/perf.data" >"$T/perf-default.txt" 2>>"$T/script.err"
nsamples=$(grep -c '^[^[:space:]#]' "$T/perf.txt")

"$SA_REPORT" -o "$T/sa.folded" "$T/perf.txt" 2>"$T/report.err"
ok $? "sa-report perf.txt exits 0"
[ -s "$T/sa.folded" ] && [ "$(folded_bad_lines "$T/sa.folded")" -eq 0 ]
ok $? "its output is non-empty 'stack count' lines"
perl "$COLLAPSE" "$T/perf.txt" >"$T/oracle.folded" 2>/dev/null
LC_ALL=C sort "$T/sa.folded" >"$T/sa.sorted"
LC_ALL=C sort "$T/oracle.folded" >"$T/oracle.sorted"
cmp -s "$T/sa.sorted" "$T/oracle.sorted"
ok $? "folded output equals stackcollapse-perf.pl's byte for byte ($(wc -l <"$T/sa.folded") lines, sorted)"
diff "$T/sa.sorted" "$T/oracle.sorted" | head -n 6 | sed 's/^/#   /'
"$SA_REPORT" --annotate-frames "$T/perf.txt" 2>/dev/null | LC_ALL=C sort >"$T/sa-ann.sorted"
perl "$COLLAPSE" --all "$T/perf.txt" 2>/dev/null | LC_ALL=C sort >"$T/oracle-ann.sorted"
cmp -s "$T/sa-ann.sorted" "$T/oracle-ann.sorted" && grep -q '_\[k\]' "$T/sa-ann.sorted"
ok $? "--annotate-frames equals stackcollapse-perf.pl --all (kernel frames _[k]) byte for byte"
diff "$T/sa-ann.sorted" "$T/oracle-ann.sorted" | head -n 6 | sed 's/^/#   /'

# counts are exact: one per sample perf script printed, periods or not
tot=$(folded_total "$T/sa.folded")
[ "$tot" -eq "$nsamples" ] && [ "$nsamples" -gt 0 ]
ok $? "$tot samples counted, as many as perf script printed ($nsamples)"
"$SA_REPORT" "$T/perf-default.txt" 2>/dev/null >"$T/sa-default.folded"
[ "$(folded_total "$T/sa-default.folded")" -eq "$nsamples" ] &&
	cmp -s <(sed 's/ [0-9]*$//' "$T/sa-default.folded" | LC_ALL=C sort) \
		<(perl "$COLLAPSE" "$T/perf-default.txt" 2>/dev/null | sed 's/ [0-9]*$//' | LC_ALL=C sort)
ok $? "perf script's default text (with periods): $nsamples samples, stacks as the script's"

# Shares against the workload's own measurement of the run. n >= 9,000
# (asserted) gives binomial sds of 0.52 (60), 0.48 (30), 0.32 (10) points.
# With up to 0.3 points of drift (start-up calibration, timing calls;
# samples/README.md) on the 60% leaf, +-2 is 3.3 sd on one side (P = 5e-4)
# and 4.4 on the other (5e-6); 30: 4.1 sd both sides, 4e-5; 10: 6.3 sd,
# 3e-10. Per run 5.5e-4, under 0.1%.
wtot=$(folded_total "$T/sa.folded" workload)
[ "$wtot" -ge 9000 ]
ok $? "$wtot samples of workload (want >= 9,000, sized for the shares below)"
for leaf in sa_leaf_a sa_leaf_b sa_leaf_c; do
	want=$(workload_measured "$leaf" "$T/w1.out" "$T/w2.out")
	got=$(pct "$(folded_with "$T/sa.folded" workload "$leaf")" "$wtot")
	within "$got" "${want:-999}" 2
	ok $? "$leaf holds $got% of workload samples (want ${want:-?} +- 2, the workload's measurement)"
done

# perf script | sa-report --svg -o y.svg -
perf script -i "$T/perf.data" 2>/dev/null | "$SA_REPORT" --svg -o "$T/y.svg" - 2>"$T/svg.err"
rc=$?
/usr/bin/python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$T/y.svg" 2>/dev/null &&
	grep -q '<title>sa_leaf_a&#10;' "$T/y.svg" && [ $rc -eq 0 ]
ok $? "perf script | sa-report --svg -o y.svg - gives a well-formed SVG with sa_leaf_a (exit $rc)"

# stackcollapse-perf.pl's folded text in: --svg, --top, --pprof
"$SA_REPORT" --svg -o "$T/x.svg" "$T/oracle.folded" 2>/dev/null &&
	/usr/bin/python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$T/x.svg" &&
	grep -q '<title>sa_leaf_b&#10;' "$T/x.svg"
ok $? "sa-report --svg -o x.svg x.folded gives a well-formed SVG with sa_leaf_b"
"$SA_REPORT" --top "$T/oracle.folded" >"$T/top" 2>/dev/null
got=$(top_field "$T/top" sa_leaf_a total)
[ "${got:-0}" -eq "$(folded_with "$T/oracle.folded" workload sa_leaf_a)" ] && [ "$got" -gt 0 ]
ok $? "sa-report --top x.folded: sa_leaf_a total $got, as in the folded text"
if command -v go >/dev/null 2>&1 && go tool pprof -h >/dev/null 2>&1; then
	"$SA_REPORT" --pprof -o "$T/x.pb.gz" "$T/oracle.folded" 2>/dev/null
	go tool pprof -top -nodefraction=0 -nodecount=100000 "$T/x.pb.gz" >"$T/ptop" 2>/dev/null
	# no frequency in folded text: the default sample type is the count
	ptot=$(sed -n 's/^Showing nodes accounting for .* of \([0-9]*\) total$/\1/p' "$T/ptop")
	pcum=$(awk '$6 == "sa_leaf_c" && NF == 6 { print $4 }' "$T/ptop")
	[ "${ptot:-0}" -eq "$nsamples" ] &&
		[ "${pcum:-0}" -eq "$(folded_with "$T/oracle.folded" workload sa_leaf_c)" ]
	ok $? "go tool pprof reads --pprof of x.folded: $ptot samples, sa_leaf_c $pcum, as folded"
else
	skip 1 "go not installed (golang-go): no pprof read-back"
fi

# other outputs and merging of inputs of different kinds
"$SA_REPORT" --speedscope "$T/perf.txt" 2>/dev/null |
	/usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(not d["profiles"])'
ok $? "--speedscope of perf script text is JSON with a profile"
"$SA_REPORT" "$T/oracle.folded" - <"$T/perf.txt" 2>/dev/null >"$T/both.folded"
cmp -s "$T/both.folded" <(awk '{ $NF = 2 * $NF; print }' "$T/sa.folded")
ok $? "folded text and perf script text (-) merge: every stack counted twice"
"$SA_REPORT" --diff "$T/oracle.folded" "$T/perf.txt" 2>/dev/null >"$T/diff"
[ -s "$T/diff" ] && awk '$(NF - 1) != $NF { exit 1 }' "$T/diff"
ok $? "--diff of folded text against perf script text of the same samples: no change"

"$SA_REPORT" --top "$T/perf.data" >/dev/null 2>"$T/pd.err"
rc=$?
[ $rc -eq 1 ] && grep -q "perf script -i $T/perf.data | sa-report" "$T/pd.err"
ok $? "a perf.data file is refused with the perf script command (exit $rc)"
diag_file "$T/pd.err" 2

done_testing
