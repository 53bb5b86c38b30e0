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

# -t 2 -c 5: two threads of 5 s of CPU, about 10,000 samples however busy
# the host is (sized for the helper's share below; it was -c 4, 4,000)
"$SA_RECORD" -q -F 999 -o "$T/w.sa" -- "$SA_SAMPLES/workload" -t 2 -c 5 >"$T/w.out" 2>"$T/rec.err"
ok $? "sa-record -- workload -t 2 -c 5 exits 0"
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

# the helper is 10% of the samples under sa_leaf_b, 5% under sa_leaf_c:
# 500 expected at least, none by luck is e^-500
[ "$site_b" -gt 0 ] && [ "$site_c" -gt 0 ]
ok $? "sa_shared_helper has samples under both parents ($site_b, $site_c)"
# the equality is exact; "other" (the helper's first or last instruction)
# is a rate assumed <= 0.1% of its samples (0 of 585 in a run here): of
# about 1,500, failing takes >= 15 at a mean of <= 1.5, P < 1e-10
[ -n "$h_total" ] && [ "$h_total" -eq $((site_b + site_c + other)) ] &&
	[ "$((other * 100))" -le "$h_total" ]
ok $? "--top total of sa_shared_helper ($h_total) == its call sites $site_b + $site_c (+ $other seen without a parent, want <= 1%)"
[ -n "$h_self" ] && [ "$h_self" -eq "$(folded_leaf "$F" workload sa_shared_helper)" ]
ok $? "--top self of sa_shared_helper ($h_self) == folded stacks ending in it"
[ -n "$h_self" ] && [ "$h_self" -gt 0 ] && [ "$h_self" -lt "$h_total" ]
ok $? "sa_shared_helper self ($h_self) is below its total ($h_total)"

# by construction (samples/README.md): 15% total, 8% self at 60,30,10,
# from the leaves' measured times the workload prints. At n >= 9,000 the
# binomial sd of a 15% share is 0.38 points; with up to 0.6 points of
# drift (calibration in the total; 14.49 of 4,034 and 15.27 of 8,199 in
# 6010 here) +-2 is >= 3.7 sd: P = 1.0e-4 per run (at -c 4: 4,000
# samples, sd 0.56, 6.6e-3). The other checks add < 1e-9.
tot=$(folded_total "$F" workload)
want=$(workload_measured helper "$T/w.out")
got=$(pct "${h_total:-0}" "$tot")
[ "$tot" -ge 9000 ] && within "$got" "${want:-999}" 2
ok $? "sa_shared_helper total is $got% of $tot workload samples (want ${want:-?} +- 2 of >= 9,000)"
a_self=$(top_field "$T/w.top" sa_leaf_a self)
a_total=$(top_field "$T/w.top" sa_leaf_a total)
# a timer interrupt on top of it makes a kernel frame the leaf now and then:
# a rate assumed <= 1% (15 of 2,464 here, 0.6%); of about 6,000 samples
# failing takes >= 120 at a mean of <= 60, 7.7 sd: P < 1e-12
[ -n "$a_self" ] && [ "$a_total" -eq "$(folded_with "$F" workload sa_leaf_a)" ] &&
	ge "$a_self" "$(awk -v t="$a_total" 'BEGIN { print 0.98 * t }')" && [ "$a_self" -le "$a_total" ]
ok $? "sa_leaf_a, a leaf: total ($a_total) == its folded samples, self ($a_self) >= 98% of it"

# -d 3: up to 3,000 samples (2,531 here). Outside sa_recurse lie only
# start-up and exit (16 of 2,531 here): deterministic, not a sampling share.
# Each of the 8 levels holds 1/8 of the time: 8 deep has 310 here, none by
# luck is e^-300.
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
