#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# Merging: sa-report on two recordings aggregates them into exactly the sum of
# their counts, per stack and in total, in folded output and in --top.
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples workload busy
tmpdir
T=$tap_tmp

plan 9

"$SA_RECORD" -q -F 999 -o "$T/a.sa" -- "$SA_SAMPLES/workload" -d 2 >/dev/null 2>"$T/a.err"
ok $? "sa-record -- workload -d 2 exits 0"
"$SA_RECORD" -q -F 999 -o "$T/b.sa" -- "$SA_SAMPLES/busy" -d 2 >/dev/null 2>"$T/b.err"
ok $? "sa-record -- busy -d 2 exits 0"

"$SA_REPORT" -o "$T/a.folded" "$T/a.sa" 2>/dev/null &&
	"$SA_REPORT" -o "$T/b.folded" "$T/b.sa" 2>/dev/null
ok $? "sa-report on each file exits 0"
"$SA_REPORT" -o "$T/ab.folded" "$T/a.sa" "$T/b.sa" 2>"$T/ab.err"
ok $? "sa-report a.sa b.sa exits 0"
[ -s "$T/ab.err" ] && diag_file "$T/ab.err" 5

ta=$(folded_total "$T/a.folded")
tb=$(folded_total "$T/b.folded")
tab=$(folded_total "$T/ab.folded")
[ "$ta" -gt 0 ] && [ "$tb" -gt 0 ] && [ "$tab" -eq $((ta + tb)) ]
ok $? "merged total $tab == $ta + $tb"

# every stack's merged count is the sum of its counts in the two files
bad=$(awk '
	FILENAME != last { file++; last = FILENAME }
	{ n = $NF; st = $0; sub(/ [0-9]+$/, "", st); c[file, st] += n; keys[st] = 1 }
	END {
		for (k in keys)
			if (c[1, k] + c[2, k] != c[3, k]) { print k; bad++ }
		exit bad > 0
	}' "$T/a.folded" "$T/b.folded" "$T/ab.folded" | head -5)
[ -z "$bad" ]
ok $? "every stack's merged count is the sum of its two counts"
[ -n "$bad" ] && diag "differs: $bad"

[ "$(folded_total "$T/ab.folded" workload)" -eq "$(folded_total "$T/a.folded" workload)" ] &&
	[ "$(folded_total "$T/ab.folded" busy)" -eq "$(folded_total "$T/b.folded" busy)" ] &&
	[ "$(folded_total "$T/ab.folded" busy)" -gt 0 ]
ok $? "each file's process keeps its own samples (workload from a, busy from b)"

"$SA_REPORT" --top -o "$T/ab.top" "$T/a.sa" "$T/b.sa" 2>/dev/null
ok $? "sa-report --top a.sa b.sa exits 0"
t_busy=$(top_field "$T/ab.top" sa_busy_loop total)
t_leaf=$(top_field "$T/ab.top" sa_leaf_a total)
[ -n "$t_busy" ] && [ "$t_busy" -eq "$(folded_with "$T/ab.folded" busy sa_busy_loop)" ] &&
	[ -n "$t_leaf" ] && [ "$t_leaf" -eq "$(folded_with "$T/ab.folded" workload sa_leaf_a)" ]
ok $? "--top of the merge agrees with the merged folded output (sa_busy_loop $t_busy, sa_leaf_a $t_leaf)"

done_testing
