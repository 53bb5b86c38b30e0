#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# sa-report --pprof read back by Go's own pprof (Debian's golang-go; make deps
# installs it): on a recording of samples/workload, `go tool pprof -top`
# shows sa_leaf_a/b/c within 2 points of the workload's measured split
# (60/30/10) with exactly sa-report's own counts; on tests/data/sym_inline.c,
# -traces and -lines show the always_inline function as an inline frame of
# its caller, and its "File:" is the workload. Binary output is
# refused on a terminal.
. "$(dirname "$0")/lib.sh"

command -v go >/dev/null 2>&1 || skip_all "go not installed (apt-get install golang-go, or make deps)"
go tool pprof -h >/dev/null 2>&1 || skip_all "go tool pprof does not run"
require_root_bpf
require_report
require_samples workload
tmpdir
T=$tap_tmp
INL=$SA_BUILD/tests/data/inline

plan 17

# -t 2 -c 10: two threads of 10 s of CPU each, about 20,000 samples on any
# machine (about 10 s of wall time on an idle 2-CPU host); sized below
"$SA_RECORD" -q -F 999 -o "$T/w.sa" -- "$SA_SAMPLES/workload" -t 2 -c 10 >"$T/w.out" 2>"$T/rec.err"
ok $? "sa-record -F 999 -- workload -t 2 -c 10 exits 0"
"$SA_REPORT" --pprof -o "$T/w.pb.gz" "$T/w.sa" 2>"$T/rep.err"
ok $? "sa-report --pprof -o FILE exits 0"
[ "$(head -c 2 "$T/w.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ]
ok $? "the export is gzip data"
"$SA_REPORT" -o "$T/w.folded" "$T/w.sa" 2>/dev/null

go tool pprof -top -sample_index=samples -nodefraction=0 -nodecount=100000 "$T/w.pb.gz" \
	>"$T/top" 2>"$T/pprof.err"
ok $? "go tool pprof -top reads it"
diag_file "$T/top" 14
# "flat flat% sum% cum cum% name": the pprof total and each leaf's cum count
total=$(sed -n 's/.*Total samples = \([0-9]*\).*/\1/p' "$T/top")
tot_folded=$(folded_total "$T/w.folded" workload)
[ -n "$total" ] && [ "$total" -eq "$(awk '{ n += $NF } END { print n }' "$T/w.folded")" ]
ok $? "pprof's total ($total samples) equals sa-report's folded total"
# the workload's mapping carries its path and the build id read from the binary
bid=$(readelf -n "$SA_SAMPLES/workload" 2>/dev/null | sed -n 's/.*Build ID: *//p')
go tool pprof -raw "$T/w.pb.gz" 2>/dev/null | sed -n '/^Mappings/,$p' \
	| grep -q -- "$SA_SAMPLES/workload $bid"
ok $? "pprof mappings name the workload binary with its build id ($bid)"
# mapping 1 is what pprof calls the profile's file: the program, not libc
# (whose __libc_start_call_main is the first binary under every stack)
file=$(sed -n 's/^File: //p' "$T/top")
[ "$file" = workload ]
ok $? "go tool pprof says File: ${file:-?} (want workload)"
# Each leaf's count must equal sa-report's (exact), and its share lie within
# 2 points of the workload's own measurement of the run (which absorbs how
# fast each leaf runs on this CPU). With -c 4, 4,037 samples of one run here
# gave sa_leaf_a 62.35. n >= 18,000 (2 x 10 s x 999 Hz, less start-up) gives
# binomial sds of 0.37 (60), 0.34 (30), 0.22 (10) points. Up to 1 point of
# drift (start-up calibration in the total, timing calls) leaves >= 2.7 sd
# on the 60% leaf's side: P = 3.5e-3 at a full point, but at the 0.3-0.5
# seen (samples/README.md) 4.1 sd, 2e-5; 30: 4.4 sd, 1e-5; 10: 6.8 sd.
# Per run 4e-5. Before, -c 4 (4,000 samples, sd 0.77) failed 1.6% of
# runs at a 0.3-point drift and 10% at a 1-point one.
[ "$tot_folded" -ge 18000 ]
ok $? "$tot_folded samples of workload (want >= 18,000, sized for the shares below)"
for leaf in sa_leaf_a sa_leaf_b sa_leaf_c; do
	want=$(workload_measured "$leaf" "$T/w.out")
	cum=$(awk -v f="$leaf" '$6 == f && NF == 6 { print $4 }' "$T/top")
	got=$(pct "${cum:-0}" "$tot_folded")
	[ -n "$cum" ] && [ "$cum" -eq "$(folded_with "$T/w.folded" workload "$leaf")" ] &&
		within "$got" "${want:-999}" 2
	ok $? "$leaf: $got% in go tool pprof (want ${want:-?} +- 2, the workload's measurement), $cum samples as in sa-report"
done

# the terminal refusal needs a pty: script(1) gives one
if command -v script >/dev/null 2>&1; then
	script -qec "'$SA_REPORT' --pprof '$T/w.sa'" /dev/null >"$T/tty.out" 2>&1
	rc=$?
	[ $rc -eq 1 ] && grep -q "not writing binary pprof data to a terminal" "$T/tty.out"
	ok $? "--pprof without -o on a terminal is refused (exit $rc)"
else
	skip 1 "script(1) not installed: no pty to test the terminal refusal"
fi

if [ ! -x "$INL" ]; then
	skip 5 "$INL not built (make $INL)"
	done_testing
fi
# the fixture exits with its checksum, and sa-record -- CMD with CMD's status
"$SA_RECORD" -q -F 999 -o "$T/i.sa" -- "$INL" 1000000000 >/dev/null 2>&1
[ -s "$T/i.sa" ]
ok $? "sa-record -- tests/data/inline wrote a recording"
"$SA_REPORT" --lines --pprof -o "$T/i.pb.gz" "$T/i.sa" 2>/dev/null
ok $? "sa-report --lines --pprof exits 0"
go tool pprof -traces "$T/i.pb.gz" >"$T/traces" 2>/dev/null
# a trace with the inlined frame directly above its caller
awk '/inl_leaf \(inline\)/ { getline n; if (n ~ /^ *inl_outer$/) found = 1 } END { exit !found }' \
	"$T/traces"
ok $? "-traces shows inl_leaf (inline) called from inl_outer"
go tool pprof -lines -top -nodefraction=0 "$T/i.pb.gz" >"$T/lines" 2>/dev/null
diag_file "$T/lines" 8
grep -Eq ' inl_leaf sym_inline\.c:[0-9]+ \(inline\)$' "$T/lines"
ok $? "-lines shows inl_leaf with its file:line as an inline frame"
grep -Eq ' inl_outer sym_inline\.c:[0-9]+$' "$T/lines"
ok $? "-lines shows inl_outer with its file:line"

done_testing
