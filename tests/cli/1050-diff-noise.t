#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# sa-report --diff colours, and --diff --top marks, only changes beyond
# sampling noise, on folded inputs with known counts (10,000 samples each
# side): Fisher's exact test, two-sided, Bonferroni over the 7 frames drawn
# (0.1% / 7 = 1.43e-4 per frame) or the 12 tests of the table (self of 5
# functions, total of 7: 8.33e-5 per test). The p-values below were summed
# exactly (mpmath, 60 digits) from log-gamma terms:
#   x 100 -> 162: p 1.392e-4   coloured, not marked (between the thresholds)
#   y 100 -> 161: p 1.742e-4   grey, not marked (just above both)
#   z 100 -> 165: p 7.010e-5   coloured red, marked
#   w 100 -> 100: p 1          grey, not marked
# The legend states the test and the chance of any false colour (0.1%).
# --no-normalize names the exact binomial test; a frame of 3 samples that
# vanished is grey (3 samples cannot be beyond noise: p >= 2^-2).
. "$(dirname "$0")/lib.sh"

require_report
tmpdir
T=$tap_tmp

plan 19

cat >"$T/before.folded" <<'EOT'
app;main;x 100
app;main;y 100
app;main;z 100
app;main;w 100
app;main;rest 9600
EOT
cat >"$T/after.folded" <<'EOT'
app;main;x 162
app;main;y 161
app;main;z 165
app;main;w 100
app;main;rest 9412
EOT

# fill NAME FILE: the fill of NAME's box, as rrggbb
fill()
{
	grep -o "<title>$1&#10;[^<]*</title><rect [^>]*" "$2" | sed -n 's/.*fill="#\([0-9a-f]*\)".*/\1/p'
}
grey() { [ "$1" = d8d8d8 ]; }
red() { awk -v c="$1" 'BEGIN { exit !(c ~ /^ff/ && substr(c, 3, 2) == substr(c, 5, 2) && substr(c, 3, 2) != "ff") }'; }
# marks FUNCTION: the sig column (self, total) of FUNCTION's --diff --top row
marks()
{
	awk -v fn="$1" '$NF == fn && $1 ~ /^[0-9.]+$/ { print $7 }' "$T/d.top"
}

"$SA_REPORT" --diff --svg -o "$T/d.svg" "$T/before.folded" "$T/after.folded" 2>"$T/err"
ok $? "--diff --svg exits 0"
check "the SVG is well-formed (xmllint)" xmllint --noout "$T/d.svg"
legend=$(grep -o '<text id="legend"[^<]*' "$T/d.svg")
diag "$legend"
check "the legend names the test" grep -q "Fisher&#39;s exact test of the shares, two-sided" <<<"$legend"
check "the legend states the chance of any false colour (0.1%, Bonferroni over 7 frames)" \
	grep -q "Chance of any false colour: 0.1% (Bonferroni over 7 frames)" <<<"$legend"
check "the legend gives the per-frame threshold (0.001 / 7)" grep -q "p &lt; 0.00014 per frame" <<<"$legend"
for f in x y z w; do diag "$f: #$(fill $f "$T/d.svg") $(grep -o "<title>$f&#10;[^<]*" "$T/d.svg")"; done
check "x (p 1.39e-4 < 1.43e-4) is coloured red" red "$(fill x "$T/d.svg")"
check "z (p 7.0e-5) is coloured red" red "$(fill z "$T/d.svg")"
check "y (p 1.74e-4 > 1.43e-4) is grey" grey "$(fill y "$T/d.svg")"
check "w (unchanged) is grey" grey "$(fill w "$T/d.svg")"
check "main (100% on both sides) is grey" grey "$(fill main "$T/d.svg")"
check "the tooltip gives p and the verdict" \
	grep -q "<title>y&#10;[^<]*, p 0.00017, within noise</title>" "$T/d.svg"

"$SA_REPORT" --diff --top -o "$T/d.top" "$T/before.folded" "$T/after.folded"
ok $? "--diff --top exits 0"
diag_file "$T/d.top" 12
check "the table's header names the test and its 12 tests" \
	grep -q "^# sig (self, total): .*Fisher's exact test of the shares, two-sided, p < 8.3e-05 each; chance of any false \*: 0.1%, Bonferroni over 12 tests" "$T/d.top"
check "z (p 7.0e-5 < 8.3e-5) is marked in self and total" test "$(marks z)" = "**"
check "x (p 1.39e-4 > 8.3e-5) is not marked" test "$(marks x)" = ".."
check "y and w are not marked" eval 'test "$(marks y)" = ".." && test "$(marks w)" = ".."'

"$SA_REPORT" --diff --svg --no-normalize -o "$T/raw.svg" "$T/before.folded" "$T/after.folded"
check "--no-normalize: the legend names the exact binomial test of the counts" \
	grep -q '<text id="legend"[^<]*exact binomial test of the counts' "$T/raw.svg"

printf 'app;main;keep 1000\napp;main;gone 3\n' >"$T/b2.folded"
printf 'app;main;keep 1000\n' >"$T/a2.folded"
"$SA_REPORT" --diff --svg --negate -o "$T/n.svg" "$T/b2.folded" "$T/a2.folded"
check "a frame of 3 samples that vanished is grey (p 0.25)" grey "$(fill gone "$T/n.svg")"
printf 'app;main;keep 1000\napp;main;gone 30\n' >"$T/b3.folded"
"$SA_REPORT" --diff --svg --negate -o "$T/n3.svg" "$T/b3.folded" "$T/a2.folded"
check "one of 30 samples that vanished is blue" \
	awk -v c="$(fill gone "$T/n3.svg")" 'BEGIN { exit !(c ~ /ff$/ && c !~ /^ff/) }'
done_testing
