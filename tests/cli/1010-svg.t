#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# sa-report --svg: a synthetic recording (tests/bench/gen-synthetic) gives a
# well-formed SVG honouring --width, --inverted, --title (escaped) and
# --min-width. Recordings written from folded text (gen-synthetic -f: each
# frame a function with an embedded symbol) give back their folded text, a
# 60/30/10 split draws leaf boxes in that ratio (exact counts, so within
# 0.01 point: the widths are printed to 1/1000 px), and hostile symbol
# names (<script>, &, quotes, control bytes, invalid UTF-8) reach the SVG
# escaped, with U+FFFD for bad bytes and '_' for control bytes.
. "$(dirname "$0")/lib.sh"

require_report
command -v xmllint >/dev/null || skip_all "xmllint not installed (libxml2-utils)"
tmpdir
T=$tap_tmp
GEN=$SA_BUILD/tests/bench/gen-synthetic
[ -x "$GEN" ] || skip_all "gen-synthetic not built ($GEN)"

plan 26

# width NAME FILE / y NAME FILE: attributes of NAME's box
width() { grep -o "<title>$1&#10;[^<]*</title><rect [^>]*" "$2" | sed -n 's/.* width="\([0-9.]*\)".*/\1/p' | head -n1; }
ypos() { grep -o "<title>$1&#10;[^<]*</title><rect [^>]*" "$2" | sed -n 's/.* y="\([0-9.]*\)".*/\1/p' | head -n1; }
boxes() { grep -c '</title><rect' "$1"; }

"$GEN" -p 3 -s 2000 -d 12 -n 200000 -H 'web<01>&' -o "$T/s.sa"
ok $? "gen-synthetic writes a recording of 2000 stacks"
"$SA_REPORT" --svg -o "$T/s.svg" "$T/s.sa" 2>"$T/err"
ok $? "--svg on a synthetic recording exits 0"
check "SVG is well-formed (xmllint)" xmllint --noout "$T/s.svg"
check "root box spans the default width (1180 px inside 10 px margins)" \
	within "$(width all "$T/s.svg")" 1180 0.01
check "subtitle names the host (escaped) and the samples" \
	grep -q 'id="subtitle"[^>]*>host web&lt;01&gt;&amp;.*samples' "$T/s.svg"
"$SA_REPORT" --svg --width 800 --inverted --title 'A <b> & "c"' -o "$T/i.svg" "$T/s.sa"
ok $? "--width 800 --inverted --title exits 0"
check "--width 800 --inverted --title is well-formed" xmllint --noout "$T/i.svg"
check "--width 800: root box 780 px" within "$(width all "$T/i.svg")" 780 0.01
check "--inverted: the root is the top row" \
	test "$(ypos all "$T/i.svg")" -le "$(grep -o '</title><rect x="[0-9.]*" y="[0-9]*"' "$T/i.svg" | sed 's/.*y="//;s/"//' | sort -n | head -n1)"
check "--title is escaped" grep -q '>A &lt;b&gt; &amp; &quot;c&quot;' "$T/i.svg"
"$SA_REPORT" --svg --min-width 20 -o "$T/m.svg" "$T/s.sa"
ok $? "--min-width 20 exits 0"
diag "boxes: default $(boxes "$T/s.svg"), --min-width 20: $(boxes "$T/m.svg")"
check "--min-width 20 merges away narrow frames" test "$(boxes "$T/m.svg")" -lt "$(boxes "$T/s.svg")"

cat >"$T/split.folded" <<'EOT'
workload;main;sa_run;sa_leaf_a 600
workload;main;sa_run;sa_leaf_b 300
workload;main;sa_run;sa_leaf_c 100
EOT
{
	printf 'workload;main;<script>alert(1)</script> 5\n'
	printf 'workload;main;a & b "q" '"'"'s'"'"' 5\n'
	printf 'work\001load;main;ctl\033[1m\177 5\n'
	printf 'workload;main;bad\377\376utf8\300\257 \355\240\200 5\n'
} >"$T/hostile.folded"

"$GEN" -f "$T/split.folded" -i 10 -o "$T/split.sa"
ok $? "gen-synthetic -f writes the 60/30/10 recording"
"$GEN" -f "$T/hostile.folded" -i 3 -o "$T/hostile.sa"
ok $? "gen-synthetic -f writes the hostile-names recording"
"$SA_REPORT" "$T/split.sa" >"$T/split.out"
ok $? "sa-report of the 60/30/10 recording exits 0"
check "the recording gives its folded text back" cmp "$T/split.folded" "$T/split.out"
"$SA_REPORT" --svg -o "$T/f.svg" "$T/split.sa"
ok $? "--svg of the 60/30/10 recording exits 0"
all=$(width all "$T/f.svg")
a=$(width sa_leaf_a "$T/f.svg") b=$(width sa_leaf_b "$T/f.svg") c=$(width sa_leaf_c "$T/f.svg")
diag "widths: all $all, a $a, b $b, c $c"
check "60/30/10: SVG is well-formed" xmllint --noout "$T/f.svg"
check "sa_leaf_a box is 60% of the root" within "$(pct "$a" "$all")" 60 0.01
check "sa_leaf_b box is 30% of the root" within "$(pct "$b" "$all")" 30 0.01
check "sa_leaf_c box is 10% of the root" within "$(pct "$c" "$all")" 10 0.01

"$SA_REPORT" --svg -o "$T/h.svg" "$T/hostile.sa"
ok $? "--svg of the hostile-names recording exits 0"
check "hostile names: well-formed, <script> escaped" \
	eval 'xmllint --noout "$T/h.svg" && ! grep -q "<script>alert" "$T/h.svg" &&
		grep -q "<title>&lt;script&gt;alert(1)&lt;/script&gt;&#10;5 samples" "$T/h.svg"'
check "hostile names: & and quotes escaped" \
	grep -q "<title>a &amp; b &quot;q&quot; &#39;s&#39;&#10;5 samples" "$T/h.svg"
check "hostile names: control bytes of the comm and the symbol drawn as _" \
	eval 'grep -q "<title>work_load&#10;5 samples" "$T/h.svg" &&
		grep -q "<title>ctl_\[1m_&#10;5 samples" "$T/h.svg" &&
		! LC_ALL=C grep -q "[[:cntrl:]]" <(tr -d "\n\t" <"$T/h.svg")'
check "hostile names: invalid UTF-8 replaced by U+FFFD" \
	grep -q $'<title>bad\xef\xbf\xbd\xef\xbf\xbdutf8\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd&#10;5 samples' "$T/h.svg"
done_testing
