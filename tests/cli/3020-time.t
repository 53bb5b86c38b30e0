#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-report --time FROM-TO on a recording of samples/phased (sa_phase_a for
# the first 3 s, sa_phase_b for the next 3 s): 0-3 gives >= 95% sa_phase_a,
# 3-6 gives >= 95% sa_phase_b, and the whole file holds both. (Each phase's
# CPU share depends on the host's load; the windows' purity does not.)
# Not statistical (no "sa-test: statistical" marker, no rerun): which window
# a sample falls in is set by its timestamp, not by chance; a window holds
# the other phase only as far as the recording's time 0 is off the
# program's start (0-2 of 1,300-2,100 samples here). The one count,
# >= 100 samples a phase, is about 3,000 on an idle host: it takes a CPU
# share under 1/30 to fail, not luck.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples phased
tmpdir
T=$tap_tmp

plan 9

"$SA_RECORD" -q -F 999 -o "$T/p.sa" -- "$SA_SAMPLES/phased" -a 3 -b 3 >"$T/p.out" 2>"$T/rec.err"
ok $? "sa-record -- phased -a 3 -b 3 exits 0"
diag_file "$T/p.out"

# window NAME FROM-TO: folded output of the window into $T/NAME.folded
window()
{
	"$SA_REPORT" ${2:+--time "$2"} -o "$T/$1.folded" "$T/p.sa" 2>"$T/$1.err"
	ok $? "sa-report ${2:+--time $2 }exits 0"
	[ -s "$T/$1.err" ] && diag_file "$T/$1.err" 5
}

window all ""
a=$(folded_with "$T/all.folded" phased sa_phase_a)
b=$(folded_with "$T/all.folded" phased sa_phase_b)
all_a=$a all_b=$b
[ "$a" -ge 100 ] && [ "$b" -ge 100 ]
ok $? "whole recording: sa_phase_a $a, sa_phase_b $b samples (want >= 100 each)"

window first 0-3
a=$(folded_with "$T/first.folded" phased sa_phase_a)
b=$(folded_with "$T/first.folded" phased sa_phase_b)
share=$(pct "$a" $((a + b)))
ge "$share" 95
ok $? "--time 0-3: sa_phase_a $a, sa_phase_b $b samples ($share% a, want >= 95)"
ge "$a" "$((all_a * 8 / 10))"
ok $? "--time 0-3 keeps most of phase a ($a of its $all_a samples, want >= 80%)"

window second 3-6
a=$(folded_with "$T/second.folded" phased sa_phase_a)
b=$(folded_with "$T/second.folded" phased sa_phase_b)
share=$(pct "$b" $((a + b)))
ge "$share" 95
ok $? "--time 3-6: sa_phase_a $a, sa_phase_b $b samples ($share% b, want >= 95)"
ge "$b" "$((all_b * 8 / 10))"
ok $? "--time 3-6 keeps most of phase b ($b of its $all_b samples, want >= 80%)"

done_testing
