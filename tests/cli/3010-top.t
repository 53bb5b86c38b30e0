#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# sa-report --top on recordings of samples/workload and samples/recursive:
# sa_shared_helper's total equals the samples of its two call sites in the
# folded output, its self is below its total, and a recursive function's total
# counts each stack once (at most 100%).
. "$(dirname "$0")/lib.sh"

require_root_bpf
require_report
require_samples workload recursive
tmpdir
T=$tap_tmp

plan 14

# -c: 4 s of CPU time (about 4,000 samples) however busy the host is
"$SA_RECORD" -q -F 999 -o "$T/w.sa" -- "$SA_SAMPLES/workload" -c 4 >/dev/null 2>"$T/rec.err"
ok $? "sa-record -- workload -c 4 exits 0"
"$SA_REPORT" -o "$T/w.folded" "$T/w.sa" 2>"$T/rep.err"
ok $? "sa-report folded exits 0"
"$SA_REPORT" --top -o "$T/w.top" "$T/w.sa" 2>"$T/top.err"
ok $? "sa-report --top exits 0"
diag_file "$T/w.top" 12

F=$T/w.folded
site_b=$(folded_path "$F" workload "sa_leaf_b;sa_shared_helper")
site_c=$(folded_path "$F" workload "sa_leaf_c;sa_shared_helper")
# samples through sa_shared_helper by its caller. A sample on the helper's
# first or last instruction (frame not yet pushed, or already popped) shows it
# under sa_run: a frame-pointer walk cannot see its parent there.
sites=$(awk '{
	n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
	k = split(st, f, ";")
	if (f[1] != "workload") next
	for (i = 2; i <= k; i++)
		if (f[i] == "sa_shared_helper") { p[f[i - 1]] += n; break }
} END { for (x in p) printf "%s=%d ", x, p[x] }' "$F")
other=$(echo "$sites" | tr ' ' '\n' | awk -F= '$1 != "" && $1 != "sa_leaf_b" && $1 != "sa_leaf_c" { t += $2 } END { print t + 0 }')
h_total=$(top_field "$T/w.top" sa_shared_helper total)
h_self=$(top_field "$T/w.top" sa_shared_helper self)
diag "sa_shared_helper by caller: $sites; --top total ${h_total:-none} self ${h_self:-none}"

[ "$site_b" -gt 0 ] && [ "$site_c" -gt 0 ]
ok $? "sa_shared_helper has samples under both parents ($site_b, $site_c)"
[ -n "$h_total" ] && [ "$h_total" -eq $((site_b + site_c + other)) ] &&
	[ "$((other * 100))" -le "$h_total" ]
ok $? "--top total of sa_shared_helper ($h_total) == its call sites $site_b + $site_c (+ $other seen without a parent, want <= 1%)"
[ -n "$h_self" ] && [ "$h_self" -eq "$(folded_leaf "$F" workload sa_shared_helper)" ]
ok $? "--top self of sa_shared_helper ($h_self) == folded stacks ending in it"
[ -n "$h_self" ] && [ "$h_self" -gt 0 ] && [ "$h_self" -lt "$h_total" ]
ok $? "sa_shared_helper self ($h_self) is below its total ($h_total)"

# by construction (samples/README.md): 15% total, 8% self at 60,30,10
tot=$(folded_total "$F" workload)
within "$(pct "${h_total:-0}" "$tot")" 15 2
ok $? "sa_shared_helper total is $(pct "${h_total:-0}" "$tot")% of workload samples (want 15 +- 2)"
a_self=$(top_field "$T/w.top" sa_leaf_a self)
a_total=$(top_field "$T/w.top" sa_leaf_a total)
# a timer interrupt on top of it makes a kernel frame the leaf now and then
[ -n "$a_self" ] && [ "$a_total" -eq "$(folded_with "$F" workload sa_leaf_a)" ] &&
	ge "$a_self" "$(awk -v t="$a_total" 'BEGIN { print 0.98 * t }')" && [ "$a_self" -le "$a_total" ]
ok $? "sa_leaf_a, a leaf: total ($a_total) == its folded samples, self ($a_self) >= 98% of it"

"$SA_RECORD" -q -F 999 -o "$T/r.sa" -- "$SA_SAMPLES/recursive" -d 3 -n 8 >/dev/null 2>"$T/rec2.err"
ok $? "sa-record -- recursive -d 3 -n 8 exits 0"
"$SA_REPORT" --top -o "$T/r.top" "$T/r.sa" 2>"$T/top2.err"
ok $? "sa-report --top exits 0"
"$SA_REPORT" -o "$T/r.folded" "$T/r.sa" 2>>"$T/top2.err"
diag_file "$T/r.top" 8

r_pct=$(top_field "$T/r.top" sa_recurse total%)
r_total=$(top_field "$T/r.top" sa_recurse total)
ge 100 "${r_pct:-999}"
ok $? "sa_recurse TOTAL% is ${r_pct:-none} (want <= 100: one count per stack)"
comm_total=$(folded_total "$T/r.folded" recursive)
[ -n "$r_total" ] && [ "$r_total" -le "$comm_total" ] && ge "$r_total" "$(awk -v t="$comm_total" 'BEGIN { print 0.9 * t }')"
ok $? "sa_recurse total ($r_total) is 90-100% of the recursive process's samples ($comm_total)"
deep=$(folded_path "$T/r.folded" recursive "sa_recurse;sa_recurse;sa_recurse;sa_recurse;sa_recurse;sa_recurse;sa_recurse;sa_recurse")
ge "$deep" 1
ok $? "stacks hold sa_recurse 8 levels deep ($deep samples)"

done_testing
