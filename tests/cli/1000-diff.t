#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# sa-report --diff on two folded text files (60/30/10 then 30/60/10, the
# second with twice the samples): the folded diff (normalized: BEFORE scaled
# to AFTER's total, and raw), --diff --top changes in self % and total %,
# and the differential SVG colouring the grown leaf red and the shrunk one
# blue; --negate reaches a frame only in BEFORE. Expected outputs live in
# tests/cli/expect/ (SA_BLESS=1 rewrites them).
. "$(dirname "$0")/lib.sh"

require_report
tmpdir
T=$tap_tmp
EXP=$SA_SRC/tests/cli/expect

plan 20

cat >"$T/before.folded" <<'EOT'
workload;main;sa_run;sa_leaf_a 600
workload;main;sa_run;sa_leaf_b 300
workload;main;sa_run;sa_leaf_c 100
EOT
cat >"$T/after.folded" <<'EOT'
workload;main;sa_run;sa_leaf_b 1200
workload;main;sa_run;sa_leaf_a 600
workload;main;sa_run;sa_leaf_c 200
EOT

# expect NAME FILE: FILE equals tests/cli/expect/NAME (or becomes it when blessing).
expect()
{
	if [ -n "${SA_BLESS-}" ]; then
		cp "$2" "$EXP/$1"
		ok 0 "blessed $1"
		return
	fi
	diff -u "$EXP/$1" "$2" >"$T/diff.out"
	ok $? "output equals expect/$1"
	[ -s "$T/diff.out" ] && diag_file "$T/diff.out" 20
}

# column FILE STACK N: field N of STACK's line in a two-column diff.
column()
{
	awk -v st="$2" -v n="$3" '{ s = $0; sub(/ [0-9]+ [0-9]+$/, "", s); if (s == st) print $(NF - 2 + n) }' "$1"
}

"$SA_REPORT" --diff -o "$T/d.folded" "$T/before.folded" "$T/after.folded" 2>"$T/err"
ok $? "--diff BEFORE AFTER (folded text) exits 0"
expect 1000-diff.folded "$T/d.folded"
a_b=$(column "$T/d.folded" "workload;main;sa_run;sa_leaf_a" 1)
a_a=$(column "$T/d.folded" "workload;main;sa_run;sa_leaf_a" 2)
diag "sa_leaf_a: before $a_b (normalized), after $a_a, of 2000"
check "sa_leaf_a went from 60% to 30% (within 2 points)" \
	eval 'within "$(pct "$a_b" 2000)" 60 2 && within "$(pct "$a_a" 2000)" 30 2'
b_b=$(column "$T/d.folded" "workload;main;sa_run;sa_leaf_b" 1)
b_a=$(column "$T/d.folded" "workload;main;sa_run;sa_leaf_b" 2)
check "sa_leaf_b went from 30% to 60% (within 2 points)" \
	eval 'within "$(pct "$b_b" 2000)" 30 2 && within "$(pct "$b_a" 2000)" 60 2'
check "every line is 'stack before after'" \
	test "$(grep -cvE '^[^ ].* [0-9]+ [0-9]+$' "$T/d.folded")" -eq 0

"$SA_REPORT" --diff --no-normalize -o "$T/raw.folded" "$T/before.folded" "$T/after.folded"
ok $? "--diff --no-normalize exits 0"
check "--no-normalize keeps raw counts (sa_leaf_b 300 1200)" \
	grep -qx "workload;main;sa_run;sa_leaf_b 300 1200" "$T/raw.folded"

"$SA_REPORT" --diff --top -o "$T/d.top" "$T/before.folded" "$T/after.folded"
ok $? "--diff --top exits 0"
expect 1000-diff.top "$T/d.top"
# top_delta FUNCTION N: field N (1-6: self before/after/delta, total before/after/delta)
top_delta()
{
	awk -v fn="$1" -v n="$2" '$NF == fn && $1 ~ /^[0-9.]+$/ { print $n }' "$T/d.top"
}
check "--diff --top: sa_leaf_a self delta -30 points" within "$(top_delta sa_leaf_a 3)" -30 2
check "--diff --top: sa_leaf_b self 30% -> 60%" \
	eval 'within "$(top_delta sa_leaf_b 1)" 30 0 && within "$(top_delta sa_leaf_b 2)" 60 0'
check "--diff --top: sa_leaf_b total delta +30 points" within "$(top_delta sa_leaf_b 6)" 30 2
check "--diff --top: sa_run total unchanged" within "$(top_delta sa_run 6)" 0 0.01

"$SA_REPORT" --diff --svg -o "$T/d.svg" "$T/before.folded" "$T/after.folded"
ok $? "--diff --svg exits 0"
check "differential SVG is well-formed (xmllint)" xmllint --noout "$T/d.svg"
# fill NAME FILE: the fill of NAME's box, as rrggbb
fill()
{
	grep -o "<title>$1&#10;[^<]*</title><rect [^>]*" "$2" | sed -n 's/.*fill="#\([0-9a-f]*\)".*/\1/p'
}
red=$(fill sa_leaf_b "$T/d.svg")
blue=$(fill sa_leaf_a "$T/d.svg")
diag "fills: grown sa_leaf_b #$red, shrunk sa_leaf_a #$blue"
check "grown leaf is red (R = ff, G = B < ff)" \
	awk -v c="$red" 'BEGIN { exit !(c ~ /^ff/ && substr(c, 3, 2) == substr(c, 5, 2) && substr(c, 3, 2) != "ff") }'
check "shrunk leaf is blue (B = ff, R = G < ff)" \
	awk -v c="$blue" 'BEGIN { exit !(c ~ /ff$/ && substr(c, 1, 2) == substr(c, 3, 2) && substr(c, 1, 2) != "ff") }'

printf 'workload;main;sa_run;sa_leaf_a 600\nworkload;main;gone 50\n' >"$T/b2.folded"
printf 'workload;main;sa_run;sa_leaf_a 600\n' >"$T/a2.folded"
"$SA_REPORT" --diff --svg -o "$T/n0.svg" "$T/b2.folded" "$T/a2.folded"
"$SA_REPORT" --diff --svg --negate -o "$T/n1.svg" "$T/b2.folded" "$T/a2.folded"
check "a frame only in BEFORE has no box without --negate" test -z "$(fill gone "$T/n0.svg")"
check "--negate draws it (widths from BEFORE), blue" \
	awk -v c="$(fill gone "$T/n1.svg")" 'BEGIN { exit !(c ~ /ff$/ && c !~ /^ff/) }'

"$SA_REPORT" --diff "$T/d.folded" "$T/after.folded" >"$T/o" 2>"$T/e"
rc=$?
diag_file "$T/e" 3
check "a two-column diff file is refused as an input (exit 1, says why)" \
	eval '[ $rc -eq 1 ] && grep -q "two counts" "$T/e"'
done_testing
