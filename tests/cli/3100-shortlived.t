#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (starts 500 processes that every other recorder's side band would carry)
# sa-test: statistical
# Short-lived processes (issue 5): samples/shortlived starts 500 processes one
# after another, each burning about 10 ms in sa_shortlived_work. Recorded at
# 999 Hz, >= 99% of the user-mode samples whose leaf lies in that binary are
# named sa_shortlived_work, and no sample of those processes lacks a mapping.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples shortlived
tmpdir
T=$tap_tmp

plan 6

# Feature probe: mappings captured as processes appear come with the
# self-contained recording (issue 5), which also brings --no-embed-symbols.

"$SA_RECORD" -q -F 999 -o "$T/s.sa" -- "$SA_SAMPLES/shortlived" -n 500 -m 10 >"$T/s.out" 2>"$T/rec.err"
ok $? "sa-record -- shortlived -n 500 -m 10 exits 0"
diag_file "$T/s.out"
"$SA_REPORT" -U -o "$T/s.folded" "$T/s.sa" 2>"$T/rep.err"
ok $? "sa-report -U exits 0"
diag_file "$T/rep.err" 5

named=$(folded_leaf "$T/s.folded" shortlived sa_shortlived_work)
# a leaf in the binary without a name: [shortlived] or [shortlived+0x...]
unnamed=$(awk '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st); k = split(st, f, ";")
	if (f[1] == "shortlived" && f[k] ~ /^\[shortlived(\+0x[0-9a-f]+)?\]$/) t += n }
	END { print t + 0 }' "$T/s.folded")
# 500 x 10 ms of CPU at 999 Hz: about 5,000 samples (4,997 here); 2,000 is
# 42 Poisson sd below. The rest are rates that should be 0 (a mapping not
# yet captured when a process is sampled), not shares of the profile:
# 0 of 4,997 unnamed and 0 [unknown] here. Assumed <= 0.1%, failing 99%
# takes >= 50 of 5,000 at a mean of <= 5: P < 1e-25 per run.
ge "$named" 2000
ok $? "$named samples named sa_shortlived_work (want >= 2000 of about 5000)"
share=$(pct "$named" $((named + unnamed)))
ge "$share" 99
ok $? "$share% of the binary's leaf samples are named (named $named, unnamed $unnamed; want >= 99)"

unknown=$(awk '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st); k = split(st, f, ";")
	if (f[1] == "shortlived" && f[k] == "[unknown]") t += n } END { print t + 0 }' "$T/s.folded")
[ "$unknown" -eq 0 ]
ok $? "no shortlived sample has a leaf in no mapping ([unknown]: $unknown)"
[ "$unknown" -eq 0 ] || grep '^shortlived;.*\[unknown\] [0-9]*$' "$T/s.folded" | head -5 | sed 's/^/#   /'
anywhere=$(awk '{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st); split(st, f, ";")
	if (f[1] == "shortlived" && index(st, "[unknown]")) t += n } END { print t + 0 }' "$T/s.folded")
total=$(folded_total "$T/s.folded" shortlived)
ge 1 "$(pct "$anywhere" "$total")"
ok $? "[unknown] frames in at most 1% of shortlived stacks ($anywhere of $total)"

done_testing
